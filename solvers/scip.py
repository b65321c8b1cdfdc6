"""SCIP back-ends: pyscipopt on the matrix layer, Pyomo's ``scip_direct``, and cvxpy's SCIP.

SCIP is the reference solver for MIQPs (HiGHS cannot solve them). It reports a proven dual bound
for every problem it solves.

Layers, in order of preference (all four problem classes in each; duals as noted):

``matrix``
    :class:`ScipMatrixBackend` builds the model with pyscipopt: one variable per column, one
    linear constraint per nonempty row, and, for a quadratic objective, an auxiliary variable
    ``t >= c'x + x'Px/2`` to minimize (SCIP's objective must be linear). It comes first: it
    skips any expression walker and returns LP duals. For an LP, presolve, heuristics and
    propagation are switched off so that ``getDualsolLinear`` returns the LP's duals.
``pyomo``
    :class:`ScipPyomoBackend`: the ``scip_direct`` interface of ``pyomo.contrib.solver``, new in
    Pyomo 6.10.1 and backed by pyscipopt. It moves the objective into a constraint on an auxiliary
    variable, and its solution loader has no ``get_duals``: this layer returns no duals.
``cvxpy``
    :class:`ScipCvxpyBackend`: cvxpy's conic ``SCIP`` interface. cvxpy accepts quadratic objectives
    for SCIP, with or without integer variables (it rewrites them as second-order cones), so MIQP
    works; it computes duals only for LPs (never with cones).

Duals (the ``duals`` attribute of each class). Only LP duals are reliable: a quadratic objective is
a nonlinear constraint inside SCIP, whose LP relaxation's multipliers are not the QP's. So QP
solves return ``dual == {}`` in every layer, and LP solves return duals in the matrix and cvxpy
layers only. pyscipopt's ``getDualsolLinear`` already is ``d f*/d (active side)`` for a
minimization; cvxpy's duals are converted by :func:`optframe.solvers._common.cvxpy_dual_sign`.

Accuracy on QPs: SCIP meets ``t >= f(x)`` to its feasibility tolerance, so the objective is
accurate to about ``numerics/feastol`` but ``x`` only to about its square root (``1e-4`` for
``tol=1e-7``); Clarabel is the QP reference.

Common options (SCIP parameter names; ``solver_options`` are set after them, so they win):

=============  =============================================================================
``tol``        ``limits/gap`` (relative MIP gap), ``numerics/feastol`` and
               ``numerics/dualfeastol``
``time_limit`` ``limits/time`` (seconds), and a child process (below)
``threads``    ``lp/threads`` (threads of the LP solver; SCIP's tree search is sequential)
``max_iter``   ``limits/totalnodes`` (branch-and-bound nodes, as SCIP counts them)
``verbose``    SCIP's log (``hideOutput``; ``tee`` in Pyomo; cvxpy's ``verbose``)
=============  =============================================================================

A ``solver_options`` name that is not a SCIP parameter gives a result with status ERROR whose
message names it (and the parameter it is closest to), in every layer; cvxpy's ``scip_params``
mapping is checked the same way.

Bound: SCIP's dual bound (``Model.getDualbound``, Pyomo's ``objective_bound``), in every layer,
for integer and continuous problems; cvxpy's constant is added in the cvxpy layer. SCIP proves it
only up to its feasibility tolerance (a quadratic objective becomes a constraint
``t >= x'Px/2``, met to ``numerics/feastol``): optframe's certificate sweep found S3VM bounds
above the true optimum by up to 3.9e-6 at the default 1e-6. The bound reported is therefore
lowered by ``BOUND_SLACK * feastol * max(1, |bound|)``; for continuous problems optframe's own
certificate replaces it anyway.

Ctrl-C and the time limit. SCIP catches SIGINT itself and reads its clock only between the
steps of its solve; on a convex QP it spends seconds in one step, the presolve of the nonlinear
constraint that holds the objective (``t >= c'x + x'Px/2``): on the RBF L2-SVM dual of 300 points
(45,000 quadratic terms) the ``nonlinear`` presolver took 6.05 s of a 6.22 s run with
``limits/time = 5``, whatever ``presolving/maxrounds``, ``constraints/nonlinear/maxprerounds`` or
the nonlinear handlers were set to, and a Ctrl-C waited as long (then ended as
``userinterrupt``). So every layer runs the solve in a forked child process
(:func:`optframe.solvers._common.run_stoppable`): Ctrl-C raises ``KeyboardInterrupt`` at once
(the child is killed), and a child still running at ``time_limit * 1.05 + 0.25`` seconds is
killed and the status is ``TIME_LIMIT`` without a point. SCIP's own ``limits/time`` normally
stops it first, with its best solution. A ``userinterrupt`` status (SCIP caught Ctrl-C in this
process) raises ``KeyboardInterrupt``.

At a limit SCIP's best solution, if it has one, is returned with the limit status (in the cvxpy
layer too: cvxpy keeps SCIP's incumbent). Without one, cvxpy calls the time limit a solver error
and raises; its raw output, kept by the cvxpy layer, still says ``timelimit``: ``TIME_LIMIT``
without a point, never ERROR. SCIP's "gap limit" is reached only when the gap is
within ``limits/gap``, so it counts as ``OPTIMAL``; "infeasible or unbounded" is ``UNBOUNDED``.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.c_output import silenced_c_stdout
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.registry import register_backend
from optframe.result import Status

from ._common import (
    Clock,
    RawOutcome,
    error_result,
    matrix_raw_solution,
    out_of_time,
    solve_cvxpy,
    solve_pyomo,
    stoppable,
    time_left,
)

__all__ = ["SCIP_STATUS", "ScipCvxpyBackend", "ScipMatrixBackend", "ScipPyomoBackend"]

#: SCIP status (``Model.getStatus()``) -> Status.
SCIP_STATUS: dict[str, Status] = {
    "optimal": Status.OPTIMAL,
    "gaplimit": Status.OPTIMAL,
    "infeasible": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "inforunbd": Status.UNBOUNDED,
    "timelimit": Status.TIME_LIMIT,
    # Node, solution, restart and objective limits: limits as SCIP counts them.
    "nodelimit": Status.ITERATION_LIMIT,
    "totalnodelimit": Status.ITERATION_LIMIT,
    "stallnodelimit": Status.ITERATION_LIMIT,
    "sollimit": Status.ITERATION_LIMIT,
    "bestsollimit": Status.ITERATION_LIMIT,
    "restartlimit": Status.ITERATION_LIMIT,
    "primallimit": Status.ITERATION_LIMIT,
    "duallimit": Status.ITERATION_LIMIT,
    "memlimit": Status.ERROR,
    "userinterrupt": Status.ERROR,
    "terminate": Status.ERROR,
    "unknown": Status.ERROR,
}


def scip_params(options: SolveOptions) -> dict[str, Any]:
    """Map ``options`` to SCIP parameters (a new dict; ``solver_options`` applied last)."""
    params: dict[str, Any] = {}
    if options.tol is not None:
        params["limits/gap"] = float(options.tol)
        params["numerics/feastol"] = float(options.tol)
        params["numerics/dualfeastol"] = float(options.tol)
    if options.time_limit is not None:
        params["limits/time"] = float(options.time_limit)
    if options.threads is not None:
        params["lp/threads"] = int(options.threads)
    if options.max_iter is not None:
        params["limits/totalnodes"] = int(options.max_iter)
    params.update(options.solver_options)
    return params


def unknown_params(options: SolveOptions, nested: str | None = None) -> str | None:
    """A message naming the ``solver_options`` that are not SCIP parameters, or ``None``.

    SCIP itself answers an unknown name with a bare ``KeyError('Not a valid parameter name')``;
    checking first lets the ERROR result say which option it was. ``nested`` names a key whose
    value is a further mapping of parameters (cvxpy's ``scip_params``).
    """
    if not options.solver_options:
        return None
    import pyscipopt

    known = pyscipopt.Model().getParams()
    names = [key for key in options.solver_options if key != nested]
    if nested is not None and isinstance(options.solver_options.get(nested), Mapping):
        names += list(options.solver_options[nested])
    unknown = sorted(str(key) for key in names if key not in known)
    if not unknown:
        return None
    close = {
        key: difflib.get_close_matches(key, list(known), n=1)
        for key in unknown
        if difflib.get_close_matches(key, list(known), n=1)
    }
    hint = "".join(f"; {key!r}: did you mean {match[0]!r}?" for key, match in close.items())
    return (
        f"unknown SCIP parameter(s) {unknown} in solver_options{hint} (SCIP's parameters are "
        "named like 'limits/time'; pyscipopt.Model().getParams() lists them)"
    )


def _finite(model: Any, value: float) -> float | None:
    # SCIP reports about +-infinity() (1e20) for a missing bound, not always exactly.
    value = float(value)
    return value if np.isfinite(value) and abs(value) < 0.1 * model.infinity() else None


#: How many feasibility tolerances the reported dual bound is lowered by (see the module notes).
BOUND_SLACK = 10.0


def lowered_bound(result: BackendResult, options: SolveOptions) -> BackendResult:
    """``result`` with its bound lowered by SCIP's tolerance, so that it stays a bound."""
    if result.bound is None:
        return result
    feastol = float(scip_params(options).get("numerics/feastol", 1e-6))
    slack = BOUND_SLACK * feastol * max(1.0, abs(result.bound))
    return replace(result, bound=result.bound - slack)


def _outcome(model: Any) -> RawOutcome:
    text = str(model.getStatus())
    if text == "userinterrupt":  # SCIP caught Ctrl-C: the user asked to stop, not for a result
        raise KeyboardInterrupt
    objective = _finite(model, model.getObjVal()) if model.getNSols() > 0 else None
    return RawOutcome(
        SCIP_STATUS.get(text, Status.ERROR), objective, _finite(model, model.getDualbound()), text
    )


@register_backend
class ScipMatrixBackend(Backend):
    """SCIP through pyscipopt, built from a :class:`~optframe.model.MatrixProblem`."""

    solver: ClassVar[str] = "scip"
    layer: ClassVar[str] = "matrix"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP, ProblemClass.MIQP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP})
    requires: ClassVar[tuple[str, ...]] = ("pyscipopt",)

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve in a child process that Ctrl-C and the time limit stop (see the module notes)."""
        self.check_available()
        return stoppable(
            lambda: self._solve(formulation, options),
            options,
            "SCIP",
            always=True,
            preload=self.requires,
        )

    def _solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Build the pyscipopt model row by row, optimize, and read values, duals and bound."""
        self.check_available()
        import pyscipopt

        clock = Clock()
        if message := unknown_params(options):
            return error_result(message, clock(), "SCIP")
        problem: MatrixProblem = formulation.problem
        integer = problem.integrality is not None and bool(np.any(problem.integrality))
        quadratic = problem.P is not None and problem.P.nnz > 0
        try:
            model = pyscipopt.Model()
            model.hideOutput(not options.verbose)
            columns, rows = self._build(pyscipopt, model, problem)
            if rows is None:
                return BackendResult(
                    Status.INFEASIBLE, None, seconds=clock(), message="SCIP: empty row violated"
                )
            if not integer and not quadratic:
                # Keep the LP as given so that the duals of the rows are the LP's duals.
                model.setPresolve(pyscipopt.SCIP_PARAMSETTING.OFF)
                model.setHeuristics(pyscipopt.SCIP_PARAMSETTING.OFF)
                model.disablePropagation()
            timed = time_left(options, clock)
            if timed is None:
                return out_of_time(clock, "SCIP")
            model.setParams(scip_params(timed))
            # SoPlex prints numerical notes ("Cannot set feasibility tolerance ...") past
            # hideOutput, straight to file descriptor 2
            with contextlib.nullcontext() if options.verbose else silenced_c_stdout(stderr=True):
                model.optimize()
            outcome = _outcome(model)
            status = outcome.status or Status.ERROR
            values = None
            if (status.is_success or status.is_limit) and model.getNSols() > 0:
                best = model.getBestSol()
                x = np.array([model.getSolVal(best, v) for v in columns], dtype=np.float64)
                duals = None
                if not integer and not quadratic:
                    duals = np.array(
                        [0.0 if c is None else model.getDualsolLinear(c) for c in rows]
                    )
                values = matrix_raw_solution(formulation, x, duals)
            iterations = model.getNTotalNodes() if integer else model.getNLPIterations()
        except Exception as exc:  # solver failures are statuses
            return error_result(exc, clock(), "SCIP")
        result = BackendResult(
            status=status,
            values=values,
            objective=outcome.objective if values is not None else None,
            bound=outcome.bound,
            iterations=int(iterations),
            seconds=clock(),
            message=f"SCIP: {outcome.text}",
        )
        return lowered_bound(result, options)

    @staticmethod
    def _build(
        pyscipopt: Any, model: Any, problem: MatrixProblem
    ) -> tuple[list[Any], list[Any] | None]:
        integrality = (
            problem.integrality
            if problem.integrality is not None
            else np.zeros(problem.n_variables, dtype=bool)
        )
        quadratic = problem.P is not None and problem.P.nnz > 0
        # SCIP's objective must be linear: with a quadratic objective, minimize t subject to
        # t >= c'x + x'Px/2, as Pyomo's and cvxpy's interfaces do. t is created first: with it
        # after the columns, SCIP 10 stalls on unbounded LP relaxations (free x, no rows).
        t = model.addVar(lb=None, ub=None, vtype="C", obj=1.0) if quadratic else None
        columns = [
            model.addVar(
                lb=None if np.isinf(lo) else float(lo),
                ub=None if np.isinf(hi) else float(hi),
                vtype="I" if kind else "C",
                obj=0.0 if quadratic else float(c),
            )
            for lo, hi, kind, c in zip(
                problem.lower, problem.upper, integrality, problem.c, strict=True
            )
        ]
        if t is not None:
            P = sp.coo_array(sp.triu(problem.P))
            weights = np.where(P.row == P.col, 0.5, 1.0) * P.data  # diagonal once, others twice
            linear = np.flatnonzero(problem.c)
            model.addCons(
                pyscipopt.quicksum(
                    float(w) * columns[i] * columns[j]
                    for i, j, w in zip(P.row, P.col, weights, strict=True)
                )
                + pyscipopt.quicksum(float(problem.c[j]) * columns[j] for j in linear)
                <= t
            )
        A = sp.csr_array(problem.A)
        rows: list[Any] = []
        for i in range(problem.n_rows):
            lo, hi = float(problem.row_lower[i]), float(problem.row_upper[i])
            start, end = A.indptr[i], A.indptr[i + 1]
            if start == end:
                if lo > 0 or hi < 0:
                    return columns, None
                rows.append(None)
                continue
            expr = pyscipopt.quicksum(
                float(a) * columns[j]
                for a, j in zip(A.data[start:end], A.indices[start:end], strict=True)
            )
            if lo == hi:
                relation = expr == lo
            elif np.isinf(lo):
                relation = expr <= hi
            elif np.isinf(hi):
                relation = expr >= lo
            else:
                relation = lo <= (expr <= hi)
            rows.append(model.addCons(relation))
        if problem.offset:
            model.addObjoffset(float(problem.offset))
        return columns, rows


