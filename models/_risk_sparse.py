r"""The :class:`~optframe.capabilities.ElasticNetSmoothLoss` of an :class:`EmpiricalRisk`.

A linear model with one differentiable loss (ReHU pieces only, or the logistic) and a penalty
:math:`\rho_1\lVert w\rVert_1 + \tfrac{\rho_2}{2}\lVert w\rVert^2` (the ridge, the lasso or
the elastic net: :math:`\rho_1 + \rho_2 > 0`) offers its problem by columns:
:math:`\min \sum_i c_i\ell(a_i) + \rho_1\lVert w\rVert_1 + \tfrac{\rho_2}2\lVert w\rVert^2`,
:math:`a_i = p_i + q_i(x_i^\top w + b)` (notation of :mod:`optframe.models._risk_dual`), with
the loss's curvature bound :math:`L \ge \ell''`. For ReHU pieces
:math:`\ell'' = \sum_h s_h^2 [0 < s_h a + t_h < \tau_h]`, so :math:`L` is the largest such
sum over the intervals between the pieces' breakpoints; the logistic has :math:`L = 1/4`. A
loss with a ReLU piece has a kink (no curvature bound, a subdifferential instead of a
derivative) and is refused by name.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from optframe.capabilities import ElasticNetSmoothLoss

if TYPE_CHECKING:
    from optframe.losses import PLQLoss

    from .empirical_risk import EmpiricalRisk

#: The drivers that take what :class:`ElasticNetSmoothLoss` refuses, for the refusals' text.
OTHER_DRIVERS = (
    "Direct (every loss and penalty) and, for a piecewise-linear loss, AggregateDisaggregate"
)


def rehu_curvature(loss: PLQLoss) -> float:
    r"""The largest :math:`\ell'' = \sum_h s_h^2 [0 < s_h a + t_h < \tau_h]` over :math:`a`.

    :math:`\ell''` is constant between consecutive breakpoints :math:`-t_h/s_h` and
    :math:`(\tau_h - t_h)/s_h`; it is evaluated at one point inside each interval.
    """
    s, t, tau = (np.asarray(x, dtype=np.float64) for x in (loss.s, loss.t, loss.rehu_tau))
    moving = s != 0
    edges = [-t[moving] / s[moving]]
    finite = moving & np.isfinite(tau)
    edges.append((tau[finite] - t[finite]) / s[finite])
    points = np.unique(np.concatenate(edges))
    if points.size == 0:
        probes = np.zeros(1)
    else:
        probes = np.concatenate([[points[0] - 1.0], 0.5 * (points[:-1] + points[1:]),
                                 [points[-1] + 1.0]])  # fmt: skip
    z = s[None, :] * probes[:, None] + t[None, :]
    inside = (z > 0) & (z < tau[None, :])
    return float(np.max(np.sum(np.where(inside, s * s, 0.0), axis=1)))


def elastic_net_smooth_refusal(model: EmpiricalRisk) -> str | None:
    """Why ``model`` does not offer :class:`ElasticNetSmoothLoss`, or ``None``."""
    from optframe.losses import Logistic

    pen, loss, name = model.penalty_term, model.losses.single, "ElasticNetSmoothLoss"
    if not model.is_linear:
        return f"{name} is for the linear model; got the kernel {model.kernel!r}"
    if model.extended:
        return f"{name} is derived without a free margin or a penalized intercept"
    if loss is None or model.losses.has_affine:
        return f"{name} is derived for one loss without an affine part; got {model.loss!r}"
    if not (pen.l1 > 0 or pen.l2 > 0):
        return (
            f"{name} needs a penalty (L2(), L1() or ElasticNet()) to bound the weights; got "
            f"{model.penalty!r}"
        )
    if getattr(loss, "is_smooth", False):
        if isinstance(loss, Logistic):
            return None
        return (
            f"{name} is compiled for the logistic loss and ReHU pieces; the smooth loss {loss!r} "
            f"is neither. Use {OTHER_DRIVERS}"
        )
    if loss.relu_pieces:
        return (
            f"the loss {loss!r} has a kink (ReLU pieces): coordinate descent on the primal "
            f"needs a differentiable loss (least squares, squared hinge, Huber, logistic). "
            f"Use {OTHER_DRIVERS}"
        )
    return None


def elastic_net_smooth_loss(model: EmpiricalRisk) -> ElasticNetSmoothLoss:
    """The structure (see :func:`elastic_net_smooth_refusal` for when it is offered)."""
    from optframe.losses import Logistic

    loss, pen = model.losses.single, model.penalty_term
    assert loss is not None
    if isinstance(loss, Logistic):
        kind, pieces, curvature = "logistic", np.zeros((0, 3)), 0.25
    else:
        kind = "rehu"
        pieces = np.column_stack([loss.s, loss.t, loss.rehu_tau]).astype(np.float64)
        curvature = rehu_curvature(loss)
    fit_intercept = bool(model.fit_intercept)

    def recover(w: NDArray[np.float64], b: float) -> dict[str, NDArray[np.float64]]:
        solution = {"w": np.asarray(w, dtype=np.float64).copy(), "intercept": np.array([b])}
        return model._publish(solution)

    def gap_scale(objective: float) -> float:
        return model.gap_scale(objective, None)

    lo, hi = loss.conjugate_domain
    return ElasticNetSmoothLoss(
        X=model.data.X,
        offset=np.ascontiguousarray(model.offset, dtype=np.float64),
        slope=np.ascontiguousarray(model.slope, dtype=np.float64),
        costs=np.ascontiguousarray(model.costs, dtype=np.float64),
        loss=kind,
        pieces=pieces,
        curvature=max(curvature, math.ulp(1.0)),
        conjugate=loss.conjugate,
        domain=(float(lo), float(hi)),
        lam1=float(pen.l1),
        lam2=float(pen.l2),
        fit_intercept=fit_intercept,
        recover=recover,
        gap_scale=gap_scale,
    )
