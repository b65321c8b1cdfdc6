"""Sparse data reaches scikit-learn's libsvm/liblinear wrappers as loaded (32-bit indices)."""

import numpy as np
import scipy.sparse as sp
from sklearn.svm import SVC, LinearSVC

from optframe.data import Dataset
from optframe.data.sparse import as_csr


def test_svc_and_linear_svc_fit_a1a_as_loaded(loaded):
    data = loaded("a1a", "train")
    assert data.X.indices.dtype == np.int32
    assert data.X.indptr.dtype == np.int32
    svc = SVC(kernel="linear", C=0.1).fit(data.X, data.y)
    linear = LinearSVC(C=0.1).fit(data.X, data.y)
    assert svc.score(data.X, data.y) > 0.8
    assert linear.score(data.X, data.y) > 0.8


def test_subsets_and_user_matrices_get_32_bit_indices(rng):
    X = sp.random(40, 7, density=0.3, format="csr", random_state=0)
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    data = Dataset(X=X, y=np.where(rng.normal(size=40) > 0, 1.0, -1.0))
    part = data.subset(np.arange(0, 40, 3))
    for matrix in (data.X, part.X):
        assert matrix.indices.dtype == np.int32
        assert matrix.indptr.dtype == np.int32
    np.testing.assert_array_equal(data.X.toarray(), X.toarray())
    assert X.indices.dtype == np.int64  # the caller's matrix is left as it was


def test_as_csr_sums_duplicates_without_touching_the_input():
    X = sp.csr_array((np.ones(3), np.array([1, 0, 1]), np.array([0, 3])), shape=(1, 3))
    Y = as_csr(X)
    np.testing.assert_array_equal(Y.toarray(), [[1.0, 2.0, 0.0]])
    np.testing.assert_array_equal(X.indices, [1, 0, 1])
    assert Y.has_canonical_format
