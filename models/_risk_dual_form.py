r"""The dual form of :class:`~optframe.models.EmpiricalRisk` (``form="dual"``), from its pieces.

Each ReLU piece is :math:`\operatorname{relu}(x) = \max_{0 \le \lambda \le 1} \lambda x` and each
ReHU piece :math:`\operatorname{rehu}_\tau(x) = \max_{0 \le \gamma \le \tau} \gamma x - \gamma^2/2`
(ReHLine's dual, Dai and Qiu 2023). With :math:`\Lambda_{il} = c_i\lambda_{il} \in [0, c_i]`,
:math:`\Gamma_{ih} = c_i\gamma_{ih} \in [0, c_i\tau_h]`, the loss multiplier
:math:`\theta_i = \sum_l u_l\Lambda_{il} + \sum_h s_h\Gamma_{ih}` and :math:`v = -q \odot \theta`,
the Fenchel dual of the model (notation of :mod:`optframe.models._risk_dual`) is

.. math::

    \max_{\Lambda, \Gamma} \; \sum_i \theta_i p_i + \sum_{i,l} v_l\Lambda_{il}
    + \sum_{i,h}\Bigl(t_h\Gamma_{ih} - \frac{\Gamma_{ih}^2}{2 c_i}\Bigr) - P^*(X^\top v)
    \quad\text{s.t.}\quad \mathbf 1^\top v = 0 \ (\text{rows } \texttt{"intercept"},
    \text{with an intercept}),

with :math:`P^*(z) = \lVert z\rVert^2 / (2\rho_2)` for the ridge penalty (the kernel's
:math:`v^\top K v / (2\rho_2)`) and the constraint :math:`X^\top v = 0` without a penalty
(rows named as the coefficients, ``"w"``). The matrix layer states the ridge case with
:math:`z = X^\top v` as variables (those rows: :math:`X^\top v - z = 0`), so :math:`X` stays
sparse; a kernel's dual carries
the dense :math:`D^\top K D / \rho_2`. The solution: ``alpha`` (the model's dual variable,
:math:`\sigma\theta`), ``w`` for the linear model (:math:`z / \rho_2`, or minus the duals of the
coefficient rows without a penalty) and the intercept that minimizes the objective for that
:math:`f` (:func:`best_intercept_any`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.model import MatrixProblem, RawSolution

from ._common import eye, root_of_increasing
from ._risk_losses import SampleLosses
from ._risk_structures import best_intercept

if TYPE_CHECKING:
    from optframe.losses import PLQLoss

    from .empirical_risk import EmpiricalRisk


def _pieces(model: EmpiricalRisk) -> tuple[NDArray, NDArray, NDArray, NDArray]:
    """Per dual block: the slope in theta, the linear reward, the upper end per c, curvature."""
    loss = model.loss
    relu, rehu = loss.relu_pieces, loss.rehu_pieces
    slopes = np.array([u for u, _ in relu] + [s for s, _, _ in rehu], dtype=np.float64)
    rewards = np.array([v for _, v in relu] + [t for _, t, _ in rehu], dtype=np.float64)
    ends = np.array([1.0] * len(relu) + [tau for _, _, tau in rehu], dtype=np.float64)
    curved = np.array([False] * len(relu) + [True] * len(rehu))
    return slopes, rewards, ends, curved


def _columns(model: EmpiricalRisk) -> tuple[NDArray, NDArray, NDArray, NDArray, NDArray]:
    r"""Per dual column: its sample, slope in theta, reward, upper end, curvature weight.

    With a loss per sample (:class:`~optframe.models._risk_losses.SampleLosses`) each sample gets
    the blocks of its own loss's pieces; a linear loss has none (its :math:`\theta_i = c_i k` is a
    constant, :func:`_theta_fixed`). The upper end is :math:`c_i` (ReLU) or :math:`c_i\tau`
    (ReHU), the curvature weight :math:`1/c_i` for a ReHU block.
    """
    c = model.costs
    with np.errstate(divide="ignore"):
        inverse_c = np.where(c > 0, 1.0 / c, 0.0)
    parts: list[tuple[NDArray, float, float, NDArray, NDArray]] = []
    for loss, index in model.losses.parts():
        for u, v in loss.relu_pieces:
            parts.append((index, u, v, np.where(c[index] > 0, c[index], 0.0), 0.0 * index))
        for s_h, t_h, tau in loss.rehu_pieces:
            upper = np.where(c[index] > 0, c[index] * tau, 0.0)
            parts.append((index, s_h, t_h, upper, inverse_c[index]))
    if not parts:
        empty = np.zeros(0)
        return empty.astype(np.intp), empty, empty, empty, empty
    rows = np.concatenate([part[0] for part in parts]).astype(np.intp)
    slopes = np.concatenate([np.full(part[0].size, part[1]) for part in parts])
    rewards = np.concatenate([np.full(part[0].size, part[2]) for part in parts])
    upper = np.concatenate([part[3] for part in parts])
    weights = np.concatenate([np.asarray(part[4], dtype=np.float64) for part in parts])
    return rows, slopes, rewards, upper, weights


def _theta_fixed(model: EmpiricalRisk) -> NDArray[np.float64]:
    r""":math:`c_i k_i`: the part of :math:`\theta` from the losses' affine slopes."""
    k = np.zeros(model.data.n_samples)
    for loss, index in model.losses.parts():
        k[index] = loss.affine_slope
    return model.costs * k


