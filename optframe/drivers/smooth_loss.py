r"""The smooth losses of :class:`~optframe.capabilities.ElasticNetSmoothLoss`, in whole arrays.

Two kinds, as the structure declares them:

* ``"rehu"``: :math:`\ell(a) = \sum_h \operatorname{rehu}_{\tau_h}(z_h)`, :math:`z_h = s_h a +
  t_h`. With :math:`\kappa_h = \operatorname{clip}(z_h, 0, \tau_h)`,
  :math:`\operatorname{rehu}_\tau(z) = \kappa(z - \kappa/2)` (0 below 0, :math:`z^2/2` up to
  :math:`\tau`, then linear), so :math:`\ell'(a) = \sum_h s_h\kappa_h` and
  :math:`\ell''(a) = \sum_h s_h^2 [0 < z_h < \tau_h]` (the generalized Hessian at the
  breakpoints, as LIBLINEAR's squared hinge takes it);
* ``"logistic"``: :math:`\ell(a) = \log(1 + e^{-a})`, :math:`\ell'(a) = -\sigma(-a)`,
  :math:`\ell''(a) = \sigma(a)\sigma(-a)`.

Nothing here is compiled: the primal Newton driver spends its time in matrix products.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from optframe.capabilities import ElasticNetSmoothLoss


class SmoothLoss:
    r""":math:`\ell`, :math:`\ell'` and :math:`\ell''` of one structure's loss, elementwise."""

    def __init__(self, problem: ElasticNetSmoothLoss) -> None:
        self.logistic = problem.loss == "logistic"
        self.pieces = [
            (float(s), float(t), float(tau))
            for s, t, tau in np.asarray(problem.pieces, dtype=np.float64).reshape(-1, 3)
        ]

    def value(self, a: NDArray[np.float64]) -> NDArray[np.float64]:
        r""":math:`\ell(a)`."""
        if self.logistic:
            return np.logaddexp(0.0, -a)
        out = np.zeros_like(a)
        for s, t, tau in self.pieces:
            z = s * a + t
            kappa = np.clip(z, 0.0, tau)
            out += kappa * (z - 0.5 * kappa)
        return out

    def slopes(
        self, a: NDArray[np.float64]
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """``(ell(a), ell'(a), ell''(a))``."""
        if self.logistic:
            down = expit(-a)
            return np.logaddexp(0.0, -a), -down, down * (1.0 - down)
        value, first, second = np.zeros_like(a), np.zeros_like(a), np.zeros_like(a)
        for s, t, tau in self.pieces:
            z = s * a + t
            kappa = np.clip(z, 0.0, tau)
            value += kappa * (z - 0.5 * kappa)
            first += s * kappa
            second += (s * s) * ((z > 0.0) & (z < tau))
        return value, first, second
