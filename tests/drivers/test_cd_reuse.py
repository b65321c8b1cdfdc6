"""CoordinateDescent's reused work: the gap from the Newton step's values and skipped columns.

The outer gap reads the loss terms the last line search evaluated and multiplies only the kept
columns when a Cauchy-Schwarz bound proves the screened ones harmless. Each iteration's bound
must equal the one computed from scratch over every column (a plain numpy reference here);
a bound that fails forces the pass over every column; before OPTIMAL is claimed, the objective
from the kept loss arguments is raised by a bound on their drift from the ones from scratch.
"""

import math

import numpy as np
import pytest
from smooth_loss_data import a1a_rows

import optframe as of
from optframe.capabilities import ElasticNetSmoothLoss
from optframe.data import Dataset
from optframe.drivers import CoordinateDescent
from optframe.drivers import cd as cd_driver
from optframe.losses import Logistic, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L1, ElasticNet

LEAST_SQUARES = PLQLoss(rehu=[(1.0, 0.0, math.inf), (-1.0, 0.0, math.inf)], kind="regression")
CASES = {
    "logistic-l1": (Logistic(), L1(), False),
    "logistic-l1-intercept": (Logistic(), L1(), True),
    "logistic-enet": (Logistic(), ElasticNet(0.5), False),
    "squared_hinge-l1": (SquaredHinge(), L1(), False),
    "least_squares-enet-intercept": (LEAST_SQUARES, ElasticNet(0.7), True),
}


@pytest.fixture(scope="module")
def a1a():
    """400 rows of a1a (sparse binary features, labels in {-1, +1})."""
    return a1a_rows(400)


def scratch_bound(problem: ElasticNetSmoothLoss, w: np.ndarray, b: float) -> tuple[float, float]:
    """``(P, D)`` at ``(w, b)`` in numpy, every column multiplied (the rule of the driver's doc)."""
    X = problem.X
    a = problem.offset + problem.slope * (np.asarray(X @ w).reshape(-1) + b)
    c, q = problem.costs, problem.slope
    if problem.loss == "logistic":
        loss = np.logaddexp(0.0, -a)
        derivative = -1.0 / (1.0 + np.exp(a))
    else:
        z = problem.pieces[:, 0][None, :] * a[:, None] + problem.pieces[:, 1][None, :]
        tau = problem.pieces[:, 2][None, :]
        inside = (z > 0) & (z < tau)
        loss = np.where(z <= 0, 0.0, np.where(z <= tau, 0.5 * z * z, tau * (z - 0.5 * tau)))
        loss = loss.sum(axis=1)
        s = problem.pieces[:, 0][None, :]
        derivative = np.where(inside, s * z, np.where(z >= tau, s * tau, 0.0)).sum(axis=1)
    lo, hi = problem.domain
    primal = float(c @ loss) + problem.lam1 * np.abs(w).sum() + 0.5 * problem.lam2 * w @ w
    v = -q * c * np.clip(derivative, lo, hi)
    if problem.fit_intercept:
        keep_up, keep_down = problem.balance_factors(v)
        v = np.where(v > 0, v * keep_up, v * keep_down)
    z = np.asarray(X.T @ v).reshape(-1)
    if problem.lam2 == 0.0 and np.abs(z).max() > problem.lam1:
        scale = problem.lam1 / np.abs(z).max()
        v, z = v * scale, z * scale
    return primal, problem.dual_value(-q * v, z)


def iterate(state: cd_driver._State, rounds: int, check) -> None:
    """The driver's outer loop for ``rounds`` iterations, ``check`` after every gap."""
    for _ in range(rounds):
        primal, bound, z_raw, z_hat = state.gap()
        check(primal, bound)
        state.screen(z_hat, primal - bound)
        scores = state.scores(z_raw)
        largest = float(scores.max(initial=0.0))
        if largest == 0.0:
            return
        ws = state.working_set(scores, 10, True)
        state.newton(ws, 10_000, 0.1 * largest, 0.0, None)


def _start(a1a, case: str):
    """The case's problem on a1a and CoordinateDescent's state at its start."""
    loss, penalty, intercept = CASES[case]
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=penalty, C=0.3,
                          fit_intercept=intercept)  # fmt: skip
    problem = model.structure(ElasticNetSmoothLoss)
    return problem, cd_driver._State(problem, None)


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_gap_equals_the_one_from_scratch(a1a, case):
    problem, state = _start(a1a, case)
    skipped = []

    def check(primal, bound):
        want_primal, want_bound = scratch_bound(problem, state.w, float(state.intercept[0]))
        scale = max(1.0, abs(want_primal))
        assert primal == pytest.approx(want_primal, abs=1e-10 * scale)
        assert bound == pytest.approx(want_bound, abs=1e-10 * scale)
        assert bound <= primal + 1e-12 * scale
        skipped.append(state.screened)

    iterate(state, 8, check)
    assert max(skipped) > 0  # screened columns were there to skip


