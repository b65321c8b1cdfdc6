r"""Penalties on the coefficients :math:`w` of a linear model: ridge, lasso and the elastic net.

Every penalty here is :math:`P(w) = \rho_1 \lVert w\rVert_1 + \tfrac{\rho_2}{2}\lVert w\rVert^2`
with :math:`\rho_1, \rho_2 \ge 0` (the attributes ``l1`` and ``l2``), so its Fenchel conjugate
:math:`P^*(z) = \sup_w z^\top w - P(w)` has one formula:

.. math::

    P^*(z) = \begin{cases}
    \sum_j \dfrac{\max(\lvert z_j\rvert - \rho_1, 0)^2}{2\rho_2} & \rho_2 > 0,\\[1ex]
    0 \text{ if } \lVert z\rVert_\infty \le \rho_1, \text{ else } \infty & \rho_2 = 0.
    \end{cases}

Without a quadratic part the conjugate is the indicator of the box
:math:`\lVert z\rVert_\infty \le \rho_1`: a dual point must be scaled into it
(:meth:`Penalty.dual_scale`), and with no penalty at all (:math:`\rho_1 = \rho_2 = 0`, written
``penalty=None`` in a model) into :math:`z = 0`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.errors import ModelError
from optframe.validation import check_number

#: Relative slack with which an indicator conjugate accepts a point on its boundary (rounding).
BOUNDARY_SLACK = 1e-9


class Penalty:
    r""":math:`\rho_1 \lVert w\rVert_1 + \tfrac{\rho_2}{2}\lVert w\rVert^2`; use the subclasses."""

    l1: float = 0.0
    l2: float = 0.0

    @property
    def is_quadratic(self) -> bool:
        r"""Whether :math:`\rho_2 > 0` (the model is then a QP)."""
        return self.l2 > 0

    def value(self, w: ArrayLike) -> float:
        r""":math:`P(w)`."""
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        return self.l1 * float(np.abs(w).sum()) + 0.5 * self.l2 * float(w @ w)

    def conjugate(self, z: ArrayLike) -> float:
        r""":math:`P^*(z)` (``inf`` outside its domain, see the module's formula).

        For an indicator (:math:`\rho_2 = 0`) a point at most ``BOUNDARY_SLACK`` (relative) outside
        the box counts as on it, so that a point scaled onto it is not refused for rounding.
        """
        z = np.asarray(z, dtype=np.float64).reshape(-1)
        excess = np.maximum(np.abs(z) - self.l1, 0.0)
        if self.l2 > 0:
            return float(excess @ excess) / (2.0 * self.l2)
        size = float(np.max(np.abs(z))) if z.size else 0.0
        return 0.0 if size <= self.l1 + BOUNDARY_SLACK * max(1.0, size) else math.inf

    def subgradient(self, w: ArrayLike, tol: float = 0.0) -> tuple[NDArray, NDArray[np.bool_]]:
        r"""``(g, fixed)``: :math:`\partial_j P(w) = \{g_j\}` where ``fixed``, else an interval.

        Where :math:`\lvert w_j\rvert > ` ``tol``, :math:`g_j = \rho_1\operatorname{sign}(w_j) +
        \rho_2 w_j`; elsewhere :math:`w_j` counts as 0 and :math:`\partial P` is
        :math:`[-\rho_1, \rho_1]` (fixed at 0 when :math:`\rho_1 = 0`).
        """
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        nonzero = np.abs(w) > tol
        g = np.where(nonzero, self.l1 * np.sign(w) + self.l2 * w, 0.0)
        return g, nonzero | (self.l1 == 0)

    def dual_scale(self, z: ArrayLike) -> float | None:
        r"""The largest :math:`\rho \le 1` with :math:`\rho z` in the domain of :math:`P^*`.

        1 with a quadratic part; :math:`\min(1, \rho_1 / \lVert z\rVert_\infty)` for the lasso;
        ``None`` without any penalty (the domain is :math:`\{0\}`: a dual point must be projected,
        not scaled).
        """
        if self.l2 > 0:
            return 1.0
        if self.l1 == 0:
            return None
        z = np.asarray(z, dtype=np.float64).reshape(-1)
        size = float(np.max(np.abs(z))) if z.size else 0.0
        return 1.0 if size <= self.l1 else self.l1 / size

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Penalty):
            return NotImplemented
        return (self.l1, self.l2) == (other.l1, other.l2)

    def __hash__(self) -> int:
        return hash((self.l1, self.l2))


class L2(Penalty):
    r"""Ridge: :math:`\tfrac12\lVert w\rVert^2`; :math:`P^* = \tfrac12\lVert z\rVert^2`."""

    l2 = 1.0

    def __repr__(self) -> str:
        return "L2()"


class L1(Penalty):
    r"""The lasso penalty :math:`\lVert w\rVert_1`.

    :math:`P^*` is the indicator of :math:`\lVert z\rVert_\infty \le 1`.
    """

    l1 = 1.0

    def __repr__(self) -> str:
        return "L1()"


class ElasticNet(Penalty):
    r""":math:`r\lVert w\rVert_1 + \tfrac{1 - r}{2}\lVert w\rVert^2` with :math:`r` = ``l1_ratio``.

    ``l1_ratio`` must lie in [0, 1] (ModelError); 0 is :class:`L2`, 1 is :class:`L1`.
    """

    def __init__(self, l1_ratio: float = 0.5) -> None:
        ratio = check_number(l1_ratio, "l1_ratio", "ElasticNet", low=0.0, high=1.0)
        assert ratio is not None
        self.l1_ratio = ratio
        self.l1, self.l2 = ratio, 1.0 - ratio

    def __repr__(self) -> str:
        return f"ElasticNet(l1_ratio={self.l1_ratio!r})"


class NoPenalty(Penalty):
    r"""No penalty, :math:`P = 0` (``penalty=None``); :math:`P^*` is the indicator of {0}."""

    def __repr__(self) -> str:
        return "None"


def as_penalty(penalty: Any, owner: str) -> Penalty:
    """``penalty`` as a :class:`Penalty` (``None`` is :class:`NoPenalty`); else ModelError."""
    if penalty is None:
        return NoPenalty()
    if isinstance(penalty, Penalty):
        return penalty
    if isinstance(penalty, type) and issubclass(penalty, Penalty):
        raise ModelError(f"{owner}: pass a penalty instance, {penalty.__name__}(), not the class")
    raise ModelError(
        f"{owner}: penalty must be L2(), L1(), ElasticNet(l1_ratio) or None; got {penalty!r}"
    )


__all__ = ["L1", "L2", "ElasticNet", "NoPenalty", "Penalty", "as_penalty"]
