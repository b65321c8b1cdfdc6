r"""The certificate of :class:`~optframe.models.EmpiricalRisk`: its Fenchel dual, from its pieces.

With :math:`c_i = C s_i`, the loss argument :math:`a_i = p_i + q_i f_i` (:math:`p_i = 0, q_i = y_i`
for a margin; :math:`p_i = y_i, q_i = -1` for a residual; :math:`q_i^2 = 1`) and
:math:`f_i = x_i^\top w + b`, let :math:`\theta_i` be any loss multiplier with
:math:`\theta_i / c_i \in \operatorname{dom}\ell^*` and :math:`v_i = -q_i\theta_i`. Fenchel-Young's
inequality twice, :math:`c_i\ell(a_i) \ge \theta_i a_i - c_i\ell^*(\theta_i/c_i)` and
:math:`P(w) \ge (X^\top v)^\top w - P^*(X^\top v)`, and
:math:`\sum_i \theta_i a_i = \sum_i \theta_i p_i - (X^\top v)^\top w - b\,\mathbf 1^\top v` give,
when :math:`\mathbf 1^\top v = 0` (the intercept's row; no row without intercept),

.. math::

    P(w) + \sum_i c_i \ell(a_i) \;\ge\; D(\theta) = \sum_i \bigl(\theta_i p_i
    - c_i\,\ell^*(\theta_i / c_i)\bigr) - P^*(X^\top v)

for every :math:`(w, b)`: a lower bound whatever produced :math:`\theta`. :func:`dual_value`
first makes :math:`\theta` feasible exactly: clipped into :math:`c_i \operatorname{dom}\ell^*`
(which contains 0 unless a loss has an affine part), the intercept's row by
:func:`~optframe.duality.balance` (or, when a box misses 0, by moving every entry towards one
end of its box, :func:`~optframe.duality.match_sum`; a linear loss's one-point box stays), the
lasso's :math:`\lVert X^\top v\rVert_\infty \le \rho_1` by a scaling, and without a penalty
:math:`X^\top v = 0` by a projection (then a scaling back into the box). Each step moves
:math:`v` towards 0 or keeps the previous constraints.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from optframe import row_blocks
from optframe.certificate import DEFAULT_GAP_TOL, Certificate, RepairStep, enough_gap
from optframe.duality import (
    balance,
    equality_residuals,
    fill_subgradient,
    kink_set,
    match_sum,
    project_null,
)
from optframe.losses import Absolute, Hinge
from optframe.row_blocks import with_ones

if TYPE_CHECKING:
    from .empirical_risk import EmpiricalRisk


def _box(model: EmpiricalRisk) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""The box :math:`c_i \operatorname{dom}\ell^*` of :math:`\theta` (ends may be inf)."""
    lo, hi = model.losses.domain
    c = model.costs
    with np.errstate(invalid="ignore"):
        low, high = np.where(c > 0, c * lo, 0.0), np.where(c > 0, c * hi, 0.0)
    return low, high


def balanced(v: NDArray, v_low: NDArray, v_high: NDArray) -> NDArray[np.float64] | None:
    r""":math:`v` in its box with :math:`\mathbf 1^\top v = 0`, or ``None`` if there is none.

    Scaling the larger side towards 0 (:func:`~optframe.duality.balance`) when every box holds
    0; otherwise every entry moves the same fraction of the way to one end of its box
    (:func:`~optframe.duality.match_sum`), which keeps the box and the fixed entries.
    """
    if np.all((v_low <= 0.0) & (v_high >= 0.0)):
        return balance(v, np.ones_like(v))
    if not float(v_low.sum()) <= 0.0 <= float(v_high.sum()):
        return None  # the dual is infeasible: the primal is unbounded below
    return match_sum(v, 0.0, v_low, v_high)


