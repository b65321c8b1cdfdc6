"""Both models through ``optframe.solve`` with every back-end that can take them.

The reference is an independent direct solve (see ``model_testing``); every back-end, layer and
form must reach it. OSQP (first-order) gets a looser tolerance. SCIP's back-ends take LPs but not
QPs, so they appear for LAD only.
"""

import numpy as np
import pytest
from model_testing import classification_data, close, direct, regression_data

import optframe as of
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.kernels import RBF
from optframe.models import LADRegression, WeightedSVM

LP_BACKENDS = [
    "auto",
    "highs",
    "matrix:highs",
    "cvxpy:highs",
    "pyomo:highs",
    "clarabel",
    "matrix:clarabel",
    "cvxpy:clarabel",
    "osqp",
    "cvxpy:osqp",
    "piqp",
    "cvxpy:piqp",
    "scip",
]
QP_BACKENDS = [
    "auto",
    "clarabel",
    "matrix:clarabel",
    "cvxpy:clarabel",
    "osqp",
    "cvxpy:osqp",
    "piqp",
    "cvxpy:piqp",
    "highs",
    "matrix:highs",
    "cvxpy:highs",
    "pyomo:highs",
]
KERNEL_BACKENDS = [
    "auto",
    "clarabel",
    "cvxpy:clarabel",
    "osqp",
    "cvxpy:osqp",
    "piqp",
    "cvxpy:piqp",
    "matrix:highs",
]


def tolerance(backend):
    return 1e-4 if "osqp" in backend else 1e-6


def check(result, model, reference, backend, form):
    if "osqp" in backend:  # first-order: "solved inaccurate" (CONVERGED) is acceptable
        assert result.status.is_success, (result.status, result.stats)
    else:
        assert result.status is of.Status.OPTIMAL, (result.status, result.stats)
    assert result.stats["form"] == form
    assert close(result.objective, reference, tolerance(backend))
    assert result.objective == pytest.approx(model.objective(result.solution), rel=1e-12)
    if result.bound is not None:
        assert result.bound <= result.objective + tolerance(backend) * max(1.0, reference)


@pytest.fixture(scope="module")
def lad_model():
    X, y = regression_data(n=50)
    w = np.random.default_rng(3).uniform(0.2, 3.0, y.size)
    return LADRegression(Dataset(X=X, y=y), sample_weight=w)


@pytest.fixture(scope="module")
def svm_model():
    X, y = classification_data(n=50)
    w = np.random.default_rng(3).uniform(0.5, 2.0, y.size)
    return WeightedSVM(Dataset(X=X, y=y), C=0.7, sample_weight=w)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")  # cvxpy, on OSQP's LP solves
@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("backend", LP_BACKENDS)
def test_lad(lad_model, backend, form):
    reference = lad_model.objective(direct(lad_model, "matrix", form))
    result = of.solve(lad_model, Direct(form=form), backend=backend)
    check(result, lad_model, reference, backend, form)
    assert set(result.solution) >= {"beta", "intercept", "residual"}
    X = lad_model.data.X
    np.testing.assert_allclose(result.predict(X), lad_model.data.y - result.solution["residual"])


@pytest.mark.parametrize("form", ["primal", "dual"])
@pytest.mark.parametrize("backend", QP_BACKENDS)
def test_weighted_svm_linear(svm_model, backend, form):
    reference = svm_model.objective(direct(svm_model, "cvxpy", form))
    result = of.solve(svm_model, Direct(form=form), backend=backend)
    check(result, svm_model, reference, backend, form)
    assert set(result.solution) >= {"w", "intercept", "xi"}


@pytest.mark.parametrize("backend", KERNEL_BACKENDS)
def test_weighted_svm_kernel(svm_model, backend):
    model = WeightedSVM(
        svm_model.data, C=0.7, kernel=RBF(gamma=0.5), sample_weight=svm_model.weights
    )
    reference = model.objective(direct(model, "cvxpy"))
    result = of.solve(model, backend=backend)
    check(result, model, reference, backend, "dual")
    assert set(result.solution) >= {"alpha", "intercept", "xi"}
    X = model.data.X
    np.testing.assert_array_equal(result.predict(X), model.predict(result.solution, X))
    assert set(np.unique(result.predict(X))) <= {-1.0, 1.0}
