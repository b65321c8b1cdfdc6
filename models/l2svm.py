r"""The Lee-Mangasarian L2-SVM with penalized bias: the MEB-equivalent SVM of CVM, FW and MFW."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import SimplexQP, Structure
from optframe.certificate import Certificate
from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.kernels import Kernel
from optframe.losses import PLQLoss
from optframe.model import Formulation, MatrixProblem, ProblemClass, RawSolution, Solution
from optframe.penalties import L2, Penalty
from optframe.registry import register_model

from ._common import (
    check_dataset,
    check_gram,
    check_positive,
    check_unit_weights,
    column,
    eye,
    relabel_hint,
    scalar,
    scale_rows,
    vector,
)
from .empirical_risk import EmpiricalRisk


def margin_loss() -> PLQLoss:
    r""":math:`\tfrac12\max(0, -a)^2`, the L2-SVM's :math:`\tfrac12\xi_i^2`."""
    return _MARGIN_LOSS


_MARGIN_LOSS = PLQLoss(rehu=[(-1.0, 0.0, math.inf)], kind="classification")  # immutable


def best_rho(margins: NDArray[np.float64], C: float) -> float:
    r"""Exact minimizer of :math:`\tfrac C2 \sum_i \max(0, \rho - u_i)^2 - \rho` over :math:`\rho`.

    The derivative :math:`C \sum_{u_i < \rho} (\rho - u_i) - 1` is increasing; with the margins
    sorted, the root lies where :math:`k` of them are below it:
    :math:`\rho = (1/C + \sum_{l \le k} u_{(l)})/k`.
    """
    u = np.sort(np.asarray(margins, dtype=np.float64))
    k = np.arange(1, u.size + 1)
    rho = (1.0 / C + np.cumsum(u)) / k
    upper = np.r_[u[1:], np.inf]
    ok = np.flatnonzero((rho > u) & (rho <= upper))
    return float(rho[ok[0]] if ok.size else rho[-1])


