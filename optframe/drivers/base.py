"""The :class:`Driver` base class: an algorithm over models."""

from __future__ import annotations

import abc
import math
import numbers
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from optframe.certificate import DEFAULT_GAP_TOL
from optframe.drivers._checks import is_count, is_real
from optframe.errors import IncompatibleDriver, ModelError
from optframe.result import IterationRecord, Result, Status, Timings

if TYPE_CHECKING:
    from optframe.backend import SolveOptions
    from optframe.basis import Basis
    from optframe.capabilities import Structure
    from optframe.model import Model

Callback = Callable[["IterationRecord"], "bool | None"]


@dataclass(frozen=True)
class RunContext:
    """What :func:`optframe.solve` hands a driver besides the model.

    Parameters
    ----------
    backend : str
        The back-end name the user asked for (``"auto"``, ``"highs"``, ``"pyomo:highs"``, ...); the
        driver resolves it for each sub-problem it solves.
    options : SolveOptions
        Common options and pass-through solver options.
    callback : callable, optional
        Called with each :class:`~optframe.result.IterationRecord`; returning ``True`` stops the
        driver.
    fallback : str, optional
        The back-end to use instead of ``backend`` when ``backend`` refuses the formulation built
        for it (``driver="auto"`` prefers a back-end by a rule, the user did not name it).
    """

    backend: str
    options: SolveOptions
    callback: Callback | None = None
    fallback: str | None = None


@dataclass(frozen=True)
class CommonOptions:
    """The common options of one run, resolved by :meth:`Driver.common_options`.

    Parameters
    ----------
    tol : float
        The driver's stopping tolerance: ``solve(tol=...)``, else the driver's own.
    max_iter : int
        Iterations (as the driver counts them): ``solve(max_iter=...)``, else the driver's own.
    time_limit : float or None
        Wall seconds for the run; ``None`` is no limit.
    verbose : bool
        Show progress.
    """

    tol: float
    max_iter: int
    time_limit: float | None
    verbose: bool


def applicable_drivers(model: Model) -> list[str]:
    """The names of the registered drivers, with their default options, that accept ``model``.

    ``"direct"`` first; aliases of one driver class (``"fw"`` and ``"frank_wolfe"``) are named
    once, by their first registered name.

    Examples
    --------
    >>> from optframe.data import Dataset
    >>> from optframe.models import LADRegression
    >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))
    >>> applicable_drivers(model)
    ['direct', 'aid']
    """
    from optframe.registry import drivers

    names, seen = [], set()
    for name, cls in sorted(drivers().items(), key=lambda item: item[0] != "direct"):
        try:
            accepted = cls().accepts(model)
        except Exception:  # a driver that needs arguments is not named
            accepted = False
        if accepted and cls not in seen:
            names.append(name)
        seen.add(cls)
    return names


