r"""The numba kernels of :class:`~optframe.drivers.CoordinateDescent` (primal, by columns).

The problem is an :class:`~optframe.capabilities.ElasticNetSmoothLoss`,

.. math::

    \min_{w, b} \; \sum_i c_i\,\ell(a_i) + \lambda_1\lVert w\rVert_1
    + \tfrac{\lambda_2}{2}\lVert w\rVert^2, \qquad a_i = p_i + q_i (x_i^\top w + b),

with :math:`a` kept up to date. Coordinate :math:`j` has the gradient
:math:`g = \sum_i c_i q_i x_{ij}\ell'(a_i)` and the curvature bound
:math:`L_j = L\sum_i c_i x_{ij}^2`; the proximal step with a curvature :math:`H`,

.. math::

    w_j \leftarrow \frac{\operatorname{ST}(H w_j - g, \lambda_1)}{H + \lambda_2},

decreases the objective for :math:`H = L_j` (the descent lemma: skglm's step). With
``newton`` the step first uses the local curvature :math:`h = \sum_i c_i x_{ij}^2\ell''(a_i)
\le L_j` (a coordinate Newton step, as in CDN and glmnet) and keeps it only if the objective
went down over the column, else takes the step with :math:`L_j`; for least squares
:math:`h = L_j` and the step is exact. The unpenalized intercept takes the same step with
:math:`x_{ij} = 1` and :math:`\lambda = 0` once per epoch.

Losses are compiled in (no Python callback): ``REHU`` sums ReHU pieces
:math:`\operatorname{rehu}_\tau(s a + t)` (rows of ``pieces``), ``LOGISTIC`` is
:math:`\log(1 + e^{-a})`. Columns are ``dense`` (a Fortran-ordered (n, m) array) when
``is_dense``, else the CSC arrays ``indptr``, ``indices``, ``data``.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

REHU, LOGISTIC = 0, 1
#: The smallest curvature of a column in a proximal Newton model, relative to its bound L_j.
NEWTON_FLOOR = 1e-3


@numba.njit(cache=True)
def _terms(kind, pieces, a):
    """``(l'(a), l''(a))``."""
    if kind == LOGISTIC:
        if a >= 0.0:
            e = math.exp(-a)
            low = e / (1.0 + e)  # sigma(-a)
        else:
            low = 1.0 / (1.0 + math.exp(a))
        return -low, low * (1.0 - low)
    d = 0.0
    h = 0.0
    for k in range(pieces.shape[0]):
        s = pieces[k, 0]
        z = s * a + pieces[k, 1]
        if z > 0.0:
            tau = pieces[k, 2]
            if z < tau:
                d += s * z
                h += s * s
            else:
                d += s * tau
    return d, h


@numba.njit(cache=True)
def _value(kind, pieces, a):
    r""":math:`\ell(a)`."""
    if kind == LOGISTIC:
        return max(-a, 0.0) + math.log1p(math.exp(-abs(a)))
    out = 0.0
    for k in range(pieces.shape[0]):
        z = pieces[k, 0] * a + pieces[k, 1]
        if z > 0.0:
            tau = pieces[k, 2]
            if z <= tau:
                out += 0.5 * z * z
            else:
                out += tau * (z - 0.5 * tau)
    return out


@numba.njit(cache=True)
def _all(kind, pieces, a):
    r"""``(l(a), l'(a), l''(a))``, the logistic's from one exponential."""
    if kind == LOGISTIC:
        e = math.exp(-abs(a))
        value = max(-a, 0.0) + math.log1p(e)
        low = e / (1.0 + e) if a >= 0.0 else 1.0 / (1.0 + e)  # sigma(-a)
        return value, -low, low * (1.0 - low)
    d, h = _terms(kind, pieces, a)
    return _value(kind, pieces, a), d, h


@numba.njit(cache=True)
def column_products(dense, is_dense, indptr, indices, data, u, columns, out):
    r""":math:`x_j^\top u` into ``out[j]`` for :math:`j` in ``columns`` (the rest untouched)."""
    for k in range(columns.shape[0]):
        j = columns[k]
        total = 0.0
        if is_dense:
            for i in range(dense.shape[0]):
                total += dense[i, j] * u[i]
        else:
            for p in range(indptr[j], indptr[j + 1]):
                total += data[p] * u[indices[p]]
        out[j] = total


@numba.njit(cache=True)
def column_norms(dense, is_dense, indptr, indices, data, c, weighted, plain):
    r""":math:`\sum_i c_i x_{ij}^2` into ``weighted``, :math:`\sum_i x_{ij}^2` into ``plain``."""
    m = weighted.shape[0]
    for j in range(m):
        total = 0.0
        squares = 0.0
        if is_dense:
            for i in range(dense.shape[0]):
                x2 = dense[i, j] * dense[i, j]
                total += c[i] * x2
                squares += x2
        else:
            for p in range(indptr[j], indptr[j + 1]):
                x2 = data[p] * data[p]
                total += c[indices[p]] * x2
                squares += x2
        weighted[j] = total
        plain[j] = squares


@numba.njit(cache=True)
def _prox(old, g, curvature, lam1, lam2):
    u = curvature * old - g
    if u > lam1:
        return (u - lam1) / (curvature + lam2)
    if u < -lam1:
        return (u + lam1) / (curvature + lam2)
    return 0.0


@numba.njit(cache=True)
def _column_step(
    j, dense, is_dense, indptr, indices, data, q, c, kind, pieces, lip, lam1, lam2, w, a, newton
):  # fmt: skip
    """One coordinate step on ``w[j]``; returns the subdifferential score before it."""
    g = 0.0
    h = 0.0
    if is_dense:
        for i in range(dense.shape[0]):
            x = dense[i, j]
            if x != 0.0 and c[i] > 0.0:
                d, hh = _terms(kind, pieces, a[i])
                g += c[i] * q[i] * x * d
                h += c[i] * x * x * hh
    else:
        for p in range(indptr[j], indptr[j + 1]):
            i = indices[p]
            if c[i] > 0.0:
                x = data[p]
                d, hh = _terms(kind, pieces, a[i])
                g += c[i] * q[i] * x * d
                h += c[i] * x * x * hh
    old = w[j]
    if old == 0.0:
        score = max(abs(g) - lam1, 0.0)
    elif old > 0.0:
        score = abs(g + lam1 + lam2 * old)
    else:
        score = abs(g - lam1 + lam2 * old)
    bound = lip[j]
    if bound <= 0.0:  # an empty column (or zero weights): w_j = 0 is optimal
        new = 0.0
    else:
        curvature = bound
        if newton and 0.0 < h < bound:
            curvature = h
        new = _prox(old, g, curvature, lam1, lam2)
        if new != old and curvature < bound:  # a Newton step: keep it only if it descends
            delta = new - old
            change = lam1 * (abs(new) - abs(old)) + 0.5 * lam2 * (new * new - old * old)
            if is_dense:
                for i in range(dense.shape[0]):
                    x = dense[i, j]
                    if x != 0.0 and c[i] > 0.0:
                        ai = a[i]
                        change += c[i] * (
                            _value(kind, pieces, ai + q[i] * x * delta) - _value(kind, pieces, ai)
                        )
            else:
                for p in range(indptr[j], indptr[j + 1]):
                    i = indices[p]
                    if c[i] > 0.0:
                        ai = a[i]
                        change += c[i] * (
                            _value(kind, pieces, ai + q[i] * data[p] * delta)
                            - _value(kind, pieces, ai)
                        )
            if change > 0.0:
                new = _prox(old, g, bound, lam1, lam2)
    if new != old:
        delta = new - old
        if is_dense:
            for i in range(dense.shape[0]):
                x = dense[i, j]
                if x != 0.0:
                    a[i] += q[i] * x * delta
        else:
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                a[i] += q[i] * data[p] * delta
        w[j] = new
    return score


@numba.njit(cache=True)
def _intercept_step(q, c, kind, pieces, lip_b, a, intercept, newton):
    """One step on the unpenalized intercept; returns the absolute gradient before it."""
    n = a.shape[0]
    g = 0.0
    h = 0.0
    for i in range(n):
        if c[i] > 0.0:
            d, hh = _terms(kind, pieces, a[i])
            g += c[i] * q[i] * d
            h += c[i] * hh
    if lip_b <= 0.0 or g == 0.0:
        return abs(g)
    curvature = lip_b
    if newton and 0.0 < h < lip_b:
        curvature = h
    delta = -g / curvature
    if curvature < lip_b:
        change = 0.0
        for i in range(n):
            if c[i] > 0.0:
                ai = a[i]
                change += c[i] * (
                    _value(kind, pieces, ai + q[i] * delta) - _value(kind, pieces, ai)
                )
        if change > 0.0:
            delta = -g / lip_b
    for i in range(n):
        a[i] += q[i] * delta
    intercept[0] += delta
    return abs(g)


@numba.njit(cache=True)
def run_epochs(
    dense, is_dense, indptr, indices, data, q, c, kind, pieces, lip, lam1, lam2, ws, w, a,
    intercept, fit_intercept, lip_b, newton, budget, tol,
):  # fmt: skip
    """At most ``budget`` cyclic epochs over the columns ``ws`` (and the intercept).

    Returns ``(epochs, score)``: the largest subdifferential distance seen in the last epoch
    (before each step); the loop stops after an epoch whose score is at most ``tol``.
    """
    score = math.inf
    epochs = 0
    while epochs < budget:
        score = 0.0
        for k in range(ws.shape[0]):
            s = _column_step(
                ws[k], dense, is_dense, indptr, indices, data, q, c, kind, pieces, lip, lam1,
                lam2, w, a, newton,
            )  # fmt: skip
            if s > score:
                score = s
        if fit_intercept:
            s = _intercept_step(q, c, kind, pieces, lip_b, a, intercept, newton)
            if s > score:
                score = s
        epochs += 1
        if score <= tol:
            break
    return epochs, score


def as_columns(X: Any) -> tuple[np.ndarray, bool, np.ndarray, np.ndarray, np.ndarray]:
    """``(dense, is_dense, indptr, indices, data)``: Fortran-ordered values, or CSC arrays."""
    import scipy.sparse as sp

    empty_i = np.zeros(1, dtype=np.int64)
    if sp.issparse(X):
        csc = sp.csc_array(X, dtype=np.float64)
        if not csc.has_sorted_indices:
            csc = csc.copy()
            csc.sort_indices()
        index = np.int32 if csc.indices.dtype == np.int32 else np.int64  # no copy of 32 bits
        return (
            np.zeros((1, 1), order="F"),
            False,
            np.ascontiguousarray(csc.indptr, dtype=index),
            np.ascontiguousarray(csc.indices, dtype=index),
            np.ascontiguousarray(csc.data, dtype=np.float64),
        )
    dense = np.asfortranarray(X, dtype=np.float64)
    return dense, True, empty_i, empty_i, np.zeros(1)


@numba.njit(cache=True)
def run_prox_newton(
    dense, is_dense, indptr, indices, data, q, c, kind, pieces, lip, lam1, lam2, ws, w, a, raw,
    hess, values, loss, intercept, fit_intercept, budget, max_cd, model_ratio, tol,
):  # fmt: skip
    r"""At most ``budget`` proximal Newton steps on the columns ``ws`` (newGLMNET, skglm).

    ``raw``, ``hess``, ``values`` and ``loss`` must hold :func:`evaluate`'s at :math:`a` on entry;
    they hold them at the last accepted point on return. Each step forms the loss's
    second-order model at :math:`a` (per sample, the gradient :math:`r_i = c_i q_i\ell'(a_i)`
    and curvature :math:`h_i = c_i\ell''(a_i)` in the fit; each column's curvature at least
    ``NEWTON_FLOOR`` times its bound :math:`L_j`, so that a column whose samples sit where
    :math:`\ell'' = 0` still moves), minimizes the model plus the penalty over the working set
    by at most ``max_cd`` cyclic coordinate epochs (no transcendental function inside: the
    products :math:`X\delta` are kept), and moves along the direction with a backtracking
    (Armijo) line search on the true objective, whose trial evaluates the loss, its derivative
    and its curvature together (one exponential per sample and step: the accepted trial's
    values are the next step's model). With an intercept the model is minimized over it
    exactly after every coordinate step (the coordinate's curvature is the Schur complement
    :math:`H_{jj} - u_j^2/h_b`, :math:`u_j = \sum_i h_i x_{ij}`: coordinate descent on
    centered columns, without centering them; the intercept's shift of :math:`X\delta` is kept
    as one number). Returns ``(steps, score, loss)``: the largest subdifferential distance at
    the start of the last step (the loop stops when it is at most ``tol``) and
    :math:`\sum_i c_i\ell(a_i)` at the last point.
    """
    n = a.shape[0]
    size = ws.shape[0]
    # the working set's sparse columns side by side, with h_i x_ij beside x_ij (per step)
    start = np.zeros(size + 1, dtype=np.int64)
    if not is_dense:
        for k in range(size):
            start[k + 1] = start[k] + indptr[ws[k] + 1] - indptr[ws[k]]
    rows = np.empty(start[size], dtype=indices.dtype)
    entries = np.empty(start[size])
    weighted = np.empty(start[size])
    if not is_dense:
        for k in range(size):
            first = indptr[ws[k]]
            for r in range(start[k], start[k + 1]):
                rows[r] = indices[first + r - start[k]]
                entries[r] = data[first + r - start[k]]
    xd = np.empty(n)
    trial_a = np.empty(n)
    trial_raw = np.empty(n)
    trial_hess = np.empty(n)
    trial_values = np.empty(n)
    grads = np.empty(size)
    hdiag = np.empty(size)
    cross = np.empty(size)
    delta = np.empty(size)
    score = math.inf
    steps = 0
    while steps < budget:
        grad_b = 0.0
        hess_b = 0.0
        if fit_intercept:
            for i in range(n):
                grad_b += raw[i]
                hess_b += hess[i]
        centered = fit_intercept and hess_b > 0.0
        score = abs(grad_b) if fit_intercept else 0.0
        for k in range(size):
            j = ws[k]
            g = 0.0
            hh = 0.0
            u = 0.0
            if is_dense:
                for i in range(n):
                    x = dense[i, j]
                    g += x * raw[i]
                    hh += x * x * hess[i]
                    u += x * hess[i]
            else:
                for r in range(start[k], start[k + 1]):
                    i = rows[r]
                    x = entries[r]
                    hx = x * hess[i]
                    weighted[r] = hx
                    g += x * raw[i]
                    hh += x * hx
                    u += hx
            grads[k] = g
            hdiag[k] = max(hh, NEWTON_FLOOR * lip[j])
            cross[k] = u
            old = w[j]
            if old == 0.0:
                s = max(abs(g) - lam1, 0.0)
            elif old > 0.0:
                s = abs(g + lam1 + lam2 * old)
            else:
                s = abs(g - lam1 + lam2 * old)
            score = max(score, s)
        if score <= tol:
            break
        # the second-order model, minimized by coordinate descent over delta (and delta_b)
        for i in range(n):
            xd[i] = 0.0
        for k in range(size):
            delta[k] = 0.0
        stored = 0.0  # sum_i h_i xd_i over the stored xd (without the intercept's shift)
        shift = -grad_b / hess_b if centered else 0.0  # delta_b, the model's best
        inner_tol = model_ratio * score
        for _ in range(max_cd):
            largest = 0.0
            for k in range(size):
                j = ws[k]
                curvature = hdiag[k]
                g = grads[k] + shift * cross[k]
                if centered:
                    curvature -= cross[k] * cross[k] / hess_b
                if not curvature > 0.0:
                    continue
                if is_dense:
                    for i in range(n):
                        g += dense[i, j] * hess[i] * xd[i]
                else:
                    for r in range(start[k], start[k + 1]):
                        g += weighted[r] * xd[rows[r]]
                old = w[j] + delta[k]
                new = _prox(old, g, curvature, lam1, lam2)
                if new != old:
                    step = new - old
                    delta[k] += step
                    largest = max(largest, abs(step) * curvature)
                    if is_dense:
                        for i in range(n):
                            xd[i] += dense[i, j] * step
                    else:
                        for r in range(start[k], start[k + 1]):
                            xd[rows[r]] += entries[r] * step
                    if centered:
                        stored += cross[k] * step
                        shift = -(grad_b + stored) / hess_b
            if largest <= inner_tol:
                break
        # Armijo backtracking on the objective along (delta, delta_b)
        pen_old = 0.0
        pen_new = 0.0
        slope = grad_b * shift
        for k in range(size):
            j = ws[k]
            slope += grads[k] * delta[k]
            pen_old += lam1 * abs(w[j]) + 0.5 * lam2 * w[j] * w[j]
            z = w[j] + delta[k]
            pen_new += lam1 * abs(z) + 0.5 * lam2 * z * z
        decrease = slope + pen_new - pen_old  # <= 0 for a descent direction
        before = loss + pen_old
        t = 1.0
        accepted = False
        trial = 0.0
        for _ in range(30):
            trial = 0.0
            for i in range(n):
                moved = xd[i] + shift
                if moved == 0.0:  # a row no column of the step touches: its terms stay
                    trial_a[i] = a[i]
                    trial += c[i] * values[i]
                    trial_values[i] = values[i]
                    trial_raw[i] = raw[i]
                    trial_hess[i] = hess[i]
                    continue
                ai = a[i] + t * q[i] * moved
                trial_a[i] = ai
                if c[i] > 0.0:
                    value, d, h = _all(kind, pieces, ai)
                    trial += c[i] * value
                    trial_values[i] = value
                    trial_raw[i] = c[i] * q[i] * d
                    trial_hess[i] = c[i] * h
                else:
                    trial_values[i] = 0.0
                    trial_raw[i] = 0.0
                    trial_hess[i] = 0.0
            pen_t = 0.0
            for k in range(size):
                j = ws[k]
                z = w[j] + t * delta[k]
                pen_t += lam1 * abs(z) + 0.5 * lam2 * z * z
            if trial + pen_t <= before + 1e-4 * t * decrease:
                accepted = True
                break
            t *= 0.5
        steps += 1
        if not accepted:
            break
        for k in range(size):
            j = ws[k]
            w[j] += t * delta[k]
        for i in range(n):
            a[i] = trial_a[i]
            raw[i] = trial_raw[i]
            hess[i] = trial_hess[i]
            values[i] = trial_values[i]
        loss = trial
        intercept[0] += t * shift
    return steps, score, loss


@numba.njit(cache=True)
def evaluate(kind, pieces, a, c, q, raw, hess, values):
    r""":math:`\sum_i c_i\ell(a_i)`, with the terms of each sample into arrays.

    ``raw`` gets :math:`c_i q_i\ell'(a_i)`, ``hess`` :math:`c_i\ell''(a_i)`, ``values``
    :math:`\ell(a_i)` (all 0 where :math:`c_i = 0`).
    """
    total = 0.0
    for i in range(a.shape[0]):
        ci = c[i]
        if ci > 0.0:
            value, d, h = _all(kind, pieces, a[i])
            total += ci * value
            raw[i] = ci * q[i] * d
            hess[i] = ci * h
            values[i] = value
        else:
            raw[i] = 0.0
            hess[i] = 0.0
            values[i] = 0.0
    return total


@numba.njit(cache=True)
def multipliers(q, c, raw, lo, hi, v):
    r"""``v`` gets the dual direction :math:`-q_i\theta_i` from ``raw``.

    :math:`\theta_i = c_i\ell'(a_i)` clipped into :math:`c_i[\mathrm{lo}, \mathrm{hi}]`, read
    from ``raw`` :math:`= c_i q_i\ell'(a_i)` (:math:`q_i^2 = 1`).
    """
    for i in range(v.shape[0]):
        ci = c[i]
        if ci > 0.0:
            theta = q[i] * raw[i]
            if theta < ci * lo:
                theta = ci * lo
            elif theta > ci * hi:
                theta = ci * hi
            v[i] = -q[i] * theta
        else:
            v[i] = 0.0


@numba.njit(cache=True)
def _xlogx(x):
    return x * math.log(x) if x > 0.0 else 0.0


@numba.njit(cache=True)
def logistic_dual_loss(q, c, p, v, a, values, keep_up, keep_down, scale):
    r"""The logistic dual's sample terms :math:`\sum_i (\theta_i p_i - c_i\ell^*(\theta_i/c_i))`.

    At :math:`\theta_i = -q_i f_i v_i`, :math:`f_i` = ``keep_up`` where :math:`v_i > 0`, else
    ``keep_down``, times ``scale`` (so :math:`f_i \le 1`), with :math:`v_i = -q_i c_i
    \ell'(a_i)` and ``values`` :math:`= \ell(a_i)`. The conjugate :math:`\ell^*(\beta) =
    u\log u + (1 - u)\log(1 - u)`, :math:`u = -\beta = f_i\sigma(-a_i)`, needs no logarithm
    per sample where :math:`\sigma(-a_i) < 0.999`: :math:`\log\sigma(-a) = -(a + \ell(a))` and
    :math:`1 - u = \sigma(a)(1 + \varepsilon)`, :math:`\varepsilon = (1 - f)e^{-a}`, so
    :math:`\log(1 - u) = -\ell(a) + \log(1 + \varepsilon)`, and for :math:`\varepsilon \le
    10^{-3}` the logarithm is replaced by :math:`\varepsilon - \varepsilon^2/2 +
    \varepsilon^3/3`, which is above it: the conjugate can only be overstated, the dual value
    understated (still a bound; by at most :math:`\varepsilon^4/4` per sample). Elsewhere it
    is :meth:`optframe.losses.Logistic.conjugate`'s formula, with :math:`u` clipped into [0, 1].
    """
    linear = 0.0
    conjugate = 0.0
    factor_up = keep_up * scale
    factor_down = keep_down * scale
    log_up = math.log(factor_up) if factor_up > 0.0 else -math.inf
    log_down = math.log(factor_down) if factor_down > 0.0 else -math.inf
    for i in range(v.shape[0]):
        ci = c[i]
        up = v[i] > 0.0
        factor = factor_up if up else factor_down
        theta = -q[i] * v[i] * factor
        linear += theta * p[i]
        if not ci > 0.0:
            continue
        sigma = q[i] * v[i] / ci  # sigma(-a_i), in (0, 1) for an unclipped multiplier
        ai = a[i]
        if 0.0 < sigma < 0.999 and factor > 0.0:  # sigma(a) = 1 - sigma known to 1e-13
            epsilon = (1.0 - factor) * sigma / (1.0 - sigma)  # (1 - f) e^{-a}
            if epsilon <= 1e-3:
                log_one_plus = epsilon * (1.0 - epsilon * (0.5 - epsilon / 3.0))
            else:
                log_one_plus = math.log1p(epsilon)
            u = factor * sigma
            log_factor = log_up if up else log_down
            conjugate += ci * (
                u * (log_factor - ai - values[i]) + (1.0 - u) * (log_one_plus - values[i])
            )
        else:
            u = min(max(-theta / ci, 0.0), 1.0)
            conjugate += ci * (_xlogx(u) + _xlogx(1.0 - u))
    return linear - conjugate


@numba.njit(cache=True)
def split_products(dense, is_dense, indptr, indices, data, v, columns, positive, negative):
    r""":math:`x_j^\top v_+` into ``positive[j]``, :math:`x_j^\top v_-` into ``negative[j]``.

    For :math:`j` in ``columns`` (the rest untouched).
    """
    n = v.shape[0]
    up_part = np.empty(n)
    down_part = np.empty(n)
    for i in range(n):  # without a branch per entry (the signs of v are unpredictable)
        up_part[i] = max(v[i], 0.0)
        down_part[i] = min(v[i], 0.0)
    for k in range(columns.shape[0]):
        j = columns[k]
        up = 0.0
        down = 0.0
        if is_dense:
            for i in range(dense.shape[0]):
                up += dense[i, j] * up_part[i]
                down += dense[i, j] * down_part[i]
        else:
            for p in range(indptr[j], indptr[j + 1]):
                i = indices[p]
                up += data[p] * up_part[i]
                down += data[p] * down_part[i]
        positive[j] = up
        negative[j] = down


@numba.njit(cache=True)
def fit_argument(dense, is_dense, indptr, indices, data, w, support, b, p, q, a):
    r""":math:`a = p + q\odot(X_S w_S + b)` exactly, over the columns ``support``."""
    n = a.shape[0]
    f = np.full(n, b)
    for k in range(support.shape[0]):
        j = support[k]
        wj = w[j]
        if is_dense:
            for i in range(n):
                f[i] += dense[i, j] * wj
        else:
            for r in range(indptr[j], indptr[j + 1]):
                f[indices[r]] += data[r] * wj
    for i in range(n):
        a[i] = p[i] + q[i] * f[i]


@numba.njit(cache=True)
def sphere_test(z_hat, lip, gap, threshold, columns, out):
    r"""Gap Safe's sphere test over ``columns``; returns whether any feature passed.

    ``out[j]`` is set when :math:`\lvert z_j\rvert + \sqrt{2 G L_j} <` ``threshold``.
    """
    found = False
    for k in range(columns.shape[0]):
        j = columns[k]
        if abs(z_hat[j]) + math.sqrt(2.0 * gap * lip[j]) < threshold:
            out[j] = True
            found = True
    return found


@numba.njit(cache=True)
def subdifferential_distances(z_raw, w, lam1, lam2, columns, out):
    r"""The working-set scores: ``out[j]`` for :math:`j` in ``columns``.

    The distance of :math:`-\nabla_j = z_j` to :math:`\partial(\lambda_1\lvert w_j\rvert +
    \tfrac{\lambda_2}2 w_j^2)`.
    """
    for k in range(columns.shape[0]):
        j = columns[k]
        g = -z_raw[j]
        wj = w[j]
        if wj == 0.0:
            out[j] = max(abs(g) - lam1, 0.0)
        elif wj > 0.0:
            out[j] = abs(g + lam1 + lam2 * wj)
        else:
            out[j] = abs(g - lam1 + lam2 * wj)
