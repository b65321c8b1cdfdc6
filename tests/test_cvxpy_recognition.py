"""A user's cvxpy.Problem that is a loss plus a penalty is solved as an EmpiricalRisk."""

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
from optframe import cvxpy_recognize
from optframe.cvxpy_problem import _names
from optframe.cvxpy_recognize import objective_mismatch, recognize

N, M = 120, 4


def _data(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, M))
    labels = np.sign(X @ rng.normal(size=M) + 0.5 * rng.normal(size=N))
    target = X @ np.arange(1.0, M + 1) + rng.laplace(size=N)
    weights = rng.uniform(0.2, 2.0, size=N)
    return X, labels, target, weights, rng


def _forms():
    """(name, objective builder, loss repr expected in stats or None) for each recognized form."""
    X, y, t, s, rng = _data()
    k = 1 + 0.1 * rng.normal(size=N)

    def r(w, b):
        return t - X @ w - b

    def margin(w, b):
        return cp.multiply(y, X @ w + b)

    return [
        ("hinge", lambda w, b: cp.sum(cp.pos(1 - margin(w, b))) + 0.5 * cp.sum_squares(w),
         "Hinge()"),
        ("hinge maximum, C", lambda w, b: 3 * cp.sum(cp.maximum(0, 1 - margin(w, b)))
         + cp.norm(w, 2) ** 2, "Hinge()"),
        ("hinge mean, no intercept", lambda w, b: cp.sum(cp.pos(1 - cp.multiply(y, X @ w))) / N
         + 0.1 * cp.sum_squares(w), "Hinge()"),
        ("weighted hinge", lambda w, b: cp.sum(cp.multiply(s, cp.pos(1 - margin(w, b))))
         + cp.sum_squares(w), "Hinge()"),
        ("hinge with constant 2", lambda w, b: cp.sum(cp.pos(2 - margin(w, b)))
         + cp.sum_squares(w), "PLQLoss"),
        ("hinge with a constant per row", lambda w, b: cp.sum(cp.pos(k - cp.multiply(y, X @ w)))
         + cp.sum_squares(w), "PLQLoss"),
        ("squared hinge", lambda w, b: cp.sum_squares(cp.pos(1 - margin(w, b)))
         + cp.sum_squares(w), "SquaredHinge()"),
        ("LAD", lambda w, b: cp.sum(cp.abs(r(w, b))), "Absolute()"),
        ("LAD lasso", lambda w, b: cp.norm1(r(w, b)) + 2 * cp.norm1(w), "Absolute()"),
        ("LAD elastic net + constant", lambda w, b: cp.sum(cp.abs(r(w, b))) + cp.norm1(w)
         + 3 * cp.sum_squares(w) + 7.0, "Absolute()"),
        ("weighted LAD (dot)", lambda w, b: s @ cp.abs(t - X @ w - 2 * b) + cp.sum_squares(w),
         "Absolute()"),
        ("pinball maximum", lambda w, b: cp.sum(cp.maximum(0.3 * r(w, b), -0.7 * r(w, b)))
         + cp.sum_squares(w), "Pinball"),
        ("pinball pos", lambda w, b: cp.sum(0.3 * cp.pos(r(w, b)) + 0.7 * cp.pos(-r(w, b))),
         "Pinball(tau=0.3)"),
        ("Huber", lambda w, b: cp.sum(cp.huber(r(w, b), 1.5)) + cp.sum_squares(w),
         "Huber(delta=1.5)"),
        ("epsilon-insensitive", lambda w, b: cp.sum(cp.pos(cp.abs(r(w, b)) - 0.5))
         + cp.sum_squares(w), "EpsilonInsensitive(epsilon=0.5)"),
        ("least squares", lambda w, b: cp.sum_squares(r(w, b)) + cp.sum_squares(w), "PLQLoss"),
        ("logistic", lambda w, b: cp.sum(cp.logistic(-cp.multiply(y, X @ w)))
         + 0.5 * cp.sum_squares(w), "Logistic()"),
        ("logistic intercept", lambda w, b: cp.sum(cp.logistic(-margin(w, b)))
         + 0.5 * cp.sum_squares(w), "Logistic()"),
    ]  # fmt: skip


