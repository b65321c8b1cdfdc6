"""The :class:`Direct` driver: build the model once and hand it to one back-end."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar

from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.drivers.base import (
    Driver,
    RunContext,
    certificate_fits,
    clock_timings,
    driver_result,
)
from optframe.errors import ModelError
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution
from optframe.registry import register_driver, resolve_backend
from optframe.result import Result, Status
from optframe.safe_bound import SafeBound, safe_lower_bound


def _original_bound(formulation: Formulation, raw: BackendResult) -> float | None:
    # A formulation maximized as the minimization of its negative (scale < 0) is a dual: the value
    # of any feasible point of it is a lower bound on the original problem (weak duality), so the
    # solver's primal objective, not its bound, becomes ours.
    if formulation.objective_scale > 0:
        return formulation.original_value(raw.bound)
    if raw.values is None:
        return None
    return formulation.original_value(raw.objective)


def _recover(formulation: Formulation, raw: BackendResult) -> tuple[dict, str]:
    # A solver stopped by a limit may return a point the model cannot read (an L2SVM alpha
    # with no positive entry after one OSQP iteration): the limit stays the status, without a
    # solution. From a solver that claims success such a point is a real error and raises.
    if raw.values is None:
        return {}, ""
    try:
        return formulation.recover(raw.values), ""
    except ModelError as exc:
        if raw.status.is_success:
            raise
        return {}, f" (its last point is not a solution: {exc})"


#: The handles Direct adds to a matrix formulation to read the whole point and every row's dual.
_ALL_COLUMNS, _ALL_ROWS = "__all_columns__", "__all_rows__"
#: Where :func:`_safe_bound` leaves the safe bound's certificate for the result (not in stats).
_SAFE_CERTIFICATE = "__safe_certificate__"


def _wants_safe_bound(model: Model, backend: Backend, formulation: Formulation) -> bool:
    """Whether the bound must come from the solver's duals (the model has no certificate)."""
    problem = formulation.problem
    return (
        not model.writes_dual()
        and formulation.layer == "matrix"
        and isinstance(problem, MatrixProblem)
        and formulation.problem_class in (ProblemClass.LP, ProblemClass.QP)
        and formulation.problem_class in backend.duals
        and formulation.objective_scale > 0
    )


def _with_all_handles(formulation: Formulation) -> Formulation:
    problem = formulation.problem
    return replace(
        formulation,
        variables={**formulation.variables, _ALL_COLUMNS: slice(0, problem.n_variables)},
        constraints={**formulation.constraints, _ALL_ROWS: slice(0, problem.n_rows)},
    )


def _record_bound(
    formulation: Formulation, prove: Callable[[], SafeBound], how: str, stats: dict
) -> None:
    """Time ``prove()`` and put its bound, on the model's scale, and its certificate in ``stats``.

    The certificate takes ``stats["safe_bound"]`` when the model has no dual bound of its own.
    """
    tick = time.perf_counter()
    found = prove()
    stats["safe_bound_seconds"] = time.perf_counter() - tick
    stats["safe_bound"] = formulation.original_value(found.value)
    stats["safe_bound_how"] = found.reason or (
        f"{how}; {found.zeroed_rows} multipliers zeroed, {found.curvature_columns} columns kept "
        "their curvature)"
    )
    certificate = found.certificate(formulation.objective_scale, formulation.objective_offset)
    if certificate is not None:
        # the same number as stats["safe_bound"], with its point and steps (Result.certificate)
        stats[_SAFE_CERTIFICATE] = replace(certificate, value=stats["safe_bound"])


def _safe_bound(formulation: Formulation, raw: BackendResult, stats: dict) -> BackendResult:
    """Evaluate :func:`~optframe.safe_bound.safe_lower_bound` at the solver's point and duals.

    The added handles leave the raw values.
    """
    if raw.values is None:
        return raw
    primal = dict(raw.values.primal)
    dual = dict(raw.values.dual)
    x, y = primal.pop(_ALL_COLUMNS, None), dual.pop(_ALL_ROWS, None)
    if x is not None and y is not None:
        how = "from the solver's point and duals, made safe (Neumaier-Shcherbina"
        _record_bound(formulation, lambda: safe_lower_bound(formulation.problem, x, y), how, stats)
    return replace(raw, values=RawSolution(primal=primal, dual=dual))


