r"""Kernel functions: full matrices, selected rows and diagonals, for dense or sparse data.

No method forms an n x n matrix unless it is asked for one (:meth:`Kernel.matrix`); drivers that
work on large data ask for rows (:meth:`Kernel.rows`) or the diagonal (:meth:`Kernel.diagonal`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.errors import ModelError
from optframe.validation import check_number


def _real(value: Any, what: str, *, low: float, strict: bool, hint: str = "") -> float:
    """``value`` as a finite float ``> low`` (``strict``) or ``>= low``, else a ModelError.

    The one rule of :func:`optframe.validation.check_number` (``what`` is "owner name");
    ``hint`` is added to the message.
    """
    owner, name = what.split(" ", 1)
    try:
        number = check_number(value, name, owner, low=low, low_open=strict)
    except ModelError as error:
        raise ModelError(f"{error}{hint}") from None
    assert number is not None
    return number


def _rows(X: ArrayLike) -> NDArray[np.float64] | sp.csr_array:
    if sp.issparse(X):
        return sp.csr_array(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    return X.reshape(1, -1) if X.ndim == 1 else X


_DENSE_ENTRIES = 1 << 24


def _inner(X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
    X, Y = _rows(X), _rows(Y)
    if sp.issparse(X) and sp.issparse(Y) and Y.shape[0] * Y.shape[1] <= _DENSE_ENTRIES:
        # The result is dense anyway: sparse x dense (one pass over X's non-zeros per column of
        # the dense factor) is several times faster than scipy's sparse x sparse product.
        return np.asarray(X @ Y.toarray().T)
    product = X @ Y.T
    return product.toarray() if sp.issparse(product) else np.asarray(product)


def _squared_norms(X: ArrayLike) -> NDArray[np.float64]:
    X = _rows(X)
    if sp.issparse(X):
        return np.asarray(X.multiply(X).sum(axis=1)).ravel()
    return np.einsum("ij,ij->i", X, X)


class Kernel(abc.ABC):
    """A positive semidefinite kernel :math:`k(x, z)`."""

    @abc.abstractmethod
    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        """Return the matrix :math:`[k(x_i, y_j)]_{ij}` (shape ``(len(X), len(Y))``)."""

    def matrix(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return the full Gram matrix of ``X`` (an n x n array: use only for small n)."""
        return self(X, X)

    def rows(self, X: ArrayLike, index: ArrayLike) -> NDArray[np.float64]:
        """Return rows ``index`` of the Gram matrix of ``X``, shape ``(len(index), n)``."""
        X = _rows(X)
        return self(X[np.asarray(index)], X)

    @abc.abstractmethod
    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return the diagonal :math:`k(x_i, x_i)` of the Gram matrix of ``X``."""


@dataclass(frozen=True)
class Linear(Kernel):
    r""":math:`k(x, z) = x^\top z`."""

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        """Return the kernel matrix between the rows of ``X`` and ``Y``."""
        return _inner(X, Y)

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return :math:`k(x_i, x_i)` for every row of ``X``."""
        return _squared_norms(X)


@dataclass(frozen=True)
class RBF(Kernel):
    r""":math:`k(x, z) = \exp(-\gamma \lVert x - z\rVert^2)`, with a finite ``gamma > 0``.

    ``gamma`` is a number (numpy scalars included), stored as a float; ``None`` and strings such
    as scikit-learn's ``"scale"`` are refused with ModelError, since a kernel has no data to
    compute them from (the :mod:`optframe.sklearn` estimators take ``gamma="scale"``).
    """

    gamma: float = 1.0

    def __post_init__(self) -> None:
        hint = (
            " (RBF has no data to compute scikit-learn's 'scale' from: pass a number such as "
            "1 / (n_features * X.var()), or use the optframe.sklearn estimators, which take "
            "gamma='scale')"
            if self.gamma is None or isinstance(self.gamma, str)
            else ""
        )
        gamma = _real(self.gamma, "RBF gamma", low=0.0, strict=True, hint=hint)
        object.__setattr__(self, "gamma", gamma)

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        """Return the kernel matrix between the rows of ``X`` and ``Y``."""
        # in place: one m x n temporary instead of four
        distances = _inner(X, Y)
        distances *= -2.0
        distances += _squared_norms(X)[:, None]
        distances += _squared_norms(Y)[None, :]
        np.maximum(distances, 0.0, out=distances)
        distances *= -self.gamma
        return np.exp(distances, out=distances)

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return :math:`k(x_i, x_i)` for every row of ``X``."""
        return np.ones(_rows(X).shape[0])


@dataclass(frozen=True)
class Polynomial(Kernel):
    r""":math:`k(x, z) = (\gamma\, x^\top z + c_0)^d`, with integer ``degree >= 1``.

    ``gamma`` must be finite and > 0, ``coef0`` finite and >= 0 (which keeps the kernel PSD);
    anything else (NaN, inf, strings, ``None``) raises ModelError. The parameters are stored as
    ``int`` and ``float``.
    """

    degree: int = 3
    gamma: float = 1.0
    coef0: float = 1.0

    def __post_init__(self) -> None:
        degree = _real(self.degree, "Polynomial degree", low=1.0, strict=False)
        if not degree.is_integer():
            raise ModelError(f"Polynomial degree must be an integer >= 1; got {self.degree!r}")
        gamma = _real(self.gamma, "Polynomial gamma", low=0.0, strict=True)
        coef0 = _real(
            self.coef0, "Polynomial coef0", low=0.0, strict=False, hint=" (>= 0 keeps it PSD)"
        )
        object.__setattr__(self, "degree", int(degree))
        object.__setattr__(self, "gamma", gamma)
        object.__setattr__(self, "coef0", coef0)

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        """Return the kernel matrix between the rows of ``X`` and ``Y``."""
        return (self.gamma * _inner(X, Y) + self.coef0) ** int(self.degree)

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return :math:`k(x_i, x_i)` for every row of ``X``."""
        return (self.gamma * _squared_norms(X) + self.coef0) ** int(self.degree)


