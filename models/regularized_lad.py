r"""Least absolute deviations with a ridge penalty: DVI's LAD (notes/dvi.md eq. 33), declared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.data import Dataset
from optframe.losses import Absolute, PLQLoss
from optframe.penalties import L2, Penalty
from optframe.registry import register_model

from .empirical_risk import EmpiricalRisk


@register_model
@dataclass(frozen=True, eq=False)
class RegularizedLAD(EmpiricalRisk):
    r"""LAD regression with a ridge penalty on the coefficients (the LAD of DVI, Wang et al.).

    .. math::

        \min_{\beta, b} \; \tfrac12 \lVert \beta \rVert^2
        + C \sum_{i=1}^n s_i \lvert y_i - x_i^\top \beta - b \rvert,

    with :math:`b = 0` when ``fit_intercept=False`` (the paper's model). This is not
    :class:`~optframe.models.LADRegression` (an LP with no penalty): the quadratic term makes the
    solution unique and gives the strongly convex dual that DVI screening needs,

    .. math::

        \max_\theta \; y^\top\theta - \tfrac12 \lVert X^\top\theta \rVert^2
        \quad\text{s.t.}\quad -C s_i \le \theta_i \le C s_i, \quad (\mathbf 1^\top\theta = 0),

    with :math:`\beta = X^\top\theta` (LIBLINEAR's L2-regularized L1-loss SVR dual with
    :math:`\epsilon = 0`).

    Parameters
    ----------
    data : Dataset
        Features ``X`` (dense or sparse) and targets ``y``.
    C : float
        The loss weight :math:`C > 0` (:math:`C = 1/\lambda` for a penalty
        :math:`\tfrac\lambda2\lVert\beta\rVert^2` on the plain sum of losses).
    fit_intercept : bool
        Whether to fit the unpenalized intercept :math:`b`. DVI screening needs ``False``.
    sample_weight : array of shape (n,), optional
        The weights :math:`s` (default ``data.sample_weight``, or ones).

    Raises
    ------
    DataError
        If ``data`` is not a Dataset with ``y`` or the weights are invalid.
    ModelError
        If ``C`` is not finite and positive, weights are given twice, or ``fit_intercept`` is not
        a bool.

    Notes
    -----
    A declaration on :class:`~optframe.models.EmpiricalRisk`: the loss ``Absolute()``, the
    penalty ``L2()``, the solution's names ``beta`` and ``theta``; its layers, certificate and
    structures are EmpiricalRisk's. Forms ``"dual"`` (the default: :math:`x = [\theta, z]` with
    rows :math:`X^\top\theta - z = 0`, :math:`\beta = z`) and ``"primal"`` (:math:`x = [\beta,
    b, u, v]`, rows :math:`X\beta + b + u - v = y`). Solution: ``"beta"``, ``"intercept"``
    (the exact minimizer given :math:`\beta`, a weighted median, ``[0.0]`` without
    intercept), ``"residual"`` and
    ``"theta"`` (the dual, in :math:`[-C s_i, C s_i]`) when the back-end returned it.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import RegularizedLAD
    >>> model = RegularizedLAD(Dataset(X=[[1.0], [2.0]], y=[1.0, 2.0]), C=10.0, fit_intercept=False)
    >>> round(float(of.solve(model).solution["beta"][0]), 6)
    1.0
    """

    forms: ClassVar[tuple[str, ...]] = ("dual", "primal")
    sample_duals: ClassVar[tuple[str, ...]] = ("theta",)
    coef_key: ClassVar[str] = "beta"
    dual_key: ClassVar[str] = "theta"

    data: Dataset
    C: float = 1.0
    fit_intercept: bool = True
    sample_weight: ArrayLike | None = None
    loss: PLQLoss = field(default_factory=Absolute, init=False, repr=False)
    penalty: Penalty | None = field(default_factory=L2, init=False, repr=False)
    kernel: Any = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)

    @property
    def default_form(self) -> str:
        """``"dual"``: one row per feature."""
        return "dual"

    def _complete(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        r"""Add ``"residual"``, :math:`y - X\beta - b`."""
        fitted = np.asarray(self.data.X @ solution["beta"], dtype=np.float64).reshape(-1)
        solution["residual"] = self._y - fitted - float(np.ravel(solution["intercept"])[0])
        return solution

    def dual_objective(self, theta: ArrayLike) -> float:
        r"""The dual objective: a lower bound for ``theta`` in the box (and summing to 0 with b).

        .. math:: y^\top\theta - \tfrac12\lVert X^\top\theta\rVert^2
        """
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        beta = np.asarray(self.data.X.T @ theta)
        return float(self._y @ theta) - 0.5 * float(beta @ beta)

    def with_data(self, data: Dataset) -> RegularizedLAD:
        """The same regression (C, intercept) on other samples, weighted by ``data``."""
        return RegularizedLAD(data, C=self.C, fit_intercept=self.fit_intercept)

    @classmethod
    def examples(cls) -> tuple[RegularizedLAD, ...]:
        """With and without intercept."""
        from optframe.data import make_lad_set_a

        data = make_lad_set_a(40, 3, random_state=0)
        return cls(data, C=0.5), cls(data, C=2.0, fit_intercept=False)
