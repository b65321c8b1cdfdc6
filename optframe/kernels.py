r"""Kernel functions: full matrices, selected rows and diagonals, for dense or sparse data.

No method forms an n x n matrix unless it is asked for one (:meth:`Kernel.matrix`); drivers that
work on large data ask for rows (:meth:`Kernel.rows`) or the diagonal (:meth:`Kernel.diagonal`).
"""

from __future__ import annotations

import abc
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.errors import ModelError


def _rows(X: ArrayLike) -> NDArray[np.float64] | sp.csr_array:
    if sp.issparse(X):
        return sp.csr_array(X, dtype=np.float64)
    X = np.asarray(X, dtype=np.float64)
    return X.reshape(1, -1) if X.ndim == 1 else X


def _inner(X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
    product = _rows(X) @ _rows(Y).T
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
    r""":math:`k(x, z) = \exp(-\gamma \lVert x - z\rVert^2)`, with ``gamma > 0``."""

    gamma: float = 1.0

    def __post_init__(self) -> None:
        if not self.gamma > 0:
            raise ModelError(f"RBF gamma must be positive; got {self.gamma}")

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        """Return the kernel matrix between the rows of ``X`` and ``Y``."""
        distances = _squared_norms(X)[:, None] + _squared_norms(Y)[None, :] - 2.0 * _inner(X, Y)
        np.maximum(distances, 0.0, out=distances)
        return np.exp(-self.gamma * distances)

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return :math:`k(x_i, x_i)` for every row of ``X``."""
        return np.ones(_rows(X).shape[0])


@dataclass(frozen=True)
class Polynomial(Kernel):
    r""":math:`k(x, z) = (\gamma\, x^\top z + c_0)^d`, with integer ``degree >= 1``."""

    degree: int = 3
    gamma: float = 1.0
    coef0: float = 1.0

    def __post_init__(self) -> None:
        if int(self.degree) != self.degree or self.degree < 1:
            raise ModelError(f"Polynomial degree must be an integer >= 1; got {self.degree}")
        if not self.gamma > 0:
            raise ModelError(f"Polynomial gamma must be positive; got {self.gamma}")
        if self.coef0 < 0:
            raise ModelError(
                f"Polynomial coef0 must be >= 0 to keep the kernel PSD; got {self.coef0}"
            )

    def __call__(self, X: ArrayLike, Y: ArrayLike) -> NDArray[np.float64]:
        """Return the kernel matrix between the rows of ``X`` and ``Y``."""
        return (self.gamma * _inner(X, Y) + self.coef0) ** int(self.degree)

    def diagonal(self, X: ArrayLike) -> NDArray[np.float64]:
        """Return :math:`k(x_i, x_i)` for every row of ``X``."""
        return (self.gamma * _squared_norms(X) + self.coef0) ** int(self.degree)


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
