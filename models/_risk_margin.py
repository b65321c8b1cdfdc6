r"""A free margin and a penalized intercept for :class:`~optframe.models.EmpiricalRisk`.

Notation of :mod:`optframe.models._risk_dual`: :math:`c_i = C s_i`, a margin loss
:math:`\ell`, :math:`f_i = x_i^\top w + b` and the ridge penalty
:math:`P(w) = \tfrac{\rho_2}{2}\lVert w\rVert^2`. The two options change the problem to

.. math::

    \min_{w, b, r} \; \tfrac{\rho_2}{2}\bigl(\lVert w\rVert^2 + \pi b^2\bigr)
    + \sum_i c_i\,\ell\bigl(y_i f_i - \mu r\bigr) - \mu r,

with :math:`\pi = 1` for a penalized intercept (``penalize_intercept=True``: the bias is a
feature equal to 1, the kernel :math:`k + 1`) and :math:`\mu = 1` for a free margin
(``free_margin=True``: the margin :math:`r` is a variable, the Lee-Mangasarian L2-SVM's
:math:`\rho` and the :math:`\nu`-SVM's).

*Dual.* With :math:`\theta_i \in c_i\operatorname{dom}\ell^*`, :math:`\alpha = -\theta` and
:math:`v = q\odot\alpha` (:math:`q = y` for a margin, -1 for a residual, whose offset
:math:`p = y` adds :math:`\sum_i\theta_i p_i`; a free margin needs a margin loss),
Fenchel-Young's inequality on the loss and on the penalty gives, for every :math:`(w, b, r)`,

.. math::

    \text{objective} \;\ge\; D(\alpha) - r\,\mu\bigl(1 - \mathbf 1^\top\alpha\bigr),
    \qquad D(\alpha) = -\sum_i c_i\,\ell^*(-\alpha_i / c_i)
    - \frac{\lVert X^\top v\rVert^2 + \pi(\mathbf 1^\top v)^2}{2\rho_2},

so with a free margin :math:`D` is a lower bound when :math:`\mathbf 1^\top\alpha = 1`
(stationarity in :math:`r`); a penalized intercept has no row :math:`\mathbf 1^\top v = 0`, its
:math:`b = \mathbf 1^\top v/\rho_2` at the optimum. The margin losses taken with a free margin
are non-increasing (:math:`\operatorname{dom}\ell^* \subset (-\infty, 0]`), so
:math:`\alpha \ge 0` and :func:`repaired` makes any candidate feasible exactly: clipped into its
box, then scaled to sum 1 (towards the upper ends of finite boxes when it sums to less).

*The simplex QP.* For one one-sided quadratic :math:`\ell(a) = \tfrac12\max(0, s a + t)^2`
(:math:`s < 0`, kink :math:`\kappa = -t/s`), equal costs :math:`c`, a free margin and a
penalized intercept, :math:`c\,\ell^*(-\alpha_i/c) = \alpha_i^2/(2 c s^2) - \kappa\alpha_i` and

.. math::

    D(\alpha) = \kappa - \frac{1}{2\rho_2}\,\alpha^\top\tilde K\alpha,
    \qquad \tilde K_{ij} = y_i y_j\bigl(k(x_i, x_j) + 1\bigr) + \delta_{ij}\,\frac{\rho_2}{c s^2},
    \qquad \mathbf 1^\top\alpha = 1,\ \alpha \ge 0:

the :class:`~optframe.capabilities.SimplexQP` with ridge :math:`\rho_2/(c s^2)`, scale
:math:`-1/(2\rho_2)` and offset :math:`\kappa` (:func:`simplex_qp`).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from optframe.capabilities import SimplexQP
from optframe.certificate import Certificate, RepairStep, enough_gap

from ._common import root_of_increasing, scalar, vector
from ._risk_dual import box_distance, loss_part

if TYPE_CHECKING:
    from .empirical_risk import EmpiricalRisk


def one_sided_quadratic(model: EmpiricalRisk) -> tuple[float, float] | None:
    r"""``(s, t)`` when the loss is :math:`\tfrac12\max(0, s a + t)^2` with :math:`s < 0`."""
    loss = model.losses.single
    if loss is None or loss.relu_pieces or loss.affine_slope != 0.0:
        return None
    pieces = loss.rehu_pieces
    if len(pieces) != 1:
        return None
    s, t, tau = pieces[0]
    return (s, t) if math.isinf(tau) and s < 0 else None


def best_margin(model: EmpiricalRisk, margins: NDArray[np.float64]) -> float:
    r"""An exact minimizer over :math:`r` of :math:`\sum_i c_i\,\ell(u_i - r) - r`.

    :math:`u_i = y_i f_i` are the margins. For one one-sided quadratic the derivative
    :math:`\sum_i c_i s^2 (r - u_i + \kappa)_+ - 1` is piecewise linear: with the shifted
    margins :math:`u_i - \kappa` sorted, the root where :math:`j` of them lie below it is
    :math:`r = (1/s^2 + \sum_{l \le j} c_{(l)} (u_{(l)} - \kappa)) / \sum_{l \le j} c_{(l)}`.
    Otherwise the non-decreasing derivative :math:`-\sum_i c_i\ell'(u_i - r) - 1` is bisected.
    """
    c = model.costs
    keep = c > 0
    u, c = np.asarray(margins, dtype=np.float64)[keep], c[keep]
    quadratic = one_sided_quadratic(model)
    if quadratic is not None:
        s, t = quadratic
        shifted = u - (-t / s)
        if c.size and float(c.min()) == float(c.max()):  # equal costs: a sort, no gather
            z = np.sort(shifted)
            roots = (1.0 / (float(c[0]) * s * s) + np.cumsum(z)) / np.arange(1, z.size + 1)
        else:
            order = np.argsort(shifted, kind="stable")
            z, w = shifted[order], c[order] * s * s
            roots = (1.0 + np.cumsum(w * z)) / np.cumsum(w)
        upper = np.r_[z[1:], np.inf]
        ok = np.flatnonzero((roots > z) & (roots <= upper))
        return float(roots[ok[0]] if ok.size else roots[-1])
    losses = model.losses

    def slope(r: float) -> float:
        return -float(c @ _derivative(losses, u - r, keep)) - 1.0

    return root_of_increasing(slope, float(u.min()) - 1.0, float(u.max()) + 1.0)


def _derivative(losses: Any, a: NDArray, keep: NDArray[np.bool_]) -> NDArray[np.float64]:
    """The loss's subgradient at the kept samples' arguments ``a``."""
    full = np.zeros(keep.size)
    full[keep] = a
    return np.asarray(losses.derivative(full), dtype=np.float64)[keep]


def margin_of(model: EmpiricalRisk, solution: Any, margins: NDArray[np.float64]) -> float:
    """The solution's ``rho``, or the best one for its margins; 0 without a free margin."""
    if not model.free_margin:
        return 0.0
    if "rho" in solution:
        return scalar(solution, "rho")
    return best_margin(model, margins)


