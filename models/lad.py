r"""Least absolute deviation (LAD, median) regression as a linear program."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import PiecewiseLinearSampleLoss, Structure
from optframe.data import Dataset
from optframe.duality import fill_subgradient, kink_set, project_null
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution, Solution
from optframe.registry import register_model

from ._common import (
    check_dataset,
    check_features,
    check_flag,
    column,
    eye,
    primal_or_dual,
    resolve_weights,
    row_dot,
    scalar,
    vector,
    weighted_median,
)


@register_model
@dataclass(frozen=True, eq=False)
class LADRegression(Model):
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

    problem_class: ClassVar[ProblemClass] = ProblemClass.LP
    layers: ClassVar[tuple[str, ...]] = ("matrix", "cvxpy", "pyomo")
    forms: ClassVar[tuple[str, ...]] = ("dual", "primal")
    convex_sample_loss: ClassVar[bool] = True
    sample_duals: ClassVar[tuple[str, ...]] = ("theta",)
    structures: ClassVar[tuple[type[Structure], ...]] = (PiecewiseLinearSampleLoss,)

    data: Dataset
    fit_intercept: bool = True
    sample_weight: ArrayLike | None = None
    _w: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        object.__setattr__(
            self, "fit_intercept", check_flag(self.fit_intercept, "fit_intercept", self.name)
        )
        weights = resolve_weights(self.data, self.sample_weight, self.name)
        if self.sample_weight is not None:
            object.__setattr__(self, "sample_weight", weights)
        object.__setattr__(self, "_w", weights)

    # ----------------------------------------------------------------------------------- helpers
    @property
    def weights(self) -> NDArray[np.float64]:
        """The effective sample weights :math:`w`, shape (n,)."""
        return self._w

    @property
    def _y(self) -> NDArray[np.float64]:
        assert self.data.y is not None
        return self.data.y

    def _solution(self, beta: ArrayLike, intercept: float) -> dict[str, NDArray[np.float64]]:
        beta = np.asarray(beta, dtype=np.float64).reshape(-1)
        residual = self._y - self.data.X @ beta - intercept
        return {"beta": beta, "intercept": np.array([intercept]), "residual": residual}

    def _theta(self, values: ArrayLike) -> NDArray[np.float64]:
        return np.clip(np.asarray(values, dtype=np.float64).reshape(-1), -self._w, self._w)

    def _recover_primal(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        b = float(np.ravel(raw.primal["intercept"])[0]) if self.fit_intercept else 0.0
        solution = self._solution(raw.primal["beta"], b)
        if "fit" in raw.dual:
            # d f*/d y_i of the primal is the dual variable theta_i itself.
            solution["theta"] = self._theta(raw.dual["fit"])
        return solution

    def _recover_dual(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        theta = self._theta(raw.primal["theta"])
        needed = ["beta", "intercept"] if self.fit_intercept else ["beta"]
        if any(name not in raw.dual for name in needed):
            solution = self._solution(*self._fit_from_theta(theta))
            solution["theta"] = theta
            return solution
        # The dual LP is min -y'theta s.t. X'theta = r. By LP duality its value is
        # -min_beta (r'beta + sum w|y - X beta - b|), so d(value)/dr = -beta.
        beta = 0.0 - np.asarray(raw.dual["beta"], dtype=np.float64).reshape(-1)
        b = 0.0 - float(np.ravel(raw.dual["intercept"])[0]) if self.fit_intercept else 0.0
        solution = self._solution(beta, b)
        solution["theta"] = theta
        return solution

    def _fit_from_theta(self, theta: NDArray[np.float64]) -> tuple[NDArray[np.float64], float]:
        # For back-ends that return no duals (SCIP presolves them away): complementary slackness
        # says a sample whose theta_i is strictly inside (-w_i, w_i) has a zero residual, so beta
        # and b solve X_S beta + b = y_S on those samples. The objective evaluated at the result,
        # against the dual bound, certifies it (a degenerate S shows up as a gap).
        inside = np.abs(theta) < self._w * (1.0 - 1e-7)
        X = self.data.X[inside]
        X = X.toarray() if sp.issparse(X) else np.asarray(X)
        if self.fit_intercept:
            X = np.hstack([X, np.ones((X.shape[0], 1))])
        coefficients = np.linalg.lstsq(X, self._y[inside], rcond=None)[0]
        if self.fit_intercept:
            return coefficients[:-1], float(coefficients[-1])
        return coefficients, 0.0

    def _formulation(self, layer: str, form: str, problem: Any, **handles: Any) -> Formulation:
        recover = {"primal": self._recover_primal, "dual": self._recover_dual}
        return primal_or_dual(layer, form, problem, ProblemClass.LP, recover, **handles)

    @classmethod
    def examples(cls) -> tuple[LADRegression, ...]:
        """With and without intercept."""
        from optframe.data import make_lad_set_a

        data = make_lad_set_a(40, 3, random_state=0)
        return cls(data), cls(data, fit_intercept=False)

    # ------------------------------------------------------ piecewise-linear sample structure
    def _structure(self, kind: type[Structure]) -> PiecewiseLinearSampleLoss:
        """The absolute loss of every residual: two linear pieces, one group."""
        return PiecewiseLinearSampleLoss(self)

    def with_data(self, data: Dataset) -> LADRegression:
        """The same regression on other samples, weighted by ``data.sample_weight``."""
        return LADRegression(data, fit_intercept=self.fit_intercept)

    def sample_groups(self) -> NDArray[np.int64]:
        """One group: any samples may share a centroid."""
        return np.zeros(self.data.n_samples, dtype=np.int64)

    def loss_argument(self, solution: Solution) -> NDArray[np.float64]:
        r"""The residuals :math:`r_i = y_i - x_i^\top\beta - b`."""
        return self._y - self.decision_function(solution, self.data.X)

    def loss_pieces(self, solution: Solution) -> NDArray[np.int64]:
        """1 where the residual is positive, 0 where it is not (the two pieces of |r|)."""
        return (self.loss_argument(solution) > 0).astype(np.int64)

    def sample_embedding(self, solution: Solution) -> NDArray[np.float64]:
        """``(residual, y)`` per sample, the paper's clustering space for LAD."""
        return np.column_stack([self.loss_argument(solution), self._y])

    def complete_solution(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """The solution on this model's samples from ``beta`` and ``intercept``."""
        return self._solution(vector(solution, "beta", self.name), scalar(solution, "intercept"))

    # ------------------------------------------------------------------------------------ layers
    def _build_matrix(self, form: str) -> Formulation:
        X = sp.csc_array(self.data.X, dtype=np.float64)
        n, m = X.shape
        y, w = self._y, self._w
        k = m + int(self.fit_intercept)
        if form == "primal":
            # x = [beta, b, u, v]; rows X beta + b + u - v = y.
            ones = [column(np.ones(n))] if self.fit_intercept else []
            A = sp.hstack([X, *ones, eye(n), -eye(n)], format="csc")
            problem = MatrixProblem(
                c=np.concatenate([np.zeros(k), w, w]),
                A=A,
                row_lower=y.copy(),
                row_upper=y.copy(),
                lower=np.concatenate([np.full(k, -np.inf), np.zeros(2 * n)]),
                upper=np.full(k + 2 * n, np.inf),
            )
            variables = {"beta": slice(0, m), "u": slice(k, k + n), "v": slice(k + n, k + 2 * n)}
            if self.fit_intercept:
                variables["intercept"] = slice(m, k)
            constraints = {"fit": slice(0, n)}
        else:
            # x = theta; rows X'theta = 0 (m) and 1'theta = 0.
            rows = [X.T, column(np.ones(n)).T] if self.fit_intercept else [X.T]
            problem = MatrixProblem(
                c=-y,
                A=sp.vstack(rows, format="csc"),
                row_lower=np.zeros(k),
                row_upper=np.zeros(k),
                lower=-w,
                upper=w.copy(),
            )
            variables = {"theta": slice(0, n)}
            constraints = {"beta": slice(0, m)}
            if self.fit_intercept:
                constraints["intercept"] = slice(m, k)
        return self._formulation(
            "matrix", form, problem, variables=variables, constraints=constraints
        )

    def _build_cvxpy(self, form: str) -> Formulation:
        import cvxpy as cp

        X, y, w = self.data.X, self._y, self._w
        n, m = X.shape
        if form == "primal":
            beta = cp.Variable(m, name="beta")
            u = cp.Variable(n, nonneg=True, name="u")
            v = cp.Variable(n, nonneg=True, name="v")
            variables: dict[str, Any] = {"beta": beta, "u": u, "v": v}
            fitted = X @ beta
            if self.fit_intercept:
                variables["intercept"] = b = cp.Variable(name="intercept")
                fitted = fitted + b
            fit = fitted + u - v == y
            problem = cp.Problem(cp.Minimize(w @ (u + v)), [fit])
            constraints: dict[str, Any] = {"fit": fit}
        else:
            theta = cp.Variable(n, name="theta")
            constraints = {"beta": X.T @ theta == 0}
            if self.fit_intercept:
                constraints["intercept"] = cp.sum(theta) == 0
            box = [theta >= -w, theta <= w]
            problem = cp.Problem(cp.Minimize(-y @ theta), [*constraints.values(), *box])
            variables = {"theta": theta}
        return self._formulation(
            "cvxpy", form, problem, variables=variables, constraints=constraints
        )

    def _build_pyomo(self, form: str) -> Formulation:
        import pyomo.environ as pyo

        y, w = self._y, self._w
        n, m = self.data.X.shape
        mdl = pyo.ConcreteModel(name=f"{self.name}_{form}")
        if form == "primal":
            X = sp.csr_array(self.data.X, dtype=np.float64)
            mdl.beta = pyo.Var(range(m))
            mdl.u = pyo.Var(range(n), within=pyo.NonNegativeReals)
            mdl.v = pyo.Var(range(n), within=pyo.NonNegativeReals)
            variables: dict[str, Any] = {"beta": mdl.beta, "u": mdl.u, "v": mdl.v}
            if self.fit_intercept:
                mdl.intercept = pyo.Var(range(1))
                variables["intercept"] = mdl.intercept

            def fit_rule(mdl: Any, i: int) -> Any:
                expr = row_dot(X, i, mdl.beta)
                if self.fit_intercept:
                    expr = expr + mdl.intercept[0]
                return expr + mdl.u[i] - mdl.v[i] == float(y[i])

            mdl.fit = pyo.Constraint(range(n), rule=fit_rule)
            mdl.objective = pyo.Objective(
                expr=pyo.quicksum(float(w[i]) * (mdl.u[i] + mdl.v[i]) for i in range(n))
            )
            constraints: dict[str, Any] = {"fit": mdl.fit}
        else:
            X = sp.csc_array(self.data.X, dtype=np.float64)
            mdl.theta = pyo.Var(range(n), bounds=lambda _, i: (-float(w[i]), float(w[i])))

            if np.any(np.diff(X.indptr) == 0):
                # An all-zero column restricts nothing; a row "zero == 0" keeps the duals aligned.
                mdl.zero = pyo.Var(bounds=(0.0, 0.0))

            def beta_rule(mdl: Any, j: int) -> Any:
                lo, hi = X.indptr[j], X.indptr[j + 1]
                if lo == hi:
                    return mdl.zero == 0.0
                return (
                    pyo.quicksum(
                        float(a) * mdl.theta[int(i)]
                        for a, i in zip(X.data[lo:hi], X.indices[lo:hi], strict=True)
                    )
                    == 0.0
                )

            mdl.beta = pyo.Constraint(range(m), rule=beta_rule)
            constraints = {"beta": mdl.beta}
            if self.fit_intercept:
                mdl.intercept = pyo.Constraint(
                    range(1), rule=lambda mdl, _: pyo.quicksum(mdl.theta.values()) == 0.0
                )
                constraints["intercept"] = mdl.intercept
            mdl.objective = pyo.Objective(
                expr=pyo.quicksum(-float(y[i]) * mdl.theta[i] for i in range(n))
            )
            variables = {"theta": mdl.theta}
        return self._formulation("pyomo", form, mdl, variables=variables, constraints=constraints)

    # ------------------------------------------------------------------------------ certificate
    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: :math:`y^\top\theta` at a dual-feasible :math:`\theta`.

        :math:`\theta` is the solution's ``"theta"`` when present, else the residual signs'
        :math:`w_i\,\mathrm{sign}(r_i)`, with the samples on the kink (the :math:`k` smallest
        :math:`\lvert r_i\rvert`, :math:`k = m + 1` with an intercept) filled by least squares.
        It is projected onto :math:`\{X^\top\theta = 0,\ \mathbf 1^\top\theta = 0\}` (a
        :math:`k \times k` least-squares solve) and divided by
        :math:`\max(1, \max_i \lvert\theta_i\rvert / w_i)`, which keeps the equalities. For
        every feasible :math:`\theta` and every :math:`(\beta, b)`,
        :math:`\sum_i w_i\lvert r_i\rvert \ge \sum_i \theta_i r_i = y^\top\theta`.
        """
        A = self._dual_rows()
        if "theta" in solution:
            theta = vector(solution, "theta", self.name)
        else:
            residual = self.loss_argument(solution)
            theta = self._w * np.sign(residual)
            tol = 1e-9 * max(1.0, float(np.max(np.abs(self._y))))
            kink = kink_set(residual, A.shape[1], tol) & (self._w > 0)
            theta = fill_subgradient(A, np.zeros(A.shape[1]), theta, kink, -self._w, self._w)
        return float(self._y @ project_null(A, theta, self._w))

    def _dual_rows(self) -> Any:
        r""":math:`[X, \mathbf 1]` (or :math:`X` without intercept): the dual's equality rows."""
        if not self.fit_intercept:
            return self.data.X
        ones = np.ones((self.data.n_samples, 1))
        if sp.issparse(self.data.X):
            return sp.hstack([self.data.X, ones], format="csr")
        return np.hstack([np.asarray(self.data.X), ones])

    def objective_floor(self) -> float:
        r"""A thousandth of the constant model's loss: :math:`10^{-3}\sum_i w_i\lvert y_i-m\rvert`.

        :math:`m` is the weighted median of :math:`y` (0 without intercept). LAD's optimum is 0
        when the model fits every sample; below this floor the gap is measured against it.
        """
        center = weighted_median(self._y, self._w) if self.fit_intercept else 0.0
        return 1e-3 * float(self._w @ np.abs(self._y - center))

    # ------------------------------------------------------------------------------- evaluation
    def objective(self, solution: Solution) -> float:
        r"""Evaluate :math:`\sum_i w_i \lvert y_i - x_i^\top\beta - b\rvert` at ``solution``.

        Uses ``solution["beta"]`` and ``solution["intercept"]`` (0 when absent); sparse ``X`` works.
        """
        beta = vector(solution, "beta", self.name)
        residual = self._y - self.data.X @ beta - scalar(solution, "intercept")
        return float(self._w @ np.abs(residual))

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r"""Predictions :math:`X\beta + b` (dense or sparse ``X``)."""
        X = check_features(X, self.data.n_features, self.name)
        beta = vector(solution, "beta", self.name)
        return np.asarray(X @ beta, dtype=np.float64) + scalar(solution, "intercept")
