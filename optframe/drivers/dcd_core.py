r"""Numba kernel of the :class:`~optframe.drivers.dcd.DCD` driver (Hsieh et al. 2008, LIBLINEAR).

The problem (see :class:`~optframe.capabilities.LinearBoxDual`) is

.. math::

    \min_\alpha \; f(\alpha) = \tfrac12 \lVert Z^\top\alpha \rVert^2 - \bar y^\top\alpha
    \quad\text{s.t.}\quad l \le \alpha \le u,

over the free coordinates only (fixed ones stay in :math:`w = Z^\top\alpha`). Coordinate
:math:`i` has gradient :math:`G = \langle w, z_i\rangle - \bar y_i` and the exact step
:math:`\alpha_i \leftarrow \mathrm{clip}(\alpha_i - G / \lVert z_i\rVert^2, l_i, u_i)`. Shrinking
follows LIBLINEAR's ``solve_l2r_l1l2_svc``: a variable at a bound whose gradient points out of the
box by more than last epoch's largest projected-gradient violation is set aside until the active
set converges, then everything is checked again.

The index arrays are unsigned (``uint64`` row pointers and sample order, ``uint32`` or ``uint64``
column indices): numba adds a negative-index wrap-around test to every access through a signed
index, which cost a third of the time of an epoch on ijcnn1 (91,701 x 23, 14 non-zeros per row).
The epoch's permutation is drawn by a xorshift64 generator whose state the caller holds (in
``rng[0]``), cheaper than numba's Mersenne twister and reproducible from the driver's seed.
"""

from __future__ import annotations

import math

import numba
import numpy as np

INF = math.inf
# state[] slots
ACTIVE, PG_MAX_OLD, PG_MIN_OLD = 0, 1, 2


@numba.njit(cache=True)
def squared_row_norms(indptr, data):
    """The squared norm of every CSR row (one pass, no product matrix as ``Z.multiply(Z)``)."""
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for i in range(n):
        total = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            total += data[p] * data[p]
        out[i] = total
    return out


def rng_state(seed: int) -> np.ndarray:
    """The xorshift64 state for ``seed`` (never 0, which the generator cannot leave)."""
    mixed = (int(seed) * 0x9E3779B97F4A7C15 + 0x2545F4914F6CDD1D) % 2**64
    return np.array([mixed or 1], dtype=np.uint64)


@numba.njit(cache=True)
def shuffle(index, active, x):
    """Shuffle ``index[:active]`` in place (Fisher-Yates by xorshift64 from ``x``); new state."""
    for s in range(active - 1, 0, -1):
        x ^= x << np.uint64(13)
        x ^= x >> np.uint64(7)
        x ^= x << np.uint64(17)
        j = x % np.uint64(s + 1)
        index[s], index[j] = index[j], index[s]
    return x


@numba.njit(cache=True)
def run_epochs(
    indptr, indices, data, target, lower, upper, qd, alpha, w, index, state, budget, eps, shrinking,
    rng,
):  # fmt: skip
    """Run at most ``budget`` epochs over ``index[:state[ACTIVE]]``, updating ``alpha`` and ``w``.

    Returns ``(code, epochs, pg_range)``: code 1 when the projected-gradient range over all free
    variables is at most ``eps`` (then every variable is active again), 0 when the budget ran out.
    """
    n_free = index.shape[0]
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
            i = index[s]
            g = -target[i]
            for p in range(indptr[i], indptr[i + 1]):
                g += w[indices[p]] * data[p]
            pg = 0.0
            if alpha[i] <= lower[i]:
                if shrinking and g > pg_max_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if g < 0.0:
                    pg = g
            elif alpha[i] >= upper[i]:
                if shrinking and g < pg_min_old:
                    active -= 1
                    index[s], index[active] = index[active], index[s]
                    continue
                if g > 0.0:
                    pg = g
            else:
                pg = g
            pg_max = max(pg_max, pg)
            pg_min = min(pg_min, pg)
            if abs(pg) > 1e-12:
                old = alpha[i]
                if qd[i] > 0.0:
                    new = min(max(old - g / qd[i], lower[i]), upper[i])
                else:
                    new = upper[i] if g < 0.0 else lower[i]
                d = new - old
                if d != 0.0:
                    alpha[i] = new
                    for p in range(indptr[i], indptr[i + 1]):
                        w[indices[p]] += d * data[p]
            s += 1
        epochs += 1
        pg_range = pg_max - pg_min if pg_max >= pg_min else 0.0
        if pg_range <= eps:
            if active == n_free:
                code = 1
                break
            active = n_free
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
