"""The bound made safe from any solver's duals (Neumaier-Shcherbina, with the tangent plane for
QPs), and a user's model without a dual of its own that becomes OPTIMAL through it."""

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from user_models import UserLeastAbsolute, UserRidge

import optframe as of
from optframe.backend import SolveOptions
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.model import Formulation, MatrixProblem, ProblemClass
from optframe.registry import backends
from optframe.safe_bound import safe_lower_bound


def _backend(name):
    layer, _, solver = name.partition(":")
    return next(cls for cls in backends()[solver] if cls.layer == layer)()


def _random_problem(seed, quadratic):
    """A feasible, bounded LP or QP with ranged, one-sided and equality rows, and free columns."""
    rng = np.random.default_rng(seed)
    n, m = 8, 6
    A = sp.csc_array(rng.normal(size=(m, n)))
    x0 = rng.normal(size=n)
    ax = A @ x0
    kind = rng.integers(0, 4, size=m)  # 0: >=, 1: <=, 2: ranged, 3: equality
    row_lower = np.where(kind == 1, -np.inf, np.where(kind == 3, ax, ax - 1.0))
    row_upper = np.where(kind == 0, np.inf, np.where(kind == 3, ax, ax + 1.0))
    if quadratic:
        F = rng.normal(size=(n, n))
        P = sp.csc_array(F.T @ F)
        lower = np.where(rng.random(n) < 0.5, x0 - 2.0, -np.inf)
        upper = np.where(rng.random(n) < 0.5, x0 + 2.0, np.inf)
    else:
        P, lower, upper = None, x0 - 2.0, x0 + 2.0
    c = rng.normal(size=n)
    return MatrixProblem(
        c=c, A=A, row_lower=row_lower, row_upper=row_upper, lower=lower, upper=upper, P=P
    )


def _solve(problem):
    formulation = Formulation(
        "matrix",
        problem,
        problem.problem_class,
        {"x": slice(0, problem.n_variables)},
        constraints={"rows": slice(0, problem.n_rows)},
    )
    name = "matrix:clarabel" if problem.P is not None else "matrix:highs"
    raw = _backend(name).solve(formulation, SolveOptions(tol=1e-10))
    assert raw.status is of.Status.OPTIMAL
    return raw.values.primal["x"], raw.values.dual["rows"]