class Driver(abc.ABC):
    """An algorithm that solves models offering the structure it needs.

    Subclasses are frozen dataclasses whose fields are the algorithm's options. They list the
    types of :mod:`optframe.capabilities` they need from a model in ``needs`` (checked by
    :meth:`check`), get each with ``model.structure(kind)`` and implement :meth:`run`.
    """

    name: ClassVar[str]
    needs: ClassVar[tuple[type[Structure], ...]] = ()

    def missing(self, model: Model) -> list[str]:
        """The structures in ``needs`` that ``model`` does not offer, each with its reason."""
        return [
            f"{kind.__name__} ({reason})"
            for kind in self.needs
            if (reason := model.structure_refusal(kind)) is not None
        ]

    def accepts(self, model: Model) -> bool:
        """Whether ``model`` offers everything this driver needs."""
        return not self.missing(model)

    def check(self, model: Model) -> None:
        """Raise :class:`IncompatibleDriver` naming each structure ``model`` does not offer."""
        missing = self.missing(model)
        if missing:
            others = applicable_drivers(model)
            raise IncompatibleDriver(
                f"driver {self.name!r} needs {'; '.join(missing)} from the model, which "
                f"{model.name} does not offer. Drivers that apply to this model: "
                f"{', '.join(repr(name) for name in others)}"
            )

    def gap_tolerance(self, options: SolveOptions) -> float:
        """The relative gap that proves this driver's result optimal.

        :func:`optframe.solve` certifies every result with it. ``options.gap_tol`` when set;
        else ``options.tol``, at least 1e-9 (drivers whose ``tol`` is not a relative gap override
        this); else :data:`optframe.certificate.DEFAULT_GAP_TOL`.
        """
        if options.gap_tol is not None:
            return float(options.gap_tol)
        # a solver's tol below 1e-9 asks it for precision the certificate's own rounding
        # (a projection, sums over the data) cannot confirm: the gap test stops at 1e-9
        return DEFAULT_GAP_TOL if options.tol is None else max(float(options.tol), 1e-9)

    def common_options(
        self,
        options: SolveOptions,
        *,
        tol: float,
        max_iter: int | None,
        default_max_iter: int | None = None,
        zero_tol: bool = False,
    ) -> CommonOptions:
        """Resolve ``tol``, ``max_iter``, ``time_limit`` and ``verbose`` for one run.

        One rule for every driver: a value in ``options`` (from :func:`optframe.solve`) wins
        over the driver's own, and ``None`` (only ``None``) means unset. A value that makes no
        sense is an error, never a silent default: ``max_iter`` must be an integer >= 1,
        ``time_limit`` > 0 (``inf`` is no limit), ``tol`` finite and > 0 (>= 0 with
        ``zero_tol``, for drivers whose tolerance is a gap that can close exactly).

        Parameters
        ----------
        options : SolveOptions
            The run's options.
        tol : float
            The driver's own tolerance (its field).
        max_iter : int, optional
            The driver's own iteration limit (its field; ``None``: ``default_max_iter``).
        default_max_iter : int, optional
            The limit when neither ``options`` nor the driver sets one.
        zero_tol : bool
            Whether ``tol = 0`` is meaningful for this driver.

        Returns
        -------
        CommonOptions

        Raises
        ------
        ModelError
            Naming the driver, the option and where the bad value came from.
        """
        owner = type(self).__name__

        def pick(name: str, given: Any, own: Any) -> tuple[Any, str]:
            if given is not None:
                return given, f"solve({name}=...)"
            return own, f"{owner}({name}=...)"

        value, source = pick("tol", options.tol, tol)
        if not (is_real(value) and (value >= 0 if zero_tol else value > 0)):
            need = ">= 0" if zero_tol else "> 0"
            raise ModelError(f"{owner}: tol from {source} must be a finite number {need}; "
                             f"got {value!r}")  # fmt: skip
        resolved_tol = float(value)
        value, source = pick("max_iter", options.max_iter, max_iter)
        if value is None:
            value, source = default_max_iter, f"{owner}'s default"
        if not is_count(value):
            raise ModelError(f"{owner}: max_iter from {source} must be an integer >= 1; "
                             f"got {value!r}")  # fmt: skip
        limit = options.time_limit
        if limit is not None and not (
            not isinstance(limit, bool) and isinstance(limit, numbers.Real) and limit > 0
        ):
            raise ModelError(f"{owner}: time_limit must be a number > 0 or None; got {limit!r}")
        return CommonOptions(
            tol=resolved_tol,
            max_iter=int(value),
            time_limit=None if limit is None or math.isinf(limit) else float(limit),
            verbose=bool(options.verbose),
        )

    @abc.abstractmethod
    def run(self, model: Model, context: RunContext) -> Result:
        """Solve ``model`` and return a result evaluated on the original model."""


#: Seconds per data entry (samples times features) that a model's dual bound is expected to
#: cost at most, for :func:`certificate_fits`: LAD's took 0.85 s on 20,000 x 20 rows and 1.4 s
#: (one BLAS thread) to 10 s (two, on a loaded machine) on 200,000 x 20.
CERTIFICATE_SECONDS_PER_ENTRY = 1e-6


