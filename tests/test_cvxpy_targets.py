"""The six problems a user writes in CVXPY that optframe promises to prove: each is OPTIMAL
through ``of.solve(problem)`` with a bound, within 1e-6 of Clarabel at tight tolerances."""

import cvxpy as cp
import numpy as np
import pytest

import optframe as of

RNG = np.random.default_rng(11)
N, M = 300, 5
X = RNG.normal(size=(N, M))
LABELS = np.where(X @ RNG.normal(size=M) + 0.5 * RNG.normal(size=N) > 0, 1.0, -1.0)
TARGET = X @ RNG.normal(size=M) + RNG.laplace(size=N)


def _problems():
    w, b = cp.Variable(M, name="w"), cp.Variable(name="b")
    margin = cp.multiply(LABELS, X @ w + b)
    residual = TARGET - X @ w - b
    return {
        "L1-SVM": cp.Minimize(cp.sum(cp.pos(1 - margin)) + cp.norm1(w)),
        "L2-SVM": cp.Minimize(cp.sum_squares(cp.pos(1 - margin)) + 0.5 * cp.sum_squares(w)),
        "quantile regression": cp.Minimize(cp.sum(cp.maximum(0.8 * residual, -0.2 * residual))),
        "Huber regression": cp.Minimize(cp.sum(cp.huber(residual, 1.0)) + cp.sum_squares(w)),
        "simplex least squares": (
            cp.Minimize(cp.sum_squares(TARGET - X @ w)),
            [w >= 0, cp.sum(w) == 1],
        ),
        "group lasso": cp.Minimize(
            0.5 * cp.sum_squares(TARGET - X @ w) + 2.0 * (cp.norm(w[:2], 2) + cp.norm(w[2:], 2))
        ),
    }


def _problem(name):
    spec = _problems()[name]
    objective, constraints = spec if isinstance(spec, tuple) else (spec, [])
    return cp.Problem(objective, constraints)


@pytest.mark.parametrize("name", list(_problems()))
def test_each_is_optimal_with_a_bound_within_1e6_of_clarabel(name):
    reference = _problem(name).solve(
        solver=cp.CLARABEL, tol_gap_rel=1e-10, tol_gap_abs=1e-10, tol_feas=1e-10
    )
    problem = _problem(name)
    result = of.solve(problem)
    assert result.status is of.Status.OPTIMAL, (result, result.stats.get("safe_bound_how"))
    assert result.bound is not None
    assert result.bound <= reference + 1e-8 * max(1.0, abs(reference))
    assert abs(result.objective - reference) <= 1e-6 * max(1.0, abs(reference))
    assert problem.value == pytest.approx(result.objective, rel=1e-12)
