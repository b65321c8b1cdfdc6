r"""The three layers of :class:`~optframe.models.EmpiricalRisk`, generated from its declaration.

Every layer states the same problem with the loss argument as a variable,

.. math::

    \min_{w, b, a} \; P(w) + \sum_i c_i\,\ell(a_i)
    \quad\text{s.t.}\quad a_i - q_i (x_i^\top w + b) = p_i \quad (\text{rows } \texttt{"fit"}),

(:math:`p_i = 0, q_i = y_i` for a margin, :math:`p_i = y_i, q_i = -1` for a residual), so the
dual of row :math:`i` is the loss multiplier
:math:`\partial f^\star / \partial p_i = \theta_i \in c_i\,\partial\ell(a_i)`, whatever the loss.
The matrix and Pyomo layers write the loss with epigraph
variables: per ReLU piece :math:`e \ge u a + v,\ e \ge 0` at cost :math:`c\,e`; per ReHU piece
:math:`g + h \ge s a + t,\ 0 \le g \le \tau,\ h \ge 0` at cost :math:`c\,(g^2/2 + \tau h)` (no
:math:`h` when :math:`\tau = \infty`); and the lasso part of the penalty with the split
:math:`w = w^+ - w^-`, :math:`w^\pm \ge 0`. The CVXPY layer writes the loss with atoms
(``pos``, ``huber``), an independent statement of the same objective.

A free margin adds the column :math:`r` (``"rho"``, cost -1) with coefficient +1 in every row
``"fit"`` (:math:`a_i = p_i + q_i f_i - r`); a penalized intercept puts :math:`\rho_2` on
:math:`b`'s diagonal of the Hessian.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.model import MatrixProblem

from ._common import eye, row_dot

if TYPE_CHECKING:
    from .empirical_risk import EmpiricalRisk


def _diag(values: Any) -> sp.csc_array:
    return sp.diags_array(np.asarray(values, dtype=np.float64), format="csc")


def build_matrix(model: EmpiricalRisk) -> tuple[MatrixProblem, dict, dict]:
    """The sparse LP/QP data, its variable slices and the ``"fit"`` rows."""
    if model.loss.is_piecewise_linear:
        return build_segments(model)
    X = sp.csc_array(model.data.X, dtype=np.float64)
    n = X.shape[0]
    loss, pen, c = model.loss, model.penalty_term, model.costs
    p, q = model.offset, model.slope
    split = pen.l1 > 0
    fi, fm = int(model.fit_intercept), int(model.free_margin)
    qX = _diag(q) @ X
    w_blocks = [-qX, qX] if split else [-qX]
    w_size = X.shape[1] * len(w_blocks)
    fit_blocks = [*w_blocks, *_head_columns(model)]
    costs = [np.full(w_size, pen.l1), np.zeros(fi), np.full(fm, -1.0), np.zeros(n)]
    hessian = [np.full(w_size, pen.l2), _intercept_hessian(model), np.zeros(fm + n)]
    lower = [np.zeros(w_size) if split else np.full(w_size, -np.inf), np.full(fi + fm + n, -np.inf)]
    upper = [np.full(w_size + fi + fm + n, np.inf)]
    rows_lo, rows_hi = [p], [p]

    def add(cost: Any, quadratic: Any, high: float) -> None:  # n new columns
        costs.append(np.broadcast_to(cost, (n,)))
        hessian.append(np.broadcast_to(quadratic, (n,)))
        lower.append(np.zeros(n))
        upper.append(np.full(n, high))

    blocks: list[list[Any]] = []  # per piece: [coefficients on a, its own columns...]
    for u, v in loss.relu_pieces:  # e - u a >= v, e >= 0, cost c e
        blocks.append([-u * eye(n), eye(n)])
        add(c, 0.0, np.inf)
        rows_lo.append(np.full(n, v))
    for s, t, tau in loss.rehu_pieces:  # g + h - s a >= t, 0 <= g <= tau, h >= 0
        finite = math.isfinite(tau)
        blocks.append([-s * eye(n), eye(n), *([eye(n)] if finite else [])])
        add(0.0, c, tau)
        if finite:
            add(tau * c, 0.0, np.inf)
        rows_lo.append(np.full(n, t))
    rows_hi += [np.full(n, np.inf)] * len(blocks)
    A = _assemble(fit_blocks, n, blocks)
    hessian_diag = np.concatenate(hessian)
    problem = MatrixProblem(
        c=np.concatenate(costs),
        A=A,
        row_lower=np.concatenate(rows_lo),
        row_upper=np.concatenate(rows_hi),
        lower=np.concatenate(lower),
        upper=np.concatenate(upper),
        P=_diag(hessian_diag) if np.any(hessian_diag > 0) else None,
    )
    m_w = X.shape[1]
    variables = (
        {"w_plus": slice(0, m_w), "w_minus": slice(m_w, 2 * m_w)} if split else {"w": slice(0, m_w)}
    )
    _name_head(model, variables, w_size)
    return problem, variables, {"fit": slice(0, n)}


def _head_columns(model: EmpiricalRisk) -> list[sp.csc_array]:
    r"""The fit rows' columns of :math:`b` (:math:`-q`) and of a free margin :math:`r` (+1)."""
    q = model.slope.reshape(-1, 1)
    columns = [sp.csc_array(-q)] if model.fit_intercept else []
    if model.free_margin:  # a = p + q f - r
        columns.append(sp.csc_array(np.ones_like(q)))
    return columns


