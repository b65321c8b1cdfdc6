"""The front door: :func:`solve`."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from optframe.backend import SolveOptions, threads_from_environment
from optframe.certificate import certify, resolve_gap_tol
from optframe.cvxpy_problem import is_cvxpy_problem, solve_cvxpy
from optframe.drivers.auto import choose
from optframe.drivers.base import Callback, Driver, RunContext
from optframe.errors import ModelError, UnknownBackend, UnknownDriver
from optframe.model import Model
from optframe.registry import drivers
from optframe.result import Result, Status
from optframe.threads import thread_limits
from optframe.validation import check_integer, check_number


def _driver(driver: Driver | str) -> Driver:
    if isinstance(driver, Driver):
        return driver
    known = drivers()
    if not isinstance(driver, str):
        raise UnknownDriver(
            f"driver must be a driver name or a Driver instance; got {driver!r}. Known "
            f"drivers: {sorted(known)} (or, for example, optframe.drivers.SMO())"
        )
    try:
        return known[driver.lower()]()
    except KeyError:
        raise UnknownDriver(
            f"unknown driver {driver!r}; known drivers: {['auto', *sorted(known)]}"
        ) from None


def _count(value: Any, name: str) -> int | None:
    """``None`` or an integer >= 1 (numpy integers too), else a ModelError naming ``name``."""
    return check_integer(value, name, "solve()", allow_none=True)


def _check_arguments(
    backend: Any,
    tol: Any,
    max_iter: Any,
    time_limit: Any,
    threads: Any,
    verbose: Any,
    callback: Any,
    solver_options: Any,
    gap_tol: Any = None,
) -> dict[str, Any]:
    """Check :func:`solve`'s common options; return them normalized (ints, floats).

    Raises UnknownBackend for a back-end that is not a name, ModelError for the others (the
    one rule of :mod:`optframe.validation`). A ``time_limit`` of ``inf`` means no limit and becomes
    ``None``.
    """
    if not isinstance(backend, str):
        raise UnknownBackend(
            f"backend must be a name: 'auto', a solver ('highs', 'osqp', 'clarabel', 'scip') "
            f"or 'layer:solver' ('pyomo:highs', ...); got {backend!r}"
        )
    checked: dict[str, Any] = {"max_iter": _count(max_iter, "max_iter")}
    checked["threads"] = _count(threads, "threads")
    checked["tol"] = check_number(tol, "tol", "solve()", low=0.0, allow_none=True)
    checked["gap_tol"] = check_number(gap_tol, "gap_tol", "solve()", low=0.0, allow_none=True)
    limit = check_number(
        time_limit, "time_limit", "solve()", low=0.0, low_open=True, allow_none=True,
        allow_inf=True,
    )  # fmt: skip
    checked["time_limit"] = None if limit is None or math.isinf(limit) else limit
    if not isinstance(verbose, bool | np.bool_):
        raise ModelError(f"solve(): verbose must be True or False; got {verbose!r}")
    if callback is not None and not callable(callback):
        raise ModelError(
            f"solve(): callback must be a function of one IterationRecord or None; got {callback!r}"
        )
    if solver_options is not None:
        if not isinstance(solver_options, Mapping):
            raise ModelError(
                "solve(): solver_options must be a mapping of option names to values, for "
                f"example {{'presolve': 'off'}}; got {type(solver_options).__name__}"
            )
        bad = [key for key in solver_options if not isinstance(key, str)]
        if bad:
            raise ModelError(f"solve(): solver_options keys must be strings; got {bad!r}")
    return checked


def solve(
    model: Model,
    driver: Driver | str = "auto",
    backend: str = "auto",
    *,
    tol: float | None = None,
    max_iter: int | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    solver_options: Mapping[str, Any] | None = None,
    gap_tol: float | None = None,
) -> Result:
    """Solve ``model`` with ``driver``, whose sub-problems go to ``backend``.

    Parameters
    ----------
    model : Model or cvxpy.Problem
        The problem, declared once (see :mod:`optframe.models`), or a user's
        ``cvxpy.Problem`` as it is (:mod:`optframe.cvxpy_problem`: a loss plus a penalty is
        recognized and solved as an ``EmpiricalRisk``, ``stats["recognized"]`` says what was
        found; anything else is solved through its matrix form where it has one and certified
        from the solver's duals; the values are written back to its variables and
        ``problem.value``).
    driver : Driver or str
        ``"auto"`` (default: chosen from the model's structures and size by measured rules,
        :mod:`optframe.drivers.auto`; ``Result.driver`` says what ran and
        ``stats["auto_rule"]`` why), a registered name (``"direct"``, ``"aid"``, ``"smo"``, ...)
        or a driver instance such as ``AggregateDisaggregate()``.
    backend : str
        ``"auto"`` (the reference solver of the problem class: LP -> HiGHS, QP -> Clarabel,
        MIQP -> SCIP; with ``driver="auto"`` a rule may pick another, as ``fn`` for the dual LP
        of LAD and quantile regression, and ``Result.backend`` says which ran), a solver name
        (``"highs"``, ``"osqp"``, ``"clarabel"``, ``"scip"``, ``"fn"``) or ``"layer:solver"``
        (``"pyomo:highs"``, ``"cvxpy:clarabel"``, ``"matrix:highs"``).
    tol, max_iter, time_limit, threads, verbose
        Common options; drivers use them for their own loop and pass them to back-ends.
        ``tol >= 0``; ``max_iter`` and ``threads`` integers >= 1; ``time_limit > 0`` wall
        seconds for the whole call (``inf`` is no limit, as ``None``); ``verbose`` a bool.
        Numpy scalars are taken; strings, NaN and (except ``time_limit``) infinities are not.
        ``threads`` (default ``OPTFRAME_THREADS``) holds numba's parallel loops and optframe's
        row blocks to that many threads (all numba threads when neither says), for the driver
        and the certificate; back-ends get it as their own thread option. BLAS stays at one
        thread (``OPTFRAME_BLAS_THREADS`` raises it): a second BLAS thread slowed every
        measured path (:mod:`optframe.threads`).
    callback : callable, optional
        Called with each iteration record of an iterative driver; return ``True`` to stop.
    solver_options : Mapping, optional
        Passed untouched to the solver.
    gap_tol : float, optional
        The relative gap that proves optimality (:mod:`optframe.certificate`), a finite number
        ``>= 0``. Default: the
        driver's (``tol`` for drivers whose tolerance is a gap, such as Direct and
        AggregateDisaggregate; see each driver), else 1e-6; for mixed-integer models (S3VM) at
        least 1e-4, since their bound is the solver's branch-and-bound bound.

    Returns
    -------
    Result
        Status, the original model's objective at the solution, the bound optframe proved from a
        dual-feasible point built from the solution, the solution, history and timings.
        ``OPTIMAL`` means optframe's own gap closed to ``gap_tol``, whatever the driver or the
        solver claimed (their words stay in ``stats``). Solver failures and limits are
        statuses, not exceptions.

    Raises
    ------
    UnknownBackend, IncompatibleBackend, IncompatibleDriver, SolverUnavailable
        When the request cannot be carried out at all.
    UnknownDriver
        If ``driver`` is neither a known name nor a Driver instance.
    ModelError
        If a common option has the wrong type or range (``max_iter=-5``, ``tol="1e-6"``,
        ``gap_tol=-1``; ``backend=None`` raises UnknownBackend).

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.models import LADRegression
    >>> from optframe.data import Dataset
    >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))
    >>> round(of.solve(model).objective, 6)
    1.5
    """
    if is_cvxpy_problem(model):
        return solve_cvxpy(
            model, solve, driver, backend, tol=tol, max_iter=max_iter, time_limit=time_limit,
            threads=threads, verbose=verbose, callback=callback, solver_options=solver_options,
            gap_tol=gap_tol,
        )  # fmt: skip
    if not isinstance(model, Model):
        raise ModelError(
            f"solve() takes an optframe model or a cvxpy.Problem; got {type(model).__name__}"
        )
    checked = _check_arguments(
        backend, tol, max_iter, time_limit, threads, verbose, callback, solver_options, gap_tol
    )
    tol, max_iter, time_limit = checked["tol"], checked["max_iter"], checked["time_limit"]
    gap_tol = checked["gap_tol"]
    threads, verbose = checked["threads"], bool(verbose)
    rule, fallback, unproven = None, None, None
    if isinstance(driver, str) and driver.lower() == "auto":
        choice = choose(
            model, backend if isinstance(backend, str) else "auto", bool(solver_options)
        )
        chosen, rule, unproven = choice.driver, choice.rule, choice.unproven
        if choice.backend is not None:
            fallback, backend = backend, choice.backend
    else:
        chosen = _driver(driver)
    chosen.check(model)
    options = SolveOptions(
        tol=tol,
        time_limit=time_limit,
        threads=threads if threads is not None else threads_from_environment(),
        max_iter=max_iter,
        verbose=verbose,
        solver_options=dict(solver_options or {}),
        gap_tol=gap_tol,
    )
    asked_to_stop: list[bool] = []
    watched = callback
    if unproven is not None and callback is not None:  # a stop the user asked for is kept
        user_callback = callback

        def watched(record: Any) -> bool:
            answer = bool(user_callback(record))
            asked_to_stop.append(answer)
            return answer

    context = RunContext(backend=backend, options=options, callback=watched, fallback=fallback)
    started = time.perf_counter()
    explicit = gap_tol is not None or tol is not None
    with thread_limits(options.threads):  # the certificate's products too
        result = chosen.run(model, context)
        if rule is not None:
            result = replace(result, stats={**result.stats, "auto_rule": rule})
        certified = certify(
            model, result, resolve_gap_tol(model, chosen.gap_tolerance(options), explicit)
        )
    if unproven is None or certified.status is not Status.CONVERGED or any(asked_to_stop):
        return certified
    return _run_unproven(model, unproven, certified, context, started, explicit)


def _run_unproven(
    model: Model,
    driver: Driver,
    first: Result,
    context: RunContext,
    started: float,
    explicit: bool,
) -> Result:
    """``driver`` after ``auto``'s first driver stopped without a proof, on the time left.

    Its result says what ran first (``stats["auto_first"]``: the driver, its gap and seconds,
    which ``timings.total`` includes); the first result stands when the time is up.
    """
    limit = context.options.time_limit
    left = None if limit is None else limit - (time.perf_counter() - started)
    if left is not None and left <= 0:
        return first
    options = replace(context.options, time_limit=left)
    first_run = {"driver": first.driver, "gap": first.gap, "seconds": first.timings.total}
    rule = f"{first.stats.get('auto_rule')}; it stopped without a proof: {driver.name}"
    with thread_limits(options.threads):
        result = driver.run(model, replace(context, options=options))
        timings = replace(result.timings, total=result.timings.total + first.timings.total)
        stats = {**result.stats, "auto_rule": rule, "auto_first": first_run}
        result = replace(result, stats=stats, timings=timings)
        tolerance = resolve_gap_tol(model, driver.gap_tolerance(options), explicit)
        return certify(model, result, tolerance)
