"""The fn back-end on separable QPs: ``min c'x + x'Hx/2`` with ``H`` diagonal, equality rows.

Random instances with every kind of column (boxed with and without curvature, bounded on one
side, free, fixed, shifted) against Clarabel; the ridge duals of ``EmpiricalRisk`` against a
Direct reference by objective and certificate; the bound against an independent evaluation of
the Lagrangian dual; refusals; and a lying iteration that the model's certificate catches.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
import scipy.sparse as sp
from fn_problems import separable_qp

import optframe as of
from optframe.backend import SolveOptions
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.losses import Hinge, Huber, Pinball, PLQLoss, SquaredHinge
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.models import EmpiricalRisk, RegularizedLAD
from optframe.penalties import L2
from optframe.result import Status
from optframe.solvers import _fn_core
from optframe.solvers.clarabel import ClarabelMatrixBackend
from optframe.solvers.fn import FnMatrixBackend, _box_lp

INF = np.inf


def dual_value(formulation: Formulation, y: np.ndarray) -> float:
    """The Lagrangian dual at row duals ``y``: each column's own minimum, written out here."""
    p = formulation.problem
    h = p.P.diagonal()
    d = p.c - np.asarray(p.A.T @ y)
    total = float(p.row_upper @ y) + p.offset
    for dj, hj, lo, up in zip(d, h, p.lower, p.upper, strict=True):
        if hj > 0.0:
            t = min(max(-dj / hj, lo), up)
            total += dj * t + 0.5 * hj * t * t
        else:
            total += min(dj * lo, dj * up)
    return total


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("density", [1.0, 0.2])
def test_random_separable_qps_agree_with_clarabel(seed, density):
    formulation = separable_qp(seed, density=density)
    options = SolveOptions(tol=1e-9)
    ours = FnMatrixBackend().solve(formulation, options)
    reference = ClarabelMatrixBackend().solve(formulation, options)
    assert ours.status is Status.OPTIMAL, ours.message
    assert reference.status is Status.OPTIMAL
    scale = 1.0 + abs(reference.objective)
    assert ours.objective == pytest.approx(reference.objective, abs=1e-7 * scale)
    assert ours.bound <= reference.objective + 1e-8 * scale
    y = ours.values.dual["rows"]
    assert dual_value(formulation, y) == pytest.approx(ours.bound, abs=1e-9 * scale)
    x = ours.values.primal["x"]
    p = formulation.problem
    assert np.all(x >= p.lower)
    assert np.all(x <= p.upper)
    assert np.max(np.abs(p.A @ x - p.row_upper)) < 1e-7 * scale
    value = float(p.c @ x + 0.5 * x @ (p.P @ x)) + p.offset
    assert value == pytest.approx(ours.objective, abs=1e-9 * scale)


@pytest.mark.parametrize("seed", range(3))
def test_the_bound_is_below_the_optimum_at_any_duals(seed):
    formulation = separable_qp(seed + 20)
    optimum = ClarabelMatrixBackend().solve(formulation, SolveOptions(tol=1e-10)).objective
    p = formulation.problem
    lp, shift = _box_lp(p, np.flatnonzero(p.upper > p.lower), "auto", p.P.diagonal())
    constant = float(p.c @ shift + 0.5 * p.P.diagonal() @ shift**2) + p.offset
    rng = np.random.default_rng(seed)
    for _ in range(20):
        y = rng.standard_normal(p.n_rows) * rng.uniform(0.1, 10.0)
        ours = lp.bound(y) + constant
        assert ours == pytest.approx(dual_value(formulation, y), rel=1e-12, abs=1e-9)
        assert ours <= optimum + 1e-9 * (1.0 + abs(optimum))


def test_a_problem_without_rows_is_solved_in_closed_form():
    problem = MatrixProblem(
        c=np.array([-2.0, 1.0, 3.0, -1.0]),
        A=sp.csc_array((0, 4)),
        row_lower=np.zeros(0),
        row_upper=np.zeros(0),
        lower=np.array([0.0, -INF, 0.0, 0.0]),
        upper=np.array([1.0, INF, INF, 5.0]),
        P=sp.diags([1.0, 4.0, 2.0, 0.0]),
    )
    formulation = Formulation("matrix", problem, ProblemClass.QP, variables={"x": slice(0, 4)})
    ours = FnMatrixBackend().solve(formulation, SolveOptions())
    assert ours.status is Status.OPTIMAL
    np.testing.assert_allclose(ours.values.primal["x"], [1.0, -0.25, 0.0, 5.0])
    assert ours.objective == pytest.approx(-2.0 + 0.5 - 0.25 + 2.0 * 0.0625 - 5.0)


# --------------------------------------------------------------------- the ridge duals of models
def _classification(n: int, d: int, seed: int, sparse: bool) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + rng.standard_normal(n) > 0, 1.0, -1.0)
    if sparse:
        X = sp.csr_array(X * (rng.uniform(size=X.shape) < 0.3))
    return Dataset(X=X, y=y)


def _regression(n: int, d: int, seed: int) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    return Dataset(X=X, y=X @ rng.standard_normal(d) + rng.laplace(size=n))


SMOOTHED_HINGE = PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification")