@pytest.mark.parametrize("quadratic", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_the_bound_is_tight_at_the_solvers_duals_and_valid_at_any_others(seed, quadratic):
    problem = _random_problem(seed, quadratic)
    x, y = _solve(problem)
    optimum = problem.objective_value(x)
    scale = max(1.0, abs(optimum))
    found = safe_lower_bound(problem, x, y)
    assert found.value <= optimum + 1e-9 * scale
    assert found.value >= optimum - 1e-6 * scale  # tight where the duals are right
    rng = np.random.default_rng(100 + seed)
    for size in (1e-8, 1e-4, 1e-1, 10.0):
        noisy = safe_lower_bound(
            problem, x + size * rng.normal(size=x.size), y + size * rng.normal(size=y.size)
        )
        assert noisy.value <= optimum + 1e-9 * scale, size


def test_wrong_signs_toward_an_infinite_side_are_zeroed_not_trusted():
    # min x s.t. x >= 1 (one row): the optimum is 1. A multiplier of -5 on the >= row points at
    # its infinite upper side; taken as it is, it would give 5 * (-inf) or a bound above 1.
    problem = MatrixProblem(
        c=np.array([1.0]),
        A=sp.csc_array(np.array([[1.0]])),
        row_lower=np.array([1.0]),
        row_upper=np.array([np.inf]),
        lower=np.array([-10.0]),
        upper=np.array([10.0]),
    )
    found = safe_lower_bound(problem, np.array([1.0]), np.array([-5.0]))
    assert found.zeroed_rows == 1
    assert found.value <= 1.0
    assert found.value == pytest.approx(-10.0)  # the box alone: x >= -10


def test_a_free_column_without_balance_gives_no_bound():
    # min x0 s.t. x0 - x1 = 0, x1 >= 0 (x0 free): y = 0.5 leaves r0 = 0.5 on the free column,
    # and no row is open to balance it once the row's multiplier is fixed by x1's bound.
    problem = MatrixProblem(
        c=np.array([1.0, 0.0]),
        A=sp.csc_array(np.array([[1.0, -1.0]])),
        row_lower=np.array([0.0]),
        row_upper=np.array([0.0]),
        lower=np.array([-np.inf, 0.0]),
        upper=np.array([np.inf, np.inf]),
    )
    exact = safe_lower_bound(problem, np.zeros(2), np.array([1.0]))
    assert exact.value == pytest.approx(0.0, abs=1e-15)
    balanced = safe_lower_bound(problem, np.zeros(2), np.array([0.5]))
    assert balanced.value == pytest.approx(0.0, abs=1e-12)  # the equality row is moved to 1


# ------------------------------------------------------------ a user's model without a dual


def _data(seed=0, n=60, m=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    return Dataset(X=X, y=X @ np.arange(1.0, m + 1) + rng.laplace(size=n))


@pytest.mark.parametrize("backend", ["matrix:highs", "matrix:clarabel", "matrix:scip"])
def test_a_users_lp_without_a_dual_is_optimal_through_the_solvers_duals(backend):
    model = UserLeastAbsolute(_data())
    result = of.solve(model, Direct(), backend=backend)
    assert result.status is of.Status.OPTIMAL, result.stats.get("safe_bound_how")
    reference = of.solve(of.models.LADRegression(model.data, fit_intercept=False))
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    assert result.bound <= reference.objective * (1 + 1e-9)


@pytest.mark.parametrize("backend", ["matrix:clarabel", "matrix:osqp", "matrix:piqp", "matrix:fn"])
def test_a_users_qp_with_free_variables_is_certified(backend):
    model = UserRidge(_data())
    result = of.solve(model, Direct(), backend=backend, tol=1e-9)
    X, y = np.asarray(model.data.X), np.asarray(model.data.y)
    beta = np.linalg.solve(X.T @ X + np.eye(X.shape[1]), X.T @ y)
    optimum = model.objective({"beta": beta})
    assert result.bound is not None, result.stats.get("safe_bound_how")
    assert result.bound <= optimum * (1 + 1e-12)
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(optimum, rel=1e-6)


class LyingHighs:
    """HiGHS whose answer is moved off the optimum, duals and all, and still called optimal."""

    def __init__(self, shift):
        self.inner = _backend("matrix:highs")
        self.shift = shift

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def solve(self, formulation, options):
        raw = self.inner.solve(formulation, options)
        primal = {k: v + self.shift for k, v in raw.values.primal.items()}
        dual = {k: v * (1 + self.shift) for k, v in raw.values.dual.items()}
        return replace(raw, values=replace(raw.values, primal=primal, dual=dual))


def test_a_lying_back_end_cannot_make_a_users_model_optimal(monkeypatch):
    from optframe.drivers import direct

    model = UserLeastAbsolute(_data())
    liar = LyingHighs(shift=0.05)
    monkeypatch.setattr(direct, "resolve_backend", lambda *args, **kwargs: liar)
    result = of.solve(model, Direct(), backend="matrix:highs")
    reference = of.solve(of.models.LADRegression(model.data, fit_intercept=False))
    assert result.stats["claimed_status"] == "optimal"
    assert result.status is not of.Status.OPTIMAL
    assert result.bound is None or result.bound <= reference.objective * (1 + 1e-9)


def test_a_model_with_its_own_dual_keeps_it():
    # LADRegression writes dual_bound: the safe bound is not even computed for it.
    model = of.models.LADRegression(_data(), fit_intercept=False)
    result = of.solve(model, Direct(form="primal"), backend="matrix:highs")
    assert "safe_bound" not in result.stats
    assert result.status is of.Status.OPTIMAL


def test_duals_a_little_outside_their_box_are_shrunk_toward_zero(monkeypatch):
    # Every multiplier 1e-9 too large: each t_i's reduced cost 1 - y_i - y_(n+i) is -1e-9,
    # toward its open end. Without the least-squares balance, the shrink alone repairs it.
    from optframe import safe_bound

    model = UserLeastAbsolute(_data(seed=3, n=80))
    problem = model.build("matrix").problem
    x, y = _solve(problem)
    optimum = float(problem.c @ x)
    monkeypatch.setattr(safe_bound, "_balance_free_columns", lambda p, Q, c, x, y, *a: (x, y))
    found = safe_lower_bound(problem, x, y * (1 + 1e-9))
    assert [step.kind for step in found.steps].count("shrink") == 1
    assert found.value <= optimum * (1 + 1e-12)
    assert found.value >= optimum * (1 - 1e-8)
    monkeypatch.setattr(safe_bound, "_shrink_factor", lambda *args: None)
    assert safe_lower_bound(problem, x, y * (1 + 1e-9)).value == -np.inf


def test_a_quantile_lp_on_clarabels_duals_is_certified():
    # The quantile LP (tau = 0.25) on 1,000 rows of cpusmall: Clarabel's duals leave six slacks'
    # reduced costs at about -2.5e-11, which the balance does not repair and the shrink does.
    from optframe.data import load_dataset

    data = load_dataset("cpusmall").subset(range(1000))
    X, y, tau = sp.csc_array(data.X), data.y, 0.25
    n, m = X.shape
    eye = sp.eye_array(n, format="csc")
    problem = MatrixProblem(
        c=np.concatenate([np.zeros(m + 1), np.full(n, tau), np.full(n, 1 - tau)]),
        A=sp.hstack([X, sp.csc_array(np.ones((n, 1))), eye, -eye], format="csc"),
        row_lower=y,
        row_upper=y,
        lower=np.r_[np.full(m + 1, -np.inf), np.zeros(2 * n)],
        upper=np.full(m + 1 + 2 * n, np.inf),
    )
    formulation = Formulation(
        "matrix", problem, ProblemClass.LP, {"x": slice(0, problem.n_variables)},
        constraints={"rows": slice(0, n)},
    )  # fmt: skip
    raw = _backend("matrix:clarabel").solve(formulation, SolveOptions())
    x, duals = raw.values.primal["x"], raw.values.dual["rows"]
    exact = _backend("matrix:highs").solve(formulation, SolveOptions(tol=1e-10))
    optimum = float(problem.c @ exact.values.primal["x"])
    found = safe_lower_bound(problem, x, duals)
    assert "shrink" in [step.kind for step in found.steps]
    assert found.value <= optimum * (1 + 1e-12)
    assert found.value >= optimum * (1 - 1e-7)


def test_no_shrink_when_a_cost_points_the_wrong_way():
    # t_i with a negative cost: shrinking the multipliers toward 0 cannot turn its reduced cost
    # nonnegative, so the bound stays -inf (the problem is unbounded below)
    model = UserLeastAbsolute(_data(seed=3, n=80))
    problem = model.build("matrix").problem
    x, y = _solve(problem)
    c = problem.c.copy()
    c[-1] = -1.0
    bad = replace(problem, c=c)
    found = safe_lower_bound(bad, x, y)
    assert found.value == -np.inf
    assert "shrink" not in [step.kind for step in found.steps]
