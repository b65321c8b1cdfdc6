r"""Positive-unlabeled learning with the double hinge loss (du Plessis et al.), as a QP."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import BoxQPDual, Structure
from optframe.data import Dataset
from optframe.duality import fill_subgradient, match_sum
from optframe.errors import DataError, ModelError
from optframe.kernels import Kernel, Linear, as_kernel
from optframe.model import Formulation, Model, ProblemClass, RawSolution, Solution
from optframe.registry import register_model

from ._common import (
    check_dataset,
    check_features,
    check_gram,
    check_number,
    check_unit_weights,
    kernel_product,
    scalar,
    vector,
)

# The smallest lam taken: the objective and the dual's costs scale as 1 / lam (see __post_init__).
LAM_MIN = 1e-12


def double_hinge_negative(f: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""The double hinge loss of a negative label, :math:`\max(0, f, \tfrac12 + \tfrac12 f)`."""
    return np.maximum(np.maximum(0.0, f), 0.5 + 0.5 * f)


def best_bias(F: NDArray[np.float64], c1p: float, c2: float) -> float:
    r"""Exact minimizer over :math:`\beta` of :math:`-c_1 p \beta + c_2 \sum_u \ell(F_u + \beta)`.

    :math:`\ell(f) = \max(0, f, \tfrac12 + \tfrac12 f)` has slope 0, 1/2, 1 with breakpoints at
    :math:`f = \mp 1`, so the function is convex piecewise linear in :math:`\beta` with breakpoints
    :math:`-1 - F_u` and :math:`1 - F_u`, each adding :math:`c_2/2` to the slope, which starts at
    :math:`-c_1 p < 0` and ends at :math:`c_2 n - c_1 p \ge 0`. Returns the midpoint of the flat
    piece when the minimizer is an interval.
    """
    t = np.sort(np.concatenate([-1.0 - F, 1.0 - F]))
    slope = -c1p + 0.5 * c2 * np.arange(1, t.size + 1)  # slope right of breakpoint k
    flat = 1e-12 * max(c1p, 0.5 * c2)
    k = int(np.argmax(slope >= -flat))
    if abs(slope[k]) <= flat and k + 1 < t.size:
        return float(0.5 * (t[k] + t[k + 1]))
    return float(t[k])