def ridge_models():
    weights = np.random.default_rng(9).uniform(0.2, 3.0, 400)
    cls, reg = _classification(400, 6, 0, False), _regression(400, 5, 1)
    return {
        "hinge": EmpiricalRisk(cls, Hinge(), penalty=L2(), C=2.0),
        "hinge-no-intercept": EmpiricalRisk(cls, Hinge(), penalty=L2(), fit_intercept=False),
        "hinge-sparse": EmpiricalRisk(_classification(500, 40, 2, True), Hinge(), penalty=L2()),
        "hinge-weighted": EmpiricalRisk(cls, Hinge(), penalty=L2(), sample_weight=weights),
        "squared-hinge": EmpiricalRisk(cls, SquaredHinge(), penalty=L2()),
        "smoothed-hinge": EmpiricalRisk(cls, SMOOTHED_HINGE, penalty=L2(), fit_intercept=False),
        "huber-weighted": EmpiricalRisk(reg, Huber(1.0), penalty=L2(), sample_weight=weights),
        "pinball": EmpiricalRisk(reg, Pinball(0.3), penalty=L2(), C=10.0),
        "regularized-lad": RegularizedLAD(reg),
    }


@pytest.mark.parametrize("name", list(ridge_models()))
def test_ridge_duals_on_fn_match_a_direct_reference(name):
    model = ridge_models()[name]
    result = of.solve(model, driver=Direct(form="dual"), backend="fn")
    reference = of.solve(model, driver=Direct(), backend="clarabel")
    assert result.backend == "matrix:fn"
    assert reference.status is Status.OPTIMAL
    assert result.status is Status.OPTIMAL, (result.stats.get("solver_status"), result.gap)
    assert result.objective == pytest.approx(reference.objective, rel=1e-7)
    assert result.gap <= result.stats["gap_tol"]
    assert result.bound <= reference.objective * (1 + 1e-9)


def test_a_lying_iteration_is_not_certified(monkeypatch):
    # The iteration claims "optimal" at a point moved off the optimum: the model's own
    # certificate (not fn's stopping test) decides the status.
    model = ridge_models()["hinge"]
    honest = _fn_core.frisch_newton

    def lying(lp, **kwargs):
        point = honest(lp, **kwargs)
        moved = point.x.copy()
        samples = lp.c.size - (lp.A.shape[0] - 1)  # the multipliers, before the columns z
        moved[:samples] = np.random.default_rng(0).permutation(moved[:samples])
        return _fn_core.Iterate(moved, point.y, point.objective, point.bound, 0.0,
                                point.iterations, "optimal")  # fmt: skip

    monkeypatch.setattr("optframe.solvers.fn.frisch_newton", lying)
    result = of.solve(model, driver=Direct(form="dual"), backend="fn")
    assert result.status is not Status.OPTIMAL
    assert result.gap > 1e-6


# ------------------------------------------------------------------------------------ refusals
def _with_P(P: sp.sparray, lower=None, upper=None) -> Formulation:
    n = P.shape[0]
    problem = MatrixProblem(
        c=np.ones(n),
        A=sp.csc_array(np.ones((1, n))),
        row_lower=np.ones(1),
        row_upper=np.ones(1),
        lower=np.zeros(n) if lower is None else lower,
        upper=np.ones(n) if upper is None else upper,
        P=P,
    )
    return Formulation("matrix", problem, ProblemClass.QP, variables={"x": slice(0, n)})


@pytest.mark.parametrize(
    ("formulation", "words"),
    [
        (_with_P(sp.csc_array([[1.0, 0.5], [0.5, 1.0]])), "off-diagonal"),
        (_with_P(sp.diags([1.0, -1.0])), "negative"),
        (_with_P(sp.diags([1.0, 0.0]), upper=np.array([1.0, INF])), "without a quadratic term"),
    ],
)
def test_a_qp_outside_the_shape_is_refused_with_the_reason(formulation, words):
    assert words in FnMatrixBackend.refusal(formulation)
    result = FnMatrixBackend().solve(formulation, SolveOptions())
    assert result.status is Status.ERROR
    assert words in result.message
    assert "'clarabel'" in result.message


def test_the_compiled_sparse_normal_matrix_is_scipy_s_upper_triangle():
    rng = np.random.default_rng(4)
    A = sp.csr_array(sp.random(7, 300, density=0.1, random_state=4, data_rvs=rng.standard_normal))
    theta = rng.uniform(0.1, 5.0, 300)
    lp = _fn_core.BoxLP(A, np.zeros(7), np.zeros(300), np.ones(300))
    ours = lp.normal_matrix(theta)
    reference = ((A * theta) @ A.T).toarray()
    np.testing.assert_allclose(np.triu(ours), np.triu(reference), rtol=1e-13, atol=1e-13)
    assert np.all(np.tril(ours, -1) == 0.0)  # the upper triangle only, as cho_factor reads it


def test_the_kernel_s_compilation_is_kept_off_the_solve_clock(monkeypatch):
    # Direct asks the back-end to compile before its clock starts and reports it as compile time
    model = ridge_models()["hinge-sparse"]
    formulation = model.build("matrix", form="dual")
    assert FnMatrixBackend().prepare(formulation) >= 0.0  # sparse: the kernel is compiled
    dense = ridge_models()["hinge"].build("matrix", form="dual")
    assert FnMatrixBackend().prepare(dense) == 0.0  # dense: BLAS, nothing to compile

    def slow(self, formulation):
        time.sleep(0.4)
        return 0.4

    monkeypatch.setattr(FnMatrixBackend, "prepare", slow)
    began = time.perf_counter()
    result = of.solve(model, driver=Direct(form="dual"), backend="fn")
    wall = time.perf_counter() - began
    assert result.status is Status.OPTIMAL
    assert result.timings.compile == pytest.approx(0.4)
    assert result.timings.total <= wall - 0.35