def test_a_bound_that_fails_multiplies_every_column(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L1(), C=0.3)
    problem = model.structure(ElasticNetSmoothLoss)
    state = cd_driver._State(problem, None)
    iterate(state, 6, lambda primal, bound: None)
    assert np.any(state.norms[~state.active] > 0)  # screened columns that are not empty
    # column norms a thousand times too large: the bound cannot hold, every column is multiplied
    state.norms *= 1e3
    state.reference = (state.reference[0] + 1.0, state.reference[1])
    before = state.reference
    _, bound, _, _ = state.gap()
    assert state.reference is not before  # renewed by the pass over every column
    want_primal, want_bound = scratch_bound(problem, state.w, float(state.intercept[0]))
    assert bound == pytest.approx(want_bound, abs=1e-10 * abs(want_primal))


@pytest.mark.parametrize("case", ["logistic-l1", "logistic-l1-intercept", "logistic-enet"])
def test_only_the_doubtful_screened_columns_are_multiplied(a1a, case):
    """A screened column whose bound fails is multiplied alone; the gap equals the one from
    scratch, and the reference stays."""
    problem, state = _start(a1a, case)
    intercept = CASES[case][2]
    iterate(state, 6, lambda primal, bound: None)
    out = np.flatnonzero(~state.active & (state.norms > 0))
    assert out.size >= 3
    state.norms[out[0]] *= 1e6  # its bound can no longer hold
    multiplied = []
    honest = cd_driver.core.column_products if not intercept else cd_driver.core.split_products

    def counting(*args):
        multiplied.append(np.array(args[6]))
        return honest(*args)

    name = "split_products" if intercept else "column_products"
    before = state.reference
    try:
        setattr(cd_driver.core, name, counting)
        primal, bound, _, _ = state.gap()
    finally:
        setattr(cd_driver.core, name, honest)
    assert state.reference is before
    assert any(list(columns) == [out[0]] for columns in multiplied)
    want_primal, want_bound = scratch_bound(problem, state.w, float(state.intercept[0]))
    assert primal == pytest.approx(want_primal, abs=1e-10 * abs(want_primal))
    assert bound == pytest.approx(want_bound, abs=1e-10 * abs(want_primal))


@pytest.mark.parametrize("case", ["logistic-l1-intercept", "least_squares-enet-intercept"])
def test_the_drift_of_the_kept_arguments_is_bounded(a1a, case):
    """``P`` from the kept loss arguments plus :meth:`drift` is never below ``P`` from scratch."""
    problem, state = _start(a1a, case)
    iterate(state, 3, lambda primal, bound: None)
    want, _ = scratch_bound(problem, state.w, float(state.intercept[0]))
    state.refresh()
    assert state.drift() == pytest.approx(0.0, abs=1e-12 * abs(want))
    rng = np.random.default_rng(0)
    for size in (1e-9, 1e-4, 1e-1):  # kept arguments that drifted: their loss terms with them
        state.refresh()
        state.a += rng.normal(0.0, size, state.a.size)
        pieces = np.ascontiguousarray(problem.pieces).reshape(-1, 3)
        state.loss = cd_driver.core.evaluate(
            state.kind, pieces, state.a, state.c, state.q, state.raw, state.hess, state.values
        )
        kept, _, _, _ = state.gap()
        assert kept + state.drift() >= want - 1e-12 * abs(want)
        if size == 1e-1:
            assert kept != want  # the drift did move P: the bound was needed


def test_an_optimal_claim_bounds_the_objective_from_scratch(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L1(), C=0.3)
    result = of.solve(model, CoordinateDescent())
    assert result.status is of.Status.OPTIMAL
    problem = model.structure(ElasticNetSmoothLoss)
    w = np.asarray(result.solution["w"])
    primal, _ = scratch_bound(problem, w, float(result.solution["intercept"][0]))
    last = result.history[-1]
    assert last.objective >= primal - 1e-12 * abs(primal)
    assert last.objective == pytest.approx(primal, abs=1e-10 * abs(primal))
    assert last.bound <= primal


@pytest.mark.parametrize("factor", [1.0, 1.0 - 1e-9, 1.0 - 1e-4, 0.9, 0.3, 0.0])
def test_the_logistic_dual_terms_without_logarithms_match_the_conjugate(factor):
    """The compiled logistic dual terms equal those of ``Logistic.conjugate`` (never above)."""
    from optframe.drivers import cd_core

    rng = np.random.default_rng(3)
    a = np.concatenate([rng.normal(0.0, 4.0, 400), [-40.0, -1e-3, 0.0, 1e-3, 40.0, 700.0]])
    n = a.size
    c = rng.uniform(0.1, 2.0, n)
    q = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    p = np.zeros(n)
    raw, hess, values = np.empty(n), np.empty(n), np.empty(n)
    loss = cd_core.evaluate(cd_core.LOGISTIC, np.zeros((0, 3)), a, c, q, raw, hess, values)
    assert loss == pytest.approx(float(c @ np.logaddexp(0.0, -a)), rel=1e-13)
    v = np.empty(n)
    cd_core.multipliers(q, c, raw, -1.0, 0.0, v)
    for keep_up, keep_down in ((1.0, 1.0), (0.7, 1.0), (1.0, 0.7)):
        got = cd_core.logistic_dual_loss(q, c, p, v, a, values, keep_up, keep_down, factor)
        f = np.where(v > 0, keep_up, keep_down) * factor
        theta = -q * v * f
        want = float(theta @ p) - float(c @ Logistic().conjugate(theta / c))
        assert got == pytest.approx(want, abs=1e-12 * float(c.sum()))
        assert got <= want + 1e-13 * float(c.sum())
