r"""Numba kernels of the Frank-Wolfe (FW, MFW) and Core Vector Machine (CVM) drivers.

The problem (notes/frank_wolfe.md sections 1.3-1.5) is

.. math::

    \min_\alpha \; R(\alpha) = \alpha^\top \tilde K \alpha
    \quad\text{s.t.}\quad \textstyle\sum_i \alpha_i = 1, \quad \alpha \ge 0,
    \qquad \tilde K_{ij} = y_i y_j (k(x_i, x_j) + 1) + \delta_{ij} \rho_0,

with :math:`\rho_0 = 1/C`; equivalently :math:`\max g(\alpha) = \Delta^2 - R(\alpha)`. The state is
:math:`\alpha`, the cache :math:`s = \tilde K\alpha` and :math:`R = \alpha^\top s`, updated in
closed form from one column of :math:`\tilde K` per step (section 2.5). The toward vertex minimizes
:math:`s_i` (maximizes :math:`\nabla g_i`), the away vertex maximizes :math:`s_j` over the coreset;
the FW gap is :math:`2(R - s_{i^*})` and :math:`\delta_+ = 2(R - s_{i^*}) / g`, which for a kernel
with a constant diagonal is the paper's :math:`\gamma^2(\alpha; i^*)/r^2 - 1`. The pairwise variant
(PFW, Lacoste-Julien and Jaggi 2015) moves mass from the away vertex to the toward vertex in one
step, from two columns.

FW and MFW keep :math:`s` on every point, so a step costs one full column (m kernel values,
nothing when the column is cached) plus O(m); CVM keeps it on the coreset and evaluates sampled
candidates from scratch (its coreset weights all change at every inner solve). Points are CSR rows,
so a kernel value costs :math:`O(\mathrm{nnz}(x_i))`; when the data are dense enough and fit a
memory budget they are also given as a dense matrix ``Xd`` (a full column is then one
matrix-vector product); ``Xd`` has no rows otherwise. Columns of :math:`\tilde K` live in SMO's
row cache (:func:`column_cache`; the matrix is symmetric, so a column is a row over the points in
their order), full or not at all.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from optframe.drivers.kernel_cache import cache_slots, lru_slot
from optframe.drivers.smo_core import row_cache
from optframe.kernel_sums import exp_neg
from optframe.kernel_sums import kernel_from_dot as _kernel

INF = math.inf

# counters[] slots
(CLOCK, EVALS, MISSES, HITS, STEPS, FW_STEPS, AWAY_STEPS, DROP_STEPS, SMO_STEPS,
 PAIR_STEPS) = range(10)  # fmt: skip
# ints[] slots: coreset size, forced candidate (-1: none), last toward index, last away index
Q, FORCED, LAST_I, LAST_J = range(4)
# sc[] slots: R, tracked r^2 (closed-form modes), last delta_plus, last delta_minus, Delta^2
S_R, S_R2, S_DPLUS, S_DMINUS, S_DELTA2 = range(5)
# radius modes
MAINTAINED, RECURSION, PAPER_SIGN = 0, 1, 2
# fw_chunk variants: toward steps only, toward or away (MFW), pairwise (PFW)
PLAIN, AWAY, PAIRWISE = 0, 1, 2


def point_arrays(X, dense: bool) -> tuple:
    """(indptr, indices, data, (cptr, crow, cval)) of sorted CSR points ``X`` for the kernels.

    The CSC copy (``_fill``'s sparse full columns) is built only when there is no dense copy.
    """
    parts = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data.astype(np.float64))
    if dense:
        return *parts, (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0))
    Xc = X.tocsc()
    Xc.sort_indices()
    return *parts, (Xc.indptr.astype(np.int64), Xc.indices.astype(np.int64), Xc.data.copy())


def column_cache(m: int, cache_bytes: int) -> tuple[tuple, int]:
    r"""The LRU cache of full columns of length ``m`` within ``cache_bytes``, and its slots.

    SMO's row cache (:func:`optframe.drivers.smo_core.row_cache`): ``(columns, slot of each
    point, owner of each slot, stamps, filled length)``; a column is cached when its length is m
    (:math:`\tilde K` is symmetric: a column is a row over the points in their order).
    """
    slots = cache_slots(m, cache_bytes, 8)
    return row_cache(np.empty((slots, m)), m), slots


@numba.njit(cache=True)
def seed(value):
    """Seed numba's generator (used by the sampling of candidates)."""
    np.random.seed(value)  # noqa: NPY002 (numba's generator)


