"""HiGHS back-ends: native highspy on the matrix layer, cvxpy's HIGHS, and Pyomo's HiGHS interface.

HiGHS solves LPs, convex continuous QPs and MILPs; it cannot solve MIQPs (its QP solver takes no
integer variables), so no back-end here declares MIQP.

Layers, in order of preference (the registration order below):

``matrix``
    :class:`HighsMatrixBackend` builds a ``highspy.HighsLp`` straight from the CSC arrays of the
    :class:`~optframe.model.MatrixProblem` (and a ``HighsHessian`` holding the lower triangle of
    ``P``, column-wise, which is the triangle HiGHS stores), passes it and runs. Solution vectors
    are read once as NumPy arrays.
``cvxpy``
    :class:`HighsCvxpyBackend`: cvxpy's ``HIGHS`` interface (its QP path for LP/QP, conic path for
    MILP).
``pyomo``
    :class:`HighsPyomoBackend`: the ``highs`` interface of ``pyomo.contrib.solver`` (Pyomo 6.10.1),
    which handles linear constraints with linear or quadratic objectives (LP, QP, MILP).

Common options (the same HiGHS option names in every layer; ``solver_options`` are applied after
them, so they win):

=============  =============================================================================
``tol``        ``primal_feasibility_tolerance``, ``dual_feasibility_tolerance``,
               ``ipm_optimality_tolerance`` and ``mip_rel_gap``
``time_limit`` ``time_limit`` (seconds); under a limit the solve runs in a child process that
               is killed past it (loading a large model, or cvxpy's and Pyomo's builds, come
               before HiGHS reads its clock; see :func:`optframe.solvers._common.run_stoppable`),
               then with status ``TIME_LIMIT`` and no point; a large matrix problem
               (:data:`~optframe.solvers._common.LARGE_DATA` nonzeros) runs in a child without
               a limit too, so that Ctrl-C stops it while HiGHS loads it
``threads``    ``threads``; HiGHS keeps one global thread pool, so it is reset
               (``Highs.resetGlobalScheduler``) before a solve that asks for a thread count
``max_iter``   ``simplex_iteration_limit``, ``ipm_iteration_limit``, ``qp_iteration_limit``,
               ``pdlp_iteration_limit``, and ``mip_max_nodes`` (branch-and-bound nodes: HiGHS's
               MIP solver does not apply the LP iteration limits)
``verbose``    ``output_flag``
=============  =============================================================================

Bounds. MILP: HiGHS's MIP dual bound (``info.mip_dual_bound``) in every layer. LP/QP: highspy
1.15 does not return HiGHS's dual objective (the ``getDualObjectiveValue`` binding returns only a
status), so the matrix and cvxpy layers compute the Lagrangian dual value from HiGHS's multipliers,
``offset - x'Px/2 + sum_i y_i b_i + sum_j z_j d_j`` with ``b``/``d`` the row and column bounds the
multipliers price (see :func:`optframe.solvers._common.lagrangian_bound`), when HiGHS reports the
duals feasible; the Pyomo layer reports Pyomo's ``objective_bound``, which for a continuous problem
solved to optimality is HiGHS's objective value.

Duals. HiGHS's ``row_dual`` already is ``d f*/d (active row bound)`` and its ``col_dual`` the
matching reduced cost, so no sign change is needed; Pyomo passes them through unchanged; cvxpy's
are converted by :func:`optframe.solvers._common.cvxpy_dual_sign`. MILPs have no duals.

When HiGHS's presolve ends with "infeasible or unbounded", the matrix layer solves again without
presolve to tell the two apart (HiGHS's documented remedy); the other layers report ``UNBOUNDED``.
At a limit, a primal solution is returned when HiGHS reports one feasible (a MIP incumbent), in
every layer; an infeasible iterate (an LP stopped by its iteration limit) is not returned.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.basis import Basis
from optframe.c_output import hide_highs_banner
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.registry import register_backend
from optframe.result import Status

from ._common import (
    Clock,
    RawOutcome,
    error_result,
    finite_or_none,
    is_large,
    lagrangian_bound,
    matrix_quadratic,
    matrix_raw_solution,
    out_of_time,
    solve_cvxpy,
    solve_pyomo,
    stoppable,
    time_left,
)

__all__ = ["HIGHS_STATUS", "HighsCvxpyBackend", "HighsMatrixBackend", "HighsPyomoBackend"]


def _quiet_scheduler_before_fork() -> None:
    # HiGHS runs its MIP (and parallel) work on one process-wide task scheduler. A child forked
    # while its worker threads are alive inherits the scheduler's state (its reference counts,
    # its deques' locks) but not the threads, and a MIP in the child (run_stoppable) then waited
    # for them until it was killed, in about one run in four. Shutting the scheduler down here,
    # blocking until its workers have left, forks a process with no scheduler at all; the
    # parent's next HiGHS run starts a new one.
    highspy = sys.modules.get("highspy")
    if highspy is not None:
        with contextlib.suppress(Exception):
            highspy.Highs.resetGlobalScheduler(True)


def _fresh_scheduler_after_fork() -> None:
    # A scheduler left in the child (a fork the hook above could not quiet) is dropped.
    highspy = sys.modules.get("highspy")
    if highspy is not None:
        with contextlib.suppress(Exception):
            highspy.Highs.resetGlobalScheduler(False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_quiet_scheduler_before_fork, after_in_child=_fresh_scheduler_after_fork
    )

#: HiGHS model status (``HighsModelStatus`` member name) -> Status.
HIGHS_STATUS: dict[str, Status] = {
    "kOptimal": Status.OPTIMAL,
    "kModelEmpty": Status.OPTIMAL,
    "kInfeasible": Status.INFEASIBLE,
    "kUnbounded": Status.UNBOUNDED,
    "kUnboundedOrInfeasible": Status.UNBOUNDED,
    "kTimeLimit": Status.TIME_LIMIT,
    "kIterationLimit": Status.ITERATION_LIMIT,
    # Other user limits (MIP solution/node limits, objective bound or target reached).
    "kSolutionLimit": Status.ITERATION_LIMIT,
    "kObjectiveBound": Status.ITERATION_LIMIT,
    "kObjectiveTarget": Status.ITERATION_LIMIT,
    "kInterrupt": Status.ERROR,
    "kHighsInterrupt": Status.ERROR,
    "kMemoryLimit": Status.ERROR,
    "kNotset": Status.ERROR,
    "kLoadError": Status.ERROR,
    "kModelError": Status.ERROR,
    "kPresolveError": Status.ERROR,
    "kSolveError": Status.ERROR,
    "kPostsolveError": Status.ERROR,
    "kUnknown": Status.ERROR,
}

_FEASIBLE = 2  # HiGHS's kSolutionStatusFeasible, for primal_solution_status / dual_solution_status


def highs_options(options: SolveOptions) -> dict[str, Any]:
    """Map ``options`` to HiGHS options (a new dict; ``solver_options`` applied last)."""
    opts: dict[str, Any] = {"output_flag": bool(options.verbose)}
    if options.tol is not None:
        for key in (
            "primal_feasibility_tolerance",
            "dual_feasibility_tolerance",
            "ipm_optimality_tolerance",
            "mip_rel_gap",
        ):
            opts[key] = float(options.tol)
    if options.time_limit is not None:
        opts["time_limit"] = float(options.time_limit)
    if options.threads is not None:
        opts["threads"] = int(options.threads)
    if options.max_iter is not None:
        for key in (
            "simplex_iteration_limit",
            "ipm_iteration_limit",
            "qp_iteration_limit",
            "pdlp_iteration_limit",
            "mip_max_nodes",
        ):
            opts[key] = int(options.max_iter)
    opts.update(options.solver_options)
    return opts


def _reset_threads(options: SolveOptions, highspy: Any) -> None:
    # HiGHS runs on one process-wide scheduler sized at its first run; a different "threads"
    # option makes run() fail unless the scheduler is reset first.
    if options.threads is not None or "threads" in options.solver_options:
        highspy.Highs.resetGlobalScheduler(True)


def _iterations(info: Any) -> int:
    counts = (
        info.simplex_iteration_count,
        info.ipm_iteration_count,
        info.qp_iteration_count,
        info.pdlp_iteration_count,
    )
    return int(sum(max(0, int(count)) for count in counts))


@contextlib.contextmanager
def _stop_on_ctrl_c(highs: Any, highspy: Any) -> Iterator[None]:
    """Stop a run of HiGHS on Ctrl-C through its interrupt callbacks, then raise it.

    HiGHS runs its solvers in C++; Python's SIGINT handler runs only when HiGHS calls back into
    Python (its log, its interrupt checks), and a ``KeyboardInterrupt`` raised there is caught
    by HiGHS and becomes a "Solve error". So, in the main thread, SIGINT only sets a flag that
    the simplex, IPM, QP and MIP interrupt callbacks hand to HiGHS, which stops; the previous
    handler then gets the signal (Python's default raises ``KeyboardInterrupt``). Elsewhere (a
    worker thread cannot set signal handlers) HiGHS runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []

    def check(event: Any) -> None:
        if pressed:
            event.interrupt()

    kinds = highspy.cb.HighsCallbackType
    for name in (
        "kCallbackSimplexInterrupt",
        "kCallbackIpmInterrupt",
        "kCallbackMipInterrupt",
        "kHighsCallbackQpInterrupt",
    ):
        with contextlib.suppress(AttributeError, IndexError):
            highs.callbacks[int(getattr(kinds, name))].subscribe(check)
    previous = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if pressed:
        if callable(previous):
            previous(signal.SIGINT, None)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt


