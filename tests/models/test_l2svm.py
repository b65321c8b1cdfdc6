"""L2SVM: its layers and forms agree, the oracle, the recovery, LIBLINEAR equivalence, errors."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.svm import LinearSVC

import optframe as of
from optframe.capabilities import SimplexQP
from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.kernels import RBF, Polynomial
from optframe.models import L2SVM
from optframe.models.l2svm import best_rho

TIGHT = {"tol_gap_rel": 1e-12, "tol_gap_abs": 1e-12, "tol_feas": 1e-12}


def data(m=60, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    if sparse:
        X[np.abs(X) < 0.5] = 0.0
        X = sp.csr_array(X)
    return Dataset(X=X, y=y)


@pytest.mark.parametrize("sparse", [False, True])
def test_forms_and_layers_agree_linear(sparse):
    model = L2SVM(data(sparse=sparse), C=3.0)
    results = [
        of.solve(model, backend=b, solver_options=TIGHT)
        for b in ("matrix:clarabel", "cvxpy:clarabel")
    ]
    primal = of.solve(model.__class__(model.data, C=3.0), backend="clarabel")
    reference = results[0].objective
    for result in [*results, primal]:
        assert result.status is of.Status.OPTIMAL
        assert result.objective == pytest.approx(reference, rel=1e-6)
    # the primal through its own form, with the margin-row duals as alpha
    built = of.solve(
        model,
        driver=of.drivers.Direct(form="primal"),
        backend="matrix:clarabel",
        solver_options=TIGHT,
    )
    assert built.objective == pytest.approx(reference, rel=1e-6)
    np.testing.assert_allclose(built.solution["alpha"], results[0].solution["alpha"], atol=1e-5)
    np.testing.assert_allclose(built.solution["w"], results[0].solution["w"], atol=1e-6)
    # strong duality: P* = -R*/2 and the dual value of alpha is a lower bound
    alpha = results[0].solution["alpha"]
    R = alpha @ model.modified_gram() @ alpha
    assert reference == pytest.approx(-R / 2, rel=1e-6)
    assert model.dual_value(alpha) == pytest.approx(-R / 2, rel=1e-10)
    assert results[0].solution["rho"][0] == pytest.approx(R, rel=1e-5)


@pytest.mark.parametrize("kernel", [RBF(gamma=0.7), Polynomial(degree=2, gamma=0.5, coef0=1.0)])
def test_kernel_dual_layers_agree(kernel):
    model = L2SVM(data(), C=5.0, kernel=kernel)
    a = of.solve(model, backend="matrix:clarabel", solver_options=TIGHT)
    b = of.solve(model, backend="cvxpy:clarabel", solver_options=TIGHT)
    assert a.status is of.Status.OPTIMAL
    assert b.status is of.Status.OPTIMAL
    assert a.objective == pytest.approx(b.objective, rel=1e-6)
    assert not model.offers("cvxpy", "primal")
    with pytest.raises(ModelError, match="primal"):
        model.build("cvxpy", "primal")


def test_matches_liblinear_squared_hinge_with_penalized_bias():
    """The C/2 mapping of notes section 1.2: (w/rho, b/rho) = LinearSVC(C/2, squared hinge)."""
    C = 4.0
    model = L2SVM(data(m=150, seed=4), C=C)
    result = of.solve(model, backend="clarabel", solver_options=TIGHT)
    standard = model.standard_form(result.solution)
    svc = LinearSVC(C=C / 2, loss="squared_hinge", intercept_scaling=1, tol=1e-8, max_iter=10**6)
    svc.fit(model.data.X, model.data.y)
    np.testing.assert_allclose(standard["w"], svc.coef_.ravel(), atol=1e-6)
    assert standard["intercept"][0] == pytest.approx(svc.intercept_[0], abs=1e-6)
    # a different cost does not match: the factor 2 matters
    other = LinearSVC(C=C, loss="squared_hinge", tol=1e-8, max_iter=10**6)
    other.fit(model.data.X, model.data.y)
    assert np.max(np.abs(standard["w"] - other.coef_.ravel())) > 1e-3


def test_recovery_oracle_and_prediction():
    model = L2SVM(data(), C=2.0, kernel="linear")
    rng = np.random.default_rng(1)
    alpha = rng.random(model.data.n_samples)
    solution = model.structure(SimplexQP).recover(alpha)
    assert solution["alpha"].sum() == pytest.approx(1.0)
    # w from alpha equals the explicit feature map, and h(x) = w'x + b = sum a_i y_i (k + 1)
    a, y, X = solution["alpha"], model.data.y, model.data.X
    np.testing.assert_allclose(solution["w"], X.T @ (a * y))
    assert solution["intercept"][0] == pytest.approx(a @ y)
    kernel_form = {k: v for k, v in solution.items() if k != "w"}
    Z = rng.normal(size=(7, 3))
    np.testing.assert_allclose(
        model.decision_function(solution, Z), model.decision_function(kernel_form, Z)
    )
    # rho is the exact minimizer of the primal given (w, b); the oracle is above the dual value
    value = model.objective(solution)
    rho = solution["rho"][0]
    for delta in (-1e-3, 1e-3):
        shifted = dict(solution, rho=np.array([rho + delta]))
        assert model.objective(shifted) >= value
    assert value >= model.dual_value(solution["alpha"])
    assert model.violation(solution) <= 1e-12
    assert set(model.predict(solution, Z)) <= {-1.0, 1.0}


def test_best_rho():
    u = np.array([0.3, -0.2, 1.5, 0.1])
    C = 2.0
    rho = best_rho(u, C)
    assert C * np.maximum(0.0, rho - u).sum() == pytest.approx(1.0)


@pytest.mark.parametrize("C", [0.0, -1.0, float("inf"), float("nan"), "a"])
def test_bad_C(C):
    with pytest.raises(ModelError, match="C"):
        L2SVM(data(), C=C)


def test_bad_data_and_kernel():
    d = data()
    with pytest.raises(DataError, match="single class"):
        L2SVM(Dataset(X=d.X, y=np.ones(d.n_samples)))
    with pytest.raises(DataError, match=r"\{-1, \+1\}"):
        L2SVM(Dataset(X=d.X, y=np.where(d.y > 0, 1.0, 0.0)))
    with pytest.raises(ModelError, match="gamma"):
        L2SVM(d, kernel=RBF(gamma=-1.0))
    with pytest.raises(ModelError, match="gamma"):
        L2SVM(d, kernel=Polynomial(degree=2, gamma=0.0))
    with pytest.raises(ModelError, match="kernel"):
        L2SVM(d, kernel="sigmoid")
    with pytest.raises(DataError):
        L2SVM(d.X)
