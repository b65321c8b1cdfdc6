import numpy as np
import pytest
import scipy.sparse as sp

from optframe import DataError
from optframe.data import Dataset


def test_dense_and_sparse_are_kept(rng):
    X = rng.normal(size=(5, 3))
    assert not Dataset(X=X).is_sparse
    data = Dataset(X=sp.csr_matrix(X), y=np.ones(5))
    assert data.is_sparse
    assert data.n_samples == 5
    assert data.n_features == 3


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"X": [[1.0, np.nan]], "y": [1.0]}, "NaN or inf"),
        ({"X": sp.csr_array([[1.0, np.inf]]), "y": [1.0]}, "NaN or inf"),
        ({"X": [[1.0], [2.0]], "y": [1.0, np.nan]}, "y contains NaN"),
        ({"X": [[1.0], [2.0]], "y": [1.0]}, "y has 1 entries but X has 2 rows"),
        ({"X": [1.0, 2.0]}, "must be 2-D"),
        ({"X": np.zeros((0, 2))}, "no rows"),
        ({"X": [[1.0], [2.0]], "sample_weight": [1.0, -1.0]}, "non-negative"),
        ({"X": [[1.0], [2.0]], "sample_weight": [0.0, 0.0]}, "zero everywhere"),
        ({"X": [["a"]]}, "numeric"),
    ],
    ids=[
        "nan-X",
        "inf-sparse-X",
        "nan-y",
        "shape",
        "1d-X",
        "empty",
        "negative-w",
        "zero-w",
        "text",
    ],
)
def test_bad_data_raises_data_error(kwargs, message):
    with pytest.raises(DataError, match=message):
        Dataset(**kwargs)


def test_subset_and_weights(rng):
    data = Dataset(X=rng.normal(size=(6, 2)), y=np.arange(6.0), sample_weight=np.arange(1.0, 7.0))
    part = data.subset([4, 1])
    np.testing.assert_array_equal(part.y, [4.0, 1.0])
    np.testing.assert_array_equal(part.weights, [5.0, 2.0])
    np.testing.assert_array_equal(data.with_weights(None).weights, np.ones(6))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_non_finite_entry_is_found_in_either_order(order, bad):
    X = np.asfortranarray(np.ones((40, 3))) if order == "F" else np.ones((40, 3))
    X[17, 2] = bad
    with pytest.raises(DataError, match=r"first at row 17, column 2"):
        Dataset(X=X)
    X[17, 2] = 1.0
    X[:, 1] = bad  # every entry of a column: the fast check sees its sum, NaN or an infinity
    with pytest.raises(DataError, match="NaN or inf"):
        Dataset(X=X[:, 1:])


def test_finite_entries_whose_sum_overflows_are_accepted():
    X = np.full((4, 2), 1e308)  # the fast check's sum is inf; the entries are finite
    assert Dataset(X=X).n_samples == 4