def _intercept_hessian(model: EmpiricalRisk) -> NDArray[np.float64]:
    r""":math:`\rho_2` on :math:`b` when it is penalized, else 0 (no entry without :math:`b`)."""
    if not model.fit_intercept:
        return np.zeros(0)
    return np.full(1, model.penalty_term.l2 if model.penalize_intercept else 0.0)


def _name_head(model: EmpiricalRisk, variables: dict, start: int) -> None:
    """Name the columns of ``intercept`` and ``rho`` that follow the coefficients."""
    if model.fit_intercept:
        variables["intercept"] = slice(start, start + 1)
        start += 1
    if model.free_margin:
        variables["rho"] = slice(start, start + 1)


def build_segments(model: EmpiricalRisk) -> tuple[MatrixProblem, dict, dict]:
    r"""A piecewise-linear loss by its segments: one row and :math:`K + 1` columns per sample.

    With kinks :math:`j_1 < \dots < j_K` and slopes :math:`g_0 < \dots < g_K`,
    :math:`a = j_1 - d_0 + \sum_{k \ge 1} d_k` with :math:`d_0, d_K \ge 0`,
    :math:`0 \le d_k \le j_{k+1} - j_k` in between, and
    :math:`\ell(a) = \ell(j_1) + \min\, (-g_0 d_0 + \sum_k g_k d_k)` (increasing slopes fill the
    segments in order). The rows ``"fit"`` are :math:`-d_0 + \sum_k d_k - q(x^\top w + b) =
    p - j_1`; for the absolute loss this is LAD's LP, for the hinge the SVM's with its slack.
    """
    X = sp.csc_array(model.data.X, dtype=np.float64)
    n, m = X.shape
    pen, c = model.penalty_term, model.costs
    p, q = model.offset, model.slope
    kinks, slopes = model.loss.linear_pieces
    split = pen.l1 > 0
    fi, fm = int(model.fit_intercept), int(model.free_margin)
    qX = _diag(q) @ X
    w_blocks = [-qX, qX] if split else [-qX]
    w_size = m * len(w_blocks)
    blocks = [*w_blocks, *_head_columns(model)]
    costs = [np.full(w_size, pen.l1), np.zeros(fi), np.full(fm, -1.0)]
    lower = [np.zeros(w_size) if split else np.full(w_size, -np.inf), np.full(fi + fm, -np.inf)]
    upper = [np.full(w_size + fi + fm, np.inf)]
    widths = np.r_[np.inf, np.diff(kinks), np.inf]
    variables = {"w_plus": slice(0, m), "w_minus": slice(m, 2 * m)} if split else {"w": slice(0, m)}
    _name_head(model, variables, w_size)
    start = w_size + fi + fm
    # an outer segment of slope 0 costs nothing: it becomes the row's slack (the hinge's
    # y f + xi >= 1), one column fewer per sample
    row_lower, row_upper = p - kinks[0], p - kinks[0]
    if slopes[-1] == 0.0:
        row_lower = np.full(n, -np.inf)
    if slopes[0] == 0.0:
        row_upper = np.full(n, np.inf)
    for k, slope in enumerate(slopes):
        if slope == 0.0 and k in (0, slopes.size - 1):
            continue
        blocks.append(-eye(n) if k == 0 else eye(n))
        costs.append(c * (-slope if k == 0 else slope))
        lower.append(np.zeros(n))
        upper.append(np.full(n, widths[k]))
        variables[f"segment_{k}"] = slice(start, start + n)
        start += n
    width = start
    head = _intercept_hessian(model)
    hessian = np.r_[np.full(w_size, pen.l2), head, np.zeros(width - w_size - fi)]
    problem = MatrixProblem(
        c=np.concatenate(costs),
        A=sp.hstack(blocks, format="csc"),
        row_lower=row_lower,
        row_upper=row_upper,
        lower=np.concatenate(lower),
        upper=np.concatenate(upper),
        P=_diag(hessian) if pen.l2 > 0 else None,
        offset=float(c.sum()) * float(model.loss.value(kinks[0])[0]),
    )
    return problem, variables, {"fit": slice(0, n)}


