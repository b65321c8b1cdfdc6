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
  :math:`K = 2`: the epsilon-insensitive loss, the double hinge). Every sample uses its own
  loss's pieces (:class:`~optframe.models._risk_losses.SampleLosses`); a sample whose loss is
  linear has the one-point box :math:`l_i = u_i` and is eliminated (:func:`_eliminated`);
* :func:`linear_box_dual` is the case :math:`K = 1`, :math:`\ell(j_1) = 0`, no intercept: the
  primal :math:`\tfrac12\lVert w\rVert^2 + \sum_i \max(l_i t_i, u_i t_i)` with
  :math:`t_i = \bar y_i - \langle w, z_i\rangle`, :math:`z_i = \text{sgn}_i x_i`,
  :math:`\bar y_i = j_1` (margin) or :math:`y_i - j_1` (residual).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.capabilities import BoxQPDual, EntropyBoxDual, LinearBoxDual, PiecewiseBoxDual
from optframe.duality import match_sum

from ._box_dual import FixedSampleDual
from ._risk_losses import SampleLosses

if TYPE_CHECKING:
    from optframe.losses import PLQLoss

    from .empirical_risk import EmpiricalRisk


def sigma(model: EmpiricalRisk) -> float:
    r""":math:`\sigma`: -1 for a margin (the SVM's sign), +1 for a residual."""
    return -1.0 if model.losses.is_classification else 1.0


def signs(model: EmpiricalRisk) -> NDArray[np.float64]:
    r""":math:`\text{sgn}_i`: the labels for a margin, ones for a residual."""
    return model.slope.copy() if model.losses.is_classification else np.ones(model.data.n_samples)


def dual_box(model: EmpiricalRisk) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""The box :math:`[l, u]` of :math:`\alpha` (finite for a piecewise-linear loss)."""
    first, last = model.losses.domain  # the outer slopes g_0, g_K of each sample's loss
    c, s = model.costs, sigma(model)
    with np.errstate(invalid="ignore"):  # c_i = 0 (zero weight) at an infinite end: [0, 0]
        ends = (np.where(c > 0, s * c * first, 0.0), np.where(c > 0, s * c * last, 0.0))
    return np.minimum(*ends), np.maximum(*ends)


def best_intercept(
    loss: PLQLoss | SampleLosses,
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
    is returned (as LIBSVM does for the SVM). With :class:`SampleLosses` each sample brings its
    own loss's breakpoints; a linear loss has none and only adds to the starting derivative.
    """
    if not loss.is_piecewise_linear:  # quadratic pieces (one loss: quadratic_box_refusal)
        single = loss.single if isinstance(loss, SampleLosses) else loss
        assert single is not None
        return quadratic_intercept(single, offset, slope, f, costs)
    keep = costs > 0
    parts = loss.parts() if isinstance(loss, SampleLosses) else [(loss, None)]
    all_points, all_rises = [], []
    start, total, steep = 0.0, 0.0, 1.0
    for part, index in parts:
        chosen = keep if index is None else index[keep[index]]
        kinks, slopes = part.linear_pieces
        p, q, g, c = offset[chosen], slope[chosen], f[chosen], costs[chosen]
        start += float(c[q > 0].sum()) * slopes[0] - float(c[q < 0].sum()) * slopes[-1]
        total += float(c.sum())
        steep = max(steep, float(np.abs(slopes).max()))
        if kinks.size and c.size:
            all_points.append((q[:, None] * (kinks[None, :] - p[:, None]) - g[:, None]).ravel())
            all_rises.append((c[:, None] * np.diff(slopes)[None, :]).ravel())
    if not all_points:
        return 0.0
    points, rises = np.concatenate(all_points), np.concatenate(all_rises)
    order = np.argsort(points, kind="stable")
    points, rises = points[order], rises[order]
    derivative = start + np.cumsum(rises)  # on the stretch right of each breakpoint
    flat = 1e-12 * total * steep
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


