r"""Numba kernels of the :class:`~optframe.drivers.smo.SMO` driver.

The problem (see :class:`~optframe.drivers.smo.BoxQPDual`) is

.. math::

    \min_x \; \tfrac12 x^\top Q x + c^\top x + \sum_i h_i(x_i)
    \quad\text{s.t.}\quad a^\top x = b, \quad 0 \le x \le u,

with :math:`a_i = \pm 1`, :math:`Q_{ij} = a_i a_j k(z_i, z_j)` and
:math:`h_i(s) = s^-_i \min(s, \kappa_i) + s^+_i \max(s - \kappa_i, 0)`. A pair step moves
:math:`x_i \mathrel{+}= a_i t`, :math:`x_j \mathrel{-}= a_j t`, which keeps :math:`a^\top x`. With
:math:`G = Qx + c`, the steepest rates are

* ``up_i`` :math:`= -` (derivative of the objective along :math:`x_i \mathrel{+}= a_i t`), and
* ``low_j`` :math:`=` (derivative along :math:`x_j \mathrel{-}= a_j t`),

both with the one-sided slopes of :math:`h` (:math:`-\infty` / :math:`+\infty` when the move
leaves the box). The pair's derivative at :math:`t = 0^+` is ``low_j - up_i``, so the point is
:math:`\tau`-optimal iff :math:`\max_i \mathrm{up}_i - \min_j \mathrm{low}_j \le \tau` (for PU
this is the complete rule of notes/usmo.md section 2.4). The kernel-row cache is an LRU of full
rows in a ``(slots, n)`` array; the state lives in arrays so the loop can be resumed chunk by chunk.
The points travel as ``Z = (dense, indptr, indices, values, scratch)`` (see :func:`fill_row`), so
sparse data stay sparse.
"""

from __future__ import annotations

import math

import numba
import numpy as np

INF = math.inf

# counters[] slots
CLOCK, ROWS, SINCE_SHRINK, N_SHRUNK, STEPS = 0, 1, 2, 3, 4


@numba.njit(cache=True, inline="always")
def kernel_from_dot(dot, sqn_i, sqn_j, kind, gamma, coef0, degree):
    """The kernel from <z_i, z_j>: 0 linear, 1 RBF, 2 polynomial."""
    if kind == 0:
        return dot
    if kind == 1:
        return math.exp(-gamma * max(sqn_i + sqn_j - 2.0 * dot, 0.0))
    return (gamma * dot + coef0) ** degree


@numba.njit(cache=True)
def fill_row(i, Z, sqn, kind, gamma, coef0, degree, row):
    """Row i of the kernel matrix into ``row``.

    ``Z = (dense, indptr, indices, values, scratch)``: dense rows (n, d), or, when ``indptr`` is
    not empty, CSR rows; row i is then scattered into ``scratch`` (d zeros) and every inner
    product costs the other row's non-zeros only (a9a: 14 of 123).
    """
    dense, indptr, indices, values, scratch = Z
    n = sqn.shape[0]
    if indptr.shape[0] > 0:
        for p in range(indptr[i], indptr[i + 1]):
            scratch[indices[p]] = values[p]
        for j in range(n):
            dot = 0.0
            for p in range(indptr[j], indptr[j + 1]):
                dot += values[p] * scratch[indices[p]]
            row[j] = kernel_from_dot(dot, sqn[i], sqn[j], kind, gamma, coef0, degree)
        for p in range(indptr[i], indptr[i + 1]):
            scratch[indices[p]] = 0.0
        return
    d = dense.shape[1]
    for j in range(n):
        dot = 0.0
        for f in range(d):
            dot += dense[i, f] * dense[j, f]
        row[j] = kernel_from_dot(dot, sqn[i], sqn[j], kind, gamma, coef0, degree)


@numba.njit(cache=True)
def axpy_row(Z, ell, coef, w):
    """Add coef * z_ell to w."""
    dense, indptr, indices, values, _ = Z
    if indptr.shape[0] > 0:
        for p in range(indptr[ell], indptr[ell + 1]):
            w[indices[p]] += coef * values[p]
    else:
        for f in range(dense.shape[1]):
            w[f] += coef * dense[ell, f]


