r"""The iteration behind :class:`~optframe.drivers.admm.ADMM`: prox steps, (w, b) system, sweep.

Splitting (hipad.md sections 1.2 and 4.4), of a model's
:class:`~optframe.capabilities.ElasticNetKnowledge`:

.. math::

    a = e - \bar X w - y b,\; c = w,\; q_k = d_k^\top u_k - \ell_k b + 1,\; t_k = u_k \ge 0,

with multipliers :math:`\gamma_1, \gamma_2, \gamma_{q}, \gamma_{u}` and penalties
:math:`\mu_1, \mu_2, \mu_3, \mu_5` (the paper's :math:`\mu_3 = \mu_4` and :math:`\mu_5 = \mu_6`:
one per kind of constraint, shared by every knowledge set). Everything here is whole-array numpy;
the only Python loop is over knowledge sets (a handful).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from numpy.typing import NDArray

Array = NDArray[np.float64]


class SPDFactor:
    r"""A solver for :math:`K z = r` with :math:`K` symmetric positive definite in exact arithmetic.

    A Cholesky factorization, unless rounding made the assembled :math:`K` indefinite (a column
    of the data scaled by :math:`10^{12}` swamps the :math:`\kappa I` that makes it definite):
    then an eigendecomposition whose eigenvalues are raised to ``floor``, a lower bound of
    :math:`K`'s spectrum known from its assembly.
    """

    def __init__(self, K: Array, floor: float) -> None:
        self.chol: tuple[Array, bool] | None = None
        try:
            self.chol = sla.cho_factor(K, check_finite=False)
        except np.linalg.LinAlgError:
            values, self.vectors = sla.eigh(K, check_finite=False)
            tiny = np.finfo(np.float64).eps * max(float(values[-1]), 0.0)
            self.values = np.maximum(values, max(floor, tiny, np.finfo(np.float64).tiny))

    def solve(self, rhs: Array) -> Array:
        """Return :math:`K^{-1}` ``rhs``."""
        if self.chol is not None:
            return sla.cho_solve(self.chol, rhs, check_finite=False)
        return self.vectors @ ((self.vectors.T @ rhs) / self.values)


def soft_threshold(omega: Array, lam: float | Array) -> Array:
    r"""Soft-thresholding, the prox of :math:`\lambda\lvert\cdot\rvert`.

    :math:`T_\lambda(\omega) = \omega - \mathrm{clip}(\omega, -\lambda, \lambda)`.
    """
    return omega - np.clip(omega, -lam, lam)


def hinge_prox(omega: Array, lam: float | Array) -> Array:
    r"""The prox of the hinge :math:`\lambda(\cdot)_+`.

    :math:`S_\lambda(\omega) = \omega - \mathrm{clip}(\omega, 0, \lambda)`.
    """
    return omega - np.clip(omega, 0.0, lam)


class WBSystem:
    r"""The (w, b) system of every iteration, factorized once per value of the penalties.

    .. math::

        \begin{bmatrix} \kappa_1 I + \mu_1 X^\top X & \mu_1 X^\top e \\
        \mu_1 e^\top X & \mu_1 N + \kappa_2 \end{bmatrix}
        \begin{bmatrix} w \\ b \end{bmatrix} = \begin{bmatrix} r_w \\ r_b \end{bmatrix}

    When :math:`m < N` the (m+1)-square matrix is Cholesky-factorized. Otherwise :math:`b` is
    eliminated, :math:`b = (r_b - \mu_1 e^\top X w)/\delta` with :math:`\delta = \mu_1 N +
    \kappa_2`, leaving :math:`(\kappa_1 I + A^\top A) w = r_w - (\mu_1/\delta) X^\top e\, r_b` with
    :math:`A = M^{1/2} X`, :math:`M = \mu_1 (I - (\mu_1/\delta) e e^\top)`, solved by Woodbury with
    the N-square SPD matrix :math:`\kappa_1 I + M^{1/2} X X^\top M^{1/2}` (:math:`XX^\top` is formed
    once, sparse times sparse for sparse X). Both are exact.
    """

    def __init__(self, X: Any) -> None:
        self.X = X
        self.N, self.m = X.shape
        self.Xte = np.asarray(X.T @ np.ones(self.N), dtype=np.float64).reshape(-1)
        self.primal = self.m + 1 <= self.N
        if self.primal:
            XtX = X.T @ X
            self.gram = XtX.toarray() if sp.issparse(XtX) else np.asarray(XtX)
        else:
            XXt = X @ X.T
            self.gram = XXt.toarray() if sp.issparse(XXt) else np.asarray(XXt)
        self.factorizations = 0

    def factor(self, kappa1: float, kappa2: float, mu1: float) -> None:
        r"""Factorize for :math:`\kappa_1 > 0`, :math:`\kappa_2 \ge 0`, :math:`\mu_1 > 0`."""
        self.kappa1, self.kappa2, self.mu1 = kappa1, kappa2, mu1
        N = self.N
        self.factorizations += 1
        if self.primal:
            m = self.m
            K = np.empty((m + 1, m + 1))
            K[:m, :m] = mu1 * self.gram
            K[:m, :m].flat[:: m + 1] += kappa1
            K[:m, m] = K[m, :m] = mu1 * self.Xte
            K[m, m] = mu1 * N + kappa2
            self.factorization = SPDFactor(K, min(kappa1, kappa2))
            return
        self.delta = mu1 * N + kappa2
        theta = mu1 * N / self.delta
        self.beta = 1.0 - math.sqrt(max(0.0, 1.0 - theta))
        G = self.gram
        col = G.sum(axis=1) / N  # G e / N
        total = col.sum() / N  # e'Ge / N^2
        beta = self.beta
        H = G - beta * (col[:, None] + col[None, :]) + beta * beta * total
        H *= mu1
        H.flat[:: N + 1] += kappa1
        self.factorization = SPDFactor(H, kappa1)

    def _half(self, v: Array) -> Array:
        r""":math:`M^{1/2} v = \sqrt{\mu_1}(v - \beta\, e\, \bar v)`."""
        return math.sqrt(self.mu1) * (v - self.beta * v.mean())

    def solve(self, r_w: Array, r_b: float) -> tuple[Array, float]:
        """Return ``(w, b)`` solving the system for the right-hand side ``(r_w, r_b)``."""
        if self.primal:
            z = self.factorization.solve(np.append(r_w, r_b))
            return z[:-1], float(z[-1])
        r = r_w - (self.mu1 / self.delta) * self.Xte * r_b
        z = self.factorization.solve(self._half(np.asarray(self.X @ r)))
        w = (r - np.asarray(self.X.T @ self._half(z))) / self.kappa1
        b = (r_b - self.mu1 * float(self.Xte @ w)) / self.delta
        return w, b

    def matrix(self) -> Array:
        """The assembled (m+1)-square matrix (for tests)."""
        X = self.X.toarray() if sp.issparse(self.X) else np.asarray(self.X)
        m, N = self.m, self.N
        K = np.zeros((m + 1, m + 1))
        K[:m, :m] = self.mu1 * X.T @ X + self.kappa1 * np.eye(m)
        K[:m, m] = K[m, :m] = self.mu1 * self.Xte
        K[m, m] = self.mu1 * N + self.kappa2
        return K


@dataclass
class KnowledgeBlock:
    """One knowledge set's data inside the iteration: ``B`` (k, m), ``F`` (k, r), ``d``, label."""

    B: Array
    F: Array
    d: Array
    label: float

    def __post_init__(self) -> None:
        self.gram = self.B @ self.B.T + self.F @ self.F.T

    def factor(self, rho: float, mu3: float, mu5: float) -> None:
        r"""Factorize :math:`\rho(BB^\top + FF^\top) + \mu_3 dd^\top + \mu_5 I` (k-square, SPD)."""
        K = rho * self.gram + mu3 * np.outer(self.d, self.d)
        K.flat[:: K.shape[0] + 1] += mu5
        self.factorization = SPDFactor(K, mu5)


