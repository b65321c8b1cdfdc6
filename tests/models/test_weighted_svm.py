"""WeightedSVM: formulations, references, dual recovery, metamorphic relations, bad input."""

import dataclasses

import numpy as np
import pytest
import scipy.sparse as sp
from model_testing import classification_data, close, direct, raw_solve
from sklearn.datasets import load_breast_cancer
from sklearn.svm import SVC

from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.kernels import RBF, Linear, Polynomial
from optframe.models import WeightedSVM
from optframe.models.weighted_svm import best_intercept
from optframe.registry import models

LINEAR_CASES = [
    ("matrix", "primal", "HIGHS"),
    ("matrix", "dual", "HIGHS"),
    ("cvxpy", "primal", "CLARABEL"),
    ("cvxpy", "dual", "CLARABEL"),
    ("cvxpy", "primal", "OSQP"),
    ("cvxpy", "dual", "OSQP"),
    ("pyomo", "primal", "HIGHS"),
    ("pyomo", "dual", "HIGHS"),
]


@pytest.fixture(scope="module")
def cancer():
    X, y = load_breast_cancer(return_X_y=True)
    rows = np.random.default_rng(11).choice(y.size, 150, replace=False)
    X = X[rows]
    return (X - X.mean(axis=0)) / X.std(axis=0), 2.0 * y[rows] - 1.0


@pytest.fixture
def weights():
    return np.random.default_rng(3).uniform(0.5, 2.0, 60)


def optimum(model, layer="cvxpy", form=None):
    """Reference: Clarabel through CVXPY at tight tolerances."""
    solution = direct(model, layer, form)
    return solution, model.objective(solution)


def svc_solution(svc, y):
    alpha = np.zeros(y.size)
    alpha[svc.support_] = svc.dual_coef_.ravel() * y[svc.support_]
    return {"alpha": alpha, "intercept": svc.intercept_.copy()}


# ------------------------------------------------------------------------------ references
@pytest.mark.parametrize("C", [0.1, 3.0])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_matches_svc_with_sample_weight(cancer, C, kernel):
    X, y = cancer
    s = np.random.default_rng(2).uniform(0.5, 2.0, y.size)
    gamma = 0.05
    svc = SVC(C=C, kernel=kernel, gamma=gamma, tol=1e-8).fit(X, y, sample_weight=s)
    ours = RBF(gamma=gamma) if kernel == "rbf" else "linear"
    model = WeightedSVM(Dataset(X=X, y=y), C=C, kernel=ours, sample_weight=s)
    reference = svc_solution(svc, y)
    solution, value = optimum(model)
    assert value == pytest.approx(model.objective(reference), rel=1e-5)
    assert value <= model.objective(reference) * (1 + 1e-9)
    np.testing.assert_allclose(
        model.decision_function(solution, X[:30]), svc.decision_function(X[:30]), atol=1e-4
    )
    np.testing.assert_array_equal(model.predict(reference, X), svc.predict(X))
    if kernel == "linear":
        assert model.objective({"w": svc.coef_.ravel(), "intercept": svc.intercept_}) == (
            pytest.approx(model.objective(reference), rel=1e-9)
        )


# --------------------------------------------------------------------- layers and forms
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize(("layer", "form", "solver"), LINEAR_CASES)
def test_linear_layers_and_forms_reach_the_optimum(layer, form, solver, fit_intercept, weights):
    X, y = classification_data()
    model = WeightedSVM(
        Dataset(X=X, y=y), C=0.7, sample_weight=weights, fit_intercept=fit_intercept
    )
    _, reference = optimum(model, "cvxpy", "primal")
    solution = direct(model, layer, form, solver)
    assert close(model.objective(solution), reference, 1e-6)
    assert solution["w"].shape == (3,)
    assert solution["intercept"].shape == (1,)
    assert solution["xi"].shape == solution["alpha"].shape == (60,)
    if not fit_intercept:
        assert solution["intercept"][0] == 0.0


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("layer", ["matrix", "cvxpy"])
@pytest.mark.parametrize("kernel", [RBF(gamma=0.5), Polynomial(degree=2, gamma=0.5)])
def test_kernel_dual_in_every_layer(layer, kernel, fit_intercept, weights):
    X, y = classification_data()
    model = WeightedSVM(
        Dataset(X=X, y=y), C=0.7, kernel=kernel, sample_weight=weights, fit_intercept=fit_intercept
    )
    assert model.build(layer).form == "dual"
    _, reference = optimum(model, "cvxpy")
    solution = direct(model, layer)
    assert "w" not in solution
    assert close(model.objective(solution), reference, 1e-6)
    assert close(model.dual_objective(solution["alpha"]), reference, 1e-6)