@register_model
@dataclass(frozen=True, eq=False, init=False)
class L2SVM(EmpiricalRisk):
    r"""The L2-SVM with penalized bias (Lee and Mangasarian), linear or with a kernel.

    *Primal* (``form="primal"``, linear kernel only; notes/frank_wolfe.md section 1.1):

    .. math::

        \min_{w, b, \rho, \xi} \; \tfrac12 \bigl(\lVert w \rVert^2 + b^2
        + C \textstyle\sum_i \xi_i^2\bigr) - \rho
        \quad\text{s.t.}\quad y_i (w^\top x_i + b) \ge \rho - \xi_i .

    *Dual* (``form="dual"``, the default; any kernel :math:`k`; sections 1.3-1.4):

    .. math::

        \min_{\alpha} \; \alpha^\top \tilde K \alpha
        \quad\text{s.t.}\quad \textstyle\sum_i \alpha_i = 1, \quad \alpha \ge 0,
        \qquad \tilde K_{ij} = y_i y_j \bigl(k(x_i, x_j) + 1\bigr) + \delta_{ij}/C,

    whose optimal value :math:`R^\star` gives the primal's as :math:`-R^\star/2` (the formulation
    has ``objective_scale = -1/2``). With an RBF kernel :math:`\tilde k_{ii} = 2 + 1/C` is
    constant and the dual is a minimal-enclosing-ball problem. The classifier is
    :math:`h(x) = \sum_i \alpha_i y_i (k(x_i, x) + 1) = w^\top\phi(x) + b` with
    :math:`w = \sum_i \alpha_i y_i \phi(x_i)`, :math:`b = \sum_i \alpha_i y_i`.

    Dividing :math:`(w, b)` by :math:`\rho` gives the squared-hinge SVM with the bias as a
    penalized feature equal to 1 and cost :math:`C/2`: with the linear kernel it is LIBLINEAR
    ``-s 1 -B 1 -c C/2``, i.e. ``LinearSVC(C=C/2, loss="squared_hinge", intercept_scaling=1)``
    (:meth:`standard_form`).

    Parameters
    ----------
    data : Dataset
        Features ``X`` (dense or sparse) and labels ``y`` in :math:`\{-1, +1\}`, both classes.
        Sample weights are not supported: ``data.sample_weight`` must be ``None`` (or all ones).
        Weights :math:`s_i` would put :math:`\delta_{ij}/(C s_i)` on the diagonal of
        :math:`\tilde K`, which is then no longer a minimal enclosing ball with one ridge, the
        structure the fw, mfw and cvm drivers use; for weighted data use WeightedSVM, or repeat
        rows for integer weights.
    C : float
        The penalty :math:`C > 0`.
    kernel : {"linear", "rbf", "poly"} or Kernel
        The kernel :math:`k` (``optframe.kernels.RBF(gamma=...)`` etc.; the kernels reject
        non-positive parameters with ModelError).

    Raises
    ------
    DataError
        If ``data`` is not a Dataset, has no ``y``, holds labels other than -1 and +1, holds a
        single class, or carries sample weights other than all ones.
    ModelError
        If ``C`` is not a finite positive number or the kernel is unknown; at build time, if the
        primal form is asked for with a non-linear kernel or the kernel dual's :math:`\tilde K`
        would exceed 2 GiB.

    Notes
    -----
    Layers ``"matrix"`` and ``"cvxpy"``. The linear dual never forms :math:`\tilde K`: with
    :math:`Z = [\mathrm{diag}(y) X,\ y]`, :math:`\tilde K = Z Z^\top + I/C`; the matrix layer adds
    :math:`v = Z^\top \alpha` as variables. The primal's margin rows (named ``"margin"``) have
    duals :math:`\alpha_i`.

    Solution names: ``"alpha"`` (shape (m,), on the simplex), ``"intercept"`` (:math:`b`, shape
    (1,)), ``"rho"`` (shape (1,)), ``"xi"`` (shape (m,), :math:`\max(0, \rho - y_i h(x_i))`) and
    ``"w"`` (linear kernel). From :math:`\alpha`, :math:`\rho` is the exact minimizer of the primal
    given :math:`(w, b)` (:func:`best_rho`), which at the optimum equals
    :math:`\alpha^\top\tilde K\alpha`.

    The model offers its dual as a :class:`~optframe.capabilities.SimplexQP`, which the drivers
    ``fw``/``mfw``/``frank_wolfe`` and ``cvm`` solve.

    *A declaration on* :class:`~optframe.models.EmpiricalRisk`: with :math:`a_i = y_i h(x_i) - \rho`
    the objective is

    .. math::

        \tfrac12\bigl(\lVert w\rVert^2 + b^2\bigr) + C\sum_i \tfrac12\max(0, -a_i)^2 - \rho,

    the one-sided quadratic loss :math:`\tfrac12\max(0, -a)^2` (kink 0) with cost :math:`C`, the
    ridge penalty, a free margin and a penalized intercept (``free_margin=True``,
    ``penalize_intercept=True``). Objective, certificate (the Fenchel dual on the simplex),
    decision function and the ``SimplexQP`` (ridge :math:`1/C`, scale :math:`-1/2`, offset 0) are
    EmpiricalRisk's; what is the L2SVM's own is its forms (the matrix dual with
    :math:`v = Z^\top\alpha`, the primal with ``"rho"``, ``"xi"`` and the rows ``"margin"``),
    its solution names and :meth:`standard_form`.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import L2SVM
    >>> data = Dataset(X=[[0.0], [1.0], [3.0], [4.0]], y=[-1, -1, 1, 1])
    >>> result = of.solve(L2SVM(data, C=10.0))
    >>> result.predict([[0.5], [3.5]])
    array([-1.,  1.])
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("matrix", "cvxpy")
    forms: ClassVar[tuple[str, ...]] = ("dual", "primal")
    is_classifier: ClassVar[bool] = True
    structures: ClassVar[tuple[type[Structure], ...]] = (SimplexQP,)

    data: Dataset
    C: float = 1.0
    kernel: Kernel | str = "linear"
    loss: PLQLoss = field(default_factory=margin_loss, init=False, repr=False)
    penalty: Penalty | None = field(default_factory=L2, init=False, repr=False)
    fit_intercept: bool = field(default=True, init=False, repr=False)
    sample_weight: Any = field(default=None, init=False, repr=False)
    free_margin: bool = field(default=True, init=False, repr=False)
    penalize_intercept: bool = field(default=True, init=False, repr=False)

    def __init__(self, data: Dataset, C: float = 1.0, kernel: Kernel | str = "linear") -> None:
        declared = {"loss": margin_loss(), "penalty": L2(), "fit_intercept": True,
                    "sample_weight": None, "free_margin": True,
                    "penalize_intercept": True}  # fmt: skip
        for name, value in (("data", data), ("C", C), ("kernel", kernel), *declared.items()):
            object.__setattr__(self, name, value)
        self.__post_init__()

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        self._check_labels()
        check_positive(self.C, "C", self.name)
        check_unit_weights(
            self.data,
            self.name,
            "Its MEB dual (the fw, mfw and cvm drivers) has one ridge 1/C for every sample. "
            "Use WeightedSVM (hinge loss, per-sample costs C * s_i), or repeat rows for "
            "integer weights.",
        )
        super().__post_init__()
        object.__setattr__(self, "kernel", self._kernel)

    def _check_labels(self) -> None:
        """DataError unless the labels are -1 and +1, both present (weights are all ones)."""
        if self.__dict__.get("_labels_checked"):
            return  # checked first, before EmpiricalRisk's own checks
        y = self._y
        bad = np.unique(y[(y != 1.0) & (y != -1.0)])
        if bad.size:
            raise DataError(
                f"{self.name} needs labels in {{-1, +1}}; y also holds {bad[:6]}. {relabel_hint(y)}"
            )
        for label in (1.0, -1.0):
            if not np.any(y == label):
                raise DataError(
                    f"{self.name} needs both classes; class {label:+g} is missing from y "
                    f"(a single class: all {y.size} labels are {-label:+g})."
                )
        object.__setattr__(self, "_labels_checked", True)

    @classmethod
    def examples(cls) -> tuple[L2SVM, ...]:
        """Linear and RBF."""
        from optframe.data import make_classification_svm
        from optframe.kernels import RBF

        data = make_classification_svm(40, 3, separation=1.5, random_state=0)
        return cls(data, C=1.0), cls(data, C=4.0, kernel=RBF(gamma=0.5))

    # ----------------------------------------------------------------------------------- helpers
    @property
    def default_form(self) -> str:
        """``"dual"``: the simplex QP, for every kernel."""
        return "dual"

    def form_refusal(self, layer: str, form: str) -> str | None:
        """Why ``form`` is not offered: the primal needs the linear kernel."""
        if form == "primal" and not self.is_linear:
            return (
                f"the primal form of {self.name} needs the linear kernel; with {self.kernel!r} "
                "build form='dual' (the default)."
            )
        return None

    def modified_gram(self) -> NDArray[np.float64]:
        r"""The dense :math:`\tilde K` (m x m; small m only)."""
        m = self.data.n_samples
        check_gram(
            m,
            f"{self.name}'s K~",
            "Use the fw, mfw or cvm driver, which compute kernel columns on demand.",
        )
        y = self._y
        K = self.kernel.matrix(self.data.X) + 1.0
        K *= y[:, None] * y[None, :]
        K = 0.5 * (K + K.T)
        K[np.diag_indices(m)] += 1.0 / self.C
        return K

    def _z(self) -> NDArray[np.float64] | sp.csr_array:
        """Z = [diag(y) X, y] (sparse stays sparse)."""
        Zx = scale_rows(self.data.X, self._y)
        if sp.issparse(Zx):
            return sp.hstack([Zx, column(self._y)], format="csr")
        return np.hstack([Zx, self._y[:, None]])

    def _complete(self, solution: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        r"""Add ``"xi"``, :math:`\max(0, \rho - y_i h(x_i))`, when the solution has ``"rho"``."""
        if "rho" in solution:
            f, _ = self._fit(solution)
            margins = self._y * (f + scalar(solution, "intercept"))
            solution["xi"] = np.maximum(0.0, scalar(solution, "rho") - margins)
        return solution

    def _from_alpha(self, alpha: ArrayLike) -> dict[str, NDArray[np.float64]]:
        r"""The solution at a point of the simplex: :math:`w, b, \rho, \xi` from :math:`\alpha`.

        :math:`\alpha` is clipped at 0 and rescaled to sum 1 (solvers return tiny negatives).
        """
        alpha = np.maximum(np.asarray(alpha, dtype=np.float64).reshape(-1), 0.0)
        if not alpha.sum() > 0:
            raise ModelError(f"{self.name}: alpha must have a positive entry")
        return self.structure(SimplexQP).recover(alpha)

    def standard_form(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        r""":math:`(w/\rho, b/\rho)`: LIBLINEAR ``-s 1 -B 1 -c C/2``'s solution (linear kernel)."""
        rho = scalar(solution, "rho")
        if not rho > 0:
            raise ModelError(f"{self.name}: the solution's rho must be > 0; got {rho}")
        out = {"intercept": np.array([scalar(solution, "intercept") / rho])}
        if "w" in solution:
            out["w"] = vector(solution, "w", self.name) / rho
        return out

    def _recover_dual(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        return self._from_alpha(raw.primal["alpha"])

    def _recover_primal(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        w = np.asarray(raw.primal["w"], dtype=np.float64).reshape(-1)
        b = float(np.ravel(raw.primal["intercept"])[0])
        rho = float(np.ravel(raw.primal["rho"])[0])
        margins = self._y * (np.asarray(self.data.X @ w, dtype=np.float64) + b)
        solution: dict[str, NDArray[np.float64]] = {
            "w": w,
            "intercept": np.array([b]),
            "rho": np.array([rho]),
            "xi": np.maximum(0.0, rho - margins),
        }
        if "margin" in raw.dual:  # rows y_i h_i - rho + xi_i >= 0: d f*/d rhs_i = alpha_i
            alpha = np.maximum(np.asarray(raw.dual["margin"], dtype=np.float64).reshape(-1), 0.0)
            if alpha.sum() > 0:
                solution["alpha"] = alpha / alpha.sum()
        return solution

    def _formulation(self, layer: str, form: str, problem: Any, **handles: Any) -> Formulation:
        dual = form == "dual"
        return Formulation(
            layer=layer,
            problem=problem,
            problem_class=ProblemClass.QP,
            recover=self._recover_dual if dual else self._recover_primal,
            objective_scale=-0.5 if dual else 1.0,
            form=form,
            **handles,
        )

    # ------------------------------------------------------------------------------------ layers
    def _build_matrix(self, form: str) -> Formulation:
        m, n = self.data.X.shape
        y, C = self._y, self.C
        if form == "primal":
            # x = [w, b, rho, xi]; rows y_i x_i'w + y_i b - rho + xi_i >= 0.
            A = sp.hstack(
                [sp.csc_array(scale_rows(self.data.X, y)), column(y), column(-np.ones(m)), eye(m)],
                format="csc",
            )
            size = n + 2 + m
            problem = MatrixProblem(
                c=np.r_[np.zeros(n + 1), -1.0, np.zeros(m)],
                A=A,
                row_lower=np.zeros(m),
                row_upper=np.full(m, np.inf),
                lower=np.full(size, -np.inf),
                upper=np.full(size, np.inf),
                P=sp.diags_array(np.r_[np.ones(n + 1), 0.0, np.full(m, C)], format="csc"),
            )
            variables = {
                "w": slice(0, n),
                "intercept": slice(n, n + 1),
                "rho": slice(n + 1, n + 2),
                "xi": slice(n + 2, size),
            }
            return self._formulation(
                "matrix", form, problem, variables=variables, constraints={"margin": slice(0, m)}
            )
        ones = sp.csc_array(np.ones((1, m)))
        if self.is_linear:
            # x = [alpha, v]; rows Z'alpha - v = 0, 1'alpha = 1; 1/2 x'Px = |v|^2 + |alpha|^2 / C.
            k = n + 1
            ZT = sp.csc_array(sp.csc_array(self._z()).T)
            A = sp.vstack(
                [sp.hstack([ZT, -eye(k)]), sp.hstack([ones, sp.csc_array((1, k))])], format="csc"
            )
            problem = MatrixProblem(
                c=np.zeros(m + k),
                A=A,
                row_lower=np.r_[np.zeros(k), 1.0],
                row_upper=np.r_[np.zeros(k), 1.0],
                lower=np.r_[np.zeros(m), np.full(k, -np.inf)],
                upper=np.full(m + k, np.inf),
                P=sp.diags_array(np.r_[np.full(m, 2.0 / C), np.full(k, 2.0)], format="csc"),
            )
        else:
            problem = MatrixProblem(
                c=np.zeros(m),
                A=ones,
                row_lower=np.ones(1),
                row_upper=np.ones(1),
                lower=np.zeros(m),
                upper=np.full(m, np.inf),
                P=sp.csc_array(2.0 * self.modified_gram()),
            )
        return self._formulation("matrix", form, problem, variables={"alpha": slice(0, m)})

    def _build_cvxpy(self, form: str) -> Formulation:
        import cvxpy as cp

        m, n = self.data.X.shape
        y, C = self._y, self.C
        if form == "primal":
            w = cp.Variable(n, name="w")
            b = cp.Variable(name="intercept")
            rho = cp.Variable(name="rho")
            xi = cp.Variable(m, name="xi")
            margin = scale_rows(self.data.X, y) @ w + y * b - rho + xi >= 0
            objective = (cp.sum_squares(w) + cp.square(b) + C * cp.sum_squares(xi)) / 2 - rho
            problem = cp.Problem(cp.Minimize(objective), [margin])
            variables = {"w": w, "intercept": b, "rho": rho, "xi": xi}
            return self._formulation(
                "cvxpy", form, problem, variables=variables, constraints={"margin": margin}
            )
        alpha = cp.Variable(m, name="alpha")
        if self.is_linear:
            quadratic = cp.sum_squares(self._z().T @ alpha) + cp.sum_squares(alpha) / C
        else:
            quadratic = cp.quad_form(alpha, cp.psd_wrap(self.modified_gram()))
        problem = cp.Problem(cp.Minimize(quadratic), [cp.sum(alpha) == 1, alpha >= 0])
        return self._formulation("cvxpy", form, problem, variables={"alpha": alpha})

    # ------------------------------------------------------------------------------- evaluation
    def objective(self, solution: Solution) -> float:
        r"""The primal objective with :math:`\xi` recomputed.

        .. math::
            \tfrac12\bigl(\lVert w\rVert^2 + b^2 + C\textstyle\sum_i \max(0, \rho - y_i h(x_i))^2
            \bigr) - \rho

        From ``"w"`` (linear) or ``"alpha"`` (kernel rows in blocks); ``"intercept"`` defaults
        to 0 and ``"rho"`` to its exact minimizer given :math:`(w, b)`. EmpiricalRisk's
        objective with the free margin and the penalized intercept.
        """
        return super().objective(solution)

    def dual_value(self, alpha: ArrayLike) -> float:
        r"""The Lagrangian dual value :math:`-\tfrac12 \alpha^\top\tilde K\alpha`.

        A lower bound on the optimum for any :math:`\alpha` on the simplex (weak duality).
        """
        given = np.asarray(alpha, dtype=np.float64).reshape(-1)
        _, penalty = self._fit({"alpha": given})  # v'Kv / 2 with v = y * alpha
        b = float(given @ self._y)
        return -(penalty + 0.5 * (b * b + float(given @ given) / self.C))

    def dual_certificate(self, solution: Solution) -> Certificate:
        r"""The proven lower bound and its point: :meth:`dual_value` at a point of the simplex.

        The point is the solution's ``"alpha"`` (clipped at 0 and rescaled to sum 1) when
        present, else :math:`\alpha \propto C\xi` (the KKT condition
        :math:`\alpha_i = C\xi_i` of the primal at its optimum), or the uniform point when
        :math:`\xi = 0`. Any point of the simplex gives a lower bound (weak duality).
        EmpiricalRisk's certificate with the free margin (:mod:`optframe.models._risk_margin`);
        :meth:`dual_bound` is its value.
        """
        return super().dual_certificate(solution)

    def violation(self, solution: Solution) -> float:
        r"""Largest violation of :math:`\alpha \ge 0`, :math:`\sum_i\alpha_i = 1` (if present)."""
        if "alpha" not in solution:
            return 0.0
        alpha = vector(solution, "alpha", self.name)
        return max(0.0, float(np.max(-alpha)), abs(float(alpha.sum()) - 1.0))
