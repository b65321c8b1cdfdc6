"""PIQP back-ends: the native API on the matrix layer, and cvxpy's PIQP.

PIQP is a proximal interior-point solver for convex LPs and QPs (an infeasible interior-point
method combined with the proximal method of multipliers, so it needs no linear independence of
the constraints). It takes no integer variables and it is never the reference solver of a problem
class (``auto`` picks Clarabel for QPs).

Layers, in order of preference:

``matrix``
    :class:`PiqpMatrixBackend` passes the problem to PIQP as ``min 1/2 x'Px + c'x`` subject to
    ``A_e x = b`` (the rows with ``r_l == r_u``), ``h_l <= G x <= h_u`` (every other row with a
    finite side; an infinite side stays infinite) and ``x_l <= x <= x_u`` (the variable bounds as
    they are). Rows with no finite side are left out (PIQP's documentation advises it) and get a
    zero dual. ``P`` is passed as its upper triangle, which is all PIQP reads. The solver is
    ``piqp.SparseSolver``, or ``piqp.DenseSolver`` (dense Cholesky of the KKT system) when ``P``
    fills at least :data:`DENSE_FILL` of its square and ``A`` has no more rows than columns: a
    kernel dual's Hessian is dense, and PIQP's dense solver is then many times faster than its
    sparse LDL' (1605-sample RBF dual of ``a1a``: 0.9 s against 20 s). ``solver_options``
    ``backend="dense"`` or ``"sparse"`` (cvxpy's name for the same choice) decides instead, and
    so does a ``kkt_solver`` (``dense_cholesky`` is the dense solver's only one); a ``backend``
    and a ``kkt_solver`` that do not go together give an ERROR result. The message says which
    solver ran.
``cvxpy``
    :class:`PiqpCvxpyBackend`: cvxpy's ``PIQP`` interface, with cvxpy's default sparse solver
    unless ``solver_options`` say ``backend="dense"``.

Common options (PIQP setting names; ``solver_options`` are applied after them, so they win):

=============  =============================================================================
``tol``        ``eps_abs``, ``eps_rel``, ``eps_duality_gap_abs`` and ``eps_duality_gap_rel``
``time_limit`` enforced by optframe from outside (see below): PIQP has none
``threads``    ``num_threads``, which only PIQP's ``sparse_multistage_parallel`` KKT solver
               uses: the default sparse LDL' factorization is single-threaded
``max_iter``   ``max_iter`` (interior-point iterations; PIQP's default is 250)
``verbose``    ``verbose``
=============  =============================================================================

A ``solver_options`` name that is not an attribute of ``piqp.Settings`` gives a result with status
ERROR whose message names it (cvxpy's own check says the same in the cvxpy layer). ``kkt_solver``
may be given by name (``"sparse_ldlt"``) as well as a ``piqp.KKTSolver``.

Time limit and Ctrl-C. PIQP has no time limit and no callback, and a call to its ``solve``
cannot be stopped from Python (it never returns to the interpreter, so Ctrl-C waits for its
end). Both layers therefore run the whole solve in a forked child process
(:func:`optframe.solvers._common.run_stoppable`): Ctrl-C raises ``KeyboardInterrupt`` at once
(the child is killed), and a child still running at ``time_limit * 1.05 + 0.25`` seconds is
killed and the status is ``TIME_LIMIT`` without a point. Inside the child the matrix layer also
checks the clock after building PIQP's data and after PIQP's ``setup`` and returns ``TIME_LIMIT``
without solving when the limit has passed. A solve that ends at PIQP's iteration limit after the
time limit has passed is ``TIME_LIMIT`` (the last iterate is returned); a solve that finished
(solved, infeasible, unbounded) within the margin keeps its status, and the message says by how
much it overran.

Status. PIQP's ``PIQP_SOLVED`` means its residuals and its duality gap are within the tolerances
(``eps_abs`` or ``eps_rel``, and ``eps_duality_gap_abs`` or ``eps_duality_gap_rel``); only then is
the status ``OPTIMAL``. With ``check_duality_gap`` off, ``PIQP_SOLVED`` becomes ``CONVERGED``.

Bound: PIQP's dual objective at its final iterate (``info.dual_obj``) plus the objective offset;
cvxpy's constant is added in the cvxpy layer. It is a lower bound to PIQP's tolerances only.

Duals. PIQP's Lagrangian is ``f(x) + y'(A_e x - b) + z_l'(h_l - G x) + z_u'(G x - h_u)`` with
``z_l, z_u >= 0``, so ``d f*/d b = -y`` for an equality row and ``z_l - z_u`` for an inequality
row (positive when its lower side is active, negative for its upper side): the matrix layer
returns those per row of ``A``. cvxpy's duals are converted by
:func:`optframe.solvers._common.cvxpy_dual_sign`.
"""

from __future__ import annotations

from dataclasses import replace
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
    matrix_raw_solution,
    out_of_time,
    solve_cvxpy,
    stoppable,
    time_left,
    upper_triangle,
)