def piecewise_box_dual(model: EmpiricalRisk) -> PiecewiseBoxDual:
    r"""The :class:`PiecewiseBoxDual` of any PLQ loss under the ridge penalty, no intercept.

    Sample :math:`i` (cost :math:`c_i > 0`, argument :math:`a_i = p_i + q_i x_i^\top w`) gives
    one variable per piece: a ReLU piece :math:`(u, v)` has :math:`b = u p_i + v`,
    :math:`g = -u q_i`, box :math:`[0, c_i]`; a ReHU piece :math:`(s, t, \tau)` has
    :math:`b = s p_i + t`, :math:`g = -s q_i`, box :math:`[0, c_i\tau]` and :math:`d = 1/c_i`.
    The model's per-sample multiplier is :math:`\theta_i = \sum_{r: i_r = i}` (piece slope)
    :math:`\alpha_r`, in :math:`c_i\,\partial\ell(a_i)` at an optimum.
    """
    loss = model.loss
    c, p, q = model.costs, model.offset, model.slope
    counted = np.flatnonzero(c > 0)
    cc, pc, qc = c[counted], p[counted], q[counted]
    parts = []  # (sample, coef, target, upper, diagonal, slope) of each piece, over the samples
    for u, v in loss.relu_pieces:
        parts.append((counted, -u * qc, u * pc + v, cc, np.zeros_like(cc), np.full_like(cc, u)))
    for s_, t, tau in loss.rehu_pieces:
        upper = cc * tau if math.isfinite(tau) else np.full_like(cc, math.inf)
        parts.append((counted, -s_ * qc, s_ * pc + t, upper, 1.0 / cc, np.full_like(cc, s_)))
    # sample-major: the pieces of one sample side by side (DCD steps on them together)
    sample, coef, target, upper, diagonal, piece_slope = (
        np.stack([part[k] for part in parts], axis=1).ravel() for k in range(6)
    )
    n = model.data.n_samples

    def recover(alpha: NDArray[np.float64]) -> dict[str, Any]:
        theta = np.bincount(sample, weights=piece_slope * alpha, minlength=n)
        own = -theta if model.losses.is_classification else theta  # the model's alpha
        return solution_from_alpha(model, own, intercept=False)

    def primal_value(w: NDArray[np.float64]) -> float:
        a = model.argument(w, 0.0)
        return 0.5 * float(w @ w) + float(c @ model.losses.value(a))

    return PiecewiseBoxDual(
        X=model.data.X,
        sample=sample.astype(np.int64),
        coef=coef,
        target=target,
        upper=upper,
        diagonal=diagonal,
        primal_value=primal_value,
        recover=recover,
    )