def _theta_map(model: EmpiricalRisk) -> sp.csc_array:
    r""":math:`T` with :math:`\theta = T x` (+ :func:`_theta_fixed`) over the stacked blocks."""
    n = model.data.n_samples
    if model.per_sample:
        rows, slopes, _, _, _ = _columns(model)
        columns = np.arange(rows.size)
        return sp.csc_array((slopes, (rows, columns)), shape=(n, rows.size))
    slopes, _, _, _ = _pieces(model)
    return sp.csc_array(sp.hstack([u * eye(n) for u in slopes], format="csc"))


def build_dual_matrix(model: EmpiricalRisk) -> tuple[MatrixProblem, dict, dict]:
    """The dual QP (or LP without a penalty) as sparse matrices, minimizing its negative."""
    if model.loss.is_piecewise_linear and model.is_linear:
        return build_dual_segments(model)
    n = model.data.n_samples
    c, p, q = model.costs, model.offset, model.slope
    slopes, rewards, ends, curved = _pieces(model)
    k = slopes.size
    T = _theta_map(model)
    D = sp.csc_array(sp.diags_array(-q) @ T)
    linear = -(T.T @ p) - np.repeat(rewards, n)
    with np.errstate(divide="ignore"):
        inverse_c = np.where(c > 0, 1.0 / c, 0.0)
    hessian = np.concatenate([inverse_c if bend else np.zeros(n) for bend in curved])
    upper = np.concatenate([np.where(c > 0, c * end, 0.0) for end in ends])
    lower = np.zeros(k * n)
    rows: list[Any] = []
    row_lo: list[NDArray] = []
    constraints: dict[str, slice] = {}
    P: Any = sp.diags_array(hessian, format="csc")
    pen = model.penalty_term
    m = model.data.n_features
    variables: dict[str, slice] = {"blocks": slice(0, k * n)}
    if model.is_linear:
        XtD = sp.csc_array(sp.csc_array(model.data.X, dtype=np.float64).T @ D)
        if pen.l2 > 0:  # rows X'v - z = 0, cost |z|^2 / (2 l2)
            rows.append(sp.hstack([XtD, -eye(m)], format="csc"))
            P = sp.block_diag([P, sp.diags_array(np.full(m, 1.0 / pen.l2))], format="csc")
            linear, lower = np.r_[linear, np.zeros(m)], np.r_[lower, np.full(m, -np.inf)]
            upper = np.r_[upper, np.full(m, np.inf)]
            variables["z"] = slice(k * n, k * n + m)
        else:  # rows X'v = 0
            rows.append(XtD)
        constraints[model.coef_key] = slice(0, m)
        row_lo.append(np.zeros(m))
    else:
        K = model.kernel_matrix()
        P = sp.csc_array(P + sp.csc_array(D.T @ (K @ D.toarray())) / pen.l2)
    width = linear.shape[0]
    if model.fit_intercept:
        balance = sp.csc_array(np.ones((1, n)) @ D)
        rows.append(sp.hstack([balance, sp.csc_array((1, width - k * n))], format="csc"))
        start = sum(block.shape[0] for block in rows[:-1])
        constraints[model.intercept_row] = slice(start, start + 1)
        row_lo.append(np.zeros(1))
    A = sp.vstack(rows, format="csc") if rows else sp.csc_array((0, width))
    bounds = np.concatenate(row_lo) if row_lo else np.zeros(0)
    problem = MatrixProblem(
        c=linear,
        A=A,
        row_lower=bounds,
        row_upper=bounds.copy(),
        lower=lower,
        upper=upper,
        P=P if P.nnz else None,
    )
    return problem, variables, constraints