def alpha_box(model: EmpiricalRisk) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Box of :math:`\alpha = -\theta`, :math:`-c_i[\beta_+, \beta_-]` (0 if :math:`c_i = 0`)."""
    cached = model.__dict__.get("_alpha_box")
    if cached is not None:
        return cached
    lo, hi = model.losses.domain
    c = model.costs
    with np.errstate(invalid="ignore"):
        box = np.where(c > 0, -c * hi, 0.0), np.where(c > 0, -c * lo, 0.0)
    for end in box:
        end.flags.writeable = False
    object.__setattr__(model, "_alpha_box", box)  # the model is frozen: its box never changes
    return box


def repaired(model: EmpiricalRisk, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`\alpha` clipped into its box and, with a free margin, scaled to sum 1.

    The box is :math:`[0, u_i]` (a non-increasing loss). A sum above 1 is scaled down; a sum below
    1 is scaled up when every :math:`u_i` is infinite, else every entry moves the same fraction
    of the way to :math:`u_i` (:func:`~optframe.duality.match_sum`). An all-zero
    :math:`\alpha` under infinite ends becomes uniform over the counted samples.
    """
    low, high = alpha_box(model)
    alpha = np.asarray(alpha, dtype=np.float64)
    unbounded = model.free_margin and _unbounded(model)
    total = math.nan
    if unbounded and model.__dict__.get("_alpha_positive_part"):  # the box is [0, inf) for all
        alpha = np.maximum(alpha, 0.0)
        total = float(alpha.sum())
    if not math.isfinite(total):  # the general clip (also NaN and inf entries)
        alpha = np.clip(np.nan_to_num(alpha), low, high)
        total = float(alpha.sum())
    if not model.free_margin:
        return alpha
    if total > 1.0 or (total > 0.0 and unbounded):
        return alpha / total
    if total == 1.0:
        return alpha
    if unbounded:
        counted = (model.costs > 0).astype(np.float64)
        return counted / counted.sum()
    from optframe.duality import match_sum

    finite = np.where(np.isinf(high), 0.0, high)
    if float(finite.sum()) >= 1.0:
        return match_sum(np.minimum(alpha, finite), 1.0, low, finite)
    grow = np.isinf(high) & (model.costs > 0)  # the finite ends are full; the rest shares
    alpha = finite.copy()
    alpha[grow] = (1.0 - float(finite.sum())) / int(grow.sum())
    return alpha