def _scale_into(v: NDArray, low: NDArray, high: NDArray) -> tuple[NDArray[np.float64], float]:
    """``v`` times the largest factor in [0, 1] that keeps it in ``[low, high]`` (which holds 0).

    Returns the scaled vector and the factor.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(v > high, high / v, np.where(v < low, low / v, 1.0))
    factor = max(0.0, min(1.0, float(np.min(ratios)) if ratios.size else 1.0))
    return v * factor, factor


def _factor(t: float) -> str:
    """A scaling factor in words: ``0.957575``, or ``1 - 2.5e-14`` when it is nearly 1."""
    return f"1 - {1.0 - t:.2g}" if 0 < 1.0 - t < 1e-5 else f"{t:.6g}"


def box_distance(x: NDArray, low: NDArray, high: NDArray) -> float:
    """The largest distance of an entry of ``x`` outside ``[low, high]`` (0 inside)."""
    if x.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        return float(max(np.max(low - x), np.max(x - high), 0.0))


def _point(model: EmpiricalRisk, v: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
    r"""The dual point in the solution's convention (:math:`\theta = -q\odot v`).

    :math:`\alpha = -\theta` for a margin loss, :math:`\theta` for a residual loss.
    """
    return {"alpha": model.slope * v if model.losses.is_classification else v}


def dual_statement(model: EmpiricalRisk) -> str:
    """The dual problem of the module's docstring, in one line, for ``model``'s options."""
    pen = model.penalty_term
    rows = []
    if model.fit_intercept:
        rows.append("1'v = 0")
    if pen.l1 == 0 and pen.l2 == 0:
        rows.append("X'v = 0")
        if isinstance(model.loss, Absolute) and not model.per_sample:  # LAD's LP dual
            rows = ["X'theta = 0"] + (["1'theta = 0"] if model.fit_intercept else [])
            return "max_theta y'theta  s.t.  " + ", ".join(rows) + ", -c_i <= theta_i <= c_i"
    hinge = isinstance(model.loss, Hinge) and not model.per_sample
    if hinge and pen.l1 == 0 and pen.l2 > 0:  # the SVM's dual, in its usual alpha = -theta
        quadratic = "|X'(y*alpha)|^2" if model.is_linear else "(y*alpha)'K(y*alpha)"
        rows = ["y'alpha = 0"] if model.fit_intercept else []
        return (f"max_alpha 1'alpha - {quadratic} / (2 rho_2)  s.t.  "
                + ", ".join([*rows, "0 <= alpha_i <= c_i"]))  # fmt: skip
    rows.append("theta_i / c_i in dom l*")
    penalty = "" if pen.l1 == 0 and pen.l2 == 0 else " - P*(X'v)"
    if not model.is_linear:
        penalty = " - v'Kv / (2 rho_2)"
    return (f"max_theta sum_i (theta_i p_i - c_i l*(theta_i / c_i)){penalty}, v = -q*theta,  "
            "s.t.  " + ", ".join(rows))  # fmt: skip


def _clip_step(before: float) -> list[RepairStep]:
    """The clip into the box, when it moved the point (none otherwise)."""
    if not before > 0:
        return []
    return [RepairStep("clip", "clipped into the box theta_i / c_i in dom l*", before, 0.0,
                       "largest distance outside the box")]  # fmt: skip


def _balance(
    v: NDArray, v_low: NDArray, v_high: NDArray, steps: list[RepairStep]
) -> NDArray[np.float64] | None:
    """:func:`balanced`, recorded as a step of ``steps``."""
    before = abs(float(v.sum()))
    balanced_v = balanced(v, v_low, v_high)
    if balanced_v is None:
        steps.append(RepairStep("balance", "no point of the box has 1'v = 0: no bound", before,
                                None, "|1'v|"))  # fmt: skip
        return None
    how = ("scaled the larger side (positive or negative terms) down"
           if np.all((v_low <= 0.0) & (v_high >= 0.0))
           else "moved every entry the same fraction towards one end of its box")  # fmt: skip
    steps.append(RepairStep("balance", f"1'v = 0 (the intercept's row): {how}", before,
                            abs(float(balanced_v.sum())), "|1'v|"))  # fmt: skip
    return balanced_v


def _rows(model: EmpiricalRisk, columns: NDArray[np.bool_] | None = None) -> Any:
    r""":math:`[X_{:,J}, \mathbf 1]` (the ones only with an intercept): stationarity's rows."""
    every = columns is None or bool(np.all(columns))  # no copy of X for all its columns
    X = model.data.X if every else model.data.X[:, np.flatnonzero(columns)]
    return with_ones(X) if model.fit_intercept else X


