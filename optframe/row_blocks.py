r"""Products of dense data by blocks of rows, spread over the solve's threads, in a fixed order.

The certificates of models with an equality row (:math:`[X, \mathbf 1]^\top\theta = 0`) read
the data several times: the Gram matrix :math:`A_F^\top A_F` of the free rows, then
:math:`A^\top\theta` and :math:`A\,s` in each least-squares pass
(:func:`optframe.duality.project_null`), and :math:`\lvert A\rvert^\top\lvert\theta\rvert`
for the rounding bound; AID assigns every point to its nearest center and averages the
clusters. For dense data with many rows these passes go here:

* blocks of :data:`BLOCK_ROWS` rows, handed to whichever of the solve's threads is free (a
  pool of as many threads as numba's count, :func:`optframe.threads.thread_limits`), each
  block's product by NumPy with BLAS at one thread (BLAS releases the GIL, so the blocks run at
  once);
* the blocks' partial sums are added in the blocks' order, so a result does not depend on the
  number of threads;
* :class:`WithOnes` stands for :math:`[X, \mathbf 1]` without copying :math:`X`, and the
  free rows are a mask, not a copy.

Nothing here is compiled. Smaller data (fewer than :data:`PARALLEL_FROM` entries) stays on
one NumPy call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numba
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.threads import blas_threads

#: Rows per block: a block of 41 columns is 2.7 MB, within a core's cache share.
BLOCK_ROWS = 8192
#: Entries (rows x columns) from which dense products go by blocks.
PARALLEL_FROM = 2**21

T = TypeVar("T")


@dataclass(frozen=True)
class WithOnes:
    r""":math:`[X, \mathbf 1]` for a dense ``X`` (n, m), the column of ones implied (no copy)."""

    X: NDArray[np.float64]

    @property
    def shape(self) -> tuple[int, int]:
        """``(n, m + 1)``."""
        return self.X.shape[0], self.X.shape[1] + 1

    def toarray(self) -> NDArray[np.float64]:
        """The stacked array (a copy)."""
        return np.hstack([self.X, np.ones((self.X.shape[0], 1))])


def spread(work: Callable[[int, int], T], n: int, rows: int = BLOCK_ROWS) -> list[T]:
    """``work(lo, hi)`` on the blocks ``[lo, hi)`` of ``rows`` rows, in the blocks' order.

    The blocks go to a pool of ``numba.get_num_threads()`` threads (the solve's count), each
    taking the next block when it is free; BLAS runs at one thread meanwhile.
    """
    bounds = [(lo, min(n, lo + rows)) for lo in range(0, n, rows)]
    threads = min(numba.get_num_threads(), len(bounds))
    with blas_threads(1):
        if threads <= 1:
            return [work(lo, hi) for lo, hi in bounds]
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(lambda bound: work(*bound), bounds))


def _in_order(parts: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
    total = np.array(parts[0], dtype=np.float64)
    for part in parts[1:]:
        total += part
    return total


def with_ones(X: Any) -> Any:
    r""":math:`[X, \mathbf 1]`: a :class:`WithOnes` for dense ``X``, a stacked CSR for sparse."""
    if sp.issparse(X):
        return sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    return WithOnes(np.ascontiguousarray(X, dtype=np.float64))


def _blocked(A: Any) -> tuple[NDArray[np.float64], bool] | None:
    """``(X, ones)`` when ``A`` goes by row blocks, else None (NumPy or SciPy)."""
    if isinstance(A, WithOnes):
        X, ones = A.X, True
    elif isinstance(A, np.ndarray) and A.ndim == 2:
        X, ones = A, False
    else:
        return None
    if X.shape[0] * X.shape[1] < PARALLEL_FROM or X.shape[0] < 2 * BLOCK_ROWS:
        return None
    if X.dtype != np.float64 or not X.flags.c_contiguous:
        X = np.ascontiguousarray(X, dtype=np.float64)
    return X, ones


def materialized(A: Any) -> Any:
    """``A`` for NumPy or SciPy: a :class:`WithOnes` stacked, anything else as it is."""
    return A.toarray() if isinstance(A, WithOnes) else A


def rows_of(A: Any, keep: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The rows ``keep`` of ``A`` as a dense array (a copy of those rows only)."""
    if isinstance(A, WithOnes):
        X = A.X[keep]
        return np.hstack([X, np.ones((X.shape[0], 1))])
    kept = A[keep]
    return kept.toarray() if sp.issparse(kept) else np.asarray(kept, dtype=np.float64)


def gram(A: Any, keep: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    r""":math:`A_F^\top A_F` over the rows ``keep`` (all when None), as a dense array."""
    blocked = _blocked(A)
    if blocked is None:
        A = materialized(A)
        A_kept = A if keep is None or keep.all() else A[keep]
        product = A_kept.T @ A_kept
        return np.asarray(product.toarray() if sp.issparse(product) else product, np.float64)
    X, ones = blocked
    mask = np.ones(X.shape[0]) if keep is None else np.asarray(keep, dtype=np.float64)
    m = X.shape[1]

    def block(lo: int, hi: int) -> NDArray[np.float64]:
        rows, weight = X[lo:hi], mask[lo:hi]
        out = np.empty((m + int(ones), m + int(ones)))
        out[:m, :m] = rows.T @ (rows * weight[:, None])
        if ones:
            sums = weight @ rows
            out[m, :m] = out[:m, m] = sums
            out[m, m] = weight.sum()
        return out

    return _in_order(spread(block, X.shape[0]))


def transposed_times(A: Any, v: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`A^\top v`."""
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    blocked = _blocked(A)
    if blocked is None:
        return np.asarray(materialized(A).T @ v, dtype=np.float64).reshape(-1)
    return _transposed(blocked, v, absolute=False)


def abs_transposed_times(A: Any, v: NDArray[np.float64]) -> NDArray[np.float64] | None:
    r""":math:`\lvert A\rvert^\top \lvert v\rvert` by the blocks, or None for NumPy's way."""
    blocked = _blocked(A)
    if blocked is None:
        return None
    return _transposed(blocked, np.abs(np.asarray(v, dtype=np.float64).reshape(-1)), True)


def _transposed(
    blocked: tuple[NDArray[np.float64], bool], v: NDArray[np.float64], absolute: bool
) -> NDArray[np.float64]:
    X, ones = blocked

    def block(lo: int, hi: int) -> NDArray[np.float64]:
        rows = np.abs(X[lo:hi]) if absolute else X[lo:hi]
        part = v[lo:hi] @ rows
        return np.append(part, v[lo:hi].sum()) if ones else part

    return _in_order(spread(block, X.shape[0]))


def times(A: Any, s: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`A\,s`."""
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    blocked = _blocked(A)
    if blocked is None:
        return np.asarray(materialized(A) @ s, dtype=np.float64).reshape(-1)
    X, ones = blocked
    w, shift = (s[:-1], float(s[-1])) if ones else (s, 0.0)
    out = np.empty(X.shape[0])

    def block(lo: int, hi: int) -> None:
        np.dot(X[lo:hi], w, out=out[lo:hi])
        if shift:
            out[lo:hi] += shift

    spread(block, X.shape[0])
    return out


def nearest_centers(
    points: NDArray[np.float64], centers: NDArray[np.float64]
) -> NDArray[np.int64] | None:
    r"""The nearest of ``centers`` to each point (the first on a tie), or None for NumPy's way.

    :math:`\arg\min_c \lVert z_c\rVert^2 - 2\,x^\top z_c` by blocks of at most 2^22 distances,
    over the solve's threads; None when ``points`` times the centers has fewer than
    :data:`PARALLEL_FROM` entries.
    """
    n, k = points.shape[0], centers.shape[0]
    if n * k * points.shape[1] < PARALLEL_FROM or n < 2 * BLOCK_ROWS or k == 0:
        return None
    norms = np.einsum("ij,ij->i", centers, centers)
    labels = np.empty(n, dtype=np.int64)

    def block(lo: int, hi: int) -> None:
        distances = norms[None, :] - 2.0 * (points[lo:hi] @ centers.T)
        labels[lo:hi] = np.argmin(distances, axis=1)

    spread(block, n, rows=max(1, 2**22 // k))
    return labels


def weighted_group_sums(X: Any, averaging: sp.csr_array) -> NDArray[np.float64] | None:
    r""":math:`M X` for a CSR ``averaging`` :math:`M` (one row per cluster), or None for SciPy.

    The clusters' rows of :math:`M` go by blocks over the solve's threads, each row's sum in
    SciPy's order (its members in increasing order). None for sparse or small ``X``.
    """
    if not isinstance(X, np.ndarray) or X.ndim != 2 or averaging.nnz * X.shape[1] < PARALLEL_FROM:
        return None
    k = averaging.shape[0]
    out = np.empty((k, X.shape[1]))
    rows = max(1, k // (8 * max(1, numba.get_num_threads())))

    def block(lo: int, hi: int) -> None:
        out[lo:hi] = averaging[lo:hi] @ X

    spread(block, k, rows=rows)
    return out