@register_model
@dataclass(frozen=True, eq=False)
class PULearning(Model):
    r"""The convex PU risk with the double hinge loss, linear or with a kernel.

    ``data.y`` is +1 for the :math:`p` labeled positives :math:`P` and 0 for the :math:`n`
    unlabeled rows :math:`U`. With the class prior :math:`\pi`, :math:`\lambda > 0`,
    :math:`f(x) = \sum_{i \in P \cup U} \alpha_i k(x_i, x) + \beta` and
    :math:`\ell(z) = \max(0, z, \tfrac12 + \tfrac12 z)` (the double hinge loss of a negative label),
    the regularized risk is

    .. math::

        J(f) = -\frac{\pi}{p} \sum_{i \in P} f(x_i) + \frac1n \sum_{u \in U} \ell(f(x_u))
        + \lambda \lVert f \rVert^2_{\mathcal H}.

    The model's objective is :math:`J / (2\lambda)`, the *primal* (``form="primal"``) QP

    .. math::

        \min_{\alpha, \beta, \xi} \; \tfrac12 \alpha^\top K \alpha - c_1 \sum_{i\in P} (K\alpha)_i
        - c_1 p \beta + c_2 \mathbf 1^\top \xi
        \quad\text{s.t.}\quad \xi \ge 0,\; \xi \ge f_U,\; \xi \ge \tfrac12 + \tfrac12 f_U,

    with :math:`c_1 = \pi / (2\lambda p)`, :math:`c_2 = 1 / (2\lambda n)` and
    :math:`f_U = K_{U\cdot}\alpha + \beta`. For the linear kernel it is written in
    :math:`w = X^\top \alpha`. The *dual* (``form="dual"``), over :math:`\sigma, \delta \in
    \mathbb R^n`, is

    .. math::

        \min_{\sigma, \delta} \; \tfrac12 \sigma^\top K_{UU} \sigma
        - c_1 \mathbf 1_p^\top K_{PU} \sigma - \tfrac12 \mathbf 1^\top \delta
        \quad\text{s.t.}\quad \mathbf 1^\top \sigma = c_1 p,\; \sigma + \delta/2 \le c_2,\;
        \sigma - \delta/2 \ge 0,\; 0 \le \delta \le c_2,

    whose optimum :math:`F^\star` gives the primal optimum
    :math:`P^\star = -F^\star - \tfrac12 c_1^2 \mathbf 1^\top K_{PP} \mathbf 1`. Eliminating
    :math:`\delta = 2\min(\sigma, c_2 - \sigma)` gives the *reduced dual*
    :math:`G(\sigma) = \tfrac12\sigma^\top K_{UU}\sigma - c_1 \mathbf 1^\top K_{PU}\sigma
    - \sum_u \min(\sigma_u, c_2 - \sigma_u)` over :math:`0 \le \sigma \le c_2`,
    :math:`\mathbf 1^\top\sigma = c_1 p`: the :class:`~optframe.capabilities.BoxQPDual` the model
    offers (SMO solves it). From :math:`\sigma`: :math:`\alpha_P = c_1`, :math:`\alpha_U = -\sigma`,
    and :math:`\beta` minimizes the primal with :math:`\alpha` fixed (:func:`best_bias`).

    Parameters
    ----------
    data : Dataset
        Features ``X`` (dense or sparse) and ``y`` with +1 (labeled positive) and 0 (unlabeled).
        Sample weights are not supported: ``data.sample_weight`` must be ``None`` (or all ones);
        the risk weighs each positive by :math:`\pi/p` and each unlabeled row by :math:`1/n`.
        Repeat rows for integer weights.
    prior : float
        The class prior :math:`\pi \in (0, 1)` of the positives among the unlabeled rows.
    lam : float
        The regularization :math:`\lambda \ge 10^{-12}` (``LAM_MIN``): the objective and the
        dual's costs :math:`c_1, c_2` grow as :math:`1/\lambda`; below that they are beyond
        what the solvers' tolerances resolve (and below about :math:`10^{-154}` they overflow).
    kernel : {"linear", "rbf", "poly"} or Kernel
        The kernel :math:`k`.

    Raises
    ------
    DataError
        If ``data`` is not a Dataset, ``y`` holds values other than 0 and 1, there is no
        labeled positive or no unlabeled row, or ``data`` carries sample weights other than all
        ones.
    ModelError
        If ``prior`` is not a number in (0, 1), ``lam`` is not a finite number
        :math:`\ge 10^{-12}`, or the kernel is unknown (a kernel parameter
        <= 0 raises when the kernel object is made).

    Notes
    -----
    Layer: ``"cvxpy"``. Forms: ``"dual"`` (default) and ``"primal"``. The kernel forms build the
    dense Gram matrix (8 N^2 bytes, refused beyond 2 GiB); the linear forms never do.

    Solution names: ``"alpha"`` (shape (N,), in the order of ``data``), ``"intercept"`` (shape
    (1,)), ``"sigma"`` (shape (n,), the unlabeled rows in data order) and, for the linear kernel,
    ``"w"`` (shape (m,)).

    References
    ----------
    M. C. du Plessis, G. Niu, M. Sugiyama, "Convex formulation for learning from positive and
    unlabeled data", ICML 2015. E. Sansone, F. G. B. De Natale, Z.-H. Zhou, "Efficient training for
    positive unlabeled learning", IEEE TPAMI 2019; see ``notes/usmo.md`` for the corrections.

    Examples
    --------
    >>> import numpy as np
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import PULearning
    >>> X = np.array([[2.0], [2.5], [2.2], [-1.0], [-2.0], [1.8], [-1.5]])
    >>> model = PULearning(Dataset(X=X, y=[1, 1, 0, 0, 0, 0, 0]), prior=0.4, lam=0.1)
    >>> result = of.solve(model)
    >>> model.predict(result.solution, [[2.0], [-2.0]])
    array([ 1., -1.])
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("cvxpy",)
    forms: ClassVar[tuple[str, ...]] = ("dual", "primal")
    is_classifier: ClassVar[bool] = True
    structures: ClassVar[tuple[type[Structure], ...]] = (BoxQPDual,)

    data: Dataset
    prior: float = 0.5
    lam: float = 1e-2
    kernel: Kernel | str = "linear"
    _P: NDArray[np.intp] = field(init=False, repr=False)
    _U: NDArray[np.intp] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        y = self.data.y
        assert y is not None
        bad = np.unique(y[(y != 1.0) & (y != 0.0)])
        if bad.size:
            raise DataError(
                f"{self.name} needs y = +1 (labeled positive) or 0 (unlabeled); y also holds "
                f"{', '.join(f'{v:g}' for v in bad[:6])}."
            )
        P, U = np.flatnonzero(y == 1.0), np.flatnonzero(y == 0.0)
        if P.size == 0:
            raise DataError(f"{self.name} needs at least one labeled positive (y = 1); got none.")
        if U.size == 0:
            raise DataError(f"{self.name} needs at least one unlabeled row (y = 0); got none.")
        prior = check_number(self.prior, "prior", self.name, low=0.0, strict=True)
        if not prior < 1.0:
            raise ModelError(f"{self.name}: prior must lie in (0, 1); got {self.prior!r}")
        lam = check_number(self.lam, "lam", self.name, low=0.0, strict=True)
        if lam < LAM_MIN:
            raise ModelError(
                f"{self.name}: lam must be >= {LAM_MIN:g}; got {self.lam!r}. The objective "
                "J / (2 lam) and the dual's box c2 = 1 / (2 lam n) grow as 1 / lam: below "
                f"{LAM_MIN:g} they are beyond what the solvers' tolerances resolve, and below "
                "about 1e-154 they overflow. For an almost unregularized fit take lam in "
                f"[{LAM_MIN:g}, 1e-6]."
            )
        object.__setattr__(self, "prior", prior)
        object.__setattr__(self, "lam", lam)
        check_unit_weights(
            self.data,
            self.name,
            "Its risk weighs every positive by prior / p and every unlabeled row by 1 / n. "
            "Repeat rows for integer weights.",
        )
        object.__setattr__(self, "kernel", as_kernel(self.kernel))
        object.__setattr__(self, "_P", P)
        object.__setattr__(self, "_U", U)

    @classmethod
    def examples(cls) -> tuple[PULearning, ...]:
        """Linear and RBF, a third of the positives labeled."""
        from optframe.data import make_classification_svm
        from optframe.kernels import RBF

        data = make_classification_svm(45, 3, separation=2.0, random_state=0)
        labeled = (data.y > 0) & (np.arange(45) % 3 == 0)
        pu = Dataset(X=data.X, y=labeled)
        return cls(pu, prior=0.5, lam=0.1), cls(pu, prior=0.5, lam=0.1, kernel=RBF(gamma=0.5))

    # ----------------------------------------------------------------------------------- helpers
    @property
    def is_linear(self) -> bool:
        """Whether the kernel is linear (the solution then has ``"w"``)."""
        return isinstance(self.kernel, Linear)

    @property
    def c1(self) -> float:
        r""":math:`c_1 = \pi / (2 \lambda p)`."""
        return self.prior / (2.0 * self.lam * self._P.size)

    @property
    def c2(self) -> float:
        r""":math:`c_2 = 1 / (2 \lambda n)`."""
        return 1.0 / (2.0 * self.lam * self._U.size)

    @property
    def positives(self) -> NDArray[np.intp]:
        """Row indices of the labeled positives."""
        return self._P

    @property
    def unlabeled(self) -> NDArray[np.intp]:
        """Row indices of the unlabeled rows."""
        return self._U

    def _rows(self, index: NDArray[np.intp]) -> Any:
        return self.data.X[index]

    def _sum_kpp(self) -> float:
        r""":math:`\mathbf 1^\top K_{PP} \mathbf 1` (in blocks; :math:`\lVert\sum_P x\rVert^2`)."""
        cached = self.__dict__.get("_kpp_cache")
        if cached is None:
            cached = self._compute_sum_kpp()
            object.__setattr__(self, "_kpp_cache", cached)
        return cached

    def _compute_sum_kpp(self) -> float:
        XP = self._rows(self._P)
        if self.is_linear:
            s = np.asarray(XP.sum(axis=0)).ravel()
            return float(s @ s)
        return float(kernel_product(self.kernel, XP, XP, np.ones(self._P.size)).sum())

    def _kpu_sum(self) -> NDArray[np.float64]:
        r""":math:`(K_{UP} \mathbf 1)_u` for every unlabeled row (computed once per model)."""
        cached = self.__dict__.get("_kpu_cache")
        if cached is None:
            cached = self._compute_kpu_sum()
            object.__setattr__(self, "_kpu_cache", cached)
        return cached

    def _compute_kpu_sum(self) -> NDArray[np.float64]:
        XP, XU = self._rows(self._P), self._rows(self._U)
        if self.is_linear:
            return np.asarray(XU @ np.asarray(XP.sum(axis=0)).ravel()).ravel()
        return kernel_product(self.kernel, XU, XP, np.ones(self._P.size))

    def _alpha(self, sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        alpha = np.empty(self.data.n_samples)
        alpha[self._P] = self.c1
        alpha[self._U] = -sigma
        return alpha

    def _f_minus_bias(self, alpha: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
        """``(K alpha, alpha' K alpha / 2)`` at the training rows, kernel rows in blocks."""
        X = self.data.X
        if self.is_linear:
            w = np.asarray(X.T @ alpha).ravel()
            return np.asarray(X @ w).ravel(), 0.5 * float(w @ w)
        g = kernel_product(self.kernel, X, X, alpha)
        return g, 0.5 * float(alpha @ g)

    def solution_from_sigma(
        self, sigma: ArrayLike, F: NDArray[np.float64] | None = None
    ) -> dict[str, NDArray[np.float64]]:
        r"""The model's solution from a dual point :math:`\sigma` (shape (n,)).

        ``F`` (optional) holds :math:`F_u = (K\alpha)_u` at the unlabeled rows when the caller
        has it; otherwise it is computed. The bias is the exact minimizer of the primal given
        :math:`\alpha` (:func:`best_bias`).
        """
        sigma = np.clip(np.asarray(sigma, dtype=np.float64).reshape(-1), 0.0, self.c2)
        alpha = self._alpha(sigma)
        solution: dict[str, NDArray[np.float64]] = {"alpha": alpha, "sigma": sigma}
        if self.is_linear:
            w = np.asarray(self.data.X.T @ alpha).ravel()
            solution["w"] = w
            if F is None:
                F = np.asarray(self._rows(self._U) @ w).ravel()
        elif F is None:
            F = kernel_product(self.kernel, self._rows(self._U), self.data.X, alpha)
        beta = best_bias(np.asarray(F, dtype=np.float64), self.c1 * self._P.size, self.c2)
        solution["intercept"] = np.array([beta])
        return solution

    # ------------------------------------------------------------------------------- evaluation
    def objective(self, solution: Solution) -> float:
        r"""The primal objective :math:`J / (2\lambda)` at ``solution``.

        .. math:: \tfrac12\alpha^\top K\alpha - c_1 \sum_{i\in P} f(x_i)
                  + c_2 \sum_{u \in U} \ell(f(x_u))

        From ``"w"`` when present (linear kernel), else from ``"alpha"``; ``"intercept"`` defaults
        to 0. Kernel rows are computed in blocks.
        """
        beta = scalar(solution, "intercept")
        if "w" in solution:
            w = vector(solution, "w", self.name)
            g, reg = np.asarray(self.data.X @ w).ravel(), 0.5 * float(w @ w)
        else:
            g, reg = self._f_minus_bias(vector(solution, "alpha", self.name))
        f = g + beta
        return (
            reg
            - self.c1 * float(f[self._P].sum())
            + self.c2 * float(double_hinge_negative(f[self._U]).sum())
        )

    def risk(self, solution: Solution) -> float:
        r"""The regularized PU risk :math:`J = 2\lambda \cdot` :meth:`objective`."""
        return 2.0 * self.lam * self.objective(solution)

    def dual_objective(self, sigma: ArrayLike) -> float:
        r"""A lower bound on the optimum from a feasible :math:`\sigma`.

        It is :math:`-G(\sigma) - \tfrac12 c_1^2 \mathbf 1^\top K_{PP} \mathbf 1`, with
        :math:`G` the reduced dual.

        Valid (weak duality) when :math:`0 \le \sigma \le c_2` and
        :math:`\mathbf 1^\top\sigma = c_1 p` (see :meth:`violation`).
        """
        sigma = np.asarray(sigma, dtype=np.float64).reshape(-1)
        XU = self._rows(self._U)
        if self.is_linear:
            v = np.asarray(XU.T @ sigma).ravel()
            quad = 0.5 * float(v @ v)
        else:
            support = np.flatnonzero(sigma)  # the kernel among the support only
            rows, weights = XU[support], sigma[support]
            quad = 0.5 * float(weights @ kernel_product(self.kernel, rows, rows, weights))
        G = (
            quad
            - self.c1 * float(self._kpu_sum() @ sigma)
            - float(np.minimum(sigma, self.c2 - sigma).sum())
        )
        return -G - 0.5 * self.c1**2 * self._sum_kpp()

    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: :meth:`dual_objective` at a feasible :math:`\sigma`.

        :math:`\sigma` is the solution's ``"sigma"`` (or :math:`-\alpha_U`) when present, else
        the double hinge's subgradient at :math:`f(x_u)`: :math:`c_2\,\ell'(f_u) \in
        \{0, c_2/2, c_2\}`, the samples on a kink (:math:`f_u = \pm 1`) filled by least
        squares so that :math:`w = c_1\sum_P x_p - \sum_U \sigma_u x_u`. It is clipped to
        :math:`[0, c_2]` and moved towards a bound of the box until
        :math:`\mathbf 1^\top\sigma = c_1 p`.
        """
        upper = np.full(self._U.size, self.c2)
        if "sigma" in solution:
            sigma = vector(solution, "sigma", self.name)
        elif "alpha" in solution:
            sigma = -vector(solution, "alpha", self.name)[self._U]
        else:
            w = vector(solution, "w", self.name)
            f = np.asarray(self._rows(self._U) @ w).ravel() + scalar(solution, "intercept")
            sigma = self.c2 * np.where(f < -1.0, 0.0, np.where(f > 1.0, 1.0, 0.5))
            kink = np.minimum(np.abs(f + 1.0), np.abs(f - 1.0)) <= 1e-7
            low = np.where(f > 0, 0.5 * self.c2, 0.0)
            high = np.where(f > 0, self.c2, 0.5 * self.c2)
            positives = self.c1 * np.asarray(self._rows(self._P).sum(axis=0)).ravel()
            sigma = fill_subgradient(self._rows(self._U), positives - w, sigma, kink, low, high)
        sigma = match_sum(sigma, self.c1 * self._P.size, np.zeros_like(upper), upper)
        return self.dual_objective(sigma)

    def violation(self, solution: Solution) -> float:
        r"""Dual feasibility of ``solution["sigma"]``, relative to :math:`\max(1, c_1 p)`.

        The box :math:`0 \le \sigma \le c_2` and :math:`\mathbf 1^\top\sigma = c_1 p`; 0 without
        ``"sigma"``.
        """
        if "sigma" not in solution:
            return 0.0
        sigma = vector(solution, "sigma", self.name)
        c1p = self.c1 * self._P.size
        box = max(float(np.max(-sigma)), float(np.max(sigma - self.c2)), 0.0)
        return max(box, abs(float(sigma.sum()) - c1p)) / max(1.0, c1p)

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r""":math:`f(x) = \sum_i \alpha_i k(x_i, x) + \beta` (or :math:`w^\top x + \beta`)."""
        X = check_features(X, self.data.n_features, self.name)
        beta = scalar(solution, "intercept")
        if "w" in solution:
            return np.asarray(X @ vector(solution, "w", self.name)).ravel() + beta
        alpha = vector(solution, "alpha", self.name)
        support = np.flatnonzero(alpha != 0)
        return kernel_product(self.kernel, X, self.data.X[support], alpha[support]) + beta

    # ------------------------------------------------------------------------ structures
    def _structure(self, kind: type[Structure]) -> BoxQPDual:
        r"""The reduced dual as a :class:`~optframe.capabilities.BoxQPDual`.

        :math:`\min_\sigma \tfrac12\sigma^\top K_{UU}\sigma + c^\top\sigma + \sum_u h(\sigma_u)`
        with :math:`c = -c_1 K_{UP}\mathbf 1`, :math:`h(s) = -\min(s, c_2 - s)` (slopes -1 and +1
        around the kink :math:`c_2/2`), :math:`0 \le \sigma \le c_2`,
        :math:`\mathbf 1^\top\sigma = c_1 p`; start :math:`\sigma = \pi c_2` (feasible).
        """
        n, c2 = self._U.size, self.c2
        return BoxQPDual(
            X=self._rows(self._U),
            kernel=self.kernel,
            sign=np.ones(n),
            linear=-self.c1 * self._kpu_sum(),
            upper=np.full(n, c2),
            rhs=self.c1 * self._P.size,
            kink=np.full(n, 0.5 * c2),
            slope_below=np.full(n, -1.0),
            slope_above=np.full(n, 1.0),
            recover=self._from_dual_gradient,
            bound_offset=-0.5 * self.c1**2 * self._sum_kpp(),
            start=np.full(n, self.prior * c2),
            objective=self._objective_from_gradient,
        )

    def _from_dual_gradient(
        self, x: NDArray[np.float64], gradient: NDArray[np.float64]
    ) -> dict[str, NDArray[np.float64]]:
        r"""The solution at the dual point; :math:`F_u = -\nabla_u` (the smooth gradient)."""
        return self.solution_from_sigma(x, F=-np.asarray(gradient, dtype=np.float64))

    def _objective_from_gradient(
        self, x: NDArray[np.float64], gradient: NDArray[np.float64]
    ) -> float:
        r"""The primal objective at the dual point in O(n), from :math:`\nabla = K_{UU}\sigma + c`.

        With :math:`c = -c_1 K_{UP}\mathbf 1`, :math:`S = \mathbf 1^\top K_{PP}\mathbf 1`:
        :math:`\tfrac12\alpha^\top K\alpha = \tfrac12 c_1^2 S + c^\top\sigma
        + \tfrac12\sigma^\top(\nabla - c)` and
        :math:`\sum_P f = c_1 S + c^\top\sigma / c_1 + p\beta`.
        """
        sigma = np.asarray(x, dtype=np.float64)
        G = np.asarray(gradient, dtype=np.float64)
        c = -self.c1 * self._kpu_sum()
        S, p = self._sum_kpp(), self._P.size
        F = -G
        beta = best_bias(F, self.c1 * p, self.c2)
        reg = 0.5 * self.c1**2 * S + float(c @ sigma) + 0.5 * float(sigma @ (G - c))
        sum_fp = self.c1 * S + float(c @ sigma) / self.c1 + p * beta
        loss = float(double_hinge_negative(F + beta).sum())
        return reg - self.c1 * sum_fp + self.c2 * loss

    # ------------------------------------------------------------------------------------ layers
    def _recover_dual(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        return self.solution_from_sigma(np.asarray(raw.primal["sigma"]).reshape(-1))

    def _recover_primal(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        beta = float(np.ravel(raw.primal["intercept"])[0])
        if "w" in raw.primal:
            solution: dict[str, NDArray[np.float64]] = {"w": np.ravel(raw.primal["w"])}
        else:
            solution = {"alpha": np.ravel(raw.primal["alpha"]).astype(np.float64)}
        if "lin" in raw.dual and "half" in raw.dual:
            # sigma = b + c/2 from the multipliers of xi >= f_U and xi >= 1/2 + f_U/2.
            sigma = np.ravel(raw.dual["lin"]) + 0.5 * np.ravel(raw.dual["half"])
            solution["sigma"] = np.clip(sigma, 0.0, self.c2)
            if "w" in solution:
                solution["alpha"] = self._alpha(solution["sigma"])
        solution["intercept"] = np.array([beta])
        return solution

    def _build_cvxpy(self, form: str) -> Formulation:
        import cvxpy as cp

        c1, c2, p, n = self.c1, self.c2, self._P.size, self._U.size
        XU = self._rows(self._U)
        offset = -0.5 * c1**2 * self._sum_kpp()
        if form == "dual":
            sigma = cp.Variable(n, name="sigma")
            delta = cp.Variable(n, name="delta")
            if self.is_linear:
                quad = cp.sum_squares(XU.T @ sigma) / 2
            else:
                check_gram(
                    n, f"the Gram matrix of {self.name}'s kernel forms", "Use the SMO driver."
                )
                K = self.kernel.matrix(XU)
                quad = cp.quad_form(sigma, cp.psd_wrap(0.5 * (K + K.T))) / 2
            equality = cp.sum(sigma) == c1 * p
            constraints = [
                equality,
                sigma + delta / 2 <= c2,
                sigma - delta / 2 >= 0,
                delta >= 0,
                delta <= c2,
            ]
            objective = quad - c1 * (self._kpu_sum() @ sigma) - cp.sum(delta) / 2
            return Formulation(
                layer="cvxpy",
                problem=cp.Problem(cp.Minimize(objective), constraints),
                problem_class=ProblemClass.QP,
                variables={"sigma": sigma, "delta": delta},
                constraints={"bias": equality},
                recover=self._recover_dual,
                objective_scale=-1.0,
                objective_offset=offset,
                form="dual",
            )
        beta = cp.Variable(name="intercept")
        xi = cp.Variable(n, name="xi")
        XP = self._rows(self._P)
        if self.is_linear:
            w = cp.Variable(self.data.n_features, name="w")
            reg = cp.sum_squares(w) / 2
            fP = XP @ w + beta
            fU = XU @ w + beta
            variables: dict[str, Any] = {"w": w, "intercept": beta, "xi": xi}
        else:
            N = self.data.n_samples
            check_gram(N, f"the Gram matrix of {self.name}'s kernel forms", "Use the SMO driver.")
            K = self.kernel.matrix(self.data.X)
            K = 0.5 * (K + K.T)
            alpha = cp.Variable(N, name="alpha")
            reg = cp.quad_form(alpha, cp.psd_wrap(K)) / 2
            fP = K[self._P] @ alpha + beta
            fU = K[self._U] @ alpha + beta
            variables = {"alpha": alpha, "intercept": beta, "xi": xi}
        lin = xi - fU >= 0
        half = xi - fU / 2 >= 0.5
        objective = reg - c1 * cp.sum(fP) + c2 * cp.sum(xi)
        return Formulation(
            layer="cvxpy",
            problem=cp.Problem(cp.Minimize(objective), [xi >= 0, lin, half]),
            problem_class=ProblemClass.QP,
            variables=variables,
            constraints={"lin": lin, "half": half},
            recover=self._recover_primal,
            form="primal",
        )