def loss_part(model: EmpiricalRisk, v: NDArray[np.float64]) -> float:
    r""":math:`\sum_i (\theta_i p_i - c_i\ell^*(\theta_i / c_i))` at :math:`\theta = -q\odot v`.

    ``v`` must already lie in the box (samples with :math:`c_i = 0` have :math:`v_i = 0`).
    """
    linear, conjugate = loss_terms(model, v)
    return linear + conjugate


def loss_terms(model: EmpiricalRisk, v: NDArray[np.float64]) -> tuple[float, float]:
    r"""The two sums of :func:`loss_part`.

    :math:`\theta^\top p` and :math:`-\sum_i c_i\ell^*(\theta_i / c_i)`.
    """
    theta = -model.slope * v
    c = model.costs
    counted = c > 0
    beta = np.zeros_like(theta)
    beta[counted] = theta[counted] / c[counted]
    conjugate = model.losses.conjugate(beta)  # clipped into each domain
    return float(theta @ model.offset), -float(c[counted] @ conjugate[counted])


def _loss_term_dict(model: EmpiricalRisk, v: NDArray[np.float64]) -> dict[str, float]:
    linear, conjugate = loss_terms(model, v)
    return {"sum_i theta_i p_i": linear, "-sum_i c_i l*(theta_i / c_i)": conjugate}


def dual_value(model: EmpiricalRisk, theta: NDArray[np.float64], enough: float = math.inf) -> float:
    r""":math:`D(\theta)` after the repairs of the module's docstring: a proven lower bound.

    Where several repairs are tried (no penalty), the first that reaches ``enough`` is kept.
    The value of :func:`dual_point`.
    """
    return dual_point(model, theta, enough).value


def dual_point(
    model: EmpiricalRisk,
    theta: NDArray[np.float64],
    enough: float = math.inf,
    origin: str = "",
    steps: tuple[RepairStep, ...] = (),
) -> Certificate:
    r""":func:`dual_value` with its point, repairs and terms: the model's certificate.

    ``steps`` are those that made ``theta`` (a subgradient's filled kinks); ``origin`` says
    where it came from. The point is ``{"alpha": ...}`` in the solution's convention.
    """
    low, high = _box(model)
    theta = np.nan_to_num(theta)
    done = [*steps, *_clip_step(box_distance(theta, low, high))]
    theta = np.clip(theta, low, high)
    q, X, pen = model.slope, model.data.X, model.penalty_term
    v = -q * theta
    v_low, v_high = np.minimum(-q * low, -q * high), np.maximum(-q * low, -q * high)
    statement = dual_statement(model)
    if pen.l1 == 0 and pen.l2 == 0:  # no penalty: X'v = 0 (and 1'v = 0)
        best: Certificate | None = None
        for tol in ZERO_ENDS:
            found = _unpenalized_point(model, v, v_low, v_high, tol, done)
            if best is None or found.value > best.value:
                best = found
            if best.value >= enough:
                break
        assert best is not None
        return replace(best, origin=origin, dual=statement)
    if model.fit_intercept:
        v = _balance(v, v_low, v_high, done)
        if v is None:
            return Certificate(-math.inf, steps=tuple(done), origin=origin, dual=statement)
    z = row_blocks.transposed_times(X, v)  # X'v: once
    scale = pen.dual_scale(z)
    if scale is not None and scale != 1.0:
        size = float(np.max(np.abs(z), initial=0.0))
        v, z = v * scale, z * scale
        done.append(RepairStep("scale", f"scaled by t = {scale:.6g} into the lasso's ball "
                               "||X'v||_inf <= rho_1", size - pen.l1,
                               max(0.0, size * scale - pen.l1), "||X'v||_inf - rho_1"))  # fmt: skip
    terms = _loss_term_dict(model, v)
    penalty = pen.conjugate(z)
    value = sum(terms.values()) - penalty  # loss_part's value: the conjugate once, not twice
    terms["-P*(X'v)"] = -penalty
    return Certificate(value, _point(model, v), tuple(done), terms, statement, origin)


