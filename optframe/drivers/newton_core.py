r"""Numba kernels of :class:`~optframe.drivers.newton.PrimalNewton`: products and the logistic loss.

The Hessian product on CSR rows:

.. math::

    H d = \bigl(X_R^\top (h_R \odot (X_R d_w + d_b)) + \lambda d_w,\
    \mathbf 1^\top (h_R \odot (X_R d_w + d_b)) + \delta d_b\bigr)

over the rows :math:`R` with curvature :math:`h_i > 0` (:math:`\delta`: the intercept's
damping), in one pass over them: each row's product with :math:`d_w` and its share of
:math:`X^\top` are taken while the row is in cache (LIBLINEAR's ``Hv``), where two sparse
products read the data twice and need a copy of the rows :math:`R`. On a9a (32,561 x 124,
12 % dense), quiet machine, one product took 0.40 ms against 0.50 ms for scipy's two on a copy
of the curved rows (``docs/results/newton_bench.py``).
The index arrays are unsigned, as in :mod:`optframe.drivers.dcd_core`. The product may
reassociate its sums (each row's dot product then runs in vector lanes: 0.86 of the time in
paired rounds on a9a, load 3.9); the conjugate gradients need no particular rounding.

Besides: :math:`X^\top u` and the preconditioner's diagonal over CSR rows, and the logistic
loss with its two derivatives in one pass (one exponential per sample, where numpy's
``logaddexp`` and ``expit`` take two). :func:`warm_up` compiles them before the clock starts.
"""

from __future__ import annotations

import math

import numba
import numpy as np


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def hessian_product(indptr, indices, data, rows, curvature, d, intercept, lam, damping, out):
    """``out = H d``, length m + 1: the last entry the intercept's (damped by ``damping``), or 0."""
    m = out.shape[0] - 1
    for j in range(m):
        out[j] = lam * d[j]
    shift = d[m] if intercept else 0.0
    total = 0.0
    for k in range(rows.shape[0]):
        i = rows[k]
        fitted = shift
        for p in range(indptr[i], indptr[i + 1]):
            fitted += data[p] * d[indices[p]]
        fitted *= curvature[i]
        total += fitted
        for p in range(indptr[i], indptr[i + 1]):
            out[indices[p]] += fitted * data[p]
    out[m] = total + damping * d[m] if intercept else 0.0


@numba.njit(cache=True, nogil=True)
def squares_times(indptr, indices, data, curvature, out):
    r"""``out[:m] = (X∘X)' h``: the diagonal of :math:`X^\top \operatorname{diag}(h) X`."""
    m = out.shape[0] - 1
    for j in range(m):
        out[j] = 0.0
    for i in range(indptr.shape[0] - 1):
        h = curvature[i]
        if h != 0.0:
            for p in range(indptr[i], indptr[i + 1]):
                out[indices[p]] += h * data[p] * data[p]


@numba.njit(cache=True, nogil=True)
def transposed_times(indptr, indices, data, u, out):
    """``out[:m] = X'u`` over the CSR rows."""
    m = out.shape[0] - 1
    for j in range(m):
        out[j] = 0.0
    for i in range(indptr.shape[0] - 1):
        ui = u[i]
        if ui != 0.0:
            for p in range(indptr[i], indptr[i + 1]):
                out[indices[p]] += ui * data[p]


@numba.njit(cache=True, nogil=True)
def logistic_slopes(a, costs, slope, u, curvature):
    r"""The logistic loss at ``a`` in one pass: returns :math:`\sum_i c_i\ell(a_i)`.

    Fills ``u`` with :math:`c_i q_i \ell'(a_i)` and ``curvature`` with :math:`c_i\ell''(a_i)`.
    With :math:`t = e^{-\lvert a\rvert}`: :math:`\ell(a) = \max(-a, 0) + \log(1 + t)`,
    :math:`-\ell'(a) = \sigma(-a)` (:math:`t / (1 + t)` for :math:`a \ge 0`, else
    :math:`1 / (1 + t)`) and :math:`\ell''(a) = t / (1 + t)^2`: one exponential per sample.
    """
    total = 0.0
    for i in range(a.shape[0]):
        ai = a[i]
        t = math.exp(-abs(ai))
        inverse = 1.0 / (1.0 + t)
        if ai >= 0.0:
            value = math.log1p(t)
            down = t * inverse
        else:
            value = math.log1p(t) - ai
            down = inverse
        c = costs[i]
        total += c * value
        u[i] = -c * slope[i] * down
        curvature[i] = c * t * inverse * inverse
    return total


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels above on tiny arrays."""
    indptr = np.array([0, 1], dtype=np.uint64)
    indices = np.zeros(1, dtype=np.uint32)
    one = np.ones(1)
    out = np.zeros(2)
    squares_times(indptr, indices, one, one, out)
    transposed_times(indptr, indices, one, one, out)
    logistic_slopes(one, one, one, one.copy(), one.copy())
