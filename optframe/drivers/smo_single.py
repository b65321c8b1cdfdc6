r"""Numba kernels of :class:`~optframe.drivers.smo.SMO` for box QPs without an equality row.

Without a free intercept the dual has no equality row (``BoxQPDual.rhs`` is ``None``):

.. math::

    \min_x \; \tfrac12 x^\top (Q + D) x + c^\top x + \sum_i h_i(x_i)
    \quad\text{s.t.}\quad 0 \le x_i \le u_i \le \infty,

with :math:`Q` and :math:`h` as in :mod:`~optframe.drivers.smo_core`, :math:`D \ge 0` the dual's
``diagonal`` (zeros without one) and :math:`u_i = \infty` allowed where :math:`D_i > 0`. A single
variable can then move on its own (kernel dual coordinate descent, as LIBLINEAR's dual solvers
with kernel rows). With ``up`` and ``low`` the rates of :mod:`~optframe.drivers.smo_core` (kept
by the same offsets and fused scans), moving :math:`x_k` by :math:`a_k t` decreases the
objective at the rate ``up_k`` and moving it by :math:`-a_k t` at the rate ``-low_k``, so the
point is :math:`\tau`-optimal iff :math:`\max_k \mathrm{up}_k \le \tau` and
:math:`\min_k \mathrm{low}_k \ge -\tau` (the two absolute tests of notes/losses-and-bounds.md
section 1.4: no equality row, no difference test). Each step takes the variable of the largest
``up`` or of the smallest ``low``, of the two the one with the larger second-order gain
:math:`\text{rate}^2 / (Q_{kk} + D_k)` (``second``; else the larger rate), moves it to the exact
minimizer of the 1-D convex piecewise quadratic on :math:`[0, u_k]` (its kink splits it in two),
and updates :math:`G` with the variable's kernel row from the cache (:func:`smo_core.get_row`)
and :math:`D_k`. Shrinking is smo_core's partition with the thresholds :math:`\mp V`
(:math:`V` the current violation): a variable moves behind the active set when neither of its
moves decreases the objective at a rate above :math:`-V`.

These functions are compiled only for a run on such a dual (:class:`optframe.jit.Needs`
``single``): the kernels of the other runs are unchanged.
"""

from __future__ import annotations

import numba
import numpy as np

from optframe.drivers.smo_core import (
    ACTIVE,
    INF,
    LAST_I,
    LAST_J,
    N_SHRUNK,
    SINCE_SHRINK,
    STEPS,
    _low,
    _shrink,
    _up,
    forget_rows,
    get_row,
    h_value,
    permute,
    scan,
    set_offsets,
    update_scan,
)
from optframe.drivers.smo_quadratic import _snap


@numba.njit(cache=True, inline="always")
def single_step(x, g, eta, u, kink, sb, sa):
    r"""The minimizer :math:`z \in [0, u]` of :math:`\tfrac\eta2 (z - x)^2 + g(z - x) + h(z)`.

    :math:`h` has slope :math:`s^-` below the kink :math:`\kappa` and :math:`s^+ \ge s^-` above
    (:math:`\kappa = u` when there is none). With :math:`\eta > 0` the derivative is increasing:
    the minimizer is the stationary point of the piece where the derivative changes sign, or the
    kink where it jumps over 0. With :math:`\eta = 0` (a zero kernel row, no diagonal) it is
    piecewise constant: an end or the kink; ``inf`` when the objective falls without bound.
    """
    if eta > 1e-12:
        if eta * (kink - x) + g + sb >= 0.0:
            return min(max(x - (g + sb) / eta, 0.0), kink)
        if eta * (kink - x) + g + sa <= 0.0:
            return min(max(x - (g + sa) / eta, kink), u)
        return kink
    below, above = g + sb, g + sa
    if below > 0.0:
        return 0.0
    if above < 0.0:
        return u
    if below < 0.0 and above > 0.0:
        return kink
    if below == 0.0:
        return min(x, kink)
    return max(x, kink)