def _collect_errors(highs: Any, options: SolveOptions) -> list[str]:
    """The ``ERROR:`` lines of HiGHS's log, collected through its logging callback.

    A bare "Solve error" does not say why; HiGHS's log does ("QP solver claims optimality, but
    with ... primal infeasibilities"). Without ``verbose`` the log is kept off the console and
    only read; a user's ``output_flag`` in ``solver_options`` is left as it is.
    """
    errors: list[str] = []
    if not options.verbose and "output_flag" not in options.solver_options:
        highs.setOptionValue("output_flag", True)
        highs.setOptionValue("log_to_console", False)

    def keep(event: Any) -> None:
        line = str(getattr(event, "message", "")).strip()
        if line.startswith("ERROR"):
            errors.append(line.removeprefix("ERROR:").strip())

    with contextlib.suppress(Exception):  # a highspy without callbacks: no log lines
        highs.cbLogging.subscribe(keep)
    return errors


def _log_errors(log: str | None) -> list[str]:
    """The ``ERROR:`` lines of a solver log as text (Pyomo keeps HiGHS's in ``solver_log``)."""
    return [
        line.strip().removeprefix("ERROR:").strip()
        for line in (log or "").splitlines()
        if line.strip().startswith("ERROR")
    ]


def _model_status(highs: Any) -> tuple[Status, str]:
    model_status = highs.getModelStatus()
    return HIGHS_STATUS.get(model_status.name, Status.ERROR), highs.modelStatusToString(
        model_status
    )