FORMS = _forms()


def _problem(build):
    w = cp.Variable(M, name="w")
    b = cp.Variable(name="b")
    return cp.Problem(cp.Minimize(build(w, b))), w, b


def _reference(problem):
    """Clarabel's optimum through cvxpy, leaving the variables' values as they were."""
    saved = [v.value for v in problem.variables()]
    value = problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10)
    for v, old in zip(problem.variables(), saved, strict=True):
        v.value = old
    return value


@pytest.mark.parametrize(("name", "build", "loss"), FORMS, ids=[f[0] for f in FORMS])
def test_each_form_is_recognized_solved_and_certified(name, build, loss):
    problem, w, _b = _problem(build)
    optimum = _reference(problem)
    result = of.solve(problem)
    said = result.stats["recognized"]
    assert isinstance(said, dict), said
    assert said["loss"].startswith(loss)
    assert said["n"] == N
    assert said["m"] == M
    assert result.status is of.Status.OPTIMAL, result.stats
    assert result.objective == pytest.approx(optimum, rel=1e-6, abs=1e-6)
    assert result.bound <= result.objective
    assert said["scale"] * said["model_objective"] + said["offset"] == pytest.approx(
        result.objective, rel=1e-9, abs=1e-9
    )
    np.testing.assert_allclose(w.value, result.solution["w"])
    assert problem.value == pytest.approx(result.objective)


@pytest.mark.parametrize(("name", "build", "loss"), FORMS, ids=[f[0] for f in FORMS])
def test_the_model_equals_the_problem_at_random_points(name, build, loss):
    problem, _, _ = _problem(build)
    recognition = recognize(problem, _names(problem))
    assert recognition.recognized, recognition.reason
    rng = np.random.default_rng(7)
    for _ in range(5):
        values = {"w": 3 * rng.normal(size=M), "b": 3 * rng.normal(size=())}
        assert objective_mismatch(problem, recognition, values) <= 1e-10


def test_an_intercept_is_the_unpenalized_variable_and_sparse_data_stay_sparse():
    X, y, _, _, _ = _data(1)
    Xs = sp.csr_array(np.where(np.abs(X) > 0.5, X, 0.0))
    w, c = cp.Variable(M, name="coef"), cp.Variable(name="offset")
    problem = cp.Problem(
        cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, Xs @ w - 2 * c))) + cp.sum_squares(w))
    )
    optimum = _reference(problem)
    result = of.solve(problem)
    said = result.stats["recognized"]
    assert said["intercept"] == "offset"
    assert said["loss"] == "Hinge()"
    assert sp.issparse(of.from_cvxpy(problem).recognition.model.data.X)
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert c.value == pytest.approx(result.solution["offset"])


def test_auto_reaches_the_model_drivers():
    rng = np.random.default_rng(3)
    n = 2500
    X = rng.normal(size=(n, 3))
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=n))
    w = cp.Variable(3, name="w")
    hinge = cp.Problem(
        cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ w))) + 0.5 * cp.sum_squares(w))
    )
    result = of.solve(hinge)
    assert result.driver == "dcd", result.stats.get("auto_rule")
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(_reference(hinge), rel=1e-6)


def test_a_parameter_keeps_its_value():
    X, _, t, _, _ = _data(2)
    lam = cp.Parameter(nonneg=True, value=2.0)
    w = cp.Variable(M, name="w")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(t - X @ w)) + lam * cp.norm1(w)))
    result = of.solve(problem)
    assert result.stats["recognized"]["penalty"].startswith("L1 (2")
    assert result.objective == pytest.approx(_reference(problem), rel=1e-6)