@numba.njit(cache=True)
def dot_row(Z, k, w):
    """Return z_k' w."""
    dense, indptr, indices, values, _ = Z
    dot = 0.0
    if indptr.shape[0] > 0:
        for p in range(indptr[k], indptr[k + 1]):
            dot += values[p] * w[indices[p]]
    else:
        for f in range(dense.shape[1]):
            dot += dense[k, f] * w[f]
    return dot


@numba.njit(cache=True)
def get_row(i, X, sqn, kind, gamma, coef0, degree, rows, slot_of, owner, stamp, counters):
    """Row i of the kernel matrix, from the LRU cache or computed (evicting the oldest row)."""
    counters[CLOCK] += 1
    s = slot_of[i]
    if s >= 0:
        stamp[s] = counters[CLOCK]
        return rows[s]
    s = 0
    oldest = stamp[0]
    for t in range(1, rows.shape[0]):
        if stamp[t] < oldest:
            oldest = stamp[t]
            s = t
    if owner[s] >= 0:
        slot_of[owner[s]] = -1
    owner[s] = i
    slot_of[i] = s
    stamp[s] = counters[CLOCK]
    row = rows[s]
    fill_row(i, X, sqn, kind, gamma, coef0, degree, row)
    counters[ROWS] += 1
    return row


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
    pts = np.sort(points[:m])
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


@numba.njit(cache=True)
def reconstruct(
    X, sqn, kind, gamma, coef0, degree, a, c, x, G, active, rows, slot_of, owner, stamp, counters
):
    """Recompute G = Qx + c at every inactive index (all of them when none is active)."""
    n = x.shape[0]
    for k in range(n):
        if not active[k]:
            G[k] = c[k]
    if kind == 0:  # linear kernel: G_k = c_k + a_k z_k'w with w = sum_l a_l x_l z_l, O(nnz)
        w = np.zeros(X[4].shape[0])
        for ell in range(n):
            if x[ell] != 0.0:
                axpy_row(X, ell, a[ell] * x[ell], w)
        for k in range(n):
            if not active[k]:
                G[k] += a[k] * dot_row(X, k, w)
        return
    for ell in range(n):
        if x[ell] != 0.0:
            row = get_row(
                ell, X, sqn, kind, gamma, coef0, degree, rows, slot_of, owner, stamp, counters
            )
            coef = a[ell] * x[ell]
            for k in range(n):
                if not active[k]:
                    G[k] += a[k] * coef * row[k]


@numba.njit(cache=True)
def violation(a, x, G, u, kink, sb, sa, active, paper):
    """(max up - min low, i, j) over the active set; paper=True drops the pairs (B, A)."""
    n = x.shape[0]
    gmax, gmin, imax, jmin = -INF, INF, -1, -1
    gmax_nb, gmin_na, imax_nb, jmin_na = -INF, INF, -1, -1
    for k in range(n):
        if not active[k]:
            continue
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


