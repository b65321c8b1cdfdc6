"""Readers on small files written by the tests, in every supported compression."""

import bz2
import gzip
import lzma

import h5py
import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from optframe.data import read_csv, read_hdf5, read_libsvm, read_mat, read_pmlb
from optframe.data.readers import compression_of
from optframe.errors import DataError

COMPRESSORS = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}

LIBSVM_TEXT = b"+1 1:0.5 3:2\n-1 2:1.5\n+1 1:-1 2:1 3:1\n"


def _write(path, data: bytes, suffix: str):
    target = path.with_name(path.name + suffix)
    target.write_bytes(COMPRESSORS[suffix](data))
    return target


@pytest.mark.parametrize("suffix", list(COMPRESSORS))
def test_read_libsvm_every_compression(tmp_path, suffix):
    path = _write(tmp_path / "toy", LIBSVM_TEXT, suffix)
    X, y = read_libsvm(path)
    assert sp.issparse(X)
    assert X.format == "csr"
    assert X.shape == (3, 3)
    np.testing.assert_array_equal(y, [1, -1, 1])
    np.testing.assert_array_equal(X.toarray(), [[0.5, 0, 2], [0, 1.5, 0], [-1, 1, 1]])


def test_read_libsvm_n_features_and_zero_based(tmp_path):
    path = _write(tmp_path / "toy", LIBSVM_TEXT, ".xz")
    X, _ = read_libsvm(path, n_features=10)
    assert X.shape == (3, 10)
    X0, _ = read_libsvm(_write(tmp_path / "zb", b"1 0:1 2:3\n-1 1:2\n", ""), zero_based=True)
    np.testing.assert_array_equal(X0.toarray(), [[1, 0, 3], [0, 2, 0]])
    with pytest.raises(DataError, match="toy"):
        read_libsvm(path, n_features=2)


def test_readers_raise_dataerror_for_missing_and_corrupt_files(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_libsvm(tmp_path / "nope.xz")
    bad = tmp_path / "bad.xz"
    bad.write_bytes(b"this is not xz")
    for reader in (read_libsvm, read_pmlb, read_csv, read_mat):
        with pytest.raises(DataError, match=r"bad\.xz"):
            reader(bad)
    with pytest.raises(DataError, match=r"bad\.xz"):
        read_hdf5(bad, "train")


def test_compression_of():
    assert compression_of("a/b.tsv.gz") == "gz"
    assert compression_of("a9a.xz") == "xz"
    assert compression_of("adult.tst.bz2") == "bz2"
    assert compression_of("a9a") is None
    assert compression_of("usps.h5") is None


@pytest.mark.parametrize("suffix", [".gz", ".xz", ""])
def test_read_pmlb_finds_target_by_name(tmp_path, suffix):
    last = b"a\tb\ttarget\n1\t2\t0\n3\t4\t1\n"
    X, y = read_pmlb(_write(tmp_path / "last.tsv", last, suffix))
    np.testing.assert_array_equal(X, [[1, 2], [3, 4]])
    np.testing.assert_array_equal(y, [0, 1])
    first = b"target\ta\tb\n1\t5\t6\n0\t7\t8\n"
    X, y = read_pmlb(_write(tmp_path / "first.tsv", first, suffix))
    np.testing.assert_array_equal(X, [[5, 6], [7, 8]])
    np.testing.assert_array_equal(y, [1, 0])


def test_read_pmlb_errors(tmp_path):
    with pytest.raises(DataError, match="no column named 'target'"):
        read_pmlb(_write(tmp_path / "x.tsv", b"a\tb\n1\t2\n", ".gz"))
    with pytest.raises(DataError, match="no rows"):
        read_pmlb(_write(tmp_path / "y.tsv", b"a\ttarget\n", ".gz"))


def test_read_csv_headers_label_column_and_crlf(tmp_path):
    text = b"r,g,b,skin\r\n1,2,3,1\r\n4,5,6,2\r\n"
    X, y = read_csv(_write(tmp_path / "skin.csv", text, ".xz"), label_column=-1)
    np.testing.assert_array_equal(X, [[1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(y, [1, 2])
    numeric_header = b"0,1,2\n+1,0.5,1e-3\n-1,2,3\n"
    path = _write(tmp_path / "guide.csv", numeric_header, ".bz2")
    X, y = read_csv(path, label_column=0, header=True)
    np.testing.assert_array_equal(y, [1, -1])
    np.testing.assert_allclose(X, [[0.5, 1e-3], [2, 3]])
    X_all, y_all = read_csv(path)  # "auto" cannot tell a numeric header from data
    assert X_all.shape == (3, 2)
    np.testing.assert_array_equal(y_all, [0, 1, -1])
    with pytest.raises(DataError, match="out of range"):
        read_csv(path, label_column=5, header=True)
    with pytest.raises(DataError):
        read_csv(_write(tmp_path / "txt.csv", b"1,2\n3,x\n", ""), header=False)


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_read_mat_dense_and_sparse(tmp_path, suffix):
    dense = np.arange(12, dtype=np.uint8).reshape(4, 3)
    labels = np.array([[1], [2], [1], [2]], dtype=np.uint8)
    raw = tmp_path / "dense.mat"
    scipy.io.savemat(raw, {"X": dense, "Y": labels})
    X, y = read_mat(_write(tmp_path / "d.mat", raw.read_bytes(), suffix))
    assert isinstance(X, np.ndarray)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X, dense)
    np.testing.assert_array_equal(y, [1, 2, 1, 2])

    sparse = sp.random(5, 7, density=0.3, format="csc", random_state=0)
    raw = tmp_path / "sparse.mat"
    scipy.io.savemat(raw, {"X": sparse, "y": np.ones((5, 1))})
    X, y = read_mat(_write(tmp_path / "s.mat", raw.read_bytes(), suffix))
    assert sp.issparse(X)
    assert X.format == "csr"
    np.testing.assert_allclose(X.toarray(), sparse.toarray())
    assert y.shape == (5,)
    with pytest.raises(DataError, match="no variable 'Z'"):
        read_mat(raw, x_key="Z")


@pytest.mark.parametrize("suffix", ["", ".xz"])
def test_read_hdf5_groups(tmp_path, suffix):
    raw = tmp_path / "u.h5"
    with h5py.File(raw, "w") as h:
        for group, n in (("train", 4), ("test", 2)):
            h[f"{group}/data"] = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
            h[f"{group}/target"] = np.arange(n, dtype=np.int32)
    path = _write(tmp_path / "usps.h5", raw.read_bytes(), suffix)
    X, y = read_hdf5(path, "test")
    assert X.shape == (2, 3)
    assert X.dtype == np.float64
    np.testing.assert_array_equal(y, [0, 1])
    with pytest.raises(DataError, match=r"no group 'valid'.*\['test', 'train'\]"):
        read_hdf5(path, "valid")
