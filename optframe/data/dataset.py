"""The :class:`Dataset` every model is built on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.data.sparse import as_csr
from optframe.errors import DataError

Matrix = NDArray[np.float64] | sp.csr_array | sp.csr_matrix


def _refuse_complex(values: Any, what: str) -> None:
    """DataError for complex entries: converting them would silently drop the imaginary part."""
    if np.iscomplexobj(values):
        raise DataError(
            f"{what} holds complex numbers; optframe's models are real-valued and dropping the "
            f"imaginary part would solve another problem. Pass the real part ({what}.real), or "
            f"the real and imaginary parts as separate features (np.hstack([{what}.real, "
            f"{what}.imag]))."
        )


def _all_finite(values: NDArray[np.float64]) -> bool:
    """Whether every entry is finite: a finite sum settles it without an n x m temporary."""
    if values.flags.c_contiguous or values.flags.f_contiguous:
        flat = values.reshape(-1, order="A")
        if np.isfinite(np.einsum("i->", flat)):  # a NaN or an inf would make the sum one
            return True
    return bool(np.all(np.isfinite(values)))


def _as_matrix(X: Any) -> Matrix:
    if sp.issparse(X):
        _refuse_complex(X.dtype.type(0), "X")
        X = as_csr(X)
        values = X.data
    else:
        try:
            X = np.asarray(X)
        except (TypeError, ValueError) as exc:
            raise DataError(f"X could not be read as a numeric matrix: {exc}") from exc
        _refuse_complex(X, "X")
        try:
            X = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise DataError(f"X could not be read as a numeric matrix: {exc}") from exc
        if X.ndim == 1:
            raise DataError(
                f"X must be 2-D (n_samples, n_features); got a 1-D array of length {X.shape[0]}. "
                "Reshape a single feature with X.reshape(-1, 1)."
            )
        if X.ndim != 2:
            raise DataError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}.")
        values = X
    if not _all_finite(values):
        bad = np.argwhere(~np.isfinite(X.toarray() if sp.issparse(X) else X))[0]
        raise DataError(
            f"X contains NaN or inf (first at row {bad[0]}, column {bad[1]}); "
            "impute or drop those entries first."
        )
    if X.shape[0] == 0:
        raise DataError("X has no rows.")
    return X


def _as_vector(v: Any, n: int, what: str) -> NDArray[np.float64]:
    try:
        v = np.asarray(v)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what} could not be read as numbers: {exc}") from exc
    _refuse_complex(v, what)
    try:
        v = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"{what} could not be read as numbers: {exc}") from exc
    if v.ndim == 2 and 1 in v.shape:
        v = v.ravel()
    if v.ndim != 1:
        raise DataError(f"{what} must be a 1-D array; got shape {v.shape}.")
    if v.shape[0] != n:
        raise DataError(f"{what} has {v.shape[0]} entries but X has {n} rows.")
    if not np.all(np.isfinite(v)):
        i = int(np.flatnonzero(~np.isfinite(v))[0])
        raise DataError(f"{what} contains NaN or inf (first at index {i}).")
    return v


@dataclass(frozen=True, eq=False)
class Dataset:
    """Samples, targets and sample weights, validated once.

    Parameters
    ----------
    X : array of shape (n, m) or scipy sparse matrix
        Features. Sparse input is kept sparse: CSR, float64, with 32-bit ``indices`` and
        ``indptr`` where they fit, so scikit-learn's ``SVC`` and ``LinearSVC`` take it as is.
    y : array of shape (n,), optional
        Targets: real values for regression, labels for classification. Which label values are
        allowed depends on the model (``{-1, +1}`` for SVMs, ``{-1, 0, +1}`` for S3VM, ...).
    sample_weight : array of shape (n,), optional
        Non-negative weights, not all zero. ``None`` means all ones.
    name : str
        A label used in tables and results.
    meta : dict
        Free-form provenance (source file, split, ...).

    Raises
    ------
    DataError
        If ``X`` or ``y`` holds NaN, inf or complex numbers, the shapes disagree, or the
        weights are negative or all zero.
    """

    X: Matrix
    y: NDArray[np.float64] | None = None
    sample_weight: NDArray[np.float64] | None = None
    name: str = "data"
    meta: dict[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        X = _as_matrix(self.X)
        object.__setattr__(self, "X", X)
        n = X.shape[0]
        if self.y is not None:
            object.__setattr__(self, "y", _as_vector(self.y, n, "y"))
        if self.sample_weight is not None:
            w = _as_vector(self.sample_weight, n, "sample_weight")
            if np.any(w < 0):
                i = int(np.flatnonzero(w < 0)[0])
                raise DataError(f"sample_weight must be non-negative; entry {i} is {w[i]}.")
            if not np.any(w > 0):
                raise DataError("sample_weight is zero everywhere; at least one sample must count.")
            object.__setattr__(self, "sample_weight", w)

    @property
    def n_samples(self) -> int:
        """Number of rows of ``X``."""
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        """Number of columns of ``X``."""
        return int(self.X.shape[1])

    @property
    def is_sparse(self) -> bool:
        """Whether ``X`` is a scipy sparse matrix."""
        return sp.issparse(self.X)

    @property
    def weights(self) -> NDArray[np.float64]:
        """The sample weights, with ``None`` expanded to ones."""
        if self.sample_weight is None:
            return np.ones(self.n_samples)
        return self.sample_weight

    def subset(self, rows: ArrayLike) -> Dataset:
        """Return the dataset restricted to ``rows`` (indices or a boolean mask)."""
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return Dataset(
            X=self.X[rows],
            y=None if self.y is None else self.y[rows],
            sample_weight=None if self.sample_weight is None else self.sample_weight[rows],
            name=self.name,
            meta=dict(self.meta),
        )

    def with_weights(self, sample_weight: ArrayLike | None) -> Dataset:
        """Return the same samples with other weights."""
        return Dataset(
            X=self.X, y=self.y, sample_weight=sample_weight, name=self.name, meta=self.meta
        )

    def __repr__(self) -> str:
        kind = "sparse" if self.is_sparse else "dense"
        return f"Dataset(name={self.name!r}, n={self.n_samples}, m={self.n_features}, {kind})"
