r"""Semi-supervised SVM (S3VM) as Bennett and Demiriz's mixed-integer QP."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import PiecewiseLinearSampleLoss, Structure
from optframe.data import Dataset
from optframe.errors import DataError, ModelError
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution, Solution
from optframe.registry import register_model

from ._common import (
    check_dataset,
    check_features,
    check_number,
    column,
    eye,
    resolve_weights,
    row_dot,
    scalar,
    vector,
)

BALANCES = ("none", "constraint", "cost")

#: The largest ratio of the feature columns' norms at which SCIP's branch-and-bound bound is
#: kept (:meth:`SemiSupervisedSVM.solver_bound_doubt`).
TRUSTED_COLUMN_SPREAD = 1e4


@register_model
@dataclass(frozen=True, eq=False)
class SemiSupervisedSVM(Model):
    r"""Semi-supervised linear SVM: labels of the unlabeled samples are decision variables.

    With :math:`f(x) = w^\top x + b`, labeled samples :math:`I_l` (``data.y`` in {-1, +1}) and
    unlabeled samples :math:`I_u` (``data.y == 0``):

    .. math::

        \min_{w, b, d} \; \tfrac12 \lVert w \rVert^2
        + C_l \sum_{i \in I_l} c_i \,[1 - y_i f(x_i)]_+
        + C_u \sum_{i \in I_u} s_i \,[1 - d_i f(x_i)]_+ ,
        \qquad d_i \in \{-1, +1\}.

    For fixed :math:`(w, b)` the best labels are :math:`d_i = \operatorname{sign} f(x_i)`, so the
    unlabeled term is :math:`[1 - |f(x_i)|]_+` (Lemma 1 of Park and Klabjan): that is the objective
    :meth:`objective` evaluates. It is solved as the mixed-integer QP of Bennett and Demiriz, with
    binaries :math:`z_i = 1` for :math:`d_i = +1`:

    .. math::

        \min \; \tfrac12 \lVert w\rVert^2 + C_l \textstyle\sum_{I_l} c_i \xi_i
              + C_u \sum_{I_u} s_i(\eta^+_i + \eta^-_i)
        \quad\text{s.t.}\quad
        \begin{aligned}[t]
        & y_i f(x_i) + \xi_i \ge 1,\ \xi_i \ge 0 && i \in I_l\\
        & f(x_i) + \eta^+_i + M(1 - z_i) \ge 1,\ 0 \le \eta^+_i \le M z_i && i \in I_u\\
        & -f(x_i) + \eta^-_i + M z_i \ge 1,\ 0 \le \eta^-_i \le M(1 - z_i),\ z_i \in \{0,1\}
          && i \in I_u.
        \end{aligned}

    Parameters
    ----------
    data : Dataset
        ``y`` holds +1/-1 for labeled samples and 0 for unlabeled ones; both classes must be labeled
        and at least one sample unlabeled. Weights :math:`s_i` from ``data.sample_weight`` or
        ``sample_weight`` (ones by default).
    C_labeled, C_unlabeled : float
        The penalties :math:`C_l > 0` and :math:`C_u \ge 0` (the paper's :math:`M_l, M_u`).
    big_m : float, optional
        The constant :math:`M`. Default: a value that provably keeps every optimum feasible,
        :math:`M = 1 + 4\sqrt{U} R + 2U / (C_l \min_{I_l} c_i)` with
        :math:`U = C_l \sum_{I_l} c_i + C_u \sum_{I_u} s_i` and
        :math:`R = \max_i \lVert x_i \rVert`.
        Derivation: :math:`w = 0, b = \bar y_l` is feasible (also under the balance constraint)
        with objective at most :math:`2U`, so at an optimum :math:`\lVert w \rVert \le 2\sqrt U`;
        a labeled sample's hinge term is at most :math:`2U` too, which bounds :math:`|b|` by
        :math:`2\sqrt U R + 2U/(C_l \min c_i)`, hence :math:`1 + |f(x_i)| \le M` for every sample.
    balance : {"none", "constraint", "cost"}
        Imbalance handling of the paper's experiments (notes/aid.md section 4.8). ``"constraint"``
        adds :math:`\sum_{I_u} s_i f(x_i) / \sum_{I_u} s_i = \sum_{I_l} s_i y_i / \sum_{I_l} s_i`
        (the paper's rule with weights; it aggregates exactly). ``"cost"`` multiplies the labeled
        weights of the *minority* class by the class-size ratio, :math:`c_i = s_i \max(1,
        S_l^{\mp} / S_l^{\pm})` with :math:`S_l^\pm` the class weight sums (the note's
        correction: the printed ratios favour the majority).
    sample_weight : array of shape (n,), optional
        Sample weights :math:`s_i` (not also in ``data``).

    Notes
    -----
    Layers ``"matrix"`` (for SCIP's native interface), ``"pyomo"`` and ``"cvxpy"``. The solution
    holds ``"w"`` (m,), ``"intercept"`` (1,), ``"labels"`` (n,): the given labels on labeled samples
    and :math:`\operatorname{sign} f(x_i)` (+1 at 0) on unlabeled ones, and ``"xi"`` (n,) the hinge
    terms. The per-sample loss is not convex in :math:`f`, so aggregating samples gives no lower
    bound (notes/aid.md section 4.7): :attr:`convex_sample_loss` is False.
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.MIQP
    layers: ClassVar[tuple[str, ...]] = ("matrix", "pyomo", "cvxpy")
    is_classifier: ClassVar[bool] = True
    convex_sample_loss: ClassVar[bool] = False
    sample_duals: ClassVar[tuple[str, ...]] = ()
    structures: ClassVar[tuple[type[Structure], ...]] = (PiecewiseLinearSampleLoss,)

    data: Dataset
    C_labeled: float = 5.0
    C_unlabeled: float = 1.0
    big_m: float | None = None
    balance: str = "none"
    sample_weight: ArrayLike | None = None
    _s: NDArray[np.float64] = field(init=False, repr=False)
    _cost: NDArray[np.float64] = field(init=False, repr=False)

    @property
    def always_feasible_and_bounded(self) -> bool:  # type: ignore[override]
        """False with the balance constraint (a solver may rightly call it infeasible)."""
        return self.balance != "constraint"

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        y = self.data.y
        assert y is not None
        bad = np.unique(y[~np.isin(y, (-1.0, 0.0, 1.0))])
        if bad.size:
            shown = ", ".join(f"{v:g}" for v in bad[:6])
            raise DataError(
                f"{self.name} needs y in {{-1, 0, +1}} (0 = unlabeled); y also holds {shown}"
            )
        for label, name in ((1.0, "+1"), (-1.0, "-1")):
            if not np.any(y == label):
                raise DataError(f"{self.name} needs at least one sample labeled {name}")
        if not np.any(y == 0):
            raise DataError(
                f"{self.name} needs unlabeled samples (y == 0); with every label known, use "
                "WeightedSVM"
            )
        for name in ("C_labeled", "C_unlabeled"):
            value = check_number(
                getattr(self, name), name, self.name, low=0.0, strict=name == "C_labeled"
            )
            object.__setattr__(self, name, value)
        if self.balance not in BALANCES:
            raise ModelError(
                f"{self.name}: balance must be one of {BALANCES}; got {self.balance!r}"
            )
        s = resolve_weights(self.data, self.sample_weight, self.name)
        if not np.any(s[y != 0] > 0) or not np.any(s[y == 0] > 0):
            raise DataError(f"{self.name}: the labeled and the unlabeled weights must not all be 0")
        cost = s.copy()
        if self.balance == "cost":
            # class weight sums (counts for unit weights), so the rule survives aggregation
            plus, minus = s[y == 1].sum(), s[y == -1].sum()
            cost[y == 1] *= max(1.0, minus / plus)
            cost[y == -1] *= max(1.0, plus / minus)
        object.__setattr__(self, "_s", s)
        object.__setattr__(self, "_cost", cost)
        if self.big_m is not None:
            object.__setattr__(
                self, "big_m", check_number(self.big_m, "big_m", self.name, low=1.0, strict=True)
            )

    @classmethod
    def examples(cls) -> tuple[SemiSupervisedSVM, ...]:
        """Twenty samples, eight labeled (an MIQP with twelve binaries)."""
        from optframe.data import make_classification_svm

        data = make_classification_svm(20, 2, separation=3.0, random_state=0)
        y = np.where(np.arange(20) < 8, data.y, 0.0)
        return (cls(Dataset(X=data.X, y=y), C_labeled=5.0, C_unlabeled=1.0),)

    # ------------------------------------------------------------------------------- helpers
    @property
    def weights(self) -> NDArray[np.float64]:
        """The sample weights :math:`s_i`."""
        return self._s

    @property
    def _y(self) -> NDArray[np.float64]:
        assert self.data.y is not None
        return self.data.y

    @property
    def labeled(self) -> NDArray[np.intp]:
        """Indices of the labeled samples."""
        return np.flatnonzero(self._y != 0)

    @property
    def unlabeled(self) -> NDArray[np.intp]:
        """Indices of the unlabeled samples."""
        return np.flatnonzero(self._y == 0)

    def solver_bound_doubt(self) -> str | None:
        """Why SCIP's bound is withheld on this data, or None.

        The bound is withheld when the feature columns' norms span more than
        :data:`TRUSTED_COLUMN_SPREAD`. With one standardized column times 1e6 or 1e-6, SCIP's
        branch-and-bound bound on this big-M model lay up to 55 % above the optimum found by
        enumerating the labels (a false OPTIMAL); standardized and uniformly scaled features
        gave none.
        """
        X = self.data.X
        if sp.issparse(X):
            norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=0)).ravel())
        else:
            norms = np.linalg.norm(np.asarray(X), axis=0)
        norms = norms[norms > 0]
        if norms.size < 2:
            return None
        spread = float(norms.max() / norms.min())
        if spread <= TRUSTED_COLUMN_SPREAD:
            return None
        return (
            f"the feature columns' norms span {spread:.2g} (more than "
            f"{TRUSTED_COLUMN_SPREAD:g}): the mixed-integer solver's bound is not trusted on "
            "features this badly scaled; standardize them to get a bound"
        )

    @property
    def safe_big_m(self) -> float:
        """The :math:`M` used: ``big_m`` or the provably safe default (see the class docstring)."""
        if self.big_m is not None:
            return float(self.big_m)
        lab, unl = self.labeled, self.unlabeled
        U = self.C_labeled * self._cost[lab].sum() + self.C_unlabeled * self._s[unl].sum()
        X = self.data.X
        squared = X.multiply(X).sum(axis=1) if sp.issparse(X) else np.einsum("ij,ij->i", X, X)
        R = math.sqrt(float(np.max(squared)))
        smallest = float(np.min(self._cost[lab][self._cost[lab] > 0]))
        return 1.0 + 4.0 * math.sqrt(U) * R + 2.0 * U / (self.C_labeled * smallest)

    def _balance_row(self, X: Any = None) -> tuple[NDArray[np.float64], float]:
        lab, unl = self.labeled, self.unlabeled
        s = self._s
        X = self.data.X if X is None else X
        mean_x = np.asarray(s[unl] @ X[unl]).ravel() / s[unl].sum()
        target = float(s[lab] @ self._y[lab]) / s[lab].sum()
        return mean_x, target

    def _design(self) -> tuple[Any, NDArray[np.float64] | None]:
        r"""The feature matrix to build with, and the basis that maps its weights back.

        With fewer samples than features (every aggregated problem), an optimal :math:`w` lies in
        the row space of :math:`X` (a component orthogonal to every :math:`x_i` changes no
        :math:`f(x_i)` and only adds to :math:`\lVert w\rVert^2`; the balance row is a mean of
        rows). With :math:`X X^\top = U \Lambda U^\top` and :math:`V = X^\top U
        \Lambda^{-1/2}` (orthonormal columns), the problem in :math:`v` with features
        :math:`X V = U \Lambda^{1/2}` is the same problem, :math:`w = V v`, and has
        :math:`\operatorname{rank} X \le n` weights instead of :math:`m`. SCIP solves it much
        faster: 2.8 s against 84 s for 17 aggregated Digit1 samples of 241 features.
        """
        X = self.data.X
        n, m = X.shape
        if n >= m:
            return X, None
        gram = X @ X.T
        gram = gram.toarray() if sp.issparse(gram) else np.asarray(gram)
        eigenvalues, U = np.linalg.eigh(0.5 * (gram + gram.T))
        keep = eigenvalues > max(float(eigenvalues[-1]), 1e-300) * n * 1e-13
        root = np.sqrt(eigenvalues[keep])
        V = np.asarray(X.T @ (U[:, keep] / root))
        return U[:, keep] * root, V

    def _solution(self, w: ArrayLike, b: float) -> dict[str, NDArray[np.float64]]:
        w = np.asarray(w, dtype=np.float64).reshape(-1)
        f = np.asarray(self.data.X @ w).ravel() + b
        y = self._y
        labels = np.where(y != 0, y, np.where(f >= 0, 1.0, -1.0))
        return {
            "w": w,
            "intercept": np.array([b]),
            "labels": labels,
            "xi": np.maximum(0.0, 1.0 - labels * f),
        }

    def _formulation(
        self, layer: str, problem: Any, variables: dict[str, Any], basis: NDArray | None
    ) -> Formulation:
        def recover(raw: RawSolution) -> dict[str, NDArray[np.float64]]:
            w = np.asarray(raw.primal["w"], dtype=np.float64).reshape(-1)
            w = w if basis is None else basis @ w
            return self._solution(w, float(np.ravel(raw.primal["intercept"])[0]))

        return Formulation(layer, problem, ProblemClass.MIQP, variables, recover=recover)

    # ---------------------------------------------------------------------------- layers
    def _build_matrix(self, form: str) -> Formulation:
        design, basis = self._design()
        X = sp.csr_array(design, dtype=np.float64)
        y, M = self._y, self.safe_big_m
        lab, unl = self.labeled, self.unlabeled
        m, n_l, n_u = X.shape[1], lab.size, unl.size
        # x = [w (m), b, xi (n_l), eta+ (n_u), eta- (n_u), z (n_u)]
        Xl, Xu = sp.csc_array(X[lab]), sp.csc_array(X[unl])
        ones_u, none_u, empty_u = (
            column(np.ones(n_u)),
            column(np.zeros(n_u)),
            sp.csc_array((n_u, m)),
        )
        zero_u = sp.csc_array((n_u, n_u))
        zero_ul = sp.csc_array((n_u, n_l))
        yl = y[lab]
        blocks = [
            [sp.csc_array(Xl.multiply(yl[:, None])), column(yl), eye(n_l), sp.csc_array((n_l, n_u)),
             sp.csc_array((n_l, n_u)), sp.csc_array((n_l, n_u))],
            [Xu, ones_u, zero_ul, eye(n_u), zero_u, -M * eye(n_u)],
            [empty_u, none_u, zero_ul, eye(n_u), zero_u, -M * eye(n_u)],
            [-Xu, -ones_u, zero_ul, zero_u, eye(n_u), M * eye(n_u)],
            [empty_u, none_u, zero_ul, zero_u, eye(n_u), M * eye(n_u)],
        ]  # fmt: skip
        inf = np.inf
        row_lower = [np.ones(n_l), np.full(n_u, 1.0 - M), np.full(n_u, -inf), np.ones(n_u),
                     np.full(n_u, -inf)]  # fmt: skip
        row_upper = [np.full(n_l, inf), np.full(n_u, inf), np.zeros(n_u), np.full(n_u, inf),
                     np.full(n_u, M)]  # fmt: skip
        if self.balance == "constraint":
            mean_x, target = self._balance_row(X)
            width = n_l + 3 * n_u
            blocks.append(
                [sp.csc_array(mean_x.reshape(1, -1)), column([1.0]), sp.csc_array((1, width))]
            )
            row_lower.append(np.array([target]))
            row_upper.append(np.array([target]))
        A = sp.vstack([sp.hstack(row, format="csc") for row in blocks], format="csc")
        N = m + 1 + n_l + 3 * n_u
        k = m + 1 + n_l
        unlabeled_cost = self.C_unlabeled * np.tile(self._s[unl], 2)
        c = np.concatenate(
            [np.zeros(m + 1), self.C_labeled * self._cost[lab], unlabeled_cost, np.zeros(n_u)]
        )
        P = sp.diags(np.concatenate([np.ones(m), np.zeros(N - m)]), format="csc")
        integrality = np.zeros(N, dtype=bool)
        integrality[k + 2 * n_u :] = True
        problem = MatrixProblem(
            c=c,
            A=A,
            row_lower=np.concatenate(row_lower),
            row_upper=np.concatenate(row_upper),
            lower=np.concatenate([np.full(m + 1, -inf), np.zeros(n_l + 3 * n_u)]),
            upper=np.concatenate([np.full(m + 1 + n_l, inf), np.full(2 * n_u, M), np.ones(n_u)]),
            P=P,
            integrality=integrality,
        )
        variables = {"w": slice(0, m), "intercept": slice(m, m + 1), "z": slice(k + 2 * n_u, N)}
        return self._formulation("matrix", problem, variables, basis)

    def _build_pyomo(self, form: str) -> Formulation:
        import pyomo.environ as pyo

        design, basis = self._design()
        X = sp.csr_array(design, dtype=np.float64)
        y, M = self._y, self.safe_big_m
        lab, unl = list(self.labeled), list(self.unlabeled)
        m = X.shape[1]
        mdl = pyo.ConcreteModel(name=self.name)
        mdl.J = pyo.RangeSet(0, m - 1)
        mdl.w = pyo.Var(mdl.J)
        mdl.intercept = pyo.Var()
        mdl.xi = pyo.Var(lab, domain=pyo.NonNegativeReals)
        mdl.eta_plus = pyo.Var(unl, bounds=(0, M))
        mdl.eta_minus = pyo.Var(unl, bounds=(0, M))
        mdl.z = pyo.Var(unl, domain=pyo.Binary)

        def f(i: int) -> Any:
            return row_dot(X, i, mdl.w) + mdl.intercept

        mdl.margin = pyo.Constraint(lab, rule=lambda mdl, i: y[i] * f(i) + mdl.xi[i] >= 1)
        mdl.plus = pyo.Constraint(
            unl, rule=lambda mdl, i: f(i) + mdl.eta_plus[i] + M * (1 - mdl.z[i]) >= 1
        )
        mdl.plus_off = pyo.Constraint(unl, rule=lambda mdl, i: mdl.eta_plus[i] <= M * mdl.z[i])
        mdl.minus = pyo.Constraint(
            unl, rule=lambda mdl, i: -f(i) + mdl.eta_minus[i] + M * mdl.z[i] >= 1
        )
        mdl.minus_off = pyo.Constraint(
            unl, rule=lambda mdl, i: mdl.eta_minus[i] <= M * (1 - mdl.z[i])
        )
        if self.balance == "constraint":
            mean_x, target = self._balance_row(X)
            mdl.balance = pyo.Constraint(
                expr=sum(mean_x[j] * mdl.w[j] for j in range(m)) + mdl.intercept == target
            )
        mdl.objective = pyo.Objective(
            expr=0.5 * sum(mdl.w[j] ** 2 for j in range(m))
            + self.C_labeled * sum(self._cost[i] * mdl.xi[i] for i in lab)
            + self.C_unlabeled * sum(self._s[i] * (mdl.eta_plus[i] + mdl.eta_minus[i]) for i in unl)
        )
        variables = {"w": mdl.w, "intercept": mdl.intercept, "z": mdl.z}
        return self._formulation("pyomo", mdl, variables, basis)

    def _build_cvxpy(self, form: str) -> Formulation:
        import cvxpy as cp

        (X, basis), y, M = self._design(), self._y, self.safe_big_m
        lab, unl = self.labeled, self.unlabeled
        w, b = cp.Variable(X.shape[1], name="w"), cp.Variable(1, name="intercept")
        xi = cp.Variable(lab.size, nonneg=True)
        eta_plus, eta_minus = cp.Variable(unl.size, nonneg=True), cp.Variable(unl.size, nonneg=True)
        z = cp.Variable(unl.size, boolean=True)
        fl, fu = X[lab] @ w + b, X[unl] @ w + b
        constraints = [
            cp.multiply(y[lab], fl) + xi >= 1,
            fu + eta_plus + M * (1 - z) >= 1,
            eta_plus <= M * z,
            -fu + eta_minus + M * z >= 1,
            eta_minus <= M * (1 - z),
        ]
        if self.balance == "constraint":
            mean_x, target = self._balance_row(X)
            constraints.append(mean_x @ w + b == target)
        objective = (
            cp.sum_squares(w) / 2
            + self.C_labeled * (self._cost[lab] @ xi)
            + self.C_unlabeled * (self._s[unl] @ (eta_plus + eta_minus))
        )
        problem = cp.Problem(cp.Minimize(objective), constraints)
        return self._formulation("cvxpy", problem, {"w": w, "intercept": b, "z": z}, basis)

    # ------------------------------------------------------------------------- oracle
    def to_latex(self, form: str = "primal") -> str:
        r"""The mixed-integer QP of Bennett and Demiriz in LaTeX, with this instance's numbers.

        Examples
        --------
        >>> from optframe.data import Dataset
        >>> data = Dataset(X=[[0.0], [1.0], [2.0], [3.0]], y=[1.0, 0.0, 0.0, -1.0])
        >>> text = SemiSupervisedSVM(data, big_m=10.0).to_latex()
        >>> r"z_i \in \{0, 1\}" in text, r"M = 10" in text
        (True, True)
        """
        from ._risk_latex import _coefficient, _num

        self.check_form(form)
        m = self.data.n_features
        labeled, unlabeled = self.labeled.size, self.unlabeled.size
        cost = "c_i" if self.balance == "cost" else "s_i"
        lines = [
            rf"\min_{{w \in \mathbb{{R}}^{{{m}}},\, b,\, \xi,\, \eta^\pm,\, z}} "
            rf"\tfrac12\lVert w\rVert^2 + {_coefficient(self.C_labeled)}"
            rf"\sum_{{i \in I_l}} {cost}\,\xi_i"
            rf" + {_coefficient(self.C_unlabeled)}\sum_{{i \in I_u}} s_i(\eta^+_i + \eta^-_i)",
            r"\text{s.t. } y_i(x_i^\top w + b) + \xi_i \ge 1,\ \xi_i \ge 0,\quad i \in I_l",
            r"x_i^\top w + b + \eta^+_i + M(1 - z_i) \ge 1,\ 0 \le \eta^+_i \le M z_i,"
            r"\quad i \in I_u",
            r"-(x_i^\top w + b) + \eta^-_i + M z_i \ge 1,\ 0 \le \eta^-_i \le M(1 - z_i),\ "
            r"z_i \in \{0, 1\},\quad i \in I_u",
        ]
        if self.balance == "constraint":
            lines.append(
                r"\frac{\sum_{I_u} s_i(x_i^\top w + b)}{\sum_{I_u} s_i} = "
                r"\frac{\sum_{I_l} s_i y_i}{\sum_{I_l} s_i}"
            )
        lines.append(
            rf"\lvert I_l\rvert = {labeled},\ \lvert I_u\rvert = {unlabeled},\ "
            rf"M = {_num(self.safe_big_m)}"
        )
        if self.balance == "cost":
            lines.append(
                r"c_i = s_i \max(1, S_l^{\mp} / S_l^{\pm})\ \text{(the minority class weighted up)}"
            )
        return r" \\ ".join(lines)

    def objective(self, solution: Solution) -> float:
        r"""Evaluate the objective with the best labels (Lemma 1).

        .. math:: \tfrac12\lVert w\rVert^2 + C_l\sum_{I_l} c_i[1 - y_i f_i]_+
                  + C_u\sum_{I_u} s_i[1 - |f_i|]_+
        """
        w = vector(solution, "w", self.name)
        f = np.asarray(self.data.X @ w).ravel() + scalar(solution, "intercept")
        y = self._y
        labeled = y != 0
        hinge = np.where(labeled, np.maximum(0.0, 1.0 - y * f), np.maximum(0.0, 1.0 - np.abs(f)))
        penalty = np.where(labeled, self.C_labeled * self._cost, self.C_unlabeled * self._s)
        return 0.5 * float(w @ w) + float(penalty @ hinge)

    def violation(self, solution: Solution) -> float:
        """The balance constraint's violation (0 without it)."""
        if self.balance != "constraint":
            return 0.0
        mean_x, target = self._balance_row()
        w = vector(solution, "w", self.name)
        return abs(float(mean_x @ w) + scalar(solution, "intercept") - target)

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r"""Decision values :math:`w^\top x + b`."""
        X = check_features(X, self.data.n_features, self.name)
        return np.asarray(X @ vector(solution, "w", self.name)).ravel() + scalar(
            solution, "intercept"
        )

    # ------------------------------------------------------ piecewise-linear sample structure
    def _structure(self, kind: type[Structure]) -> PiecewiseLinearSampleLoss:
        """The hinge of the labeled rows and the four pieces of the unlabeled rows' loss.

        The labeled groups 0 and 2 (see :meth:`sample_groups`) are few samples without binary
        variables, which aggregation may keep as single samples; the embedding is the raw
        features, which needs no solution.
        """
        return PiecewiseLinearSampleLoss(
            self, singleton_groups=(0, 2), embedding_uses_solution=False
        )

    def with_data(self, data: Dataset) -> SemiSupervisedSVM:
        """The same S3VM (penalties, M, balance rule) on other samples weighted by ``data``."""
        return SemiSupervisedSVM(
            data,
            C_labeled=self.C_labeled,
            C_unlabeled=self.C_unlabeled,
            big_m=self.safe_big_m,
            balance=self.balance,
        )

    def sample_groups(self) -> NDArray[np.int64]:
        """Labeled -1, labeled +1 and unlabeled samples are clustered separately."""
        return (self._y + 1).astype(np.int64)

    def loss_argument(self, solution: Solution) -> NDArray[np.float64]:
        """The decision values :math:`f(x_i)` (the loss of every sample is a function of them)."""
        return self.decision_function(solution, self.data.X)

    def loss_pieces(self, solution: Solution) -> NDArray[np.int64]:
        r"""Labeled: 1 where :math:`1 - y_i f > 0`, else 0. Unlabeled: the four intervals of f.

        :math:`f \le -1`, :math:`-1 < f \le 0`, :math:`0 < f < 1`, :math:`f \ge 1` (the region
        sets :math:`I^{--}, I^{+-}, I^{++}, I^{-+}` of notes/aid.md section 4.4) get 0, 1, 2, 3.
        """
        f = self.loss_argument(solution)
        y = self._y
        unlabeled = np.select([f <= -1, f <= 0, f < 1], [0, 1, 2], default=3)
        return np.where(y != 0, (1.0 - y * f > 0).astype(np.int64), unlabeled)

    def sample_embedding(self, solution: Solution | None) -> NDArray[np.float64]:
        """The raw features (the paper clusters S3VM samples in input space)."""
        X = self.data.X
        return X.toarray() if sp.issparse(X) else np.asarray(X, dtype=np.float64)

    def complete_solution(self, solution: Solution) -> dict[str, NDArray[np.float64]]:
        """The solution on this model's samples from ``w`` and ``intercept``."""
        return self._solution(vector(solution, "w", self.name), scalar(solution, "intercept"))