def build_dual_segments(model: EmpiricalRisk) -> tuple[MatrixProblem, dict, dict]:
    r"""The dual of a linear model's piecewise-linear loss over :math:`\theta`'s segments.

    :math:`\ell^*` is piecewise linear with slope :math:`j_k` on :math:`[g_{k-1}, g_k]`, so
    :math:`\theta_i = \sum_k \delta_{ik}` with :math:`c_i g_0 \le \delta_{i1} \le c_i g_1`,
    :math:`0 \le \delta_{ik} \le c_i (g_k - g_{k-1})` for :math:`k \ge 2`, and
    :math:`c_i\ell^*(\theta_i / c_i) = \sum_k j_k \delta_{ik} - c_i\ell(j_1)`. Minimized:
    :math:`\sum_{i,k} (j_k - p_i)\delta_{ik} + P^*(X^\top v) - \sum_i c_i \ell(j_1)` with
    :math:`v = -q\odot\theta`, every row's right-hand side 0; for LAD (:math:`K = 1`) this is
    its dual LP over :math:`\theta` itself.
    """
    n, m = model.data.X.shape
    c, p, q = model.costs, model.offset, model.slope
    kinks, slopes = model.loss.linear_pieces
    K = kinks.size
    linear = np.concatenate([kinks[k] - p for k in range(K)])
    upper = np.concatenate([c * (slopes[k + 1] - (slopes[k] if k else 0.0)) for k in range(K)])
    offset = -float(c.sum()) * float(model.loss.value(kinks[0])[0])
    variables = {f"delta_{k + 1}": slice(k * n, (k + 1) * n) for k in range(K)}
    pen = model.penalty_term
    P: Any = None
    lower = np.r_[c * slopes[0], np.zeros((K - 1) * n)]
    # [X, 1]' D: v = D delta; with the ridge, the rows X'D delta - z = 0, cost |z|^2 / (2 l2)
    A = _segment_columns(model.data.X, -q, K, model.fit_intercept, m if pen.l2 > 0 else 0)
    rows = m + int(model.fit_intercept)
    if pen.l2 > 0:
        P = sp.block_diag(
            [sp.csc_array((K * n, K * n)), sp.diags_array(np.full(m, 1.0 / pen.l2))],
            format="csc",
        )
        linear, lower = np.r_[linear, np.zeros(m)], np.r_[lower, np.full(m, -np.inf)]
        upper = np.r_[upper, np.full(m, np.inf)]
        variables["z"] = slice(K * n, K * n + m)
    constraints: dict[str, slice] = {model.coef_key: slice(0, m)}
    if model.fit_intercept:
        constraints[model.intercept_row] = slice(m, m + 1)
    rhs = np.zeros(rows)
    problem = MatrixProblem(
        c=linear, A=A, row_lower=rhs, row_upper=rhs.copy(), lower=lower, upper=upper, P=P,
        offset=offset,
    )  # fmt: skip
    return problem, variables, constraints


