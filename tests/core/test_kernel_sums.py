"""The compiled kernel sums against the kernels' own matrices, and the models' fast path."""

import numpy as np
import pytest
import scipy.sparse as sp

import optframe.models.empirical_risk as risk_module
from optframe.data import Dataset
from optframe.kernel_sums import kernel_code, kernel_times
from optframe.kernels import RBF, Linear, Polynomial
from optframe.models import L2SVM, WeightedSVM

KERNELS = [Linear(), RBF(gamma=0.3), Polynomial(degree=3, gamma=0.5, coef0=1.0)]


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("kernel", KERNELS, ids=["linear", "rbf", "poly"])
def test_kernel_times_is_the_matrix_product(kernel, sparse):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(70, 6)) * (rng.random((70, 6)) < (0.2 if sparse else 1.0))
    v = rng.normal(size=70) * (rng.random(70) < 0.6)
    points = sp.csr_array(X) if sparse else X
    expected = kernel.matrix(X) @ v
    np.testing.assert_allclose(kernel_times(kernel, points, v), expected, rtol=1e-12, atol=1e-12)


def test_other_kernels_have_no_compiled_form():
    from optframe.kernels import ClusterMeanKernel

    assert kernel_code(ClusterMeanKernel.__new__(ClusterMeanKernel)) is None


@pytest.mark.parametrize("model_class", [WeightedSVM, L2SVM])
def test_the_models_compiled_path_gives_the_same_certificate(model_class, monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(90, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=90) > 0, 1.0, -1.0)
    model = model_class(Dataset(X=X, y=y), C=2.0, kernel=RBF(gamma=0.4))
    v = rng.normal(size=90) * (rng.random(90) < 0.5)
    numpy_values = model.kernel_values(v)
    monkeypatch.setattr(risk_module, "COMPILED_SUMS_FROM", 0)
    fresh = model_class(Dataset(X=X, y=y), C=2.0, kernel=RBF(gamma=0.4))
    np.testing.assert_allclose(fresh.kernel_values(v), numpy_values, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kernel", KERNELS, ids=["linear", "rbf", "poly"])
def test_binary_points_are_summed_from_their_bits(kernel):
    from optframe.kernel_sums import points

    rng = np.random.default_rng(2)
    X = (rng.random((80, 130)) < 0.2).astype(float)  # 5.2 products by columns: bits
    v = rng.normal(size=80) * (rng.random(80) < 0.6)
    Z = points(sp.csr_array(X))[1]
    assert Z[0].shape == (80, 3)  # 130 features in three words
    expected = kernel.matrix(X) @ v
    got = kernel_times(kernel, sp.csr_array(X), v)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_only_canonical_binary_points_with_few_features_get_bits():
    from optframe.kernel_sums import binary_bits

    rng = np.random.default_rng(3)
    X = sp.csr_array((rng.random((20, 70)) < 0.3).astype(float))
    bits = binary_bits(X).view(np.uint64)
    np.testing.assert_array_equal(
        [[(int(word) >> b) & 1 for word in row for b in range(64)][:70] for row in bits],
        X.toarray(),
    )
    assert binary_bits(2.0 * X) is None  # a value other than 1
    sparse_columns = sp.csr_array((rng.random((50, 70)) < 0.1).astype(float))
    assert binary_bits(sparse_columns) is None  # 2 words against 0.7 products by columns
    assert binary_bits(sp.csr_array((rng.random((5, 600)) < 0.2).astype(float))) is None
    doubled = sp.csr_array((np.ones(2), np.array([1, 1]), np.array([0, 2])), shape=(1, 4))
    assert binary_bits(doubled) is None  # a duplicate entry (its value is 2)
