"""Clarabel back-ends: the native API on the matrix layer, and cvxpy's CLARABEL.

Clarabel is an interior-point solver for convex conic programs with quadratic objectives; it is
the reference solver for QPs. It takes no integer variables.

Layers, in order of preference:

``matrix``
    :class:`ClarabelMatrixBackend` writes ``r_l <= A x <= r_u`` and ``l <= x <= u`` as Clarabel's
    ``A_c x + s = b, s in K``: equality rows (``r_l == r_u``) go to a ``ZeroConeT`` block
    (``a'x + s = r``), every finite upper side to a ``NonnegativeConeT`` row ``a'x + s = r_u`` and
    every finite lower side to ``-a'x + s = -r_l`` (variable bounds likewise with unit rows);
    infinite sides give no row. ``P`` is passed as its upper triangle (CSC).
``cvxpy``
    :class:`ClarabelCvxpyBackend`: cvxpy's ``CLARABEL`` interface.

Common options (Clarabel setting names; ``solver_options`` are applied after them, so they win):

=============  =============================================================================
``tol``        ``tol_feas``, ``tol_gap_abs`` and ``tol_gap_rel``
``time_limit`` ``time_limit`` (seconds); under a limit the solve runs in a child process that
               is killed past it (Clarabel's first factorization of a large KKT matrix, or
               cvxpy's compilation, comes before it reads its clock; see
               :func:`optframe.solvers._common.run_stoppable`), then with status
               ``TIME_LIMIT`` and no point. A large problem
               (:data:`~optframe.solvers._common.LARGE_DATA` nonzeros) runs in a child without
               a limit too, so that Ctrl-C stops it during that factorization
``threads``    ``max_threads``
``max_iter``   ``max_iter`` (interior-point iterations)
``verbose``    ``verbose``
=============  =============================================================================

A ``solver_options`` name that is not a Clarabel setting gives a result with status ERROR whose
message names it (cvxpy's own check says the same in the cvxpy layer).

Bound: Clarabel's dual objective ``obj_val_dual`` plus the objective offset (the cvxpy layer reads
it from the solver cvxpy keeps in the problem's solver cache and adds cvxpy's constant).

Duals. Clarabel's ``z`` (in the dual cone) enters its Lagrangian as ``+ z'(A_c x - b)``, so for a
row ``a'x + s = b`` the sensitivity is ``d f*/d b = -z``. The matrix layer therefore returns, per
row of ``A``, ``-z`` of its equality or upper-side row plus ``+z`` of its lower-side row (the
lower-side row's ``b`` is ``-r_l``). cvxpy's duals are converted by
:func:`optframe.solvers._common.cvxpy_dual_sign`.

At an iteration or time limit the last interior-point iterate is returned (matrix layer; cvxpy
returns it too) with the limit status; ``AlmostSolved`` (Clarabel's reduced tolerances) is
``CONVERGED``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.registry import register_backend
from optframe.result import Status

from . import _common
from ._common import (
    Clock,
    RawOutcome,
    error_result,
    finite_or_none,
    is_large,
    matrix_raw_solution,
    out_of_time,
    solve_cvxpy,
    stoppable,
    time_left,
    upper_triangle,
)

__all__ = ["CLARABEL_STATUS", "ClarabelCvxpyBackend", "ClarabelMatrixBackend"]

#: Clarabel status (``clarabel.SolverStatus`` as a string) -> Status.
CLARABEL_STATUS: dict[str, Status] = {
    "Solved": Status.OPTIMAL,
    "AlmostSolved": Status.CONVERGED,
    "PrimalInfeasible": Status.INFEASIBLE,
    "AlmostPrimalInfeasible": Status.INFEASIBLE,
    "DualInfeasible": Status.UNBOUNDED,
    "AlmostDualInfeasible": Status.UNBOUNDED,
    "MaxIterations": Status.ITERATION_LIMIT,
    "MaxTime": Status.TIME_LIMIT,
    "NumericalError": Status.ERROR,
    "InsufficientProgress": Status.ERROR,
    "CallbackTerminated": Status.ERROR,
    "Unsolved": Status.ERROR,
}


# Through cvxpy too (see clarabel_settings): one thread in a forked child.
_common.CHILD_SETTINGS["CLARABEL"] = {"max_threads": 1}


def clarabel_settings(options: SolveOptions) -> dict[str, Any]:
    """Map ``options`` to Clarabel settings (a new dict; ``solver_options`` applied last)."""
    settings: dict[str, Any] = {"verbose": bool(options.verbose)}
    if options.tol is not None:
        for key in ("tol_feas", "tol_gap_abs", "tol_gap_rel"):
            settings[key] = float(options.tol)
    if options.time_limit is not None:
        settings["time_limit"] = float(options.time_limit)
    if options.threads is not None:
        settings["max_threads"] = int(options.threads)
    if options.max_iter is not None:
        settings["max_iter"] = int(options.max_iter)
    settings.update(options.solver_options)
    if _common.in_child:
        # a child forked after this process ran Clarabel in parallel waited forever for the
        # parent's thread pool, which the child does not have (a QP after a dense 1,500-variable
        # one: stopped at its time limit); on one thread Clarabel uses no pool
        settings["max_threads"] = 1
    return settings


def _status(solution: Any) -> tuple[Status, str]:
    text = str(solution.status)
    return CLARABEL_STATUS.get(text, Status.ERROR), text


def _unit_rows(columns: np.ndarray, n: int, sign: float) -> sp.csr_matrix:
    data = np.full(columns.size, sign)
    return sp.csr_matrix((data, (np.arange(columns.size), columns)), shape=(columns.size, n))


@register_backend
class ClarabelMatrixBackend(Backend):
    """Clarabel through its native Python API, on a :class:`~optframe.model.MatrixProblem`."""

    solver: ClassVar[str] = "clarabel"
    layer: ClassVar[str] = "matrix"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("clarabel",)

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve in this process, or in a child process with a time limit (see the module notes)."""
        self.check_available()
        return stoppable(
            lambda: self._solve(formulation, options),
            options,
            "Clarabel",
            always=is_large(formulation),  # a long first factorization reads no signal
            preload=self.requires,
        )

    def _solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Convert the bounds to zero and nonnegative cones, solve, and map ``z`` to row duals."""
        self.check_available()
        import clarabel

        clock = Clock()
        problem: MatrixProblem = formulation.problem
        n, m = problem.n_variables, problem.n_rows
        rl, ru = problem.row_lower, problem.row_upper
        equal = np.flatnonzero(rl == ru)
        upper_rows = np.flatnonzero(np.isfinite(ru) & (rl != ru))
        lower_rows = np.flatnonzero(np.isfinite(rl) & (rl != ru))
        upper_cols = np.flatnonzero(np.isfinite(problem.upper))
        lower_cols = np.flatnonzero(np.isfinite(problem.lower))
        A = sp.csr_matrix(problem.A)
        A_c = sp.csc_matrix(
            sp.vstack(
                [
                    A[equal],
                    A[upper_rows],
                    -A[lower_rows],
                    _unit_rows(upper_cols, n, 1.0),
                    _unit_rows(lower_cols, n, -1.0),
                ],
                format="csc",
            )
        )
        A_c.sort_indices()
        b = np.concatenate(
            [
                ru[equal],
                ru[upper_rows],
                -rl[lower_rows],
                problem.upper[upper_cols],
                -problem.lower[lower_cols],
            ]
        )
        cones = [clarabel.ZeroConeT(equal.size), clarabel.NonnegativeConeT(b.size - equal.size)]
        timed = time_left(options, clock)
        if timed is None:
            return out_of_time(clock, "Clarabel")
        try:
            settings = clarabel.DefaultSettings()
            chosen = clarabel_settings(timed)
            unknown = sorted(str(key) for key in chosen if not hasattr(settings, key))
            if unknown:
                return error_result(
                    f"unknown Clarabel setting(s) {unknown} in solver_options (Clarabel's "
                    "settings are the attributes of clarabel.DefaultSettings(), such as "
                    "'max_iter', 'time_limit', 'tol_gap_rel')",
                    clock(),
                    "Clarabel",
                )
            for key, value in chosen.items():
                setattr(settings, key, value)
            solver = clarabel.DefaultSolver(
                upper_triangle(problem.P, n), problem.c, A_c, b, cones, settings
            )
            solution = solver.solve()
        except Exception as exc:  # solver failures are statuses
            return error_result(exc, clock(), "Clarabel")
        status, text = _status(solution)
        values = objective = bound = None
        if status.is_success or status.is_limit:
            x = np.array(solution.x, dtype=np.float64)
            z = np.asarray(solution.z, dtype=np.float64)
            k_eq, k_up, k_lo = equal.size, upper_rows.size, lower_rows.size
            y = np.zeros(m)
            y[equal] = -z[:k_eq]
            y[upper_rows] -= z[k_eq : k_eq + k_up]
            y[lower_rows] += z[k_eq + k_up : k_eq + k_up + k_lo]
            values = matrix_raw_solution(formulation, x, y)
            objective = finite_or_none(solution.obj_val + problem.offset)
            bound = finite_or_none(solution.obj_val_dual + problem.offset)
        return BackendResult(
            status=status,
            values=values,
            objective=objective,
            bound=bound,
            iterations=int(solution.iterations),
            seconds=clock(),
            message=f"Clarabel: {text}",
        )


@register_backend
class ClarabelCvxpyBackend(Backend):
    """Clarabel through cvxpy's ``CLARABEL`` interface."""

    solver: ClassVar[str] = "clarabel"
    layer: ClassVar[str] = "cvxpy"
    # EXP and SOCP: cvxpy hands Clarabel its exponential and second-order cones (cvxpy's SCIP
    # interface takes the second-order ones only)
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.EXP, ProblemClass.SOCP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.EXP, ProblemClass.SOCP}
    )
    requires: ClassVar[tuple[str, ...]] = ("cvxpy", "clarabel")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the cvxpy problem with CLARABEL; status and bound from Clarabel's solution."""
        self.check_available()

        def read_raw(problem: Any) -> RawOutcome | None:
            # cvxpy's CLARABEL interface keeps the solver object in the problem's solver cache.
            solver = getattr(problem, "_solver_cache", {}).get("CLARABEL")
            if solver is None:
                return None
            solution = solver.get_solution()
            status, text = _status(solution)
            return RawOutcome(
                status,
                finite_or_none(solution.obj_val),
                finite_or_none(solution.obj_val_dual),
                text,
            )

        def settings(timed: SolveOptions) -> dict[str, Any]:
            # time_limit: what cvxpy's compilation left; cvxpy passes its own verbose flag
            chosen = clarabel_settings(timed)
            del chosen["verbose"]
            return chosen

        return solve_cvxpy(
            formulation,
            options,
            "CLARABEL",
            settings,
            read_raw,
            duals=formulation.problem_class in self.duals,
            always=is_large(formulation),
            preload=self.requires,
            conic=lambda output: (output.x, output.z),  # Clarabel's z is in the dual cone
        )
