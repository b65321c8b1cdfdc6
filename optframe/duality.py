r"""Dual-feasible points built from any solution: the pieces of every model's certificate.

Each model's :meth:`~optframe.model.Model.dual_bound` (yours too) builds a point of its dual's
feasible set from whatever a solver or driver returned (its dual variables, or the loss's
subgradient at the primal solution) with the operations here, then evaluates the dual objective;
weak duality makes the value a lower bound.

* :func:`balance`: repair one equality row :math:`a^\top\theta = 0` over a box that contains 0 by
  scaling down the side (positive or negative terms) that is too large; the box is kept.
* :func:`project_null`: the Euclidean projection onto :math:`\{A^\top\theta = 0\}` (least squares
  on the :math:`k \times k` normal equations, with one refinement step), then a scaling into a
  box :math:`\ell \le \theta \le u` that contains 0, which keeps the equalities.
* :func:`fill_subgradient`: the entries of a subgradient that the primal does not fix (samples on
  a kink) chosen by least squares so that the stationarity equations hold, clipped to the box.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import NDArray


def balance(values: NDArray[np.float64], sign: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""Scale ``values`` so that :math:`\sum_i \text{sign}_i \text{values}_i = 0` exactly.

    The terms :math:`t_i = \text{sign}_i \text{values}_i` of the larger side (positive or
    negative) are multiplied by the ratio of the sides' totals. Every entry moves towards 0, so a
    box that contains 0 is kept. If one side is empty, the other is set to 0.
    """
    values = np.array(values, dtype=np.float64)
    terms = sign * values
    positive = float(terms[terms > 0].sum())
    negative = float(-terms[terms < 0].sum())
    if positive > negative:
        values[terms > 0] *= negative / positive
    elif negative > positive:
        values[terms < 0] *= positive / negative
    return values


def match_sum(
    values: NDArray[np.float64],
    total: float,
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> NDArray[np.float64]:
    r"""``values`` in :math:`[\ell, u]`, moved towards one bound so that they sum to ``total``.

    A sum too large moves every entry towards :math:`\ell` by the same fraction of its distance,
    a sum too small towards :math:`u`; the box is kept. ``total`` must lie in
    :math:`[\sum\ell, \sum u]`.
    """
    values = np.clip(np.asarray(values, dtype=np.float64), lower, upper)
    current = float(values.sum())
    if current > total:
        room = current - float(lower.sum())
        return lower + (values - lower) * ((total - float(lower.sum())) / room)
    if current < total:
        room = float(upper.sum()) - current
        return upper - (upper - values) * ((float(upper.sum()) - total) / room)
    return values


def solve_normal(gram: NDArray[np.float64], rhs: NDArray[np.float64]) -> NDArray[np.float64]:
    """A least-squares solution of ``gram @ c = rhs`` for a PSD ``gram`` (pseudo-inverse)."""
    eigenvalues, vectors = la.eigh(gram)
    cutoff = max(float(eigenvalues[-1]), 0.0) * gram.shape[0] * np.finfo(np.float64).eps
    kept = eigenvalues > cutoff
    inverse = np.where(kept, 1.0 / np.where(kept, eigenvalues, 1.0), 0.0)
    return vectors @ (inverse * (vectors.T @ rhs))


def project_null(
    A: NDArray[np.float64] | sp.sparray,
    theta: NDArray[np.float64],
    upper: NDArray[np.float64],
    lower: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    r"""A point of :math:`\{A^\top\theta = 0,\ \ell \le \theta \le u\}` near ``theta``.

    Rows whose box is :math:`\{0\}` are fixed at 0; the others are projected onto the null
    space of their :math:`A^\top` (two least-squares passes against rounding), then the whole
    vector is divided by the largest of 1, :math:`\theta_i / u_i` and :math:`\theta_i/\ell_i`,
    which keeps the equalities (the box must contain 0).

    Parameters
    ----------
    A : array or sparse, shape (n, k)
        The equality rows' columns (for LAD: :math:`[X, \mathbf 1]`).
    theta : array (n,)
        The starting point.
    upper : array (n,)
        The box's upper end :math:`u \ge 0`.
    lower : array (n,), optional
        Its lower end :math:`\ell \le 0`; default :math:`-u`.
    """
    lower = -upper if lower is None else lower
    free = (upper > 0) | (lower < 0)
    theta = np.where(free, np.asarray(theta, dtype=np.float64), 0.0)
    A_free = A[free] if not free.all() else A
    if A_free.shape[0] == 0:
        return theta
    gram = A_free.T @ A_free
    gram = np.asarray(gram.toarray() if sp.issparse(gram) else gram, dtype=np.float64)
    part = theta[free]
    for _ in range(2):
        rhs = np.asarray(A_free.T @ part, dtype=np.float64).reshape(-1)
        part = part - np.asarray(A_free @ solve_normal(gram, rhs)).reshape(-1)
    theta[free] = part
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(part > 0, part / upper[free], np.where(part < 0, part / lower[free], 0))
    excess = float(np.max(ratio, initial=0.0))
    if excess > 1.0:
        theta /= excess
    return theta


def fill_subgradient(
    Z: NDArray[np.float64] | sp.sparray,
    target: NDArray[np.float64],
    values: NDArray[np.float64],
    free: NDArray[np.bool_],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> NDArray[np.float64]:
    r"""``values`` with the ``free`` entries chosen so that :math:`Z^\top v \approx` ``target``.

    The free entries (samples on a kink of their loss, whose multiplier the primal leaves open)
    get the minimum-norm least-squares solution of
    :math:`Z_F^\top v_F = \text{target} - Z_{\bar F}^\top v_{\bar F}`, clipped to
    :math:`[\ell, u]`.
    """
    values = np.array(values, dtype=np.float64)
    if not free.any():
        return values
    fixed = ~free
    rest = np.asarray(Z[fixed].T @ values[fixed], dtype=np.float64).reshape(-1)
    Z_free = Z[free]
    Z_free = Z_free.toarray() if sp.issparse(Z_free) else np.asarray(Z_free, dtype=np.float64)
    solution = la.lstsq(Z_free.T, np.asarray(target, dtype=np.float64) - rest)[0]
    values[free] = np.clip(solution, lower[free], upper[free])
    return values


def kink_set(distance: NDArray[np.float64], count: int, tol: float) -> NDArray[np.bool_]:
    """Samples at most ``tol`` from their kink, and at least the ``count`` nearest ones."""
    near = np.abs(distance) <= tol
    if int(near.sum()) < count and distance.size:
        nearest = np.argsort(np.abs(distance), kind="stable")[: min(count, distance.size)]
        near[nearest] = True
    return near