#: Relative sizes below which a multiplier at a box end that is 0 (the hinge's non-support
#: samples) counts as 0 and stays there when the unpenalized dual projects onto X'v = 0.
ZERO_ENDS = (0.0, 1e-9, 1e-6)


def _unpenalized_point(
    model: EmpiricalRisk,
    v: NDArray,
    v_low: NDArray,
    v_high: NDArray,
    tol: float,
    steps: list[RepairStep],
) -> Certificate:
    r""":math:`D(\theta)` without a penalty at :math:`v` projected onto its equality rows.

    The rows are :math:`[X, \mathbf 1]^\top v = 0`; the entries within ``tol`` of a box end at 0
    are held there.

    A projection moves every free entry a little; one at a box end of 0 (a sample off the hinge)
    would leave its box, and scaling back would then shrink all of :math:`v` to 0.
    """
    done = list(steps)
    scale = tol * max(float(np.max(np.abs(v), initial=0.0)), 1e-300)
    pinned = (model.costs <= 0) | ((np.abs(v) <= scale) & ((v_low == 0) | (v_high == 0)))
    moved = int(np.count_nonzero(pinned & (v != 0)))
    if moved:
        done.append(RepairStep("pin", f"held {moved} multipliers within {tol:g} (relative) of "
                               "a box end at 0 there"))  # fmt: skip
    upper, lower = np.where(pinned, 0.0, v_high), np.where(pinned, 0.0, v_low)
    rows = _rows(model)
    report: list[float] = []
    projected = project_null(rows, v, upper, lower, report)  # positional: tests wrap it
    v, factor = _scale_into(projected, v_low, v_high)
    ratio, largest = equality_residuals(rows, v)
    v_name = "v" if model.losses.is_classification else "theta"  # v = theta for residuals
    names = f"[X, 1]'{v_name} = 0" if model.fit_intercept else f"X'{v_name} = 0"
    if report:
        shrink = report[-1] * (1.0 / factor if factor > 0 else 1.0)
        done.append(RepairStep(
            "project", f"projected onto the equality rows {names} (least squares, "
            f"{len(report) - 1} passes)", report[0],
            largest * shrink if math.isfinite(shrink) else None, "largest row residual",
        ))  # fmt: skip
        if shrink > 1.0:
            done.append(RepairStep("scale", f"scaled by t = {_factor(1.0 / shrink)} back into "
                                   "the box", shrink - 1.0, 0.0,
                                   "largest ratio to the box - 1"))  # fmt: skip
    statement = dual_statement(model)
    if ratio > 1.0:  # a row the projection could not meet: no bound
        done.append(RepairStep("check", f"the rows {names} still fail: no bound", ratio, None,
                               "residual / rounding bound"))  # fmt: skip
        return Certificate(-math.inf, _point(model, v), tuple(done), {}, statement)
    done.append(RepairStep("check", f"the rows {names} hold to rounding at the point used", None,
                           ratio, "residual / rounding bound"))  # fmt: skip
    return Certificate(loss_part(model, v), _point(model, v), tuple(done),
                       _loss_term_dict(model, v), statement)  # fmt: skip