def entropy_box_dual(model: EmpiricalRisk) -> EntropyBoxDual:
    r"""The :class:`EntropyBoxDual` of the logistic loss under the ridge penalty, no intercept.

    :math:`g = y`, :math:`U = c` (the costs :math:`C s_i`); the model's :math:`\alpha = -\theta`
    is the structure's :math:`\alpha`, in :math:`[0, c_i]` (:func:`solution_from_alpha`).
    """
    c = model.costs

    def recover(alpha: NDArray[np.float64]) -> dict[str, Any]:
        return solution_from_alpha(model, alpha, intercept=False)

    def primal_value(w: NDArray[np.float64]) -> float:
        a = model.argument(w, 0.0)
        return 0.5 * float(w @ w) + float(c @ model.losses.value(a))

    return EntropyBoxDual(
        X=model.data.X,
        coef=np.asarray(model.slope, dtype=np.float64).copy(),
        upper=c.copy(),
        primal_value=primal_value,
        recover=recover,
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
    key = (id(data), model.losses.is_classification)
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
    r"""The :class:`BoxQPDual` of losses with at most three pieces under the ridge penalty.

    :math:`x = \alpha - l`: the linear term is :math:`Ql + \varphi'` on the first stretch, the
    equality row :math:`\text{sgn}^\top x = -\text{sgn}^\top l` (none, ``rhs=None``, without an
    intercept), the kink (when :math:`K = 2`) at
    :math:`\sigma c_i g_1 - l_i` with the slope's rise after it, and the offset
    :math:`-\tfrac12 l^\top Q l - \sum_i\varphi_i(l_i)` maps :math:`-\min\Phi` to the optimum.
    Samples with a fixed multiplier (a linear loss) are eliminated (:func:`_eliminated`).
    """
    losses, c, s = model.losses, model.costs, sigma(model)
    sgn, X, p = signs(model), model.data.X, model.offset
    lower, upper = dual_box(model)
    width = upper - lower
    # per sample: phi's slope on the first stretch alpha visits, the kink and the rise after it
    phi0, kink, rise = np.zeros_like(c), width.copy(), np.zeros_like(c)
    for loss, index in losses.parts():
        kinks, slopes = loss.linear_pieces
        if kinks.size == 0:  # a linear loss: a one-point box, no slope of phi to follow
            continue
        visit = range(kinks.size) if s > 0 else range(kinks.size - 1, -1, -1)
        phi_slopes = [s * (kinks[k] - p[index]) for k in visit]
        phi0[index] = phi_slopes[0]
        if kinks.size == 2:
            kink[index] = np.clip(s * c[index] * slopes[1] - lower[index], 0.0, width[index])
            rise[index] = phi_slopes[1] - phi_slopes[0]
    v_lower = sgn * lower
    if model.is_linear:
        Kl = np.asarray(X @ np.asarray(X.T @ v_lower).ravel(), dtype=np.float64).ravel()
    else:
        Kl = model.kernel_values(v_lower)
    Ql = sgn * Kl
    counted = c > 0
    beta = np.zeros_like(c)
    beta[counted] = s * lower[counted] / c[counted]
    phi_lower = np.where(counted, c * losses.conjugate(beta), 0.0) - s * lower * p
    offset = -0.5 * float(lower @ Ql) - float(phi_lower.sum())
    if losses.fixed.any():
        return _eliminated(model, lower, width, phi0, kink, rise, Kl, offset)
    return BoxQPDual(
        X=X,
        kernel=model._kernel,
        sign=sgn,
        linear=Ql + phi0,
        upper=width,
        rhs=float(-(sgn @ lower)) if model.fit_intercept else None,
        kink=kink,
        slope_below=np.zeros_like(c),
        slope_above=rise,
        recover=lambda x, gradient: solution_from_alpha(
            model, x + lower, intercept=True, f=sgn * (gradient - phi0)
        ),
        bound_offset=offset,
        start=-lower,
        objective=lambda x, gradient: _objective(model, x + lower, gradient - phi0),
    )


def _eliminated(
    model: EmpiricalRisk,
    lower: NDArray,
    width: NDArray,
    phi0: NDArray,
    kink: NDArray,
    rise: NDArray,
    Kl: NDArray,
    offset: float,
) -> BoxQPDual:
    r"""The box QP over the free samples :math:`F`, the fixed ones :math:`E` (linear losses) out.

    :math:`\alpha_E = l_E` never moves, so with :math:`v = \text{sgn}\odot\alpha` the quadratic
    splits into :math:`\tfrac12 v_F^\top K_{FF} v_F + v_F^\top K_{FE} v_E + \text{const}`: the
    columns of :math:`E` go into the linear term (already in :math:`Ql`) and the offset. For PU this
    is USMO's reduced dual, :math:`c = -c_1 K_{UP}\mathbf 1` and
    :math:`-\tfrac12 c_1^2\mathbf 1^\top K_{PP}\mathbf 1`. The start is :math:`\alpha_F = 0`
    clipped into the box and moved towards one end of it until the equality row holds (without
    an intercept there is no row, ``rhs=None``, and the start is the clipped point).

    It is stated as the reduced dual is: a kinked coordinate carries both slopes of
    :math:`\varphi_i` in :math:`h_i` (PU: -1 below :math:`c_2/2`, +1 above) rather than the first
    in the linear term, and when every free sign is -1 the equality row is multiplied by -1
    (PU: :math:`\mathbf 1^\top\sigma = c_1 p`).
    """
    losses, c, sgn, p, q = model.losses, model.costs, signs(model), model.offset, model.slope
    fixed = losses.fixed
    free = np.flatnonzero(~fixed)
    v_fixed = np.where(fixed, sgn * lower, 0.0)
    if np.any(lower[free] != 0.0):  # K v_E alone (else it is K v_lower, already known)
        if model.is_linear:
            X = model.data.X
            KvE = np.asarray(X @ np.asarray(X.T @ v_fixed).ravel(), dtype=np.float64).ravel()
        else:
            KvE = model.kernel_values(v_fixed)
    else:
        KvE = Kl
    g_fixed = KvE[free]  # K_FE v_E
    s_fixed = float(v_fixed @ KvE)  # v_E' K_EE v_E
    k_fixed = losses.domain[0]  # the slope k of each linear loss
    constant = float(np.sum((c * k_fixed * p)[fixed]))
    sum_fixed = float(v_fixed.sum())
    sgn_f, lower_f, width_f = sgn[free], lower[free], width[free]
    rhs = float(-(sgn @ lower))
    kinked = (kink < width)[free]
    below = np.where(kinked, phi0[free], 0.0)
    phi_f = phi0[free] - below  # the slope left in the linear term
    flip = -1.0 if np.all(sgn_f < 0) else 1.0

    def full_f(gradient: NDArray) -> NDArray[np.float64]:
        f = np.zeros_like(c)  # the fixed samples' f only shifts a linear loss: not needed
        f[free] = sgn_f * (np.asarray(gradient, dtype=np.float64) - phi_f)
        return f

    def recover(x: NDArray, gradient: NDArray) -> dict[str, Any]:
        alpha = lower.copy()
        alpha[free] += x
        return solution_from_alpha(model, alpha, intercept=True, f=full_f(gradient))

    def objective(x: NDArray, gradient: NDArray) -> float:
        """The primal objective in O(n log n), v'Kv and f_E from the parts."""
        f = full_f(gradient)
        v_f = sgn_f * (lower_f + x)
        b = best_intercept(losses, p, q, f, c) if model.fit_intercept else 0.0
        cross = float(g_fixed @ v_f) + s_fixed  # v_E' (K v)_E
        quad = float(v_f @ f[free]) + cross
        values = losses.value(p + q * (f + b))
        free_loss = float(c[free] @ values[free])
        return 0.5 * quad + free_loss + constant - cross - b * sum_fixed

    start = np.clip(-lower_f, 0.0, width_f) * sgn_f  # the terms sgn_i x_i
    ends = np.minimum(0.0, sgn_f * width_f), np.maximum(0.0, sgn_f * width_f)
    # the model checked that the row can be met (EmpiricalRisk._check_bounded)
    feasible = float(ends[0].sum()) <= rhs <= float(ends[1].sum())
    if not model.fit_intercept:  # no equality row: any point of the box
        return BoxQPDual(
            X=model.data.X[free],
            kernel=model._kernel,
            sign=sgn_f,
            linear=(sgn * Kl)[free] + phi_f,
            upper=width_f,
            rhs=None,
            kink=kink[free],
            slope_below=below,
            slope_above=below + rise[free],
            recover=recover,
            bound_offset=offset,
            start=np.clip(-lower_f, 0.0, width_f),
            objective=objective,
        )
    return BoxQPDual(
        X=model.data.X[free],
        kernel=model._kernel,
        sign=flip * sgn_f,
        linear=(sgn * Kl)[free] + phi_f,
        upper=width_f,
        rhs=flip * rhs,
        kink=kink[free],
        slope_below=below,
        slope_above=below + rise[free],
        recover=recover,
        bound_offset=offset,
        start=sgn_f * match_sum(start, rhs, *ends) if feasible else None,
        objective=objective,
    )


def _objective(model: EmpiricalRisk, alpha: NDArray, Qa: NDArray) -> float:
    r"""The primal objective at :math:`w = X^\top v` from :math:`Q\alpha`, in O(n log n).

    :math:`x_i^\top w = \text{sgn}_i (Q\alpha)_i` and
    :math:`\lVert w\rVert^2 = \alpha^\top Q\alpha`; the intercept is the best one for that
    :math:`w`.
    """
    f = signs(model) * Qa
    p, q, c = model.offset, model.slope, model.costs
    losses = model.losses
    b = best_intercept(losses, p, q, f, c) if model.fit_intercept else 0.0
    return 0.5 * float(alpha @ Qa) + float(c @ losses.value(p + q * (f + b)))


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
        b = best_intercept(model.losses, model.offset, model.slope, f, model.costs)
    solution["intercept"] = np.array([b])
    return model._publish(solution)


# ------------------------------------------------------ quadratic pieces: a box QP with D (SMO)
def _conjugate_shape(loss: PLQLoss) -> tuple[float, float, float, list[tuple[float, float]]]:
    r"""The shape of :math:`\ell^*` for a loss of ReHU pieces with one curvature.

    Returns :math:`(\kappa, e_-, e_+, \text{kinks})`: :math:`\ell^*` has curvature
    :math:`1/\kappa` on its whole domain; :math:`e_\mp` are its derivative at the lower and upper
    end of the domain (the finite ends of the outer linear stretches of :math:`\ell`, ``nan``
    where the domain is unbounded); each kink :math:`(g, W)` is an inner linear stretch of
    :math:`\ell` of slope :math:`g` and width :math:`W`, where the derivative of :math:`\ell^*`
    jumps by :math:`W`. Call :func:`quadratic_box_refusal` first.
    """
    segments = loss._segments
    kappa = max(seg[5] for seg in segments)
    first, last = segments[0], segments[-1]
    low_end = first[1] if first[5] == 0.0 else math.nan
    high_end = last[0] if last[5] == 0.0 else math.nan
    kinks = [(seg[4], seg[1] - seg[0]) for seg in segments[1:-1] if seg[5] == 0.0]
    return kappa, low_end, high_end, kinks


def quadratic_box_refusal(model: EmpiricalRisk) -> str | None:
    r"""Why a loss with quadratic pieces gives no :class:`BoxQPDual` (``None``: it does).

    The box QP has one variable per sample, :math:`\theta_i`, whose dual term
    :math:`c_i\ell^*(\theta_i/c_i)` must be one quadratic (a single curvature) plus at most one
    kink, over an interval bounded on at least one side (the box's variables are bounded
    below). So: one loss of ReHU pieces only (no ReLU kink), no affine part; every quadratic
    stretch with the same curvature (the expectile with :math:`\tau \ne 1/2` has two); at most
    one inner linear stretch. A free multiplier (a conjugate finite on the whole line: least
    squares, the expectile, the squared epsilon-insensitive loss) is split in two bounded
    variables instead (:func:`split_box_qp_dual`, conditions in :func:`_split_refusal`).
    """
    loss, pen = model.loss, model.penalty_term
    if (pen.l1, pen.l2) != (0.0, 1.0):
        return f"BoxQPDual is the dual under the penalty L2(); got {model.penalty!r}"
    if model.per_sample:
        return (
            f"with quadratic pieces the box QP is derived for one loss without an affine part; "
            f"got {loss!r}"
        )
    if loss.relu_pieces:
        return (
            f"the loss {loss!r} mixes ReLU and ReHU pieces: its conjugate has linear stretches "
            "beside quadratic ones, which one variable per sample with one diagonal term does "
            "not carry (a loss of ReHU pieces only, or of ReLU pieces only, gives a box QP)"
        )
    lo, hi = loss.conjugate_domain
    if math.isinf(lo) and math.isinf(hi):
        return _split_refusal(loss)
    curvatures = {float(seg[5]) for seg in loss._segments if seg[5] > 0.0}
    if len(curvatures) > 1:
        shown = ", ".join(f"{k:g}" for k in sorted(curvatures))
        return (
            f"the loss {loss!r} has quadratic stretches of different curvatures ({shown}; an "
            "expectile with tau != 1/2 has two): its conjugate is not one quadratic, so one "
            "variable per sample with one diagonal term cannot state it"
        )
    _, _, _, kinks = _conjugate_shape(loss)
    if len(kinks) > 1:
        return f"the loss {loss!r} has {len(kinks)} inner linear stretches; the box QP allows 1"
    return None


def _split_shape(loss: PLQLoss) -> tuple[float, float, float, float] | str:
    r""":math:`(z_-, z_+, \kappa_-, \kappa_+)` of a loss with free multipliers, or why not.

    :math:`[z_-, z_+]` is where :math:`\ell` is smallest (a flat stretch, or one point) and
    :math:`\kappa_\mp` its curvature left and right of it; with
    :math:`\ell_{\min} = \ell(z_+)`, :math:`\ell^*(\theta) = \theta z_\pm +
    \theta^2/(2\kappa_\pm) - \ell_{\min}` for :math:`\pm\theta \ge 0`.
    """
    segments = loss._segments
    flat = [seg for seg in segments if seg[5] == 0.0]
    if any(seg[4] != 0.0 for seg in flat) or len(flat) > 1:
        return "a linear stretch of non-zero slope"
    if flat:
        z_low, z_high = float(flat[0][0]), float(flat[0][1])
    else:
        at = [
            min(max(seg[2] - seg[4] / seg[5], seg[0]), seg[1])
            for seg in segments
            if seg[0] <= seg[2] - seg[4] / seg[5] <= seg[1]
        ]
        if not at:
            return "no point where its derivative is 0"
        z_low = z_high = float(at[0])
    left = {float(seg[5]) for seg in segments if seg[0] < z_low and seg[5] > 0.0}
    right = {float(seg[5]) for seg in segments if seg[1] > z_high and seg[5] > 0.0}
    if len(left) != 1 or len(right) != 1:
        return "more than one curvature on one side of its minimum"
    return z_low, z_high, left.pop(), right.pop()


def _split_refusal(loss: PLQLoss) -> str | None:
    r"""Why a loss with free multipliers gives no split :class:`BoxQPDual` (``None``: it does).

    The split :math:`\theta = \theta^+ - \theta^-`, :math:`\theta^\pm \ge 0`, states
    :math:`c\ell^*(\theta/c)` exactly when :math:`\ell^*` is one quadratic on each side of 0
    that grows away from it: :math:`\ell` smallest on a flat stretch (or a point) with one
    curvature on each side (least squares, the expectile, the squared epsilon-insensitive loss).
    """
    shape = _split_shape(loss)
    if isinstance(shape, str):
        return (
            f"the multipliers of {loss!r} are free and it has {shape}: its conjugate is not one "
            "quadratic on each side of 0, so a split into two variables with one diagonal "
            "term each (one curvature per side) cannot state it"
        )
    return None


def split_box_qp_dual(model: EmpiricalRisk) -> BoxQPDual:
    r"""The :class:`BoxQPDual` of a loss with free multipliers, split in two variables each.

    With :math:`\theta_i = \sigma\alpha_i = \theta^+_i - \theta^-_i`, :math:`x = (\theta^+,
    \theta^-) \ge 0` (2n variables, the points twice): :math:`\ell^*` of
    :func:`_split_shape` gives the diagonals :math:`1/(\kappa_\pm c_i)`, the linear terms
    :math:`z_+ - p_i` and :math:`p_i - z_-`, signs :math:`a = (\sigma\,\text{sgn},
    -\sigma\,\text{sgn})` (so :math:`v = \text{sgn}\,\alpha = \sum a_k x_k` over both
    copies), the offset :math:`\sum_i c_i \ell_{\min}`, and with an intercept the row
    :math:`a^\top x = 0` (none without). Exact: for a given :math:`\theta_i` the two terms,
    both growing away from 0, are smallest with one of :math:`\theta^\pm_i` at 0, which is
    :math:`c_i\ell^*(\theta_i/c_i)`. Samples with :math:`c_i = 0` have both boxes
    :math:`\{0\}`.
    """
    loss, c, s = model.loss, model.costs, sigma(model)
    sgn, X, p = signs(model), model.data.X, model.offset
    shape = _split_shape(loss)
    assert not isinstance(shape, str)  # quadratic_box_refusal said so
    z_low, z_high, k_low, k_high = shape
    counted = c > 0
    safe = np.where(counted, c, 1.0)
    half = s * sgn
    sign = np.concatenate([half, -half])
    diagonal = np.concatenate(
        [
            np.where(counted, 1.0 / (k_high * safe), 0.0),
            np.where(counted, 1.0 / (k_low * safe), 0.0),
        ]
    )
    linear = np.concatenate([np.where(counted, z_high - p, 0.0), np.where(counted, p - z_low, 0.0)])
    upper = np.concatenate([np.where(counted, np.inf, 0.0)] * 2)
    n = c.shape[0]
    minimum = float(loss.value(np.array([z_high]))[0])
    offset = float(c[counted].sum()) * minimum
    twice = sp.vstack([X, X], format="csr") if sp.issparse(X) else np.vstack([X, X])

    def alpha_kv(x: NDArray[np.float64], gradient: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
        r""":math:`\alpha` and :math:`Kv` from the split point and its gradient."""
        x, gradient = np.asarray(x, dtype=np.float64), np.asarray(gradient, dtype=np.float64)
        alpha = s * (x[:n] - x[n:])
        kv = half * (gradient[:n] - diagonal[:n] * x[:n] - linear[:n])
        return alpha, kv

    def recover(x: NDArray[np.float64], gradient: NDArray[np.float64]) -> dict[str, Any]:
        alpha, kv = alpha_kv(x, gradient)
        return solution_from_alpha(model, alpha, intercept=True, f=kv)

    def objective(x: NDArray[np.float64], gradient: NDArray[np.float64]) -> float:
        alpha, kv = alpha_kv(x, gradient)
        return _objective(model, alpha, sgn * kv)

    return BoxQPDual(
        X=twice,
        kernel=model._kernel,
        sign=sign,
        linear=linear,
        upper=upper,
        rhs=0.0 if model.fit_intercept else None,
        kink=upper.copy(),
        slope_below=np.zeros(2 * n),
        slope_above=np.zeros(2 * n),
        recover=recover,
        bound_offset=offset,
        start=np.zeros(2 * n),
        objective=objective,
        diagonal=diagonal,
    )


def quadratic_box_qp_dual(model: EmpiricalRisk) -> BoxQPDual:
    r"""The :class:`BoxQPDual` of a loss of ReHU pieces (squared hinge, Huber) under the ridge.

    With :math:`\kappa` the loss's curvature, :math:`c_i\ell^*(\theta/c_i)` has curvature
    :math:`1/(\kappa c_i)` in :math:`\theta`: the diagonal :math:`D_i = 1/(\kappa c_i)` (the
    L2-loss SVM's :math:`1/(2C)`). The model's :math:`\alpha` lies in :math:`[l, u]`
    (:func:`dual_box`), one end finite, called :math:`\bar\alpha`; with :math:`e = +1` when it is
    :math:`l` and :math:`-1` when it is :math:`u`, :math:`\alpha = \bar\alpha + e\,x`,
    :math:`x \ge 0`, :math:`x \le u - l` (``inf`` for the squared hinge). With
    :math:`a = e\,\text{sgn}`: :math:`Q = aa^\top\circ K + D`, linear term
    :math:`a\circ K(\text{sgn}\,\bar\alpha) + \sigma e(\ell^{*\prime}(\bar\beta) - p)` (the
    derivative at the domain's end :math:`\bar\beta = \sigma\bar\alpha/c`), the row
    :math:`a^\top x = -\text{sgn}^\top\bar\alpha` with an intercept (none, ``rhs=None``,
    without), a kink where an inner linear stretch of the
    loss puts one, the offset
    :math:`-\tfrac12 \bar v^\top K \bar v - \sum_i\varphi_i(\bar\alpha_i)`.
    Samples with :math:`c_i = 0` have the one-point box :math:`x_i = 0` and no diagonal.
    """
    low_domain, high_domain = model.loss.conjugate_domain
    if math.isinf(low_domain) and math.isinf(high_domain):
        return split_box_qp_dual(model)
    loss, c, s = model.loss, model.costs, sigma(model)
    sgn, X, p = signs(model), model.data.X, model.offset
    lower, upper = dual_box(model)
    counted = c > 0
    kappa, low_end, high_end, kinks = _conjugate_shape(loss)
    with np.errstate(invalid="ignore"):  # c_i = 0 times an infinite end: a one-point box
        e = 1.0 if np.all(np.isfinite(lower[counted])) else -1.0
        base = np.where(counted, lower if e > 0 else upper, 0.0)
        width = np.where(counted, upper - lower, 0.0)
    # the derivative of l* where beta enters the domain, moving with x
    end = low_end if s * e > 0 else high_end
    slope0 = np.where(counted, s * e * (end - p), 0.0)
    diagonal = np.zeros_like(c)
    diagonal[counted] = 1.0 / (kappa * c[counted])
    kink, rise = width.copy(), np.zeros_like(c)
    if kinks:
        ((g, w_k),) = kinks
        kink = np.where(counted, np.clip(e * (s * c * g - base), 0.0, width), width)
        rise = np.where(counted, w_k, 0.0)
    a = e * sgn
    v_base = sgn * base
    if not v_base.any():
        Kb = np.zeros_like(c)
    elif model.is_linear:
        Kb = np.asarray(X @ np.asarray(X.T @ v_base).ravel(), dtype=np.float64).ravel()
    else:
        Kb = model.kernel_values(v_base)
    beta = np.zeros_like(c)
    beta[counted] = s * base[counted] / c[counted]
    phi_base = np.where(counted, c * model.losses.conjugate(beta), 0.0) - s * base * p
    offset = -0.5 * float(v_base @ Kb) - float(phi_base.sum())

    def kv(x: NDArray[np.float64], gradient: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`Kv` from SMO's gradient :math:`G = (Q + D)x + \text{linear}`."""
        return a * (np.asarray(gradient) - diagonal * x - slope0)

    def recover(x: NDArray[np.float64], gradient: NDArray[np.float64]) -> dict[str, Any]:
        return solution_from_alpha(model, base + e * x, intercept=True, f=kv(x, gradient))

    def objective(x: NDArray[np.float64], gradient: NDArray[np.float64]) -> float:
        return _objective(model, base + e * x, sgn * kv(x, gradient))

    return BoxQPDual(
        X=X,
        kernel=model._kernel,
        sign=a,
        linear=a * Kb + slope0,
        upper=width,
        rhs=float(-(sgn @ base)) if model.fit_intercept else None,
        kink=kink,
        slope_below=np.zeros_like(c),
        slope_above=rise,
        recover=recover,
        bound_offset=offset,
        start=np.where(counted, -e * base, 0.0),
        objective=objective,
        diagonal=diagonal,
    )


def quadratic_intercept(
    loss: PLQLoss,
    offset: NDArray[np.float64],
    slope: NDArray[np.float64],
    f: NDArray[np.float64],
    costs: NDArray[np.float64],
) -> float:
    r"""An exact minimizer over :math:`b` of :math:`\sum_i c_i\,\ell(p_i + q_i(f_i + b))`.

    For any PLQ loss: the derivative :math:`\sum_i c_i q_i \ell'(p_i + q_i(f_i + b))` is
    non-decreasing and, between consecutive breakpoints :math:`q_i(E - p_i) - f_i` (:math:`E`
    the ends of the loss's stretches), affine in :math:`b`. A bisection over the sorted
    breakpoints finds the stretch where it turns non-negative (O(n) per probe, O(log n) probes)
    and the affine root there is exact. On a flat stretch its midpoint is returned.
    """
    keep = costs > 0
    p, q, g, c = offset[keep], slope[keep], f[keep], costs[keep]
    if c.size == 0:
        return 0.0
    ends = np.array(sorted({seg[0] for seg in loss._segments[1:]}), dtype=np.float64)
    if ends.size == 0:
        return 0.0
    points = np.unique((q[:, None] * (ends[None, :] - p[:, None]) - g[:, None]).ravel())

    def derivative(b: float) -> float:
        return float(c @ (q * loss.derivative(p + q * (g + b))))

    scale = 1e-12 * float(c.sum()) * max(1.0, float(np.max(np.abs(points))))
    n_points = points.size
    lo, hi = 0, n_points  # the first breakpoint where the derivative is >= 0 (or n_points)
    while lo < hi:
        mid = (lo + hi) // 2
        if derivative(points[mid]) >= -scale:
            hi = mid
        else:
            lo = mid + 1
    # the stretch (points[lo - 1], points[lo]), unbounded at either end: the derivative is
    # affine on it, so two probes inside give its root exactly
    span = 1.0 + float(points[-1] - points[0])
    left = float(points[lo - 1]) if lo > 0 else float(points[0]) - span
    right = float(points[lo]) if lo < n_points else float(points[-1]) + span
    d_left, d_right = derivative(left), derivative(right)
    if d_right - d_left <= scale:  # flat on the stretch: the root is its breakpoint
        return right if lo < n_points else left
    root = left + (right - left) * (-d_left) / (d_right - d_left)
    low_end = float(points[lo - 1]) if lo > 0 else -math.inf
    high_end = float(points[lo]) if lo < n_points else math.inf
    return float(min(max(root, low_end), high_end))
