r"""The numba kernel of :class:`~optframe.drivers.DCD` on a ``PiecewiseBoxDual``.

ReHLine's coordinate descent (Dai and Qiu 2023; LIBLINEAR's L1- and L2-loss SVM solvers are its
one-piece cases). The problem is

.. math::

    \min_{0 \le \alpha \le U} \; \tfrac12 \lVert Z^\top\alpha \rVert^2
    + \tfrac12 \textstyle\sum_r d_r\alpha_r^2 - b^\top\alpha,
    \qquad z_r = g_r x_{i_r},

one variable per piece :math:`r` of sample :math:`i_r`'s loss. Coordinate :math:`r` has gradient
:math:`G = g_r\langle w, x_{i_r}\rangle + d_r\alpha_r - b_r` and the exact step
:math:`\alpha_r \leftarrow \mathrm{clip}(\alpha_r - G / (g_r^2\lVert x_{i_r}\rVert^2 + d_r), 0,
U_r)`; :math:`U_r = \infty` for a one-sided square. A zero curvature (a piece with
:math:`g_r = 0` and no square) moves to the end of the box that the gradient points to.
The pieces of one sample step together, on one inner product (:func:`run_piece_epochs`).
Shrinking and the unsigned index types are those of :mod:`optframe.drivers.dcd_core`; the
stopping rule also asks both ends of the projected-gradient range to be within ``eps`` of 0
(without an equality row, equal gradients of one sign are not stationary).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from optframe.drivers.dcd_core import shuffle, squared_row_norms

INF = math.inf
# state[] slots
ACTIVE, PG_MAX_OLD, PG_MIN_OLD = 0, 1, 2


@numba.njit(cache=True)
def row_norms(dense, indptr, data):
    """The squared norm of every row (dense rows when ``dense`` has more than one row)."""
    if dense.shape[0] > 1:
        out = np.zeros(dense.shape[0])
        for i in range(dense.shape[0]):
            total = 0.0
            for j in range(dense.shape[1]):
                total += dense[i, j] * dense[i, j]
            out[i] = total
        return out
    return squared_row_norms(indptr, data)


@numba.njit(cache=True)
def run_piece_epochs(
    dense, indptr, indices, data, rows, starts, coef, target, upper, diagonal, norms, alpha, w,
    index, state, budget, eps, shrinking, rng,
):  # fmt: skip
    r"""Run at most ``budget`` epochs over the samples ``index[:state[ACTIVE]]``.

    Sample ``k`` (row ``rows[k]`` of the data) owns the pieces ``starts[k]:starts[k + 1]``: its
    inner product :math:`\langle w, x\rangle` is computed once, each piece takes its exact step
    in turn (the product follows each step in O(1): it moves by
    :math:`\Delta\alpha_r g_r \lVert x\rVert^2`), and :math:`w` takes the sample's summed
    change in one pass. A sample is set aside (shrinking) when every one of its pieces would be.

    The rows are ``dense`` (a C-ordered (n, m) array; ``indptr``, ``indices`` and ``data`` are
    then unused) when it has more than one row, else the CSR arrays: contiguous rows let the
    products vectorize.

    Returns ``(code, epochs, pg_range)``: code 1 when the projected-gradient range over every
    variable is at most ``eps`` (then every sample is active again), 0 when the budget ran out.
    """
    by_rows = dense.shape[0] > 1
    m = dense.shape[1]
    n_blocks = index.shape[0]
    active = int(state[ACTIVE])
    pg_max_old = state[PG_MAX_OLD]
    pg_min_old = state[PG_MIN_OLD]
    epochs = 0
    pg_range = INF
    code = 0
    x = rng[0]
    while epochs < budget:
        x = shuffle(index, active, x)
        pg_max = -INF
        pg_min = INF
        s = 0
        while s < active:
            k = index[s]
            i = rows[k]
            product = 0.0
            if by_rows:
                for j in range(m):
                    product += w[j] * dense[i, j]
            else:
                for p in range(indptr[i], indptr[i + 1]):
                    product += w[indices[p]] * data[p]
            norm = norms[i]
            change = 0.0
            shrinkable = shrinking
            for r in range(starts[k], starts[k + 1]):
                g_r = coef[r]
                g = g_r * product + diagonal[r] * alpha[r] - target[r]
                pg = 0.0
                if alpha[r] <= 0.0:
                    if not g > pg_max_old:
                        shrinkable = False
                    if g < 0.0:
                        pg = g
                elif alpha[r] >= upper[r]:
                    if not g < pg_min_old:
                        shrinkable = False
                    if g > 0.0:
                        pg = g
                else:
                    shrinkable = False
                    pg = g
                pg_max = max(pg_max, pg)
                pg_min = min(pg_min, pg)
                if abs(pg) > 1e-12:
                    old = alpha[r]
                    curvature = g_r * g_r * norm + diagonal[r]
                    if curvature > 0.0:
                        new = min(max(old - g / curvature, 0.0), upper[r])
                    else:
                        new = upper[r] if g < 0.0 else 0.0
                    if new != old:
                        alpha[r] = new
                        step = (new - old) * g_r
                        change += step
                        product += step * norm
            if shrinkable:
                active -= 1
                index[s], index[active] = index[active], index[s]
                continue
            if change != 0.0 and by_rows:
                for j in range(m):
                    w[j] += change * dense[i, j]
            elif change != 0.0:
                for p in range(indptr[i], indptr[i + 1]):
                    w[indices[p]] += change * data[p]
            s += 1
        epochs += 1
        pg_range = pg_max - pg_min if pg_max >= pg_min else 0.0
        if pg_range <= eps and pg_max <= eps and pg_min >= -eps:  # no equality row: both ends
            if active == n_blocks:
                code = 1
                break
            active = n_blocks
            pg_max_old = INF
            pg_min_old = -INF
            continue
        pg_max_old = pg_max if pg_max > 0.0 else INF
        pg_min_old = pg_min if pg_min < 0.0 else -INF
    rng[0] = x
    state[ACTIVE] = active
    state[PG_MAX_OLD] = pg_max_old
    state[PG_MIN_OLD] = pg_min_old
    return code, epochs, pg_range
