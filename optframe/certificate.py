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
the matrix layer (:mod:`optframe.safe_bound`), valid for any duals the solver returns. A driver
that stopped at its time limit with no time left for the model's dual bound (which can cost more
than the limit on a large data set) says why in ``stats["certificate_skipped"]``: the result then
has no bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from optframe.result import Result, Status

if TYPE_CHECKING:
    from optframe.model import Model

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
        are in ``stats["certificate_seconds"]`` and added to ``timings.total``.
    """
    tick = time.perf_counter()
    stats = dict(result.stats)
    claimed = result.status
    stats["claimed_status"] = claimed.value
    if result.bound is not None:
        stats["driver_bound"] = result.bound
    solution = result.solution
    objective, bound = math.nan, None
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
            else:
                stats["bound_withheld"] = doubt
        elif claimed is Status.TIME_LIMIT and "certificate_skipped" in stats:
            pass  # the driver's time limit has no room left for the model's dual bound
        else:
            bound = _own_bound(model, solution, stats)
        if bound is not None:
            bound = min(bound, objective)  # weak duality; anything above is rounding
    scale = model.gap_scale(objective, bound) if math.isfinite(objective) else math.nan
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
    )


def _own_bound(model: Model, solution: Any, stats: dict[str, Any]) -> float | None:
    from optframe.model import Model

    if type(model).dual_bound is Model.dual_bound:
        # no dual of the model's own: the bound Direct made safe from the solver's duals
        # (optframe.safe_bound), when the solve went through the matrix layer
        safe = stats.get("safe_bound")
        return float(safe) if safe is not None and math.isfinite(safe) else None
    try:
        bound = model.dual_bound(solution)
    except (ArithmeticError, ValueError, FloatingPointError) as error:
        stats["certificate_error"] = f"{type(error).__name__}: {error}"
        return None
    if bound is None or not math.isfinite(bound):
        return None
    return float(bound)


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
