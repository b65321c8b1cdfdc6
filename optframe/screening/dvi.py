r"""DVI_s: the sequential dual-variational-inequality rule (Wang, Wonka, Ye; notes/dvi.md §2).

For :math:`\rho = C_{k+1}/C_k > 1` the solution at :math:`C_{k+1}` lies in the ball whose diameter
is the segment from :math:`w^\star(C_k)` to :math:`\rho\, w^\star(C_k)` (Theorem 6, primal form).
Minimizing and maximizing :math:`\langle w, z_i\rangle` over that ball gives, per sample,

.. math::

    \tfrac{1+\rho}2 \langle w_k, z_i\rangle \mp \tfrac{\rho-1}2 \lVert w_k\rVert \lVert z_i\rVert
    \mp \rho\,\delta\,\lVert z_i\rVert,

compared with :math:`\bar y_i`: a lower bound above it proves :math:`i \in R`
(:math:`\alpha_i = l_i`), an upper bound below it proves :math:`i \in L` (:math:`\alpha_i = u_i`).
The last term is the widening for an inexact :math:`w_k`: :math:`\lVert w_k - w^\star(C_k)\rVert
\le \delta = \sqrt{2\,\mathrm{gap}}` (notes/dvi.md §7.1), so the rule stays safe at any tolerance.
SVM and LAD share this code through :class:`~optframe.capabilities.LinearBoxDual`
(SVM: :math:`z_i = y_i x_i`, :math:`\bar y_i = 1`; LAD: :math:`z_i = x_i`, :math:`\bar y_i = y_i`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from numpy.typing import NDArray

from optframe.errors import ModelError
from optframe.screening.base import ScreeningRule, ScreeningStep, Sets

# Relative slack against round-off in <w, z_i> (the tests are strict inequalities).
ROUNDOFF = 1e-10
# DVI_s* forms the l x l Gram matrix: refuse beyond this many samples.
GRAM_LIMIT = 5000


def dvi_bounds(
    scores: NDArray[np.float64],
    w_norm: float,
    row_norms: NDArray[np.float64],
    c_prev: float,
    c_next: float,
    delta: float = 0.0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    r"""Lower and upper bounds on :math:`\langle w^\star(C_{k+1}), z_i\rangle` (Corollary 9).

    ``scores`` are :math:`\langle w_k, z_i\rangle`; ``delta`` bounds
    :math:`\lVert w_k - w^\star(C_k)\rVert`. Any :math:`C_{k+1}, C_k > 0` work (the radius uses
    :math:`|\rho - 1|`; decreasing steps are an extension of the paper, notes/dvi.md §2.1).
    """
    rho = c_next / c_prev
    center = 0.5 * (1.0 + rho) * scores
    radius = (0.5 * abs(rho - 1.0) * w_norm + rho * delta) * row_norms
    slack = ROUNDOFF * (np.abs(center) + radius + 1.0)
    return center - radius - slack, center + radius + slack


def _sets(
    lower: NDArray[np.float64], upper: NDArray[np.float64], target: NDArray[np.float64]
) -> Sets:
    slack = ROUNDOFF * np.abs(target)
    return lower > target + slack, upper < target - slack


def dvi_gram(
    G: NDArray[np.float64],
    alpha: NDArray[np.float64],
    target: NDArray[np.float64],
    c_prev: float,
    c_next: float,
) -> Sets:
    r"""DVI_s* (Corollary 8): the same rule from :math:`\alpha_k` and :math:`G = ZZ^\top`.

    :math:`\langle w_k, z_i\rangle = (G\alpha_k)_i`, :math:`\lVert w_k\rVert^2 =
    \alpha_k^\top G\alpha_k`, :math:`\lVert z_i\rVert^2 = G_{ii}`. O(l^2) memory: a test oracle
    for small problems only (at most 5000 samples).
    """
    G = np.asarray(G, dtype=np.float64)
    if G.shape[0] > GRAM_LIMIT:
        raise ModelError(f"dvi_gram forms an l x l matrix; l = {G.shape[0]} > {GRAM_LIMIT}")
    Ga = G @ alpha
    w_norm = float(np.sqrt(max(float(alpha @ Ga), 0.0)))
    row_norms = np.sqrt(np.maximum(np.diag(G), 0.0))
    return _sets(*dvi_bounds(Ga, w_norm, row_norms, c_prev, c_next), target)


@dataclass(frozen=True, eq=False)
class DVI(ScreeningRule):
    r"""DVI_s, the sequential DVI rule for the SVM and the regularized LAD, without intercept.

    Needs only the solution at the previous value of C: one product :math:`Zw_k` per step
    (O(nnz)), whole-array NumPy. See the module docstring for the rule and its widening.
    """

    name: ClassVar[str] = "dvi"

    def screen(self, step: ScreeningStep) -> Sets:
        """Return ``(R, L)`` for the step from ``step.c_prev`` to ``step.c_next``."""
        w_norm = float(np.linalg.norm(step.w))
        bounds = dvi_bounds(
            step.scores(), w_norm, step.row_norms, step.c_prev, step.c_next, step.delta
        )
        return _sets(*bounds, step.target)
