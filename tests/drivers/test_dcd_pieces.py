"""DCD on the PiecewiseBoxDual: every PLQ loss with the ridge penalty, against Direct (Clarabel).

One dual variable per ReLU or ReHU piece of each sample's loss (ReHLine's coordinate descent):
the squared hinge, Huber, smoothed hinge, expectile and (squared) epsilon-insensitive losses, on
real data, dense and sparse, with sample weights; a lying structure and a perturbed solution must
not come back OPTIMAL.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp

import optframe as of
import optframe.models._risk_structures as risk_structures
from optframe.capabilities import LinearBoxDual, PiecewiseBoxDual
from optframe.data import Dataset, load_dataset
from optframe.drivers import DCD, Direct
from optframe.errors import IncompatibleDriver
from optframe.losses import EpsilonInsensitive, Huber, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L1

TIGHT = {"tol_gap_rel": 1e-11, "tol_gap_abs": 1e-11, "tol_feas": 1e-11}
INF = math.inf

SMOOTHED_HINGE = PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification")
EXPECTILE = PLQLoss(rehu=[(math.sqrt(0.6), 0.0, INF), (-math.sqrt(1.4), 0.0, INF)])
SQUARED_EPS = PLQLoss(rehu=[(1.0, -0.5, INF), (-1.0, -0.5, INF)])


@pytest.fixture(scope="module")
def a1a():
    data = load_dataset("a1a")
    return sp.csr_array(data.X), np.where(np.asarray(data.y) > 0, 1.0, -1.0)


@pytest.fixture(scope="module")
def abalone():
    data = load_dataset("abalone")
    return data.X.toarray(), np.asarray(data.y, dtype=np.float64)


def reference(model):
    return of.solve(model, Direct(form="primal"), backend="clarabel", solver_options=TIGHT)


def check(result, ref, rel=1e-6):
    assert result.status is of.Status.OPTIMAL, result.summary()
    assert result.objective == pytest.approx(ref.objective, rel=rel)
    assert result.bound <= ref.objective + 1e-9 * max(1.0, abs(ref.objective))


@pytest.mark.parametrize("loss", [SquaredHinge(), SMOOTHED_HINGE], ids=["sqhinge", "smooth"])
@pytest.mark.parametrize("sparse", [True, False])
@pytest.mark.parametrize("C", [0.1, 10.0])
def test_classification_losses_match_direct(a1a, loss, sparse, C):
    X, y = a1a
    X = X[:600] if sparse else X[:600].toarray()
    model = EmpiricalRisk(Dataset(X=X, y=y[:600]), loss, C=C, fit_intercept=False)
    assert model.structure_refusal(LinearBoxDual) is not None  # the pieces' dual is used
    result = of.solve(model, DCD())
    assert result.stats["dual"] == "PiecewiseBoxDual"
    check(result, reference(model))


@pytest.mark.parametrize(
    "loss",
    [Huber(1.0), EXPECTILE, SQUARED_EPS, EpsilonInsensitive(0.5)],
    ids=["huber", "expectile", "sq-eps", "eps"],
)
def test_regression_losses_match_direct(abalone, loss):
    X, y = abalone
    model = EmpiricalRisk(Dataset(X=X[:800], y=y[:800]), loss, C=0.5, fit_intercept=False)
    check(of.solve(model, DCD()), reference(model))


def test_sample_weights_count(abalone):
    X, y = abalone
    weights = np.random.default_rng(0).uniform(0.0, 3.0, 500)
    weights[:20] = 0.0  # zero weight: no dual variable
    data = Dataset(X=X[:500], y=y[:500])
    weighted = EmpiricalRisk(data, Huber(1.0), fit_intercept=False, sample_weight=weights)
    result = of.solve(weighted, DCD())
    check(result, reference(weighted))
    plain = of.solve(EmpiricalRisk(data, Huber(1.0), fit_intercept=False), DCD())
    assert abs(plain.objective - result.objective) > 1e-3 * abs(result.objective)


def test_the_dual_is_a_bound_and_the_pieces_sum_to_the_loss(abalone):
    X, y = abalone
    model = EmpiricalRisk(Dataset(X=X[:300], y=y[:300]), EXPECTILE, fit_intercept=False)
    dual = model.structure(PiecewiseBoxDual)
    assert dual.size == 2 * 300
    ref = reference(model)
    rng = np.random.default_rng(1)
    for _ in range(5):  # any point of the box is a lower bound
        alpha = rng.uniform(0.0, 5.0, dual.size)
        assert dual.dual_value(alpha) <= ref.objective + 1e-9 * ref.objective
    w = np.asarray(ref.solution["w"])
    assert dual.primal_value(w) == pytest.approx(ref.objective, rel=1e-12)


@pytest.mark.parametrize("lie", ["targets", "recovery"])
def test_a_lying_structure_is_not_certified(abalone, monkeypatch, lie):
    """Targets off by 5% (the wrong problem) or a recovery that perturbs w: never OPTIMAL."""
    X, y = abalone
    model = EmpiricalRisk(Dataset(X=X[:500], y=y[:500]), Huber(1.0), fit_intercept=False)
    honest = risk_structures.piecewise_box_dual

    def perturbed(recover):
        def recover_(alpha):
            solution = recover(alpha)
            return {**solution, "w": np.asarray(solution["w"]) * (1 + 1e-3)}

        return recover_

    def lying(m):
        dual = honest(m)
        return PiecewiseBoxDual(
            X=dual.X, sample=dual.sample, coef=dual.coef,
            target=dual.target * 1.05 if lie == "targets" else dual.target,
            upper=dual.upper, diagonal=dual.diagonal, primal_value=dual.primal_value,
            recover=perturbed(dual.recover) if lie == "recovery" else dual.recover,
        )  # fmt: skip

    monkeypatch.setattr("optframe.models.empirical_risk.piecewise_box_dual", lying)
    result = of.solve(model, DCD())
    assert result.status is not of.Status.OPTIMAL
    assert result.bound <= reference(model).objective


def test_refusals_name_the_reason(abalone):
    X, y = abalone
    data = Dataset(X=X[:100], y=y[:100])
    with pytest.raises(IncompatibleDriver, match="1'v = 0"):
        of.solve(EmpiricalRisk(data, Huber(1.0)), DCD())
    with pytest.raises(IncompatibleDriver, match="L2"):
        of.solve(EmpiricalRisk(data, Huber(1.0), penalty=L1(), fit_intercept=False), DCD())