def _conic_safe_bound(
    model: Model, formulation: Formulation, raw: BackendResult, stats: dict
) -> None:
    """The bound from a conic solver's duals (:mod:`optframe.conic_bound`) into ``stats``.

    For a model without a certificate of its own solved as a cone program, as
    :func:`_safe_bound` does for the matrix layer.
    """
    if raw.conic is None or model.writes_dual() or not formulation.objective_scale > 0:
        return
    from optframe.conic_bound import conic_lower_bound

    how = (
        "from the conic solver's point and dual values, put into the dual cone and made safe "
        "(Neumaier-Shcherbina on the Lagrangian"
    )
    _record_bound(formulation, lambda: conic_lower_bound(raw.conic), how, stats)


def _refusal(backend: Backend, formulation: Formulation) -> str | None:
    """Why ``backend`` does not take ``formulation`` (its ``refusal``, if it has one)."""
    refusal = getattr(backend, "refusal", None)
    return refusal(formulation) if refusal is not None else None


def _solve_in_time(
    backend: Backend, formulation: Formulation, options: SolveOptions, spent: float
) -> BackendResult:
    # The time limit covers the whole call: the back-end gets what the build left of it.
    if options.time_limit is None:
        return backend.solve(formulation, options)
    left = options.time_limit - spent
    if left <= 0:
        return BackendResult(
            Status.TIME_LIMIT,
            None,
            message=f"time limit reached while building the model ({spent:.3g} s); not solved",
        )
    return backend.solve(formulation, replace(options, time_limit=left))


def _skip_certificate(
    model: Model, status: Status, start: float, context: RunContext, stats: dict
) -> None:
    """Mark a solve stopped at its time limit whose certificate would overrun the limit."""
    if status is Status.TIME_LIMIT and not certificate_fits(
        model, start, context.options.time_limit
    ):
        stats["certificate_skipped"] = "no time left in the limit for the model's dual bound"


def _builds_in_child(backend: Backend, context: RunContext) -> bool:
    """Whether the build goes to the solve's child process (cvxpy layer, a time limit).

    A cvxpy model's build reads no clock and no signal (1.6 s for 1,000,000 LAD rows, past a
    time limit of 1 s): in the child it is stopped with the solve. Not in a child already,
    not with a fallback back-end (its refusal is read from the build), not without ``fork``.
    """
    from optframe.solvers import _common

    return (
        backend.layer == "cvxpy"
        and context.options.time_limit is not None
        and context.fallback is None
        and not _common.in_child
        and hasattr(os, "fork")
    )