def _blocks(handles: dict[str, Any], size: int, statuses: Any) -> NDArray[np.int8] | None:
    """The status array assembled from named blocks, or None unless they cover every entry."""
    out = np.full(size, -1, dtype=np.int8)
    for name, index in handles.items():
        block = statuses.get(name)
        if block is None or np.asarray(out[index]).size != np.asarray(block).size:
            return None
        out[index] = block
    return None if np.any(out < 0) else out


def _set_basis(highs: Any, highspy: Any, formulation: Formulation, start: Basis) -> bool:
    """Give HiGHS the starting basis ``start``; False (cold start) if it does not fit."""
    problem = formulation.problem
    columns = _blocks(formulation.variables, problem.n_variables, start.variables)
    rows = _blocks(formulation.constraints, problem.n_rows, start.constraints)
    if columns is None or rows is None:
        return False
    basis = highspy.HighsBasis()
    status = highspy.HighsBasisStatus
    basis.col_status = [status(int(v)) for v in columns]
    basis.row_status = [status(int(v)) for v in rows]
    basis.valid = True
    return highs.setBasis(basis) != highspy.HighsStatus.kError


def _get_basis(highs: Any, formulation: Formulation) -> Basis | None:
    basis = highs.getBasis()
    if not basis.valid:
        return None
    columns = np.fromiter((int(v) for v in basis.col_status), dtype=np.int8)
    rows = np.fromiter((int(v) for v in basis.row_status), dtype=np.int8)
    return Basis(
        {name: columns[index] for name, index in formulation.variables.items()},
        {name: rows[index] for name, index in formulation.constraints.items()},
    )