@register_backend
class ScipPyomoBackend(Backend):
    """SCIP through Pyomo's ``scip_direct`` interface (``pyomo.contrib.solver``); no duals."""

    solver: ClassVar[str] = "scip"
    layer: ClassVar[str] = "pyomo"
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP, ProblemClass.MIQP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset()
    requires: ClassVar[tuple[str, ...]] = ("pyomo", "pyscipopt")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the Pyomo model with a fresh ``ScipDirect`` instance."""
        self.check_available()
        from pyomo.contrib.solver.solvers.scip.scip_direct import ScipDirect

        if message := unknown_params(options):
            return error_result(message, 0.0, "Pyomo SCIP")
        with contextlib.nullcontext() if options.verbose else silenced_c_stdout(stderr=True):
            return lowered_bound(
                solve_pyomo(
                    formulation,
                    ScipDirect(),
                    options,
                    scip_params(options),
                    "Pyomo SCIP",
                    duals=formulation.problem_class in self.duals,
                    preload=self.requires,
                    iteration_keys=("NNodes",),
                    always=True,
                ),
                options,
            )


@register_backend
class ScipCvxpyBackend(Backend):
    """SCIP through cvxpy's ``SCIP`` interface."""

    solver: ClassVar[str] = "scip"
    layer: ClassVar[str] = "cvxpy"
    # SOCP: cvxpy's SCIP interface takes second-order cones (no exponential ones)
    supports: ClassVar[frozenset[ProblemClass]] = frozenset(
        {ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP, ProblemClass.MIQP, ProblemClass.SOCP}
    )
    duals: ClassVar[frozenset[ProblemClass]] = frozenset({ProblemClass.LP})
    requires: ClassVar[tuple[str, ...]] = ("cvxpy", "pyscipopt")

    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve the cvxpy problem with SCIP; status and bound from the pyscipopt model."""
        self.check_available()

        def read_raw(problem: Any) -> RawOutcome | None:
            # cvxpy's SCIP interface returns its raw output with the pyscipopt model (kept by
            # solve_cvxpy even when cvxpy raised: a time limit without a solution is cvxpy's
            # "solver_error"), and keeps it in solver_stats.extra_stats after a success.
            raw = getattr(problem, "_optframe_raw", None)
            if not isinstance(raw, dict) or "model" not in raw:
                raw = problem.solver_stats.extra_stats if problem.solver_stats else None
            if not isinstance(raw, dict) or "model" not in raw:
                return None
            return _outcome(raw["model"])

        if message := unknown_params(options, nested="scip_params"):
            return error_result(message, 0.0, "cvxpy SCIP")
        with contextlib.nullcontext() if options.verbose else silenced_c_stdout(stderr=True):
            return lowered_bound(
                solve_cvxpy(
                    formulation,
                    options,
                    "SCIP",
                    scip_params,  # limits/time: what cvxpy's compilation left
                    read_raw,
                    duals=formulation.problem_class in self.duals,
                    preload=self.requires,
                    always=True,
                ),
                options,
            )
