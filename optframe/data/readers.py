"""Readers for the file formats of the benchmark data.

Every reader takes a path, decompresses ``.xz``, ``.bz2`` and ``.gz`` files transparently (the
compression is chosen from the file name's last suffix; any other name is read as is) and returns
``(X, y)``: ``X`` a float64 matrix (for sparse formats a scipy CSR array with 32-bit indices
where they fit, see :func:`optframe.data.sparse.as_csr`; a dense array otherwise) and ``y`` a
float64 vector with the labels or targets exactly as stored in the file. Label
conventions (``{-1, +1}``, class codes) are applied later by :func:`optframe.data.load_dataset`.

Every problem with a file (missing, corrupt, wrong layout) raises
:class:`~optframe.errors.DataError` naming the file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.data.sparse import as_csr
from optframe.errors import DataError

__all__ = [
    "compression_of",
    "open_binary",
    "read_csv",
    "read_hdf5",
    "read_libsvm",
    "read_mat",
    "read_pmlb",
]

PathLike = str | os.PathLike[str]
Vector = NDArray[np.float64]

_OPENERS: dict[str, Callable[..., IO[bytes]]] = {
    ".xz": lzma.open,
    ".lzma": lzma.open,
    ".bz2": bz2.open,
    ".gz": gzip.open,
}
# Errors a damaged or mislabelled compressed stream raises while being read.
_STREAM_ERRORS = (OSError, EOFError, lzma.LZMAError, ValueError)


def compression_of(path: PathLike) -> str | None:
    """Return the compression implied by a file name.

    Parameters
    ----------
    path : str or path-like
        File name; only its last suffix is looked at.

    Returns
    -------
    str or None
        ``"xz"``, ``"bz2"`` or ``"gz"``, or ``None`` for an uncompressed file.
    """
    suffix = Path(path).suffix.lower()
    if suffix in _OPENERS:
        return "xz" if suffix == ".lzma" else suffix[1:]
    return None


def _check_file(path: PathLike) -> Path:
    p = Path(path).expanduser()
    if not p.is_file():
        raise DataError(f"Data file not found: {p}")
    return p


@contextmanager
def open_binary(path: PathLike) -> Iterator[IO[bytes]]:
    """Open a possibly compressed file for binary reading.

    Parameters
    ----------
    path : str or path-like
        A plain file, or one ending in ``.xz``, ``.bz2`` or ``.gz``.

    Yields
    ------
    file object
        A binary stream of the decompressed content.

    Raises
    ------
    DataError
        If the file does not exist.
    """
    p = _check_file(path)
    opener = _OPENERS.get(p.suffix.lower(), open)
    with opener(p, "rb") as fh:
        yield fh


def _read_bytes(path: PathLike) -> bytes:
    p = _check_file(path)
    try:
        with open_binary(p) as fh:
            return fh.read()
    except _STREAM_ERRORS as exc:
        raise DataError(f"Could not decompress {p}: {exc}") from exc


def read_libsvm(
    path: PathLike,
    n_features: int | None = None,
    *,
    zero_based: bool | Literal["auto"] = "auto",
) -> tuple[sp.csr_array, Vector]:
    """Read a LIBSVM / SVMlight sparse text file.

    Parameters
    ----------
    path : str or path-like
        The file, plain or compressed (``.xz``, ``.bz2``, ``.gz``).
    n_features : int, optional
        Number of columns of ``X``. Needed when the largest feature index in the file is smaller
        than the data set's width (``a1a`` uses indices up to 119 of 123). By default the largest
        index in the file.
    zero_based : bool or "auto"
        Whether feature indices start at 0. ``"auto"`` treats the file as zero-based when any index
        is 0 (the LIBSVM convention is one-based).

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n, m)
        The features.
    y : ndarray of shape (n,)
        The labels or targets as written in the file.

    Raises
    ------
    DataError
        If the file is missing, cannot be decompressed or parsed, or holds more than
        ``n_features`` columns.
    """
    from sklearn.datasets import load_svmlight_file

    p = _check_file(path)
    try:
        with open_binary(p) as fh:
            X, y = load_svmlight_file(
                fh, n_features=n_features, dtype=np.float64, zero_based=zero_based
            )
    except _STREAM_ERRORS as exc:
        raise DataError(f"Could not read LIBSVM file {p}: {exc}") from exc
    return as_csr(X), np.asarray(y, dtype=np.float64)


def read_pmlb(path: PathLike, target: str = "target") -> tuple[NDArray[np.float64], Vector]:
    """Read a PMLB tab-separated file with a header row.

    Parameters
    ----------
    path : str or path-like
        The ``.tsv.gz`` file (plain or other compressions work too).
    target : str
        Name of the target column. PMLB puts it last, but it is looked up by name
        (``breast_cancer_wisconsin`` has it first).

    Returns
    -------
    X : ndarray of shape (n, m)
        All columns except the target, in file order.
    y : ndarray of shape (n,)
        The target column.

    Raises
    ------
    DataError
        If the file is missing or unreadable, has no column named ``target``, or holds values
        that are not numbers.
    """
    p = _check_file(path)
    try:
        with open_binary(p) as fh:
            text = io.TextIOWrapper(fh, encoding="utf-8", newline=None)
            header = text.readline().rstrip("\n").split("\t")
            if target not in header:
                raise DataError(
                    f"{p} has no column named {target!r}; its header is "
                    f"{header[:5]}{' ...' if len(header) > 5 else ''}."
                )
            data = _loadtxt(text, delimiter="\t")
    except DataError:
        raise
    except _STREAM_ERRORS as exc:
        raise DataError(f"Could not read PMLB file {p}: {exc}") from exc
    if data.shape[0] == 0:
        raise DataError(f"{p} has a header but no rows.")
    if data.shape[1] != len(header):
        raise DataError(f"{p}: header has {len(header)} columns but rows have {data.shape[1]}.")
    j = header.index(target)
    y = data[:, j].copy()
    X = np.delete(data, j, axis=1)
    return X, y


def read_mat(
    path: PathLike, x_key: str = "X", y_key: str = "Y"
) -> tuple[NDArray[np.float64] | sp.csr_array, Vector]:
    """Read a MATLAB v5 file holding a feature matrix and a label vector.

    Parameters
    ----------
    path : str or path-like
        The ``.mat`` or ``.mat.xz`` (``.bz2``, ``.gz``) file.
    x_key, y_key : str
        Variable names of the features and labels (scikit-feature uses ``X`` and ``Y``). A
        variable whose name differs only in case is accepted too.

    Returns
    -------
    X : ndarray or scipy.sparse.csr_array of shape (n, m)
        The features, as float64; a sparse matrix in the file stays sparse (CSR).
    y : ndarray of shape (n,)
        The labels as stored.

    Raises
    ------
    DataError
        If the file is missing or unreadable, or a variable is missing.
    """
    import scipy.io

    p = _check_file(path)
    raw = _read_bytes(p)
    if not raw:
        raise DataError(
            f"MATLAB file {p} is empty (0 bytes{' once decompressed' if compression_of(p) else ''})"
            "; the download or copy was cut short: delete it and fetch the file again."
        )
    try:
        mat = scipy.io.loadmat(io.BytesIO(raw))
    except (
        ValueError,
        TypeError,
        OSError,
        NotImplementedError,
        scipy.io.matlab.MatReadError,
    ) as exc:
        raise DataError(f"Could not read MATLAB file {p}: {exc}") from exc

    def get(key: str) -> object:
        if key in mat:
            return mat[key]
        for k in mat:
            if k.lower() == key.lower() and not k.startswith("__"):
                return mat[k]
        names = sorted(k for k in mat if not k.startswith("__"))
        raise DataError(f"{p} has no variable {key!r}; it holds {names}.")

    X = get(x_key)
    y = np.asarray(get(y_key), dtype=np.float64).ravel()
    X = as_csr(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
    if X.shape[0] != y.shape[0]:
        raise DataError(f"{p}: {x_key} has {X.shape[0]} rows but {y_key} has {y.shape[0]}.")
    return X, y


def read_hdf5(
    path: PathLike, group: str, x_key: str = "data", y_key: str = "target"
) -> tuple[NDArray[np.float64], Vector]:
    """Read one group of an HDF5 file in the ``usps.h5`` layout.

    Parameters
    ----------
    path : str or path-like
        The ``.h5`` file, plain or compressed (``.h5.xz`` is decompressed into memory).
    group : str
        Group name, e.g. ``"train"`` or ``"test"``.
    x_key, y_key : str
        Dataset names inside the group.

    Returns
    -------
    X : ndarray of shape (n, m)
        ``group/data`` as float64.
    y : ndarray of shape (n,)
        ``group/target`` as float64.

    Raises
    ------
    DataError
        If the file is missing or not HDF5, or the group or a dataset is missing (the message
        lists what the file holds).
    """
    import h5py

    p = _check_file(path)
    source: object = p if compression_of(p) is None else io.BytesIO(_read_bytes(p))
    try:
        h5 = h5py.File(source, "r")
    except OSError as exc:
        raise DataError(f"Could not open HDF5 file {p}: {exc}") from exc
    with h5:
        if group not in h5:
            raise DataError(f"{p} has no group {group!r}; it holds {sorted(h5.keys())}.")
        g = h5[group]
        for key in (x_key, y_key):
            if key not in g:
                raise DataError(f"{p}: group {group!r} has no dataset {key!r} ({sorted(g)}).")
        X = np.asarray(g[x_key][()], dtype=np.float64)
        y = np.asarray(g[y_key][()], dtype=np.float64).ravel()
    if X.ndim != 2 or X.shape[0] != y.shape[0]:
        raise DataError(f"{p}: {group}/{x_key} has shape {X.shape}, {y_key} has {y.shape}.")
    return X, y


def _is_number(token: str) -> bool:
    try:
        float(token)
    except ValueError:
        return False
    return True


def read_csv(
    path: PathLike,
    label_column: int = 0,
    header: bool | Literal["auto"] = "auto",
    delimiter: str = ",",
) -> tuple[NDArray[np.float64], Vector]:
    """Read a dense, all-numeric delimited text file.

    Parameters
    ----------
    path : str or path-like
        The ``.csv`` or ``.csv.xz`` (``.bz2``, ``.gz``) file. Windows line ends are accepted.
    label_column : int
        Index of the label column (negative counts from the end: ``-1`` is the last one).
    header : bool or "auto"
        Whether the first line is a header to skip. ``"auto"`` skips it when one of its fields is
        not a number. A header made of numbers (the ``svmguide`` files have ``0,1,2,...``) is
        only skipped with ``header=True``.
    delimiter : str
        Field separator.

    Returns
    -------
    X : ndarray of shape (n, m)
        All other columns, in file order.
    y : ndarray of shape (n,)
        The label column.

    Raises
    ------
    DataError
        If the file is missing or unreadable, holds a non-numeric value, or ``label_column`` is
        out of range.
    """
    p = _check_file(path)
    try:
        with open_binary(p) as fh:
            text = io.TextIOWrapper(fh, encoding="utf-8", newline=None)
            first = text.readline()
            skip = header
            if header == "auto":
                skip = not all(_is_number(t) for t in first.strip().split(delimiter))
            rows = [] if skip else [first]
            data = _loadtxt(_chain(rows, text), delimiter=delimiter)
    except _STREAM_ERRORS as exc:
        raise DataError(f"Could not read CSV file {p}: {exc}") from exc
    if data.shape[0] == 0:
        raise DataError(f"{p} holds no data rows.")
    k = data.shape[1]
    if not -k <= label_column < k:
        raise DataError(f"label_column={label_column} is out of range for {p} ({k} columns).")
    j = label_column % k
    return np.delete(data, j, axis=1), data[:, j].copy()


def _loadtxt(lines: Iterable[str], delimiter: str) -> NDArray[np.float64]:
    with warnings.catch_warnings():  # an empty file is reported by the caller, not as a warning
        warnings.filterwarnings("ignore", message=".*input contained no data")
        return np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, ndmin=2)


def _chain(first: list[str], rest: IO[str]) -> Iterator[str]:
    yield from first
    yield from rest