def _assemble(fit_blocks: list[Any], n: int, pieces: list[list[Any]]) -> sp.csc_array:
    """Rows [fit; piece rows] over columns [w, b, a, piece variables...]."""
    head = sp.hstack([*fit_blocks, eye(n)], format="csc")
    extra = sum(len(blocks) - 1 for blocks in pieces)
    width = head.shape[1] + extra * n
    rows = [sp.hstack([head, sp.csc_array((n, extra * n))], format="csc")]
    lead = head.shape[1] - n  # columns before a
    done = 0
    for blocks in pieces:
        own = len(blocks) - 1
        parts = [sp.csc_array((n, lead)), blocks[0]]
        parts += [sp.csc_array((n, done * n)), *blocks[1:]]
        parts.append(sp.csc_array((n, width - lead - n - (done + own) * n)))
        rows.append(sp.hstack(parts, format="csc"))
        done += own
    return sp.csc_array(sp.vstack(rows, format="csc"))


def build_cvxpy(model: EmpiricalRisk) -> tuple[Any, dict, dict]:
    """A ``cvxpy.Problem`` with ``pos``/``huber`` atoms, its variables and the ``"fit"`` rows."""
    import cvxpy as cp

    X = model.data.X
    n, m = X.shape
    pen, c = model.penalty_term, model.costs
    a = cp.Variable(n, name="a")
    terms = []
    if model.is_linear:
        w = cp.Variable(m, name="w")
        variables: dict[str, Any] = {"w": w}
        f = X @ w
    else:  # the kernel primal over f's coefficients (the dense Gram matrix)
        K = model.kernel_matrix()
        K = 0.5 * (K + K.T)
        v = cp.Variable(n, name="alpha")
        variables = {"alpha": v}
        f = K @ v / pen.l2
        terms.append(cp.quad_form(v, cp.psd_wrap(K)) / (2.0 * pen.l2))
    if model.fit_intercept:
        variables["intercept"] = b = cp.Variable(name="intercept")
        f = f + b
        if model.penalize_intercept:
            terms.append(0.5 * pen.l2 * cp.square(b))
    fit_rows = a - cp.multiply(model.slope, f)
    if model.free_margin:  # a = p + q f - r, at the cost -r
        variables["rho"] = r = cp.Variable(name="rho")
        fit_rows = fit_rows + r
        terms.append(-r)
    fit = fit_rows == model.offset
    if pen.l1 > 0:
        terms.append(pen.l1 * cp.norm1(w))
    if pen.l2 > 0 and model.is_linear:
        terms.append(0.5 * pen.l2 * cp.sum_squares(w))
    single = model.losses.single is not None
    for part, index in model.losses.parts():  # each sample's own loss (one part: all samples)
        a_i, c_i = (a, c) if single else (a[index], c[index])
        if getattr(part, "is_smooth", False):  # a SmoothLoss states its own atom (logistic)
            expression = part.cvxpy(a_i)
            if expression is None:
                from optframe.errors import ModelError

                raise ModelError(f"{model.name}: the smooth loss {part!r} states no cvxpy form")
            terms.append(c_i @ expression)
            continue
        for u, v in part.relu_pieces:
            terms.append(c_i @ cp.pos(u * a_i + v))
        for s, t, tau in part.rehu_pieces:
            z = cp.pos(s * a_i + t)
            rehu = cp.square(z) if math.isinf(tau) else cp.huber(z, tau)  # both twice rehu
            terms.append(0.5 * (c_i @ rehu))
        if part.affine_slope:
            terms.append(part.affine_slope * (c_i @ a_i))
    problem = cp.Problem(cp.Minimize(cp.sum(cp.hstack(terms))), [fit])
    return problem, variables, {"fit": fit}


