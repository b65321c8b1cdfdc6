r"""Least absolute deviation (LAD, median) regression: the absolute loss, declared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import PiecewiseLinearSampleLoss, Structure
from optframe.data import Dataset
from optframe.losses import Absolute, PLQLoss
from optframe.penalties import Penalty
from optframe.registry import register_model

from .empirical_risk import EmpiricalRisk


@register_model
@dataclass(frozen=True, eq=False)
class LADRegression(EmpiricalRisk):
    r"""Weighted least absolute deviation regression.

    .. math::

        \min_{\beta \in \mathbb{R}^m,\; b \in \mathbb{R}} \;
        \sum_{i=1}^n w_i \,\lvert y_i - x_i^\top \beta - b \rvert

    with :math:`b = 0` when ``fit_intercept=False``. It is solved as one of two linear programs.

    *Primal* (``form="primal"``), with :math:`u, v` the positive and negative parts of the residual:

    .. math::

        \min_{\beta, b, u, v} \; w^\top (u + v)
        \quad\text{s.t.}\quad X\beta + b\,\mathbf{1} + u - v = y, \quad u, v \ge 0.

    *Dual* (``form="dual"``, the default: :math:`m + 1` equality rows, much faster when
    :math:`n \gg m`; with HiGHS at :math:`n = 10^4, m = 100` it solves in 2.2 s by dual simplex
    against 26 s for the primal, see ``docs/results/direct.md``):

    .. math::

        \max_{\theta} \; y^\top \theta
        \quad\text{s.t.}\quad X^\top \theta = 0, \quad \mathbf{1}^\top \theta = 0,
        \quad -w \le \theta \le w,

    without the row :math:`\mathbf{1}^\top\theta = 0` when ``fit_intercept=False``. It is built as
    the minimization of :math:`-y^\top\theta` (``objective_scale = -1``). :math:`\beta` and
    :math:`b` are the multipliers of its equality rows: with the back-ends' convention (the dual of
    a row is :math:`\partial f^\star/\partial\,\mathrm{rhs}` of the minimization),
    :math:`\beta = -\mathrm{dual}(X^\top\theta = 0)` and :math:`b = -\mathrm{dual}(\mathbf{1}^\top
    \theta = 0)`.

    Parameters
    ----------
    data : Dataset
        Features ``X`` (dense or sparse; sparse stays sparse in every build) and targets ``y``.
    fit_intercept : bool
        Whether to fit the intercept :math:`b`.
    sample_weight : array of shape (n,), optional
        The weights :math:`w`. Default: ``data.sample_weight``, or ones. Giving weights both here
        and in ``data`` raises :class:`~optframe.errors.ModelError`. Zero-weight samples are kept
        (their terms vanish; in the dual their :math:`\theta_i` is fixed at 0), so every solution
        array stays aligned with the rows of ``data``.

    Raises
    ------
    DataError
        If ``data`` is not a Dataset, has no ``y``, or the weights are invalid (NaN, negative, all
        zero, wrong length).
    ModelError
        If weights are given twice or ``fit_intercept`` is not a bool.

    Notes
    -----
    A declaration on :class:`~optframe.models.EmpiricalRisk`: the loss ``Absolute()``, no
    penalty, :math:`C = 1`, with the solution's names ``beta`` and ``theta``; its layers,
    certificate and structures are EmpiricalRisk's.

    Layers: ``"matrix"`` (a sparse :class:`~optframe.model.MatrixProblem`: primal
    :math:`A = [X, \mathbf{1}, I, -I]`, dual :math:`A = [X^\top; \mathbf{1}^\top]`), ``"cvxpy"``
    and ``"pyomo"``. Every form and layer returns the solution

    * ``"beta"``, shape (m,): the coefficients :math:`\beta`;
    * ``"intercept"``, shape (1,): :math:`b` (``[0.0]`` when ``fit_intercept=False``);
    * ``"residual"``, shape (n,): :math:`y - X\beta - b`;
    * ``"theta"``, shape (n,), when the back-end returned it: the dual solution :math:`\theta`
      (the duals of the primal's rows, or the dual form's variables), clipped to its box.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import LADRegression
    >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))
    >>> result = of.solve(model)
    >>> round(result.objective, 6)
    1.5
    >>> model.objective({"beta": [2.5], "intercept": [0.0]})
    1.5
    """

    forms: ClassVar[tuple[str, ...]] = ("dual", "primal")
    sample_duals: ClassVar[tuple[str, ...]] = ("theta",)
    structures: ClassVar[tuple[type[Structure], ...]] = (PiecewiseLinearSampleLoss,)
    coef_key: ClassVar[str] = "beta"
    dual_key: ClassVar[str] = "theta"

    data: Dataset
    fit_intercept: bool = True
    sample_weight: ArrayLike | None = None
    loss: PLQLoss = field(default_factory=Absolute, init=False, repr=False)
    penalty: Penalty | None = field(default=None, init=False, repr=False)
    C: float = field(default=1.0, init=False, repr=False)
    kernel: Any = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=False, init=False, repr=False)
    penalize_intercept: bool = field(default=False, init=False, repr=False)

    def _complete(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        r"""Add ``"residual"``, :math:`y - X\beta - b`."""
        fitted = np.asarray(self.data.X @ solution["beta"], dtype=np.float64).reshape(-1)
        solution["residual"] = self._y - fitted - float(np.ravel(solution["intercept"])[0])
        return solution

    def with_data(self, data: Dataset) -> LADRegression:
        """The same regression on other samples, weighted by ``data.sample_weight``."""
        return LADRegression(data, fit_intercept=self.fit_intercept)

    @classmethod
    def examples(cls) -> tuple[LADRegression, ...]:
        """With and without intercept."""
        from optframe.data import make_lad_set_a

        data = make_lad_set_a(40, 3, random_state=0)
        return cls(data), cls(data, fit_intercept=False)
