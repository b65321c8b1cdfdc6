r"""Numba kernels of the :class:`~optframe.drivers.smo.SMO` driver.

The problem (see :class:`~optframe.drivers.smo.BoxQPDual`) is

.. math::

    \min_x \; \tfrac12 x^\top Q x + c^\top x + \sum_i h_i(x_i)
    \quad\text{s.t.}\quad a^\top x = b, \quad 0 \le x \le u,

with :math:`a_i = \pm 1`, :math:`Q = \operatorname{diag}(a) M \operatorname{diag}(a)` and
:math:`h_i(s) = s^-_i \min(s, \kappa_i) + s^+_i \max(s - \kappa_i, 0)`. The steps read rows of
:math:`M_{ij} = r_i r_j (k(z_i, z_j) + \text{shift}) + \delta_{ij}\,\text{ridge}`
(``terms = (r, shift, ridge, plain)``, :math:`r_i = \pm 1`): the SVM duals have :math:`M = K`
(``plain``); the simplex QP of the L2-SVM has :math:`a = 1` and :math:`r = y`, shift 1 and ridge
:math:`1/C`, so that :math:`Q_{ij} = y_i y_j (k_{ij} + 1) + \delta_{ij}/C` while the equality
row is :math:`1^\top x = 1`. A pair step moves
:math:`x_i \mathrel{+}= a_i t`, :math:`x_j \mathrel{-}= a_j t`, which keeps :math:`a^\top x`. With
:math:`G = Qx + c`, the steepest rates are

* ``up_i`` :math:`= -` (derivative of the objective along :math:`x_i \mathrel{+}= a_i t`), and
* ``low_j`` :math:`=` (derivative along :math:`x_j \mathrel{-}= a_j t`),

both with the one-sided slopes of :math:`h` (:math:`-\infty` / :math:`+\infty` when the move
leaves the box). The pair's derivative at :math:`t = 0^+` is ``low_j - up_i``, so the point is
:math:`\tau`-optimal iff :math:`\max_i \mathrm{up}_i - \min_j \mathrm{low}_j \le \tau` (for PU
this is the complete rule of notes/usmo.md section 2.4).

Layout. Every per-variable array is indexed by *position*; ``perm[p]`` is the variable at
position ``p``. The active (unshrunk) variables are the positions ``0 .. m-1`` (``m`` =
``counters[ACTIVE]``); shrinking moves variables behind ``m`` (a stable partition of all arrays
and of the points), so every O(n) pass and every kernel row costs the active set only. The
points of the steps travel as ``Z = (XT, indptr, indices, values, colptr, rowpos, colval)``:
dense points as the columns of ``XT`` (d, n), or, when ``indptr`` is not empty, CSR rows with a
column copy (see :func:`_sparse_block`) and, for binary points, their bits as the rows of ``XT``
(n, words) viewed as floats (:func:`optframe.kernel_sums.binary_bits`; else ``XT`` is empty);
float32 points halve a row's memory traffic. The kernel-row cache is an LRU of rows over the
active positions in a ``(slots, n)`` array (float64 or float32; :func:`row_cache`); it is
emptied whenever positions move, and a row filled while fewer positions were active is
completed over the new ones only. ``up`` and ``low`` are kept as
:math:`-a_k G_k` plus offsets that change only when :math:`x_k` does, so the scans have no
data-dependent branches; four lanes keep their own extreme and its first position, so there is
no serial dependency chain, and the result is the first position of the extreme value, as in a
serial scan.

:mod:`optframe.drivers.smo_linear` (the steps through w for the linear kernel) calls these
kernels and keeps the versions it was compiled with in numba's cache: an edit here needs that
file touched as well.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import types
from numba.extending import overload

from optframe.drivers.kernel_cache import clear_cache, lru_index, lru_slot
from optframe.kernel_sums import common_bits, exp_neg

INF = math.inf

# counters[] slots (LAST_I, LAST_J: the variables of the last pair step, for the records)
CLOCK, ROWS, SINCE_SHRINK, N_SHRUNK, STEPS, HITS, ACTIVE, EXTENDED, LAST_I, LAST_J = range(10)
N_COUNTERS = 10

ROW_BLOCK = 2048  # positions per block of a kernel row (the unit of parallel work)
#: The ``parallel`` of serial kernel rows: unlike ``False``, compiles no parallel row code.
SERIAL = None


@numba.njit(cache=True, fastmath={"contract"})
def _dense_block(q, XT, lo, hi, kind, gamma, coef0, degree, out, bits):
    """``out[j - lo] = k(q, XT[:, j])`` for ``lo <= j < hi`` (vectorized over j)."""
    d = XT.shape[0]
    m = hi - lo
    for j in range(m):
        out[j] = 0.0
    if kind == 1:  # the squared distance directly: exact 0 for duplicates
        # four features per pass over out: a quarter of its loads and stores (ijcnn1, 22
        # features: 1.8 ns per kernel value against 2.3); the products skip a zero x_f instead
        d4 = d - d % 4
        for f in range(0, d4, 4):
            x0, x1, x2, x3 = q[f], q[f + 1], q[f + 2], q[f + 3]
            c0, c1 = XT[f, lo:hi], XT[f + 1, lo:hi]
            c2, c3 = XT[f + 2, lo:hi], XT[f + 3, lo:hi]
            for j in range(m):
                t0, t1, t2, t3 = c0[j] - x0, c1[j] - x1, c2[j] - x2, c3[j] - x3
                out[j] += t0 * t0 + t1 * t1 + t2 * t2 + t3 * t3
        for f in range(d4, d):
            xf = q[f]
            col = XT[f, lo:hi]
            for j in range(m):
                t = col[j] - xf
                out[j] += t * t
        exp_neg(out, gamma, bits)
        return
    for f in range(d):
        xf = q[f]
        if xf != 0.0:
            col = XT[f, lo:hi]
            for j in range(m):
                out[j] += xf * col[j]
    if kind == 2:
        for j in range(m):
            out[j] = (gamma * out[j] + coef0) ** degree


@numba.njit(cache=True)
def _sparse_block(i, Z, sqn, lo, hi, kind, gamma, coef0, degree, out, bits):
    r"""Same for sparse points, by columns (positions sorted within each column).

    For each non-zero :math:`(f, x_{if})` of point i, add :math:`x_{if} x_{jf}` over the points
    j of column f in [lo, hi). Costs :math:`\sum_{f \in nz(i)} nnz(f)` instead of nnz(X)
    (a9a: 6.2 against 13.9 per point; w8a: 1.3 against 11.7); each value sums the common
    features in increasing f, as a dot product does.
    """
    _, indptr, indices, values, colptr, rowpos, colval = Z
    m = hi - lo
    for t in range(m):
        out[t] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        f = indices[p]
        xf = np.float64(values[p])
        first, last = colptr[f], colptr[f + 1]
        q = first + np.searchsorted(rowpos[first:last], lo)
        while q < last:
            r = rowpos[q]
            if r >= hi:
                break
            out[r - lo] += xf * colval[q]
            q += 1
    _from_products(i, sqn, lo, kind, gamma, coef0, degree, out, bits)


@numba.njit(cache=True)
def _bits_block(i, B, sqn, lo, hi, kind, gamma, coef0, degree, out, bits):
    """Same for binary points from their bits ``B`` (n, words): a popcount per word."""
    for t in range(hi - lo):
        out[t] = common_bits(B, i, B, lo + t)
    _from_products(i, sqn, lo, kind, gamma, coef0, degree, out, bits)


@numba.njit(cache=True, inline="always")
def _from_products(i, sqn, lo, kind, gamma, coef0, degree, out, bits):
    """Kernel values in place from the inner products ``out[t]`` of points i and lo + t."""
    m = out.shape[0]
    if kind == 1:
        si = sqn[i]
        for t in range(m):
            out[t] = max(si + sqn[lo + t] - 2.0 * out[t], 0.0)
        exp_neg(out, gamma, bits)
    elif kind == 2:
        for t in range(m):
            out[t] = (gamma * out[t] + coef0) ** degree


@numba.njit(cache=True, inline="always")
def _block(i, q, Z, sqn, lo, hi, kind, gamma, coef0, degree, out, bits):
    """One block of kernel row i by the points' layout: bits, CSR columns or dense columns."""
    if Z[1].shape[0] > 0:
        if Z[0].shape[0] > 0:
            _bits_block(i, Z[0].view(np.uint64), sqn, lo, hi, kind, gamma, coef0, degree, out,
                        bits)  # fmt: skip
        else:
            _sparse_block(i, Z, sqn, lo, hi, kind, gamma, coef0, degree, out, bits)
    else:
        _dense_block(q, Z[0], lo, hi, kind, gamma, coef0, degree, out, bits)