def build_pyomo(model: EmpiricalRisk) -> tuple[Any, dict, dict]:
    """A Pyomo ``ConcreteModel`` with the matrix layer's variables, and the ``"fit"`` rows."""
    import pyomo.environ as pyo

    X = sp.csr_array(model.data.X, dtype=np.float64)
    n, m = X.shape
    loss, pen, c = model.loss, model.penalty_term, model.costs
    p, q = model.offset, model.slope
    mdl = pyo.ConcreteModel(name=model.name)
    objective = []
    if pen.l1 > 0:
        mdl.w_plus = pyo.Var(range(m), within=pyo.NonNegativeReals)
        mdl.w_minus = pyo.Var(range(m), within=pyo.NonNegativeReals)
        variables: dict[str, Any] = {"w_plus": mdl.w_plus, "w_minus": mdl.w_minus}
        parts = (mdl.w_plus, mdl.w_minus)
        objective.append(pen.l1 * pyo.quicksum(v for part in parts for v in part.values()))

        def linear(i: int) -> Any:
            return row_dot(X, i, mdl.w_plus) - row_dot(X, i, mdl.w_minus)
    else:
        mdl.w = pyo.Var(range(m))
        variables = {"w": mdl.w}
        parts = (mdl.w,)

        def linear(i: int) -> Any:
            return row_dot(X, i, mdl.w)

    if pen.l2 > 0:
        objective.append(0.5 * pen.l2 * pyo.quicksum(v**2 for part in parts for v in part.values()))
    if model.fit_intercept:
        mdl.intercept = pyo.Var(range(1))
        variables["intercept"] = mdl.intercept
        if model.penalize_intercept:
            objective.append(0.5 * pen.l2 * mdl.intercept[0] ** 2)
    if model.free_margin:  # a = p + q f - r, at the cost -r
        mdl.rho = pyo.Var(range(1))
        variables["rho"] = mdl.rho
        objective.append(-mdl.rho[0])
    mdl.a = pyo.Var(range(n))

    def fit_rule(mdl: Any, i: int) -> Any:
        f = linear(i) + (mdl.intercept[0] if model.fit_intercept else 0.0)
        r = mdl.rho[0] if model.free_margin else 0.0
        return mdl.a[i] - float(q[i]) * f + r == float(p[i])

    mdl.fit = pyo.Constraint(range(n), rule=fit_rule)
    relu, rehu = loss.relu_pieces, loss.rehu_pieces
    mdl.e = pyo.Var(range(len(relu)), range(n), within=pyo.NonNegativeReals)
    mdl.relu = pyo.Constraint(
        range(len(relu)),
        range(n),
        rule=lambda mdl, k, i: mdl.e[k, i] - relu[k][0] * mdl.a[i] >= relu[k][1],
    )
    finite = [k for k, (_, _, tau) in enumerate(rehu) if math.isfinite(tau)]
    mdl.g = pyo.Var(
        range(len(rehu)),
        range(n),
        bounds=lambda _, k, i: (0.0, rehu[k][2] if k in finite else None),
    )
    mdl.h = pyo.Var(finite, range(n), within=pyo.NonNegativeReals)
    mdl.rehu = pyo.Constraint(
        range(len(rehu)),
        range(n),
        rule=lambda mdl, k, i: (
            mdl.g[k, i] + (mdl.h[k, i] if k in finite else 0.0) - rehu[k][0] * mdl.a[i]
            >= rehu[k][1]
        ),
    )
    cost = [float(ci) for ci in c]
    objective.append(
        pyo.quicksum(cost[i] * mdl.e[k, i] for k in range(len(relu)) for i in range(n))
    )
    objective.append(
        pyo.quicksum(0.5 * cost[i] * mdl.g[k, i] ** 2 for k in range(len(rehu)) for i in range(n))
    )
    objective.append(
        pyo.quicksum(rehu[k][2] * cost[i] * mdl.h[k, i] for k in finite for i in range(n))
    )
    mdl.objective = pyo.Objective(expr=pyo.quicksum(objective))
    return mdl, variables, {"fit": mdl.fit}


