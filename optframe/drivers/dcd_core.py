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
"""

from __future__ import annotations

import math

import numba
import numpy as np

INF = math.inf
# state[] slots
ACTIVE, PG_MAX_OLD, PG_MIN_OLD = 0, 1, 2


@numba.njit(cache=True)
def seed(value):
    """Seed numba's own generator (it is separate from NumPy's)."""
    np.random.seed(value)  # noqa: NPY002 (numba has only the legacy API)


@numba.njit(cache=True)
def run_epochs(
    indptr, indices, data, target, lower, upper, qd, alpha, w, index, state, budget, eps, shrinking
):
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
    while epochs < budget:
        for s in range(active - 1, 0, -1):
            j = np.random.randint(0, s + 1)  # noqa: NPY002
            index[s], index[j] = index[j], index[s]
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
    state[ACTIVE] = active
    state[PG_MAX_OLD] = pg_max_old
    state[PG_MIN_OLD] = pg_min_old
    return code, epochs, pg_range