@numba.njit(cache=True, fastmath=True)
def _ddot(a, b):
    """Dense dot product (fastmath lets numba vectorize the reduction)."""
    total = 0.0
    for k in range(a.shape[0]):
        total += a[k] * b[k]
    return total


# entries per call of the vectorized exponential in _column_from_dots (its int64 scratch)
_EXP_CHUNK = 4096


@numba.njit(cache=True)
def _column_from_dots(t, dots, col, sqn, y, kp, bits):
    """Full column ``col[i] = K~[i, t]`` from ``dots[i] = <x_i, x_t>`` (``dots`` may be ``col``).

    The RBF exponential is vectorized (``exp_neg``, within 1 ulp of libm) by chunks of
    ``len(bits)`` entries (with a scalar ``exp`` per entry, a full a9a column cost 348 us
    instead of 243 us).
    """
    kind, gamma, coef0, degree, ridge = int(kp[0]), kp[1], kp[2], kp[3], kp[4]
    m = sqn.shape[0]
    yt, sqt = y[t], sqn[t]
    if kind == 1:
        for i in range(m):
            col[i] = max(sqn[i] + sqt - 2.0 * dots[i], 0.0)
        width = bits.shape[0]
        for lo in range(0, m, width):
            hi = min(lo + width, m)
            exp_neg(col[lo:hi], gamma, bits[: hi - lo])
    else:
        for i in range(m):
            col[i] = _kernel(dots[i], sqn[i], sqt, kind, gamma, coef0, degree)
    for i in range(m):
        col[i] = y[i] * yt * (col[i] + 1.0)
    col[t] += ridge


@numba.njit(cache=True)
def _fill(t, col, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp, counters):
    """The full column ``col[i] = K~[i, t]`` of all m points.

    One matrix-vector product with the dense points (``Xd`` has rows), or an accumulation along
    the CSC columns of x_t's features.
    """
    m = sqn.shape[0]
    if Xd.shape[0] > 0:
        col[:] = Xd @ Xd[t]
    else:
        col[:] = 0.0
        for p in range(indptr[t], indptr[t + 1]):
            f, v = indices[p], data[p]
            for u in range(cptr[f], cptr[f + 1]):
                col[crow[u]] += v * cval[u]
    _column_from_dots(t, col, col, sqn, y, kp, np.empty(min(m, _EXP_CHUNK), np.int64))
    counters[EVALS] += m


@numba.njit(cache=True)
def claim(t, cache, counters):
    """The slot of column t: its own (a hit) or the least recently used one (a miss, emptied)."""
    counters[CLOCK] += 1
    s, hit = lru_slot(t, cache[1], cache[2], cache[3], counters[CLOCK])
    if hit:
        counters[HITS] += 1
    else:
        cache[4][s] = 0
        counters[MISSES] += 1
    return s


@numba.njit(cache=True)
def column(t, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp, cache, counters):
    """Column t of K~ on all points, from the cache or computed."""
    s = claim(t, cache, counters)
    m = sqn.shape[0]
    if cache[4][s] < m:
        _fill(t, cache[0][s], indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp, counters)
        cache[4][s] = m
    return cache[0][s]


@numba.njit(cache=True)
def store_columns(block, dots, sqn, y, kp, bits, cache, counters):
    """Cache the full columns ``block`` of K~ from ``dots[r, i] = <x_block[r], x_i>``.

    The dot products come from one matrix product (BLAS, or a sparse product), which reads the
    points once for the whole block instead of once per column; the RBF exponential is
    vectorized (``exp_neg``, within 1 ulp of libm).
    """
    m = sqn.shape[0]
    for r in range(block.shape[0]):
        t = block[r]
        s = claim(t, cache, counters)
        _column_from_dots(t, dots[r], cache[0][s], sqn, y, kp, bits)
        cache[4][s] = m
        counters[EVALS] += m


@numba.njit(cache=True)
def gather_columns(local, members, source, cache, counters):
    """Cache restricted columns K~[members, members[k]], k in ``local``, read from full ones.

    The full columns are those cached in ``source`` (a cache over all points); points whose full
    column is not cached there are left out. Gathered columns are not counted as misses (no
    kernel value is computed).
    """
    a = members.shape[0]
    m = source[0].shape[1]
    done = 0
    for r in range(local.shape[0]):
        if done >= cache[3].shape[0] - 1:
            break
        k = local[r]
        src = source[1][members[k]]
        if src < 0 or source[4][src] < m:
            continue
        s = claim(k, cache, counters)
        if cache[4][s] < a:
            counters[MISSES] -= 1
        col = cache[0][s]
        full = source[0][src]
        for i in range(a):
            col[i] = full[members[i]]
        cache[4][s] = a
        done += 1