def _segment_columns(X: Any, scale: NDArray, K: int, ones: bool, minus: int = 0) -> sp.csc_array:
    r""":math:`[X, \mathbf 1]^\top \operatorname{diag}(s)`, repeated ``K`` times side by side.

    Column :math:`i` is :math:`s_i (x_i, 1)` (the 1 only with ``ones``). Dense ``X`` is laid out
    as CSC directly (one multiplication, no sparse conversion of the dense matrix); sparse ``X``
    keeps its pattern. ``minus`` more columns follow, :math:`-e_1, \dots, -e_{minus}` (the
    ridge dual's :math:`-z`), written into the same arrays for dense ``X``.
    """
    n, m = X.shape
    rows = m + int(ones)
    if sp.issparse(X):
        scaled = sp.csr_array(sp.diags_array(scale) @ sp.csr_array(X, dtype=np.float64))
        if ones:
            scaled = sp.hstack([scaled, sp.csr_array(scale[:, None])], format="csr")
        block = sp.csc_array(scaled.T)  # CSR of n x (m+1) is CSC of its transpose
        block = sp.csc_array(sp.hstack([block] * K, format="csc")) if K > 1 else block
        if minus:
            tail = sp.csc_array(sp.vstack([-eye(minus), sp.csc_array((rows - minus, minus))]))
            block = sp.csc_array(sp.hstack([block, tail], format="csc"))
        return block
    size = K * n * rows
    data = np.empty(size + minus)
    # the first copy is written in place (no temporary: fresh pages are slow to fault in)
    values = data[: n * rows].reshape(n, rows)
    np.multiply(np.asarray(X, dtype=np.float64), scale[:, None], out=values[:, :m])
    if ones:
        values[:, m] = scale
    indices = np.empty(size + minus, dtype=np.int32)
    for k in range(1, K):
        data[k * n * rows : (k + 1) * n * rows] = data[: n * rows]
    indices[:size].reshape(K * n, rows)[:] = np.arange(rows, dtype=np.int32)
    data[size:] = -1.0
    indices[size:] = np.arange(minus, dtype=np.int32)
    # indptr in the indices' 32 bits when the entries fit: with mixed widths scipy would copy
    # the indices to 64 bits (0.8 s at a million rows)
    index = np.int32 if size + minus < 2**31 else np.int64
    indices = indices.astype(index, copy=False)
    indptr = np.empty(K * n + minus + 1, dtype=index)
    indptr[: K * n + 1] = np.arange(K * n + 1, dtype=index) * rows
    indptr[K * n + 1 :] = size + np.arange(1, minus + 1, dtype=index)
    block = sp.csc_array((data, indices, indptr), shape=(rows, K * n + minus))
    if not np.all(values):  # the zeros of X are not entries of a sparse matrix
        block.eliminate_zeros()
    return block


def build_dual_cvxpy(model: EmpiricalRisk) -> tuple[Any, dict, dict]:
    """The same dual in CVXPY: one variable per piece block, ``quad_form`` for a kernel."""
    import cvxpy as cp

    n = model.data.n_samples
    c, p, q = model.costs, model.offset, model.slope
    T = _theta_map(model)
    if model.per_sample:  # each sample's own pieces; the affine slopes' constant part of theta
        _, _, column_rewards, upper, weights = _columns(model)
        blocks = cp.Variable(T.shape[1], name="blocks")
        theta = T @ blocks + _theta_fixed(model)
    else:
        slopes, rewards, ends, curved = _pieces(model)
        blocks = cp.Variable(slopes.size * n, name="blocks")
        theta = T @ blocks
        column_rewards = np.repeat(rewards, n)
        upper = np.concatenate([np.where(c > 0, c * end, 0.0) for end in ends])
        with np.errstate(divide="ignore"):
            inverse_c = np.where(c > 0, 1.0 / c, 0.0)
        weights = np.concatenate([inverse_c if bend else np.zeros(n) for bend in curved])
    v = cp.multiply(-q, theta)
    finite = np.isfinite(upper)
    cons = [blocks >= 0, blocks[np.flatnonzero(finite)] <= upper[finite]]
    reward = p @ theta + column_rewards @ blocks
    if np.any(weights > 0):
        reward = reward - 0.5 * cp.sum(cp.multiply(weights, cp.square(blocks)))
    pen = model.penalty_term
    constraints: dict[str, Any] = {}
    if model.is_linear:
        z = model.data.X.T @ v
        if pen.l2 > 0:
            reward = reward - cp.sum_squares(z) / (2.0 * pen.l2)
        else:
            constraints[model.coef_key] = coef = z == 0
            cons.append(coef)
    else:
        factor = _psd_factor(model.kernel_matrix())
        reward = reward - cp.sum_squares(factor.T @ v) / (2.0 * pen.l2)
    if model.fit_intercept:
        constraints[model.intercept_row] = balance = cp.sum(v) == 0
        cons.append(balance)
    problem = cp.Problem(cp.Maximize(reward), cons)
    return problem, {"blocks": blocks}, constraints


def _psd_factor(K: NDArray[np.float64]) -> NDArray[np.float64]:
    r""":math:`L` with :math:`L L^\top = K` (eigenvalues below rounding set to 0)."""
    values, vectors = np.linalg.eigh(0.5 * (K + K.T))
    return vectors * np.sqrt(np.clip(values, 0.0, None))