def mean_squared_distance(X: ArrayLike) -> float:
    r"""Mean squared distance over all ordered pairs :math:`i \ne j`, in O(m d).

    .. math:: \frac{1}{m(m-1)} \sum_{i \ne j} \lVert x_i - x_j \rVert^2
        = \frac{2m}{m-1} \Big(\tfrac1m \sum_i \lVert x_i \rVert^2
        - \lVert \bar x \rVert^2\Big)

    Frandi et al. set the RBF width :math:`\sigma^2` to it (``RBF(gamma=1 / (2 * it))``).
    Dense or sparse ``X`` with at least two rows.
    """
    m = X.shape[0]
    if m < 2:
        raise ModelError(f"mean_squared_distance needs at least two rows; got {m}")
    rows = _rows(X)
    mean = np.asarray(rows.mean(axis=0)).ravel()
    return float(2.0 * (_squared_norms(rows).mean() - mean @ mean) * m / (m - 1))


def as_kernel(kernel: Kernel | str) -> Kernel:
    """Turn ``"linear"``, ``"rbf"`` or ``"poly"`` (default parameters) or a Kernel into a Kernel."""
    if isinstance(kernel, Kernel):
        return kernel
    named = {"linear": Linear, "rbf": RBF, "poly": Polynomial, "polynomial": Polynomial}
    if kernel not in named:
        raise ModelError(
            f"unknown kernel {kernel!r}; use one of {sorted(named)} or a Kernel object"
        )
    return named[kernel]()


_BLOCK_ENTRIES = 1 << 22


class ClusterMeanKernel(Kernel):
    r"""The kernel between weighted cluster means in the feature space of ``base``.

    For clusters :math:`C_p` of the rows of ``X`` with sample weights :math:`s_i` and totals
    :math:`S_p`, the mean :math:`\bar\phi_p = \sum_{i \in C_p} s_i \phi(x_i) / S_p` is never formed;
    its kernel is

    .. math::

        \bar k(p, q) = \frac{1}{S_p S_q} \sum_{i \in C_p} \sum_{j \in C_q} s_i s_j\, k(x_i, x_j),
        \qquad \bar K = A K A^\top,\quad A_{pi} = s_i / S_p \ (i \in C_p).

    The points this kernel takes are cluster ids, as a column (shape ``(k, 1)``). :math:`\bar K`
    (k x k) is computed once, a block of rows of :math:`K` at a time: it costs all :math:`n^2`
    kernel values (Park and Klabjan, Appendix B; notes/aid.md section 3.8) but never holds an
    n x n matrix.

    Parameters
    ----------
    base : Kernel
        The kernel of the original rows.
    X : array (n, d) or sparse
        The original rows.
    weights : array (n,)
        Sample weights :math:`s_i` (rows with weight 0 or label -1 belong to no cluster).
    labels : array (n,) of int
        Cluster id of each row in ``0..k-1``, or -1.
    k : int
        Number of clusters.
    """

    def __init__(self, base: Kernel, X: ArrayLike, weights: ArrayLike, labels: ArrayLike, k: int):
        self.base = base
        X = _rows(X)
        labels = np.asarray(labels, dtype=np.int64)
        weights = np.asarray(weights, dtype=np.float64)
        kept = np.flatnonzero((labels >= 0) & (weights > 0))
        totals = np.bincount(labels[kept], weights=weights[kept], minlength=k)
        share = weights[kept] / totals[labels[kept]]
        columns = np.arange(kept.size)
        averaging = sp.csr_array((share, (labels[kept], columns)), shape=(k, kept.size))
        members = X[kept]
        gram = np.zeros((k, k))
        step = max(1, _BLOCK_ENTRIES // max(1, kept.size))
        for start in range(0, kept.size, step):
            block = base(members[start : start + step], members)  # (b, n_kept)
            gram += averaging[:, start : start + step] @ np.asarray(averaging @ block.T).T
        self.gram = 0.5 * (gram + gram.T)
        self.k = int(k)

    def __repr__(self) -> str:
        return f"ClusterMeanKernel({self.base!r}, k={self.k})"

    def _ids(self, X: ArrayLike) -> NDArray[np.int64]:
        ids = np.asarray(X).reshape(-1).astype(np.int64)
        if ids.size and (ids.min() < 0 or ids.max() >= self.k):
            raise ModelError(f"cluster ids must lie in 0..{self.k - 1}")
        return ids

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        r"""Return :math:`\bar k` between the clusters listed in ``X`` and in ``Y``."""
        return self.gram[np.ix_(self._ids(X), self._ids(Y))]

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        r"""Return :math:`\bar k(p, p)` for every cluster id in ``X``."""
        return np.diag(self.gram)[self._ids(X)].copy()
