"""Independent solves of model formulations, straight through the solver libraries.

These do not go through optframe's back-ends: they check the formulations (and the dual sign
convention, d f*/d rhs for a minimization) on their own, and cross-check the back-ends.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

import optframe as of
from optframe.model import Formulation, MatrixProblem, RawSolution


def _highs_matrix(problem: MatrixProblem, variables: Any, constraints: Any) -> RawSolution:
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    for option, value in (
        ("primal_feasibility_tolerance", 1e-10),
        ("dual_feasibility_tolerance", 1e-10),
    ):
        h.setOptionValue(option, value)
    lp = highspy.HighsLp()
    n = problem.n_variables
    A = sp.csc_array(problem.A)
    lp.num_col_, lp.num_row_ = n, problem.n_rows
    lp.col_cost_ = problem.c
    lp.col_lower_, lp.col_upper_ = problem.lower, problem.upper
    lp.row_lower_, lp.row_upper_ = problem.row_lower, problem.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = A.indptr
    lp.a_matrix_.index_ = A.indices
    lp.a_matrix_.value_ = A.data
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = n, problem.n_rows
    h.passModel(lp)
    if problem.P is not None and problem.P.nnz:
        lower = sp.csc_array(sp.tril(problem.P, format="csc"))
        h.passHessian(
            n, lower.nnz, highspy.HessianFormat.kTriangular, lower.indptr, lower.indices, lower.data
        )
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, h.getModelStatus()
    solution = h.getSolution()
    x = np.asarray(solution.col_value)
    row_dual = np.asarray(solution.row_dual)  # HiGHS: d f*/d (active row bound) for a min
    return RawSolution(
        primal={name: x[s] for name, s in variables.items()},
        dual={name: row_dual[s] for name, s in constraints.items()},
    )


def _cvxpy(problem: Any, variables: Any, constraints: Any, solver: str) -> RawSolution:
    import cvxpy as cp

    options = {
        "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
        "OSQP": {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iter": 200_000, "polishing": True},
    }
    problem.solve(solver=solver, **options.get(solver, {}))
    assert problem.status == cp.OPTIMAL, problem.status
    dual = {}
    for name, con in constraints.items():
        value = np.atleast_1d(np.asarray(con.dual_value, dtype=float))
        # cvxpy: an equality's dual is -d f*/d rhs; "expr >= const" already is d f*/d const.
        dual[name] = (
            -value if isinstance(con, cp.constraints.Zero | cp.constraints.Equality) else value
        )
    primal = {
        name: np.atleast_1d(np.asarray(v.value, dtype=float)) for name, v in variables.items()
    }
    return RawSolution(primal=primal, dual=dual)


def _pyomo(model: Any, variables: Any, constraints: Any) -> RawSolution:
    import pyomo.environ as pyo

    model.dual = pyo.Suffix(direction=pyo.Suffix.IMPORT)
    result = pyo.SolverFactory("highs").solve(model)
    assert str(result.solver.termination_condition) == "optimal", result
    primal = {name: np.array([v[i].value for i in v]) for name, v in variables.items()}
    dual = {name: np.array([model.dual[c[i]] for i in c]) for name, c in constraints.items()}
    return RawSolution(primal=primal, dual=dual)


def raw_solve(formulation: Formulation, solver: str = "CLARABEL") -> RawSolution:
    """Solve a formulation directly; duals in the d f*/d rhs convention."""
    handles = (formulation.problem, formulation.variables, formulation.constraints)
    if formulation.layer == "matrix":
        return _highs_matrix(*handles)
    if formulation.layer == "cvxpy":
        return _cvxpy(*handles, solver=solver)
    return _pyomo(*handles)


def direct(model: of.Model, layer: str, form: str | None = None, solver: str = "CLARABEL") -> dict:
    """Build ``model`` in ``layer``/``form``, solve it directly and recover the solution."""
    formulation = model.build(layer, form)
    return formulation.recover(raw_solve(formulation, solver))


def regression_data(n: int = 60, m: int = 3, seed: int = 0, sparse: bool = False) -> tuple:
    """``(X, y)`` with y = X beta + 0.7 + Laplace noise; X sparse (CSR, ~50% zeros) on request."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    if sparse:
        X[rng.random((n, m)) < 0.5] = 0.0
    y = X @ rng.normal(size=m) + 0.7 + rng.laplace(size=n)
    return (sp.csr_array(X) if sparse else X), y


def classification_data(n: int = 60, m: int = 3, seed: int = 0, sparse: bool = False) -> tuple:
    """``(X, y)`` with labels in {-1, +1} from a noisy linear rule (overlapping classes)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    if sparse:
        X[rng.random((n, m)) < 0.5] = 0.0
    y = np.where(X @ rng.normal(size=m) + 0.3 + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return (sp.csr_array(X) if sparse else X), y


def close(a: float, b: float, rtol: float) -> bool:
    """``|a - b| <= rtol * max(1, |b|)``."""
    return abs(a - b) <= rtol * max(1.0, abs(b))
