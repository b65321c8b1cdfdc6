import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from optframe import RBF, Linear, ModelError, Polynomial
from optframe.kernels import as_kernel, mean_squared_distance

CASES = [
    (Linear(), linear_kernel, {}),
    (RBF(gamma=0.3), rbf_kernel, {"gamma": 0.3}),
    (
        Polynomial(degree=3, gamma=0.5, coef0=1.0),
        polynomial_kernel,
        {"degree": 3, "gamma": 0.5, "coef0": 1.0},
    ),
]


@pytest.mark.parametrize(("kernel", "reference", "params"), CASES, ids=["linear", "rbf", "poly"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_kernel_matches_scikit_learn(rng, kernel, reference, params, sparse):
    X = rng.normal(size=(30, 5))
    X[X < -0.5] = 0.0
    Z = rng.normal(size=(7, 5))
    data = sp.csr_array(X) if sparse else X
    expected = reference(X, X, **params)
    np.testing.assert_allclose(kernel.matrix(data), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kernel(data, Z), reference(X, Z, **params), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(kernel.diagonal(data), np.diag(expected), rtol=1e-10)
    rows = np.array([3, 0, 17])
    np.testing.assert_allclose(kernel.rows(data, rows), expected[rows], rtol=1e-10, atol=1e-12)


def test_invalid_kernel_parameters_raise():
    with pytest.raises(ModelError, match="gamma"):
        RBF(gamma=0.0)
    with pytest.raises(ModelError, match="degree"):
        Polynomial(degree=1.5)
    with pytest.raises(ModelError, match="unknown kernel"):
        as_kernel("sigmoid")


@pytest.mark.parametrize("sparse", [False, True])
def test_mean_squared_distance_equals_the_pairwise_mean(rng, sparse):
    X = rng.normal(size=(30, 4)) * (rng.random((30, 4)) < 0.6)
    pairs = [np.sum((X[i] - X[j]) ** 2) for i in range(30) for j in range(30) if i != j]
    given = sp.csr_array(X) if sparse else X
    assert mean_squared_distance(given) == pytest.approx(np.mean(pairs), rel=1e-12)
    with pytest.raises(ModelError, match="two rows"):
        mean_squared_distance(X[:1])