def subgradient_theta(
    model: EmpiricalRisk,
    w: NDArray,
    b: float,
    tol: float = 1e-7,
    a: NDArray | None = None,
    steps: list[RepairStep] | None = None,
) -> NDArray[np.float64]:
    r"""A multiplier :math:`\theta \in c\,\partial\ell(a)` at :math:`(w, b)`, kinks filled.

    :math:`\theta_i = c_i\ell'(a_i)` off the kinks. Samples within ``tol`` (relative to
    :math:`\max(1, \max_i\lvert p_i\rvert)`) of a kink count as on it, and, without a quadratic
    part, at least as many nearest samples as the stationarity has equations; their
    :math:`\theta_i` is chosen in :math:`c_i[\ell'_-(k_i), \ell'_+(k_i)]` by least squares so that
    :math:`X^\top v \in \partial P(w)` and :math:`\mathbf 1^\top v = 0`
    (:func:`~._certificate.fill_subgradient`), with :math:`w_j` within ``tol`` (relative to
    :math:`\max(1, \lVert w\rVert_\infty)`) of 0 counted as 0. Any ``tol`` gives a valid
    multiplier; the best one depends on how far the point is from an optimum. ``steps``, when
    given, receives the fill as a :class:`~optframe.certificate.RepairStep`.
    """
    loss, pen, c, q = model.losses, model.penalty_term, model.costs, model.slope
    a = model.argument(w, b) if a is None else a
    theta = c * loss.derivative(a)
    distance, kink = loss.kink_distance(a)
    if not np.isfinite(distance).any():
        return theta
    target, fixed = pen.subgradient(w, tol * max(1.0, float(np.max(np.abs(w), initial=0.0))))
    equations = int(fixed.sum()) + int(model.fit_intercept)
    linear = loss.is_piecewise_linear and not pen.is_quadratic
    scale = max(1.0, float(np.max(np.abs(model.offset))))
    near = kink_set(distance, equations if linear else 0, tol * scale) & (c > 0)
    if not near.any() or equations == 0:
        return theta
    left, right = loss.subdifferential(np.where(near, kink, a))
    lo, hi = c * left, c * right
    v_lo, v_hi = np.minimum(-q * lo, -q * hi), np.maximum(-q * lo, -q * hi)
    rows = _rows(model, fixed)
    goal = np.append(target[fixed], 0.0) if model.fit_intercept else target[fixed]
    v = fill_subgradient(rows, goal, -q * theta, near, v_lo, v_hi)
    if steps is not None:
        steps.append(RepairStep(
            "fill", f"{int(near.sum())} samples within {tol:g} of a kink: their multipliers "
            "by least squares on the stationarity rows, clipped to their subdifferential",
        ))  # fmt: skip
    return -q * v


#: A candidate of :func:`kernel_certificate` that needs a new pass over the kernel values (its
#: :math:`v^\top K v`) is tried only while the best bound so far leaves a relative gap above
#: this, the default gap tolerance: the solution's own multipliers, when a driver or a solver
#: brought them, already certify it (SMO tightens its rule until its dual, the same value,
#: closes the gap asked for). The L2-loss SVM's subgradient differs from SMO's multipliers on
#: every support vector, so it always needs the pass: ijcnn1, RBF, 13,795 support vectors,
#: 4.3 of the certificate's 8.7 s, for a gap of 9.4e-8 the multipliers gave.
PASS_WORTH = DEFAULT_GAP_TOL


def kernel_dual_bound(model: EmpiricalRisk, solution: Any) -> float:
    r"""The Fenchel dual of a kernel model at the solution's multipliers, repaired.

    The value of :func:`kernel_certificate`.
    """
    return kernel_certificate(model, solution).value


