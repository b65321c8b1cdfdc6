r"""Kernel values and kernel sums :math:`G = c + a \circ K (a \circ x)`, compiled by numba.

The primitives every kernel method shares: a kernel value from an inner product
(:func:`kernel_from_dot`: 0 linear, 1 RBF, 2 polynomial), a vectorized exponential
(:func:`exp_neg`) and the bulk sum :func:`kernel_sums`, which the SMO driver's gradient from
scratch and the models' kernel products (:func:`kernel_times`, behind
``EmpiricalRisk.kernel_values``) both use. Points travel as ``Z = (X, indptr, indices, values,
scratch)`` (:func:`points`): dense rows of ``X``, or CSR arrays when ``indptr`` is not empty.
Binary CSR points (every stored value 1, few features, dense enough columns) also carry their
bits in ``X`` (:func:`binary_bits`): an inner product is then the popcount of an AND (a9a, 123
features in two words: a kernel row 7 times faster than by columns).

numba's cache does not track calls across modules: the drivers' kernels that call these keep
the version they were compiled with until their own file changes (touch ``smo_core.py`` and
``fw_core.py`` after an edit here).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import scipy.sparse as sp
from numba import types
from numba.extending import intrinsic
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from optframe.kernels import RBF, Kernel, Linear, Polynomial

K_BLOCK = 128  # rows per block of the kernel sums (dense points)
L_BLOCK = 2048  # support points per block of the kernel sums
SPARSE_BLOCK = 128  # rows per block of the kernel sums on CSR points
DENSE_FROM = 0.25  # share of non-zeros from which sparse points are made dense
BIT_WORDS_MAX = 8  # binary points with at most 64 * 8 features are bit-packed

_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_ROUND = 6755399441055744.0  # 1.5 * 2**52: x + _ROUND - _ROUND rounds x to an integer


@intrinsic
def popcount(typingctx, word):
    """The number of set bits of a uint64 (LLVM's ``ctpop``: one instruction on x86-64)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@numba.njit(cache=True, inline="always")
def common_bits(B, i, C, j):
    r"""The inner product of binary points: the set bits of ``B[i] & C[j]`` (uint64 words)."""
    total = np.uint64(0)
    for w in range(B.shape[1]):
        total += popcount(B[i, w] & C[j, w])
    return np.float64(total)


@numba.njit(cache=True)
def _pack_bits(n, indptr, indices, B):
    for k in range(n):
        for p in range(indptr[k], indptr[k + 1]):
            f = indices[p]
            B[k, f >> 6] |= np.uint64(1) << np.uint64(f & 63)


def binary_bits(X: Any) -> NDArray[np.float64] | None:
    r"""The rows of CSR ``X`` as bits, ``(n, words)`` uint64 viewed as float64; else ``None``.

    ``None`` unless every stored value is 1, the indices are canonical (sorted, no duplicates),
    there are at most ``64 * BIT_WORDS_MAX`` features, and a point's words are fewer than the
    products a kernel value costs by columns, :math:`\sum_f n_f^2 / n^2` (:math:`n_f` the
    points with feature f; see ``smo_core._sparse_block``). a9a: 2 words against 6.2 products
    (bits: kernel sums 3.2 times faster); w8a: 5 words against 1.3 (columns stay, 9% faster).
    """
    n, d = X.shape
    words = (d + 63) // 64
    if words > BIT_WORDS_MAX or not X.has_canonical_format or not np.all(X.data == 1.0):
        return None
    per_column = np.bincount(np.asarray(X.indices), minlength=d).astype(np.float64)
    if words >= float(per_column @ per_column) / max(n, 1) ** 2:
        return None
    B = np.zeros((n, max(words, 1)), dtype=np.uint64)
    _pack_bits(n, np.asarray(X.indptr, np.int64), np.asarray(X.indices, np.int64), B)
    return B.view(np.float64)


@numba.njit(cache=True, inline="always")
def kernel_from_dot(dot, sqn_i, sqn_j, kind, gamma, coef0, degree):
    """The kernel from <z_i, z_j>: 0 linear, 1 RBF, 2 polynomial."""
    if kind == 0:
        return dot
    if kind == 1:
        return math.exp(-gamma * max(sqn_i + sqn_j - 2.0 * dot, 0.0))
    return (gamma * dot + coef0) ** degree


@numba.njit(cache=True, fastmath={"contract"})
def exp_neg(out, gamma, bits):
    r"""``out[j] = exp(-gamma * out[j])`` for ``out >= 0`` (vectorized; within 1 ulp of libm).

    Cody-Waite reduction :math:`e^v = 2^k e^r`, :math:`|r| \le \ln 2 / 2`, Taylor polynomial of
    degree 13 (truncation below 1e-17), :math:`2^k` built in the exponent bits (``bits``: int64
    scratch of ``len(out)``). Values below :math:`e^{-708}` (subnormal range) become 0.
    """
    m = out.shape[0]
    scale = bits.view(np.float64)
    for j in range(m):
        v = -gamma * out[j]
        w = max(v, -708.0)
        k = (w * _LOG2E + _ROUND) - _ROUND
        r = (w - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 / 6227020800.0
        p = p * r + 1.0 / 479001600.0
        p = p * r + 1.0 / 39916800.0
        p = p * r + 1.0 / 3628800.0
        p = p * r + 1.0 / 362880.0
        p = p * r + 1.0 / 40320.0
        p = p * r + 1.0 / 5040.0
        p = p * r + 1.0 / 720.0
        p = p * r + 1.0 / 120.0
        p = p * r + 1.0 / 24.0
        p = p * r + 1.0 / 6.0
        p = p * r + 0.5
        p = p * r + 1.0
        p = p * r + 1.0
        bits[j] = ((np.int64(k) + 1023) << 52) if v >= -708.0 else 0
        out[j] = p
    for j in range(m):
        out[j] *= scale[j]


@numba.njit(cache=True, fastmath={"contract", "reassoc"})
def _dot(u, v):
    total = 0.0
    for t in range(u.shape[0]):
        total += u[t] * v[t]
    return total


@numba.njit(cache=True)
def _from_dots(D, sqn_k, sqn_l, kind, gamma, coef0, degree, bits):
    """Kernel values in place from the inner products ``D`` (rows k, columns l)."""
    for r in range(D.shape[0]):
        row = D[r]
        if kind == 1:
            s = sqn_k[r]
            for t in range(row.shape[0]):
                row[t] = max(s + sqn_l[t] - 2.0 * row[t], 0.0)
            exp_neg(row, gamma, bits[: row.shape[0]])
        elif kind == 2:
            for t in range(row.shape[0]):
                row[t] = (gamma * row[t] + coef0) ** degree


def kernel_sums(
    Z: tuple,
    sqn: NDArray[np.float64],
    kind: int,
    gamma: float,
    coef0: float,
    degree: float,
    a: NDArray[np.float64],
    c: NDArray[np.float64],
    x: NDArray[np.float64],
    lo: int,
    hi: int,
    G: NDArray[np.float64],
) -> None:
    r"""``G[k] = c_k + a_k \sum_{l: x_l \ne 0} a_l x_l k(z_k, z_l)`` for ``lo <= k < hi``.

    ``Z = (X, indptr, indices, values, scratch)`` with dense points as the rows of ``X`` (n, d).
    Linear kernel: :math:`w = \sum_l a_l x_l z_l`, then :math:`G_k = c_k + a_k z_k^\top w`
    (O(nnz)). Other kernels, dense points: blocks of ``K_BLOCK`` rows against ``L_BLOCK``
    support points, the inner products by BLAS (``np.dot``; the caller limits BLAS to one
    thread), O((hi - lo) |support| d). CSR points: one point at a time against the support's
    columns (as in :func:`_sparse_block`). Each ``G[k]`` is summed by one thread in a fixed
    order, so the result does not depend on the number of threads.

    Each of the three cases is a kernel of its own, compiled on its first call: a run compiles
    only the case its kernel and points need.
    """
    if kind == 0:
        _linear_sums(Z, a, c, x, lo, hi, G)
    elif Z[1].shape[0] > 0:
        _sparse_sums(Z, sqn, kind, gamma, coef0, degree, a, c, x, lo, hi, G)
    else:
        _dense_sums(Z, sqn, kind, gamma, coef0, degree, a, c, x, lo, hi, G)


@numba.njit(cache=True)
def _support(sqn, a, x):
    """The support of ``x``, its weights :math:`a_l x_l` and its squared norms."""
    support = np.flatnonzero(x)
    s = support.shape[0]
    v = np.empty(s)
    sqs = np.empty(s)
    for t in range(s):
        v[t] = a[support[t]] * x[support[t]]
        sqs[t] = sqn[support[t]]
    return support, v, sqs


@numba.njit(cache=True, parallel=True)
def _linear_sums(Z, a, c, x, lo, hi, G):
    """:func:`kernel_sums` of the linear kernel, dense or CSR points."""
    X, indptr, indices, values, scratch = Z
    sparse = indptr.shape[0] > 0
    d = scratch.shape[0] if sparse else X.shape[1]
    support = np.flatnonzero(x)
    s = support.shape[0]
    w = np.zeros(d)
    for t in range(s):
        ell = support[t]
        v = a[ell] * x[ell]
        if sparse:
            for p in range(indptr[ell], indptr[ell + 1]):
                w[indices[p]] += v * values[p]
        else:
            for f in range(d):
                w[f] += v * X[ell, f]
    for k in numba.prange(lo, hi):
        dot = 0.0
        if sparse:
            for p in range(indptr[k], indptr[k + 1]):
                dot += values[p] * w[indices[p]]
        else:
            for f in range(d):
                dot += X[k, f] * w[f]
        G[k] = c[k] + a[k] * dot


@numba.njit(cache=True, parallel=True)
def _sparse_sums(Z, sqn, kind, gamma, coef0, degree, a, c, x, lo, hi, G):
    """:func:`kernel_sums` of the RBF and polynomial kernels on CSR points."""
    X, indptr, indices, values, scratch = Z
    d = scratch.shape[0]
    support, v, sqs = _support(sqn, a, x)
    s = support.shape[0]
    # Binary points: the products from their bits (the support's gathered). Otherwise the
    # support's points by columns, so a point's products with all of them cost the
    # support's non-zeros in its own columns (see _sparse_block).
    from_bits = X.shape[0] > 0
    B = X.view(np.uint64)
    BS = np.empty((s if from_bits else 0, B.shape[1]), dtype=np.uint64)
    for t in range(BS.shape[0]):
        BS[t] = B[support[t]]
    by_columns = 0 if from_bits else s  # the support points copied by columns
    colptr = np.zeros(d + 1, dtype=np.int64)
    for t in range(by_columns):
        for p in range(indptr[support[t]], indptr[support[t] + 1]):
            colptr[indices[p] + 1] += 1
    for f in range(d):
        colptr[f + 1] += colptr[f]
    fill = colptr[:-1].copy()
    rowpos = np.empty(colptr[d], dtype=np.int64)
    colval = np.empty(colptr[d])
    for t in range(by_columns):
        for p in range(indptr[support[t]], indptr[support[t] + 1]):
            q = fill[indices[p]]
            rowpos[q] = t
            colval[q] = values[p]
            fill[indices[p]] = q + 1
    n_blocks = (hi - lo + SPARSE_BLOCK - 1) // SPARSE_BLOCK
    for b in numba.prange(n_blocks):
        dots = np.empty((1, s))
        bits = np.empty(s, dtype=np.int64)
        for k in range(lo + b * SPARSE_BLOCK, min(hi, lo + (b + 1) * SPARSE_BLOCK)):
            out = dots[0]
            if from_bits:
                for t in range(s):
                    out[t] = common_bits(B, k, BS, t)
            else:
                out[:] = 0.0
                for p in range(indptr[k], indptr[k + 1]):
                    xf = values[p]
                    for q in range(colptr[indices[p]], colptr[indices[p] + 1]):
                        out[rowpos[q]] += xf * colval[q]
            _from_dots(dots, sqn[k : k + 1], sqs, kind, gamma, coef0, degree, bits)
            G[k] = c[k] + a[k] * _dot(out, v)


@numba.njit(cache=True, parallel=True)
def _dense_sums(Z, sqn, kind, gamma, coef0, degree, a, c, x, lo, hi, G):
    """:func:`kernel_sums` of the RBF and polynomial kernels on dense points (BLAS products)."""
    X = Z[0]
    d = X.shape[1]
    support, v, sqs = _support(sqn, a, x)
    s = support.shape[0]
    XS = np.empty((s, d))
    for t in range(s):
        XS[t] = X[support[t]]
    n_blocks = (hi - lo + K_BLOCK - 1) // K_BLOCK
    for b in numba.prange(n_blocks):
        k0 = lo + b * K_BLOCK
        k1 = min(hi, k0 + K_BLOCK)
        bits = np.empty(L_BLOCK, dtype=np.int64)
        totals = np.zeros(k1 - k0)
        for l0 in range(0, s, L_BLOCK):
            l1 = min(s, l0 + L_BLOCK)
            D = np.dot(X[k0:k1], XS[l0:l1].T)
            _from_dots(D, sqn[k0:k1], sqs[l0:l1], kind, gamma, coef0, degree, bits)
            for r in range(k1 - k0):
                totals[r] += _dot(D[r], v[l0:l1])
        for r in range(k1 - k0):
            G[k0 + r] = c[k0 + r] + a[k0 + r] * totals[r]


def kernel_code(kernel: Kernel) -> tuple[int, float, float, float] | None:
    """``(kind, gamma, coef0, degree)`` of a compiled kernel, ``None`` for the others."""
    if isinstance(kernel, Linear):
        return 0, 0.0, 0.0, 1.0
    if isinstance(kernel, RBF):
        return 1, float(kernel.gamma), 0.0, 1.0
    if isinstance(kernel, Polynomial):
        return 2, float(kernel.gamma), float(kernel.coef0), float(kernel.degree)
    return None


def stays_sparse(X: Any) -> bool:
    """Whether :func:`points` keeps ``X`` as CSR (sparse, under ``DENSE_FROM`` non-zeros)."""
    return bool(sp.issparse(X) and X.nnz < DENSE_FROM * X.shape[0] * X.shape[1])


def points(X: Any) -> tuple[Any, tuple]:
    """``X`` as float64 (sparse stays CSR), and the tuple the compiled sums read it through.

    ``Z = (X, indptr, indices, values, scratch)``: dense points as the rows of ``X``, or, when
    ``indptr`` is not empty, private CSR arrays (a kernel value then costs non-zeros) and, for
    binary points, their bits in place of ``X`` (:func:`binary_bits`; else an empty ``X``).
    Sparse input with at least ``DENSE_FROM`` non-zeros per entry is made dense (ijcnn1: 59%):
    a dense row streams 8 bytes per entry against CSR's 16 per non-zero plus a gather.
    """
    if sp.issparse(X) and not stays_sparse(X):
        X = X.toarray()
    if sp.issparse(X):
        X = sp.csr_array(X, dtype=np.float64)
        X.sort_indices()
        d = X.shape[1]
        bits = binary_bits(X)
        Z = (
            np.empty((0, 0)) if bits is None else bits,
            np.array(X.indptr, dtype=np.int64),
            np.array(X.indices, dtype=np.int64),
            np.array(X.data, dtype=np.float64),
            np.zeros(d),
        )
        return X, Z
    X = np.ascontiguousarray(X, dtype=np.float64)
    empty_int = np.empty(0, dtype=np.int64)
    return X, (X, empty_int, empty_int, np.empty(0), np.zeros(0))


def kernel_times(kernel: Kernel, X: Any, v: NDArray[np.float64]) -> NDArray[np.float64] | None:
    """:math:`K v` at the rows of ``X`` by :func:`kernel_sums`; ``None`` for other kernels.

    One thread per block of rows (numba's threads; BLAS limited to one thread inside), each
    value summed in a fixed order, so the result does not depend on the number of threads.
    """
    code = kernel_code(kernel)
    if code is None:
        return None
    X, Z = points(X)
    n = X.shape[0]
    sqn = np.asarray(Linear().diagonal(X), dtype=np.float64)
    out = np.empty(n)
    x = np.ascontiguousarray(v, dtype=np.float64)
    with threadpool_limits(limits=1, user_api="blas"):
        kernel_sums(Z, sqn, *code, np.ones(n), np.zeros(n), x, 0, n, out)
    return out


def warm_up(kernel: Kernel | None = None, sparse: bool | None = None) -> None:
    """Compile :func:`kernel_sums` (or load it from numba's cache) for what a run will sum.

    Parameters
    ----------
    kernel : Kernel or None
        The kernel of the run (its case: linear, or RBF and polynomial); ``None``: every case.
    sparse : bool or None
        Whether its points are CSR; ``None``: dense and CSR.
    """
    X = np.array([[0.0, 1.0], [1.0, 0.5], [2.0, 0.0], [0.5, 2.5]])
    v = np.array([1.0, -1.0, 0.0, 0.5])
    kernels = [Linear(), RBF(gamma=0.5)] if kernel is None else [kernel]
    layouts = (False, True) if sparse is None else (bool(sparse),)
    for use in kernels:
        for csr in layouts:
            # a fifth filled: stays sparse
            kernel_times(use, sp.csr_array(np.kron(X, np.eye(1, 10))) if csr else X, v)
