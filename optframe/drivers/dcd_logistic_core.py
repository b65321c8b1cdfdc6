r"""The numba kernel of :class:`~optframe.drivers.DCD` on an ``EntropyBoxDual`` (logistic).

The dual coordinate descent of Yu, Huang and Lin (2011) for L2-regularized logistic regression
(LIBLINEAR ``-s 7``, ``solve_l2r_lr_dual``). The problem is

.. math::

    \min_{0 \le \alpha \le U} \; \tfrac12 \lVert Z^\top\alpha \rVert^2
    + \sum_i \bigl(\alpha_i\log\alpha_i + (U_i - \alpha_i)\log(U_i - \alpha_i)\bigr),
    \qquad z_i = g_i x_i .

Coordinate :math:`i` with :math:`a = \lVert z_i\rVert^2` and :math:`b = \langle w, z_i\rangle`
solves the one-variable problem in :math:`z` (the new :math:`\alpha_i`, or its mirror
:math:`U_i - \alpha_i`, whichever has its optimum in :math:`(0, U_i/2]`: the test
:math:`\tfrac a2 (\bar\alpha_i - \alpha_i) + b < 0` picks the mirror) by Newton's method from the
left, with the safeguard :math:`z \leftarrow 0.1 z` when a step would leave :math:`(0, U_i)`:
:math:`g'(z) = a(z - z_0) \pm b + \log(z / (U_i - z))`, :math:`g''(z) = a + U_i / (z (U_i - z))`.
Both :math:`\alpha_i` and :math:`U_i - \alpha_i` are stored (``alpha``, ``comp``): near the upper
end the subtraction would lose every digit of the small one (notes: losses-and-bounds, 2.4).
The inner tolerance starts at 1e-2 and falls tenfold after an epoch with few Newton steps, down
to ``min(1e-8, eps)``. The epoch stops the outer loop when the largest :math:`\lvert g'\rvert`
at the starting points is below ``eps``. No shrinking (the variables never sit at a bound).
Index types and the permutation generator are those of :mod:`optframe.drivers.dcd_core`.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from optframe.drivers.dcd_core import shuffle

# state[] slots
INNER_EPS, INNER_EPS_MIN = 0, 1
#: Newton steps at most per coordinate (LIBLINEAR's max_inner_iter).
MAX_INNER = 100
#: The safeguard's factor (LIBLINEAR's eta, the paper's xi).
ETA = 0.1


@numba.njit(cache=True)
def run_entropy_epochs(
    dense, indptr, indices, data, coef, upper, norms, alpha, comp, w, index, state, budget, eps,
    rng,
):  # fmt: skip
    """Run at most ``budget`` epochs over the samples ``index`` (those with ``upper > 0``).

    The rows are ``dense`` (a C-ordered (n, m) array) when it has more than one row, else the CSR
    arrays. Returns ``(code, epochs, gmax)``: code 1 when the largest inner gradient of an epoch
    fell below ``eps``, 0 when the budget ran out.
    """
    by_rows = dense.shape[0] > 1
    m = dense.shape[1]
    n_active = index.shape[0]
    inner_eps = state[INNER_EPS]
    inner_min = state[INNER_EPS_MIN]
    epochs = 0
    code = 0
    gmax = math.inf
    x = rng[0]
    while epochs < budget:
        x = shuffle(index, n_active, x)
        gmax = 0.0
        newton = 0
        for s in range(n_active):
            i = index[s]
            cap = upper[i]
            g_i = coef[i]
            product = 0.0
            if by_rows:
                for j in range(m):
                    product += w[j] * dense[i, j]
            else:
                for p in range(indptr[i], indptr[i + 1]):
                    product += w[indices[p]] * data[p]
            b = g_i * product
            a = g_i * g_i * norms[i]
            sign = 1.0
            z_old = alpha[i]
            if 0.5 * a * (comp[i] - alpha[i]) + b < 0.0:
                sign = -1.0
                z_old = comp[i]
            z = z_old
            if cap - z < 0.5 * cap:
                z = ETA * z
            gp = a * (z - z_old) + sign * b + math.log(z / (cap - z))
            gmax = max(gmax, abs(gp))
            inner = 0
            while inner <= MAX_INNER:
                if abs(gp) < inner_eps:
                    break
                gpp = a + cap / (cap - z) / z
                trial = z - gp / gpp
                if trial <= 0.0:
                    z *= ETA
                else:
                    z = trial
                gp = a * (z - z_old) + sign * b + math.log(z / (cap - z))
                newton += 1
                inner += 1
            if inner > 0:
                if sign > 0.0:
                    alpha[i] = z
                    comp[i] = cap - z
                else:
                    comp[i] = z
                    alpha[i] = cap - z
                step = sign * (z - z_old) * g_i
                if by_rows:
                    for j in range(m):
                        w[j] += step * dense[i, j]
                else:
                    for p in range(indptr[i], indptr[i + 1]):
                        w[indices[p]] += step * data[p]
        epochs += 1
        if gmax < eps:
            code = 1
            break
        if newton <= n_active // 10:
            inner_eps = max(inner_min, 0.1 * inner_eps)
    rng[0] = x
    state[INNER_EPS] = inner_eps
    return code, epochs, gmax


@numba.njit(cache=True)
def entropy_sum(alpha, comp, upper):
    r""":math:`\sum_i \alpha_i\log\alpha_i + \bar\alpha_i\log\bar\alpha_i - U_i\log U_i`.

    :math:`\bar\alpha = ` ``comp`` (:math:`U - \alpha` kept apart), :math:`0\log 0 = 0`.
    """
    total = 0.0
    for i in range(alpha.shape[0]):
        if upper[i] > 0.0:
            if alpha[i] > 0.0:
                total += alpha[i] * math.log(alpha[i])
            if comp[i] > 0.0:
                total += comp[i] * math.log(comp[i])
            total -= upper[i] * math.log(upper[i])
    return total


def start_point(upper: np.ndarray, warm: np.ndarray | None = None) -> tuple:
    r"""``(alpha, comp)``: LIBLINEAR's start :math:`\min(10^{-3}U, 10^{-8})`, or ``warm`` inside.

    A warm start is clipped to ``[d, U - d]`` with the same ``d`` (strictly inside the box, where
    the logarithms are finite).
    """
    upper = np.asarray(upper, dtype=np.float64)
    inset = np.minimum(1e-3 * upper, 1e-8)
    if warm is None:
        alpha = inset.copy()
    else:
        alpha = np.clip(np.asarray(warm, dtype=np.float64).reshape(-1), inset, upper - inset)
    return alpha, upper - alpha
