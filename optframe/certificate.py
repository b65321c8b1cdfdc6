r"""The certificate every :class:`~optframe.result.Result` carries, proven by optframe itself.

Whatever produced a solution (a solver through any layer, a decomposition driver, a paper's
stopping rule), :func:`certify` evaluates two numbers on the original model:

* the objective at the solution (the model's own oracle), an upper bound on the optimum;
* a lower bound from a dual-feasible point that the *model* builds from the solution
  (:meth:`~optframe.model.Model.dual_bound`: a projection and a scaling into the dual's
  constraints, or a Fenchel conjugate at the loss's subgradient). Weak duality makes it valid
  whatever the solution's origin, so a solver's bug or a loose tolerance cannot become a false
  proof.

The status is then decided by one rule for every driver and back-end:

.. math::

    \text{OPTIMAL} \iff \frac{\text{objective} - \text{bound}}{\text{scale}} \le \text{gap\_tol},
    \qquad \text{scale} = \max(\lvert\text{objective}\rvert, \lvert\text{bound}\rvert,
    \lvert\text{objective at the zero solution}\rvert),

where the last term is the model's documented magnitude (:meth:`Model.gap_scale`), so a tiny
objective is never turned into an absolute test. A driver's or a solver's "optimal" that the
certificate cannot prove becomes ``CONVERGED``, its own words kept in ``stats``. Limits keep their
status. Mixed-integer models keep their solver's branch-and-bound bound (it is not a dual point),
unless the model doubts it on its data (:meth:`Model.solver_bound_doubt`): the bound is then
withheld and the reason kept in ``stats["bound_withheld"]``. A model without a dual bound of its
own is certified by the bound :class:`~optframe.drivers.Direct` builds from the solver's duals on
the matrix layer (:mod:`optframe.safe_bound`), valid for any duals the solver returns.

The proof itself is a :class:`Certificate` (``Result.certificate``): the dual-feasible point, the
:class:`RepairStep` records of what made it feasible, the dual objective's terms (which sum to the
bound), and :meth:`Certificate.explain`. Models build it in
:meth:`~optframe.model.Model.dual_certificate` (whose value their ``dual_bound`` returns: one
computation for both). A driver
that stopped at its time limit with no time left for the model's dual bound (which can cost more
than the limit on a large data set) says why in ``stats["certificate_skipped"]``: the result then
has no bound.
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.errors import ModelError
from optframe.result import Result, Status, relative_gap

if TYPE_CHECKING:
    from optframe.model import Model

__all__ = ["Certificate", "RepairStep", "certify", "enough_gap"]


@dataclass(frozen=True)
class RepairStep:
    r"""One repair that moved a point into the dual's feasible set, with the residual it fixed.

    Parameters
    ----------
    kind : str
        A short tag: ``"clip"`` (into a box), ``"balance"`` (one equality row, by scaling one
        side), ``"project"`` (onto equality rows), ``"scale"`` (towards 0, into a box or a norm
        ball), ``"fill"`` (multipliers of samples on a kink, chosen by least squares),
        ``"pin"`` (multipliers held at 0), ``"zero"`` (multipliers whose sign points at an
        infinite side), ``"linearize"`` (a quadratic replaced by its tangent plane),
        ``"correction"`` (rounding subtracted), ``"cap"`` (a value above the objective).
    what : str
        What was done, in words a student can follow.
    before, after : float or None
        The residual of the constraint the step repairs, before and after it (``None`` for a
        step that chooses rather than repairs, such as ``"fill"``). ``measure`` says what it is.
    measure : str
        What ``before`` and ``after`` measure (``"largest distance outside the box"``, ...).

    Examples
    --------
    >>> step = RepairStep("balance", "scaled the larger side of 1'v = 0 down", 0.25, 0.0,
    ...                   "|1'v|")
    >>> print(step)
    balance: scaled the larger side of 1'v = 0 down (|1'v| 0.25 -> 0)
    """

    kind: str
    what: str
    before: float | None = None
    after: float | None = None
    measure: str = "residual"

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str) or not isinstance(self.what, str):
            raise ModelError(f"RepairStep: kind and what must be strings; got {self.kind!r}, "
                             f"{self.what!r}")  # fmt: skip
        for name in ("before", "after"):
            value = getattr(self, name)
            if value is not None:
                if isinstance(value, bool) or not isinstance(value, (int, float, np.floating)):
                    raise ModelError(f"RepairStep: {name} must be a number or None; got {value!r}")
                object.__setattr__(self, name, float(value))

    def __str__(self) -> str:
        """``kind: what (measure before -> after)``."""
        text = f"{self.kind}: {self.what}"
        if self.before is not None:
            text += f" ({self.measure} {_short(self.before)} -> {_short(self.after)})"
        elif self.after is not None:
            text += f" ({self.measure} {_short(self.after)})"
        return text


def _short(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


@dataclass(frozen=True, eq=False)
class Certificate:
    r"""The proof behind a :class:`~optframe.result.Result`'s bound: a dual point and its value.

    Weak duality: for a minimization with a dual :math:`\max D`, every feasible primal point
    :math:`x` and every feasible dual point :math:`\theta` satisfy
    :math:`\text{objective}(x) \ge D(\theta)`, so :math:`D(\theta)` (:attr:`value`) is a lower
    bound on the optimum whatever produced :math:`\theta`, and the gap
    :math:`\text{objective} - D(\theta)` bounds how far the solution is from optimal.

    Parameters
    ----------
    value : float
        The bound :math:`D(\theta)`: the sum of :attr:`terms`.
    dual_point : Mapping[str, ndarray]
        The dual-feasible point, named as in the model (``{"theta": ...}`` for LAD,
        ``{"alpha": ...}`` for the SVMs, ``{"y": ..., "z": ...}`` for a matrix problem's row
        multipliers and reduced costs); empty when the model gives the value only.
    steps : tuple of RepairStep
        The repairs that made the point feasible, in order.
    terms : Mapping[str, float]
        The dual objective's terms, named by their formula; they sum to :attr:`value`.
    dual : str
        The dual problem in one line.
    origin : str
        Where the point came from (the solver's duals, the loss's subgradient at the solution).
    objective : float
        The primal objective at the solution (set by :func:`certify`; ``nan`` before).
    scale : float
        The gap's scale (the model's :meth:`~optframe.model.Model.gap_scale`; ``nan`` before).

    Raises
    ------
    ModelError
        If ``value`` or a term is not a real number, a step is not a :class:`RepairStep`, or a
        dual point entry is not a real array.

    Examples
    --------
    >>> import numpy as np
    >>> c = Certificate(value=1.5, dual_point={"theta": np.array([-1.0, -0.5, 1.0])},
    ...                 terms={"y'theta": 1.5}, objective=1.5, scale=1.5,
    ...                 dual="max y'theta s.t. X'theta = 0, 1'theta = 0, |theta| <= 1")
    >>> c.gap
    0.0
    >>> print(c.explain().splitlines()[0])
    Weak duality: every feasible point's objective >= every dual-feasible point's value.
    """

    value: float
    dual_point: Mapping[str, NDArray[np.float64]] = field(default_factory=dict)
    steps: tuple[RepairStep, ...] = ()
    terms: Mapping[str, float] = field(default_factory=dict)
    dual: str = ""
    origin: str = ""
    objective: float = math.nan
    scale: float = math.nan

    def __post_init__(self) -> None:
        object.__setattr__(self, "value", _real("value", self.value))
        object.__setattr__(self, "objective", _real("objective", self.objective))
        object.__setattr__(self, "scale", _real("scale", self.scale))
        terms = {str(k): _real(f"term {k!r}", v) for k, v in dict(self.terms).items()}
        object.__setattr__(self, "terms", terms)
        steps = tuple(self.steps)
        for step in steps:
            if not isinstance(step, RepairStep):
                raise ModelError(f"Certificate: every step must be a RepairStep; got {step!r}")
        object.__setattr__(self, "steps", steps)
        point = {}
        for name, array in dict(self.dual_point).items():
            if _frozen(array):  # a certificate's own array (replace() passes it on): no copy
                point[str(name)] = array
                continue
            values = np.array(array, dtype=np.float64) if _is_real(array) else None
            if values is None:
                raise ModelError(f"Certificate: dual point {name!r} must be a real array")
            values.flags.writeable = False
            point[str(name)] = values
        object.__setattr__(self, "dual_point", point)

    @property
    def gap(self) -> float:
        """The relative gap ``max(0, objective - value) / scale`` (``inf`` before certify).

        Examples
        --------
        >>> Certificate(9.0, objective=10.0, scale=10.0).gap
        0.1
        >>> Certificate(9.0).gap
        inf
        """
        if math.isnan(self.objective):
            return math.inf
        return relative_gap(self.objective, self.value, self.scale)

    def with_objective(self, objective: float, scale: float) -> Certificate:
        """The certificate at a solution's ``objective``, capped there (weak duality).

        A value above the objective can only be rounding; it is lowered to the objective, with
        a step ``"cap"`` and a term that records the amount, so the terms still sum to it.

        Examples
        --------
        >>> c = Certificate(value=2.0 + 1e-15, terms={"a": 2.0 + 1e-15})
        >>> capped = c.with_objective(2.0, 2.0)
        >>> capped.value, capped.steps[-1].kind
        (2.0, 'cap')
        """
        if not self.value > objective:
            return replace(self, objective=float(objective), scale=float(scale))
        excess = self.value - objective
        step = RepairStep("cap", "lowered to the objective (a bound above it is rounding)",
                          excess, 0.0, "value - objective")  # fmt: skip
        terms = {**self.terms, "cap at the objective": -excess}
        return replace(self, value=float(objective), objective=float(objective),
                       scale=float(scale), steps=(*self.steps, step), terms=terms)  # fmt: skip

    def explain(self) -> str:
        """A few lines a student can follow: weak duality, the point, its repairs, the gap.

        Examples
        --------
        >>> c = Certificate(value=1.0, terms={"sum(alpha)": 1.5, "-|X'v|^2/2": -0.5},
        ...                 objective=1.25, scale=1.25)
        >>> print(c.explain())  # doctest: +NORMALIZE_WHITESPACE
        Weak duality: every feasible point's objective >= every dual-feasible point's value.
        objective (at the solution, an upper bound on the optimum):  1.25
        bound     (the dual's value at the point below, a lower one): 1
        gap       objective - bound = 0.25, relative 0.2 (scale 1.25)
        the dual value is the sum of its terms:
          sum(alpha) = 1.5
          -|X'v|^2/2 = -0.5
        """
        lines = [
            "Weak duality: every feasible point's objective >= every dual-feasible point's value."
        ]
        if self.dual:
            lines.append(f"dual: {self.dual}")
        if not math.isnan(self.objective):
            lines.append(f"objective (at the solution, an upper bound on the optimum):  "
                         f"{self.objective:.10g}")  # fmt: skip
        lines.append(f"bound     (the dual's value at the point below, a lower one): "
                     f"{self.value:.10g}")  # fmt: skip
        if not math.isnan(self.objective):
            lines.append(f"gap       objective - bound = {self.objective - self.value:.3g}, "
                         f"relative {self.gap:.3g} (scale {self.scale:.3g})")  # fmt: skip
        if self.dual_point:
            sizes = ", ".join(f"{k} ({v.size} values)" for k, v in self.dual_point.items())
            origin = f", from {self.origin}" if self.origin else ""
            lines.append(f"dual point: {sizes}{origin}")
        elif self.origin:
            lines.append(f"from {self.origin}")
        for i, step in enumerate(self.steps, 1):
            lines.append(f"  repair {i}. {step}")
        if self.dual_point and not self.steps:
            lines.append("  no repair needed: the point was dual feasible as given")
        if self.terms:
            lines.append("the dual value is the sum of its terms:")
            lines.extend(f"  {name} = {value:.10g}" for name, value in self.terms.items())
        return "\n".join(lines)


def _frozen(array: Any) -> bool:
    """Whether ``array`` is a read-only float64 ndarray that owns or views frozen data."""
    return (
        isinstance(array, np.ndarray)
        and array.dtype == np.float64
        and not array.flags.writeable
        and (array.base is None or not getattr(array.base, "flags", array.flags).writeable)
    )


def _is_real(array: ArrayLike) -> bool:
    try:
        values = np.asarray(array)
    except (TypeError, ValueError):
        return False
    return values.dtype.kind in "biuf" and values.dtype != np.bool_


def _real(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ModelError(f"Certificate: {name} must be a real number; got {value!r}")
    return float(value)


#: The relative gap at which a solve is proven optimal when neither ``solve(gap_tol=...)`` nor
#: the driver's own gap tolerance says otherwise.
DEFAULT_GAP_TOL = 1e-6

#: The default for mixed-integer models (the usual MIP gap): their bound is the solver's
#: branch-and-bound bound, proven only to its feasibility tolerance (see ``solvers/scip.py``).
DEFAULT_MIP_GAP_TOL = 1e-4

#: Objective values whose magnitude exceeds this are treated as a numerical failure (the models
#: here are bounded, so such values come from overflow in a badly scaled solve).
_HUGE = 1e150


def resolve_gap_tol(model: Model, driver_tol: float, explicit: bool) -> float:
    """The gap tolerance for ``model``: the driver's, at least 1e-4 for a mixed-integer model.

    ``explicit``: the user set ``gap_tol`` or ``tol``; their value is kept as it is.
    """
    if model.problem_class.is_integer and not explicit:
        return max(driver_tol, DEFAULT_MIP_GAP_TOL)
    return driver_tol


def gap_of(objective: float, bound: float | None, scale: float) -> float:
    """``max(0, objective - bound) / scale``; ``inf`` without a finite bound."""
    if bound is None or not (math.isfinite(objective) and math.isfinite(bound)):
        return math.inf
    if not scale > 0:
        return 0.0 if objective <= bound else math.inf
    return max(0.0, objective - bound) / scale


def certify(model: Model, result: Result, gap_tol: float) -> Result:
    """Return ``result`` with optframe's own bound, gap scale and status.

    Parameters
    ----------
    model : Model
        The model that was solved; its :meth:`~optframe.model.Model.objective` and
        :meth:`~optframe.model.Model.dual_bound` are evaluated at ``result.solution``.
    result : Result
        What the driver returned: its status is a claim, its bound is discarded (kept in
        ``stats["driver_bound"]``) unless the model is mixed-integer.
    gap_tol : float
        The relative gap that proves optimality.

    Returns
    -------
    Result
        The same result with ``objective`` recomputed, ``bound`` optframe's own (never above the
        objective), ``scale`` the model's, and ``status`` decided by the gap. The seconds spent
        are in ``stats["certificate_seconds"]`` and added to ``timings.total``; ``certificate``
        is the bound's :class:`Certificate` (at the objective and scale), ``None`` without one.
    """
    tick = time.perf_counter()
    stats = dict(result.stats)
    claimed = result.status
    stats["claimed_status"] = claimed.value
    if result.bound is not None:
        stats["driver_bound"] = result.bound
    solution = result.solution
    objective, bound, certificate = math.nan, None, None
    if solution:
        try:
            objective = float(model.objective(solution))
        except (ArithmeticError, ValueError) as error:  # a solution the model cannot evaluate
            stats["certificate_error"] = f"{type(error).__name__}: {error}"
    if solution and math.isfinite(objective) and abs(objective) < _HUGE:
        if model.problem_class.is_integer:
            doubt = model.solver_bound_doubt()
            if doubt is None:
                bound = _integer_bound(result.bound, objective)
                if bound is not None:
                    certificate = Certificate(
                        bound,
                        terms={"the solver's branch-and-bound bound": bound},
                        origin="the solver's branch-and-bound tree (no dual point: the model "
                        "is mixed-integer)",
                    )
            else:
                stats["bound_withheld"] = doubt
        elif claimed is Status.TIME_LIMIT and "certificate_skipped" in stats:
            pass  # the driver's time limit has no room left for the model's dual bound
        else:
            with _enough_within(ENOUGH_FRACTION * gap_tol):
                certificate = _own_certificate(model, result, stats)
            bound = None if certificate is None else certificate.value
        if bound is not None:
            bound = _below_objective(model, bound, objective, gap_tol, stats)
            if bound is None:
                certificate = None
    scale = model.gap_scale(objective, bound) if math.isfinite(objective) else math.nan
    if certificate is not None and bound is not None:
        certificate = certificate.with_objective(objective, scale)
    else:
        certificate = None
    gap = gap_of(objective, bound, scale)
    status = _status(model, claimed, objective, gap, gap_tol, stats)
    stats["gap_tol"] = gap_tol
    seconds = time.perf_counter() - tick
    stats["certificate_seconds"] = seconds
    return replace(
        result,
        status=status,
        objective=objective if solution else math.nan,
        bound=bound,
        scale=scale,
        stats=stats,
        timings=replace(result.timings, total=result.timings.total + seconds),
        certificate=certificate,
    )


#: The fraction of the gap that proves optimality within which a model's certificate may stop
#: looking for a better dual point, while :func:`certify` evaluates it
#: (:func:`enough_gap`): a tenth.
ENOUGH_FRACTION = 0.1
_ENOUGH: contextvars.ContextVar[float | None] = contextvars.ContextVar(
    "optframe_certificate_enough", default=None
)


@contextlib.contextmanager
def _enough_within(gap: float) -> Iterator[None]:
    token = _ENOUGH.set(gap)
    try:
        yield
    finally:
        _ENOUGH.reset(token)


def enough_gap(tightest: float) -> float:
    """The relative gap at which a model's search over dual candidates may stop.

    ``tightest`` (the model's own, for a call of ``dual_bound`` outside a solve); while
    :func:`certify` evaluates the model's certificate, a tenth of the gap that proves optimality
    when that is larger: a candidate there already proves the result, and the next candidates
    (each a few passes over the data) only tighten a bound that is already enough. Every
    candidate is a valid bound, so the choice changes how tight the bound is, never its validity.
    """
    wanted = _ENOUGH.get()
    return tightest if wanted is None else max(tightest, wanted)


def _own_certificate(model: Model, result: Result, stats: dict[str, Any]) -> Certificate | None:
    """The model's :meth:`~optframe.model.Model.dual_certificate`, or the safe bound's."""
    if not model.writes_dual():
        # no dual of the model's own: the bound Direct made safe from the solver's duals
        # (optframe.safe_bound), when the solve went through the matrix layer
        safe = stats.get("safe_bound")
        if safe is None or not math.isfinite(safe):
            return None
        carried = result.certificate
        if isinstance(carried, Certificate) and carried.value == safe:
            return carried
        return Certificate(float(safe), terms={"safe bound": float(safe)},
                           origin=str(stats.get("safe_bound_how", "")))  # fmt: skip
    try:
        if _dual_bound_is_newer(model):
            # a subclass wrote dual_bound below the class that wrote dual_certificate: its
            # dual_bound is the model's word (the default hook wraps it, value only)
            from optframe.model import Model

            certificate = Model.dual_certificate(model, result.solution)
        else:
            certificate = model.dual_certificate(result.solution)
    except (ArithmeticError, ValueError, FloatingPointError) as error:
        stats["certificate_error"] = f"{type(error).__name__}: {error}"
        return None
    if certificate is None or not math.isfinite(certificate.value):
        return None
    return certificate


def _dual_bound_is_newer(model: Model) -> bool:
    """Whether the most derived class that writes either hook writes ``dual_bound``."""
    from optframe.model import Model

    for klass in type(model).__mro__:
        if klass is Model:
            return False
        if "dual_certificate" in vars(klass):
            return False
        if "dual_bound" in vars(klass):
            return True
    return False


def _below_objective(
    model: Model, bound: float, objective: float, gap_tol: float, stats: dict[str, Any]
) -> float | None:
    """``bound`` capped at ``objective``, or None when it is above it by more than rounding.

    Weak duality puts every valid bound at or below the objective of any solution. A bound
    above it by more than the gap that proves optimality is evidence that the certificate or
    the objective is wrong (a model evaluated on other data, a dual point that is not
    feasible): it is withheld and said (``stats["bound_above_objective"]``, the excess, and
    ``stats["certificate_error"]``), never capped into a proof.
    """
    excess = bound - objective
    if excess > gap_tol * model.gap_scale(objective, bound):
        stats["bound_above_objective"] = excess
        stats["certificate_error"] = (
            f"the model's dual bound {bound:.12g} is above its objective {objective:.12g} at "
            f"the same solution (by {excess:.3g}); weak duality rules that out, so the "
            "certificate or the objective is wrong: the bound is withheld"
        )
        return None
    return min(bound, objective)  # weak duality; what is above is rounding


def _integer_bound(solver_bound: float | None, objective: float) -> float | None:
    if solver_bound is None or not math.isfinite(solver_bound):
        return None
    return min(float(solver_bound), objective)


def _status(
    model: Model,
    claimed: Status,
    objective: float,
    gap: float,
    gap_tol: float,
    stats: dict[str, Any],
) -> Status:
    finite = math.isfinite(objective) and abs(objective) < _HUGE
    if claimed in (Status.INFEASIBLE, Status.UNBOUNDED) and model.always_feasible_and_bounded:
        stats["error"] = (
            f"the solver reported {claimed.value}, but {model.name} is always feasible and "
            "bounded: the data are badly scaled for it (standardize the features, rescale the "
            "targets or the weights)"
        )
        return Status.ERROR
    if claimed.is_success:
        if not finite:
            stats["error"] = (
                f"the solution's objective is {objective:g}: the solve failed numerically "
                "(badly scaled data or parameters; standardize the features or rescale C)"
            )
            return Status.ERROR
        return Status.OPTIMAL if gap <= gap_tol else Status.CONVERGED
    return claimed
