r"""Numba kernels of :class:`~optframe.drivers.smo.SMO` for the linear kernel: steps through w.

With :math:`k(z_i, z_j) = z_i^\top z_j` the gradient of the dual (see
:mod:`optframe.drivers.smo_core`) is :math:`G_k = c_k + a_k z_k^\top w` with
:math:`w = \sum_l a_l x_l z_l`, so the steps need no kernel row over all the variables. They
keep a dense ``w`` and go by decomposition with a working set of (at most) ``q`` variables,
as SVMlight and ThunderSVM do:

1. from the gradient (from ``w``: O(nnz) over the active positions) take the ``q / 2``
   variables with the largest ``up`` above :math:`\min \mathrm{low}` and the ``q / 2`` with the
   smallest ``low`` below :math:`\max \mathrm{up}` (by a histogram of the rates, O(m)), and the
   maximal violating pair;
2. solve the subproblem in those variables, the others fixed, by the pair steps of
   :func:`optframe.drivers.smo_core._steps` (second-order selection, exact 1-D steps, snapping,
   shrinking inside the working set) to the rule :math:`\max(\tau, 0.1\,\text{gap})`, with
   the working set's Gram rows (q values each, O(q nnz)) computed when a step first needs them
   and kept in an LRU cache within ``cache_bytes``;
3. add the moves to ``w`` (O(nnz) of the moved points) and take the gradient from ``w`` again.

When :data:`GROW_AFTER` sets in a row meet their rule within ``q / SHORT_SET`` pair steps (their
variables settle while the others keep the gap open) and more than ``2 q`` variables are
active, ``q`` doubles, up to twice the size asked for.

A step costs O(q) plus its Gram rows instead of O(m) plus kernel rows over the m active
variables; a working set costs one gradient from ``w``. The state, the positions, shrinking of
the active set (every ``shrink_every`` pair steps, between working sets) and the return codes
are those of :func:`optframe.drivers.smo_core.run_chunk`, so the driver's loop (the gradient
from scratch, the tightened rule, records, limits) is shared; the driver recomputes ``w`` from
scratch with every gradient from scratch.

Call only :func:`run_chunk` from Python: numba caches a kernel first compiled as another
kernel's callee without what a call from Python needs (such a call crashed). numba's cache does
not track calls across modules either: these kernels keep the version of ``smo_core`` they were
compiled with until this file changes, so an edit there needs this file touched as well.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from optframe.drivers import smo_core as core

INF = math.inf
INNER_FRACTION = 0.1  # the working set is solved to max(tol, INNER_FRACTION * gap)
INNER_SHRINK = 1000  # pair steps between the shrinking checks inside a working set
BUCKETS = 1024  # histogram bins of the working-set selection

# A working set that meets its rule within q / SHORT_SET pair steps is short; after GROW_AFTER
# short ones in a row, while more than twice q variables are active, q doubles (at most to
# twice the size asked for). ijcnn1's test file at 4,096: 558 sets of about 64 steps each,
# 52,842 steps in all; growing: 112 sets, 38,153 steps, 4.09 -> 2.81 s (a9a and w8a: no set
# grows, the same steps).
SHORT_SET, GROW_AFTER = 32, 4

# wcount[] slots (LAST_I, LAST_J: the positions of the last pair step of the last working set;
# SIZE: the working-set size now, 0 before the first; SHORT: short sets in a row)
SETS, GRAM_ROWS, LAST_I, LAST_J, SIZE, SHORT = 0, 1, 2, 3, 4, 5
N_WCOUNT = 6


@numba.njit(cache=True)
def add_point(Z, k, v, w):
    """``w += v z_k`` (position k of Z, the layout of :func:`optframe.drivers.smo.row_points`)."""
    XT, indptr, indices, values = Z[0], Z[1], Z[2], Z[3]
    if indptr.shape[0] > 0:
        for p in range(indptr[k], indptr[k + 1]):
            w[indices[p]] += v * values[p]
    else:
        for f in range(XT.shape[0]):
            w[f] += v * XT[f, k]


@numba.njit(cache=True)
def negative_gradient(Z, w, a, c, m, NG):
    r""":math:`NG_k = -a_k G_k = -a_k c_k - z_k^\top w` for the positions ``k < m`` (O(nnz))."""
    XT, indptr, indices, values = Z[0], Z[1], Z[2], Z[3]
    if indptr.shape[0] > 0:
        for k in range(m):
            dot = 0.0
            for p in range(indptr[k], indptr[k + 1]):
                dot += values[p] * w[indices[p]]
            NG[k] = -a[k] * c[k] - dot
        return
    for k in range(m):
        NG[k] = -a[k] * c[k]
    for f in range(XT.shape[0]):
        wf = w[f]
        if wf != 0.0:
            col = XT[f]
            for k in range(m):
                NG[k] -= wf * col[k]


@numba.njit(cache=True)
def _top(keys, where, count, want):
    """``where[t]`` for (about) the ``want`` largest ``keys[:count]``, the largest always in.

    A histogram of the keys in ``BUCKETS`` equal bins: every key of the bins above the one
    where ``want`` is reached, then keys of that bin in order up to ``want`` (O(count), no
    sort; an infinite key counts as the largest finite one).
    """
    if count <= want:
        return where[:count].copy()
    hi, lo = -INF, INF
    for t in range(count):
        v = keys[t]
        if v < INF:
            hi = max(hi, v)
        lo = min(lo, v)
    out = np.empty(want, dtype=np.int64)
    scale = BUCKETS / (hi - lo) if hi > lo else INF
    if not scale < INF:  # all equal (or too close to bin): the first ones
        for t in range(want):
            out[t] = where[t]
        return out
    bins = np.zeros(BUCKETS + 1, dtype=np.int64)
    for t in range(count):
        b = min(int((min(keys[t], hi) - lo) * scale), BUCKETS)
        bins[b] += 1
    cut, above = BUCKETS, 0
    while above + bins[cut] < want:
        above += bins[cut]
        cut -= 1
    room = want - above
    taken = 0
    for t in range(count):
        b = min(int((min(keys[t], hi) - lo) * scale), BUCKETS)
        if b > cut or (b == cut and room > 0):
            if b == cut:
                room -= 1
            out[taken] = where[t]
            taken += 1
    return out[:taken]


@numba.njit(cache=True)
def select(NG, up_off, low, gmax, gmin, imax, jmin, m, q, keys, where):
    """The working set (positions, sorted): about ``q / 2`` variables on each side and the pair.

    The largest ``up > min low`` and the smallest ``low < max up`` (:func:`_top`), and the
    maximal violating pair ``(imax, jmin)``. ``keys``, ``where``: scratch of length m.
    """
    half = max(q // 2, 1)
    count = 0
    for k in range(m):
        up = NG[k] + up_off[k]
        keys[count] = up
        where[count] = k
        count += up > gmin
    ups = _top(keys, where, np.int64(count), half)  # np.int64: never a literal (one compile)
    count = 0
    for k in range(m):
        v = low[k]
        keys[count] = -v  # the smallest low first
        where[count] = k
        count += v < gmax
    lows = _top(keys, where, np.int64(count), half)
    # the union in increasing position: marks over the m positions (O(m), as the scans above)
    chosen = np.zeros(m, dtype=np.bool_)
    chosen[imax] = True
    chosen[jmin] = True
    for t in range(ups.shape[0]):
        chosen[ups[t]] = True
    for t in range(lows.shape[0]):
        chosen[lows[t]] = True
    size = 0
    for k in range(m):
        size += chosen[k]
    B = np.empty(size, dtype=np.int64)
    size = 0
    for k in range(m):
        if chosen[k]:
            B[size] = k
            size += 1
    return B


@numba.njit(cache=True)
def _permute_active(order, Z, vectors, perm, m):
    """:func:`optframe.drivers.smo_core.permute` on the positions below ``m`` only.

    Shrinking keeps the positions from ``m`` on in place, so O(m) and the non-zeros of the
    active points instead of O(n) and all of them (w8a's tail, about 560 active of 49,749:
    8 ms a shrinking); the column copy of Z is not rebuilt (the steps through w read rows
    only; a working set builds its own).
    """
    XT, indptr, indices, values = Z[0], Z[1], Z[2], Z[3]
    head = order[:m]
    for v in vectors:
        core._permute(v[:m], head)
    core._permute(perm[:m], head)
    if indptr.shape[0] > 0:
        end = indptr[m]
        old_ptr = indptr[: m + 1].copy()
        old_idx, old_val = indices[:end].copy(), values[:end].copy()
        p = 0
        for t in range(m):
            k = head[t]
            indptr[t] = p
            for s in range(old_ptr[k], old_ptr[k + 1]):
                indices[p] = old_idx[s]
                values[p] = old_val[s]
                p += 1
        if XT.shape[0] > 0:  # the bits of binary points
            old_bits = XT[:m].copy()
            for t in range(m):
                XT[t] = old_bits[head[t]]
    else:
        for f in range(XT.shape[0]):
            core._permute(XT[f, :m], head)


@numba.njit(cache=True)
def _local_points(Z, B):
    """The points of ``B`` in the row layout (dense columns, or CSR rows with a column copy)."""
    XT, indptr, indices, values = Z[0], Z[1], Z[2], Z[3]
    q = B.shape[0]
    empty_int = np.empty(0, dtype=np.int64)
    if indptr.shape[0] == 0:
        d = XT.shape[0]
        XTb = np.empty((d, q))
        for f in range(d):
            for t in range(q):
                XTb[f, t] = XT[f, B[t]]
        return (XTb, empty_int, empty_int, np.empty(0), empty_int, empty_int, np.empty(0))
    d = Z[4].shape[0] - 1
    if XT.shape[0] > 0:  # binary points: their bits (the Gram rows by popcounts), no CSR
        bits = np.empty((q, XT.shape[1]))
        for t in range(q):
            bits[t] = XT[B[t]]
        return (bits, np.zeros(q + 1, dtype=np.int64), empty_int, np.empty(0),
                np.zeros(d + 1, dtype=np.int64), empty_int, np.empty(0))  # fmt: skip
    ptr = np.empty(q + 1, dtype=np.int64)
    ptr[0] = 0
    for t in range(q):
        ptr[t + 1] = ptr[t] + indptr[B[t] + 1] - indptr[B[t]]
    nnz = ptr[q]
    idx = np.empty(nnz, dtype=np.int64)
    val = np.empty(nnz)
    for t in range(q):
        start = indptr[B[t]]
        for p in range(ptr[t], ptr[t + 1]):
            idx[p] = indices[start + p - ptr[t]]
            val[p] = values[start + p - ptr[t]]
    Zb = (np.empty((0, 0)), ptr, idx, val, np.zeros(d + 1, dtype=np.int64),
          np.empty(nnz, dtype=np.int64), np.empty(nnz))  # fmt: skip
    core.build_columns(Zb)
    return Zb


@numba.njit(cache=True)
def _subproblem(
    Z, B, diag, a, u, kink, sb, sa, x, NG, wcount, tol, n_iter, second, eps_snap, gram, every
):
    """:func:`subproblem` of the linear kernel (its diagonal the squared norms)."""
    return subproblem(
        Z, B, diag, 0, 0.0, 0.0, 1.0, diag, a, u, kink, sb, sa, x, NG, wcount, tol, n_iter,
        second, eps_snap, gram, every,
    )  # fmt: skip


@numba.njit(cache=True)
def subproblem(
    Z, B, sqn, kind, gamma, coef0, degree, diag, a, u, kink, sb, sa, x, NG, wcount, tol, n_iter,
    second, eps_snap, gram, every,
):  # fmt: skip
    r"""Pair steps on the variables ``B`` (the others fixed); returns (code, steps, dphi, xB).

    The subproblem's gradient is ``G`` on B (``NG`` is :math:`-a \circ G`); its kernel rows
    (``kind``, ``gamma``, ``coef0``, ``degree`` and the squared norms ``sqn`` of
    :func:`optframe.drivers.smo_core.get_row`) are computed when needed, in an LRU cache in
    ``gram`` (at least two rows; one buffer for all the working sets, so its pages are not
    faulted in again for each). Also the subproblem of
    :mod:`optframe.drivers.smo_sets`.
    """
    Zb, sqnB, diagB, aB, uB, kB, sbB, saB, xB, NGB, permB, work, cache, counters, buf = set_state(
        Z, B, sqn, diag, a, u, kink, sb, sa, x, NG, gram
    )
    q = B.shape[0]
    terms = (np.ones(q), 0.0, 0.0, True)
    code, steps, _, dphi = core._steps(
        Zb, sqnB, kind, gamma, coef0, degree, terms, diagB, aB, work[0], uB, kB, sbB, saB, xB,
        work[1], NGB, work[2], permB, work[3], work[4], work[5], cache, counters, buf, tol,
        n_iter, second, False, True, min(q, every), eps_snap, core.SERIAL,
    )  # fmt: skip
    return code, steps, dphi, set_result(B, xB, permB, counters, wcount, steps)


@numba.njit(cache=True)
def set_state(Z, B, sqn, diag, a, u, kink, sb, sa, x, NG, gram):
    """A working set's own arrays: its points, its variables' values, scratch and row cache.

    ``work`` (6, q): the zero linear term, the gradient, scratch, and the ``up`` and ``low``
    offsets and ``low`` of the scans.
    """
    q = B.shape[0]
    Zb = _local_points(Z, B)
    work = np.zeros((6, q))
    slots = max(2, min(q, gram.shape[0] // q))
    cache = core.row_cache(gram[: slots * q].reshape((slots, q)), q)
    counters = np.zeros(core.N_COUNTERS, dtype=np.int64)
    counters[core.ACTIVE] = q
    return (Zb, sqn[B], diag[B], a[B], u[B], kink[B], sb[B], sa[B], x[B], NG[B], np.arange(q),
            work, cache, counters, np.empty(q))  # fmt: skip


@numba.njit(cache=True)
def set_result(B, xB, permB, counters, wcount, steps):
    """The set's new values in B's order; the Gram rows and the last pair into ``wcount``."""
    wcount[GRAM_ROWS] += counters[core.ROWS]
    if steps > 0:  # the last pair, as positions of the whole problem
        wcount[LAST_I] = B[counters[core.LAST_I]]
        wcount[LAST_J] = B[counters[core.LAST_J]]
    moved = np.empty(B.shape[0])
    for p in range(B.shape[0]):  # back from the positions shrinking moved them to
        moved[permB[p]] = xB[p]
    return moved


@numba.njit(cache=True)
def run_chunk(
    Z, w, diag, a, c, u, kink, sb, sa, x, G, perm, work, counters, wcount,
    tol, n_iter, second, shrinking, shrink_every, q, eps_snap, gram, inner_shrink,
):  # fmt: skip
    r"""At most ``n_iter`` pair steps through ``w``; return (code, steps, gap, objective change).

    The arguments and codes are those of :func:`optframe.drivers.smo_core.run_chunk`, with
    ``Z`` the float64 points in the row layout, ``w`` (d,) kept equal to
    :math:`\sum_l a_l x_l z_l`, ``q`` the working-set size asked for (it doubles once sets
    keep stopping early, see ``SHORT_SET``), ``gram`` (float64, at least ``2 (q + 2)``) the
    buffer of the working sets' Gram rows and ``wcount`` the working sets, Gram rows and the
    size now, kept across calls. The first
    rule check uses ``G`` as given (the driver's gradient from scratch); the later ones the
    gradient from ``w`` on the active positions.
    """
    n = x.shape[0]
    up_off, low_off, low, NG, keys = work[0], work[1], work[2], work[3], work[4]
    where = np.empty(n, dtype=np.int64)
    for k in range(n):
        NG[k] = -a[k] * G[k]
    m = counters[core.ACTIVE]
    core.set_offsets(a, x, u, kink, sb, sa, up_off, low_off, np.int64(0), m)  # not a literal
    done, dphi, gap, code = 0, 0.0, INF, 0
    # the sizes the Gram buffer holds two rows of (at least the size asked for)
    largest = max(q, min(2 * q, gram.shape[0] // 2 - 2))
    if wcount[SIZE] == 0:
        wcount[SIZE] = q
    while True:
        gmax, imax, gmin, jmin = core.scan(NG, up_off, low_off, low, m)
        gap = gmax - gmin
        if gap <= tol:
            code = 3 if m < n else 1
            break
        if done >= n_iter:
            break
        if shrinking and counters[core.SINCE_SHRINK] >= shrink_every:
            counters[core.SINCE_SHRINK] = 0
            order, kept = core._shrink(NG, up_off, low, gmax, gmin, m)
            if kept < m:
                # low and keys are scratch (scan and select fill them again)
                vectors = (diag, a, c, u, kink, sb, sa, x, G, NG, up_off, low_off, low, keys)
                _permute_active(order, Z, vectors, perm, m)
                m = kept
                counters[core.ACTIVE] = m
                counters[core.N_SHRUNK] = n - m
                gmax, imax, gmin, jmin = core.scan(NG, up_off, low_off, low, m)
        size = wcount[SIZE]
        B = select(NG, up_off, low, gmax, gmin, imax, jmin, m, size, keys, where)
        inner_tol = max(tol, INNER_FRACTION * gap)
        inner, steps, step_phi, xB = _subproblem(
            Z, B, diag, a, u, kink, sb, sa, x, NG, wcount, inner_tol, n_iter - done, second,
            eps_snap, gram, inner_shrink,
        )  # fmt: skip
        wcount[SETS] += 1
        if steps == 0 and inner == 2:
            code = 2
            break
        if (inner == 1 or inner == 3) and steps < size // SHORT_SET:
            wcount[SHORT] += 1
        else:
            wcount[SHORT] = 0
        if wcount[SHORT] >= GROW_AFTER and m > 2 * size:
            wcount[SIZE] = min(2 * size, largest)
            wcount[SHORT] = 0
        for t in range(B.shape[0]):
            k = B[t]
            dx = xB[t] - x[k]
            if dx != 0.0:
                add_point(Z, k, a[k] * dx, w)
                x[k] = xB[t]
                core.set_offsets(a, x, u, kink, sb, sa, up_off, low_off, k, k + 1)
        done += steps
        dphi += step_phi
        if steps > 0:
            counters[core.LAST_I] = perm[wcount[LAST_I]]
            counters[core.LAST_J] = perm[wcount[LAST_J]]
        counters[core.STEPS] += steps
        counters[core.SINCE_SHRINK] += steps
        negative_gradient(Z, w, a, c, m, NG)
    for k in range(n):
        G[k] = -a[k] * NG[k]
    return code, done, gap, dphi