__all__ = ["PIQP_STATUS", "PiqpCvxpyBackend", "PiqpMatrixBackend", "piqp_settings"]

#: PIQP status (``piqp.Status`` member name) -> Status. ``PIQP_SOLVED`` is refined to
#: ``CONVERGED`` without the duality-gap check, and ``PIQP_MAX_ITER_REACHED`` to ``TIME_LIMIT``
#: past the time limit (see the module docstring).
PIQP_STATUS: dict[str, Status] = {
    "PIQP_SOLVED": Status.OPTIMAL,
    "PIQP_MAX_ITER_REACHED": Status.ITERATION_LIMIT,
    "PIQP_PRIMAL_INFEASIBLE": Status.INFEASIBLE,
    "PIQP_DUAL_INFEASIBLE": Status.UNBOUNDED,
    "PIQP_NUMERICS": Status.ERROR,
    "PIQP_UNSOLVED": Status.ERROR,
    "PIQP_INVALID_SETTINGS": Status.ERROR,
}


#: The fraction of ``P``'s entries from which the matrix layer uses PIQP's dense solver.
DENSE_FILL = 0.25


def piqp_settings(options: SolveOptions) -> dict[str, Any]:
    """Map ``options`` to PIQP settings (a new dict; ``solver_options`` applied last)."""
    settings: dict[str, Any] = {"verbose": bool(options.verbose)}
    if options.tol is not None:
        for key in ("eps_abs", "eps_rel", "eps_duality_gap_abs", "eps_duality_gap_rel"):
            settings[key] = float(options.tol)
    if options.threads is not None:
        settings["num_threads"] = int(options.threads)
    if options.max_iter is not None:
        settings["max_iter"] = int(options.max_iter)
    settings.update(options.solver_options)
    return settings


def _unknown(settings: dict[str, Any], known: Any) -> str | None:
    """The ERROR message for names in ``settings`` that ``known`` (PIQP's settings) lacks."""
    unknown = sorted(str(key) for key in settings if not hasattr(known, str(key)))
    if not unknown:
        return None
    return (
        f"unknown PIQP setting(s) {unknown} in solver_options (PIQP's settings are the "
        "attributes of piqp.Settings, such as 'max_iter', 'eps_abs', 'eps_rel', "
        "'eps_duality_gap_rel', 'check_duality_gap', 'kkt_solver')"
    )


