r"""The formulation of an :class:`~optframe.models.EmpiricalRisk` in LaTeX, from its declaration.

Nothing here is written per model: the primal is read from the loss's ReLU and ReHU pieces (a
user's :class:`~optframe.losses.PLQLoss` prints the same way), the penalty, the loss weight, the
intercept and the kernel; the dual is the Fenchel dual of the module
:mod:`optframe.models._risk_dual`, with the loss's conjugate domain as numbers.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .empirical_risk import EmpiricalRisk


def _num(value: float) -> str:
    """A coefficient as LaTeX: infinity, an integer without a point, else up to 6 digits."""
    if math.isinf(value):
        return r"\infty" if value > 0 else r"-\infty"
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def _coefficient(value: float) -> str:
    """A factor in front of a term: nothing for 1, else :func:`_num`."""
    return "" if value == 1.0 else _num(value)


def _affine(slope: float, offset: float, variable: str = "a") -> str:
    """``slope * variable + offset`` written the way a person would."""
    if slope == 0.0:
        return _num(offset)
    if slope == 1.0:
        term = variable
    elif slope == -1.0:
        term = f"-{variable}"
    else:
        term = f"{_num(slope)}{variable}"
    if offset == 0.0:
        return term
    if term.startswith("-"):
        return f"{_num(offset)} {term.replace('-', '- ', 1)}"
    sign = "+" if offset > 0 else "-"
    return f"{term} {sign} {_num(abs(offset))}"


def loss_latex(model: EmpiricalRisk, loss: object = None) -> str:
    r""":math:`\ell(a)` as a sum of its pieces (and its affine part), or a smooth loss's own."""
    loss = model.loss if loss is None else loss
    if getattr(loss, "latex", None):  # a SmoothLoss states itself
        return str(loss.latex)
    terms = [r"\max(0,\, " + _affine(u, v) + ")" for u, v in loss.relu_pieces]
    terms += [
        r"\operatorname{rehu}_{" + _num(tau) + "}(" + _affine(s, t) + ")"
        for s, t, tau in loss.rehu_pieces
    ]
    if loss.affine_slope:
        terms.append(_affine(loss.affine_slope, 0.0))
    return " + ".join(terms) if terms else "0"


def _groups(model: EmpiricalRisk) -> list[tuple[str, object, int]]:
    """``(label, loss, samples)`` per distinct loss: the label its samples share, as LaTeX."""
    out = []
    y = model._y
    for loss, members in model.losses.parts():
        labels = np.unique(y[members]) if members.size else np.array([])
        label = _num(float(labels[0])) if labels.size == 1 else str(len(out) + 1)
        if labels.size == 1 and labels[0] > 0:
            label = "+" + label
        out.append((label, loss, int(members.size)))
    return out


def _loss_lines(model: EmpiricalRisk) -> tuple[str, list[str]]:
    r"""The loss's symbol in the sum (``\ell`` or ``\ell_{y_i}``) and the lines defining it."""
    if not model.per_sample:
        return r"\ell", [rf"\ell(a) = {loss_latex(model)}"]
    lines = [
        rf"\ell_{{{label}}}(a) = {loss_latex(model, loss)}\quad ({count}\text{{ samples}})"
        for label, loss, count in _groups(model)
    ]
    return r"\ell_{y_i}", lines


def _any_rehu(model: EmpiricalRisk) -> bool:
    return any(loss.rehu_pieces for loss, _ in model.losses.parts())


def _penalty(model: EmpiricalRisk) -> str:
    pen = model.penalty_term
    parts = []
    if pen.l1:
        parts.append(("" if pen.l1 == 1.0 else _num(pen.l1)) + r"\lVert w\rVert_1")
    if pen.l2:
        coefficient = r"\tfrac12" if pen.l2 == 1.0 else r"\tfrac{" + _num(pen.l2) + "}{2}"
        parts.append(coefficient + r"\lVert w\rVert_2^2")
    return " + ".join(parts)


def _argument(model: EmpiricalRisk) -> str:
    f = r"x_i^\top w" if model.is_linear else r"f(x_i)"
    if model.fit_intercept:
        f += " + b"
    if model.losses.is_classification:
        return rf"a_i = y_i\,({f})"
    return rf"a_i = y_i - ({f})" if model.fit_intercept else rf"a_i = y_i - {f}"


def primal_latex(model: EmpiricalRisk) -> str:
    r"""The primal problem: :math:`\min P(w) + C\sum_i s_i \ell(a_i)`, the loss spelled out.

    With a loss per label, :math:`\ell_{y_i}`, each defined; with a free margin :math:`r` (and a
    penalized intercept), the problem of that option.
    """
    n, m = model.data.n_samples, model.data.n_features
    variables = rf"w \in \mathbb{{R}}^{{{m}}}"
    if model.fit_intercept:
        variables += r",\, b \in \mathbb{R}"
    if model.free_margin:
        variables += r",\, r \in \mathbb{R}"
    weighted = bool((model.costs != model.costs[0]).any()) if n else False
    weight = r"s_i\," if weighted else ""
    C = "" if model.C == 1.0 else _num(model.C) + r"\,"
    objective = _penalty(model)
    if model.penalize_intercept and objective:
        objective = objective.replace(r"\lVert w\rVert_2^2", r"(\lVert w\rVert_2^2 + b^2)")
    symbol, loss_lines = _loss_lines(model)
    loss_sum = rf"{C}\sum_{{i=1}}^{{{n}}} {weight}{symbol}(a_i)"
    objective = f"{objective} + {loss_sum}" if objective else loss_sum
    if model.free_margin:
        objective += " - r"
    argument = _argument(model)
    if model.free_margin:
        argument += " - r"
    lines = [rf"\min_{{{variables}}} \; {objective}", argument, *loss_lines]
    if _any_rehu(model):
        lines.append(
            r"\operatorname{rehu}_\tau(z) = \begin{cases} 0 & z \le 0 \\ z^2/2 & 0 < z \le \tau"
            r" \\ \tau(z - \tau/2) & z > \tau \end{cases}"
        )
    if not model.is_linear:
        lines.append(
            r"f(x) = \textstyle\sum_j v_j\, k(x_j, x),\quad \lVert w\rVert_2^2 = v^\top K v,"
            rf"\quad k = \text{{{type(model.kernel).__name__}}}"
        )
    return r" \\ ".join(lines)