def test_linear_kernel_object_equals_the_string(weights):
    X, y = classification_data()
    by_name = WeightedSVM(Dataset(X=X, y=y), sample_weight=weights)
    by_object = WeightedSVM(Dataset(X=X, y=y), kernel=Linear(), sample_weight=weights)
    assert by_name.kernel == Linear()
    assert optimum(by_name)[1] == pytest.approx(optimum(by_object)[1], rel=1e-9)


def test_build_attributes():
    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y))
    assert model.default_form == "primal"
    for layer in model.layers:
        primal, dual = model.build(layer), model.build(layer, "dual")
        assert (primal.form, primal.objective_scale) == ("primal", 1.0)
        assert (dual.form, dual.objective_scale) == ("dual", -1.0)
    kernel_model = WeightedSVM(Dataset(X=X, y=y), kernel="rbf")
    assert kernel_model.default_form == "dual"
    assert kernel_model.build("matrix").form == "dual"
    assert models()["WeightedSVM"] is WeightedSVM
    assert WeightedSVM.is_classifier


def test_matrix_problem_values_match_the_objective(weights):
    X, y = classification_data()
    for kernel in ("linear", RBF(gamma=0.3)):
        model = WeightedSVM(Dataset(X=X, y=y), kernel=kernel, sample_weight=weights)
        for form in ("primal", "dual") if kernel == "linear" else ("dual",):
            formulation = model.build("matrix", form)
            problem = formulation.problem
            raw = raw_solve(formulation)
            x = np.zeros(problem.n_variables)
            for name, rows in formulation.variables.items():
                x[rows] = raw.primal[name]
            value = formulation.original_value(problem.objective_value(x))
            assert close(value, model.objective(formulation.recover(raw)), 1e-6)


# ------------------------------------------------------------------------ dual quantities
@pytest.mark.parametrize("fit_intercept", [True, False])
def test_alpha_from_the_primal_is_dual_feasible_and_reproduces_w(fit_intercept, weights):
    X, y = classification_data()
    model = WeightedSVM(
        Dataset(X=X, y=y), C=0.7, sample_weight=weights, fit_intercept=fit_intercept
    )
    primal, value = optimum(model, "cvxpy", "primal")
    alpha = primal["alpha"]
    assert np.all((alpha >= 0) & (alpha <= 0.7 * weights))
    assert model.violation(primal) <= 1e-7
    np.testing.assert_allclose(X.T @ (alpha * y), primal["w"], atol=1e-6)
    assert close(model.dual_objective(alpha), value, 1e-7)
    dual, _ = optimum(model, "cvxpy", "dual")
    np.testing.assert_allclose(alpha, dual["alpha"], atol=1e-5)
    np.testing.assert_allclose(dual["w"], primal["w"], atol=1e-5)
    np.testing.assert_allclose(dual["intercept"], primal["intercept"], atol=1e-5)


@pytest.mark.parametrize("kernel", ["linear", RBF(gamma=0.5)])
@pytest.mark.parametrize("layer", ["matrix", "cvxpy"])
def test_bias_row_dual_is_minus_the_intercept(kernel, layer, weights):
    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y), C=0.7, kernel=kernel, sample_weight=weights)
    formulation = model.build(layer, "dual")
    raw = raw_solve(formulation)
    solution = formulation.recover(raw)
    assert -raw.dual["bias"][0] == pytest.approx(solution["intercept"][0], abs=1e-5)


