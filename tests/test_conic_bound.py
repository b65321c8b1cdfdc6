"""The bound from a conic solver's duals: a user's cone program (a group lasso, a logistic loss
with a constraint) is OPTIMAL through optframe's own bound, and no dual values make it wrong."""

import cvxpy as cp
import numpy as np
import pytest

import optframe as of
from optframe.conic_bound import conic_lower_bound
from optframe.solvers._common import _conic_point


def _group_lasso(seed=0, n=200):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = X @ np.array([1.0, -2.0, 0.0, 0.0, 0.5, 0.0]) + rng.normal(size=n)
    w = cp.Variable(6, name="w")
    norms = cp.norm(w[:2], 2) + cp.norm(w[2:4], 2) + cp.norm(w[4:], 2)
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X @ w - y) + 3.0 * norms + 1.5)), w


def _logistic_with_a_constraint(seed=1, n=150):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    w = cp.Variable(4, name="w")
    loss = cp.sum(cp.logistic(-cp.multiply(y, X @ w)))
    return cp.Problem(cp.Minimize(loss + 0.5 * cp.sum_squares(w)), [cp.sum(w) == 1]), w


def _reference(problem):
    """The optimum from Clarabel at tight tolerances (a copy of the problem: values untouched)."""
    copy = cp.Problem(problem.objective, problem.constraints)
    return copy.solve(solver=cp.CLARABEL, tol_gap_rel=1e-10, tol_gap_abs=1e-10, tol_feas=1e-10)


def _point(problem):
    data, chain, _ = problem.get_problem_data(cp.CLARABEL)
    output = chain.solve_via_data(problem, data, False, False, {})
    return _conic_point(data, output.x, output.z)


@pytest.mark.parametrize("make", [_group_lasso, _logistic_with_a_constraint])
def test_a_users_cone_program_is_optimal_through_the_conic_bound(make):
    problem, _ = make()
    reference = _reference(problem)
    result = of.solve(problem)
    assert result.backend == "cvxpy:clarabel"
    assert result.stats["safe_bound_how"].startswith("from the conic solver's point")
    assert result.status is of.Status.OPTIMAL
    assert result.bound <= reference + 1e-9 * abs(reference)
    assert result.objective == pytest.approx(reference, rel=1e-6)
    assert problem.value == pytest.approx(result.objective)
    kinds = [step.kind for step in result.certificate.steps]
    assert kinds[:2] == ["project", "balance"]


def test_the_group_lasso_in_a_child_process_too():
    problem, _ = _group_lasso(seed=2)
    result = of.solve(problem, time_limit=60)  # built and solved in a child process
    assert result.status is of.Status.OPTIMAL
    assert result.certificate is not None


@pytest.mark.parametrize("make", [_group_lasso, _logistic_with_a_constraint])
@pytest.mark.parametrize("size", [1e-8, 1e-4, 1e-1, 10.0])
def test_no_dual_values_give_a_bound_above_the_optimum(make, size):
    problem, _ = make(n=60)
    reference = _reference(problem)
    point = _point(problem)
    rng = np.random.default_rng(int(size * 1e8) % 2**32)
    for _ in range(2):
        z = point.z + size * rng.normal(size=point.z.size) * (1.0 + np.abs(point.z))
        x = point.x + size * rng.normal(size=point.x.size)
        moved = type(point)(**{**point.__dict__, "z": z, "x": x})
        found = conic_lower_bound(moved)
        assert found.value <= reference + 1e-9 * abs(reference), (size, found.steps)


def test_the_exact_duals_give_a_tight_bound_and_wrong_ones_a_loose_one():
    problem, _ = _group_lasso()
    reference = _reference(problem)
    point = _point(problem)
    tight = conic_lower_bound(point).value
    assert reference - tight <= 1e-7 * abs(reference)
    wrong = type(point)(**{**point.__dict__, "z": point.z * 0.5})
    loose = conic_lower_bound(wrong).value
    assert loose < tight - 1e-3 * abs(reference)


def test_a_back_end_without_cone_duals_gives_no_bound():
    problem, _ = _group_lasso()
    result = of.solve(problem, backend="scip")
    assert "safe_bound" not in result.stats
    assert result.bound is None
    assert result.status is of.Status.CONVERGED
