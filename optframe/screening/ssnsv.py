r"""SSNSV (Ogawa et al. 2013) and ESSNSV (Wang et al., Theorem 19) for the hinge-loss SVM.

Both bound :math:`w^\star(C)` for :math:`C \in [C_k, C_K]` by a half-space and a ball
(notes/dvi.md §2.6). With :math:`w_a = w^\star(C_k)` and :math:`\hat w` a point whose total hinge
loss is at most that of :math:`w^\star(C)` (the solution at the largest C of the path):

* half-space: :math:`\langle w_a, w\rangle \ge \lVert w_a\rVert^2` (the variational inequality of
  :math:`w_a` on the larger feasible set of the constrained form);
* SSNSV ball: :math:`\lVert w\rVert \le \lVert\hat w\rVert`; ESSNSV ball:
  :math:`\lVert w - \hat w/2\rVert \le \lVert\hat w\rVert/2` (inside the SSNSV ball, so ESSNSV
  rejects at least as much).

Sample :math:`i` is in R if :math:`\min \langle w, z_i\rangle > 1` over the region, in L if
:math:`\max < 1`; both come from Lemma 20 (:func:`ball_halfspace_min`).

Widening for an inexact :math:`w_a` (:math:`\lVert w_a - w_a^\star\rVert \le \delta`): every
:math:`w` of the ball has :math:`\lVert w\rVert \le R = \lVert\hat w\rVert`, so
:math:`\langle w_a, w\rangle \ge \langle w_a^\star, w\rangle - \delta R \ge
(\lVert w_a\rVert - \delta)_+^2 - \delta R`, a half-space with the same normal that contains the
exact one. :math:`\hat w` must be feasible for the constrained problem at :math:`C_{k+1}`;
with an inexact :math:`\hat w` that holds up to the gap of its solve, which the path's full-model
certificate checks after each reduced solve.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from optframe.errors import IncompatibleDriver, ModelError
from optframe.screening.base import ScreeningRule, ScreeningStep, Sets
from optframe.screening.dvi import ROUNDOFF, _sets


def ball_halfspace_min(
    vu: NDArray[np.float64],
    v_norm: NDArray[np.float64],
    vo: NDArray[np.float64],
    u_norm: float,
    d_prime: float,
    r: float,
) -> NDArray[np.float64]:
    r"""Lemma 20: :math:`\min v^\top w` s.t. :math:`u^\top w \le d`, :math:`\lVert w-o\rVert \le r`.

    Vectorized over the vectors :math:`v` (given by :math:`v^\top u`, :math:`\lVert v\rVert`,
    :math:`v^\top o`); :math:`d' = d - u^\top o`. The problem must be feasible.

    * if :math:`v^\top u + \lVert v\rVert d'/r \ge 0`: :math:`v^\top o - r\lVert v\rVert`;
    * else: :math:`v^\top o - \lVert v_\perp\rVert \sqrt{r^2 - d'^2/\lVert u\rVert^2}
      + (v^\top u) d'/\lVert u\rVert^2`, :math:`v_\perp` the part of :math:`v` orthogonal to
      :math:`u` (the square root clamped at 0 against round-off).
    """
    ball = vo - r * v_norm
    if u_norm <= 0.0 or r <= 0.0:
        return ball
    u2 = u_norm * u_norm
    perp = np.sqrt(np.maximum(v_norm * v_norm - vu * vu / u2, 0.0))
    chord = np.sqrt(max(r * r - d_prime * d_prime / u2, 0.0))
    cut = vo - perp * chord + vu * d_prime / u2
    return np.where(vu + v_norm * d_prime / r >= 0.0, ball, cut)


@dataclass(frozen=True, eq=False)
class SSNSV(ScreeningRule):
    r"""SSNSV (Ogawa et al.) for the hinge-loss SVM, as in the paper.

    Region: the half-space of :math:`w_a` and the ball :math:`\lVert w\rVert \le
    \lVert\hat w\rVert`.

    The path solves the largest C first (counted as initialization, as the paper's Table 2).
    """

    name: ClassVar[str] = "ssnsv"
    needs_reference: ClassVar[bool] = True
    _half_ball: ClassVar[bool] = False

    def check_dual(self, lower: NDArray[np.float64], upper: NDArray[np.float64]) -> None:
        """The rules are derived for the hinge loss: the dual box must be :math:`[0, u_i]`."""
        if np.any(lower != 0.0):
            raise IncompatibleDriver(
                f"screening rule {self.name!r} is derived for the hinge-loss SVM (dual box "
                "[0, C s_i]); this model's box has a nonzero lower bound (LAD): use DVI()"
            )

    def screen(self, step: ScreeningStep) -> Sets:
        """Return ``(R, L)`` from ``step.w`` (:math:`w_a`) and ``step.reference``."""
        if step.reference is None:
            raise ModelError(f"{self.name} needs the solution at the largest C (reference)")
        w_hat = step.reference
        z_hat = step.Z_reference
        if z_hat is None:
            z_hat = np.asarray(step.Z @ w_hat, dtype=np.float64).reshape(-1)
        w_a = step.w
        scores = step.scores()
        hat_norm = float(np.linalg.norm(w_hat))
        a_norm = float(np.linalg.norm(w_a))
        delta = step.delta
        if not np.isfinite(delta):
            n = scores.shape[0]
            return np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        d_rob = max(a_norm - delta, 0.0) ** 2 - delta * hat_norm
        if self._half_ball:
            o_scale, r = 0.5, 0.5 * hat_norm
        else:
            o_scale, r = 0.0, hat_norm
        vo = o_scale * z_hat
        # u = -w_a, d = -d_rob, o = o_scale * w_hat: d' = d - u'o = -d_rob + o_scale <w_a, w_hat>.
        d_prime = -d_rob + o_scale * float(w_a @ w_hat)
        norms = step.row_norms
        low = ball_halfspace_min(-scores, norms, vo, a_norm, d_prime, r)
        high = -ball_halfspace_min(scores, norms, -vo, a_norm, d_prime, r)
        slack = ROUNDOFF * (np.abs(z_hat) + hat_norm * norms + np.abs(scores) + 1.0)
        return _sets(low - slack, high + slack, step.target)


@dataclass(frozen=True, eq=False)
class ESSNSV(SSNSV):
    r"""ESSNSV (Theorem 19): SSNSV with a ball half as large.

    The ball :math:`\lVert w - \hat w/2\rVert \le \lVert\hat w\rVert/2` lies inside SSNSV's,
    so ESSNSV rejects at least as much.
    """

    name: ClassVar[str] = "essnsv"
    _half_ball: ClassVar[bool] = True