def _limit_time(highs: Any, options: SolveOptions, clock: Clock) -> bool:
    """Give HiGHS what is left of the time limit; False when nothing is.

    The time spent building HiGHS's model (and in an earlier run) counts against the limit. A
    ``time_limit`` in ``solver_options`` is the user's and is left alone.
    """
    timed = time_left(options, clock)
    if timed is None:
        return False
    if timed.time_limit is not None and "time_limit" not in options.solver_options:
        highs.setOptionValue("time_limit", float(timed.time_limit))
    return True


@register_backend
class HighsMatrixBackend(Backend):
    """HiGHS through highspy's native model API, on a :class:`~optframe.model.MatrixProblem`."""

    solver: ClassVar[str] = "highs"
    layer: ClassVar[str] = "matrix"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("highspy",)
    warm_starts: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP})

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve in this process, or in a child process with a time limit (see the module notes)."""
        self.check_available()
        return stoppable(
            lambda: self._solve(formulation, options),
            options,
            "HiGHS",
            always=is_large(formulation),  # loading a large model reads no signal
            preload=self.requires,
        )

    def _solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Build the HiGHS model from the CSC arrays, run it and read the solution.

        For an LP, ``options.start`` (if it names every column and row) becomes HiGHS's starting
        basis, and the result carries the final basis.
        """
        self.check_available()
        import highspy

        hide_highs_banner(options.verbose)
        clock = Clock()
        problem: MatrixProblem = formulation.problem
        integer = problem.integrality is not None and bool(np.any(problem.integrality))
        try:
            highs = highspy.Highs()
            for key, value in highs_options(options).items():
                if highs.setOptionValue(key, value) == highspy.HighsStatus.kError:
                    return error_result(f"option {key}={value!r} rejected", clock(), "HiGHS")
            errors = _collect_errors(highs, options)
            if highs.passModel(self._lp(highspy, problem)) == highspy.HighsStatus.kError:
                return error_result("passModel rejected the model", clock(), "HiGHS")
            if integer:
                columns = np.flatnonzero(problem.integrality).astype(np.int32)
                kinds = np.ones(columns.size, dtype=np.uint8)  # HighsVarType.kInteger
                highs.changeColsIntegrality(columns.size, columns, kinds)
            hessian = self._hessian(highspy, problem)
            if hessian is not None and highs.passHessian(hessian) == highspy.HighsStatus.kError:
                return error_result("passHessian rejected P", clock(), "HiGHS")
            lp = formulation.problem_class is ProblemClass.LP and not integer and hessian is None
            if lp and options.start is not None:
                _set_basis(highs, highspy, formulation, options.start)
            _reset_threads(options, highspy)
            if not _limit_time(highs, options, clock):
                return out_of_time(clock, "HiGHS")
            with _stop_on_ctrl_c(highs, highspy):
                highs.run()
            status, text = _model_status(highs)
            if highs.getModelStatus() == highspy.HighsModelStatus.kUnboundedOrInfeasible:
                highs.setOptionValue("presolve", "off")
                if _limit_time(highs, options, clock):
                    with _stop_on_ctrl_c(highs, highspy):
                        highs.run()
                    status, text = _model_status(highs)
            if status is Status.ERROR and errors:
                text = f"{text} ({'; '.join(errors)})"
            result = self._result(highs, formulation, problem, integer, status, text, clock)
            if lp and status is Status.OPTIMAL:
                result = replace(result, basis=_get_basis(highs, formulation))
            return result
        except Exception as exc:  # solver failures are statuses
            return error_result(exc, clock(), "HiGHS")

    @staticmethod
    def _lp(highspy: Any, problem: MatrixProblem) -> Any:
        lp = highspy.HighsLp()
        lp.num_col_ = problem.n_variables
        lp.num_row_ = problem.n_rows
        lp.offset_ = float(problem.offset)
        lp.col_cost_ = problem.c
        lp.col_lower_ = problem.lower
        lp.col_upper_ = problem.upper
        lp.row_lower_ = problem.row_lower
        lp.row_upper_ = problem.row_upper
        matrix = lp.a_matrix_
        matrix.format_ = highspy.MatrixFormat.kColwise
        matrix.num_col_ = problem.n_variables
        matrix.num_row_ = problem.n_rows
        matrix.start_ = problem.A.indptr
        matrix.index_ = problem.A.indices
        matrix.value_ = problem.A.data
        return lp

    @staticmethod
    def _hessian(highspy: Any, problem: MatrixProblem) -> Any:
        import scipy.sparse as sp

        if problem.P is None or not problem.P.nnz:
            return None
        lower = sp.tril(problem.P, format="csc")  # HiGHS stores the lower triangle, column-wise
        lower.sort_indices()
        hessian = highspy.HighsHessian()
        hessian.dim_ = problem.n_variables
        hessian.format_ = highspy.HessianFormat.kTriangular
        hessian.start_ = lower.indptr
        hessian.index_ = lower.indices
        hessian.value_ = lower.data
        return hessian

    @staticmethod
    def _result(
        highs: Any,
        formulation: Formulation,
        problem: MatrixProblem,
        integer: bool,
        status: Status,
        text: str,
        clock: Clock,
    ) -> BackendResult:
        info = highs.getInfo()
        values = objective = bound = None
        solved = status.is_success or status.is_limit
        if solved and (status is Status.OPTIMAL or info.primal_solution_status == _FEASIBLE):
            solution = highs.getSolution()
            x = np.asarray(solution.col_value, dtype=np.float64)
            objective = float(info.objective_function_value)
            if integer:
                values = matrix_raw_solution(formulation, x, None)
            else:
                y = np.asarray(solution.row_dual, dtype=np.float64)
                values = matrix_raw_solution(formulation, x, y if solution.dual_valid else None)
                if solution.dual_valid and info.dual_solution_status == _FEASIBLE:
                    z = np.asarray(solution.col_dual, dtype=np.float64)
                    bound = lagrangian_bound(
                        problem.offset,
                        matrix_quadratic(problem, x),
                        y,
                        problem.row_lower,
                        problem.row_upper,
                        z,
                        problem.lower,
                        problem.upper,
                    )
        if integer:
            bound = finite_or_none(info.mip_dual_bound)
        return BackendResult(
            status=status,
            values=values,
            objective=objective,
            bound=bound,
            iterations=_iterations(info),
            seconds=clock(),
            message=f"HiGHS: {text}",
        )


