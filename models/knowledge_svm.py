r"""The elastic-net SVM with Fung-Mangasarian polyhedral knowledge penalties (HIPAD's ENK-SVM)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import scipy.linalg as la
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import ElasticNetKnowledge, Structure
from optframe.data import Dataset
from optframe.duality import balance
from optframe.errors import DataError, ModelError
from optframe.model import Formulation, Model, ProblemClass, RawSolution, Solution
from optframe.registry import register_model

from ._common import check_dataset, check_features, check_number, resolve_weights, scalar, vector

__all__ = ["InfeasibleKnowledge", "KnowledgeBasedSVM", "KnowledgeSet"]


class InfeasibleKnowledge(ModelError):
    r"""A knowledge polyhedron :math:`\{x : Bx \le d\}` is empty, so its implication is void."""


def _matrix(value: Any, what: str) -> NDArray[np.float64]:
    if sp.issparse(value):
        value = value.toarray()
    try:
        out = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ModelError(f"KnowledgeSet: {what} could not be read as numbers: {exc}") from None
    if not np.all(np.isfinite(out)):
        raise ModelError(f"KnowledgeSet: {what} contains NaN or inf")
    return out


def _polyhedron_is_empty(A: NDArray[np.float64], d: NDArray[np.float64]) -> bool:
    r"""Whether :math:`\{x : Ax \le d\}` is empty: a phase-1 LP (HiGHS through scipy)."""
    from scipy.optimize import linprog

    k, m = A.shape
    # min s  s.t.  A x - s <= d, s >= 0: the polyhedron is empty iff the optimum is positive.
    A_ub = sp.hstack([sp.csr_array(A), sp.csr_array(-np.ones((k, 1)))], format="csr")
    cost = np.zeros(m + 1)
    cost[-1] = 1.0
    bounds = [(None, None)] * m + [(0.0, None)]
    res = linprog(cost, A_ub=A_ub, b_ub=d, bounds=bounds, method="highs")
    if res.status != 0:
        raise ModelError(f"KnowledgeSet: the feasibility LP failed ({res.message})")
    return bool(res.fun > 1e-9 * (1.0 + float(np.max(np.abs(d)))))


@dataclass(frozen=True, eq=False)
class KnowledgeSet:
    r"""Polyhedral prior knowledge: :math:`Bx \le d \Rightarrow \text{label}\,(w^\top x + b) \ge 1`.

    By the nonhomogeneous Farkas theorem (for a non-empty polyhedron) the implication holds iff
    some :math:`u \ge 0` has :math:`B^\top u + \text{label}\cdot w = 0` and
    :math:`d^\top u - \text{label}\cdot b + 1 \le 0`; :class:`KnowledgeBasedSVM` penalizes the
    violation of these conditions.

    Parameters
    ----------
    B : array of shape (k, m)
        The polyhedron's rows (dense or sparse; stored dense).
    d : array of shape (k,)
        The right-hand side.
    label : {+1, -1}
        The class the polyhedron belongs to.
    B_fixed : array of shape (k, r), optional
        Columns of the polyhedron on features whose weight is fixed at 0 (a feature-restricted
        model keeps them: they add :math:`\lVert B_{\text{fixed}}^\top u\rVert^2` to the penalty);
        empty by default.

    Raises
    ------
    ModelError
        If the shapes disagree, an entry is not finite, ``label`` is not +1 or -1, or ``B`` has no
        row.
    InfeasibleKnowledge
        If the polyhedron :math:`\{(x, z) : Bx + B_{\text{fixed}} z \le d\}` is empty (checked by a
        phase-1 LP).
    """

    B: ArrayLike
    d: ArrayLike
    label: float = 1.0
    B_fixed: ArrayLike | None = None

    def __post_init__(self) -> None:
        B = _matrix(self.B, "B")
        if B.ndim == 1:
            B = B.reshape(1, -1)
        if B.ndim != 2 or B.shape[0] == 0:
            raise ModelError(f"KnowledgeSet: B must be a non-empty 2-D matrix; got {B.shape}")
        d = _matrix(self.d, "d").reshape(-1)
        if d.shape[0] != B.shape[0]:
            raise ModelError(
                f"KnowledgeSet: d has {d.shape[0]} entries but B has {B.shape[0]} rows"
            )
        if self.label not in (1, -1):
            raise ModelError(f"KnowledgeSet: label must be +1 or -1; got {self.label!r}")
        fixed = np.zeros((B.shape[0], 0)) if self.B_fixed is None else _matrix(self.B_fixed, "")
        if fixed.ndim != 2 or fixed.shape[0] != B.shape[0]:
            raise ModelError(
                f"KnowledgeSet: B_fixed must have {B.shape[0]} rows; got shape {fixed.shape}"
            )
        object.__setattr__(self, "B", B)
        object.__setattr__(self, "d", d)
        object.__setattr__(self, "label", float(self.label))
        object.__setattr__(self, "B_fixed", fixed)
        if _polyhedron_is_empty(np.hstack([B, fixed]), d):
            raise InfeasibleKnowledge(
                f"KnowledgeSet (label {self.label:+g}): the polyhedron B x <= d is empty, so "
                "'B x <= d implies the label' says nothing and its Farkas form is invalid; "
                "check the signs of B and d"
            )

    @property
    def n_rows(self) -> int:
        """Number of rows k (the size of this set's multiplier :math:`u`)."""
        return int(self.B.shape[0])  # type: ignore[union-attr]

    def gram(self) -> NDArray[np.float64]:
        r""":math:`BB^\top + B_{\text{fixed}}B_{\text{fixed}}^\top`, shape (k, k)."""
        B, F = self.B, self.B_fixed
        return B @ B.T + F @ F.T  # type: ignore[operator,union-attr]

    def restricted(self, support: NDArray[np.intp], exact: bool = True) -> KnowledgeSet:
        """The set on the columns ``support``; dropped columns go to ``B_fixed`` if ``exact``."""
        B = np.asarray(self.B)
        keep = np.zeros(B.shape[1], dtype=bool)
        keep[support] = True
        fixed = [np.asarray(self.B_fixed)]
        if exact:
            dropped = B[:, ~keep]
            fixed.append(dropped[:, np.any(dropped != 0, axis=0)])
        return KnowledgeSet(B[:, support], self.d, self.label, np.hstack(fixed))


@register_model
@dataclass(frozen=True, eq=False)
class KnowledgeBasedSVM(Model):
    r"""Elastic-net SVM plus penalized polyhedral knowledge (the ENK-SVM of Qin et al., HIPAD).

    .. math::

        \min_{w, b, u_k \ge 0} \;
        \frac{1}{N}\sum_{i=1}^N s_i \bigl(1 - y_i(x_i^\top w + b)\bigr)_+
        + \lambda_1 \lVert w\rVert_1 + \frac{\lambda_2}{2}\lVert w\rVert_2^2
        + \sum_k \Bigl[\frac{\rho}{2}\bigl(\lVert B_k^\top u_k + \ell_k w\rVert^2
        + \lVert F_k^\top u_k\rVert^2\bigr)
        + \rho_h \bigl(d_k^\top u_k - \ell_k b + 1\bigr)_+\Bigr]

    for knowledge sets :math:`(B_k, d_k, \ell_k, F_k)` (:class:`KnowledgeSet`, label
    :math:`\ell_k`, ``B_fixed`` :math:`F_k`). With no knowledge sets it is the elastic-net
    (doubly regularized) SVM; the intercept :math:`b` is not penalized. The knowledge terms penalize
    the Farkas conditions of "B_k x <= d_k implies label l_k" (hipad.md section 4).

    Parameters
    ----------
    data : Dataset
        Features (dense or sparse) and labels in {-1, +1}, both classes present; the sample
        weights :math:`s` are ``data.sample_weight`` (ones by default).
    lam1 : float
        :math:`\lambda_1 \ge 0`, the l1 weight.
    lam2 : float
        :math:`\lambda_2 > 0`, the l2 weight.
    knowledge : sequence of KnowledgeSet
        The knowledge sets (default none).
    rho : float
        :math:`\rho \ge 0`, the weight of the squared Farkas residuals.
    rho_hinge : float, optional
        :math:`\rho_h \ge 0`, the weight of the hinge on the Farkas inequality (default ``rho``).

    Raises
    ------
    DataError
        If ``data`` is not a labelled Dataset, labels are not in {-1, +1}, or a class is missing.
    ModelError
        If ``lam1 < 0``, ``lam2 <= 0``, ``rho < 0`` or ``rho_hinge < 0``, a parameter is not
        finite, or a knowledge set's ``B`` does not have one column per feature.
    InfeasibleKnowledge
        From :class:`KnowledgeSet`, for an empty polyhedron.

    Notes
    -----
    Layers: ``"cvxpy"`` (a QP after cvxpy's l1 epigraph) and ``"pyomo"`` (the same QP written out:
    :math:`t_j \ge \lvert w_j\rvert` rows, the Farkas squares expanded as
    :math:`u^\top(BB^\top + FF^\top)u + 2\ell w^\top B^\top u + \lVert w\rVert^2`). Solution
    names:

    * ``"w"`` (m,), ``"intercept"`` (1,);
    * ``"u"``: the multipliers of all knowledge sets concatenated in order (``sum k_j``,);
    * ``"alpha"`` (N,): the multipliers of the margin rows, in :math:`[0, s_i/N]`;
    * ``"beta"`` (one per set): the multipliers of the knowledge hinges, in :math:`[0, \rho_h]`.

    ``alpha`` and ``beta`` are what :meth:`kkt_residuals` needs; they come from the solver's duals
    (Direct) or from the ADMM multipliers.

    Examples
    --------
    >>> import optframe as of
    >>> from optframe.data import Dataset
    >>> from optframe.models import KnowledgeBasedSVM
    >>> data = Dataset(X=[[0.0], [1.0], [3.0], [4.0]], y=[-1, -1, 1, 1])
    >>> result = of.solve(KnowledgeBasedSVM(data, lam1=0.01, lam2=0.1))
    >>> round(float(result.solution["w"][0]), 4)
    1.0
    """

    problem_class: ClassVar[ProblemClass] = ProblemClass.QP
    layers: ClassVar[tuple[str, ...]] = ("cvxpy", "pyomo")
    is_classifier: ClassVar[bool] = True
    structures: ClassVar[tuple[type[Structure], ...]] = (ElasticNetKnowledge,)

    data: Dataset
    lam1: float = 0.01
    lam2: float = 0.01
    knowledge: Sequence[KnowledgeSet] = ()
    rho: float = 1.0
    rho_hinge: float | None = None
    _s: NDArray[np.float64] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        check_dataset(self.data, self.name)
        y = self._y
        if np.any((y != 1.0) & (y != -1.0)):
            raise DataError(f"{self.name} needs labels in {{-1, +1}}; map 0/1 with y = 2 y - 1.")
        for label in (1.0, -1.0):
            if not np.any(y == label):
                raise DataError(f"{self.name} needs both classes; class {label:+g} is missing.")
        rho_hinge = self.rho if self.rho_hinge is None else self.rho_hinge
        for name, value, strict in (
            ("lam1", self.lam1, False),
            ("lam2", self.lam2, True),
            ("rho", self.rho, False),
            ("rho_hinge", rho_hinge, False),
        ):
            number = check_number(value, name, self.name, low=0.0, strict=strict)
            object.__setattr__(self, name, number)
        knowledge = tuple(self.knowledge)
        m = self.data.n_features
        for index, kset in enumerate(knowledge):
            if not isinstance(kset, KnowledgeSet):
                raise ModelError(
                    f"{self.name}: knowledge[{index}] must be a KnowledgeSet; "
                    f"got {type(kset).__name__}"
                )
            if kset.B.shape[1] != m:  # type: ignore[union-attr]
                raise ModelError(
                    f"{self.name}: knowledge[{index}].B has {kset.B.shape[1]} columns "  # type: ignore[union-attr]
                    f"but the data has {m} features"
                )
        object.__setattr__(self, "knowledge", knowledge)
        object.__setattr__(self, "_s", resolve_weights(self.data, None, self.name))

    @classmethod
    def examples(cls) -> tuple[KnowledgeBasedSVM, ...]:
        """Without knowledge, and with one polyhedral set per class."""
        from optframe.data import make_classification_svm

        data = make_classification_svm(40, 3, separation=1.5, random_state=0)
        box = np.vstack([np.eye(3), -np.eye(3)])
        sets = (
            KnowledgeSet(B=box, d=np.r_[3.0, 3.0, 3.0, -1.0, 0.0, 0.0], label=1.0),
            KnowledgeSet(B=box, d=np.r_[-1.0, 0.0, 0.0, 3.0, 3.0, 3.0], label=-1.0),
        )
        return cls(data, lam1=0.05, lam2=0.1), cls(data, lam1=0.05, lam2=0.1, knowledge=sets)

    # ----------------------------------------------------------------------------------- helpers
    @property
    def _y(self) -> NDArray[np.float64]:
        assert self.data.y is not None
        return self.data.y

    @property
    def weights(self) -> NDArray[np.float64]:
        """The sample weights :math:`s`, shape (N,)."""
        return self._s

    @property
    def hinge_costs(self) -> NDArray[np.float64]:
        r"""Per-sample hinge weights :math:`s_i / N` (the box of ``alpha``)."""
        return self._s / self.data.n_samples

    @property
    def knowledge_offsets(self) -> NDArray[np.intp]:
        """Where each set's multipliers start in ``"u"`` (length ``len(knowledge) + 1``)."""
        sizes = [k.n_rows for k in self.knowledge]
        return np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)

    def _split_u(self, solution: Solution) -> list[NDArray[np.float64]]:
        if not self.knowledge:
            return []
        u = vector(solution, "u", self.name)
        offsets = self.knowledge_offsets
        if u.size != offsets[-1]:
            raise ModelError(f"{self.name}: 'u' has {u.size} entries; expected {offsets[-1]}")
        return [u[offsets[j] : offsets[j + 1]] for j in range(len(self.knowledge))]

    def _parts(self, solution: Solution) -> dict[str, Any]:
        """Every piece of the objective at ``solution`` (shared by the oracle and the KKT check)."""
        w = vector(solution, "w", self.name)
        b = scalar(solution, "intercept")
        f = np.asarray(self.data.X @ w, dtype=np.float64) + b
        h = 1.0 - self._y * f
        us = self._split_u(solution)
        residuals, fixed, hinge_args = [], [], []
        for kset, u in zip(self.knowledge, us, strict=True):
            residuals.append(kset.B.T @ u + kset.label * w)  # type: ignore[union-attr]
            fixed.append(kset.B_fixed.T @ u)  # type: ignore[union-attr]
            hinge_args.append(float(kset.d @ u) - kset.label * b + 1.0)  # type: ignore[operator]
        return {"w": w, "b": b, "h": h, "u": us, "r": residuals, "rf": fixed, "q": hinge_args}

    # ------------------------------------------------------------------------------------ layers
    def _build_cvxpy(self, form: str) -> Formulation:
        import cvxpy as cp

        n, m = self.data.X.shape
        y = self._y
        w = cp.Variable(m, name="w")
        b = cp.Variable(name="intercept")
        xi = cp.Variable(n, nonneg=True, name="xi")
        X = self.data.X
        Z = sp.csr_array(X).multiply(y[:, None]).tocsr() if sp.issparse(X) else X * y[:, None]
        margin = Z @ w + y * b + xi >= 1.0
        objective = (
            self.hinge_costs @ xi + self.lam1 * cp.norm1(w) + self.lam2 / 2 * cp.sum_squares(w)
        )
        variables: dict[str, Any] = {"w": w, "intercept": b}
        constraints: dict[str, Any] = {"margin": margin}
        rows = [margin]
        if self.knowledge:
            u = cp.Variable(int(self.knowledge_offsets[-1]), nonneg=True, name="u")
            eta = cp.Variable(len(self.knowledge), nonneg=True, name="eta")
            offsets = self.knowledge_offsets
            hinge_rows = []
            for j, kset in enumerate(self.knowledge):
                uj = u[offsets[j] : offsets[j + 1]]
                objective = objective + self.rho / 2 * cp.sum_squares(
                    kset.B.T @ uj + kset.label * w
                )
                if kset.B_fixed.shape[1]:  # type: ignore[union-attr]
                    objective = objective + self.rho / 2 * cp.sum_squares(kset.B_fixed.T @ uj)
                hinge_rows.append(eta[j] - kset.d @ uj + kset.label * b)
            knowledge_hinge = cp.hstack(hinge_rows) >= 1.0
            objective = objective + self.rho_hinge * cp.sum(eta)
            rows.append(knowledge_hinge)
            variables["u"] = u
            constraints["knowledge_hinge"] = knowledge_hinge
        problem = cp.Problem(cp.Minimize(objective), rows)
        return Formulation(
            layer="cvxpy",
            problem=problem,
            problem_class=ProblemClass.QP,
            variables=variables,
            constraints=constraints,
            recover=self._recover,
            form=form,
        )

    def _build_pyomo(self, form: str) -> Formulation:
        import pyomo.environ as pyo

        n, m = self.data.X.shape
        y, cost = self._y, self.hinge_costs
        Z = sp.csr_array(self.data.X).multiply(y[:, None]).tocsr()
        mdl = pyo.ConcreteModel(name=self.name)
        mdl.w = pyo.Var(range(m))
        mdl.intercept = pyo.Var(range(1))
        mdl.xi = pyo.Var(range(n), within=pyo.NonNegativeReals)
        mdl.t = pyo.Var(range(m), within=pyo.NonNegativeReals)  # t_j >= |w_j|
        mdl.upper = pyo.Constraint(range(m), rule=lambda mdl, j: mdl.t[j] >= mdl.w[j])
        mdl.lower = pyo.Constraint(range(m), rule=lambda mdl, j: mdl.t[j] >= -mdl.w[j])

        def margin_rule(mdl: Any, i: int) -> Any:
            lo, hi = Z.indptr[i], Z.indptr[i + 1]
            expr = pyo.quicksum(
                float(a) * mdl.w[int(j)]
                for a, j in zip(Z.data[lo:hi], Z.indices[lo:hi], strict=True)
            )
            return expr + float(y[i]) * mdl.intercept[0] + mdl.xi[i] >= 1.0

        mdl.margin = pyo.Constraint(range(n), rule=margin_rule)
        # ||B'u + l w||^2 = u'(BB' + FF')u + 2 l w'B'u + ||w||^2: the w-part joins the l2 term.
        ridge = 0.5 * (self.lam2 + self.rho * len(self.knowledge))
        objective = pyo.quicksum(float(cost[i]) * mdl.xi[i] for i in range(n))
        objective += self.lam1 * pyo.quicksum(mdl.t.values())
        objective += ridge * pyo.quicksum(mdl.w[j] ** 2 for j in range(m))
        variables: dict[str, Any] = {"w": mdl.w, "intercept": mdl.intercept}
        constraints: dict[str, Any] = {"margin": mdl.margin}
        if self.knowledge:
            offsets = self.knowledge_offsets
            mdl.u = pyo.Var(range(int(offsets[-1])), within=pyo.NonNegativeReals)
            mdl.eta = pyo.Var(range(len(self.knowledge)), within=pyo.NonNegativeReals)
            for k, kset in enumerate(self.knowledge):
                rows = range(offsets[k], offsets[k + 1])
                G = kset.gram()
                B = kset.B
                objective += (
                    0.5
                    * self.rho
                    * pyo.quicksum(
                        float(G[a - rows[0], c - rows[0]]) * mdl.u[a] * mdl.u[c]
                        for a in rows
                        for c in rows
                    )
                )
                objective += (
                    self.rho
                    * kset.label
                    * pyo.quicksum(
                        float(B[a - rows[0], j]) * mdl.w[int(j)] * mdl.u[a]  # type: ignore[index]
                        for a in rows
                        for j in np.flatnonzero(B[a - rows[0]])  # type: ignore[index]
                    )
                )

            def hinge_rule(mdl: Any, k: int) -> Any:
                kset = self.knowledge[k]
                du = pyo.quicksum(
                    float(kset.d[a - offsets[k]]) * mdl.u[a]  # type: ignore[index]
                    for a in range(offsets[k], offsets[k + 1])
                )
                return mdl.eta[k] - du + kset.label * mdl.intercept[0] >= 1.0

            mdl.knowledge_hinge = pyo.Constraint(range(len(self.knowledge)), rule=hinge_rule)
            objective += self.rho_hinge * pyo.quicksum(mdl.eta.values())
            variables["u"] = mdl.u
            constraints["knowledge_hinge"] = mdl.knowledge_hinge
        mdl.objective = pyo.Objective(expr=objective)
        return Formulation(
            layer="pyomo",
            problem=mdl,
            problem_class=ProblemClass.QP,
            variables=variables,
            constraints=constraints,
            recover=self._recover,
            form=form,
        )

    def _recover(self, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
        solution = {
            "w": np.asarray(raw.primal["w"], dtype=np.float64).reshape(-1),
            "intercept": np.asarray(raw.primal["intercept"], dtype=np.float64).reshape(1),
        }
        if self.knowledge:
            solution["u"] = np.maximum(np.asarray(raw.primal["u"], dtype=np.float64), 0.0)
        if "margin" in raw.dual:
            alpha = np.asarray(raw.dual["margin"], dtype=np.float64).reshape(-1)
            solution["alpha"] = np.clip(alpha, 0.0, self.hinge_costs)
        if "knowledge_hinge" in raw.dual:
            beta = np.asarray(raw.dual["knowledge_hinge"], dtype=np.float64).reshape(-1)
            solution["beta"] = np.clip(beta, 0.0, self.rho_hinge)
        return solution

    # ------------------------------------------------------------------------------- evaluation
    def to_latex(self, form: str = "primal") -> str:
        r"""The problem in LaTeX with this instance's weights and knowledge sets.

        Examples
        --------
        >>> from optframe.data import make_classification_svm
        >>> model = KnowledgeBasedSVM(make_classification_svm(20, 2, random_state=0), lam1=0.1)
        >>> first = model.to_latex().split(r"\\")[0]
        >>> first.startswith(r"\min_{w \in \mathbb{R}^{2},\, b} \frac{1}{20}\sum_{i=1}^{20}")
        True
        >>> r"0.1\lVert w\rVert_1" in first
        True
        """
        from ._risk_latex import _coefficient, _num

        self.check_form(form)
        n, m = self.data.n_samples, self.data.n_features
        sets = self.knowledge
        variables = rf"w \in \mathbb{{R}}^{{{m}}},\, b"
        if sets:
            variables += r",\, u_k \ge 0"
        objective = (
            rf"\min_{{{variables}}} \frac{{1}}{{{n}}}\sum_{{i=1}}^{{{n}}} "
            r"s_i\bigl(1 - y_i(x_i^\top w + b)\bigr)_+"
        )
        if self.lam1:
            objective += rf" + {_num(self.lam1)}\lVert w\rVert_1"
        objective += rf" + \frac{{{_num(self.lam2)}}}{{2}}\lVert w\rVert^2"
        lines = [objective]
        if sets:
            lines.append(
                rf"+ \sum_{{k=1}}^{{{len(sets)}}} \Bigl[\frac{{{_num(self.rho)}}}{{2}}"
                r"\bigl(\lVert B_k^\top u_k + \ell_k w\rVert^2 + \lVert F_k^\top u_k\rVert^2\bigr)"
                rf" + {_coefficient(float(self.rho_hinge))}"
                r"\bigl(d_k^\top u_k - \ell_k b + 1\bigr)_+\Bigr]"
            )
            for k, kset in enumerate(sets, start=1):
                rows = kset.B.shape[0]  # type: ignore[union-attr]
                label = "+1" if kset.label > 0 else "-1"
                line = (
                    rf"k = {k}:\ \{{x : B_k x \le d_k\}} \Rightarrow y = {label}"
                    rf",\quad B_k \in \mathbb{{R}}^{{{rows} \times {m}}}"
                )
                if kset.B_fixed is None or kset.B_fixed.shape[1] == 0:  # type: ignore[union-attr]
                    line += r",\ F_k = 0"
                else:
                    fixed = kset.B_fixed.shape[1]  # type: ignore[union-attr]
                    line += rf",\ F_k \in \mathbb{{R}}^{{{rows} \times {fixed}}}"
                lines.append(line)
        return r" \\ ".join(lines)

    def objective(self, solution: Solution) -> float:
        """Evaluate the objective (class docstring) at ``w``, ``intercept`` and ``u``.

        ``"u"`` is required when the model has knowledge sets; it is used as given (see
        :meth:`violation` for its sign).
        """
        p = self._parts(solution)
        w = p["w"]
        value = float(self.hinge_costs @ np.maximum(p["h"], 0.0))
        value += self.lam1 * float(np.abs(w).sum()) + 0.5 * self.lam2 * float(w @ w)
        for r, rf, q in zip(p["r"], p["rf"], p["q"], strict=True):
            value += 0.5 * self.rho * (float(r @ r) + float(rf @ rf))
            value += self.rho_hinge * max(q, 0.0)
        return value

    def violation(self, solution: Solution) -> float:
        r"""Largest violation of :math:`u \ge 0` (0 without knowledge sets)."""
        if not self.knowledge:
            return 0.0
        return max(0.0, -float(np.min(vector(solution, "u", self.name))))

    def knowledge_violations(self, solution: Solution) -> NDArray[np.float64]:
        r"""Per knowledge set, the Farkas residuals of the solution.

        :math:`\lVert B_k^\top u_k + \ell_k w\rVert` and :math:`(d_k^\top u_k - \ell_k b + 1)_+`.
        Returns an array of shape (len(knowledge), 2): how far the solution is from satisfying
        the knowledge exactly (both 0 means the implication is proven by Farkas).
        """
        p = self._parts(solution)
        rows = [
            (math.sqrt(float(r @ r) + float(rf @ rf)), max(q, 0.0))
            for r, rf, q in zip(p["r"], p["rf"], p["q"], strict=True)
        ]
        return np.array(rows, dtype=np.float64).reshape(-1, 2)

    def smooth_gradient_w(self, solution: Solution) -> NDArray[np.float64]:
        r"""Gradient in :math:`w` of the Lagrangian without the l1 term, at the multipliers.

        :math:`g = \lambda_2 w - \bar X^\top \alpha + \rho \sum_k \ell_k (B_k^\top u_k + \ell_k w)`
        with :math:`\bar X = \mathrm{diag}(y) X`; optimality is
        :math:`-g \in \lambda_1 \partial\lVert w\rVert_1`.
        """
        p = self._parts(solution)
        alpha = vector(solution, "alpha", self.name)
        g = self.lam2 * p["w"] - np.asarray(self.data.X.T @ (alpha * self._y))
        for kset, r in zip(self.knowledge, p["r"], strict=True):
            g = g + self.rho * kset.label * r
        return g

    def kkt_residuals(self, solution: Solution) -> dict[str, float]:
        r"""Natural (prox) residuals of the optimality conditions, all 0 at an optimum.

        Needs ``w``, ``intercept``, ``alpha`` and, with knowledge, ``u`` and ``beta``. With
        :math:`S_c(\omega) = \omega - \mathrm{clip}(\omega, 0, c)` (prox of :math:`c(\cdot)_+`)
        and :math:`T_\lambda` soft-thresholding:

        * ``"w"``: :math:`\lVert w - T_{\lambda_1}(w - g)\rVert_\infty` (:meth:`smooth_gradient_w`);
        * ``"intercept"``: :math:`\lvert y^\top\alpha + \sum_k \ell_k \beta_k\rvert`;
        * ``"alpha"``: :math:`\lVert h - S_{s/N}(h + \alpha)\rVert_\infty`, :math:`h = 1 - y f(x)`;
        * ``"u"``: :math:`\lVert u - \max(0, u - \nabla_u)\rVert_\infty`;
        * ``"beta"``: :math:`\max_k \lvert q_k - S_{\rho_h}(q_k + \beta_k)\rvert`,
          :math:`q_k = d_k^\top u_k - \ell_k b + 1`;
        * ``"max"``: the largest of them.
        """
        p = self._parts(solution)
        alpha = vector(solution, "alpha", self.name)
        g = self.smooth_gradient_w(solution)
        w = p["w"]
        prox_w = np.sign(w - g) * np.maximum(np.abs(w - g) - self.lam1, 0.0)
        c = self.hinge_costs
        h = p["h"]
        out = {
            "w": float(np.max(np.abs(w - prox_w), initial=0.0)),
            "alpha": float(np.max(np.abs(np.clip(h + alpha, 0.0, c) - alpha))),
        }
        b_res = float(self._y @ alpha)
        if self.knowledge:
            beta = vector(solution, "beta", self.name)
            u_res, beta_res = 0.0, 0.0
            for j, kset in enumerate(self.knowledge):
                u = p["u"][j]
                grad = (
                    self.rho * (kset.B @ p["r"][j] + kset.B_fixed @ p["rf"][j]) + beta[j] * kset.d
                )  # type: ignore[operator]
                u_res = max(u_res, float(np.max(np.abs(u - np.maximum(0.0, u - grad)))))
                q = p["q"][j]
                beta_res = max(
                    beta_res, abs(float(np.clip(q + beta[j], 0, self.rho_hinge)) - beta[j])
                )
                b_res += kset.label * beta[j]
            out["u"], out["beta"] = u_res, beta_res
        out["intercept"] = abs(b_res)
        out["max"] = max(out.values())
        return out

    def dual_bound(self, solution: Solution) -> float | None:
        r"""A proven lower bound: the Lagrange dual at multipliers built from ``solution``.

        With multipliers :math:`\alpha \in [0, c]` of the margins, :math:`\gamma_k \in [0,
        \rho_h]` of the knowledge hinges and free :math:`\mu_k, \nu_k` for the residuals
        :math:`B_k^\top u_k + \ell_k w` and :math:`F_k^\top u_k`, minimizing the Lagrangian over
        :math:`(w, b, u \ge 0)` gives

        .. math::

            D = \mathbf 1^\top\alpha + \textstyle\sum_k \gamma_k
            - \sum_k \frac{\lVert\mu_k\rVert^2 + \lVert\nu_k\rVert^2}{2\rho}
            - \frac{\lVert T_{\lambda_1}(\bar X^\top\alpha - \sum_k \ell_k\mu_k)\rVert^2}
              {2\lambda_2}

        when :math:`y^\top\alpha + \sum_k \ell_k\gamma_k = 0` and
        :math:`B_k\mu_k + F_k\nu_k + \gamma_k d_k \ge 0` (else the minimum over :math:`b` or
        :math:`u` is :math:`-\infty`); :math:`T_{\lambda_1}` is the soft threshold. The point:
        ``"alpha"`` and ``"beta"`` (:math:`\gamma`) from the solution, else the hinges'
        subgradients :math:`c_i [h_i > 0]` and :math:`\rho_h [q_k > 0]` (half on the kink),
        :math:`\mu_k = \rho(B_k^\top u_k + \ell_k w)`, :math:`\nu_k = \rho F_k^\top u_k`;
        the equality is repaired by scaling the larger side of :math:`(\alpha, \gamma)` down,
        and a negative entry of :math:`B_k\mu_k + F_k\nu_k + \gamma_k d_k` by the least-norm
        change of :math:`\mu_k` that removes it. ``None`` if that change cannot (``B_k`` without
        full row rank).
        """
        p = self._parts(solution)
        if "alpha" in solution:
            alpha = np.clip(vector(solution, "alpha", self.name), 0.0, self.hinge_costs)
        else:
            alpha = np.where(p["h"] > 0, self.hinge_costs, 0.0)
        labels = np.array([kset.label for kset in self.knowledge], dtype=np.float64)
        q = np.array(p["q"], dtype=np.float64)
        if "beta" in solution:
            gamma = np.clip(vector(solution, "beta", self.name), 0.0, self.rho_hinge)
        else:
            gamma = self.rho_hinge * np.where(q > 0, 1.0, np.where(q < 0, 0.0, 0.5))
        both = balance(np.concatenate([alpha, gamma]), np.concatenate([self._y, labels]))
        alpha, gamma = both[: alpha.size], both[alpha.size :]
        v = np.asarray(self.data.X.T @ (alpha * self._y), dtype=np.float64).reshape(-1)
        value = float(alpha.sum() + gamma.sum())
        for kset, r, rf, g in zip(self.knowledge, p["r"], p["rf"], gamma, strict=True):
            mu, nu = self.rho * np.asarray(r), self.rho * np.asarray(rf)
            B = np.asarray(kset.B, dtype=np.float64)
            fixed_part = np.asarray(kset.B_fixed) @ nu + g * np.asarray(kset.d)
            slack = B @ mu + fixed_part
            if slack.min() < 0:
                if not self.rho > 0:  # mu = 0 is forced: nothing can repair the slack
                    return None
                # aim a little above 0, so that rounding in the repair cannot leave it below
                margin = 1e-12 * (1.0 + float(np.max(np.abs(B @ mu))) + float(np.max(-slack)))
                deficit = np.maximum(margin - slack, 0.0)
                mu = mu + la.lstsq(B, deficit)[0]
                if np.min(B @ mu + fixed_part) < 0:  # B without full row rank: no repair
                    return None
            if self.rho > 0:
                value -= (float(mu @ mu) + float(nu @ nu)) / (2.0 * self.rho)
            v -= kset.label * mu
        t = np.maximum(np.abs(v) - self.lam1, 0.0)
        return value - float(t @ t) / (2.0 * self.lam2)

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        r"""Decision values :math:`w^\top x + b` at the rows of ``X`` (dense or sparse)."""
        X = check_features(X, self.data.n_features, self.name)
        w = vector(solution, "w", self.name)
        return np.asarray(X @ w, dtype=np.float64) + scalar(solution, "intercept")

    # ------------------------------------------------------------------------ structures
    def _structure(self, kind: type[Structure]) -> ElasticNetKnowledge:
        """The objective split into its smooth quadratic and proximal pieces (ADMM's)."""
        return ElasticNetKnowledge(
            data=self.data,
            hinge_costs=self.hinge_costs,
            lam1=self.lam1,
            lam2=self.lam2,
            rho=self.rho,
            rho_hinge=self.rho_hinge,  # type: ignore[arg-type]  # set in __post_init__
            knowledge=self.knowledge,
            restrict_features=self._restricted,
            pad_solution=self.pad_solution,
            kkt_residuals=self.kkt_residuals,
            smooth_gradient_w=self.smooth_gradient_w,
        )

    def _restricted(self, support: ArrayLike, l1: bool = True) -> KnowledgeBasedSVM:
        """:meth:`restrict_features`, without the l1 term when ``l1`` is False."""
        restricted = self.restrict_features(support)
        return restricted if l1 else replace(restricted, lam1=0.0)

    # ------------------------------------------------------------------------- restriction
    def restrict_features(self, support: ArrayLike, exact: bool = True) -> KnowledgeBasedSVM:
        """The same model with every weight outside ``support`` fixed at 0 (phase 2 of HIPAD).

        Parameters
        ----------
        support : array of int or bool
            The kept features (indices, or a mask of length m).
        exact : bool
            Keep the knowledge columns of the dropped features as ``B_fixed`` (default), so that
            the restricted objective at ``(w_S, b, u)`` equals the full objective at the padded
            ``w``; ``False`` drops them (hipad.md section 4.7, choice (i)).

        Returns
        -------
        KnowledgeBasedSVM
            A model on ``X[:, support]``; its solutions pad back with :meth:`pad_solution`.
        """
        index = self._support_index(support)
        X = self.data.X[:, index]
        data = Dataset(
            X=X, y=self.data.y, sample_weight=self.data.sample_weight, name=self.data.name
        )
        return KnowledgeBasedSVM(
            data,
            lam1=self.lam1,
            lam2=self.lam2,
            knowledge=tuple(k.restricted(index, exact) for k in self.knowledge),
            rho=self.rho,
            rho_hinge=self.rho_hinge,
        )

    def pad_solution(self, solution: Solution, support: ArrayLike) -> dict[str, NDArray]:
        """A restricted model's solution on all m features (zeros outside ``support``)."""
        index = self._support_index(support)
        w = np.zeros(self.data.n_features)
        w[index] = vector(solution, "w", self.name)
        padded = {key: np.asarray(value) for key, value in solution.items()}
        padded["w"] = w
        return padded

    def _support_index(self, support: ArrayLike) -> NDArray[np.intp]:
        index = np.asarray(support)
        if index.dtype == bool:
            if index.shape != (self.data.n_features,):
                raise ModelError(
                    f"{self.name}: a support mask needs {self.data.n_features} entries"
                )
            index = np.flatnonzero(index)
        index = index.astype(np.intp).reshape(-1)
        if index.size and (index.min() < 0 or index.max() >= self.data.n_features):
            raise ModelError(f"{self.name}: support indices must lie in [0, m)")
        if index.size == 0:
            raise ModelError(f"{self.name}: the support is empty; keep at least one feature")
        return np.unique(index)
