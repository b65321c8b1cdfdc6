r"""Products of dense data by blocks of rows, spread over numba's threads, in a fixed order.

The certificates of models with an equality row (:math:`[X, \mathbf 1]^\top\theta = 0`) read
the data several times: the Gram matrix :math:`A_F^\top A_F` of the free rows, then
:math:`A^\top\theta` and :math:`A\,s` in each least-squares pass
(:func:`optframe.duality.project_null`), and :math:`\lvert A\rvert^\top\lvert\theta\rvert`
for the rounding bound. For dense data with many rows these passes go here:

* blocks of :data:`BLOCK_ROWS` rows, handed to whichever numba thread is free (one block at a
  time), each block's product by BLAS at one thread (``np.dot`` on the block's rows);
* the blocks' partial sums are added in the blocks' order, so a result does not depend on the
  number of threads;
* :class:`WithOnes` stands for :math:`[X, \mathbf 1]` without copying :math:`X`, and the
  free rows are a mask, not a copy.

Smaller data (fewer than :data:`PARALLEL_FROM` entries) stays on NumPy, so a small solve
compiles none of these kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.threads import blas_threads

#: Rows per block: a block of 41 columns is 2.7 MB, within a core's cache share.
BLOCK_ROWS = 8192
#: Entries (rows x columns) from which dense products go to the compiled blocks.
PARALLEL_FROM = 2**21


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


def with_ones(X: Any) -> Any:
    r""":math:`[X, \mathbf 1]`: a :class:`WithOnes` for dense ``X``, a stacked CSR for sparse."""
    if sp.issparse(X):
        return sp.hstack([X, np.ones((X.shape[0], 1))], format="csr")
    return WithOnes(np.ascontiguousarray(X, dtype=np.float64))


def _blocked(A: Any) -> tuple[NDArray[np.float64], bool] | None:
    """``(X, ones)`` when ``A`` goes to the compiled blocks, else None (NumPy or SciPy)."""
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


def _count(n: int) -> int:
    return (n + BLOCK_ROWS - 1) // BLOCK_ROWS


class _Spread:
    """Blocks to whichever numba thread is free, BLAS at one thread inside them."""

    def __enter__(self) -> None:
        self._chunk = numba.set_parallel_chunksize(1)
        self._blas = blas_threads(1)
        self._blas.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._blas.__exit__(*exc)
        numba.set_parallel_chunksize(self._chunk)


@numba.njit(cache=True, parallel=True)
def _gram_blocks(X, keep, ones, out):  # pragma: no cover - compiled
    n, m = X.shape
    k = m + 1 if ones else m
    for b in numba.prange(out.shape[0]):
        lo, hi = b * BLOCK_ROWS, min(n, (b + 1) * BLOCK_ROWS)
        count = 0
        for i in range(lo, hi):
            if keep[i]:
                count += 1
        rows = np.empty((count, k))
        t = 0
        for i in range(lo, hi):
            if keep[i]:
                rows[t, :m] = X[i]
                if ones:
                    rows[t, m] = 1.0
                t += 1
        out[b] = np.dot(rows.T, rows)


@numba.njit(cache=True, parallel=True)
def _transposed_blocks(X, v, ones, absolute, out):  # pragma: no cover - compiled
    n, m = X.shape
    for b in numba.prange(out.shape[0]):
        lo, hi = b * BLOCK_ROWS, min(n, (b + 1) * BLOCK_ROWS)
        part = np.abs(v[lo:hi]) if absolute else v[lo:hi].copy()
        block = np.abs(X[lo:hi]) if absolute else X[lo:hi]
        out[b, :m] = np.dot(part, block)
        if ones:
            out[b, m] = part.sum()


@numba.njit(cache=True, parallel=True)
def _times_blocks(X, s, ones, out):  # pragma: no cover - compiled
    n, m = X.shape
    shift = s[m] if ones else 0.0
    w = s[:m].copy()
    for b in numba.prange((n + BLOCK_ROWS - 1) // BLOCK_ROWS):
        lo, hi = b * BLOCK_ROWS, min(n, (b + 1) * BLOCK_ROWS)
        out[lo:hi] = np.dot(X[lo:hi], w) + shift


def gram(A: Any, keep: NDArray[np.bool_] | None = None) -> NDArray[np.float64]:
    r""":math:`A_F^\top A_F` over the rows ``keep`` (all when None), as a dense array."""
    blocked = _blocked(A)
    if blocked is None:
        A = materialized(A)
        A_kept = A if keep is None or keep.all() else A[keep]
        product = A_kept.T @ A_kept
        return np.asarray(product.toarray() if sp.issparse(product) else product, np.float64)
    X, ones = blocked
    mask = np.ones(X.shape[0], dtype=np.bool_) if keep is None else np.asarray(keep, np.bool_)
    k = X.shape[1] + int(ones)
    out = np.empty((_count(X.shape[0]), k, k))
    with _Spread():
        _gram_blocks(X, mask, ones, out)
    return out.sum(axis=0)


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
    return _transposed(blocked, np.asarray(v, dtype=np.float64).reshape(-1), absolute=True)


def _transposed(
    blocked: tuple[NDArray[np.float64], bool], v: NDArray[np.float64], absolute: bool
) -> NDArray[np.float64]:
    X, ones = blocked
    out = np.empty((_count(X.shape[0]), X.shape[1] + int(ones)))
    with _Spread():
        _transposed_blocks(X, v, ones, absolute, out)
    return out.sum(axis=0)


def times(A: Any, s: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`A\,s`."""
    s = np.asarray(s, dtype=np.float64).reshape(-1)
    blocked = _blocked(A)
    if blocked is None:
        return np.asarray(materialized(A) @ s, dtype=np.float64).reshape(-1)
    X, ones = blocked
    out = np.empty(X.shape[0])
    with _Spread():
        _times_blocks(X, s, ones, out)
    return out