def kernel_certificate(model: EmpiricalRisk, solution: Any) -> Certificate:
    r"""The Fenchel dual of a kernel model at the solution's multipliers, repaired.

    :math:`D(\theta) = \sum_i (\theta_i p_i - c_i\ell^*(\theta_i/c_i)) - v^\top K v/(2\rho_2)`,
    :math:`v = -q\odot\theta`, for :math:`\theta` clipped into :math:`c_i\operatorname{dom}
    \ell^*` and, with an intercept, :math:`\mathbf 1^\top v = 0` by
    :func:`~optframe.duality.balance`. Candidates: the solution's ``alpha`` (whose :math:`Kv`
    the objective already computed), then the loss's subgradient at its :math:`f` (the
    representer theorem's :math:`v` at an optimum), unless the first closes. Each
    :math:`v^\top K v` starts from the solution's own :math:`Kv` (:func:`_quad_from_own`); a
    candidate that needs a new kernel pass is skipped once the bound so far is within
    ``PASS_WORTH`` (relative) of the objective.
    """
    low, high = _box(model)
    q, c, l2 = model.slope, model.costs, model.penalty_term.l2
    f, _ = model._fit(solution)  # cached: K v_solution / l2
    objective = model.objective(solution)
    scale = model.gap_scale(objective, None)
    enough = objective - enough_gap(1e-12) * scale
    worth = objective - PASS_WORTH * scale  # a new kernel pass only below this
    own = None
    candidates = []
    if "alpha" in solution:
        alpha = np.asarray(solution["alpha"], dtype=np.float64).reshape(-1)
        own = -q * (-alpha if model.losses.is_classification else alpha)
        signed = -alpha if model.losses.is_classification else alpha
        candidates.append(("the solution's own multipliers", lambda: signed))
    candidates.append(
        (
            "the loss's subgradient at the solution's f",
            lambda: c * model.losses.derivative(model.loss_argument(solution)),
        )
    )
    v_low, v_high = np.minimum(-q * low, -q * high), np.maximum(-q * low, -q * high)
    statement = dual_statement(model)
    best: Certificate | None = None
    for origin, candidate in candidates:
        theta = np.nan_to_num(candidate())
        steps = _clip_step(box_distance(theta, low, high))
        v = -q * np.clip(theta, low, high)
        if model.fit_intercept:
            v = _balance(v, v_low, v_high, steps)
            if v is None:
                return Certificate(-math.inf, steps=tuple(steps), dual=statement, origin=origin)
        linear, conjugate = loss_terms(model, v)
        value = linear + conjugate
        quad = None
        passes = best is None or best.value < worth  # a new kernel pass is worth it
        if own is not None:  # the solution's alpha: its K v is known
            quad = _quad_from_own(model, v, own, l2 * f, value, passes)
        if quad is None:
            if not passes:
                continue
            quad = float(v @ model.kernel_values(v))
        terms = {"sum_i theta_i p_i": linear, "-sum_i c_i l*(theta_i / c_i)": conjugate,
                 "-v'Kv / (2 rho_2)": -quad / (2.0 * l2)}  # fmt: skip
        found = Certificate(value - quad / (2.0 * l2), _point(model, v), tuple(steps), terms,
                            statement, origin)  # fmt: skip
        if best is None or found.value > best.value:
            best = found
        if best.value >= enough:
            break
    assert best is not None
    return best


def _quad_from_own(
    model: EmpiricalRisk,
    v: NDArray,
    own: NDArray,
    Kown: NDArray,
    value: float,
    passes: bool = True,
) -> float | None:
    r""":math:`v^\top K v`, or an upper bound on it, from the solution's own :math:`K v_0`.

    With :math:`d = v_0 - v`, :math:`v^\top K v = v_0^\top K v_0 - 2 d^\top K v_0 +
    d^\top K d`. When :math:`d` is tiny (the clip and balance of the solution's own
    multipliers), :math:`d^\top K d \le \lVert d\rVert_1^2 \max_i k(x_i, x_i)` keeps the
    dual value built on it a bound without any new kernel value. Otherwise :math:`K d` is
    computed when :math:`d` has fewer non-zeros than :math:`v` (the subgradient candidate
    differs from an SMO solution's multipliers near the margin only: a9a, RBF, 32,561 rows,
    11,580 support vectors). ``None`` when computing :math:`Kv` itself is cheaper, or when
    a kernel pass is needed and ``passes`` is false.
    """
    d = own - v
    if not d.any():
        return float(own @ Kown)
    worst = float(np.abs(d).sum()) ** 2 * float(np.max(model._kernel.diagonal(model.data.X)))
    if 0.5 * worst / model.penalty_term.l2 <= 1e-12 * max(1.0, abs(value)):
        return float(own @ Kown) - 2.0 * float(d @ Kown) + worst
    if not passes or np.count_nonzero(d) >= np.count_nonzero(v):
        return None
    return float(own @ Kown) - 2.0 * float(d @ Kown) + float(d @ model.kernel_values(d))