def _unbounded(model: EmpiricalRisk) -> bool:
    """Whether every counted multiplier's box is unbounded above (kept on the model)."""
    cached = model.__dict__.get("_alpha_unbounded")
    if cached is None:
        low, high = alpha_box(model)
        cached = bool(np.all(np.isinf(high[model.costs > 0])))
        object.__setattr__(model, "_alpha_unbounded", cached)
        # every box [0, inf): the repair's clip is the positive part
        object.__setattr__(
            model, "_alpha_positive_part", bool(np.all(np.isinf(high)) and not low.any())
        )
    return cached


def _loss_part(model: EmpiricalRisk, v: NDArray, alpha: NDArray) -> float:
    r""":func:`~._risk_dual.loss_part`; for one one-sided quadratic in closed form.

    :math:`-\sum_i c_i\ell^*(-\alpha_i/c_i) = \kappa\sum_i\alpha_i - \sum_i\alpha_i^2/(2c_i s^2)`
    (:math:`\alpha_i = 0` where :math:`c_i = 0`).
    """
    quadratic = one_sided_quadratic(model)
    if quadratic is None or not model.losses.is_classification:  # a residual adds theta'p
        return loss_part(model, v)
    s, t = quadratic
    c = model.costs
    inverse = 1.0 / c if float(c.min()) > 0 else np.where(c > 0, 1.0 / np.maximum(c, 1e-300), 0.0)
    return (-t / s) * float(alpha.sum()) - float((alpha * alpha) @ inverse) / (2.0 * s * s)


def _quadratic(model: EmpiricalRisk, v: NDArray[np.float64], Kv: NDArray | None) -> float:
    r""":math:`(v^\top K v + \pi(\mathbf 1^\top v)^2) / (2\rho_2)` (:math:`K = XX^\top` linear)."""
    l2 = model.penalty_term.l2
    if model.is_linear:
        z = np.asarray(model.data.X.T @ v, dtype=np.float64).reshape(-1)
        quad = float(z @ z)
    else:
        quad = float(v @ (model.kernel_values(v) if Kv is None else Kv))
    if model.penalize_intercept:
        quad += float(v.sum()) ** 2
    return quad / (2.0 * l2)


def _scaled_own(model: EmpiricalRisk, solution: Any, own: Any) -> tuple[Any, Any]:
    r"""The solution's own :math:`\alpha` repaired by a scaling alone, with its :math:`Kv`.

    When :math:`\alpha` lies in its box and scaling it to sum 1 keeps it there, the repair is
    :math:`\alpha/t` and :math:`K v/t` follows from the solution's cached :math:`Kv` (no kernel
    product). ``(None, None)`` otherwise (a linear model computes :math:`X^\top v` anyway).
    """
    if model.is_linear:
        return None, None
    low, high = alpha_box(model)
    if not np.all((own >= low) & (own <= high)):
        return None, None
    total = float(own.sum()) if model.free_margin else 1.0
    if not total > 0:
        return None, None
    alpha = own / total
    if not np.all(alpha <= high):
        return None, None
    f, _ = model._fit(solution)  # cached: K v / rho_2 of the solution's own alpha
    return alpha, model.penalty_term.l2 * f / total


