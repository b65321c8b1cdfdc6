"""PrimalNewton on ridge models with a smooth loss, against Direct (Clarabel).

Least squares, Huber, expectile, squared and smoothed hinge and logistic, dense and sparse, with
and without intercept, with sample weights: the objective and the certificate match a tight
Direct solve. A lying structure (the wrong costs, a recovery that moves w) or a perturbed
solution is never OPTIMAL; the L1 part, kinked losses and bad options are refused by name.
"""

import math

import numpy as np
import pytest
import scipy.sparse as sp
from smooth_loss_data import a1a_rows, abalone_rows, data_for, reference

import optframe as of
from optframe.capabilities import ElasticNetSmoothLoss
from optframe.data import Dataset, load_dataset
from optframe.drivers import PrimalNewton
from optframe.errors import IncompatibleDriver, ModelError
from optframe.losses import Hinge, Huber, Logistic, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L1, L2, ElasticNet

TAU = 0.3
EXPECTILE = [(math.sqrt(2 * TAU), 0.0, math.inf), (-math.sqrt(2 * (1 - TAU)), 0.0, math.inf)]
LOSSES = {
    "least_squares": (
        PLQLoss(rehu=[(1.0, 0.0, math.inf), (-1.0, 0.0, math.inf)], kind="regression"),
        "regression",
    ),
    "huber": (Huber(1.0), "regression"),
    "expectile": (PLQLoss(rehu=EXPECTILE, kind="regression"), "regression"),
    "squared_hinge": (SquaredHinge(), "classification"),
    "smoothed_hinge": (PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification"), "classification"),
    "logistic": (Logistic(), "classification"),
}


@pytest.fixture(scope="module")
def a1a():
    """600 rows of a1a (sparse binary features, labels in {-1, +1})."""
    return a1a_rows(600)


@pytest.fixture(scope="module")
def abalone():
    """600 rows of abalone, standardized, the target centered (dense, regression)."""
    return abalone_rows(600)


def check(result, ref, rel=1e-6):
    assert result.status is of.Status.OPTIMAL, result.summary()
    assert ref.status is of.Status.OPTIMAL, ref.summary()
    assert result.driver == "newton"
    assert result.objective == pytest.approx(ref.objective, rel=rel)
    assert result.bound <= ref.objective + 1e-9 * max(1.0, abs(ref.objective))
    assert ref.bound <= result.objective + 1e-9 * max(1.0, abs(result.objective))
    assert result.gap <= 1e-6


@pytest.mark.parametrize("loss_name", sorted(LOSSES))
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
@pytest.mark.parametrize("intercept", [False, True], ids=["no_b", "b"])
def test_matches_direct(a1a, abalone, loss_name, sparse, intercept):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, sparse, a1a, abalone)
    C = 0.05 if kind == "regression" else 0.5
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=L2(), C=C, fit_intercept=intercept)
    result = of.solve(model, PrimalNewton())
    check(result, reference(model))
    assert result.iterations >= 2  # a real solve, not the start point


@pytest.mark.parametrize("loss_name", ["huber", "logistic"])
def test_sample_weights_equal_duplicated_rows(a1a, abalone, loss_name):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, False, a1a, abalone)
    X, y = X[:150], y[:150]
    weights = np.tile([1.0, 2.0, 0.0], 50)
    weighted = EmpiricalRisk(Dataset(X=X, y=y, sample_weight=weights), loss, penalty=L2(), C=0.3)
    rows = np.repeat(np.arange(150), weights.astype(int))
    repeated = EmpiricalRisk(Dataset(X=X[rows], y=y[rows]), loss, penalty=L2(), C=0.3)
    first = of.solve(weighted, PrimalNewton())
    second = of.solve(repeated, PrimalNewton())
    assert first.status is second.status is of.Status.OPTIMAL
    assert first.objective == pytest.approx(second.objective, rel=1e-6)
    check(first, reference(weighted))


def test_agrees_with_dcd_on_a_larger_problem(a1a):
    """All of a1a (1,605 x 123) with the bias as a feature: the same optimum as DCD's."""
    data = load_dataset("a1a")
    X = sp.hstack([sp.csr_array(data.X), np.ones((data.X.shape[0], 1))], format="csr")
    y = np.where(np.asarray(data.y) > 0, 1.0, -1.0)
    for loss in (SquaredHinge(), Logistic()):
        model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=L2(), C=1.0, fit_intercept=False)
        newton = of.solve(model, PrimalNewton())
        dcd = of.solve(model, "dcd")
        assert newton.status is dcd.status is of.Status.OPTIMAL
        assert newton.objective == pytest.approx(dcd.objective, rel=2e-6)
        assert newton.bound <= dcd.objective
        assert dcd.bound <= newton.objective