@numba.njit(cache=True)
def s_of_point(
    i, core, q, alpha, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp, work, counters
):
    """s_i = sum_{j in core} alpha_j K~_ij for one point, from scratch (q kernel values)."""
    kind, gamma, coef0, degree, ridge = int(kp[0]), kp[1], kp[2], kp[3], kp[4]
    dense = Xd.shape[0] > 0
    if not dense:
        for p in range(indptr[i], indptr[i + 1]):
            work[indices[p]] = data[p]
    total = 0.0
    for r in range(q):
        j = core[r]
        if dense:
            dot = _ddot(Xd[j], Xd[i])
        else:
            dot = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                dot += data[p] * work[indices[p]]
        value = y[i] * y[j] * (_kernel(dot, sqn[i], sqn[j], kind, gamma, coef0, degree) + 1.0)
        if i == j:
            value += ridge
        total += alpha[j] * value
    counters[EVALS] += q
    if not dense:
        for p in range(indptr[i], indptr[i + 1]):
            work[indices[p]] = 0.0
    return total


@numba.njit(cache=True)
def accumulate(members, alpha, cols, slot_of, fresh):
    """Add sum_j alpha_j K~[:, j] over ``members`` (full columns cached) to ``fresh``."""
    m = fresh.shape[0]
    for r in range(members.shape[0]):
        j = members[r]
        col = cols[slot_of[j]]
        a = alpha[j]
        for i in range(m):
            fresh[i] += a * col[i]


@numba.njit(cache=True)
def install(fresh, s, alpha, core, q):
    """Copy ``fresh`` into s; return (R, argmin s, largest change of s on the coreset)."""
    drift = 0.0
    for r in range(q):
        k = core[r]
        drift = max(drift, abs(s[k] - fresh[k]))
    R = 0.0
    best = 0
    for i in range(fresh.shape[0]):
        s[i] = fresh[i]
        R += alpha[i] * fresh[i]
        if fresh[i] < fresh[best]:
            best = i
    return R, best, drift


@numba.njit(cache=True)
def _add(t, core, pos, ints):
    q = ints[Q]
    core[q] = t
    pos[t] = q
    ints[Q] = q + 1


@numba.njit(cache=True)
def _remove(t, core, pos, ints):
    q = ints[Q] - 1
    p = pos[t]
    last = core[q]
    core[p] = last
    pos[last] = p
    pos[t] = -1
    ints[Q] = q


@numba.njit(cache=True, inline="always")
def _scale(alpha, core, q, a):
    """alpha[core] *= a; return the new sum over the coreset (one pass)."""
    total = 0.0
    for r in range(q):
        k = core[r]
        v = alpha[k] * a
        alpha[k] = v
        total += v
    return total


