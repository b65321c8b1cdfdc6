r"""Dual-feasible points built from any solution: the pieces of every model's certificate.

Each model's :meth:`~optframe.model.Model.dual_bound` (yours too) builds a point of its dual's
feasible set from whatever a solver or driver returned (its dual variables, or the loss's
subgradient at the primal solution) with the operations here, then evaluates the dual objective;
weak duality makes the value a lower bound.

* :func:`balance`: repair one equality row :math:`a^\top\theta = 0` over a box that contains 0 by
  scaling down the side (positive or negative terms) that is too large; the box is kept.
* :func:`project_null`: the Euclidean projection onto :math:`\{A^\top\theta = 0\}` (least squares
  on the :math:`k \times k` normal equations of unit-norm columns, refined twice), then a scaling
  into a box :math:`\ell \le \theta \le u` that contains 0, which keeps the equalities.
* :func:`equality_residual`: the check, at the point actually evaluated, that every equality row
  holds to its rounding error. A dual value at a point that fails it is no bound (a free primal
  variable multiplies the residual), so the models then return ``-inf`` and the result cannot be
  OPTIMAL.
* :func:`fill_subgradient`: the entries of a subgradient that the primal does not fix (samples on
  a kink) chosen by least squares so that the stationarity equations hold, clipped to the box.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe import row_blocks


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
    r"""A least-squares solution of ``gram @ c = rhs`` for a PSD ``gram``, invariant to scaling.

    ``gram`` is first equilibrated by its diagonal, :math:`G_s = D G D` with
    :math:`D = \operatorname{diag}(G)^{-1/2}` (the Gram matrix of unit-norm columns), and
    :math:`c = D G_s^+ D\,\text{rhs}` with the pseudo-inverse cut at rounding level. Scaling a
    column of :math:`A` by any factor leaves :math:`G_s` unchanged, so no direction is dropped
    because a column is small: without it, a column scaled by :math:`10^{-9}` has a Gram
    eigenvalue below any relative cutoff and the projection leaves its row unsatisfied.
    A zero column gets :math:`c_j = 0`.
    """
    return normal_solver(gram)(rhs)


def normal_solver(
    gram: NDArray[np.float64],
) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
    """:func:`solve_normal` for one ``gram`` and many right-hand sides: factored once."""
    gram = np.asarray(gram, dtype=np.float64)
    if gram.size == 0:
        return lambda rhs: np.zeros(gram.shape[1])
    diagonal = np.diagonal(gram)
    kept_columns = diagonal > 0
    inverse_norm = np.where(kept_columns, 1.0 / np.sqrt(np.where(kept_columns, diagonal, 1.0)), 0.0)
    equilibrated = gram * inverse_norm[:, None] * inverse_norm[None, :]
    eigenvalues, vectors = la.eigh(equilibrated)
    cutoff = max(float(eigenvalues[-1]), 0.0) * gram.shape[0] * np.finfo(np.float64).eps
    kept = eigenvalues > cutoff
    inverse = np.where(kept, 1.0 / np.where(kept, eigenvalues, 1.0), 0.0)

    def solve(rhs: NDArray[np.float64]) -> NDArray[np.float64]:
        scaled_rhs = inverse_norm * np.asarray(rhs, dtype=np.float64)
        return inverse_norm * (vectors @ (inverse * (vectors.T @ scaled_rhs)))

    return solve


def abs_products(
    A: NDArray[np.float64] | sp.sparray, v: NDArray[np.float64]
) -> NDArray[np.float64]:
    r""":math:`\lvert A\rvert^\top \lvert v\rvert`, the scale of each of :math:`A^\top v`'s sums.

    A dense ``A`` is read in blocks of rows, so no copy of it is made.
    """
    blocked = row_blocks.abs_transposed_times(A, v)
    if blocked is not None:
        return blocked
    A = row_blocks.materialized(A)
    v = np.abs(np.asarray(v, dtype=np.float64).reshape(-1))
    if sp.issparse(A):
        return np.asarray(abs(A).T @ v, dtype=np.float64).reshape(-1)
    A = np.asarray(A)
    total = np.zeros(A.shape[1])
    block = max(1, 2**22 // max(A.shape[1], 1))
    for start in range(0, A.shape[0], block):
        total += np.abs(A[start : start + block]).T @ v[start : start + block]
    return total


def equality_residual(A: NDArray[np.float64] | sp.sparray, v: NDArray[np.float64]) -> float:
    r"""How far :math:`A^\top v = 0` is from holding, in units of its rounding error.

    The first of :func:`equality_residuals`, which documents it.
    """
    return equality_residuals(A, v)[0]


def equality_residuals(
    A: NDArray[np.float64] | sp.sparray, v: NDArray[np.float64]
) -> tuple[float, float]:
    r"""How far :math:`A^\top v = 0` is from holding, in units of its rounding error.

    The largest :math:`\lvert (A^\top v)_j\rvert / (\gamma_n (\lvert A\rvert^\top
    \lvert v\rvert)_j)` over the columns, with :math:`\gamma_n = n\,\epsilon` the bound on
    the rounding error of a sum of :math:`n` products (Higham, *Accuracy and Stability of
    Numerical Algorithms*, 3.1). At most 1: the computed sums cannot tell :math:`v` from a point
    that meets the rows exactly, so a dual value at :math:`v` is a bound up to that rounding.
    Above 1: a row is violated, and a bound that drops the term :math:`(A^\top v)^\top x` of
    a free :math:`x` can lie above the optimum (``inf`` when a row with a zero scale is not 0).
    The second value is the largest :math:`\lvert (A^\top v)_j\rvert` itself (what a
    :class:`~optframe.certificate.RepairStep` reports).

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[1.0], [1.0], [1.0]])
    >>> equality_residuals(A, np.array([0.5, -0.25, -0.25]))
    (0.0, 0.0)
    >>> ratio, largest = equality_residuals(A, np.array([0.5, -0.25, -0.2]))
    >>> ratio > 1, round(largest, 12)
    (True, 0.05)
    """
    v = np.asarray(v, dtype=np.float64).reshape(-1)
    if A.shape[1] == 0 or not v.any():
        return 0.0, 0.0
    residual = np.abs(row_blocks.transposed_times(A, v))
    allowed = max(A.shape[0], 1) * np.finfo(np.float64).eps * abs_products(A, v)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(residual > 0, residual / allowed, 0.0)
    return float(np.max(ratio)), float(np.max(residual))


#: Least-squares passes of :func:`project_null`: the second and third remove what the rounding
#: of the first left (with unit-norm columns, each pass shrinks the residual by far more than
#: the rounding it adds).
REFINEMENTS = 3


def project_null(
    A: NDArray[np.float64] | sp.sparray | row_blocks.WithOnes,
    theta: NDArray[np.float64],
    upper: NDArray[np.float64],
    lower: NDArray[np.float64] | None = None,
    report: list[float] | None = None,
) -> NDArray[np.float64]:
    r"""A point of :math:`\{A^\top\theta = 0,\ \ell \le \theta \le u\}` near ``theta``.

    Rows whose box is :math:`\{0\}` are fixed at 0; the others are projected onto the null
    space of their :math:`A^\top` (:data:`REFINEMENTS` least-squares passes on unit-norm
    columns, :func:`solve_normal`), then the whole
    vector is divided by the largest of 1, :math:`\theta_i / u_i` and :math:`\theta_i/\ell_i`,
    which keeps the equalities (the box must contain 0).

    Parameters
    ----------
    A : array, sparse or :class:`~optframe.row_blocks.WithOnes`, shape (n, k)
        The equality rows' columns (for LAD: :math:`[X, \mathbf 1]`). Dense data with many
        rows is read by blocks over the solve's threads (:mod:`optframe.row_blocks`).
    theta : array (n,)
        The starting point.
    upper : array (n,)
        The box's upper end :math:`u \ge 0`.
    lower : array (n,), optional
        Its lower end :math:`\ell \le 0`; default :math:`-u`.
    report : list, optional
        When given, receives :math:`\max_j \lvert (A^\top\theta)_j\rvert` before each pass
        and the factor the final scaling divided by (at least 1): what the projection repaired.
    """
    lower = -upper if lower is None else lower
    free = (upper > 0) | (lower < 0)
    theta = np.where(free, np.asarray(theta, dtype=np.float64), 0.0)
    if not free.any():
        return theta
    solve = normal_solver(row_blocks.gram(A, free))
    for _ in range(REFINEMENTS):
        rhs = row_blocks.transposed_times(A, theta)  # theta is 0 off the free rows
        if report is not None:
            report.append(float(np.max(np.abs(rhs), initial=0.0)))
        theta -= np.where(free, row_blocks.times(A, solve(rhs)), 0.0)
    part = theta[free]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(part > 0, part / upper[free], np.where(part < 0, part / lower[free], 0))
    excess = float(np.max(ratio, initial=0.0))
    if excess > 1.0:
        theta /= excess
    if report is not None:
        report.append(max(excess, 1.0))
    return theta


def fill_subgradient(
    Z: NDArray[np.float64] | sp.sparray | row_blocks.WithOnes,
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
    rest = row_blocks.transposed_times(Z, np.where(free, 0.0, values))
    Z_free = row_blocks.rows_of(Z, free)
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