def test_best_intercept_is_the_exact_minimizer():
    rng = np.random.default_rng(4)
    for _ in range(20):
        n = 15
        y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
        y[:2] = [1.0, -1.0]
        g = rng.normal(size=n)
        cost = rng.choice([0.0, 0.5, 1.0, 2.0], size=n)
        cost[:2] = 1.0

        def loss(b, g=g, y=y, cost=cost):
            return cost @ np.maximum(0.0, 1.0 - y * (g + b))

        b = best_intercept(g, y, cost)
        grid = np.linspace(-6, 6, 24001)
        assert loss(b) <= min(loss(t) for t in grid) + 1e-12
    # A flat optimum (no free support vector): the midpoint of the optimal interval.
    y, g, cost = np.array([1.0, -1.0]), np.array([2.0, -2.0]), np.ones(2)
    assert best_intercept(g, y, cost) == pytest.approx(0.0)
    y, g = np.array([1.0, -1.0]), np.array([0.0, 0.0])
    assert best_intercept(g, y, cost) == pytest.approx(0.0)


def test_dual_objective_is_a_lower_bound(weights):
    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y), C=0.7, sample_weight=weights)
    _, value = optimum(model)
    rng = np.random.default_rng(9)
    upper = model.upper_bounds
    for _ in range(10):
        alpha = rng.uniform(0, 1, y.size) * upper
        # Scale the larger class down so that y'alpha = 0 and the box still holds.
        pos, neg = alpha[y > 0].sum(), alpha[y < 0].sum()
        alpha[y > 0 if pos > neg else y < 0] *= min(pos, neg) / max(pos, neg)
        assert model.violation({"alpha": alpha}) <= 1e-12
        assert model.dual_objective(alpha) <= value + 1e-9
    assert model.dual_objective(np.zeros(y.size)) == 0.0


def test_violation_measures_the_given_slacks_and_alpha():
    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y))
    w, b = np.array([1.0, 0.0, 0.0]), np.array([0.0])
    xi = np.maximum(0.0, 1.0 - y * (X @ w))
    assert model.violation({"w": w, "intercept": b, "xi": xi}) == 0.0
    assert model.violation({"w": w, "intercept": b, "xi": xi - 0.25}) == pytest.approx(0.25)
    alpha = np.zeros(y.size)
    alpha[0] = 2.0
    assert model.violation({"alpha": alpha}) == pytest.approx(2.0)  # |y'alpha| = 2 > box 1


# ------------------------------------------------------------------------------- metamorphic
@pytest.mark.parametrize("kernel", ["linear", RBF(gamma=0.5)])
def test_duplicated_row_equals_doubled_weight(kernel):
    X, y = classification_data()
    doubled = np.ones(y.size)
    doubled[[3, 8]] = 2.0
    weighted = WeightedSVM(Dataset(X=X, y=y, sample_weight=doubled), C=0.7, kernel=kernel)
    rows = np.r_[np.arange(y.size), 3, 8]
    duplicated = WeightedSVM(Dataset(X=X[rows], y=y[rows]), C=0.7, kernel=kernel)
    _, value = optimum(weighted)
    assert optimum(duplicated)[1] == pytest.approx(value, rel=1e-7)


@pytest.mark.parametrize("kernel", ["linear", RBF(gamma=0.5)])
def test_permuting_rows_changes_nothing(kernel, weights):
    X, y = classification_data()
    order = np.random.default_rng(5).permutation(y.size)
    model = WeightedSVM(Dataset(X=X, y=y), C=0.7, kernel=kernel, sample_weight=weights)
    permuted = WeightedSVM(
        Dataset(X=X[order], y=y[order]), C=0.7, kernel=kernel, sample_weight=weights[order]
    )
    solution, value = optimum(model)
    other, other_value = optimum(permuted)
    assert other_value == pytest.approx(value, rel=1e-7)
    np.testing.assert_allclose(other["xi"], solution["xi"][order], atol=1e-5)


