r"""Numba kernels of :class:`~optframe.drivers.smo.SMO` for box QPs with a diagonal.

The problem is :mod:`~optframe.drivers.smo_core`'s with :math:`D` added to the diagonal of
:math:`Q`, variable by variable (``BoxQPDual.diagonal``: the quadratic pieces of a loss, such as
the L2-loss SVM's :math:`1/(2C)`), and upper bounds that may be infinite where :math:`D_i > 0`:

.. math::

    \min_x \; \tfrac12 x^\top (Q + D) x + c^\top x + \sum_i h_i(x_i)
    \quad\text{s.t.}\quad a^\top x = b, \quad 0 \le x_i \le u_i \le \infty.

The steps are those of :func:`optframe.drivers.smo_core.run_chunk` (the same kernel rows, cache,
scans, second-order selection, pair steps and shrinking) with three differences: the kernel rows
stay the kernel's (the cache holds :math:`M`), :math:`D_i` enters the diagonal the pair's
curvature reads (``diag``) and the gradient of the two moved variables; a value is snapped onto
an infinite bound never, onto 0 within ``eps`` (absolute); and the paper's stopping rule is not
offered. These are separate functions, compiled only for a run on such a dual
(:class:`optframe.jit.Needs` ``quadratic``): the kernels of the other runs are unchanged.
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
    _shrink,
    forget_rows,
    get_row,
    pair_step,
    permute,
    scan,
    second_order,
    set_offsets,
    update_scan,
)


@numba.njit(cache=True, inline="always")
def _snap(v, u, kink, eps):
    """Onto 0, a finite ``u`` or the kink when within ``eps * max(u, 1)`` (``eps`` if u = inf)."""
    tol = eps * max(u, 1.0) if u < INF else eps
    if v <= tol:
        return 0.0
    if v >= u - tol:
        return u
    if abs(v - kink) <= tol:
        return kink
    return v


@numba.njit(cache=True)
def run_chunk(
    Z, sqn, kind, gamma, coef0, degree, terms,
    diag, extra, a, c, u, kink, sb, sa,
    x, G, perm, work, cache, counters, buf,
    tol, n_iter, second, shrinking, shrink_every, eps_snap, parallel,
):  # fmt: skip
    r"""At most ``n_iter`` pair steps with the diagonal ``extra`` (:math:`D`, by position).

    As :func:`optframe.drivers.smo_core.run_chunk` (same codes and returns); ``diag`` holds
    :math:`M_{ii} + D_i`, ``extra`` :math:`D` and is permuted with the positions.
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
        gap, i, j = gmax - gmin, imax, jmin
        if gap <= tol:
            return (3 if m < n else 1), it, gap, dphi
        if shrinking:
            counters[SINCE_SHRINK] += 1
            if counters[SINCE_SHRINK] >= shrink_every:
                counters[SINCE_SHRINK] = 0
                order, kept = _shrink(NG, up_off, low, gmax, gmin, m)
                if kept < m:
                    vectors = (sqn, diag, extra, a, c, u, kink, sb, sa, x, NG, up_off, low_off,
                               terms[0])  # fmt: skip
                    permute(order, Z, vectors, perm)
                    m = kept
                    counters[ACTIVE] = m
                    counters[N_SHRUNK] = n - m
                    forget_rows(cache)
                    gmax, i, gmin, j = scan(NG, up_off, low_off, low, m)
        row_i = get_row(i, Z, sqn, kind, gamma, coef0, degree, terms, cache, counters, buf,
                        parallel)  # fmt: skip
        if second:
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
        if not phi < 0.0 or not t < INF:
            return 2, it, gap, dphi
        nxi = _snap(min(max(x[i] + a[i] * t, 0.0), u[i]), u[i], kink[i], eps_snap)
        nxj = _snap(min(max(x[j] - a[j] * t, 0.0), u[j]), u[j], kink[j], eps_snap)
        dxi = (nxi - x[i]) * a[i]
        dxj = (nxj - x[j]) * a[j]
        x[i] = nxi
        x[j] = nxj
        set_offsets(a, x, u, kink, sb, sa, up_off, low_off, i, i + 1)
        set_offsets(a, x, u, kink, sb, sa, up_off, low_off, j, j + 1)
        # the diagonal's share of the two moved variables' gradient (the rows are the kernel's)
        NG[i] -= dxi * extra[i]
        NG[j] -= dxj * extra[j]
        gmax, imax, gmin, jmin = update_scan(NG, up_off, low_off, low, m, row_i, row_j, dxi, dxj)
        dphi += phi
        counters[STEPS] += 1
        counters[LAST_I] = perm[i]
        counters[LAST_J] = perm[j]
    return 0, n_iter, gap, dphi