def simplex_dual_latex(model: EmpiricalRisk) -> str:
    r"""The dual of the free-margin model with a one-sided quadratic loss: a QP on the simplex.

    :math:`\min_\alpha \alpha^\top \tilde K \alpha` over :math:`\alpha \ge 0`,
    :math:`\mathbf 1^\top\alpha = 1`, with
    :math:`\tilde K = yy^\top \circ (K + \pi) + \operatorname{diag}(\rho_2 / (c_i s^2))`
    (:class:`~optframe.capabilities.SimplexQP`, Lee and Mangasarian's L2-SVM).
    """
    n = model.data.n_samples
    loss = model.losses.single
    slope = loss.rehu_pieces[0][0]
    kernel = r"x_i^\top x_j" if model.is_linear else r"k(x_i, x_j)"
    shift = " + 1" if model.penalize_intercept else ""
    rho2 = model.penalty_term.l2
    weighted = bool((model.costs != model.costs[0]).any()) if n else False
    cost = r"c_i = C s_i" if weighted else rf"c_i = {_num(model.C)}"
    denominator = "c_i" if slope * slope == 1.0 else rf"c_i\, {_num(slope * slope)}"
    return r" \\ ".join(
        [
            rf"\min_{{\alpha \in \mathbb{{R}}^{{{n}}}}} \; \alpha^\top \tilde K \alpha"
            r"\quad \text{s.t.}\quad \alpha \ge 0,\; \mathbf 1^\top \alpha = 1",
            rf"\tilde K_{{ij}} = y_i y_j ({kernel}{shift}) + \delta_{{ij}}\,"
            rf"\frac{{{_num(rho2)}}}{{{denominator}}},\quad {cost}",
        ]
    )


def dual_latex(model: EmpiricalRisk) -> str:
    r"""The Fenchel dual of :mod:`~optframe.models._risk_dual`, with the conjugate's domain.

    .. math::

        \max_\theta \sum_i \bigl(\theta_i p_i - c_i\ell^*(\theta_i / c_i)\bigr) - P^*(X^\top v),
        \qquad v_i = -q_i\theta_i,

    with :math:`p_i = y_i, q_i = -1` for a residual and :math:`p_i = 0, q_i = y_i` for a margin.
    """
    n = model.data.n_samples
    weighted = bool((model.costs != model.costs[0]).any()) if n else False
    regression = not model.losses.is_classification
    pen = model.penalty_term
    gram = r"X^\top v" if model.is_linear else r"K^{1/2} v"
    symbol, loss_lines = _loss_lines(model)
    if model.per_sample:
        domains = [
            rf"\theta_i / c_i \in [{_num(loss.conjugate_domain[0])}, "
            rf"{_num(loss.conjugate_domain[1])}] \text{{ for }} y_i = {label}"
            for label, loss, _ in _groups(model)
        ]
    else:
        low, high = model.loss.conjugate_domain
        domains = [rf"\theta_i / c_i \in [{_num(low)}, {_num(high)}]"]
    conj, constraints = "", domains
    if pen.l1 == 0 and pen.l2 == 0:
        constraints.append(r"X^\top v = 0")
    elif pen.l1 == 0:
        scale = r"\tfrac12" if pen.l2 == 1.0 else r"\tfrac{1}{" + _num(2 * pen.l2) + "}"
        conj = rf" - {scale}\lVert {gram}\rVert_2^2"
    elif pen.l2 == 0:
        constraints.append(rf"\lVert X^\top v\rVert_\infty \le {_num(pen.l1)}")
    else:
        conj = (
            r" - \tfrac{1}{" + _num(2 * pen.l2) + r"}\textstyle\sum_j \max(0,\, "
            r"\lvert (X^\top v)_j\rvert - " + _num(pen.l1) + ")^2"
        )
    if model.fit_intercept:
        constraints.append(r"\mathbf 1^\top v = 0")
    term = (r"\theta_i y_i - " if regression else "-") + rf"c_i\,{symbol}^*(\theta_i / c_i)"
    v = r"v_i = \theta_i" if regression else r"v_i = -y_i\theta_i"
    cost = r"c_i = C s_i" if weighted else rf"c_i = {_num(model.C)}"
    return r" \\ ".join(
        [
            rf"\max_{{\theta \in \mathbb{{R}}^{{{n}}}}} \; \sum_{{i=1}}^{{{n}}} \bigl({term}\bigr)"
            + conj,
            r",\; ".join(constraints),
            rf"{v},\quad {cost},\quad {symbol}^*(\beta) = \sup_a\, \beta a - {symbol}(a)",
            *loss_lines,
        ]
    )