@pytest.mark.parametrize(
    ("build", "part"),
    [
        (lambda w, b, X, t: cp.sum(cp.abs(t - X @ w - b)) + cp.log_sum_exp(w), "log_sum_exp"),
        (lambda w, b, X, t: cp.sum(cp.abs(t - X @ w - b)) + cp.norm(w, 2), "not squared"),
        (lambda w, b, X, t: cp.sum(cp.abs(t - X @ w - b)) + cp.sum(w), "affine term"),
        (
            lambda w, b, X, t: cp.sum(cp.abs(t - X @ w)) + cp.sum(cp.abs(t[::-1] - X @ w - b)),
            "not the same affine map",
        ),
        (
            lambda w, b, X, t: cp.sum(cp.pos(t - X @ w - b)) + cp.sum(cp.pos(X @ w)),
            "not the same affine map",
        ),
    ],
)
def test_what_is_not_recognized_is_named_and_still_solved(build, part):
    X, _, t, _, _ = _data(4)
    w, b = cp.Variable(M, name="w"), cp.Variable(name="b")
    problem = cp.Problem(cp.Minimize(build(w, b, X, t)))
    result = of.solve(problem)
    said = result.stats["recognized"]
    assert isinstance(said, str)
    assert said.startswith("not recognized:")
    assert part in said, said
    assert result.objective == pytest.approx(_reference(problem), rel=1e-5, abs=1e-6)


def test_constraints_leave_the_problem_as_it_is():
    X, _, t, _, _ = _data(5)
    w = cp.Variable(M, name="w")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(t - X @ w))), [w >= 0])
    result = of.solve(problem)
    assert result.stats["recognized"] == "not recognized: 1 constraints"
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(_reference(problem), rel=1e-6)


def test_a_negative_weight_is_not_a_loss():
    X, y, _, _, _ = _data(6)
    s = np.ones(N)
    s[3] = -1.0
    w = cp.Variable(M, name="w")
    problem = cp.Problem(
        cp.Minimize(cp.sum(cp.multiply(s, cp.pos(1 - cp.multiply(y, X @ w)))) + cp.sum_squares(w))
    )
    recognition = recognize(problem, _names(problem))
    assert not recognition.recognized
    assert "negative weight" in recognition.reason


def test_a_model_that_disagrees_with_the_problem_is_not_used(monkeypatch):
    """The check at the solution catches a wrong model (here: a wrong offset forced in)."""
    X, _, t, _, _ = _data(8)
    w, b = cp.Variable(M, name="w"), cp.Variable(name="b")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(t - X @ w - b)) + cp.sum_squares(w)))
    honest = cvxpy_recognize._recognize

    def lying(problem, names):
        recognition = honest(problem, names)
        recognition.offset += 1.0
        return recognition

    monkeypatch.setattr(cvxpy_recognize, "_recognize", lying)
    with pytest.raises(cvxpy_recognize.NotRecognized, match="differs from the problem"):
        cvxpy_recognize._check(problem, lying(problem, _names(problem)))
    monkeypatch.setattr(cvxpy_recognize, "_check", lambda problem, recognition: None)
    result = of.solve(problem)
    assert "not used" in result.stats["recognized"]
    assert result.objective == pytest.approx(_reference(problem), rel=1e-6)


def test_several_penalized_variables_are_one_coefficient_vector():
    X, _, t, _, _ = _data(9)
    u, v, b = cp.Variable(2, name="u"), cp.Variable(2, name="v"), cp.Variable(name="b")
    residual = t - X[:, :2] @ u - X[:, 2:] @ v - b
    problem = cp.Problem(
        cp.Minimize(cp.sum(cp.huber(residual, 1.0)) + cp.sum_squares(u) + cp.sum_squares(v))
    )
    optimum = _reference(problem)
    result = of.solve(problem)
    said = result.stats["recognized"]
    assert said["m"] == 4
    assert said["intercept"] == "b"
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert set(result.solution) == {"u", "v", "b"}
    np.testing.assert_allclose(v.value, result.solution["v"])


def test_a_model_the_declaration_refuses_leaves_the_problem_as_it_is():
    X, y, _, _, _ = _data(10)
    s = (y > 0).astype(float)  # the class -1 has no weight: EmpiricalRisk refuses it
    w, b = cp.Variable(M, name="w"), cp.Variable(name="b")
    problem = cp.Problem(
        cp.Minimize(
            cp.sum(cp.multiply(s, cp.pos(1 - cp.multiply(y, X @ w + b)))) + cp.sum_squares(w)
        )
    )
    result = of.solve(problem)
    said = result.stats["recognized"]
    assert said.startswith("not recognized: the model found was refused")
    assert result.objective == pytest.approx(_reference(problem), rel=1e-6, abs=1e-6)