def pyomo_from_matrix(problem: MatrixProblem, variables: dict, constraints: dict, name: str) -> Any:
    r"""The Pyomo statement of a :class:`MatrixProblem`, by name.

    A Var per named column slice, a Constraint per named row slice, the objective
    :math:`\tfrac12 x^\top P x + c^\top x` + offset.

    Every column and row must lie in a named slice (the dual form's are all named).
    """
    import pyomo.environ as pyo

    mdl = pyo.ConcreteModel(name=name)
    column: list[Any] = [None] * problem.n_variables
    handles: dict[str, Any] = {}
    for key, part in variables.items():
        size = part.stop - part.start
        lower, upper = problem.lower[part], problem.upper[part]

        def bounds(_: Any, i: int, lo: Any = lower, hi: Any = upper) -> tuple:
            return (
                float(lo[i]) if np.isfinite(lo[i]) else None,
                float(hi[i]) if np.isfinite(hi[i]) else None,
            )

        var = pyo.Var(range(size), bounds=bounds)
        mdl.add_component(key, var)
        handles[key] = var
        for i in range(size):
            column[part.start + i] = var[i]
    A = sp.csr_array(problem.A)
    if np.any(np.diff(A.indptr) == 0):  # an empty row (an all-zero feature) keeps its place
        mdl.zero = pyo.Var(bounds=(0.0, 0.0))
    rows: dict[str, Any] = {}
    for key, part in constraints.items():

        def rule(mdl: Any, r: int, start: int = part.start) -> Any:
            k = start + r
            lo, hi = A.indptr[k], A.indptr[k + 1]
            expr = pyo.quicksum(
                float(a) * column[j] for a, j in zip(A.data[lo:hi], A.indices[lo:hi], strict=True)
            )
            low, high = problem.row_lower[k], problem.row_upper[k]
            if lo == hi:
                expr = mdl.zero
            if low == high:
                return expr == float(low)
            return pyo.inequality(
                float(low) if np.isfinite(low) else None,
                expr,
                float(high) if np.isfinite(high) else None,
            )

        con = pyo.Constraint(range(part.stop - part.start), rule=rule)
        mdl.add_component(key, con)
        rows[key] = con
    terms = [float(cj) * column[j] for j, cj in enumerate(problem.c) if cj != 0.0]
    if problem.P is not None:
        P = sp.coo_array(sp.triu(problem.P, format="coo"))
        for i, j, value in zip(P.row, P.col, P.data, strict=True):
            weight = 0.5 * value if i == j else value
            terms.append(float(weight) * column[i] * column[j])
    mdl.objective = pyo.Objective(expr=pyo.quicksum(terms) + float(problem.offset))
    return mdl, handles, rows