@pytest.mark.parametrize("lie", ["costs", "recovery"])
def test_a_lying_structure_is_not_certified(a1a, monkeypatch, lie):
    """Costs 5 % off (the wrong problem) or a recovery that moves w: never OPTIMAL."""
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), penalty=L2(), C=0.5)
    honest = model.structure(ElasticNetSmoothLoss)

    def perturbed(w, b):
        return honest.recover(np.asarray(w) * (1 + 1e-2) + 1e-3, b)

    changes = {"costs": {"costs": honest.costs * 1.05}, "recovery": {"recover": perturbed}}[lie]
    fields = {name: getattr(honest, name) for name in honest.__dataclass_fields__}
    lying = ElasticNetSmoothLoss(**{**fields, **changes})
    monkeypatch.setattr(
        "optframe.models.empirical_risk.elastic_net_smooth_loss", lambda model: lying
    )
    result = of.solve(model, PrimalNewton())
    ref = reference(model)
    assert result.bound <= ref.objective + 1e-9 * ref.objective
    assert result.status is not of.Status.OPTIMAL, result.summary()


def test_a_perturbed_solution_is_not_certified(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L2(), C=0.5)
    result = of.solve(model, PrimalNewton())
    assert result.status is of.Status.OPTIMAL
    w = np.asarray(result.solution["w"]).copy()
    w[np.argmax(np.abs(w))] *= 1.02
    solution = {"w": w, "intercept": result.solution["intercept"]}
    objective, bound = model.objective(solution), model.dual_bound(solution)
    assert (objective - bound) / model.gap_scale(objective, bound) > 1e-6


def test_history_limits_callback_and_warm_start(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), penalty=L2(), C=0.5)
    limited = of.solve(model, PrimalNewton(), time_limit=1e-9)
    assert limited.status is of.Status.TIME_LIMIT
    assert limited.iterations == 0
    assert limited.has_solution  # the start, certified by the model
    stopped = of.solve(model, PrimalNewton(), max_iter=1)
    assert stopped.status is of.Status.ITERATION_LIMIT
    assert stopped.bound <= stopped.objective
    full = of.solve(model, PrimalNewton())
    assert full.status is of.Status.OPTIMAL
    gaps = [record.extras["gap"] for record in full.history]
    assert gaps[-1] <= 1e-6 * full.objective < gaps[0]
    assert all(record.bound <= full.objective + 1e-9 for record in full.history)
    called = of.solve(model, PrimalNewton(), callback=lambda record: True)
    assert called.status is of.Status.CONVERGED
    assert called.iterations == 0
    plain = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), C=0.5, fit_intercept=False)
    optimum = of.solve(plain, PrimalNewton())
    again = of.solve(plain, PrimalNewton(warm_start=optimum.solution["w"]))
    assert again.status is of.Status.OPTIMAL
    assert again.iterations <= 1
    with pytest.raises(ModelError, match="warm_start"):
        of.solve(model, PrimalNewton(warm_start=np.zeros(3)))


def test_refusals_name_the_reason_and_the_driver_that_applies(a1a):
    X, y = a1a
    data = Dataset(X=X, y=y)
    with pytest.raises(IncompatibleDriver, match=r"L1 part.*CoordinateDescent"):
        of.solve(EmpiricalRisk(data, Logistic(), penalty=ElasticNet(0.5)), PrimalNewton())
    with pytest.raises(IncompatibleDriver, match=r"L1 part"):
        of.solve(EmpiricalRisk(data, SquaredHinge(), penalty=L1()), PrimalNewton())
    with pytest.raises(IncompatibleDriver, match="kink"):
        of.solve(EmpiricalRisk(data, Hinge(), penalty=L2()), PrimalNewton())
    with pytest.raises(IncompatibleDriver, match="needs a penalty"):
        of.solve(EmpiricalRisk(data, Logistic(), penalty=None), PrimalNewton())


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"tol": -1.0}, "tol"),
        ({"max_iter": 0}, "max_iter"),
        ({"max_cg": 1.5}, "max_cg"),
        ({"cg_tol": 1.0}, "cg_tol"),
        ({"cg_tol": 0.0}, "cg_tol"),
    ],
)
def test_bad_options_raise_model_error(options, match):
    with pytest.raises(ModelError, match=match):
        PrimalNewton(**options)
