r"""The structures :class:`~optframe.models.EmpiricalRisk` derives from its loss and penalty.

Notation of :mod:`optframe.models._risk_dual`: :math:`c_i = C s_i`, the loss argument
:math:`a_i = p_i + q_i f_i` with :math:`f_i = x_i^\top w + b`, multipliers
:math:`\theta_i \in c_i\,\partial\ell(a_i)` and :math:`v_i = -q_i\theta_i`. The model's own dual
variable is :math:`\alpha_i = \sigma\theta_i` with :math:`\sigma = -1` for a margin (the SVM's
:math:`\alpha \ge 0`) and :math:`\sigma = 1` for a residual (LAD's :math:`\theta`); then
:math:`v_i = \text{sgn}_i\,\alpha_i` with :math:`\text{sgn} = y` for a margin and 1 for a
residual, and :math:`w = X^\top v` under :math:`P = \tfrac12\lVert\cdot\rVert^2`.

For a piecewise-linear loss with kinks :math:`j_1 < \dots < j_K` and slopes
:math:`g_0 < \dots < g_K`, :math:`\ell^*(\beta) = \beta j_k - \ell(j_k)` on
:math:`[g_{k-1}, g_k]`, so the dual's per-sample term

.. math::

    \varphi_i(\alpha_i) = c_i\,\ell^*(\sigma\alpha_i / c_i) - \sigma\alpha_i p_i,
    \qquad \alpha_i \in [l_i, u_i] = \sigma c_i [g_0, g_K] \text{ (sorted)},

is piecewise linear with slope :math:`\sigma(j_k - p_i)` on the stretch where
:math:`\sigma\alpha_i / c_i \in [g_{k-1}, g_k]`, and the Fenchel dual under the ridge penalty is

.. math::

    \max_{l \le \alpha \le u} \; -\sum_i \varphi_i(\alpha_i) - \tfrac12 \alpha^\top Q \alpha,
    \qquad Q_{ij} = \text{sgn}_i\,\text{sgn}_j\, x_i^\top x_j,
    \qquad \textstyle\sum_i \text{sgn}_i \alpha_i = 0 \text{ with an intercept}.

* :func:`box_qp_dual` shifts it to :math:`x = \alpha - l \ge 0` (one kink per variable when
  :math:`K = 2`: the epsilon-insensitive loss, the double hinge);
* :func:`linear_box_dual` is the case :math:`K = 1`, :math:`\ell(j_1) = 0`, no intercept: the
  primal :math:`\tfrac12\lVert w\rVert^2 + \sum_i \max(l_i t_i, u_i t_i)` with
  :math:`t_i = \bar y_i - \langle w, z_i\rangle`, :math:`z_i = \text{sgn}_i x_i`,
  :math:`\bar y_i = j_1` (margin) or :math:`y_i - j_1` (residual).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.capabilities import BoxQPDual, LinearBoxDual

from ._box_dual import FixedSampleDual

if TYPE_CHECKING:
    from optframe.losses import PLQLoss

    from .empirical_risk import EmpiricalRisk


def sigma(model: EmpiricalRisk) -> float:
    r""":math:`\sigma`: -1 for a margin (the SVM's sign), +1 for a residual."""
    return -1.0 if model.loss.is_classification else 1.0


def signs(model: EmpiricalRisk) -> NDArray[np.float64]:
    r""":math:`\text{sgn}_i`: the labels for a margin, ones for a residual."""
    return model.slope.copy() if model.loss.is_classification else np.ones(model.data.n_samples)


def dual_box(model: EmpiricalRisk) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""The box :math:`[l, u]` of :math:`\alpha` (finite for a piecewise-linear loss)."""
    _, slopes = model.loss.linear_pieces
    c, s = model.costs, sigma(model)
    ends = (s * c * slopes[0], s * c * slopes[-1])
    return np.minimum(*ends), np.maximum(*ends)


def best_intercept(
    loss: PLQLoss,
    offset: NDArray[np.float64],
    slope: NDArray[np.float64],
    f: NDArray[np.float64],
    costs: NDArray[np.float64],
) -> float:
    r"""An exact minimizer over :math:`b` of :math:`\sum_i c_i\,\ell(p_i + q_i(f_i + b))`.

    For a piecewise-linear loss the sum is convex and piecewise linear in :math:`b`, with
    breakpoints :math:`q_i(j_k - p_i) - f_i` where the derivative rises by
    :math:`c_i(g_k - g_{k-1})`; the minimizer is where the derivative, :math:`\sum_{q_i > 0} c_i g_0
    - \sum_{q_i < 0} c_i g_K` far to the left, turns non-negative. On a flat stretch its midpoint
    is returned (as LIBSVM does for the SVM).
    """
    kinks, slopes = loss.linear_pieces
    keep = costs > 0
    p, q, f, c = offset[keep], slope[keep], f[keep], costs[keep]
    if kinks.size == 0 or c.size == 0:
        return 0.0
    points = (q[:, None] * (kinks[None, :] - p[:, None]) - f[:, None]).ravel()
    rises = (c[:, None] * np.diff(slopes)[None, :]).ravel()
    order = np.argsort(points, kind="stable")
    points, rises = points[order], rises[order]
    start = float(c[q > 0].sum()) * slopes[0] - float(c[q < 0].sum()) * slopes[-1]
    derivative = start + np.cumsum(rises)  # on the stretch right of each breakpoint
    flat = 1e-12 * float(c.sum()) * max(1.0, float(np.abs(slopes).max()))
    k = int(np.argmax(derivative >= -flat)) if (derivative >= -flat).any() else points.size - 1
    if abs(derivative[k]) <= flat and k + 1 < points.size:
        return float(0.5 * (points[k] + points[k + 1]))
    return float(points[k])


def linear_box_dual(model: EmpiricalRisk) -> LinearBoxDual:
    """The :class:`LinearBoxDual` of a two-piece loss under the ridge penalty, no intercept."""
    (kink,), _ = model.loss.linear_pieces
    sgn = signs(model)
    Z = box_rows(model)
    target = np.full(sgn.shape, kink) if model.loss.is_classification else model.offset - kink
    lower, upper = dual_box(model)
    return LinearBoxDual(
        Z=Z,
        target=np.asarray(target, dtype=np.float64),
        lower=lower,
        upper=upper,
        recover=lambda alpha: solution_from_alpha(model, alpha, intercept=False),
        primal_key=model.coef_key,
        dual_key=model.dual_key,
        parameter="C",
        reduced=FixedSampleDual.reducing(model.name),
    )


# Z = diag(sgn) X of the last data set asked for: along a C path every value's model (and its
# reduced problems) shares the Dataset, so Z is formed once and the DCD driver's per-matrix
# preparation is reused. Z depends only on the data and the loss's kind; the entry goes with
# the data.
_BOX_ROWS: dict[tuple[int, bool], tuple[Any, Any]] = {}


def box_rows(model: EmpiricalRisk) -> Any:
    r""":math:`Z = \mathrm{diag}(\text{sgn})\, X` (sparse stays sparse), cached per data set."""
    import weakref

    data = model.data
    key = (id(data), model.loss.is_classification)
    entry = _BOX_ROWS.get(key)
    if entry is not None and entry[0]() is data:
        return entry[1]
    sgn, X = signs(model), data.X
    Z = (sp.diags_array(sgn) @ sp.csr_array(X)).tocsr() if sp.issparse(X) else X * sgn[:, None]
    _BOX_ROWS.clear()
    _BOX_ROWS[key] = (weakref.ref(data), Z)
    weakref.finalize(data, _BOX_ROWS.pop, key, None)
    return Z


def box_qp_dual(model: EmpiricalRisk) -> BoxQPDual:
    r"""The :class:`BoxQPDual` of a loss with at most three pieces under the ridge penalty.

    :math:`x = \alpha - l`: the linear term is :math:`Ql + \varphi'` on the first stretch, the
    equality row :math:`\text{sgn}^\top x = -\text{sgn}^\top l`, the kink (when :math:`K = 2`) at
    :math:`\sigma c_i g_1 - l_i` with the slope's rise after it, and the offset
    :math:`-\tfrac12 l^\top Q l - \sum_i\varphi_i(l_i)` maps :math:`-\min\Phi` to the optimum.
    """
    loss, c, s = model.loss, model.costs, sigma(model)
    kinks, slopes = loss.linear_pieces
    sgn, X, p = signs(model), model.data.X, model.offset
    lower, upper = dual_box(model)
    # slopes of phi along increasing alpha: sigma (j_k - p) in the order alpha visits the stretches
    visit = range(kinks.size) if s > 0 else range(kinks.size - 1, -1, -1)
    phi_slopes = [s * (kinks[k] - p) for k in visit]
    if model.is_linear:
        Ql = sgn * np.asarray(X @ np.asarray(X.T @ (sgn * lower)).ravel(), dtype=np.float64).ravel()
    else:
        Ql = sgn * model.kernel_values(sgn * lower)
    counted = c > 0
    beta = np.zeros_like(c)
    beta[counted] = s * lower[counted] / c[counted]
    phi_lower = np.where(counted, c * _conjugate(loss, beta), 0.0) - s * lower * p
    width = upper - lower
    if kinks.size == 2:
        kink = np.clip(s * c * slopes[1] - lower, 0.0, width)
        rise = phi_slopes[1] - phi_slopes[0]
    else:
        kink, rise = width.copy(), np.zeros_like(c)
    return BoxQPDual(
        X=X,
        kernel=model._kernel,
        sign=sgn,
        linear=Ql + phi_slopes[0],
        upper=width,
        rhs=float(-(sgn @ lower)),
        kink=kink,
        slope_below=np.zeros_like(c),
        slope_above=rise,
        recover=lambda x, gradient: solution_from_alpha(
            model, x + lower, intercept=True, f=sgn * (gradient - phi_slopes[0])
        ),
        bound_offset=-0.5 * float(lower @ Ql) - float(phi_lower.sum()),
        start=-lower,
        objective=lambda x, gradient: _objective(model, x + lower, gradient - phi_slopes[0]),
    )


def _objective(model: EmpiricalRisk, alpha: NDArray, Qa: NDArray) -> float:
    r"""The primal objective at :math:`w = X^\top v` from :math:`Q\alpha`, in O(n log n).

    :math:`x_i^\top w = \text{sgn}_i (Q\alpha)_i` and
    :math:`\lVert w\rVert^2 = \alpha^\top Q\alpha`; the intercept is the best one for that
    :math:`w`.
    """
    f = signs(model) * Qa
    p, q, c = model.offset, model.slope, model.costs
    b = best_intercept(model.loss, p, q, f, c) if model.fit_intercept else 0.0
    return 0.5 * float(alpha @ Qa) + float(c @ model.loss.value(p + q * (f + b)))


def _conjugate(loss: PLQLoss, beta: NDArray[np.float64]) -> NDArray[np.float64]:
    lo, hi = loss.conjugate_domain
    return loss.conjugate(np.clip(beta, lo, hi))


def solution_from_alpha(
    model: EmpiricalRisk,
    alpha: NDArray[np.float64],
    intercept: bool,
    f: NDArray[np.float64] | None = None,
) -> dict[str, Any]:
    r"""``alpha``, ``w`` (linear model) and the best ``intercept`` (or 0) at a dual point.

    ``f`` is :math:`f - b` at the training rows when the caller has it (SMO's gradient gives it);
    otherwise it is computed from ``alpha``. It only places the intercept: the model's objective
    and certificate recompute :math:`K v` themselves, never trusting a driver's gradient.
    """
    lower, upper = dual_box(model)
    alpha = np.clip(np.asarray(alpha, dtype=np.float64).reshape(-1), lower, upper)
    solution: dict[str, Any] = {"alpha": alpha}
    v = signs(model) * alpha
    if model.is_linear:
        w = np.asarray(model.data.X.T @ v, dtype=np.float64).reshape(-1)
        solution["w"] = w
        if f is None:
            f = np.asarray(model.data.X @ w, dtype=np.float64).reshape(-1)
    elif f is None:
        f = model.kernel_values(v)
    b = 0.0
    if intercept and model.fit_intercept:
        b = best_intercept(model.loss, model.offset, model.slope, f, model.costs)
    solution["intercept"] = np.array([b])
    return model._publish(solution)