@numba.njit(cache=True)
def violation(a, x, G, u, kink, sb, sa, m):
    """``(max(max up, -min low), k)`` over the positions k < m: the largest single-move rate."""
    best, at = -INF, -1
    for k in range(m):
        up = _up(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        low = _low(a[k], x[k], G[k], u[k], kink[k], sb[k], sa[k])
        if up > best:
            best, at = up, k
        if -low > best:
            best, at = -low, k
    return best, at


@numba.njit(cache=True)
def run_chunk(
    Z, sqn, kind, gamma, coef0, degree, terms,
    diag, extra, a, c, u, kink, sb, sa,
    x, G, perm, work, cache, counters, buf,
    tol, n_iter, second, shrinking, shrink_every, eps_snap, parallel,
):  # fmt: skip
    r"""At most ``n_iter`` single-variable steps; return (code, steps, violation, change).

    The codes of :func:`optframe.drivers.smo_core.run_chunk`: 0 budget used, 1
    :math:`\tau`-optimal on all variables, 2 stalled, 3 :math:`\tau`-optimal on the active set
    while some variables are shrunk. ``diag`` holds :math:`Q_{kk} + D_k`, ``extra`` :math:`D`
    (zeros without a diagonal); both are permuted with the positions. Inside, the state is
    :math:`NG = -a \circ G`; ``G`` is written back on return.
    """
    n = x.shape[0]
    up_off, low_off, low, NG = work[0], work[1], work[2], work[3]
    for k in range(n):
        NG[k] = -a[k] * G[k]
    result = _steps(
        Z, sqn, kind, gamma, coef0, degree, terms, diag, extra, a, c, u, kink, sb, sa, x, NG,
        perm, up_off, low_off, low, cache, counters, buf, tol, n_iter, second,
        shrinking, shrink_every, eps_snap, parallel,
    )  # fmt: skip
    for k in range(n):
        G[k] = -a[k] * NG[k]
    return result


@numba.njit(cache=True, inline="always")
def _pick(gmax, imax, gmin, jmin, diag, second):
    """The variable to move and its rate: the larger gain of the two most violating moves."""
    up, down = max(gmax, 0.0), max(-gmin, 0.0)  # a rate <= 0 gains nothing
    if imax < 0:
        return jmin, down
    if jmin < 0:
        return imax, up
    if second:
        if down * down * diag[imax] > up * up * diag[jmin]:
            return jmin, down
        return imax, up
    if down > up:
        return jmin, down
    return imax, up


@numba.njit(cache=True)
def _steps(
    Z, sqn, kind, gamma, coef0, degree, terms, diag, extra, a, c, u, kink, sb, sa, x, NG, perm,
    up_off, low_off, low, cache, counters, buf, tol, n_iter, second,
    shrinking, shrink_every, eps_snap, parallel,
):  # fmt: skip
    n = x.shape[0]
    m = counters[ACTIVE]
    set_offsets(a, x, u, kink, sb, sa, up_off, low_off, np.int64(0), m)
    gmax, imax, gmin, jmin = scan(NG, up_off, low_off, low, m)
    dphi = 0.0
    gap = INF
    for it in range(n_iter):
        gap = max(gmax, -gmin)
        if gap <= tol:
            return (3 if m < n else 1), it, gap, dphi
        if shrinking:
            counters[SINCE_SHRINK] += 1
            if counters[SINCE_SHRINK] >= shrink_every:
                counters[SINCE_SHRINK] = 0
                # k leaves when up_k < -gap and low_k > gap: both its moves ascend
                order, kept = _shrink(NG, up_off, low, gap, -gap, m)
                if kept < m:
                    vectors = (sqn, diag, extra, a, c, u, kink, sb, sa, x, NG, up_off, low_off,
                               terms[0])  # fmt: skip
                    permute(order, Z, vectors, perm)
                    m = kept
                    counters[ACTIVE] = m
                    counters[N_SHRUNK] = n - m
                    forget_rows(cache)
                    gmax, imax, gmin, jmin = scan(NG, up_off, low_off, low, m)
        i, _ = _pick(gmax, imax, gmin, jmin, diag, second)
        row = get_row(i, Z, sqn, kind, gamma, coef0, degree, terms, cache, counters, buf,
                      parallel)  # fmt: skip
        xi, gi, eta = x[i], -a[i] * NG[i], diag[i]
        z = single_step(xi, gi, eta, u[i], kink[i], sb[i], sa[i])
        if not z < INF:
            return 2, it, gap, dphi
        z = _snap(min(max(z, 0.0), u[i]), u[i], kink[i], eps_snap)
        dx = z - xi
        phi = (
            (0.5 * eta * dx + gi) * dx
            + h_value(z, kink[i], sb[i], sa[i])
            - h_value(xi, kink[i], sb[i], sa[i])
        )
        if not phi < 0.0:
            return 2, it, gap, dphi
        x[i] = z
        set_offsets(a, x, u, kink, sb, sa, up_off, low_off, i, i + 1)
        dxi = dx * a[i]
        # the diagonal's share of the moved variable's gradient (the rows are the kernel's);
        # the second row of the fused update is the same row with no move (exactly no change)
        NG[i] -= dxi * extra[i]
        gmax, imax, gmin, jmin = update_scan(NG, up_off, low_off, low, m, row, row, dxi, 0.0)
        dphi += phi
        counters[STEPS] += 1
        counters[LAST_I] = perm[i]
        counters[LAST_J] = perm[i]
    return 0, n_iter, max(gmax, -gmin), dphi