@pytest.mark.parametrize("kernel", ["linear", RBF(gamma=0.5)])
def test_scaling_weights_by_k_equals_scaling_c(kernel, weights):
    X, y = classification_data()
    k = 3.5
    scaled_weights = WeightedSVM(Dataset(X=X, y=y), C=0.2, kernel=kernel, sample_weight=k * weights)
    scaled_c = WeightedSVM(Dataset(X=X, y=y), C=0.2 * k, kernel=kernel, sample_weight=weights)
    np.testing.assert_allclose(scaled_weights.upper_bounds, scaled_c.upper_bounds)
    solution, value = optimum(scaled_weights)
    assert optimum(scaled_c)[1] == pytest.approx(value, rel=1e-7)
    assert scaled_c.objective(solution) == pytest.approx(value, rel=1e-12)


def test_zero_weight_samples_are_kept_and_do_not_count(weights):
    X, y = classification_data()
    s = weights.copy()
    s[:5] = 0.0
    flipped = y.copy()
    flipped[:5] *= -1.0
    base, value = optimum(WeightedSVM(Dataset(X=X[5:], y=y[5:]), sample_weight=weights[5:]))
    model = WeightedSVM(Dataset(X=X, y=flipped), sample_weight=s)
    for form in ("primal", "dual"):
        solution, kept_value = optimum(model, "matrix", form)
        assert solution["alpha"].shape == (60,)
        assert np.all(solution["alpha"][:5] == 0.0)
        assert close(kept_value, value, 1e-6)
        np.testing.assert_allclose(solution["w"], base["w"], atol=1e-4)


# ------------------------------------------------------------------------------------ sparse
@pytest.mark.parametrize("kernel", ["linear", RBF(gamma=0.5)])
def test_sparse_x_gives_the_dense_optimum(kernel, weights):
    X, y = classification_data(sparse=True)
    dense = WeightedSVM(Dataset(X=X.toarray(), y=y), kernel=kernel, sample_weight=weights)
    sparse = WeightedSVM(Dataset(X=X, y=y), kernel=kernel, sample_weight=weights)
    dense_solution, value = optimum(dense)
    forms = ("primal", "dual") if kernel == "linear" else ("dual",)
    for layer in ("matrix", "cvxpy", "pyomo") if kernel == "linear" else ("matrix", "cvxpy"):
        for form in forms:
            solution = direct(sparse, layer, form)
            assert close(sparse.objective(solution), value, 1e-6)
    np.testing.assert_allclose(
        sparse.decision_function(solution, X), dense.decision_function(dense_solution, X), atol=1e-4
    )
    if kernel == "linear":
        primal = sparse.build("matrix", "primal").problem
        assert primal.A.nnz == X.nnz + 2 * y.size  # [diag(y) X, y, I]
        assert sp.issparse(sparse._z())


# ------------------------------------------------------------------------------- evaluation
def test_decision_function_paths_agree(weights):
    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y), sample_weight=weights)
    solution, value = optimum(model, "cvxpy", "dual")
    from_alpha = {"alpha": solution["alpha"], "intercept": solution["intercept"]}
    new = np.random.default_rng(0).normal(size=(7, 3))
    np.testing.assert_allclose(
        model.decision_function(from_alpha, new), model.decision_function(solution, new), atol=1e-9
    )
    assert model.objective(from_alpha) == pytest.approx(value, rel=1e-9)
    assert set(np.unique(model.predict(solution, new))) <= {-1.0, 1.0}
    with pytest.raises(DataError, match="3 features"):
        model.decision_function(solution, new[:, :2])
    with pytest.raises(ModelError, match="'alpha'"):
        model.objective({"intercept": [0.0]})


def test_kernel_blocks_match_the_full_gram(monkeypatch, weights):
    import optframe.models._common as common

    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y), kernel=RBF(gamma=0.5), sample_weight=weights)
    solution, _ = optimum(model)
    v = solution["alpha"] * y
    K = RBF(gamma=0.5).matrix(X)
    expected = 0.5 * v @ K @ v + model.upper_bounds @ np.maximum(
        0.0, 1.0 - y * (K @ v + solution["intercept"][0])
    )
    monkeypatch.setattr(common, "BLOCK_ENTRIES", 7 * y.size)  # blocks of 7 rows
    assert model.objective(solution) == pytest.approx(expected, rel=1e-12)