def _resolved(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` with a ``kkt_solver`` given by name turned into PIQP's enum member."""
    solver = settings.get("kkt_solver")
    if isinstance(solver, str):
        import piqp

        return {**settings, "kkt_solver": piqp.KKTSolver.__members__[solver]}
    return settings


def _dense_or_sparse(problem: MatrixProblem) -> str:
    """``"dense"`` when ``P`` fills DENSE_FILL of its square and ``A`` has at most N rows."""
    n = problem.n_variables
    P = problem.P
    full = P is not None and n > 0 and P.nnz >= DENSE_FILL * n * n
    return "dense" if full and problem.n_rows <= n else "sparse"


def _solver_kind(settings: dict[str, Any], problem: MatrixProblem) -> tuple[str, str]:
    """PIQP's solver for ``problem`` (``"dense"`` or ``"sparse"``), and why the choice is invalid.

    Pops ``backend`` from ``settings``. A ``kkt_solver`` decides when ``backend`` is not given
    (``dense_cholesky`` is the dense solver's only one); otherwise :func:`_dense_or_sparse`.
    """
    kind = settings.pop("backend", None)
    kkt = settings.get("kkt_solver")
    kkt_name = None if kkt is None else str(getattr(kkt, "name", kkt))
    if kind is None:
        if kkt_name is None:
            kind = _dense_or_sparse(problem)
        else:
            kind = "dense" if kkt_name == "dense_cholesky" else "sparse"
    if kind not in ("dense", "sparse"):
        return str(kind), f"solver_options backend={kind!r}: PIQP's back-end is 'dense' or 'sparse'"
    if kkt_name is not None and (kkt_name == "dense_cholesky") != (kind == "dense"):
        return kind, (
            f"kkt_solver {kkt_name!r} does not go with PIQP's {kind} solver (the dense solver "
            "takes 'dense_cholesky' only)"
        )
    return kind, ""


def _status(info: Any, settings: dict[str, Any]) -> tuple[Status, str]:
    text = str(getattr(info.status, "name", info.status))
    status = PIQP_STATUS.get(text, Status.ERROR)
    if status is Status.OPTIMAL and not settings.get("check_duality_gap", True):
        status = Status.CONVERGED
    return status, text


def _deadline(result: BackendResult, options: SolveOptions) -> BackendResult:
    """Account for a time limit PIQP could not enforce (see the module docstring)."""
    limit = options.time_limit
    if limit is None or result.seconds <= limit:
        return result
    note = (
        f" after {result.seconds:.3g} s, past the time limit of {limit:.3g} s "
        "(PIQP has no time limit of its own)"
    )
    status = Status.TIME_LIMIT if result.status is Status.ITERATION_LIMIT else result.status
    return replace(result, status=status, message=result.message + note)


@register_backend
class PiqpMatrixBackend(Backend):
    """PIQP through its native Python API (``piqp.SparseSolver``), on a MatrixProblem."""

    solver: ClassVar[str] = "piqp"
    layer: ClassVar[str] = "matrix"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("piqp",)

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve in a child process that Ctrl-C and the time limit stop (see the module notes)."""
        self.check_available()
        return stoppable(
            lambda: self._solve(formulation, options),
            options,
            "PIQP",
            always=True,
            preload=self.requires,
        )

    def _solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Split the rows into equalities and ranged inequalities, solve, and map the duals."""
        self.check_available()
        import piqp

        clock = Clock()
        problem: MatrixProblem = formulation.problem
        n, m = problem.n_variables, problem.n_rows
        rl, ru = problem.row_lower, problem.row_upper
        equal = np.flatnonzero((rl == ru) & np.isfinite(ru))
        ranged = np.flatnonzero((rl != ru) & (np.isfinite(rl) | np.isfinite(ru)))
        A = sp.csr_matrix(problem.A)

        settings = piqp_settings(options)
        kind, mismatch = _solver_kind(settings, problem)
        if mismatch:
            return error_result(mismatch, clock(), "PIQP")
        dense = kind == "dense"

        def block(rows: np.ndarray) -> Any:
            out = sp.csc_matrix(A[rows])
            out.sort_indices()
            return np.asfortranarray(out.toarray()) if dense else out

        P = upper_triangle(problem.P, n)
        if time_left(options, clock) is None:
            return out_of_time(clock, "PIQP")
        try:
            solver = piqp.DenseSolver() if dense else piqp.SparseSolver()
            if message := _unknown(settings, solver.settings):
                return error_result(message, clock(), "PIQP")
            for key, value in _resolved(settings).items():
                setattr(solver.settings, key, value)
            solver.setup(
                np.asfortranarray(P.toarray()) if dense else P,
                np.asarray(problem.c, dtype=np.float64),
                block(equal),
                ru[equal],
                block(ranged),
                rl[ranged],
                ru[ranged],
                problem.lower,
                problem.upper,
            )
            if time_left(options, clock) is None:
                return out_of_time(clock, "PIQP")
            solver.solve()
            result = solver.result
        except Exception as exc:  # solver failures are statuses
            return error_result(exc, clock(), "PIQP")
        info = result.info
        status, text = _status(info, settings)
        values = objective = bound = None
        if status.is_success or status.is_limit:
            x = np.array(result.x, dtype=np.float64)
            y = np.zeros(m)
            y[equal] = -np.asarray(result.y, dtype=np.float64)
            y[ranged] = np.asarray(result.z_l, dtype=np.float64) - np.asarray(
                result.z_u, dtype=np.float64
            )
            values = matrix_raw_solution(formulation, x, y)
            objective = finite_or_none(info.primal_obj + problem.offset)
            bound = finite_or_none(info.dual_obj + problem.offset)
        outcome = BackendResult(
            status=status,
            values=values,
            objective=objective,
            bound=bound,
            iterations=int(info.iter),
            seconds=clock(),
            message=f"PIQP: {text} ({kind})",
        )
        return _deadline(outcome, options)


@register_backend
class PiqpCvxpyBackend(Backend):
    """PIQP through cvxpy's ``PIQP`` interface."""

    solver: ClassVar[str] = "piqp"
    layer: ClassVar[str] = "cvxpy"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP, ProblemClass.QP})
    requires: ClassVar[tuple[str, ...]] = ("cvxpy", "piqp")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the cvxpy problem with PIQP; status and bound from PIQP's own result."""
        self.check_available()
        settings = piqp_settings(options)

        def read_raw(problem: Any) -> RawOutcome | None:
            # cvxpy's PIQP interface caches (solver, data, result) in the problem's solver cache
            # and also hands the result over as its extra stats.
            cached = getattr(problem, "_solver_cache", {}).get("PIQP")
            result = cached[2] if cached is not None else None
            if result is None and problem.solver_stats is not None:
                result = (problem.solver_stats.extra_stats or {}).get("solution")
            if result is None:
                return None
            info = result.info
            status, text = _status(info, settings)
            return RawOutcome(
                status, finite_or_none(info.primal_obj), finite_or_none(info.dual_obj), text
            )

        cvxpy_settings = dict(_resolved(settings))
        del cvxpy_settings["verbose"]  # cvxpy passes its own verbose flag
        outcome = solve_cvxpy(
            formulation,
            options,
            "PIQP",
            cvxpy_settings,
            read_raw,
            duals=formulation.problem_class in self.duals,
            preload=self.requires,
            always=True,
        )
        return _deadline(outcome, options)