@numba.njit(cache=True)
def fw_chunk(
    indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp, diag,
    cache, counters,
    alpha, s, core, pos, ints, sc,
    sample_size, away, mode, thr, n_iter, trace_f, trace_i, with_core,
):  # fmt: skip
    """Run at most ``n_iter`` FW (``away=PLAIN``), MFW (``AWAY``) or PFW (``PAIRWISE``) steps.

    Returns (code, steps).

    ``s = K~ alpha`` is maintained on every point: each step reads one full column of K~ (from
    the cache, or m kernel values) and updates s in O(m). The toward candidates are all points
    when ``sample_size <= 0``, else the draws among ``sample_size`` uniform ones that are not in
    the coreset, the forced index and, when ``with_core``, the coreset (the coreset alone when no
    candidate is left); their s values are lookups.
    code 0: budget used; 1: delta_plus <= thr on the candidates.
    ``mode``: MAINTAINED (exact line search with the true diagonal, r^2 = Delta^2 - R),
    RECURSION (the paper's closed forms, corrected away-step sign) or PAPER_SIGN (the paper's
    literal step 21, erratum E1); PAIRWISE needs MAINTAINED. A pairwise step moves
    ``lambda`` in [0, alpha_j] from the away vertex j (argmax s over the coreset) to the toward
    vertex i; R(lambda) = R + 2 lambda (s_i - s_j) + lambda^2 (k~_ii + k~_jj - 2 k~_ij) is
    minimized exactly (any diagonal), and s moves by lambda (K~[:, i] - K~[:, j]).
    Trace rows (when ``trace_f`` has rows): R, lambda, delta_plus, delta_minus, tracked r^2; and
    kind (0 FW, 1 away, 2 drop, 3 pairwise, 4 pairwise drop), index (the toward vertex of a
    pairwise step), coreset size after the step, away vertex of a pairwise step (else -1).
    """
    m = alpha.shape[0]
    delta2 = sc[S_DELTA2]
    pairwise = away == PAIRWISE
    # PFW's alpha sum is tracked from the exact one at each chunk start (a pair step keeps it
    # to rounding, so it needs no O(q) pass per step)
    ptotal = 0.0
    if pairwise:
        for r in range(ints[Q]):
            ptotal += alpha[core[r]]
    for it in range(n_iter):
        q = ints[Q]
        R = sc[S_R]
        # --- one pass over the coreset: its argmin s (sampled candidates with the coreset)
        # and its argmax s (the away vertex)
        use_min = sample_size > 0 and with_core
        use_max = (away == AWAY and q > 1) or (pairwise and q > 0)
        cmin, cimin, cmax, cjmax = INF, -1, -INF, -1
        if use_min or use_max:
            for r in range(q):
                k = core[r]
                v = s[k]
                if v < cmin:
                    cmin = v
                    cimin = k
                if v > cmax:
                    cmax = v
                    cjmax = k
        # --- toward candidate: argmin s over the candidates
        imin = -1
        best = INF
        if sample_size <= 0:
            for i in range(m):
                if s[i] < best:
                    best = s[i]
                    imin = i
        else:
            if with_core:
                best, imin = cmin, cimin
            forced = ints[FORCED]
            if forced >= 0:
                if s[forced] < best:
                    best = s[forced]
                    imin = forced
                ints[FORCED] = -1
            for _ in range(sample_size):
                i = np.random.randint(0, m)  # noqa: NPY002 (numba's generator)
                if pos[i] < 0 and s[i] < best:  # draws outside the coreset, as before
                    best = s[i]
                    imin = i
            if imin < 0:  # every draw was a coreset point: use the coreset
                for r in range(q):
                    i = core[r]
                    if s[i] < best:
                        best = s[i]
                        imin = i
        # --- away candidate: argmax s over the coreset
        jmax = cjmax if use_max else -1
        g = max(delta2 - R, 1e-300)
        if mode == MAINTAINED:
            dplus = 2.0 * (R - s[imin]) / g
            dminus = 2.0 * (s[jmax] - R) / g if jmax >= 0 else -INF
        else:
            r2 = sc[S_R2]
            dplus = (delta2 + R - 2.0 * s[imin]) / r2 - 1.0
            dminus = 1.0 - (delta2 + R - 2.0 * s[jmax]) / r2 if jmax >= 0 else -INF
        sc[S_DPLUS] = dplus
        sc[S_DMINUS] = dminus
        ints[LAST_I] = imin
        ints[LAST_J] = jmax
        if dplus <= thr:
            return 1, it
        partner = -1
        if pairwise and jmax >= 0 and jmax != imin:
            # --- pairwise step: lambda in [0, alpha_j] from jmax to imin (drop at the bound)
            t, partner = imin, jmax
            col = column(t, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp,
                         cache, counters)  # fmt: skip
            # LRU with >= 2 slots: fetching the partner cannot evict t's column (just stamped)
            col_j = column(partner, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp,
                         cache, counters)  # fmt: skip
            st, sj, aj = s[t], s[partner], alpha[partner]
            curv = diag[t] + diag[partner] - 2.0 * col[partner]
            lam = (sj - st) / max(curv, 1e-300)
            lam = min(max(lam, 0.0), aj)
            drop = lam >= aj
            R_new = R + 2.0 * lam * (st - sj) + lam * lam * curv
            for i in range(m):
                s[i] += lam * (col[i] - col_j[i])
            at = alpha[t]
            alpha[t] = at + lam
            if pos[t] < 0 and lam > 0.0:
                _add(t, core, pos, ints)
            if drop:
                alpha[partner] = 0.0
                _remove(partner, core, pos, ints)
                counters[DROP_STEPS] += 1
                kind = 4
            else:
                alpha[partner] = aj - lam
                counters[PAIR_STEPS] += 1
                kind = 3
            ptotal += (alpha[t] - at) + (alpha[partner] - aj)
            total = ptotal
        elif jmax >= 0 and dminus > dplus and not pairwise:
            # --- away step on jmax (drop step when the bound is hit)
            t = jmax
            col = column(t, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp,
                         cache, counters)  # fmt: skip
            st, dt, at = s[t], diag[t], alpha[t]
            lam_max = at / (1.0 - at)
            if mode == MAINTAINED:
                lam = (st - R) / max(dt + R - 2.0 * st, 1e-300)
            else:
                lam = dminus / (2.0 * (1.0 - dminus))
            lam = min(max(lam, 0.0), lam_max)
            drop = lam >= lam_max
            if mode == RECURSION:
                sc[S_R2] = (1.0 + lam) * sc[S_R2] - lam * (1.0 + lam) * (delta2 + R - 2.0 * st)
            elif mode == PAPER_SIGN:
                r2 = sc[S_R2]
                sc[S_R2] = (1.0 + lam) * r2 - lam * (1.0 + lam) * (dminus - 1.0) * r2
            R_new = (1.0 + lam) ** 2 * R - 2.0 * lam * (1.0 + lam) * st + lam * lam * dt
            a, b = 1.0 + lam, lam
            for i in range(m):
                s[i] = a * s[i] - b * col[i]
            total = _scale(alpha, core, q, a)
            at_scaled = alpha[t]
            alpha[t] -= lam
            if drop:
                alpha[t] = 0.0
                _remove(t, core, pos, ints)
                counters[DROP_STEPS] += 1
                kind = 2
            else:
                counters[AWAY_STEPS] += 1
                kind = 1
            total += alpha[t] - at_scaled
        else:
            # --- toward (FW) step on imin
            t = imin
            col = column(t, indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp,
                         cache, counters)  # fmt: skip
            st, dt = s[t], diag[t]
            if mode == MAINTAINED:
                lam = (R - st) / max(dt + R - 2.0 * st, 1e-300)
            else:
                lam = 0.5 * (1.0 - sc[S_R2] / (delta2 + R - 2.0 * st))
                sc[S_R2] *= 1.0 + dplus * dplus / (4.0 * (1.0 + dplus))
            lam = min(max(lam, 0.0), 1.0)
            R_new = (1.0 - lam) ** 2 * R + 2.0 * lam * (1.0 - lam) * st + lam * lam * dt
            a, b = 1.0 - lam, lam
            for i in range(m):
                s[i] = a * s[i] + b * col[i]
            total = _scale(alpha, core, q, a)
            at_scaled = alpha[t]
            alpha[t] += lam
            if pos[t] < 0 and lam > 0.0:
                _add(t, core, pos, ints)
            total += alpha[t] - at_scaled
            counters[FW_STEPS] += 1
            kind = 0
        # --- keep sum(alpha) = 1 to rounding: rescale alpha, s and R together
        q = ints[Q]
        if abs(total - 1.0) > 1e-14:
            for r in range(q):
                alpha[core[r]] /= total
            for i in range(m):
                s[i] /= total
            R_new /= total * total
            ptotal = 1.0
        sc[S_R] = R_new
        step = counters[STEPS]
        if step < trace_f.shape[0]:
            trace_f[step, 0] = R_new
            trace_f[step, 1] = lam
            trace_f[step, 2] = dplus
            trace_f[step, 3] = dminus
            trace_f[step, 4] = sc[S_R2]
            trace_i[step, 0] = kind
            trace_i[step, 1] = t
            trace_i[step, 2] = q
            trace_i[step, 3] = partner
        counters[STEPS] += 1
    return 0, n_iter


