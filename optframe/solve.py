"""The front door: :func:`solve`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from optframe.backend import SolveOptions
from optframe.drivers.base import Callback, Driver, RunContext
from optframe.errors import ModelError, UnknownDriver
from optframe.model import Model
from optframe.registry import drivers
from optframe.result import Result


def _driver(driver: Driver | str) -> Driver:
    if isinstance(driver, Driver):
        return driver
    known = drivers()
    try:
        return known[driver.lower()]()
    except KeyError:
        raise UnknownDriver(f"unknown driver {driver!r}; known drivers: {sorted(known)}") from None


def solve(
    model: Model,
    driver: Driver | str = "direct",
    backend: str = "auto",
    *,
    tol: float | None = None,
    max_iter: int | None = None,
    time_limit: float | None = None,
    threads: int | None = None,
    verbose: bool = False,
    callback: Callback | None = None,
    solver_options: Mapping[str, Any] | None = None,
) -> Result:
    """Solve ``model`` with ``driver``, whose sub-problems go to ``backend``.

    Parameters
    ----------
    model : Model
        The problem, declared once (see :mod:`optframe.models`).
    driver : Driver or str
        ``"direct"`` (default) or a driver instance such as ``AggregateDisaggregate()``.
    backend : str
        ``"auto"`` (the reference solver of the problem class: LP -> HiGHS, QP -> Clarabel,
        MIQP -> SCIP), a solver name (``"highs"``, ``"osqp"``, ``"clarabel"``, ``"scip"``) or
        ``"layer:solver"`` (``"pyomo:highs"``, ``"cvxpy:clarabel"``, ``"matrix:highs"``).
    tol, max_iter, time_limit, threads, verbose
        Common options; drivers use them for their own loop and pass them to back-ends.
    callback : callable, optional
        Called with each iteration record of an iterative driver; return ``True`` to stop.
    solver_options : Mapping, optional
        Passed untouched to the solver.

    Returns
    -------
    Result
        Status, the original model's objective at the solution, a proven bound where there is one,
        the solution, history and timings. Solver failures and limits are statuses, not exceptions.

    Raises
    ------
    UnknownBackend, IncompatibleBackend, IncompatibleDriver, SolverUnavailable
        When the request cannot be carried out at all.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.models import LADRegression
    >>> from optframe.data import Dataset
    >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))
    >>> round(of.solve(model).objective, 6)
    1.5
    """
    if not isinstance(model, Model):
        raise ModelError(f"solve() takes an optframe model; got {type(model).__name__}")
    chosen = _driver(driver)
    chosen.check(model)
    options = SolveOptions(
        tol=tol,
        time_limit=time_limit,
        threads=threads,
        max_iter=max_iter,
        verbose=verbose,
        solver_options=dict(solver_options or {}),
    )
    return chosen.run(model, RunContext(backend=backend, options=options, callback=callback))