@register_backend
class HighsCvxpyBackend(Backend):
    """HiGHS through cvxpy's ``HIGHS`` interface."""

    solver: ClassVar[str] = "highs"
    layer: ClassVar[str] = "cvxpy"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("cvxpy", "highspy")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the cvxpy problem with HIGHS; status and bound from HiGHS's raw output."""
        self.check_available()
        import highspy

        hide_highs_banner(options.verbose)  # before cvxpy builds its Highs object
        integer = formulation.problem_class.is_integer

        def read_raw(problem: Any) -> RawOutcome | None:
            # cvxpy's HIGHS interfaces keep (solver, data, results) in the problem's solver cache.
            cached = getattr(problem, "_solver_cache", {}).get("HIGHS")
            if cached is None:
                return None
            highs, _, results = cached
            info = results["info"]
            status = HIGHS_STATUS.get(results["model_status"], Status.ERROR)
            feasible = status is Status.OPTIMAL or info.primal_solution_status == _FEASIBLE
            objective = float(info.objective_function_value) if feasible else None
            if integer:
                bound = finite_or_none(info.mip_dual_bound)
            elif feasible and info.dual_solution_status == _FEASIBLE:
                bound = self._lagrangian(highs, results["solution"], objective)
            else:
                bound = None
            text = highs.modelStatusToString(highs.getModelStatus())
            return RawOutcome(status, objective, bound, text, has_solution=feasible)

        _reset_threads(options, highspy)
        # Nested, so that HiGHS options named like Problem.solve's own arguments ("solver")
        # reach HiGHS (cvxpy unpacks "highs_options" for exactly that).
        return solve_cvxpy(
            formulation,
            options,
            "HIGHS",
            lambda timed: {"highs_options": highs_options(timed)},  # the time compiling left
            read_raw,
            duals=formulation.problem_class in self.duals,
            always=True,  # cvxpy's HiGHS cannot be stopped by Ctrl-C in a MIP
            preload=self.requires,
        )

    @staticmethod
    def _lagrangian(highs: Any, solution: Any, objective: float | None) -> float | None:
        if objective is None:
            return None
        lp = highs.getLp()
        x = np.asarray(solution.col_value, dtype=np.float64)
        c = np.asarray(lp.col_cost_, dtype=np.float64)
        # 0.5 x'Px from HiGHS's own objective value, which includes the offset.
        quadratic = objective - lp.offset_ - float(c @ x)
        return lagrangian_bound(
            lp.offset_,
            quadratic,
            np.asarray(solution.row_dual, dtype=np.float64),
            np.asarray(lp.row_lower_, dtype=np.float64),
            np.asarray(lp.row_upper_, dtype=np.float64),
            np.asarray(solution.col_dual, dtype=np.float64),
            np.asarray(lp.col_lower_, dtype=np.float64),
            np.asarray(lp.col_upper_, dtype=np.float64),
        )