def _published(model: EmpiricalRisk, alpha: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""Between :math:`-\theta` and the model's ``alpha``: the same for a margin, negated else."""
    return alpha if model.losses.is_classification else -alpha


def margin_dual_bound(model: EmpiricalRisk, solution: Any) -> float:
    r""":math:`D(\alpha)` of the module's docstring at a repaired multiplier: a proven bound.

    The value of :func:`margin_certificate`.
    """
    return margin_certificate(model, solution).value


def _repair_steps(model: EmpiricalRisk, candidate: NDArray, alpha: NDArray) -> list[RepairStep]:
    """What :func:`repaired` did to ``candidate``: the clip and the scaling to sum 1."""
    low, high = alpha_box(model)
    outside = box_distance(np.nan_to_num(candidate), low, high)
    steps = []
    if outside > 0:
        what = "clipped into the box 0 <= alpha_i <= c_i * (end of dom l*)"
        steps.append(RepairStep("clip", what, outside, 0.0, "largest distance outside the box"))
    if model.free_margin:
        clipped = float(np.clip(np.nan_to_num(candidate), low, high).sum())
        steps.append(RepairStep("scale", "scaled (or moved towards the box's ends) to sum 1, "
                                "the free margin's row", abs(clipped - 1.0),
                                abs(float(alpha.sum()) - 1.0), "|1'alpha - 1|"))  # fmt: skip
    return steps


def margin_statement(model: EmpiricalRisk) -> str:
    """The dual of the module's docstring in one line, for ``model``'s options."""
    rows = ["0 <= alpha_i, -alpha_i / c_i in dom l*"]
    if model.free_margin:
        rows.insert(0, "1'alpha = 1")
    intercept = " + (1'v)^2" if model.penalize_intercept else ""
    return (f"max_alpha -sum_i c_i l*(-alpha_i / c_i) - (|X'v|^2{intercept}) / (2 rho_2), "
            "v = q*alpha,  s.t.  " + ", ".join(rows))  # fmt: skip


def margin_certificate(model: EmpiricalRisk, solution: Any) -> Certificate:
    r""":math:`D(\alpha)` of the module's docstring at a repaired multiplier, with its proof.

    Candidates: the solution's ``alpha`` when present, then :math:`\alpha = -c\odot\ell'(a)` at
    the solution's loss arguments (the optimum's multiplier for a differentiable loss); the
    better value is kept. A kernel solution's own :math:`Kv` is reused when no repair moved it.
    The point is ``{"alpha": ...}`` in the solution's convention.
    """
    inside = model._inside(solution)
    y = model.slope
    candidates: list[NDArray[np.float64] | None] = []
    own = None
    if "alpha" in inside:  # the model's alpha is -theta for a margin loss, theta for a residual
        own = _published(model, vector(inside, "alpha", model.name))
        candidates.append(own)
    if own is None or model.is_linear:  # a kernel's second candidate costs a kernel product
        candidates.append(None)  # the derivative at the arguments, computed only when needed
    best: Certificate | None = None
    enough = math.inf  # a first candidate that closes the gap ends the search
    if len(candidates) > 1:
        objective = model.objective(solution)
        enough = objective - enough_gap(1e-12) * model.gap_scale(objective, None)
    statement = margin_statement(model)
    for candidate in candidates:
        origin = "the solution's own multipliers"
        if candidate is None:
            candidate = -model.costs * model.losses.derivative(model.loss_argument(solution))
            origin = "the loss's derivative at the solution's margins"
        alpha, Kv = _scaled_own(model, solution, own) if candidate is own else (None, None)
        if alpha is None:
            alpha = repaired(model, candidate)
        steps = _repair_steps(model, candidate, alpha)
        v = y * alpha
        loss = _loss_part(model, v, alpha)
        quadratic = _quadratic(model, v, Kv)
        terms = {
            "loss part, -sum_i c_i l*(-alpha_i / c_i)": loss,
            "-quadratic / (2 rho_2)": -quadratic,
        }
        found = Certificate(loss - quadratic, {"alpha": _published(model, alpha)}, tuple(steps),
                            terms, statement, origin)  # fmt: skip
        if best is None or found.value > best.value:
            best = found
        if best.value >= enough:
            break
    assert best is not None
    return best


def solution_at(model: EmpiricalRisk, alpha: NDArray[np.float64]) -> dict[str, Any]:
    r"""The solution at a dual point: ``alpha``, ``w`` (linear), ``intercept`` and ``rho``.

    ``alpha`` is first made feasible (:func:`repaired`: drivers return tiny negatives).
    :math:`w = X^\top v/\rho_2` and :math:`b = \mathbf 1^\top v/\rho_2` (penalized intercept;
    0 without one), :math:`v = q\odot\alpha`; :math:`r` is :func:`best_margin` for that
    :math:`(w, b)`.
    """
    alpha = repaired(model, np.asarray(alpha, dtype=np.float64).reshape(-1))
    l2 = model.penalty_term.l2
    v = model.slope * alpha
    b = float(v.sum()) / l2 if model.penalize_intercept else 0.0
    solution: dict[str, Any] = {"alpha": _published(model, alpha), "intercept": np.array([b])}
    if model.is_linear:
        w = np.asarray(model.data.X.T @ v, dtype=np.float64).reshape(-1) / l2
        solution["w"] = w
        f = np.asarray(model.data.X @ w, dtype=np.float64).reshape(-1)
    else:
        f, _ = model._fit({"alpha": solution["alpha"]})
    if model.free_margin:
        solution["rho"] = np.array([best_margin(model, model.slope * (f + b))])
    return model._publish(solution)


def simplex_qp_refusal(model: EmpiricalRisk) -> str | None:
    """Why ``model`` does not offer the :class:`SimplexQP`, or ``None``."""
    if one_sided_quadratic(model) is None:
        return (
            f"SimplexQP needs one one-sided quadratic loss, 1/2 max(0, s a + t)^2 with s < 0 "
            f"(SquaredHinge()); got {model.loss!r}"
        )
    if not model.free_margin:
        return "SimplexQP is the dual with a free margin (sum alpha = 1); use free_margin=True"
    if not model.penalize_intercept:
        return (
            "SimplexQP's kernel is k + 1: the intercept must be penalized "
            "(fit_intercept=True, penalize_intercept=True)"
        )
    pen = model.penalty_term
    if pen.l1 > 0 or pen.l2 <= 0:
        return f"SimplexQP is the dual under a ridge penalty; got {model.penalty!r}"
    c = model.costs
    if not (c[0] > 0 and np.all(c == c[0])):
        return (
            "SimplexQP has one ridge on its diagonal: every sample needs the same cost C s_i "
            "(no sample weights); use repeated rows for integer weights"
        )
    return None


def simplex_qp(model: EmpiricalRisk) -> SimplexQP:
    """The :class:`SimplexQP` of the module's docstring (see :func:`simplex_qp_refusal`)."""
    quadratic = one_sided_quadratic(model)
    assert quadratic is not None
    s, t = quadratic
    l2, c = model.penalty_term.l2, float(model.costs[0])
    ridge = l2 / (c * s * s)
    return SimplexQP(
        X=model.data.X,
        sign=model.slope.copy(),
        kernel=model._kernel,
        ridge=ridge,
        recover=lambda alpha: solution_at(model, alpha),
        scale=-0.5 / l2,
        offset=-t / s,
        objective=lambda alpha, scores: objective_at(model, alpha, scores, ridge),
    )


def objective_at(
    model: EmpiricalRisk, alpha: NDArray[np.float64], scores: NDArray[np.float64], ridge: float
) -> float:
    r"""The objective at :func:`solution_at` ``(model, alpha)`` from :math:`\tilde K\alpha`.

    :math:`(\tilde K\alpha)_i = q_i\bigl((Kv)_i + \mathbf 1^\top v\bigr) + \text{ridge}\,
    \alpha_i`, so :math:`Kv` (and :math:`f - b = Kv/\rho_2`) needs no kernel pass. Evaluated at
    ``alpha`` as given (the repair of :func:`solution_at` moves a point of the simplex by
    rounding only).
    """
    alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
    q, l2 = model.slope, model.penalty_term.l2
    v = q * alpha
    total = float(v.sum())
    Kv = q * (np.asarray(scores, dtype=np.float64) - ridge * alpha) - total
    f, b = Kv / l2, total / l2
    a = model.offset + q * (f + b)
    r = best_margin(model, q * (f + b))
    penalty = float(v @ Kv) / (2.0 * l2) + 0.5 * l2 * b * b
    return penalty + float(model.costs @ model._losses.value(a - r)) - r
