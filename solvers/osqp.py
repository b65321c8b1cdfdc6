"""OSQP back-ends: the native ``osqp>=1`` API on the matrix layer, and cvxpy's OSQP.

OSQP is a first-order (ADMM) solver for convex LPs and QPs; it never takes integer variables and
it is never the reference solver of a problem class.

Layers, in order of preference:

``matrix``
    :class:`OsqpMatrixBackend` passes ``P`` as its upper triangle (CSC) and the constraints as
    ``l <= [A; I_B] x <= u``, where ``I_B`` holds one identity row for each variable with a finite
    bound (free variables get no row).
``cvxpy``
    :class:`OsqpCvxpyBackend`: cvxpy's ``OSQP`` interface. Without ``tol`` or ``max_iter``, cvxpy's
    defaults apply (``eps_abs = eps_rel = 1e-5``, ``max_iter = 10000``) instead of OSQP's.

Common options (OSQP setting names; ``solver_options`` are applied after them, so they win; the
caller's mapping is never modified):

=============  =============================================================================
``tol``        ``eps_abs`` and ``eps_rel`` (absolute and relative residual tolerances)
``time_limit`` ``time_limit`` (seconds); OSQP reads its clock only between ADMM iterations,
               so under a limit the solve runs in a child process that is killed past the
               limit (its set-up, a factorization of the KKT matrix, can take longer; see
               :func:`optframe.solvers._common.run_stoppable`), then with status ``TIME_LIMIT``
               and no point. A large problem (:data:`~optframe.solvers._common.LARGE_DATA`
               nonzeros) runs in a child without a limit too, so that Ctrl-C stops it
``threads``    ignored: OSQP's built-in linear algebra is single-threaded
``max_iter``   ``max_iter`` (ADMM iterations)
``verbose``    ``verbose``
=============  =============================================================================

Both layers also turn OSQP's solution polishing on (``polishing=True``; cvxpy's interface does the
same): polishing solves the KKT system of the guessed active set, which brings LP/QP solutions to
the accuracy of an active-set method when it succeeds.

Status. OSQP's ``solved`` means its certificate holds: the unscaled primal and dual residuals and
the duality gap are within ``eps_abs + eps_rel * scale``; only then is the status ``OPTIMAL``. If
the settings weaken that certificate (``scaled_termination`` on, or ``check_dualgap`` off),
``solved`` becomes ``CONVERGED``, as does ``solved inaccurate``. At an iteration or time limit the
last ADMM iterate is returned with the limit status (in both layers). OSQP reports ``solved
inaccurate`` only when a limit ended the run and its last iterate meets ten times its tolerances;
when the caller's ``time_limit`` ended it, the status is ``TIME_LIMIT``.

Bound: OSQP's own dual objective at its final iterate (``info.dual_obj_val``, OSQP >= 1), plus the
objective offset; cvxpy's constant is added in the cvxpy layer. It is a lower bound to OSQP's
tolerances only.

Duals. OSQP's multiplier ``y`` enters its Lagrangian as ``+ y'(Ax)`` and is positive when an upper
bound is active, so ``d f*/d (active bound) = -y``: the matrix layer returns ``-y`` for the rows of
``A``. cvxpy's duals are converted by :func:`optframe.solvers._common.cvxpy_dual_sign`.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.registry import register_backend
from optframe.result import Status

from ._common import (
    Clock,
    RawOutcome,
    error_result,
    finite_or_none,
    is_large,
    matrix_raw_solution,
    out_of_time,
    quiet,
    solve_cvxpy,
    stoppable,
    time_left,
    upper_triangle,
)

__all__ = ["OSQP_STATUS", "OsqpCvxpyBackend", "OsqpMatrixBackend"]

#: OSQP status (``osqp.SolverStatus`` member name) -> Status. ``OSQP_SOLVED`` is refined to
#: ``CONVERGED`` when the settings weaken its certificate (see the module docstring).
OSQP_STATUS: dict[str, Status] = {
    "OSQP_SOLVED": Status.OPTIMAL,
    "OSQP_SOLVED_INACCURATE": Status.CONVERGED,
    "OSQP_PRIMAL_INFEASIBLE": Status.INFEASIBLE,
    "OSQP_PRIMAL_INFEASIBLE_INACCURATE": Status.INFEASIBLE,
    "OSQP_DUAL_INFEASIBLE": Status.UNBOUNDED,
    "OSQP_DUAL_INFEASIBLE_INACCURATE": Status.UNBOUNDED,
    "OSQP_MAX_ITER_REACHED": Status.ITERATION_LIMIT,
    "OSQP_TIME_LIMIT_REACHED": Status.TIME_LIMIT,
    "OSQP_NON_CVX": Status.ERROR,
    "OSQP_SIGINT": Status.ERROR,  # never returned: Ctrl-C raises KeyboardInterrupt (_status)
    "OSQP_UNSOLVED": Status.ERROR,
}


def osqp_settings(options: SolveOptions) -> dict[str, Any]:
    """Map ``options`` to OSQP settings (a new dict; ``solver_options`` applied last)."""
    settings: dict[str, Any] = {"verbose": bool(options.verbose), "polishing": True}
    if options.tol is not None:
        settings["eps_abs"] = float(options.tol)
        settings["eps_rel"] = float(options.tol)
    if options.time_limit is not None:
        settings["time_limit"] = float(options.time_limit)
    if options.max_iter is not None:
        settings["max_iter"] = int(options.max_iter)
    settings.update(options.solver_options)
    return settings


def _default_max_iter() -> int:
    """OSQP's own default iteration limit (4000 in OSQP 1)."""
    import osqp

    ext = osqp.OSQP().ext
    defaults = ext.OSQPSettings()
    ext.osqp_set_default_settings(defaults)
    return int(defaults.max_iter)


