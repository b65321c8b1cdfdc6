r"""The sample-weighted hinge-loss C-SVM, linear or kernel, as a quadratic program."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import BoxQPDual, LinearBoxDual, PiecewiseLinearSampleLoss, Structure
from optframe.data import Dataset
from optframe.data.aggregate import aggregate_samples
from optframe.duality import balance, fill_subgradient, kink_set
from optframe.errors import DataError, ModelError
from optframe.kernels import ClusterMeanKernel, Kernel, Linear, as_kernel
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution, Solution
from optframe.registry import register_model

from ._box_dual import FixedSampleDual
from ._common import (
    GRAM_LIMIT_BYTES,
    check_dataset,
    check_features,
    check_flag,
    check_positive,
    column,
    eye,
    kernel_product,
    primal_or_dual,
    resolve_weights,
    row_dot,
    scalar,
    scale_rows,
    vector,
)


def _format_values(values: NDArray) -> str:
    shown = ", ".join(f"{v:g}" for v in values[:6])
    return shown + (", ..." if values.size > 6 else "")


def best_intercept(g: NDArray, y: NDArray, cost: NDArray) -> float:
    r"""Exact minimizer of :math:`\sum_i c_i \max(0, 1 - y_i (g_i + b))` over :math:`b`.

    The function is convex and piecewise linear in :math:`b` with breakpoints
    :math:`t_i = y_i - g_i`; its slope on an interval is the weight of the negatives below minus
    the weight of the positives above. When the minimizer is an interval (no free support vector),
    its midpoint is returned, as LIBSVM does. Needs positive total cost in both classes.
    """
    keep = cost > 0
    t, labels, c = (y - g)[keep], y[keep], cost[keep]
    order = np.argsort(t, kind="stable")
    t, labels, c = t[order], labels[order], c[order]
    pos = np.where(labels > 0, c, 0.0)
    neg = c - pos
    # slope[k]: slope on the interval with k breakpoints to its left (k = 0..N).
    slope = -(pos.sum() - np.concatenate([[0.0], np.cumsum(pos)])) + np.concatenate(
        [[0.0], np.cumsum(neg)]
    )
    flat = 1e-12 * c.sum()
    k = int(np.argmax(slope >= -flat))  # slope[0] < 0 < slope[N]
    if abs(slope[k]) <= flat:  # flat piece between breakpoints k-1 and k
        return float(0.5 * (t[k - 1] + t[k]))
    return float(t[k - 1])


@register_model
@dataclass(frozen=True, eq=False)
class WeightedSVM(Model):
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
    The default form is ``"primal"`` for the linear kernel and ``"dual"`` otherwise.

    Layers: ``"matrix"`` (sparse QP data), ``"cvxpy"`` and ``"pyomo"`` (linear kernel only).

    * Primal: :math:`x = [w, b, \xi]`, :math:`P = \mathrm{diag}(1 \text{ on } w)`, rows
      :math:`y_i x_i^\top w + y_i b + \xi_i \ge 1` (named ``"margin"``).
    * Linear dual: :math:`Q = Z Z^\top` with :math:`Z = \mathrm{diag}(y) X` is never formed; the
      matrix and Pyomo layers add :math:`w = Z^\top\alpha` as variables (rows ``"link"``), CVXPY
      writes :math:`\tfrac12\lVert Z^\top\alpha\rVert^2`. Memory stays :math:`O(\mathrm{nnz}(X))`.
    * Kernel dual: :math:`Q` is formed as a dense n x n matrix (8 n² bytes, and the matrix layer's
      sparse copy about 1.5 times more); that is inherent to a direct solve of the dual.

    Solution names: ``"w"`` (shape (m,), linear kernel only), ``"intercept"`` (shape (1,),
    ``[0.0]`` without intercept), ``"xi"`` (shape (n,), recomputed as
    :math:`\max(0, 1 - y_i f(x_i))`) and ``"alpha"`` (shape (n,)): the dual variables, read from the
    primal's margin-row duals (their :math:`\partial f^\star/\partial\,\mathrm{rhs}`, which is
    :math:`\alpha_i \ge 0`) or from the dual form, clipped to :math:`[0, C s_i]`. From a dual solve,
    :math:`b` is the exact minimizer of the primal objective given :math:`\alpha` (the midpoint of
    the optimal interval when there is no free support vector); it equals minus the dual of the row
    :math:`y^\top\alpha = 0` (named ``"bias"``).

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

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("matrix", "cvxpy", "pyomo")
    forms: ClassVar[tuple[str, ...]] = ("primal", "dual")
    is_classifier: ClassVar[bool] = True
    convex_sample_loss: ClassVar[bool] = True
    sample_duals: ClassVar[tuple[str, ...]] = ("alpha",)
    structures: ClassVar[tuple[type[Structure], ...]] = (
        PiecewiseLinearSampleLoss,
        BoxQPDual,
        LinearBoxDual,
    )

    data: Dataset
    C: float = 1.0
    kernel: Kernel | str = "linear"
    sample_weight: ArrayLike | None = None
    fit_intercept: bool = True
    _s: NDArray[np.float64] = field(init=False, repr=False)
    _cost: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        y = self._y
        bad = np.unique(y[(y != 1.0) & (y != -1.0)])
        if bad.size:
            raise DataError(
                f"{self.name} needs labels in {{-1, +1}}; y also holds {_format_values(bad)}. "
                "Map 0/1 labels with y = 2 * y - 1."
            )
        C = check_positive(self.C, "C", self.name)
        object.__setattr__(self, "C", C)
        object.__setattr__(self, "kernel", as_kernel(self.kernel))
        object.__setattr__(
            self, "fit_intercept", check_flag(self.fit_intercept, "fit_intercept", self.name)
        )
        weights = resolve_weights(self.data, self.sample_weight, self.name)
        if self.sample_weight is not None:
            object.__setattr__(self, "sample_weight", weights)
        for label in (1.0, -1.0):
            members = y == label
            if not members.any():
                raise DataError(
                    f"{self.name} needs both classes; class {label:+g} is missing from y "
                    f"(all {y.size} labels are {-label:+g})."
                )
            if not np.any(weights[members] > 0):
                raise DataError(
                    f"{self.name}: class {label:+g} has zero total sample weight; "
                    "each class needs a sample with positive weight."
                )
        object.__setattr__(self, "_s", weights)
        object.__setattr__(self, "_cost", C * weights)

    # ----------------------------------------------------------------------------------- helpers
    @property
    def _y(self) -> NDArray[np.float64]:
        assert self.data.y is not None
        return self.data.y

    @property
    def is_linear(self) -> bool:
        """Whether the kernel is linear (the primal form and ``"w"`` exist)."""
        return isinstance(self.kernel, Linear)

    @property
    def weights(self) -> NDArray[np.float64]:
        """The effective sample weights :math:`s`, shape (n,)."""
        return self._s

    @property
    def upper_bounds(self) -> NDArray[np.float64]:
        r"""The dual box :math:`C s_i`, shape (n,)."""
        return self._cost

    @property
    def default_form(self) -> str:
        """``"primal"`` for the linear kernel, ``"dual"`` otherwise."""
        return "primal" if self.is_linear else "dual"

    def offers(self, layer: str, form: str | None = None) -> bool:
        """Whether ``layer`` and ``form`` can be built: kernels have neither primal nor Pyomo."""
        form = self.default_form if form is None else form
        linear_only = form == "primal" or layer == "pyomo"
        return super().offers(layer, form) and (self.is_linear or not linear_only)

    def build(self, layer: str, form: str | None = None) -> Formulation:
        """Build in ``layer``; the primal form needs the linear kernel (see :meth:`offers`)."""
        form = self.default_form if form is None else form
        if form == "primal" and not self.is_linear:
            raise ModelError(
                f"the primal form of {self.name} needs the linear kernel; with "
                f"{self.kernel!r} build form='dual' (the default for kernels)."
            )
        return super().build(layer, form)

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

    # ------------------------------------------------------ piecewise-linear sample structure
    def with_data(self, data: Dataset) -> WeightedSVM:
        """The same SVM (C, kernel, intercept) on other samples, weighted by ``data``."""
        return WeightedSVM(data, C=self.C, kernel=self.kernel, fit_intercept=self.fit_intercept)

    def aggregate(self, labels: NDArray[np.int64], k: int) -> WeightedSVM:
        r"""The same SVM on the weighted means of the clusters ``labels`` (ids ``0..k-1``).

        Linear kernel: the input-space centroids. Other kernels: the means live in feature space
        (Appendix B of Park and Klabjan), so the aggregated SVM's points are the cluster ids and
        its kernel is :class:`~optframe.kernels.ClusterMeanKernel`, :math:`\bar K = A K A^\top`.
        """
        centroids = aggregate_samples(self.data, self._s, labels, k)
        if self.is_linear:
            return self.with_data(centroids)
        ids = Dataset(
            X=np.arange(k, dtype=np.float64).reshape(-1, 1),
            y=centroids.y,
            sample_weight=centroids.sample_weight,
            name=centroids.name,
        )
        kernel = ClusterMeanKernel(self.kernel, self.data.X, self._s, labels, k)
        return WeightedSVM(ids, C=self.C, kernel=kernel, fit_intercept=self.fit_intercept)

    def sample_groups(self) -> NDArray[np.int64]:
        """The class of each sample: centroids never mix labels."""
        return (self._y > 0).astype(np.int64)

    def loss_argument(self, solution: Solution) -> NDArray[np.float64]:
        r"""The hinge arguments :math:`h_i = 1 - y_i f(x_i)`."""
        g, _ = self._margins(solution)
        return 1.0 - self._y * (g + scalar(solution, "intercept"))

    def loss_pieces(self, solution: Solution) -> NDArray[np.int64]:
        """1 where the hinge is active (:math:`h_i > 0`), 0 where it is not."""
        return (self.loss_argument(solution) > 0).astype(np.int64)

    def sample_embedding(self, solution: Solution) -> NDArray[np.float64]:
        """The signed distance of each sample to the hyperplane (the paper's SVM embedding)."""
        g, reg = self._margins(solution)
        norm = math.sqrt(2.0 * reg) or 1.0
        return ((g + scalar(solution, "intercept")) / norm).reshape(-1, 1)

    def complete_solution(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """The solution on this model's samples, and the intercept.

        From ``w`` with the linear kernel, from one ``alpha`` per sample with any other kernel.
        """
        b = scalar(solution, "intercept")
        if self.is_linear:
            w = vector(solution, "w", self.name)
            return self._complete(np.asarray(self.data.X @ w, dtype=np.float64), b, {"w": w})
        alpha = vector(solution, "alpha", self.name)
        g, _ = self._margins({"alpha": alpha})
        return self._complete(g, b, {"alpha": alpha})

    def _check_gram(self) -> None:
        n = self.data.n_samples
        need = 8.0 * n * n
        if need > GRAM_LIMIT_BYTES:
            raise ModelError(
                f"the dual of {self.name} with {self.kernel!r} forms Q, an n x n matrix: n={n} "
                f"needs {need / 1024**3:.1f} GiB (limit {GRAM_LIMIT_BYTES / 1024**3:.0f} GiB). "
                "Use a decomposition driver, the linear kernel, or a subsample."
            )

    def _gram(self) -> NDArray[np.float64]:
        self._check_gram()
        y = self._y
        Q = self.kernel.matrix(self.data.X)
        Q *= y[:, None]
        Q *= y[None, :]
        return 0.5 * (Q + Q.T)

    def _z(self) -> NDArray[np.float64] | sp.csr_array:
        """Return Z = diag(y) X (sparse stays sparse)."""
        return scale_rows(self.data.X, self._y)

    def _margins(self, solution: Solution) -> tuple[NDArray[np.float64], float]:
        """``(g, reg)``: :math:`g = f - b` at the training rows and the regularizer."""
        if "w" in solution:
            w = vector(solution, "w", self.name)
            return np.asarray(self.data.X @ w), 0.5 * float(w @ w)
        v = vector(solution, "alpha", self.name) * self._y
        if self.is_linear:
            w = np.asarray(self.data.X.T @ v)
            return np.asarray(self.data.X @ w), 0.5 * float(w @ w)
        given = solution["alpha"]
        last = self.__dict__.get("_last_margins")
        if last is not None and last[0] is given and last[1] == v.tobytes():
            return last[2]  # the same alpha as a moment ago (objective, then dual bound)
        support = np.flatnonzero(v)
        g = kernel_product(self.kernel, self.data.X, self.data.X[support], v[support])
        margins = (g, 0.5 * float(v @ g))
        object.__setattr__(self, "_last_margins", (given, v.tobytes(), margins))
        return margins

    def _complete(
        self, g: NDArray, b: float, solution: dict[str, NDArray[np.float64]]
    ) -> dict[str, NDArray[np.float64]]:
        solution["intercept"] = np.array([b])
        solution["xi"] = np.maximum(0.0, 1.0 - self._y * (g + b))
        return solution

    def _alpha(self, values: ArrayLike) -> NDArray[np.float64]:
        return np.clip(np.asarray(values, dtype=np.float64).reshape(-1), 0.0, self._cost)

    def _recover_primal(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        w = np.asarray(raw.primal["w"], dtype=np.float64).reshape(-1)
        b = float(np.ravel(raw.primal["intercept"])[0]) if self.fit_intercept else 0.0
        solution: dict[str, NDArray[np.float64]] = {"w": w}
        if "margin" in raw.dual:
            # Rows y_i f(x_i) + xi_i >= 1 of a minimization: d f*/d rhs_i = alpha_i >= 0.
            solution["alpha"] = self._alpha(raw.dual["margin"])
        return self._complete(np.asarray(self.data.X @ w), b, solution)

    def _recover_dual(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        alpha = self._alpha(raw.primal["alpha"])
        solution: dict[str, NDArray[np.float64]] = {"alpha": alpha}
        if self.is_linear:
            solution["w"] = np.asarray(self.data.X.T @ (alpha * self._y))
        g, _ = self._margins(solution)
        b = best_intercept(g, self._y, self._cost) if self.fit_intercept else 0.0
        return self._complete(g, b, solution)

    def _formulation(self, layer: str, form: str, problem: Any, **handles: Any) -> Formulation:
        recover = {"primal": self._recover_primal, "dual": self._recover_dual}
        return primal_or_dual(layer, form, problem, ProblemClass.QP, recover, **handles)

    # ------------------------------------------------------------------------------------ layers
    def _build_matrix(self, form: str) -> Formulation:
        n, m = self.data.X.shape
        y, cost = self._y, self._cost
        fi = int(self.fit_intercept)
        if form == "primal":
            # x = [w, b, xi]; rows y_i x_i'w + y_i b + xi_i >= 1.
            Z = sp.csc_array(self._z())
            A = sp.hstack([Z, *([column(y)] if fi else []), eye(n)], format="csc")
            size = m + fi + n
            problem = MatrixProblem(
                c=np.concatenate([np.zeros(m + fi), cost]),
                A=A,
                row_lower=np.ones(n),
                row_upper=np.full(n, np.inf),
                lower=np.concatenate([np.full(m + fi, -np.inf), np.zeros(n)]),
                upper=np.full(size, np.inf),
                P=sp.diags_array(np.r_[np.ones(m), np.zeros(fi + n)], format="csc"),
            )
            variables = {"w": slice(0, m), "xi": slice(m + fi, size)}
            if fi:
                variables["intercept"] = slice(m, m + 1)
            constraints = {"margin": slice(0, n)}
        elif self.is_linear:
            # x = [alpha, w]; rows Z'alpha - w = 0 (m), y'alpha = 0; P = diag(0 on alpha, 1 on w).
            ZT = sp.csc_array(self._z()).T
            top = sp.hstack([ZT, -eye(m)], format="csc")
            rows = [top, sp.hstack([column(y).T, sp.csc_array((1, m))])] if fi else [top]
            problem = MatrixProblem(
                c=np.concatenate([-np.ones(n), np.zeros(m)]),
                A=sp.vstack(rows, format="csc"),
                row_lower=np.zeros(m + fi),
                row_upper=np.zeros(m + fi),
                lower=np.concatenate([np.zeros(n), np.full(m, -np.inf)]),
                upper=np.concatenate([cost, np.full(m, np.inf)]),
                P=sp.diags_array(np.r_[np.zeros(n), np.ones(m)], format="csc"),
            )
            variables = {"alpha": slice(0, n), "w": slice(n, n + m)}
            constraints = {"link": slice(0, m)}
            if fi:
                constraints["bias"] = slice(m, m + 1)
        else:
            problem = MatrixProblem(
                c=-np.ones(n),
                A=column(y).T if fi else sp.csc_array((0, n)),
                row_lower=np.zeros(fi),
                row_upper=np.zeros(fi),
                lower=np.zeros(n),
                upper=cost.copy(),
                P=sp.csc_array(self._gram()),
            )
            variables = {"alpha": slice(0, n)}
            constraints = {"bias": slice(0, 1)} if fi else {}
        return self._formulation(
            "matrix", form, problem, variables=variables, constraints=constraints
        )

    def _build_cvxpy(self, form: str) -> Formulation:
        import cvxpy as cp

        n, m = self.data.X.shape
        y, cost = self._y, self._cost
        if form == "primal":
            w = cp.Variable(m, name="w")
            xi = cp.Variable(n, nonneg=True, name="xi")
            variables: dict[str, Any] = {"w": w, "xi": xi}
            lhs = self._z() @ w + xi
            if self.fit_intercept:
                variables["intercept"] = b = cp.Variable(name="intercept")
                lhs = lhs + y * b
            margin = lhs >= 1.0
            objective = cp.sum_squares(w) / 2 + cost @ xi
            problem = cp.Problem(cp.Minimize(objective), [margin])
            constraints: dict[str, Any] = {"margin": margin}
        else:
            alpha = cp.Variable(n, name="alpha")
            if self.is_linear:
                quadratic = cp.sum_squares(self._z().T @ alpha) / 2
            else:
                quadratic = cp.quad_form(alpha, cp.psd_wrap(self._gram())) / 2
            constraints = {"bias": y @ alpha == 0} if self.fit_intercept else {}
            box = [alpha >= 0, alpha <= cost]
            problem = cp.Problem(
                cp.Minimize(quadratic - cp.sum(alpha)), [*constraints.values(), *box]
            )
            variables = {"alpha": alpha}
        return self._formulation(
            "cvxpy", form, problem, variables=variables, constraints=constraints
        )

    def _build_pyomo(self, form: str) -> Formulation:
        import pyomo.environ as pyo

        if not self.is_linear:
            raise ModelError(
                f"the pyomo layer of {self.name} is for the linear kernel; build the kernel dual "
                "in the 'matrix' or 'cvxpy' layer."
            )
        n, m = self.data.X.shape
        y, cost = self._y, self._cost
        mdl = pyo.ConcreteModel(name=f"{self.name}_{form}")
        mdl.w = pyo.Var(range(m))
        half_norm = 0.5 * pyo.quicksum(mdl.w[j] ** 2 for j in range(m))
        if form == "primal":
            Z = sp.csr_array(self._z())
            mdl.xi = pyo.Var(range(n), within=pyo.NonNegativeReals)
            variables: dict[str, Any] = {"w": mdl.w, "xi": mdl.xi}
            if self.fit_intercept:
                mdl.intercept = pyo.Var(range(1))
                variables["intercept"] = mdl.intercept

            def margin_rule(mdl: Any, i: int) -> Any:
                expr = row_dot(Z, i, mdl.w)
                if self.fit_intercept:
                    expr = expr + float(y[i]) * mdl.intercept[0]
                return expr + mdl.xi[i] >= 1.0

            mdl.margin = pyo.Constraint(range(n), rule=margin_rule)
            mdl.objective = pyo.Objective(
                expr=half_norm + pyo.quicksum(float(cost[i]) * mdl.xi[i] for i in range(n))
            )
            constraints: dict[str, Any] = {"margin": mdl.margin}
        else:
            Z = sp.csc_array(self._z())
            mdl.alpha = pyo.Var(range(n), bounds=lambda _, i: (0.0, float(cost[i])))

            def link_rule(mdl: Any, j: int) -> Any:
                lo, hi = Z.indptr[j], Z.indptr[j + 1]
                expr = pyo.quicksum(
                    float(a) * mdl.alpha[int(i)]
                    for a, i in zip(Z.data[lo:hi], Z.indices[lo:hi], strict=True)
                )
                return expr - mdl.w[j] == 0.0

            mdl.link = pyo.Constraint(range(m), rule=link_rule)
            constraints = {"link": mdl.link}
            if self.fit_intercept:
                mdl.bias = pyo.Constraint(
                    range(1),
                    rule=lambda mdl, _: (
                        pyo.quicksum(float(y[i]) * mdl.alpha[i] for i in range(n)) == 0.0
                    ),
                )
                constraints["bias"] = mdl.bias
            mdl.objective = pyo.Objective(expr=half_norm - pyo.quicksum(mdl.alpha.values()))
            variables = {"alpha": mdl.alpha, "w": mdl.w}
        return self._formulation("pyomo", form, mdl, variables=variables, constraints=constraints)

    # ------------------------------------------------------------------------------- evaluation
    def objective(self, solution: Solution) -> float:
        r"""Evaluate the primal objective at ``solution``, with :math:`\xi` recomputed.

        .. math:: \tfrac12 \lVert w \rVert^2 + C \sum_i s_i \max(0, 1 - y_i f(x_i))

        From ``solution["w"]`` when present (linear kernel), else from ``solution["alpha"]``
        (:math:`\tfrac12\lVert w\rVert^2 = \tfrac12 \alpha^\top Q \alpha`, kernel rows in blocks);
        ``solution["intercept"]`` defaults to 0.
        """
        g, reg = self._margins(solution)
        b = scalar(solution, "intercept")
        return reg + float(self._cost @ np.maximum(0.0, 1.0 - self._y * (g + b)))

    def dual_objective(self, alpha: ArrayLike) -> float:
        r""":math:`\mathbf{1}^\top\alpha - \tfrac12 \alpha^\top Q \alpha`.

        A lower bound on the optimal value whenever ``alpha`` is dual feasible
        (:math:`0 \le \alpha_i \le C s_i` and, with an intercept, :math:`y^\top\alpha = 0`; see
        :meth:`violation`).
        """
        alpha = np.asarray(alpha, dtype=np.float64).reshape(-1)
        _, reg = self._margins({"alpha": alpha})
        return float(alpha.sum()) - reg

    def dual_bound(self, solution: Solution) -> float:
        r"""A proven lower bound: the dual objective at a dual-feasible :math:`\alpha`.

        :math:`\alpha` is the solution's ``"alpha"`` when present, else the hinge's subgradient at
        the margins (:math:`C s_i` where :math:`y_i f(x_i) < 1`, 0 where it is above, and the
        samples on the margin filled by least squares so that :math:`w = Z^\top\alpha`). It is
        clipped to :math:`[0, C s_i]` and, with an intercept, the larger class is scaled down so
        that :math:`y^\top\alpha = 0` exactly. Then
        :math:`\mathbf 1^\top\alpha - \tfrac12\alpha^\top Q\alpha` is at most every primal
        value (weak duality). With a kernel, :math:`\alpha^\top Q\alpha` costs the kernel
        among the support vectors only.
        """
        if "alpha" in solution:
            alpha = self._alpha(vector(solution, "alpha", self.name))
        else:
            alpha = self._hinge_subgradient(solution)
        if self.fit_intercept:
            alpha = balance(alpha, self._y)
        support = np.flatnonzero(alpha)
        v = alpha[support] * self._y[support]
        if self.is_linear:
            w = np.asarray(self.data.X[support].T @ v, dtype=np.float64).reshape(-1)
            return float(alpha.sum()) - 0.5 * float(w @ w)
        if "alpha" in solution:
            bound = self._bound_from_margins(solution, alpha)
            if bound is not None:
                return bound
        rows = self.data.X[support]
        return float(alpha.sum()) - 0.5 * float(v @ kernel_product(self.kernel, rows, rows, v))

    def _bound_from_margins(self, solution: Solution, alpha: NDArray) -> float | None:
        r"""The dual value at ``alpha`` from the margins of the solution's own :math:`\alpha_0`.

        With :math:`d = \alpha_0 - \alpha` (the clip and balance), :math:`\alpha^\top Q\alpha
        = \alpha_0^\top Q\alpha_0 - 2 d^\top Q\alpha_0 + d^\top Q d` and :math:`d^\top Q d \le
        \lVert d\rVert_1^2 \max_i k(x_i, x_i)`, so the value returned is at most the dual value
        at ``alpha``: still a bound, with the kernel products the objective already made
        (:meth:`_margins` keeps them). ``None`` when that last term is not negligible.
        """
        g, reg = self._margins(solution)  # g = K (alpha_0 * y): Q alpha_0 = y * g
        d = vector(solution, "alpha", self.name) - alpha
        worst = float(np.abs(d).sum()) ** 2 * float(np.max(self.kernel.diagonal(self.data.X)))
        value = float(alpha.sum()) - reg + float(d @ (self._y * g))
        if 0.5 * worst > 1e-12 * max(1.0, abs(value)):
            return None
        return value - 0.5 * worst

    def _hinge_subgradient(self, solution: Solution) -> NDArray[np.float64]:
        r""":math:`\alpha` from the margins of a linear solution (``"w"``, ``"intercept"``)."""
        w = vector(solution, "w", self.name)
        margin = self._y * (np.asarray(self.data.X @ w) + scalar(solution, "intercept"))
        alpha = np.where(margin < 1.0, self._cost, 0.0)
        on_margin = kink_set(margin - 1.0, 0, 1e-7) & (self._cost > 0)
        zeros = np.zeros_like(self._cost)
        return fill_subgradient(self._z(), w, alpha, on_margin, zeros, self._cost)

    def violation(self, solution: Solution) -> float:
        r"""Largest constraint violation of ``solution``.

        The primal rows :math:`y_i f(x_i) + \xi_i \ge 1`, :math:`\xi \ge 0` with the solution's
        ``"xi"`` (0 when it is recomputed, as every recovered solution's is), and, when
        ``"alpha"`` is present, its dual feasibility: :math:`0 \le \alpha_i \le C s_i` and
        :math:`\lvert y^\top \alpha\rvert` with an intercept.
        """
        worst = 0.0
        if "xi" in solution and ("w" in solution or "alpha" in solution):
            xi = vector(solution, "xi", self.name)
            g, _ = self._margins(solution)
            f = g + scalar(solution, "intercept")
            worst = max(worst, float(np.max(1.0 - self._y * f - xi)), float(np.max(-xi)))
        if "alpha" in solution:
            alpha = vector(solution, "alpha", self.name)
            worst = max(worst, float(np.max(-alpha)), float(np.max(alpha - self._cost)))
            if self.fit_intercept:
                worst = max(worst, abs(float(self._y @ alpha)))
        return max(worst, 0.0)

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r"""Decision values :math:`f(x)` at the rows of ``X`` (dense or sparse).

        :math:`w^\top x + b` from ``solution["w"]``, else :math:`\sum_i \alpha_i y_i k(x_i, x) + b`
        over the support vectors (:math:`\alpha_i > 0`), kernel rows in blocks.
        """
        X = check_features(X, self.data.n_features, self.name)
        b = scalar(solution, "intercept")
        if "w" in solution:
            return np.asarray(X @ vector(solution, "w", self.name), dtype=np.float64) + b
        alpha = vector(solution, "alpha", self.name)
        support = np.flatnonzero(alpha > 0)
        v = alpha[support] * self._y[support]
        return kernel_product(self.kernel, X, self.data.X[support], v) + b

    # ------------------------------------------------------------------------ structures
    def structure_refusal(self, kind: type[Structure]) -> str | None:
        """Why a structure is out: the box QP needs the intercept, the linear box dual none."""
        if kind is BoxQPDual and not self.fit_intercept:
            return (
                "without an intercept the dual has no equality row, which SMO's pair steps "
                "keep; use fit_intercept=True, or a driver for box duals"
            )
        if kind is LinearBoxDual and not self.is_linear:
            return f"the box dual is for the linear kernel (w = Z'alpha); got {self.kernel!r}"
        if kind is LinearBoxDual and self.fit_intercept:
            return (
                "fit_intercept=True adds the equality row y'alpha = 0 to the dual: coordinate "
                "steps cannot keep it, and the DVI/SSNSV rules are proved for the paper's model "
                "without intercept (a dual feasible set that is a box); use fit_intercept=False "
                "and, if wanted, a constant feature"
            )
        return super().structure_refusal(kind)

    def _structure(self, kind: type[Structure]) -> Structure:
        if kind is PiecewiseLinearSampleLoss:
            return PiecewiseLinearSampleLoss(self, aggregate=self.aggregate)
        n = self.data.n_samples
        if kind is BoxQPDual:
            # min 1/2 a'Qa - 1'a, Q_ij = y_i y_j k(x_i, x_j), 0 <= a_i <= C s_i, y'a = 0; no kinks
            return BoxQPDual(
                X=self.data.X,
                kernel=self.kernel,
                sign=self._y.copy(),
                linear=-np.ones(n),
                upper=self._cost.copy(),
                rhs=0.0,
                kink=self._cost.copy(),
                slope_below=np.zeros(n),
                slope_above=np.zeros(n),
                recover=self._from_dual_gradient,
                start=np.zeros(n),
                objective=self._objective_from_gradient,
            )
        # z_i = y_i x_i, target 1, box [0, C s_i] (linear kernel, no intercept)
        return LinearBoxDual(
            Z=_box_z(self),
            target=np.ones(n),
            lower=np.zeros(n),
            upper=self._cost.copy(),
            recover=self._from_alpha,
            primal_key="w",
            dual_key="alpha",
            parameter="C",
            reduced=FixedSampleDual.reducing(self.name),
        )

    def _from_dual_gradient(self, x: NDArray, gradient: NDArray) -> dict[str, NDArray[np.float64]]:
        r"""The solution at dual point ``x`` given :math:`\nabla = Q\alpha - \mathbf 1` there.

        :math:`f(x_i) - b = y_i (Q\alpha)_i = y_i(\nabla_i + 1)`; :math:`b` minimizes the primal.
        """
        alpha = self._alpha(x)
        g = self._y * (np.asarray(gradient, dtype=np.float64) + 1.0)
        solution: dict[str, NDArray[np.float64]] = {"alpha": alpha}
        if self.is_linear:
            solution["w"] = np.asarray(self.data.X.T @ (alpha * self._y)).ravel()
        b = best_intercept(g, self._y, self._cost) if self.fit_intercept else 0.0
        return self._complete(g, b, solution)

    def _objective_from_gradient(self, x: NDArray, gradient: NDArray) -> float:
        r"""The primal objective at dual point ``x`` in O(n log n), from :math:`Q\alpha - 1`."""
        alpha = self._alpha(x)
        Qa = np.asarray(gradient, dtype=np.float64) + 1.0
        g = self._y * Qa
        b = best_intercept(g, self._y, self._cost) if self.fit_intercept else 0.0
        hinge = np.maximum(0.0, 1.0 - self._y * (g + b))
        return 0.5 * float(alpha @ Qa) + float(self._cost @ hinge)

    def _from_alpha(self, alpha: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        r"""The solution at dual point ``alpha``: :math:`w = \sum_i \alpha_i y_i x_i`, b = 0."""
        alpha = self._alpha(alpha)
        w = np.asarray(self.data.X.T @ (alpha * self._y), dtype=np.float64).reshape(-1)
        g = np.asarray(self.data.X @ w, dtype=np.float64)
        return self._complete(g, 0.0, {"alpha": alpha, "w": w})


# Z = diag(y) X of the last data set asked for: along a C path every value's model (and its
# reduced problems) shares the Dataset, so Z is formed once and the DCD driver's per-matrix
# preparation is reused. Z depends only on the data (y is data.y); the entry goes with the data.
_BOX_Z: dict[int, tuple[Any, Any]] = {}


def _box_z(model: WeightedSVM) -> Any:
    import weakref

    data = model.data
    entry = _BOX_Z.get(id(data))
    if entry is not None and entry[0]() is data:
        return entry[1]
    Z = model._z()
    _BOX_Z.clear()
    _BOX_Z[id(data)] = (weakref.ref(data), Z)
    weakref.finalize(data, _BOX_Z.pop, id(data), None)
    return Z