class ADMMIteration:
    r"""State and one sweep of ADMM-ENSVM / ADMM-ENK (hipad.md sections 1.4 and 4.5-4.6).

    Parameters
    ----------
    model : ElasticNetKnowledge
        Or any object with its ``data``, ``lam1``, ``lam2``, ``hinge_costs``, ``knowledge``,
        ``rho`` and ``rho_hinge``.
    mu : float
        The initial common penalty (every :math:`\mu_j`).
    order : {"gauss-seidel", "printed"}
        ``"gauss-seidel"`` (converges): the :math:`q` update uses :math:`u^{k+1}`;
        ``"printed"``: Algorithm 0.A.2 literally, :math:`q` from :math:`u^k` (diverges; hipad.md
        section 4.6).
    """

    def __init__(self, model: Any, mu: float, order: str) -> None:
        X = model.data.X
        self.X = sp.csr_array(X) if sp.issparse(X) else np.asarray(X, dtype=np.float64)
        self.y = np.asarray(model.data.y, dtype=np.float64)
        self.cost = np.asarray(model.hinge_costs, dtype=np.float64)
        self.lam1, self.lam2 = float(model.lam1), float(model.lam2)
        self.rho, self.rho_h = float(model.rho), float(model.rho_hinge)
        self.blocks = [
            KnowledgeBlock(np.asarray(k.B), np.asarray(k.B_fixed), np.asarray(k.d), k.label)
            for k in model.knowledge
        ]
        self.order = order
        N, m = self.X.shape
        n_k = len(self.blocks)
        self.system = WBSystem(self.X)
        # Iterates: zeros (hipad.md section 1.5, "Use zeros"); t, gamma_u >= 0 from the start.
        self.w, self.b = np.zeros(m), 0.0
        self.a, self.c = np.zeros(N), np.zeros(m)
        self.g1, self.g2 = np.zeros(N), np.zeros(m)
        self.u = [np.zeros(k.d.size) for k in self.blocks]
        self.t = [np.zeros(k.d.size) for k in self.blocks]
        self.gu = [np.zeros(k.d.size) for k in self.blocks]
        self.q, self.gq = np.zeros(n_k), np.zeros(n_k)
        self.f = np.zeros(N)  # X w + b
        # X̄'γ1 and X̄'(e - a) at the current iterate (one two-column product per sweep).
        self.Xg1, self.Xea = np.zeros(m), np.asarray(self.X.T @ self.y)
        self.set_mu(mu)
        self.iterations = 0

    # ------------------------------------------------------------------------------- penalties
    def set_mu(self, mu: float) -> None:
        """Set every penalty to ``mu`` and refactorize (the multipliers are unscaled: kept)."""
        self.mu = mu
        n_k = len(self.blocks)
        kappa1 = self.lam2 + mu + self.rho * n_k
        self.system.factor(kappa1, mu * n_k, mu)
        for block in self.blocks:
            block.factor(self.rho, mu, mu)

    # ------------------------------------------------------------------------------------ sweep
    def step(self) -> None:
        """One sweep: (w, b), then (u, t) per set, then a, c, q, then the multipliers."""
        mu, y = self.mu, self.y
        r_w = self.Xg1 + mu * self.Xea - self.g2 + mu * self.c
        r_b = float(y @ (self.g1 + mu * (1.0 - self.a)))
        for j, k in enumerate(self.blocks):
            r_w -= self.rho * k.label * (k.B.T @ self.u[j])
            r_b += k.label * (self.gq[j] + mu * (float(k.d @ self.u[j]) + 1.0 - self.q[j]))
        w, b = self.system.solve(r_w, r_b)
        u_old = [u.copy() for u in self.u]
        for j, k in enumerate(self.blocks):
            r_u = (
                -self.rho * k.label * (k.B @ w)
                - k.d * (self.gq[j] + mu * (1.0 - k.label * b - self.q[j]))
                + self.gu[j]
                + mu * self.t[j]
            )
            self.u[j] = k.factorization.solve(r_u)
            self.t[j] = np.maximum(0.0, self.u[j] - self.gu[j] / mu)
        f = np.asarray(self.X @ w) + b
        a_old, c_old = self.a, self.c
        self.a = hinge_prox(1.0 + self.g1 / mu - y * f, self.cost / mu)
        self.c = soft_threshold(w + self.g2 / mu, self.lam1 / mu)
        u_for_q = self.u if self.order == "gauss-seidel" else u_old
        du = np.array([float(k.d @ u) for k, u in zip(self.blocks, u_for_q, strict=True)])
        labels = np.array([k.label for k in self.blocks])
        self.q = hinge_prox(du - labels * b + 1.0 + self.gq / mu, self.rho_h / mu)
        # Multipliers, at the new values.
        self.r1 = 1.0 - y * f - self.a
        self.r2 = w - self.c
        du_new = np.array([float(k.d @ u) for k, u in zip(self.blocks, self.u, strict=True)])
        self.r3 = du_new - labels * b + 1.0 - self.q
        self.r5 = [t - u for t, u in zip(self.t, self.u, strict=True)]
        self.g1 = self.g1 + mu * self.r1
        self.g2 = self.g2 + mu * self.r2
        self.gq = self.gq + mu * self.r3
        self.gu = [g + mu * r for g, r in zip(self.gu, self.r5, strict=True)]
        products = np.asarray(self.X.T @ np.column_stack([y * self.g1, y * (1.0 - self.a)]))
        self.Xg1, self.Xea = products[:, 0], products[:, 1]
        self.w_old, self.w, self.b, self.f = self.w, w, b, f
        self.da, self.dc = self.a - a_old, self.c - c_old
        self.du = [u - uo for u, uo in zip(self.u, u_old, strict=True)]
        self.iterations += 1

    # ------------------------------------------------------------------------------- residuals
    def knowledge_residuals(self, u: list[Array]) -> list[Array]:
        r""":math:`B_k^\top u_k + \ell_k w` per set."""
        return [k.B.T @ uj + k.label * self.w for k, uj in zip(self.blocks, u, strict=True)]

    def residuals(self) -> tuple[float, float]:
        """Relative primal and dual residuals at the current iterate.

        Primal: the stacked constraint residuals over the largest norm of their terms. Dual: the
        Lagrangian's stationarity in (w, b, u) at the new multipliers (the a, c, t, q steps are
        exact, so their stationarity holds) over the largest norm of its terms.
        """
        w = self.w
        primal = [self.r1, self.r2, self.r3, *self.r5]
        p_norm = math.sqrt(sum(float(r @ r) for r in primal))
        p_scale = max(
            float(np.linalg.norm(self.f)),
            float(np.linalg.norm(self.a)),
            float(np.linalg.norm(w)),
            float(np.linalg.norm(self.c)),
            1.0,
        )
        s_w = self.lam2 * w - self.Xg1 + self.g2
        s_b = -float(self.y @ self.g1)
        s_u = []
        for j, (k, r) in enumerate(zip(self.blocks, self.knowledge_residuals(self.u), strict=True)):
            s_w = s_w + self.rho * k.label * r
            s_b -= k.label * self.gq[j]
            s_u.append(
                self.rho * (k.B @ r + k.F @ (k.F.T @ self.u[j])) + k.d * self.gq[j] - self.gu[j]
            )
        d_norm = math.sqrt(float(s_w @ s_w) + s_b * s_b + sum(float(s @ s) for s in s_u))
        d_scale = max(
            float(np.linalg.norm(self.Xg1)),
            float(np.linalg.norm(self.g2)),
            self.lam2 * float(np.linalg.norm(w)),
            float(np.linalg.norm(self.cost)),
        )
        return p_norm / p_scale, d_norm / d_scale

    def objective(self) -> float:
        """The model's objective at :math:`(w, b, t)` from the cached :math:`Xw + b`."""
        w = self.w
        value = float(self.cost @ np.maximum(1.0 - self.y * self.f, 0.0))
        value += self.lam1 * float(np.abs(w).sum()) + 0.5 * self.lam2 * float(w @ w)
        for j, (k, r) in enumerate(zip(self.blocks, self.knowledge_residuals(self.t), strict=True)):
            rf = k.F.T @ self.t[j]
            value += 0.5 * self.rho * (float(r @ r) + float(rf @ rf))
            value += self.rho_h * max(float(k.d @ self.t[j]) - k.label * self.b + 1.0, 0.0)
        return value

    def solution(self) -> dict[str, Array]:
        r"""The solution: ``w`` = :math:`c` (sparse), ``u`` = :math:`t \ge 0`, multipliers."""
        out = {
            "w": self.c.copy(),
            "intercept": np.array([self.b]),
            "alpha": np.clip(self.g1, 0.0, self.cost),
        }
        if self.blocks:
            out["u"] = np.concatenate(self.t)
            out["beta"] = np.clip(self.gq, 0.0, self.rho_h)
        return out