def _status(info: Any, settings: dict[str, Any]) -> Status:
    import osqp

    name = osqp.SolverStatus(int(info.status_val)).name
    if name == "OSQP_SIGINT":
        # OSQP catches Ctrl-C itself and returns; the user asked to stop, not for a result.
        raise KeyboardInterrupt
    status = OSQP_STATUS.get(name, Status.ERROR)
    # OSQP says "solved inaccurate" only when a limit ended the run and its last iterate meets
    # ten times its tolerances; short of the iteration limit, the time limit did.
    if (
        name == "OSQP_SOLVED_INACCURATE"
        and settings.get("time_limit")
        and int(info.iter) < int(settings.get("max_iter", _default_max_iter()))
    ):
        return Status.TIME_LIMIT
    certified = not settings.get("scaled_termination", False) and settings.get(
        "check_dualgap", True
    )
    if status is Status.OPTIMAL and not certified:
        return Status.CONVERGED
    return status


@register_backend
class OsqpMatrixBackend(Backend):
    """OSQP (>= 1) through its native Python API, on a :class:`~optframe.model.MatrixProblem`."""

    solver: ClassVar[str] = "osqp"
    layer: ClassVar[str] = "matrix"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("osqp",)

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve in this process, or in a child process with a time limit (see the module notes)."""
        self.check_available()
        return stoppable(
            lambda: self._solve(formulation, options),
            options,
            "OSQP",
            always=is_large(formulation),  # a long first factorization reads no signal
            preload=self.requires,
        )

    def _solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Set up ``l <= [A; I_B] x <= u`` with the upper triangle of ``P`` and run ADMM."""
        self.check_available()
        import osqp

        clock = Clock()
        problem: MatrixProblem = formulation.problem
        n, m = problem.n_variables, problem.n_rows
        bounded = np.flatnonzero(np.isfinite(problem.lower) | np.isfinite(problem.upper))
        identity = sp.csc_matrix(
            (np.ones(bounded.size), (np.arange(bounded.size), bounded)), shape=(bounded.size, n)
        )
        A = sp.csc_matrix(sp.vstack([problem.A, identity], format="csc"))
        A.sort_indices()
        lower = np.concatenate([problem.row_lower, problem.lower[bounded]])
        upper = np.concatenate([problem.row_upper, problem.upper[bounded]])
        timed = time_left(options, clock)
        if timed is None:
            return out_of_time(clock, "OSQP")
        settings = osqp_settings(timed)
        try:
            with quiet(options.verbose):
                solver = osqp.OSQP()
                solver.setup(
                    upper_triangle(problem.P, n), problem.c, A, lower, upper, **dict(settings)
                )
                results = solver.solve(raise_error=False)
        except Exception as exc:  # solver failures are statuses
            return error_result(exc, clock(), "OSQP")
        info = results.info
        status = _status(info, settings)
        values = objective = bound = None
        if status.is_success or status.is_limit:
            x = np.array(results.x, dtype=np.float64)
            y = -np.asarray(results.y, dtype=np.float64)[:m]
            values = matrix_raw_solution(formulation, x, y)
            objective = finite_or_none(info.obj_val + problem.offset)
            bound = finite_or_none(info.dual_obj_val + problem.offset)
        return BackendResult(
            status=status,
            values=values,
            objective=objective,
            bound=bound,
            iterations=int(info.iter),
            seconds=clock(),
            message=f"OSQP: {info.status}",
        )


@register_backend
class OsqpCvxpyBackend(Backend):
    """OSQP through cvxpy's ``OSQP`` interface."""

    solver: ClassVar[str] = "osqp"
    layer: ClassVar[str] = "cvxpy"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("cvxpy", "osqp")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the cvxpy problem with OSQP; status and bound from OSQP's own info."""
        self.check_available()
        settings = osqp_settings(options)

        def read_raw(problem: Any) -> RawOutcome | None:
            raw = problem.solver_stats.extra_stats if problem.solver_stats else None
            info = getattr(raw, "info", None)
            if info is None:
                # cvxpy raises SolverError for OSQP's SIGINT and keeps no stats then; its
                # solver cache still holds OSQP's results (_status raises KeyboardInterrupt)
                cached = getattr(problem, "_solver_cache", {}).get("OSQP")
                info = getattr(cached[2], "info", None) if cached is not None else None
            if info is None:
                return None
            return RawOutcome(
                _status(info, settings),
                finite_or_none(info.obj_val),
                finite_or_none(info.dual_obj_val),
                str(info.status),
            )

        def cvxpy_settings(timed: SolveOptions) -> dict[str, Any]:
            # time_limit: what cvxpy's compilation left; cvxpy passes its own verbose flag
            chosen = dict(osqp_settings(timed))
            del chosen["verbose"]
            return chosen

        return solve_cvxpy(
            formulation,
            options,
            "OSQP",
            cvxpy_settings,
            read_raw,
            duals=formulation.problem_class in self.duals,
            always=is_large(formulation),
            preload=self.requires,
        )
