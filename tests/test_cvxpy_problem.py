"""A user's cvxpy.Problem handed to optframe.solve as it is: solved, certified, written back."""

import cvxpy as cp
import numpy as np
import pytest

import optframe as of
from optframe.cvxpy_problem import CvxpyProblem


def _regression(n=150, m=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    return X, X @ np.arange(1.0, m + 1) + rng.laplace(size=n)


def _lad_ridge():
    X, y = _regression()
    w = cp.Variable(X.shape[1], name="w")
    b = cp.Variable(name="b")
    objective = cp.sum(cp.abs(y - X @ w - b)) + 0.5 * cp.sum_squares(w) + 3.0
    return cp.Problem(cp.Minimize(objective), [w >= -1, cp.sum(w) == 0.5]), w, b


def _reference(problem, tight=True):
    """cvxpy's own answer (at tight tolerances), leaving the problem's values as they were."""
    saved = [v.value for v in problem.variables()]
    options = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10} if tight else {}
    value = problem.solve(solver=cp.CLARABEL, **options)
    for v, old in zip(problem.variables(), saved, strict=True):
        v.value = old
    return value


@pytest.mark.parametrize("backend", ["auto", "highs", "clarabel", "osqp", "piqp"])
def test_a_qp_is_solved_certified_and_written_back(backend):
    problem, w, b = _lad_ridge()
    optimum = _reference(problem)
    w.value, b.value = None, None
    result = of.solve(problem, backend=backend)
    assert result.status is of.Status.OPTIMAL, result.stats
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert result.bound <= optimum + 1e-7 * abs(optimum)
    assert set(result.solution) == {"w", "b"}
    np.testing.assert_allclose(w.value, result.solution["w"])
    assert problem.value == pytest.approx(result.objective)
    assert abs(w.value.sum() - 0.5) < 1e-6
    assert w.value.min() >= -1 - 1e-6


def test_an_lp_with_matrix_variables_keeps_their_shape():
    rng = np.random.default_rng(1)
    cost = rng.random((2, 3))
    Z = cp.Variable((2, 3), name="Z")
    problem = cp.Problem(
        cp.Minimize(cp.sum(cp.multiply(cost, Z))),
        [Z >= 0, cp.sum(Z, axis=0) == np.array([1.0, 2.0, 3.0]), cp.sum(Z, axis=1) <= 4.0],
    )
    optimum = _reference(problem)
    result = of.solve(problem)
    assert of.from_cvxpy(problem).problem_class is of.ProblemClass.LP
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(optimum, rel=1e-8)
    assert result.solution["Z"].shape == (2, 3)
    assert np.allclose(Z.value.sum(axis=0), [1.0, 2.0, 3.0], atol=1e-7)


def test_parameters_keep_their_values():
    X, y = _regression()
    lam = cp.Parameter(nonneg=True, value=2.0)
    w = cp.Variable(X.shape[1], name="w")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(y - X @ w)) + lam * cp.norm1(w)))
    result = of.solve(problem)
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(_reference(problem), rel=1e-6)


def test_a_cone_program_goes_to_clarabel_through_cvxpy():
    X, y = _regression()
    labels = np.sign(y - np.median(y))
    w = cp.Variable(X.shape[1], name="w")
    loss = cp.sum(cp.logistic(-cp.multiply(labels, X @ w))) + cp.norm2(w)
    problem = cp.Problem(cp.Minimize(loss))
    model = of.from_cvxpy(problem)
    assert model.problem_class is of.ProblemClass.EXP
    assert model.layers == ("cvxpy",)
    result = of.solve(problem)
    assert result.backend == "cvxpy:clarabel"
    assert result.objective == pytest.approx(_reference(problem, tight=False), rel=1e-6)
    assert result.status is of.Status.CONVERGED  # no bound of optframe's own for cones yet


def test_a_bound_from_moved_points_and_duals_stays_below_the_optimum(monkeypatch):
    from optframe.drivers import direct

    problem, _, _ = _lad_ridge()
    honest = direct.safe_lower_bound

    def lying(matrix, x, y):
        return honest(matrix, x + 0.05, y * 1.05)

    monkeypatch.setattr(direct, "safe_lower_bound", lying)
    result = of.solve(problem, backend="highs")
    assert result.bound is None or result.bound <= _reference(problem) * (1 + 1e-9)


@pytest.mark.parametrize(
    ("problem", "message"),
    [
        (cp.Problem(cp.Maximize(-cp.sum_squares(cp.Variable(2)))), "Minimize"),
        (cp.Problem(cp.Minimize(cp.sqrt(cp.Variable()))), "DCP"),
    ],
)
def test_problems_optframe_cannot_take_are_refused_by_name(problem, message):
    with pytest.raises(of.ModelError, match=message):
        of.solve(problem)


def test_anything_else_is_refused_with_what_solve_takes():
    with pytest.raises(of.ModelError, match=r"optframe model or a cvxpy\.Problem"):
        of.solve("min x")
    with pytest.raises(of.ModelError, match=r"cvxpy\.Problem"):
        CvxpyProblem(object())


def _group_lasso():
    X, y = _regression(n=80, m=6)
    w = cp.Variable(6, name="w")
    penalty = cp.norm2(w[:3]) + cp.norm2(w[3:])
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - X @ w) + 5.0 * penalty))


@pytest.mark.parametrize("backend", ["auto", "scip"])
def test_a_second_order_cone_program_reaches_the_back_ends_that_take_it(backend):
    problem = _group_lasso()
    assert of.from_cvxpy(problem).problem_class is of.ProblemClass.SOCP
    result = of.solve(problem, backend=backend)
    assert result.backend == ("cvxpy:clarabel" if backend == "auto" else "cvxpy:scip")
    assert result.objective == pytest.approx(_reference(problem, tight=False), rel=1e-5)


@pytest.mark.parametrize("backend", ["highs", "osqp", "piqp"])
def test_other_back_ends_refuse_a_cone_program_by_name(backend):
    with pytest.raises(of.IncompatibleBackend, match="SOCP"):
        of.solve(_group_lasso(), backend=backend)


def test_semidefinite_cones_are_refused_by_name():
    X = cp.Variable((2, 2), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> np.eye(2)])
    with pytest.raises(of.ModelError, match="semidefinite"):
        of.solve(problem)


def test_a_parameter_without_a_value_is_refused_by_name_and_nothing_is_changed():
    rng = np.random.default_rng(4)
    X, y = rng.normal(size=(30, 3)), rng.normal(size=30)
    lam = cp.Parameter(nonneg=True, name="lam")
    w = cp.Variable(3, name="w")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(y - X @ w)) + lam * cp.sum_squares(w)))
    with pytest.raises(of.ModelError, match=r"parameters without a value \(lam\).*lam.value"):
        of.solve(problem)
    model = of.from_cvxpy(problem)  # a parameter may get its value after the model is made
    with pytest.raises(of.ModelError, match="lam"):
        of.solve(model, backend="highs")
    assert w.value is None
    assert problem.value is None
    lam.value = 0.5
    result = of.solve(problem)
    assert result.status is of.Status.OPTIMAL
    assert w.value is not None