@numba.njit(cache=True)
def _shrink(a, x, G, u, kink, sb, sa, active, gmax, gmin, counters):
    for k in range(x.shape[0]):
        if not active[k]:
            continue
        up = _up(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        low = _low(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        only_up = low == INF and up > -INF
        only_low = up == -INF and low < INF
        if (only_up and up < gmin) or (only_low and low > gmax) or (up == -INF and low == INF):
            active[k] = False
            counters[N_SHRUNK] += 1


@numba.njit(cache=True)
def run_chunk(
    X, sqn, diag, kind, gamma, coef0, degree,
    a, c, u, kink, sb, sa,
    x, G, active, rows, slot_of, owner, stamp, counters,
    tol, n_iter, second_order, paper, shrinking, shrink_every, eps_snap,
):  # fmt: skip
    """Run at most ``n_iter`` pair steps; return (code, steps, gap, objective change).

    code: 0 budget used, 1 tau-optimal on all variables, 2 stalled (no decrease possible).
    """
    n = x.shape[0]
    dphi = 0.0
    gap = INF
    for it in range(n_iter):
        gap, i, j = violation(a, x, G, u, kink, sb, sa, active, paper)
        if gap <= tol:
            if counters[N_SHRUNK] > 0:
                reconstruct(
                    X,
                    sqn,
                    kind,
                    gamma,
                    coef0,
                    degree,
                    a,
                    c,
                    x,
                    G,
                    active,
                    rows,
                    slot_of,
                    owner,
                    stamp,
                    counters,
                )
                active[:] = True
                counters[N_SHRUNK] = 0
                counters[SINCE_SHRINK] = 0
                gap, i, j = violation(a, x, G, u, kink, sb, sa, active, paper)
            if gap <= tol:
                return 1, it, gap, dphi
        if shrinking:
            counters[SINCE_SHRINK] += 1
            if counters[SINCE_SHRINK] >= shrink_every:
                counters[SINCE_SHRINK] = 0
                gmax = _up(a[i], x[i], G[i], u[i], kink[i], sb[i], sa[i])
                gmin = _low(a[j], x[j], G[j], u[j], kink[j], sb[j], sa[j])
                _shrink(a, x, G, u, kink, sb, sa, active, gmax, gmin, counters)
                active[i] = True
                active[j] = True
        row_i = get_row(
            i, X, sqn, kind, gamma, coef0, degree, rows, slot_of, owner, stamp, counters
        )
        if second_order and not paper:
            # Fan, Chen, Lin (2005): j minimizes -b^2/eta among the j violating with i.
            up_i = _up(a[i], x[i], G[i], u[i], kink[i], sb[i], sa[i])
            best = INF
            for k in range(n):
                if not active[k]:
                    continue
                low = _low(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
                if low < up_i:
                    b = up_i - low
                    eta = diag[i] + diag[k] - 2.0 * row_i[k]
                    if eta <= 1e-12:
                        eta = 1e-12
                    value = -b * b / eta
                    if value < best:
                        best, j = value, k
        row_j = get_row(
            j, X, sqn, kind, gamma, coef0, degree, rows, slot_of, owner, stamp, counters
        )
        if slot_of[i] < 0:  # evicted (only with a two-row cache): fetch it back
            row_i = get_row(
                i, X, sqn, kind, gamma, coef0, degree, rows, slot_of, owner, stamp, counters
            )
        eta = diag[i] + diag[j] - 2.0 * row_i[j]
        t, phi = pair_step(
            a[i],
            a[j],
            x[i],
            x[j],
            G[i],
            G[j],
            max(eta, 0.0),
            u[i],
            u[j],
            kink[i],
            sb[i],
            sa[i],
            kink[j],
            sb[j],
            sa[j],
        )
        if not phi < 0.0:
            return 2, it, gap, dphi
        nxi = _snap(min(max(x[i] + a[i] * t, 0.0), u[i]), u[i], kink[i], eps_snap)
        nxj = _snap(min(max(x[j] - a[j] * t, 0.0), u[j]), u[j], kink[j], eps_snap)
        dxi = (nxi - x[i]) * a[i]
        dxj = (nxj - x[j]) * a[j]
        x[i] = nxi
        x[j] = nxj
        for k in range(n):
            if active[k]:
                G[k] += a[k] * (dxi * row_i[k] + dxj * row_j[k])
        dphi += phi
        counters[STEPS] += 1
    return 0, n_iter, gap, dphi


@numba.njit(cache=True)
def dual_value(x, G, c, kink, sb, sa):
    """Phi(x) = x'Qx/2 + c'x + sum h(x) = x'(G + c)/2 + sum h(x), from an exact gradient."""
    total = 0.0
    for k in range(x.shape[0]):
        total += 0.5 * x[k] * (G[k] + c[k]) + h_value(x[k], kink[k], sb[k], sa[k])
    return total
