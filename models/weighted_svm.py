r"""The sample-weighted hinge-loss C-SVM, linear or kernel: the hinge loss, declared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.kernels import Kernel
from optframe.losses import Hinge, PLQLoss
from optframe.penalties import L2, Penalty
from optframe.registry import register_model

from ._common import scalar, vector
from ._risk_structures import best_intercept as generic_best_intercept
from ._risk_structures import box_rows
from .empirical_risk import EmpiricalRisk


def best_intercept(g: NDArray, y: NDArray, cost: NDArray) -> float:
    r"""Exact minimizer of :math:`\sum_i c_i \max(0, 1 - y_i (g_i + b))` over :math:`b`.

    The hinge case of :func:`~optframe.models._risk_structures.best_intercept`: convex and
    piecewise linear in :math:`b` with breakpoints :math:`y_i - g_i`; when the minimizer is an
    interval (no free support vector), its midpoint, as LIBSVM does. Needs positive total cost in
    both classes.
    """
    y = np.asarray(y, dtype=np.float64)
    return generic_best_intercept(
        Hinge(), np.zeros_like(y), y, np.asarray(g, dtype=np.float64), cost
    )


@register_model
@dataclass(frozen=True, eq=False, init=False)
class WeightedSVM(EmpiricalRisk):
    r"""The C-SVM with hinge loss and per-sample weights, linear or with a kernel.

    *Primal* (``form="primal"``, linear kernel only):

    .. math::

        \min_{w, b, \xi} \; \tfrac12 \lVert w \rVert^2 + C \sum_{i=1}^n s_i \xi_i
        \quad\text{s.t.}\quad y_i (w^\top x_i + b) \ge 1 - \xi_i, \quad \xi_i \ge 0,

    with :math:`b = 0` (no variable) when ``fit_intercept=False``.

    *Dual* (``form="dual"``, any kernel :math:`k`):

    .. math::

        \max_{\alpha} \; \mathbf{1}^\top \alpha - \tfrac12 \alpha^\top Q \alpha
        \quad\text{s.t.}\quad y^\top \alpha = 0, \quad 0 \le \alpha_i \le C s_i,
        \qquad Q_{ij} = y_i y_j k(x_i, x_j),

    without the row :math:`y^\top\alpha = 0` when ``fit_intercept=False``. It is built as the
    minimization of its negative (``objective_scale = -1``). The classifier is
    :math:`f(x) = \sum_i \alpha_i y_i k(x_i, x) + b`, which is :math:`w^\top x + b` with
    :math:`w = \sum_i \alpha_i y_i x_i` for the linear kernel.

    Parameters
    ----------
    data : Dataset
        Features ``X`` (dense or sparse) and labels ``y`` in :math:`\{-1, +1\}`, both present.
    C : float
        The penalty :math:`C > 0`.
    kernel : {"linear", "rbf", "poly"} or Kernel
        The kernel :math:`k` (strings take the kernel's default parameters; pass
        ``optframe.kernels.RBF(gamma=...)`` to choose them). Stored as a Kernel object.
    sample_weight : array of shape (n,), optional
        The weights :math:`s` (default: ``data.sample_weight``, or ones); weights given both here
        and in ``data`` raise ModelError. Zero-weight samples are kept: their :math:`\alpha_i` is
        fixed at 0 and they do not count in the objective.
    fit_intercept : bool
        Whether to fit the (unpenalized) bias :math:`b`.

    Raises
    ------
    DataError
        If ``data`` is not a Dataset, has no ``y``, holds labels other than -1 and +1, lacks a class
        (or gives it zero total weight), or the weights are invalid.
    ModelError
        If ``C`` is not a finite positive number, the kernel is unknown, weights are given twice;
        at build time, if the primal form is asked for with a non-linear kernel, or the kernel
        dual's :math:`Q` would exceed 2 GiB (``n > 16384``).

    Notes
    -----
    A declaration on :class:`~optframe.models.EmpiricalRisk`: the loss ``Hinge()``, the penalty
    ``L2()``, the kernel; its layers, certificate and structures are EmpiricalRisk's. The
    default form is ``"primal"`` for the linear kernel and ``"dual"`` otherwise; layers
    ``"matrix"``, ``"cvxpy"`` and ``"pyomo"`` (linear kernel only).

    * Primal: :math:`x = [w, b, \xi]`, rows :math:`y_i x_i^\top w + y_i b + \xi_i \ge 1` (named
      ``"fit"``; their duals are :math:`-\alpha_i`, read as ``alpha``).
    * Linear dual: :math:`Q = Z Z^\top` with :math:`Z = \mathrm{diag}(y) X` is never formed; the
      matrix layer adds :math:`w = Z^\top\alpha` as variables. Memory stays
      :math:`O(\mathrm{nnz}(X))`.
    * Kernel dual: :math:`Q` is formed as a dense n x n matrix (8 n² bytes); that is inherent to
      a direct solve of the dual. The row :math:`y^\top\alpha = 0` is named ``"bias"``; its
      dual is :math:`-b`.

    Solution names: ``"w"`` (shape (m,), linear kernel only), ``"intercept"`` (shape (1,),
    ``[0.0]`` without intercept), ``"xi"`` (shape (n,), recomputed as
    :math:`\max(0, 1 - y_i f(x_i))`) and ``"alpha"`` (shape (n,)), clipped to
    :math:`[0, C s_i]`. From a dual solve, :math:`b` is the exact minimizer of the primal
    objective given :math:`\alpha` (the midpoint of the optimal interval when there is no free
    support vector).

    :meth:`objective` and :meth:`decision_function` for a kernel solution compute kernel rows in
    blocks and never form an n x n matrix.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import WeightedSVM
    >>> data = Dataset(X=[[0.0], [1.0], [3.0], [4.0]], y=[-1, -1, 1, 1])
    >>> model = WeightedSVM(data, C=10.0)
    >>> result = of.solve(model)
    >>> round(result.objective, 6), round(float(result.solution["w"][0]), 6)
    (0.5, 1.0)
    >>> model.predict(result.solution, [[0.5], [3.5]])
    array([-1.,  1.])
    """

    intercept_row: ClassVar[str] = "bias"
    is_classifier: ClassVar[bool] = True

    data: Dataset
    C: float = 1.0
    kernel: Kernel | str = "linear"
    sample_weight: ArrayLike | None = None
    fit_intercept: bool = True
    loss: PLQLoss = field(default_factory=Hinge, init=False, repr=False)
    penalty: Penalty | None = field(default_factory=L2, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)

    def __init__(
        self,
        data: Dataset,
        C: float = 1.0,
        kernel: Kernel | str = "linear",
        sample_weight: ArrayLike | None = None,
        fit_intercept: bool = True,
    ) -> None:
        for name, value in (("data", data), ("C", C), ("kernel", kernel),
                            ("sample_weight", sample_weight), ("fit_intercept", fit_intercept),
                            ("loss", Hinge()), ("penalty", L2())):  # fmt: skip
            object.__setattr__(self, name, value)
        self.__post_init__()
        object.__setattr__(self, "kernel", self._kernel)

    def _z(self) -> Any:
        """Return Z = diag(y) X (sparse stays sparse), shared along a path of C."""
        return box_rows(self)

    @property
    def upper_bounds(self) -> NDArray[np.float64]:
        r"""The dual box :math:`C s_i`, shape (n,)."""
        return self.costs

    def _complete(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        r"""Add ``"xi"``, :math:`\max(0, 1 - y_i f(x_i))`."""
        f, _ = self._fit(solution)
        margin = self._y * (f + float(np.ravel(solution["intercept"])[0]))
        solution["xi"] = np.maximum(0.0, 1.0 - margin)
        return solution

    def dual_objective(self, alpha: ArrayLike) -> float:
        r""":math:`\mathbf{1}^\top\alpha - \tfrac12 \alpha^\top Q \alpha`.

        A lower bound on the optimal value whenever ``alpha`` is dual feasible
        (:math:`0 \le \alpha_i \le C s_i` and, with an intercept, :math:`y^\top\alpha = 0`; see
        :meth:`violation`).
        """
        alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
        _, reg = self._fit({"alpha": alpha})
        return float(alpha.sum()) - reg

    def violation(self, solution: Any) -> float:
        r"""Largest constraint violation of ``solution``.

        The primal rows :math:`y_i f(x_i) + \xi_i \ge 1`, :math:`\xi \ge 0` with the solution's
        ``"xi"`` (0 when it is recomputed, as every recovered solution's is), and, when
        ``"alpha"`` is present, its dual feasibility: :math:`0 \le \alpha_i \le C s_i` and
        :math:`\lvert y^\top \alpha\rvert` with an intercept.
        """
        worst = 0.0
        if "xi" in solution and ("w" in solution or "alpha" in solution):
            xi = vector(solution, "xi", self.name)
            f = self._fit(solution)[0] + scalar(solution, "intercept")
            worst = max(worst, float(np.max(1.0 - self._y * f - xi)), float(np.max(-xi)))
        if "alpha" in solution:
            alpha = vector(solution, "alpha", self.name)
            worst = max(worst, float(np.max(-alpha)), float(np.max(alpha - self.costs)))
            if self.fit_intercept:
                worst = max(worst, abs(float(self._y @ alpha)))
        return max(worst, 0.0)

    @classmethod
    def examples(cls) -> tuple[WeightedSVM, ...]:
        """With and without intercept, linear and RBF, with uneven sample weights."""
        from optframe.data import make_classification_svm
        from optframe.kernels import RBF

        data = make_classification_svm(40, 3, separation=1.5, random_state=0)
        weights = np.linspace(0.5, 2.0, 40)
        return (
            cls(data, C=2.0, sample_weight=weights),
            cls(data, C=0.5, fit_intercept=False),
            cls(data, C=1.0, kernel=RBF(gamma=0.5)),
        )
