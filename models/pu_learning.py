r"""Positive-unlabeled learning with the double hinge loss (du Plessis et al.), as a QP."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import BoxQPDual, Structure
from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.kernels import Kernel, as_kernel
from optframe.losses import DoubleHinge, LinearLoss, PLQLoss
from optframe.model import Formulation, ProblemClass, Solution
from optframe.penalties import L2, Penalty
from optframe.registry import register_model

from ._common import check_dataset, check_number, check_unit_weights, vector
from ._risk_dual import loss_part
from ._risk_structures import solution_from_alpha
from .empirical_risk import EmpiricalRisk

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
    piece when the minimizer is an interval. (The model itself places its bias with
    EmpiricalRisk's exact intercept, the same minimizer.)
    """
    t = np.sort(np.concatenate([-1.0 - F, 1.0 - F]))
    slope = -c1p + 0.5 * c2 * np.arange(1, t.size + 1)  # slope right of breakpoint k
    flat = 1e-12 * max(c1p, 0.5 * c2)
    k = int(np.argmax(slope >= -flat))
    if abs(slope[k]) <= flat and k + 1 < t.size:
        return float(0.5 * (t[k] + t[k + 1]))
    return float(t[k])


@register_model
@dataclass(frozen=True, eq=False, init=False)
class PULearning(EmpiricalRisk):
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

    *A declaration on* :class:`~optframe.models.EmpiricalRisk`. In the margin form
    :math:`a_i = y_i f(x_i)` with the unlabeled rows taken as negatives (:math:`y_u = -1`),

    .. math::

        \frac{J}{2\lambda} = \tfrac12\lVert f\rVert^2_{\mathcal H}
        + \sum_{i \in P} c_1\,(-a_i) + \sum_{u \in U} c_2\,\ell_{\mathrm{DH}}(a_u),

    a loss per label, ``{+1: LinearLoss(-1.0), -1: DoubleHinge()}``, with the costs
    :math:`c_1` on :math:`P` and :math:`c_2` on :math:`U` and the ridge penalty. The linear
    loss's conjugate lives on the point :math:`\{-1\}`, which fixes the positives' multipliers at
    :math:`\alpha_P = c_1`; EmpiricalRisk eliminates them from its box QP, which is then the
    reduced dual above. Objective, certificate, layers and the SMO structure are
    EmpiricalRisk's; what is PU's own is the prior, :math:`\lambda`, the 0/1 labels and the
    solution's names.

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
    Layer: ``"cvxpy"``. Forms: ``"dual"`` (default; EmpiricalRisk's dual over the double hinge's
    two pieces :math:`\Lambda_1, \Lambda_2 \in [0, c_2]^n`, read as :math:`\sigma =
    (\Lambda_1 + \Lambda_2)/2` and :math:`\delta = \Lambda_1 - \Lambda_2`) and ``"primal"``
    (over :math:`w`, or over :math:`\alpha` with a kernel). The kernel forms build the dense Gram
    matrix (8 N^2 bytes, refused beyond 2 GiB); the linear forms never do.

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
    kernel_primal: ClassVar[bool] = True

    data: Dataset
    prior: float = 0.5
    lam: float = 1e-2
    kernel: Kernel | str = "linear"
    loss: PLQLoss | Any = field(default=None, init=False, repr=False)
    penalty: Penalty | None = field(default_factory=L2, init=False, repr=False)
    C: float = field(default=1.0, init=False, repr=False)
    fit_intercept: bool = field(default=True, init=False, repr=False)
    sample_weight: ArrayLike | None = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)
    _P: NDArray[np.intp] = field(init=False, repr=False)
    _U: NDArray[np.intp] = field(init=False, repr=False)
    _labels: NDArray[np.float64] = field(init=False, repr=False)

    def __init__(
        self, data: Dataset, prior: float = 0.5, lam: float = 1e-2, kernel: Kernel | str = "linear"
    ) -> None:
        declared = {"loss": {1: LinearLoss(-1.0), -1: DoubleHinge()}, "penalty": L2(), "C": 1.0,
                    "fit_intercept": True, "sample_weight": None}  # fmt: skip
        values = {"data": data, "prior": prior, "lam": lam, "kernel": kernel} | declared
        for name, value in values.items():
            object.__setattr__(self, name, value)
        self.__post_init__()

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
        prior = check_number(
            self.prior, "prior", self.name, low=0.0, strict=True, high=1.0, high_strict=True
        )
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
        object.__setattr__(self, "_labels", np.where(y == 1.0, 1.0, -1.0))
        super().__post_init__()

    # ------------------------------------------------------------------ the declaration's parts
    @property
    def _y(self) -> NDArray[np.float64]:
        """The margins' labels: +1 on the labeled positives, -1 on the unlabeled rows."""
        return self._labels

    def _weights(self) -> NDArray[np.float64]:
        """The costs: :math:`c_1` on the labeled positives, :math:`c_2` on the unlabeled rows."""
        return np.where(self._labels > 0, self.c1, self.c2)

    @property
    def default_form(self) -> str:
        """``"dual"``: its box QP is the reduced dual, and the kernel forms need it."""
        return "dual"

    @classmethod
    def examples(cls) -> tuple[PULearning, ...]:
        """Linear and RBF, a third of the positives labeled."""
        from optframe.data import make_classification_svm
        from optframe.kernels import RBF

        data = make_classification_svm(45, 3, separation=2.0, random_state=0)
        labeled = (data.y > 0) & (np.arange(45) % 3 == 0)
        pu = Dataset(X=data.X, y=labeled)
        return cls(pu, prior=0.5, lam=0.1), cls(pu, prior=0.5, lam=0.1, kernel=RBF(gamma=0.5))

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

    # -------------------------------------------------------------------------------- names
    def _to_internal(self, solution: Solution) -> dict[str, Any]:
        r"""EmpiricalRisk's names: its ``alpha`` is :math:`y \odot \alpha` (:math:`\sigma` on U)."""
        inside = {key: value for key, value in solution.items() if key not in ("alpha", "sigma")}
        if "alpha" in solution:
            inside["alpha"] = self._labels * vector(solution, "alpha", self.name)
        elif "sigma" in solution:
            inside["alpha"] = self._from_sigma(vector(solution, "sigma", self.name))
        return inside

    def _publish(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        r"""PU's names: ``alpha`` (:math:`f`'s coefficients) and ``sigma`` (:math:`-\alpha_U`)."""
        if "alpha" in solution:
            theta = np.asarray(solution["alpha"], dtype=np.float64)
            solution["alpha"] = self._labels * theta
            solution["sigma"] = theta[self._U]
        return solution

    def _dual_point(self, alpha: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """The certificate's point under PU's names, ``alpha`` and ``sigma``."""
        return self._publish({"alpha": np.asarray(alpha, dtype=np.float64)})

    def _from_sigma(self, sigma: NDArray[np.float64]) -> NDArray[np.float64]:
        alpha = np.full(self.data.n_samples, self.c1)
        alpha[self._U] = sigma
        return alpha

    def solution_from_sigma(
        self, sigma: ArrayLike, F: NDArray[np.float64] | None = None
    ) -> dict[str, NDArray[np.float64]]:
        r"""The model's solution from a dual point :math:`\sigma` (shape (n,)).

        ``F`` (optional) holds :math:`F_u = (K\alpha)_u` at the unlabeled rows when the caller
        has it; otherwise it is computed. The bias is the exact minimizer of the primal given
        :math:`\alpha`.
        """
        sigma = np.clip(np.asarray(sigma, dtype=np.float64).reshape(-1), 0.0, self.c2)
        f = None
        if F is not None:
            f = np.zeros(self.data.n_samples)  # the positives' f does not move the bias
            f[self._U] = np.asarray(F, dtype=np.float64).reshape(-1)
        return solution_from_alpha(self, self._from_sigma(sigma), intercept=True, f=f)

    # ------------------------------------------------------------------------------ evaluation
    def risk(self, solution: Solution) -> float:
        r"""The regularized PU risk :math:`J = 2\lambda \cdot` :meth:`objective`."""
        return 2.0 * self.lam * self.objective(solution)

    def dual_objective(self, sigma: ArrayLike) -> float:
        r"""A lower bound on the optimum from a feasible :math:`\sigma`.

        It is :math:`-G(\sigma) - \tfrac12 c_1^2 \mathbf 1^\top K_{PP} \mathbf 1`, with
        :math:`G` the reduced dual: EmpiricalRisk's Fenchel dual at :math:`\alpha_P = c_1`,
        :math:`\alpha_U = \sigma`.

        Valid (weak duality) when :math:`0 \le \sigma \le c_2` and
        :math:`\mathbf 1^\top\sigma = c_1 p` (see :meth:`violation`).
        """
        v = self._labels * self._from_sigma(np.asarray(sigma, dtype=np.float64).reshape(-1))
        if self.is_linear:
            z = np.asarray(self.data.X.T @ v, dtype=np.float64).reshape(-1)
            quad = float(z @ z)
        else:
            quad = float(v @ self.kernel_values(v))
        return loss_part(self, v) - 0.5 * quad

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

    def _formulation(self, layer: str, form: str, built: tuple[Any, dict, dict]) -> Formulation:
        r"""The dual's pieces also read as USMO's :math:`\sigma` and :math:`\delta`."""
        problem, variables, constraints = built
        if form == "dual":
            blocks, n = variables["blocks"], self._U.size  # the double hinge's two blocks on U
            first, second = blocks[:n], blocks[n:]
            variables = variables | {"sigma": (first + second) / 2, "delta": first - second}
        return super()._formulation(layer, form, (problem, variables, constraints))