@numba.njit(cache=True)
def argmin(s):
    """Index of the smallest entry (the exact toward vertex), O(m)."""
    best = 0
    for i in range(1, s.shape[0]):
        if s[i] < s[best]:
            best = i
    return best


@numba.njit(cache=True)
def cvm_search(
    indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp, work, alpha, s, core, pos, q, m,
    sample_size, redraws,
    R, g, thr, counters,
):  # fmt: skip
    """CVM's sampled violator search: up to ``redraws`` draws of ``sample_size`` non-core points.

    Returns (index, delta_plus) of the best point of the first draw holding a violator
    (delta_plus > thr), or of the last draw when none violates.
    """
    best_i = -1
    best_d = -INF
    for _ in range(redraws):
        best_i = -1
        best_d = -INF
        for _ in range(sample_size):
            i = np.random.randint(0, m)  # noqa: NPY002 (numba's generator)
            if pos[i] >= 0:
                continue
            v = s_of_point(
                i,
                core,
                q,
                alpha,
                indptr,
                indices,
                data,
                Xd,
                cptr,
                crow,
                cval,
                sqn,
                y,
                kp,
                work,
                counters,
            )
            s[i] = v
            d = 2.0 * (R - v) / g
            if d > best_d:
                best_d = d
                best_i = i
        if best_d > thr:
            return best_i, best_d
    return best_i, best_d
