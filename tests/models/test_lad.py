"""LADRegression: formulations, references, dual recovery, metamorphic relations, bad input."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from model_testing import close, direct, raw_solve, regression_data
from sklearn.datasets import load_diabetes
from sklearn.linear_model import QuantileRegressor

from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.models import LADRegression
from optframe.registry import models

LAYER_SOLVERS = [
    ("matrix", "HIGHS"),
    ("cvxpy", "HIGHS"),
    ("cvxpy", "CLARABEL"),
    ("pyomo", "HIGHS"),
]


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True)
    rows = np.random.default_rng(7).choice(y.size, 150, replace=False)
    return X[rows], y[rows]


@pytest.fixture
def weights():
    return np.random.default_rng(3).uniform(0.2, 3.0, 60)


def optimum(model, form="dual"):
    solution = direct(model, "matrix", form)
    return solution, model.objective(solution)


# ------------------------------------------------------------------------------ references
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_quantile_regressor(diabetes, fit_intercept, weighted):
    X, y = diabetes
    w = np.random.default_rng(1).uniform(0.2, 3.0, y.size) if weighted else None
    ref = QuantileRegressor(quantile=0.5, alpha=0.0, solver="highs", fit_intercept=fit_intercept)
    ref.fit(X, y, sample_weight=w)
    model = LADRegression(Dataset(X=X, y=y), fit_intercept=fit_intercept, sample_weight=w)
    reference = model.objective({"beta": ref.coef_, "intercept": [ref.intercept_]})
    for form in ("primal", "dual"):
        _, value = optimum(model, form)
        assert value == pytest.approx(reference, rel=1e-7)


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(("layer", "solver"), LAYER_SOLVERS)
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_every_layer_and_form_reaches_the_optimum(layer, solver, form, fit_intercept, weights):
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y), fit_intercept=fit_intercept, sample_weight=weights)
    _, reference = optimum(model, "primal")
    solution = direct(model, layer, form, solver)
    assert close(model.objective(solution), reference, 1e-7)
    assert solution["beta"].shape == (3,)
    assert solution["intercept"].shape == (1,)
    if not fit_intercept:
        assert solution["intercept"][0] == 0.0
    np.testing.assert_allclose(
        solution["residual"], y - X @ solution["beta"] - solution["intercept"][0]
    )


def test_build_attributes():
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y))
    assert model.default_form == "dual"
    for layer in model.layers:
        primal, dual = model.build(layer, "primal"), model.build(layer)
        assert (primal.form, primal.objective_scale) == ("primal", 1.0)
        assert (dual.form, dual.objective_scale) == ("dual", -1.0)
        assert primal.problem_class is dual.problem_class is model.problem_class
    assert models()["LADRegression"] is LADRegression


def test_matrix_problem_values_match_the_objective():
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y))
    for form in ("primal", "dual"):
        formulation = model.build("matrix", form)
        problem = formulation.problem
        x = np.zeros(problem.n_variables)
        raw = raw_solve(formulation)
        for name, rows in formulation.variables.items():
            x[rows] = raw.primal[name]
        solution = formulation.recover(raw)
        value = formulation.original_value(problem.objective_value(x))
        assert value == pytest.approx(model.objective(solution), rel=1e-9)


# ------------------------------------------------------------------------ dual quantities
def test_dual_form_recovers_beta_with_the_right_sign(weights):
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y), sample_weight=weights)
    primal, value = optimum(model, "primal")
    dual, dual_value = optimum(model, "dual")
    assert dual_value == pytest.approx(value, rel=1e-9)
    # Generic continuous data: the LAD optimum is unique, so beta itself must agree.
    np.testing.assert_allclose(dual["beta"], primal["beta"], atol=1e-8)
    np.testing.assert_allclose(dual["intercept"], primal["intercept"], atol=1e-8)
    # The raw row duals are -beta (d f*/d rhs of min -y'theta).
    formulation = model.build("matrix", "dual")
    raw = raw_solve(formulation)
    np.testing.assert_allclose(-raw.dual["beta"], primal["beta"], atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_dual_form_without_row_duals_recovers_beta_by_complementary_slackness(
    weights, fit_intercept
):
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y), sample_weight=weights, fit_intercept=fit_intercept)
    primal, value = optimum(model, "primal")
    formulation = model.build("matrix", "dual")
    raw = raw_solve(formulation)
    without_duals = dataclasses.replace(raw, dual={})
    solution = formulation.recover(without_duals)
    assert model.objective(solution) == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(solution["beta"], primal["beta"], atol=1e-7)


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_theta_is_dual_feasible_and_certifies_the_optimum(form, weights):
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y), sample_weight=weights)
    solution, value = optimum(model, form)
    theta = solution["theta"]
    assert np.all(np.abs(theta) <= weights)
    np.testing.assert_allclose(X.T @ theta, 0.0, atol=1e-8)
    assert abs(theta.sum()) <= 1e-8
    assert y @ theta == pytest.approx(value, rel=1e-9)  # strong duality


# ------------------------------------------------------------------------------- metamorphic
def test_duplicated_row_equals_doubled_weight():
    X, y = regression_data()
    doubled = np.ones(y.size)
    doubled[5] = 2.0
    weighted = LADRegression(Dataset(X=X, y=y, sample_weight=doubled))
    rows = np.r_[np.arange(y.size), 5]
    duplicated = LADRegression(Dataset(X=X[rows], y=y[rows]))
    solution, value = optimum(weighted)
    assert optimum(duplicated)[1] == pytest.approx(value, rel=1e-9)
    assert duplicated.objective(solution) == pytest.approx(value, rel=1e-12)


def test_permuting_rows_changes_nothing(weights):
    X, y = regression_data()
    order = np.random.default_rng(5).permutation(y.size)
    model = LADRegression(Dataset(X=X, y=y), sample_weight=weights)
    permuted = LADRegression(Dataset(X=X[order], y=y[order]), sample_weight=weights[order])
    solution, value = optimum(model)
    other, other_value = optimum(permuted)
    assert other_value == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(other["beta"], solution["beta"], atol=1e-8)
    np.testing.assert_allclose(other["residual"], solution["residual"][order], atol=1e-8)


@pytest.mark.parametrize("scale", [3.0, -0.5])
def test_scaling_y_scales_beta_and_the_objective(scale):
    X, y = regression_data()
    solution, value = optimum(LADRegression(Dataset(X=X, y=y)))
    scaled_model = LADRegression(Dataset(X=X, y=scale * y))
    scaled, scaled_value = optimum(scaled_model)
    assert scaled_value == pytest.approx(abs(scale) * value, rel=1e-9)
    np.testing.assert_allclose(scaled["beta"], scale * solution["beta"], atol=1e-8)
    np.testing.assert_allclose(scaled["intercept"], scale * solution["intercept"], atol=1e-8)


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_adding_x_g_to_y_shifts_beta_by_g(fit_intercept):
    X, y = regression_data()
    g = np.array([1.5, -2.0, 0.25])
    model = LADRegression(Dataset(X=X, y=y), fit_intercept=fit_intercept)
    shifted_model = LADRegression(Dataset(X=X, y=y + X @ g), fit_intercept=fit_intercept)
    solution, value = optimum(model)
    shifted, shifted_value = optimum(shifted_model)
    assert shifted_value == pytest.approx(value, rel=1e-9)
    np.testing.assert_allclose(shifted["beta"], solution["beta"] + g, atol=1e-8)


def test_zero_weight_samples_are_kept_and_do_not_count():
    X, y = regression_data()
    w = np.ones(y.size)
    w[:4] = 0.0
    y_outliers = y.copy()
    y_outliers[:4] += 1e3
    base, value = optimum(LADRegression(Dataset(X=X[4:], y=y[4:])))
    for form in ("primal", "dual"):
        model = LADRegression(Dataset(X=X, y=y_outliers), sample_weight=w)
        solution, kept_value = optimum(model, form)
        assert solution["residual"].shape == (y.size,)
        assert kept_value == pytest.approx(value, rel=1e-9)
        assert np.all(solution["theta"][:4] == 0.0)
        np.testing.assert_allclose(solution["beta"], base["beta"], atol=1e-8)


# ------------------------------------------------------------------------------------ sparse
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_sparse_x_gives_the_dense_optimum_and_stays_sparse(fit_intercept):
    X, y = regression_data(sparse=True)
    dense = LADRegression(Dataset(X=X.toarray(), y=y), fit_intercept=fit_intercept)
    sparse = LADRegression(Dataset(X=X, y=y), fit_intercept=fit_intercept)
    _, value = optimum(dense, "primal")
    n = y.size
    primal = sparse.build("matrix", "primal").problem
    assert primal.A.nnz == X.nnz + (n if fit_intercept else 0) + 2 * n
    dual = sparse.build("matrix", "dual").problem
    assert dual.A.nnz == X.nnz + (n if fit_intercept else 0)
    for layer, solver in LAYER_SOLVERS:
        for form in ("primal", "dual"):
            solution = direct(sparse, layer, form, solver)
            assert close(sparse.objective(solution), value, 1e-7)
    assert sparse.decision_function(solution, X) == pytest.approx(y - solution["residual"])


def test_pyomo_dual_with_an_all_zero_column():
    X, y = regression_data()
    X[:, 1] = 0.0
    model = LADRegression(Dataset(X=X, y=y))
    _, value = optimum(model)
    solution = direct(model, "pyomo", "dual")
    assert solution["beta"].shape == (3,)
    assert close(model.objective(solution), value, 1e-8)


# ------------------------------------------------------------------------------- evaluation
def test_objective_decision_function_and_predict():
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y))
    solution = {"beta": np.array([1.0, -1.0, 0.5]), "intercept": np.array([0.2])}
    fitted = X @ solution["beta"] + 0.2
    assert model.objective(solution) == pytest.approx(np.abs(y - fitted).sum())
    assert model.objective({"beta": solution["beta"]}) == pytest.approx(
        np.abs(y - fitted + 0.2).sum()
    )
    np.testing.assert_allclose(model.decision_function(solution, X), fitted)
    np.testing.assert_allclose(model.predict(solution, sp.csr_array(X)), fitted)
    assert model.violation(solution) == 0.0
    with pytest.raises(DataError, match="3 features"):
        model.predict(solution, X[:, :2])
    with pytest.raises(ModelError, match="'beta'"):
        model.objective({"intercept": [0.0]})


def test_dataclass_behaviour():
    X, y = regression_data()
    model = LADRegression(Dataset(X=X, y=y), sample_weight=[2.0] * y.size)
    assert isinstance(model.sample_weight, np.ndarray)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.fit_intercept = False
    other = dataclasses.replace(model, fit_intercept=False)
    assert not other.fit_intercept
    np.testing.assert_array_equal(other.weights, 2.0)
    assert "LADRegression(" in repr(model)


# ------------------------------------------------------------------------------- bad input
def test_bad_input():
    X, y = regression_data()
    data = Dataset(X=X, y=y)
    with pytest.raises(DataError, match="NaN"):
        Dataset(X=np.where(np.eye(60, 3) == 1, np.nan, X), y=y)
    with pytest.raises(DataError, match=r"data\.y is None"):
        LADRegression(Dataset(X=X))
    with pytest.raises(DataError, match="Dataset"):
        LADRegression(X)
    with pytest.raises(DataError, match="non-negative"):
        LADRegression(data, sample_weight=-np.ones(60))
    with pytest.raises(DataError, match="zero everywhere"):
        LADRegression(data, sample_weight=np.zeros(60))
    with pytest.raises(DataError, match="59 entries"):
        LADRegression(data, sample_weight=np.ones(59))
    with pytest.raises(DataError, match="NaN"):
        LADRegression(data, sample_weight=np.r_[np.nan, np.ones(59)])
    with pytest.raises(ModelError, match="one place"):
        LADRegression(Dataset(X=X, y=y, sample_weight=np.ones(60)), sample_weight=np.ones(60))
    with pytest.raises(ModelError, match="fit_intercept"):
        LADRegression(data, fit_intercept="yes")
    model = LADRegression(data)
    with pytest.raises(ModelError, match="layer"):
        model.build("gurobi")
    with pytest.raises(ModelError, match="form"):
        model.build("matrix", "saddle")