def certificate_fits(model: Model, start: float, time_limit: float | None) -> bool:
    """Whether the model's dual bound likely fits in what the time limit's margin has left.

    The margin ends at ``start + 1.1 time_limit + 0.5``; the bound's cost is taken as
    :data:`CERTIFICATE_SECONDS_PER_ENTRY` per data entry, and must fit in half of what is left.
    A driver whose run stopped at its time limit and gets ``False`` puts
    ``stats["certificate_skipped"]`` in its result (:func:`optframe.certificate.certify` then
    computes no bound). Always ``True`` without a time limit.
    """
    if time_limit is None:
        return True
    data = getattr(model, "data", None)
    entries = int(getattr(data, "n_samples", 0) or 0) * max(
        1, int(getattr(data, "n_features", 1) or 1)
    )
    left = start + 1.1 * time_limit + 0.5 - time.perf_counter()
    return CERTIFICATE_SECONDS_PER_ENTRY * entries <= 0.5 * left


def clock_timings(
    start: float,
    built: float | None = None,
    solved: float | None = None,
    *,
    compile_seconds: float = 0.0,
) -> Timings:
    """:class:`~optframe.result.Timings` from ``time.perf_counter()`` marks of a driver's run.

    Parameters
    ----------
    start : float
        When the driver's timer started.
    built : float, optional
        When its set-up ended (default ``start``: no build phase).
    solved : float, optional
        When its loop ended (default: now).
    compile_seconds : float
        Seconds spent compiling kernels before ``start`` (:func:`optframe.jit.compile_kernels`).

    Returns
    -------
    Timings
        ``build = built - start``, ``solve = solved - built``, ``total = now - start``.
    """
    end = time.perf_counter()
    built = start if built is None else built
    solved = end if solved is None else solved
    return Timings(
        build=built - start, solve=solved - built, total=end - start, compile=compile_seconds
    )


def driver_result(
    driver: Driver | str,
    model: Model,
    status: Status,
    solution: Mapping[str, Any] | None,
    *,
    timings: Timings,
    backend: str,
    objective: float | None = None,
    bound: float | None = None,
    iterations: int = 0,
    history: Iterable[IterationRecord] = (),
    stats: Mapping[str, Any] | None = None,
    basis: Basis | None = None,
) -> Result:
    """The :class:`~optframe.result.Result` of a driver's run, with its common fields filled.

    Every driver builds its result here, so the names, the source model and the defaults are
    the same for all of them; :func:`optframe.solve` then certifies it (bound, status, scale).

    Parameters
    ----------
    driver : Driver or str
        The driver (its ``name`` is used) or the name to report.
    model : Model
        The model the solution belongs to (its ``name`` is reported; it predicts with it).
    status : Status
        How the run ended.
    solution : Mapping, optional
        The solution named as in the model's docstring; ``None`` or empty when there is none.
    timings : Timings
        Wall seconds (:func:`clock_timings`).
    backend : str
        What computed the steps (``"numba"``, ``"numpy"``, a back-end's full name, ...).
    objective : float, optional
        The model's objective at ``solution``, when the driver has computed it already;
        default: ``model.objective(solution)``, ``nan`` without a solution.
    bound : float, optional
        The driver's lower bound.
    iterations : int
        The driver's iterations.
    history : iterable of IterationRecord
        Per-iteration records.
    stats : Mapping, optional
        Driver-specific figures.
    basis : Basis, optional
        A final simplex basis (``Direct`` on back-ends that report one).

    Returns
    -------
    Result
        Not yet certified (``scale`` is ``nan`` until :func:`optframe.certificate.certify`).
    """
    solution = {} if solution is None else solution
    if objective is None:
        objective = model.objective(solution) if solution else math.nan
    return Result(
        status=status,
        objective=objective,
        bound=bound,
        solution=solution,
        iterations=iterations,
        history=tuple(history),
        timings=timings,
        stats={} if stats is None else stats,
        model=model.name,
        driver=driver if isinstance(driver, str) else driver.name,
        backend=backend,
        source=model,
        basis=basis,
    )
