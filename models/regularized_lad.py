r"""Least absolute deviations with a ridge penalty: DVI's LAD (notes/dvi.md eq. 33), a QP."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import LinearBoxDual, Structure
from optframe.data import Dataset
from optframe.duality import balance, fill_subgradient
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution, Solution
from optframe.registry import register_model

from ._box_dual import FixedSampleDual
from ._common import (
    check_dataset,
    check_features,
    check_flag,
    check_positive,
    column,
    eye,
    primal_or_dual,
    resolve_weights,
    scalar,
    vector,
    weighted_median,
)


@register_model
@dataclass(frozen=True, eq=False)
class RegularizedLAD(Model):
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
    Layer ``"matrix"``; forms ``"dual"`` (default: :math:`x = [\theta, \beta]` with rows
    :math:`X^\top\theta - \beta = 0`) and ``"primal"`` (:math:`x = [\beta, b, u, v]`, rows
    :math:`X\beta + b + u - v = y`). Solution: ``"beta"``, ``"intercept"`` (the exact minimizer
    given :math:`\beta`, a weighted median, ``[0.0]`` without intercept), ``"residual"`` and
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

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("matrix",)
    forms: ClassVar[tuple[str, ...]] = ("dual", "primal")
    sample_duals: ClassVar[tuple[str, ...]] = ("theta",)
    structures: ClassVar[tuple[type[Structure], ...]] = (LinearBoxDual,)

    data: Dataset
    C: float = 1.0
    fit_intercept: bool = True
    sample_weight: ArrayLike | None = None
    _s: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        C = check_positive(self.C, "C", self.name)
        object.__setattr__(self, "C", C)
        object.__setattr__(
            self, "fit_intercept", check_flag(self.fit_intercept, "fit_intercept", self.name)
        )
        weights = resolve_weights(self.data, self.sample_weight, self.name)
        if self.sample_weight is not None:
            object.__setattr__(self, "sample_weight", weights)
        object.__setattr__(self, "_s", weights)

    @property
    def _y(self) -> NDArray[np.float64]:
        assert self.data.y is not None
        return self.data.y

    @property
    def weights(self) -> NDArray[np.float64]:
        """The sample weights :math:`s`."""
        return self._s

    def _solution(self, beta: ArrayLike) -> dict[str, NDArray[np.float64]]:
        beta = np.asarray(beta, dtype=np.float64).reshape(-1)
        fitted = np.asarray(self.data.X @ beta, dtype=np.float64)
        b = weighted_median(self._y - fitted, self._s) if self.fit_intercept else 0.0
        return {"beta": beta, "intercept": np.array([b]), "residual": self._y - fitted - b}

    def _theta(self, values: Any) -> NDArray[np.float64]:
        bound = self.C * self._s
        return np.clip(np.asarray(values, dtype=np.float64).reshape(-1), -bound, bound)

    def _recover_primal(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        solution = self._solution(raw.primal["beta"])
        if "fit" in raw.dual:
            solution["theta"] = self._theta(raw.dual["fit"])
        return solution

    def _recover_dual(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        theta = self._theta(raw.primal["theta"])
        solution = self._solution(np.asarray(self.data.X.T @ theta))
        solution["theta"] = theta
        return solution

    def _build_matrix(self, form: str) -> Formulation:
        X = sp.csc_array(self.data.X, dtype=np.float64)
        n, m = X.shape
        y, cost = self._y, self.C * self._s
        fi = int(self.fit_intercept)
        if form == "primal":
            ones = [column(np.ones(n))] if fi else []
            size = m + fi + 2 * n
            problem = MatrixProblem(
                c=np.concatenate([np.zeros(m + fi), cost, cost]),
                A=sp.hstack([X, *ones, eye(n), -eye(n)], format="csc"),
                row_lower=y.copy(),
                row_upper=y.copy(),
                lower=np.concatenate([np.full(m + fi, -np.inf), np.zeros(2 * n)]),
                upper=np.full(size, np.inf),
                P=sp.diags_array(np.r_[np.ones(m), np.zeros(fi + 2 * n)], format="csc"),
            )
            variables = {"beta": slice(0, m)}
            constraints = {"fit": slice(0, n)}
        else:
            top = sp.hstack([X.T, -eye(m)], format="csc")
            rows = [top, sp.hstack([column(np.ones(n)).T, sp.csc_array((1, m))])] if fi else [top]
            problem = MatrixProblem(
                c=np.concatenate([-y, np.zeros(m)]),
                A=sp.vstack(rows, format="csc"),
                row_lower=np.zeros(m + fi),
                row_upper=np.zeros(m + fi),
                lower=np.concatenate([-cost, np.full(m, -np.inf)]),
                upper=np.concatenate([cost, np.full(m, np.inf)]),
                P=sp.diags_array(np.r_[np.zeros(n), np.ones(m)], format="csc"),
            )
            variables = {"theta": slice(0, n), "beta": slice(n, n + m)}
            constraints = {}
        recover = {"primal": self._recover_primal, "dual": self._recover_dual}
        return primal_or_dual(
            "matrix",
            form,
            problem,
            ProblemClass.QP,
            recover,
            variables=variables,
            constraints=constraints,
        )

    def objective(self, solution: Solution) -> float:
        r"""Evaluate the primal objective at ``solution`` (``intercept`` defaults to 0)."""
        beta = vector(solution, "beta", self.name)
        residual = self._y - self.data.X @ beta - scalar(solution, "intercept")
        return 0.5 * float(beta @ beta) + self.C * float(self._s @ np.abs(residual))

    def dual_objective(self, theta: ArrayLike) -> float:
        r"""The dual objective: a lower bound for ``theta`` in the box (and summing to 0 with b).

        .. math:: y^\top\theta - \tfrac12\lVert X^\top\theta\rVert^2
        """
        theta = np.asarray(theta, dtype=np.float64).reshape(-1)
        beta = np.asarray(self.data.X.T @ theta)
        return float(self._y @ theta) - 0.5 * float(beta @ beta)

    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: :meth:`dual_objective` at a feasible :math:`\theta`.

        :math:`\theta` is the solution's ``"theta"`` when present, else the subgradient
        :math:`C s_i\,\mathrm{sign}(r_i)` of the loss at the residuals, the samples on the kink
        (:math:`r_i = 0`) filled by least squares so that :math:`\beta = X^\top\theta` (and
        :math:`\mathbf 1^\top\theta = 0` with an intercept). It is
        clipped to the box and, with an intercept, its larger side scaled down so that
        :math:`\mathbf 1^\top\theta = 0`.
        """
        upper = self.C * self._s
        if "theta" in solution:
            theta = self._theta(vector(solution, "theta", self.name))
        else:
            beta = vector(solution, "beta", self.name)
            residual = self._y - self.data.X @ beta - scalar(solution, "intercept")
            theta = upper * np.sign(residual)
            kink = np.abs(residual) <= 1e-9 * max(1.0, float(np.max(np.abs(self._y))))
            rows, target = self.data.X, beta  # stationarity: beta = X'theta (and 1'theta = 0)
            if self.fit_intercept:
                ones = np.ones((self.data.n_samples, 1))
                rows = (
                    sp.hstack([rows, ones], format="csr")
                    if sp.issparse(rows)
                    else np.hstack([np.asarray(rows), ones])
                )
                target = np.append(beta, 0.0)
            theta = fill_subgradient(rows, target, theta, kink & (upper > 0), -upper, upper)
        if self.fit_intercept:
            theta = balance(theta, np.ones_like(theta))
        return self.dual_objective(theta)

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r"""Predictions :math:`X\beta + b`."""
        X = check_features(X, self.data.n_features, self.name)
        beta = vector(solution, "beta", self.name)
        return np.asarray(X @ beta, dtype=np.float64) + scalar(solution, "intercept")

    @classmethod
    def examples(cls) -> tuple[RegularizedLAD, ...]:
        """With and without intercept."""
        from optframe.data import make_lad_set_a

        data = make_lad_set_a(40, 3, random_state=0)
        return cls(data, C=0.5), cls(data, C=2.0, fit_intercept=False)

    # ------------------------------------------------------------------------ structures
    def structure_refusal(self, kind: type[Structure]) -> str | None:
        """The linear box dual exists only without intercept."""
        if kind is LinearBoxDual and self.fit_intercept:
            return (
                "fit_intercept=True adds the equality row 1'theta = 0 to the dual, which DCD and "
                "the DVI rules (derived without intercept) do not handle; use fit_intercept=False "
                "and, if wanted, a constant feature"
            )
        return super().structure_refusal(kind)

    def _structure(self, kind: type[Structure]) -> LinearBoxDual:
        r""":math:`z_i = x_i`, :math:`\bar y = y`, box :math:`[-C s_i, C s_i]`."""
        bound = self.C * self._s
        return LinearBoxDual(
            Z=self.data.X,
            target=self._y,
            lower=-bound,
            upper=bound.copy(),
            recover=self._from_theta,
            primal_key="beta",
            dual_key="theta",
            parameter="C",
            reduced=FixedSampleDual.reducing(self.name),
        )

    def _from_theta(self, theta: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        r"""The solution at the dual point :math:`\theta`: :math:`\beta = X^\top\theta`."""
        theta = self._theta(theta)
        solution = self._solution(np.asarray(self.data.X.T @ theta))
        solution["theta"] = theta
        return solution