@numba.njit(cache=True, parallel=True)
def _nearest_blocks(points, centers, norms, rows, labels):  # pragma: no cover - compiled
    n, k = points.shape[0], centers.shape[0]
    centers_t = np.ascontiguousarray(centers.T)
    for b in numba.prange((n + rows - 1) // rows):
        lo, hi = b * rows, min(n, (b + 1) * rows)
        products = np.dot(points[lo:hi], centers_t)
        for i in range(hi - lo):
            best, least = 0, norms[0] - 2.0 * products[i, 0]
            for c in range(1, k):
                distance = norms[c] - 2.0 * products[i, c]
                if distance < least:
                    best, least = c, distance
            labels[lo + i] = best


def nearest_centers(
    points: NDArray[np.float64], centers: NDArray[np.float64]
) -> NDArray[np.int64] | None:
    r"""The nearest of ``centers`` to each point (the first on a tie), or None for NumPy's way.

    :math:`\arg\min_c \lVert z_c\rVert^2 - 2\,x^\top z_c` by blocks of at most 2^20 distances,
    over numba's threads; None when ``points`` has fewer than :data:`PARALLEL_FROM` entries
    times the centers.
    """
    n, k = points.shape[0], centers.shape[0]
    if n * k * points.shape[1] < PARALLEL_FROM or n < 2 * BLOCK_ROWS or k == 0:
        return None
    points = np.ascontiguousarray(points, dtype=np.float64)
    centers = np.ascontiguousarray(centers, dtype=np.float64)
    norms = np.einsum("ij,ij->i", centers, centers)
    labels = np.empty(n, dtype=np.int64)
    with _Spread():
        _nearest_blocks(points, centers, norms, max(1, 2**20 // k), labels)
    return labels


@numba.njit(cache=True, parallel=True)
def _group_sums(X, members, starts, share, spans, out):  # pragma: no cover - compiled
    m = out.shape[1]
    for s in numba.prange(spans.shape[0] - 1):
        for g in range(spans[s], spans[s + 1]):
            for f in range(m):
                out[g, f] = 0.0
            for t in range(starts[g], starts[g + 1]):
                i, weight = members[t], share[t]
                for f in range(m):
                    out[g, f] += weight * X[i, f]


def weighted_group_sums(
    X: Any, groups: NDArray[np.int64], rows: NDArray[np.int64], share: NDArray[np.float64], k: int
) -> NDArray[np.float64] | None:
    r""":math:`\sum_{t: g_t = c} s_t\, x_{r_t}` for each group :math:`c < k`, or None for SciPy.

    Each group is summed by one thread over its rows in increasing order; the groups are
    spread over numba's threads in 64 spans per thread. None for sparse or small ``X``.
    """
    if not isinstance(X, np.ndarray) or X.ndim != 2 or rows.size * X.shape[1] < PARALLEL_FROM:
        return None
    order = np.argsort(groups, kind="stable")
    starts = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(groups, minlength=k), out=starts[1:])
    spans = np.unique(np.linspace(0, k, 64 * numba.config.NUMBA_NUM_THREADS + 1).astype(np.int64))
    out = np.empty((k, X.shape[1]))
    X = np.ascontiguousarray(X, dtype=np.float64)
    _group_sums(X, rows[order], starts, share[order], spans, out)
    return out