@register_driver
@dataclass(frozen=True)
class Direct(Driver):
    """Solve the model's formulation with one back-end call; the reference for every other driver.

    Parameters
    ----------
    form : str, optional
        Which of the model's formulations to build (for example ``"dual"`` for
        :class:`~optframe.models.LADRegression`); default: the model's first.

    Notes
    -----
    ``Result.objective`` is the model's own objective evaluated at the recovered solution;
    ``Result.bound`` is the solver's proven bound mapped to the model's scale (the dual objective
    for continuous problems, the MIP dual bound for integer ones), so the gap certifies the solve to
    the solver's tolerances. ``stats`` keeps the solver's own objective and status text.
    """

    name: ClassVar[str] = "direct"
    form: str | None = None

    def missing(self, model: Model) -> list[str]:
        """A modeling layer, for a model that lists none (its problem is never built whole)."""
        if not model.layers:
            return [f"a modeling layer to build the whole problem in ({model.name} lists none)"]
        return super().missing(model)

    def run(self, model: Model, context: RunContext) -> Result:
        """Build ``model`` in the back-end's layer, solve it, evaluate the original objective."""
        start = time.perf_counter()
        model.check_form(self.form)
        backend = resolve_backend(context.backend, model, self.form)
        if _builds_in_child(backend, context):
            return self._run_in_child(model, backend, context, start)
        formulation = model.build(backend.layer, form=self.form)
        refused = _refusal(backend, formulation) if context.fallback is not None else None
        if refused is not None:
            backend = resolve_backend(context.fallback, model, self.form)
            formulation = model.build(backend.layer, form=self.form)
        compiled = backend.prepare(formulation)  # the back-end's kernels, off the clock
        start += compiled
        built = time.perf_counter()
        safe = _wants_safe_bound(model, backend, formulation)
        sent = _with_all_handles(formulation) if safe else formulation
        raw = _solve_in_time(backend, sent, context.options, built - start)
        solved = time.perf_counter()
        stats: dict = {}
        if safe:
            raw = _safe_bound(formulation, raw, stats)
        else:
            _conic_safe_bound(model, formulation, raw, stats)
        solution, unusable = _recover(formulation, raw)
        objective = model.objective(solution) if solution else math.nan
        stats |= {
            "solver_status": raw.message + unusable,
            "solver_objective": formulation.original_value(raw.objective),
            "violation": model.violation(solution) if solution else math.nan,
            "form": formulation.form,
        }
        if refused is not None:
            stats["preferred_backend_refused"] = refused
        certificate = stats.pop(_SAFE_CERTIFICATE, None)
        _skip_certificate(model, raw.status, start, context, stats)
        result = driver_result(
            self,
            model,
            raw.status if solution or not raw.status.is_success else Status.ERROR,
            solution,
            objective=objective,
            bound=_original_bound(formulation, raw),
            iterations=raw.iterations,
            timings=clock_timings(start, built, solved, compile_seconds=compiled),
            stats=stats,
            backend=backend.full_name(),
            basis=raw.basis,
        )
        return replace(result, certificate=certificate)

    def _run_in_child(
        self, model: Model, backend: Backend, context: RunContext, start: float
    ) -> Result:
        """Build and solve in one child process (:func:`optframe.solvers._common.stoppable`).

        The child builds the formulation, solves it with the time the build left and reads the
        solution; it sends back the solution and the solver's figures on the model's scale
        (``time.perf_counter`` is the system's monotonic clock: the same in both processes).
        Ctrl-C and the time limit's margin kill it, build included.
        """
        from optframe.solvers._common import stoppable

        options = context.options

        def work() -> tuple:
            formulation = model.build(backend.layer, form=self.form)
            built = time.perf_counter()
            raw = _solve_in_time(backend, formulation, options, built - start)
            solution, unusable = _recover(formulation, raw)
            safe: dict = {}
            _conic_safe_bound(model, formulation, raw, safe)
            return (raw.status, dict(solution), raw.message + unusable,
                    formulation.original_value(raw.objective), _original_bound(formulation, raw),
                    raw.iterations, formulation.form, built, safe)  # fmt: skip

        left = max(0.0, float(options.time_limit) - (time.perf_counter() - start))
        out = stoppable(work, replace(options, time_limit=left), backend.full_name(),
                        always=True, preload=tuple(backend.requires))  # fmt: skip
        solved = time.perf_counter()
        if isinstance(out, tuple):
            status, solution, message, solver_objective, bound, iterations, form, built, safe = out
        else:  # killed past the time limit's margin, or no result from the child
            status, solution, message = out.status, {}, out.message
            solver_objective, bound, iterations, form, built = None, None, 0, self.form, solved
            safe = {}
        objective = model.objective(solution) if solution else math.nan
        stats = {
            "solver_status": message,
            "solver_objective": solver_objective,
            "violation": model.violation(solution) if solution else math.nan,
            "form": form,
        }
        certificate = safe.pop(_SAFE_CERTIFICATE, None)
        stats |= safe
        _skip_certificate(model, status, start, context, stats)
        result = driver_result(
            self,
            model,
            status if solution or not status.is_success else Status.ERROR,
            solution,
            objective=objective,
            bound=bound,
            iterations=iterations,
            timings=clock_timings(start, min(built, solved), solved),
            stats=stats,
            backend=backend.full_name(),
        )
        return replace(result, certificate=certificate)