def test_an_affine_atom_outside_the_walk_is_read_by_evaluations():
    X, _, t, _, _ = _data(11)
    w, b = cp.Variable(M, name="w"), cp.Variable(name="b")
    residual = t - X[:, :2] @ w[:2] - X[:, 2:] @ w[2:] - b  # index atoms
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(residual)) + cp.sum_squares(w)))
    result = of.solve(problem)
    assert result.stats["recognized"]["loss"] == "Absolute()"
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(_reference(problem), rel=1e-6)


@pytest.fixture
def sampled_check(monkeypatch):
    """The random-row comparison from 50 rows on, on 40 of them (N = 120 here)."""
    monkeypatch.setattr(cvxpy_recognize, "SAMPLED_CHECK_FROM", 50)
    monkeypatch.setattr(cvxpy_recognize, "SAMPLED_CHECK_ROWS", 40)


def _sample_and_point(problem, recognition):
    rng = np.random.default_rng(3)
    values = {"w": rng.normal(size=M), "b": rng.normal(size=())}
    return values, np.sort(rng.choice(N, 40, replace=False))


@pytest.mark.parametrize(("name", "build", "loss"), FORMS, ids=[f[0] for f in FORMS])
def test_the_sampled_comparison_agrees_on_every_form(name, build, loss, sampled_check):
    problem, _, _ = _problem(build)
    recognition = recognize(problem, _names(problem))
    assert recognition.recognized, recognition.reason
    values, rows = _sample_and_point(problem, recognition)
    mismatch = cvxpy_recognize._sampled_mismatch(problem, recognition, values, rows)
    assert mismatch <= 1e-10, (name, mismatch)


def test_the_sampled_comparison_catches_a_model_wrong_on_some_rows(sampled_check):
    X, y, _, _, _ = _data(4)
    w = cp.Variable(M, name="w")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(1 - cp.multiply(y, X @ w)))
                                     + 0.5 * cp.sum_squares(w)))  # fmt: skip
    recognition = recognize(problem, _names(problem))
    assert recognition.recognized, recognition.reason
    values, rows = _sample_and_point(problem, recognition)
    data = recognition.model.data
    flipped = data.y.copy()
    flipped[rows[::5]] *= -1.0  # a fifth of the sampled rows
    wrong = cvxpy_recognize.Recognition(
        recognition.model.with_data(of.data.Dataset(X=data.X, y=flipped)), "",
        recognition.scale, recognition.offset, recognition.features, recognition.intercept,
    )  # fmt: skip
    assert cvxpy_recognize._sampled_mismatch(problem, wrong, values, rows) > 1e-6
    with pytest.raises(cvxpy_recognize.NotRecognized, match="differs from the problem"):
        cvxpy_recognize._check(problem, wrong)


def test_a_tree_that_cannot_be_cut_is_compared_on_every_row(sampled_check, monkeypatch):
    X, _, t, _, _ = _data(5)
    w, b = cp.Variable(M, name="w"), cp.Variable(name="b")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(t - X @ w - b)) + cp.sum_squares(w)))

    def uncuttable(expression, rows, n):
        raise ValueError("an atom that cannot be cut")

    monkeypatch.setattr(cvxpy_recognize, "_take_rows", uncuttable)
    recognition = recognize(problem, _names(problem))
    assert recognition.recognized, recognition.reason
    values, rows = _sample_and_point(problem, recognition)
    assert cvxpy_recognize._sampled_mismatch(problem, recognition, values, rows) == np.inf
    recognition.offset += 1.0  # the full comparison still runs, and catches a wrong model
    with pytest.raises(cvxpy_recognize.NotRecognized, match="differs from the problem"):
        cvxpy_recognize._check(problem, recognition)