@register_backend
class HighsPyomoBackend(Backend):
    """HiGHS through Pyomo's ``highs`` interface (``pyomo.contrib.solver``), LP/QP/MILP."""

    solver: ClassVar[str] = "highs"
    layer: ClassVar[str] = "pyomo"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("pyomo", "highspy")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the Pyomo model with a fresh ``pyomo.contrib.solver`` HiGHS instance."""
        self.check_available()
        import highspy
        from pyomo.contrib.solver.solvers.highs import Highs

        hide_highs_banner(options.verbose)
        opts = highs_options(options)
        opts.pop("output_flag")  # Pyomo captures HiGHS's log itself and shows it with tee
        # Pyomo ignores HiGHS's refusal of an option; check them on a scratch instance first.
        scratch = highspy.Highs()
        scratch.setOptionValue("output_flag", False)
        for key, value in opts.items():
            if scratch.setOptionValue(key, value) == highspy.HighsStatus.kError:
                return error_result(f"option {key}={value!r} rejected", 0.0, "Pyomo HiGHS")
        _reset_threads(options, highspy)
        return solve_pyomo(
            formulation,
            Highs(),
            options,
            opts,
            "Pyomo HiGHS",
            duals=formulation.problem_class in self.duals,
            always=True,  # Pyomo's HiGHS turns Ctrl-C into an 'unknown' result, and prints
            preload=self.requires,
            iteration_keys=(
                "simplex_iteration_count",
                "ipm_iteration_count",
                "qp_iteration_count",
                "pdlp_iteration_count",
            ),
            explain=lambda results: "; ".join(_log_errors(getattr(results, "solver_log", ""))),
        )