@numba.njit(cache=True)
def build_columns(Z):
    """Rebuild the column copy ``(colptr, rowpos, colval)`` of the CSR rows of Z, in place."""
    _, indptr, indices, values, colptr, rowpos, colval = Z
    colptr[:] = 0
    for p in range(indptr[indptr.shape[0] - 1]):
        colptr[indices[p] + 1] += 1
    for f in range(colptr.shape[0] - 1):
        colptr[f + 1] += colptr[f]
    fill = colptr[:-1].copy()
    for r in range(indptr.shape[0] - 1):  # rows in position order: columns come out sorted
        for p in range(indptr[r], indptr[r + 1]):
            q = fill[indices[p]]
            rowpos[q] = r
            colval[q] = values[p]
            fill[indices[p]] = q + 1


@numba.njit(cache=True)
def _column(Z, i):
    """Dense point i as a float64 array (empty for CSR points)."""
    if Z[1].shape[0] > 0:
        return np.empty(0)
    XT = Z[0]
    q = np.empty(XT.shape[0])
    for f in range(XT.shape[0]):
        q[f] = XT[f, i]
    return q


@numba.njit(cache=True, inline="always")  # no compile of its own
def fill_row_serial(i, Z, sqn, kind, gamma, coef0, degree, m, out):
    """``out[p] = k(z_i, z_p)`` for the positions ``p < m`` (blocks of ROW_BLOCK, in order).

    ``Z = (XT, indptr, indices, values, colptr, rowpos, colval)``: dense points as the columns
    of ``XT`` (d, n), or, when ``indptr`` is not empty, CSR rows with a column copy.
    """
    q = _column(Z, i)
    for b in range((m + ROW_BLOCK - 1) // ROW_BLOCK):
        _one_block(i, q, Z, sqn, kind, gamma, coef0, degree, m, out, b)


@numba.njit(cache=True, parallel=True)
def fill_row_parallel(i, Z, sqn, kind, gamma, coef0, degree, m, out):
    """:func:`fill_row_serial` with the blocks spread over the threads (the same values)."""
    q = _column(Z, i)
    for b in numba.prange((m + ROW_BLOCK - 1) // ROW_BLOCK):
        _one_block(i, q, Z, sqn, kind, gamma, coef0, degree, m, out, b)


@numba.njit(cache=True)
def _one_block(i, q, Z, sqn, kind, gamma, coef0, degree, m, out, b):
    lo = b * ROW_BLOCK
    hi = min(m, lo + ROW_BLOCK)
    bits = np.empty(hi - lo, dtype=np.int64)
    _block(i, q, Z, sqn, lo, hi, kind, gamma, coef0, degree, out[lo:hi], bits)


def plain_terms(n):
    """The ``terms`` of a matrix that is the kernel itself: signs 1, no shift, no ridge."""
    return (np.ones(n), 0.0, 0.0, True)


@numba.njit(cache=True)
def row_cache(rows, keys):
    """The row cache around ``rows`` (slots, length) for ``keys`` positions.

    ``(rows, slot_of, owner, stamp, row_len)``: the LRU index of
    :mod:`~optframe.drivers.kernel_cache` and the number of valid entries of each slot (a row
    filled while fewer positions were active is completed over the new ones when next read).
    """
    slot_of, owner, stamp = lru_index(keys, rows.shape[0])
    return (rows, slot_of, owner, stamp, np.zeros(rows.shape[0], dtype=np.int64))


@numba.njit(cache=True)
def forget_rows(cache):
    """Empty the cache (after positions moved): no slot is owned."""
    clear_cache(cache[1], cache[2], cache[3])


@numba.njit(cache=True)
def get_row(i, Z, sqn, kind, gamma, coef0, degree, terms, cache, counters, buf, parallel):
    r"""Row i of the steps' matrix over the active positions: from the LRU cache or computed.

    The matrix is :math:`M_{ip} = r_i r_p (k(z_i, z_p) + \text{shift}) + \delta_{ip}\,
    \text{ridge}` with ``terms = (r, shift, ridge, plain)`` (``plain``: the kernel itself).
    A cached row filled when fewer positions were active (the coreset of the CVM grows at its
    end) is completed over the new positions only (``counters[EXTENDED]``). Float64 rows are
    computed in their slot; float32 rows in ``buf`` (float64), then rounded.
    """
    rows, slot_of, owner, stamp, row_len = cache
    counters[CLOCK] += 1
    m = counters[ACTIVE]
    s, hit = lru_slot(i, slot_of, owner, stamp, counters[CLOCK])
    row = rows[s]
    lo = min(row_len[s], m) if hit else 0
    if lo == m:
        counters[HITS] += 1
        return row
    _fill_slot(i, Z, sqn, kind, gamma, coef0, degree, lo, m, rows, s, buf, parallel)
    r, shift, ridge, plain = terms
    if not plain:
        ri = r[i]
        for p in range(lo, m):
            row[p] = ri * r[p] * (row[p] + shift)
        if i >= lo:
            row[i] += ridge
    row_len[s] = m
    if lo > 0:
        counters[EXTENDED] += 1
    else:
        counters[ROWS] += 1
    return row


@numba.njit(cache=True, inline="always")  # no compile of its own
def fill_range(i, Z, sqn, kind, gamma, coef0, degree, lo, hi, out):
    """``out[p] = k(z_i, z_p)`` for the positions ``lo <= p < hi`` (blocks of ROW_BLOCK)."""
    q = _column(Z, i)
    for b0 in range(lo, hi, ROW_BLOCK):
        _range_block(i, q, Z, sqn, kind, gamma, coef0, degree, b0, min(hi, b0 + ROW_BLOCK), out)


@numba.njit(cache=True, inline="always")  # no compile of its own
def _range_block(i, q, Z, sqn, kind, gamma, coef0, degree, lo, hi, out):
    bits = np.empty(hi - lo, dtype=np.int64)
    _block(i, q, Z, sqn, lo, hi, kind, gamma, coef0, degree, out[lo:hi], bits)


def _fill_slot(i, Z, sqn, kind, gamma, coef0, degree, lo, m, rows, s, buf, parallel):
    """Kernel row i over ``[lo, m)`` into ``rows[s]`` (float32 rows through ``buf``).

    A whole row (``lo == 0``) keeps loops that start at 0: with the start as a variable, SMO's
    steps on a9a (RBF, float32 rows) took 7% longer.
    """


def _fill_whole(i, Z, sqn, kind, gamma, coef0, degree, m, out, parallel):
    """Kernel row i over ``[0, m)`` into ``out``: over the threads if ``parallel`` is true.

    ``parallel`` is a bool, or ``None`` (:data:`SERIAL`) for serial rows only: then the
    parallel row code is not compiled at all (it costs seconds to compile).
    """


@overload(_fill_whole, inline="always", jit_options={"cache": True})
def _fill_whole_impl(i, Z, sqn, kind, gamma, coef0, degree, m, out, parallel):
    if isinstance(parallel, types.NoneType):

        def serial(i, Z, sqn, kind, gamma, coef0, degree, m, out, parallel):
            fill_row_serial(i, Z, sqn, kind, gamma, coef0, degree, m, out)

        return serial

    def either(i, Z, sqn, kind, gamma, coef0, degree, m, out, parallel):
        if parallel:
            fill_row_parallel(i, Z, sqn, kind, gamma, coef0, degree, m, out)
        else:
            fill_row_serial(i, Z, sqn, kind, gamma, coef0, degree, m, out)

    return either


@overload(_fill_slot, inline="always", jit_options={"cache": True})
def _fill_slot_impl(i, Z, sqn, kind, gamma, coef0, degree, lo, m, rows, s, buf, parallel):
    if rows.dtype == types.float64:

        def direct(i, Z, sqn, kind, gamma, coef0, degree, lo, m, rows, s, buf, parallel):
            if lo == 0:
                _fill_whole(i, Z, sqn, kind, gamma, coef0, degree, m, rows[s], parallel)
            else:
                fill_range(i, Z, sqn, kind, gamma, coef0, degree, lo, m, rows[s])

        return direct

    def through_buffer(i, Z, sqn, kind, gamma, coef0, degree, lo, m, rows, s, buf, parallel):
        if lo == 0:
            _fill_whole(i, Z, sqn, kind, gamma, coef0, degree, m, buf, parallel)
        else:
            fill_range(i, Z, sqn, kind, gamma, coef0, degree, lo, m, buf)
        row = rows[s]
        if lo == 0:
            for p in range(m):
                row[p] = buf[p]
        else:
            for p in range(lo, m):
                row[p] = buf[p]

    return through_buffer


# ----------------------------------------------------------------------------- bulk gradient
# ------------------------------------------------------------------------ rates and selection
# The helpers take scalars: numba passes whole array structs to non-inlined calls, which made
# the O(n) scans 50 times slower than with scalar arguments.
@numba.njit(cache=True, inline="always")
def _up(ak, xk, gk, uk, kk, sbk, sak):
    if ak > 0:
        if xk < uk:
            return -(gk + (sak if xk >= kk else sbk))
        return -INF
    if xk > 0.0:
        return gk + (sak if xk > kk else sbk)
    return -INF


@numba.njit(cache=True, inline="always")
def _low(ak, xk, gk, uk, kk, sbk, sak):
    if ak > 0:
        if xk > 0.0:
            return -(gk + (sak if xk > kk else sbk))
        return INF
    if xk < uk:
        return gk + (sak if xk >= kk else sbk)
    return INF


@numba.njit(cache=True, inline="always")
def _up_uses_upper_slope(ak, xk, kk, sbk, sak):
    # The paper's set B: an "up" move that starts on the upper slope of a real kink.
    if sak == sbk:
        return False
    return xk >= kk if ak > 0 else xk > kk


@numba.njit(cache=True, inline="always")
def _low_uses_lower_slope(ak, xk, kk, sbk, sak):
    # The paper's set A: a "low" move that starts on the lower slope of a real kink.
    if sak == sbk:
        return False
    return xk <= kk if ak > 0 else xk < kk


@numba.njit(cache=True)
def set_offsets(a, x, u, kink, sb, sa, up_off, low_off, lo, hi):
    r"""Offsets with ``up_k = -a_k G_k + up_off_k`` and ``low_k = -a_k G_k + low_off_k``.

    The same numbers as ``_up`` / ``_low``: :math:`-(G + s) = -G + (-s)` exactly, and
    :math:`a_k = \pm 1`.
    """
    for k in range(lo, hi):
        ak, xk, uk, kk, sbk, sak = a[k], x[k], u[k], kink[k], sb[k], sa[k]
        if ak > 0:
            up_off[k] = -(sak if xk >= kk else sbk) if xk < uk else -INF
            low_off[k] = -(sak if xk > kk else sbk) if xk > 0.0 else INF
        else:
            up_off[k] = (sak if xk > kk else sbk) if xk > 0.0 else -INF
            low_off[k] = (sak if xk >= kk else sbk) if xk < uk else INF


@numba.njit(cache=True, inline="always")
def _lanes(v0, v1, v2, v3, i0, i1, i2, i3, largest):
    """The extreme of four lanes and the smallest index attaining it (-1 if none)."""
    best = max(max(v0, v1), max(v2, v3)) if largest else min(min(v0, v1), min(v2, v3))
    index = -1
    for v, i in ((v0, i0), (v1, i1), (v2, i2), (v3, i3)):
        if v == best and i >= 0 and (index < 0 or i < index):
            index = i
    return best, index


@numba.njit(cache=True)
def scan(NG, up_off, low_off, low, m):
    r"""``low[k]`` for k < m and ``(max up, its first k, min low, its first k)``.

    ``NG`` is :math:`-a \circ G`. Four lanes (k mod 4) keep their own extreme and its first
    position, so there is no serial dependency chain; the first position overall is the smallest
    one among the lanes that attain the extreme, as in a serial scan with strict comparisons.
    """
    g0 = g1 = g2 = g3 = -INF
    h0 = h1 = h2 = h3 = INF
    i0 = i1 = i2 = i3 = j0 = j1 = j2 = j3 = -1
    m4 = m - m % 4
    for k in range(0, m4, 4):
        v = NG[k]
        up, lo = v + up_off[k], v + low_off[k]
        low[k] = lo
        if up > g0:
            g0, i0 = up, k
        if lo < h0:
            h0, j0 = lo, k
        v = NG[k + 1]
        up, lo = v + up_off[k + 1], v + low_off[k + 1]
        low[k + 1] = lo
        if up > g1:
            g1, i1 = up, k + 1
        if lo < h1:
            h1, j1 = lo, k + 1
        v = NG[k + 2]
        up, lo = v + up_off[k + 2], v + low_off[k + 2]
        low[k + 2] = lo
        if up > g2:
            g2, i2 = up, k + 2
        if lo < h2:
            h2, j2 = lo, k + 2
        v = NG[k + 3]
        up, lo = v + up_off[k + 3], v + low_off[k + 3]
        low[k + 3] = lo
        if up > g3:
            g3, i3 = up, k + 3
        if lo < h3:
            h3, j3 = lo, k + 3
    for k in range(m4, m):
        v = NG[k]
        up, lo = v + up_off[k], v + low_off[k]
        low[k] = lo
        if up > g0:
            g0, i0 = up, k
        if lo < h0:
            h0, j0 = lo, k
    gmax, imax = _lanes(g0, g1, g2, g3, i0, i1, i2, i3, True)
    gmin, jmin = _lanes(h0, h1, h2, h3, j0, j1, j2, j3, False)
    return gmax, imax, gmin, jmin


@numba.njit(cache=True)
def update_scan(NG, up_off, low_off, low, m, row_i, row_j, dxi, dxj):
    r""":math:`G \mathrel{+}= a \circ (dx_i K_i + dx_j K_j)` on k < m, fused with :func:`scan`.

    On :math:`NG = -a \circ G` (:math:`a_k^2 = 1`) the update needs no sign and rounds exactly
    as the update of :math:`G` does.
    """
    g0 = g1 = g2 = g3 = -INF
    h0 = h1 = h2 = h3 = INF
    i0 = i1 = i2 = i3 = j0 = j1 = j2 = j3 = -1
    m4 = m - m % 4
    for k in range(0, m4, 4):
        v = NG[k] - (dxi * row_i[k] + dxj * row_j[k])
        NG[k] = v
        up, lo = v + up_off[k], v + low_off[k]
        low[k] = lo
        if up > g0:
            g0, i0 = up, k
        if lo < h0:
            h0, j0 = lo, k
        v = NG[k + 1] - (dxi * row_i[k + 1] + dxj * row_j[k + 1])
        NG[k + 1] = v
        up, lo = v + up_off[k + 1], v + low_off[k + 1]
        low[k + 1] = lo
        if up > g1:
            g1, i1 = up, k + 1
        if lo < h1:
            h1, j1 = lo, k + 1
        v = NG[k + 2] - (dxi * row_i[k + 2] + dxj * row_j[k + 2])
        NG[k + 2] = v
        up, lo = v + up_off[k + 2], v + low_off[k + 2]
        low[k + 2] = lo
        if up > g2:
            g2, i2 = up, k + 2
        if lo < h2:
            h2, j2 = lo, k + 2
        v = NG[k + 3] - (dxi * row_i[k + 3] + dxj * row_j[k + 3])
        NG[k + 3] = v
        up, lo = v + up_off[k + 3], v + low_off[k + 3]
        low[k + 3] = lo
        if up > g3:
            g3, i3 = up, k + 3
        if lo < h3:
            h3, j3 = lo, k + 3
    for k in range(m4, m):
        v = NG[k] - (dxi * row_i[k] + dxj * row_j[k])
        NG[k] = v
        up, lo = v + up_off[k], v + low_off[k]
        low[k] = lo
        if up > g0:
            g0, i0 = up, k
        if lo < h0:
            h0, j0 = lo, k
    gmax, imax = _lanes(g0, g1, g2, g3, i0, i1, i2, i3, True)
    gmin, jmin = _lanes(h0, h1, h2, h3, j0, j1, j2, j3, False)
    return gmax, imax, gmin, jmin


@numba.njit(cache=True, inline="always")
def _score(up_i, low_k, diag_i, diag_k, kik):
    b = up_i - low_k
    eta = diag_i + diag_k - 2.0 * kik
    eta = eta if eta > 1e-12 else 1e-12
    value = -b * b / eta
    return value if b > 0.0 else INF


@numba.njit(cache=True)
def second_order(low, diag, row_i, up_i, diag_i, m):
    """Fan-Chen-Lin: the first j minimizing ``-b^2 / eta`` over ``b = up_i - low_j > 0``.

    Returns ``(score, j)``, ``(inf, -1)`` when no j violates with i; four lanes as in :func:`scan`.
    """
    h0 = h1 = h2 = h3 = INF
    j0 = j1 = j2 = j3 = -1
    m4 = m - m % 4
    for k in range(0, m4, 4):
        v = _score(up_i, low[k], diag_i, diag[k], row_i[k])
        if v < h0:
            h0, j0 = v, k
        v = _score(up_i, low[k + 1], diag_i, diag[k + 1], row_i[k + 1])
        if v < h1:
            h1, j1 = v, k + 1
        v = _score(up_i, low[k + 2], diag_i, diag[k + 2], row_i[k + 2])
        if v < h2:
            h2, j2 = v, k + 2
        v = _score(up_i, low[k + 3], diag_i, diag[k + 3], row_i[k + 3])
        if v < h3:
            h3, j3 = v, k + 3
    for k in range(m4, m):
        v = _score(up_i, low[k], diag_i, diag[k], row_i[k])
        if v < h0:
            h0, j0 = v, k
    return _lanes(h0, h1, h2, h3, j0, j1, j2, j3, False)


@numba.njit(cache=True)
def violation(a, x, G, u, kink, sb, sa, m, paper):
    """(max up - min low, i, j) over the positions k < m; paper=True drops the pairs (B, A)."""
    gmax, gmin, imax, jmin = -INF, INF, -1, -1
    gmax_nb, gmin_na, imax_nb, jmin_na = -INF, INF, -1, -1
    for k in range(m):
        up = _up(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        low = _low(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        if up > gmax:
            gmax, imax = up, k
        if low < gmin:
            gmin, jmin = low, k
        if paper:
            if up > gmax_nb and not _up_uses_upper_slope(a[k], x[k], kink[k], sb[k], sa[k]):
                gmax_nb, imax_nb = up, k
            if low < gmin_na and not _low_uses_lower_slope(a[k], x[k], kink[k], sb[k], sa[k]):
                gmin_na, jmin_na = low, k
    if not paper:
        return gmax - gmin, imax, jmin
    first = gmax_nb - gmin
    second = gmax - gmin_na
    if first >= second:
        return first, imax_nb, jmin
    return second, imax, jmin_na


# ---------------------------------------------------------------------------------- steps
@numba.njit(cache=True)
def h_value(v, kink, sb, sa):
    """h(v) = sb * min(v, kink) + sa * max(v - kink, 0)."""
    return sb * min(v, kink) + sa * max(v - kink, 0.0)


@numba.njit(cache=True)
def pair_phi(t, ai, aj, xi, xj, gi, gj, eta, ki, sbi, sai, kj, sbj, saj):
    """Change of the objective when x_i += a_i t and x_j -= a_j t."""
    nxi = xi + ai * t
    nxj = xj - aj * t
    dh = sbi * (min(nxi, ki) - min(xi, ki)) + sai * (max(nxi - ki, 0.0) - max(xi - ki, 0.0))
    dh += sbj * (min(nxj, kj) - min(xj, kj)) + saj * (max(nxj - kj, 0.0) - max(xj - kj, 0.0))
    return 0.5 * eta * t * t + (ai * gi - aj * gj) * t + dh


@numba.njit(cache=True)
def pair_step(ai, aj, xi, xj, gi, gj, eta, ui, uj, ki, sbi, sai, kj, sbj, saj):
    """Exact minimizer t >= 0 of the 1-D convex piecewise quadratic of a pair and its value.

    The feasible interval is [0, T]; the kinks of h_i and h_j split it into at most three pieces.
    On each piece the minimizer is the clipped stationary point (an endpoint when eta <= 0).
    """
    T = min(ui - xi if ai > 0 else xi, xj if aj > 0 else uj - xj)
    if T <= 0.0:
        return 0.0, 0.0
    points = np.empty(4)
    m = 0
    points[m] = 0.0
    m += 1
    if sai != sbi:
        b = (ki - xi) * ai
        if 0.0 < b < T:
            points[m] = b
            m += 1
    if saj != sbj:
        b = (xj - kj) * aj
        if 0.0 < b < T:
            points[m] = b
            m += 1
    points[m] = T
    m += 1
    for p in range(1, m):  # at most four points: insertion sort (np.sort compiles quicksort)
        v = points[p]
        q = p
        while q > 0 and points[q - 1] > v:
            points[q] = points[q - 1]
            q -= 1
        points[q] = v
    pts = points
    g0 = ai * gi - aj * gj
    best_t, best_phi = 0.0, 0.0
    for p in range(m - 1):
        lo, hi = pts[p], pts[p + 1]
        if hi <= lo:
            continue
        mid = 0.5 * (lo + hi)
        si = sai if xi + ai * mid > ki else sbi
        sj = saj if xj - aj * mid > kj else sbj
        slope = g0 + ai * si - aj * sj
        # The stationary point clipped to the piece; on a linear piece, the endpoint downhill.
        t = min(max(-slope / eta, lo), hi) if eta > 1e-12 else (hi if slope < 0.0 else lo)
        phi = pair_phi(t, ai, aj, xi, xj, gi, gj, eta, ki, sbi, sai, kj, sbj, saj)
        if phi < best_phi:
            best_t, best_phi = t, phi
    return best_t, best_phi


@numba.njit(cache=True, inline="always")
def _snap(v, u, kink, eps):
    tol = eps * max(u, 1.0)
    if v <= tol:
        return 0.0
    if v >= u - tol:
        return u
    if abs(v - kink) <= tol:
        return kink
    return v


# ------------------------------------------------------------------------------- shrinking
@numba.njit(cache=True)
def _permute(v, order):
    w = v.copy()
    for t in range(order.shape[0]):
        v[t] = w[order[t]]


@numba.njit(cache=True)
def permute(order, Z, vectors, perm):
    """Move the variable at position ``order[t]`` to position t in ``vectors``, ``perm``, Z."""
    XT, indptr, indices, values = Z[0], Z[1], Z[2], Z[3]
    for v in vectors:
        _permute(v, order)
    _permute(perm, order)
    if indptr.shape[0] > 0:
        old_ptr, old_idx, old_val = indptr.copy(), indices.copy(), values.copy()
        p = 0
        for t in range(order.shape[0]):
            k = order[t]
            indptr[t] = p
            for q in range(old_ptr[k], old_ptr[k + 1]):
                indices[p] = old_idx[q]
                values[p] = old_val[q]
                p += 1
        indptr[order.shape[0]] = p
        build_columns(Z)
        if XT.shape[0] > 0:  # the bits of binary points
            old_bits = XT.copy()
            for t in range(order.shape[0]):
                XT[t] = old_bits[order[t]]
    else:
        for f in range(XT.shape[0]):
            _permute(XT[f], order)


@numba.njit(cache=True)
def _shrink(NG, up_off, low, gmax, gmin, m):
    """The order that moves behind the active set every variable in no violating pair now.

    k is shrunk when ``up_k < min low`` (it cannot be the i of a violating pair) and
    ``low_k > max up`` (nor the j): at a bound one of the two is infinite (LIBSVM's rule); at a
    kink both are finite. Returns (order, number kept); the order is stable on both sides.
    """
    n = NG.shape[0]
    keep = np.empty(m, dtype=np.bool_)
    kept = 0
    for k in range(m):
        keep[k] = not (NG[k] + up_off[k] < gmin and low[k] > gmax)
        kept += keep[k]
    order = np.empty(n, dtype=np.int64)
    t = 0
    for k in range(m):
        if keep[k]:
            order[t] = k
            t += 1
    for k in range(m):
        if not keep[k]:
            order[t] = k
            t += 1
    for k in range(m, n):
        order[t] = k
        t += 1
    return order, kept


# ----------------------------------------------------------------------------------- loop
@numba.njit(cache=True)
def run_chunk(
    Z, sqn, kind, gamma, coef0, degree, terms,
    diag, a, c, u, kink, sb, sa,
    x, G, perm, work, cache, counters, buf,
    tol, n_iter, second, paper, shrinking, shrink_every, eps_snap, parallel,
):  # fmt: skip
    r"""Run at most ``n_iter`` pair steps; return (code, steps, gap, objective change).

    code: 0 budget used, 1 tau-optimal on all variables, 2 stalled (no decrease possible),
    3 tau-optimal on the active set while some variables are shrunk (the caller recomputes the
    gradient and calls again with ``counters[ACTIVE] = n``). ``work`` (5, n) is scratch. Inside,
    the state is :math:`NG = -a \circ G`; ``G`` is written back on return. ``terms`` gives the
    rows of :math:`M` (see :func:`get_row`); its sign vector is permuted with the positions.
    """
    n = x.shape[0]
    up_off, low_off, low, NG, Gp = work[0], work[1], work[2], work[3], work[4]
    for k in range(n):
        NG[k] = -a[k] * G[k]
    result = _steps(
        Z, sqn, kind, gamma, coef0, degree, terms, diag, a, c, u, kink, sb, sa, x, G, NG, Gp, perm,
        up_off, low_off, low, cache, counters, buf, tol, n_iter, second,
        paper, shrinking, shrink_every, eps_snap, parallel,
    )  # fmt: skip
    for k in range(n):
        G[k] = -a[k] * NG[k]
    return result


@numba.njit(cache=True)
def _steps(
    Z, sqn, kind, gamma, coef0, degree, terms, diag, a, c, u, kink, sb, sa, x, G, NG, Gp, perm,
    up_off, low_off, low, cache, counters, buf, tol, n_iter, second,
    paper, shrinking, shrink_every, eps_snap, parallel,
):  # fmt: skip
    n = x.shape[0]
    m = counters[ACTIVE]
    set_offsets(a, x, u, kink, sb, sa, up_off, low_off, np.int64(0), m)  # not a literal 0
    gmax, imax, gmin, jmin = scan(NG, up_off, low_off, low, m)
    dphi = 0.0
    gap = INF
    for it in range(n_iter):
        if paper:
            for k in range(m):
                Gp[k] = -a[k] * NG[k]
            gap, i, j = violation(a, x, Gp, u, kink, sb, sa, m, np.bool_(True))  # not a literal
        else:
            gap, i, j = gmax - gmin, imax, jmin
        if gap <= tol:
            return (3 if m < n else 1), it, gap, dphi
        if shrinking and not paper:
            counters[SINCE_SHRINK] += 1
            if counters[SINCE_SHRINK] >= shrink_every:
                counters[SINCE_SHRINK] = 0
                order, kept = _shrink(NG, up_off, low, gmax, gmin, m)
                if kept < m:
                    vectors = (sqn, diag, a, c, u, kink, sb, sa, x, G, NG, up_off, low_off,
                               terms[0])  # fmt: skip
                    permute(order, Z, vectors, perm)
                    m = kept
                    counters[ACTIVE] = m
                    counters[N_SHRUNK] = n - m
                    forget_rows(cache)
                    gmax, i, gmin, j = scan(NG, up_off, low_off, low, m)
        row_i = get_row(i, Z, sqn, kind, gamma, coef0, degree, terms, cache, counters, buf,
                        parallel)  # fmt: skip
        if second and not paper:
            _, jj = second_order(low, diag, row_i, gmax, diag[i], m)
            if jj >= 0:
                j = jj
        row_j = get_row(j, Z, sqn, kind, gamma, coef0, degree, terms, cache, counters, buf,
                        parallel)  # fmt: skip
        if cache[1][i] < 0:  # evicted (only with a two-row cache): fetch it back
            row_i = get_row(i, Z, sqn, kind, gamma, coef0, degree, terms, cache, counters, buf,
                            parallel)  # fmt: skip
        eta = diag[i] + diag[j] - 2.0 * row_i[j]
        gi, gj = -a[i] * NG[i], -a[j] * NG[j]
        t, phi = pair_step(
            a[i], a[j], x[i], x[j], gi, gj, max(eta, 0.0), u[i], u[j],
            kink[i], sb[i], sa[i], kink[j], sb[j], sa[j],
        )  # fmt: skip
        if not phi < 0.0:
            return 2, it, gap, dphi
        nxi = _snap(min(max(x[i] + a[i] * t, 0.0), u[i]), u[i], kink[i], eps_snap)
        nxj = _snap(min(max(x[j] - a[j] * t, 0.0), u[j]), u[j], kink[j], eps_snap)
        dxi = (nxi - x[i]) * a[i]
        dxj = (nxj - x[j]) * a[j]
        x[i] = nxi
        x[j] = nxj
        set_offsets(a, x, u, kink, sb, sa, up_off, low_off, i, i + 1)
        set_offsets(a, x, u, kink, sb, sa, up_off, low_off, j, j + 1)
        gmax, imax, gmin, jmin = update_scan(NG, up_off, low_off, low, m, row_i, row_j, dxi, dxj)
        dphi += phi
        counters[STEPS] += 1
        counters[LAST_I] = perm[i]
        counters[LAST_J] = perm[j]
    return 0, n_iter, gap, dphi


@numba.njit(cache=True)
def dual_value(x, G, c, kink, sb, sa):
    """Phi(x) = x'Qx/2 + c'x + sum h(x) = x'(G + c)/2 + sum h(x), from an exact gradient."""
    total = 0.0
    for k in range(x.shape[0]):
        total += 0.5 * x[k] * (G[k] + c[k]) + h_value(x[k], kink[k], sb[k], sa[k])
    return total