def recover_dual(model: EmpiricalRisk, raw: RawSolution) -> dict[str, NDArray[np.float64]]:
    """``alpha``, ``w`` (linear) and ``intercept`` from a solve of the dual form."""
    if "blocks" in raw.primal:
        blocks = np.asarray(raw.primal["blocks"], dtype=np.float64).reshape(-1)
        theta = np.asarray(_theta_map(model) @ blocks, dtype=np.float64)
        if model.per_sample:
            theta = theta + _theta_fixed(model)
    else:  # the segments of a piecewise-linear loss: theta is their sum
        _, slopes = model.loss.linear_pieces
        theta = np.zeros(model.data.n_samples)
        for k in range(slopes.size - 1):
            theta = theta + np.asarray(raw.primal[f"delta_{k + 1}"], dtype=np.float64).reshape(-1)
    low, high = _theta_box(model)
    theta = np.clip(theta, low, high)
    sign = -1.0 if model.losses.is_classification else 1.0
    solution: dict[str, NDArray[np.float64]] = {"alpha": sign * theta}
    v = -model.slope * theta
    pen = model.penalty_term
    if model.is_linear:
        if pen.l2 > 0:
            w = np.asarray(model.data.X.T @ v, dtype=np.float64).reshape(-1) / pen.l2
        else:
            w = _w_from_duals(model, raw, theta)
        solution["w"] = w
        f = np.asarray(model.data.X @ w, dtype=np.float64).reshape(-1)
    else:
        f = model.kernel_values(v) / pen.l2
    b = 0.0
    if model.fit_intercept:
        b = best_intercept_any(model.losses, model.offset, model.slope, f, model.costs)
    solution["intercept"] = np.array([b])
    return solution


def _w_from_duals(model: EmpiricalRisk, raw: RawSolution, theta: NDArray) -> NDArray[np.float64]:
    r""":math:`w` without a penalty: minus the duals of the coefficient rows.

    A back-end that returns no duals (SCIP presolves them away) gets complementary slackness
    instead: a sample whose :math:`\theta_i / c_i` lies strictly inside a stretch
    :math:`(g_{k-1}, g_k)` of the conjugate sits on the kink :math:`j_k`, so
    :math:`x_i^\top w + b = q_i (j_k - p_i)`, solved by least squares on those samples. The
    certificate judges the result (a degenerate set shows up as a gap).
    """
    if model.coef_key in raw.dual:
        return -np.asarray(raw.dual[model.coef_key], dtype=np.float64).reshape(-1)
    kinks, slopes = model.loss.linear_pieces
    c = model.costs
    with np.errstate(divide="ignore", invalid="ignore"):
        beta = np.where(c > 0, theta / c, np.nan)
    stretch = np.searchsorted(slopes, beta) - 1  # beta in (g_k, g_k+1] -> k
    k = np.clip(stretch, 0, kinks.size - 1)
    span = slopes[k + 1] - slopes[k]
    inside = (stretch >= 0) & (stretch < kinks.size)
    inside &= (beta - slopes[k] > 1e-7 * span) & (slopes[k + 1] - beta > 1e-7 * span)
    X = model.data.X[inside]
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    if model.fit_intercept:
        X = np.hstack([X, np.ones((X.shape[0], 1))])
    target = model.slope[inside] * (kinks[k[inside]] - model.offset[inside])
    coefficients = np.linalg.lstsq(X, target, rcond=None)[0]
    return coefficients[: model.data.n_features]


def _theta_box(model: EmpiricalRisk) -> tuple[NDArray, NDArray]:
    lo, hi = model.losses.domain
    c = model.costs
    with np.errstate(invalid="ignore"):
        return np.where(c > 0, c * lo, 0.0), np.where(c > 0, c * hi, 0.0)


def best_intercept_any(
    loss: PLQLoss | SampleLosses, p: NDArray, q: NDArray, f: NDArray, c: NDArray
) -> float:
    r"""A minimizer over :math:`b` of :math:`\sum_i c_i\,\ell(p_i + q_i(f_i + b))`, any PLQ loss.

    Exact (:func:`~._risk_structures.best_intercept`) for a piecewise-linear loss; otherwise by
    bisection on the derivative :math:`\sum_i c_i q_i \ell'(a_i)`, nondecreasing in :math:`b`,
    to the last representable digit.
    """
    if loss.is_piecewise_linear:
        return best_intercept(loss, p, q, f, c)

    def slope(b: float) -> float:
        return float(c @ (q * loss.derivative(p + q * (f + b))))

    spread = float(np.max(np.abs(p - q * f), initial=0.0)) + 1.0
    return root_of_increasing(slope, -spread, spread)


__all__ = ["best_intercept_any", "build_dual_cvxpy", "build_dual_matrix", "recover_dual"]