def test_dataclass_behaviour(weights):
    X, y = classification_data()
    model = WeightedSVM(Dataset(X=X, y=y), C=2, kernel="rbf", sample_weight=list(weights))
    assert model.C == 2.0
    assert isinstance(model.kernel, RBF)
    assert isinstance(model.sample_weight, np.ndarray)
    with pytest.raises(dataclasses.FrozenInstanceError):
        model.C = 1.0
    other = dataclasses.replace(model, C=4.0)
    np.testing.assert_allclose(other.upper_bounds, 4.0 * weights)
    np.testing.assert_allclose(other.weights, weights)


# ------------------------------------------------------------------------------- bad input
def test_bad_input():
    X, y = classification_data()
    data = Dataset(X=X, y=y)
    with pytest.raises(DataError, match="NaN"):
        Dataset(X=np.where(np.eye(60, 3) == 1, np.nan, X), y=y)
    with pytest.raises(DataError, match=r"holds 0\b"):
        WeightedSVM(Dataset(X=X, y=(y + 1) / 2))
    with pytest.raises(DataError, match=r"0\.5, 2"):
        WeightedSVM(Dataset(X=X, y=np.r_[0.5, 2.0, y[2:]]))
    with pytest.raises(DataError, match=r"class -1 is missing"):
        WeightedSVM(Dataset(X=X, y=np.ones(60)))
    with pytest.raises(DataError, match=r"class \+1 is missing"):
        WeightedSVM(Dataset(X=X, y=-np.ones(60)))
    with pytest.raises(DataError, match="zero total sample weight"):
        WeightedSVM(data, sample_weight=np.where(y > 0, 0.0, 1.0))
    with pytest.raises(DataError, match="non-negative"):
        WeightedSVM(data, sample_weight=np.r_[-1.0, np.ones(59)])
    with pytest.raises(DataError, match="non-negative"):
        Dataset(X=X, y=y, sample_weight=np.r_[-1.0, np.ones(59)])
    with pytest.raises(DataError, match="zero everywhere"):
        WeightedSVM(data, sample_weight=np.zeros(60))
    with pytest.raises(ModelError, match="one place"):
        WeightedSVM(Dataset(X=X, y=y, sample_weight=np.ones(60)), sample_weight=np.ones(60))
    for C in (0.0, -1.0, np.nan, np.inf):
        with pytest.raises(ModelError, match="C must be"):
            WeightedSVM(data, C=C)
    with pytest.raises(ModelError, match="C must be"):
        WeightedSVM(data, C="large")
    with pytest.raises(DataError, match=r"data\.y is None"):
        WeightedSVM(Dataset(X=X))
    with pytest.raises(ModelError, match="unknown kernel"):
        WeightedSVM(data, kernel="sigmoid")
    with pytest.raises(ModelError, match="fit_intercept"):
        WeightedSVM(data, fit_intercept=None)
    model = WeightedSVM(data, kernel=RBF(gamma=0.5))
    for layer in model.layers:
        with pytest.raises(ModelError, match=r"primal form .* linear kernel"):
            model.build(layer, "primal")
    with pytest.raises(ModelError, match="pyomo layer"):
        model.build("pyomo")


def test_kernel_dual_refuses_an_oversized_gram_matrix():
    n = 16385  # 8 n^2 bytes > 2 GiB
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    model = WeightedSVM(Dataset(X=np.zeros((n, 1)), y=y), kernel="rbf")
    for layer in ("matrix", "cvxpy"):
        with pytest.raises(ModelError, match="GiB"):
            model.build(layer)
    linear = WeightedSVM(Dataset(X=np.zeros((n, 1)), y=y))
    assert linear.build("matrix", "dual").problem.P.nnz == 1  # no n x n matrix for linear
