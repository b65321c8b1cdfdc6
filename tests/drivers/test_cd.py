"""CoordinateDescent on L1 and elastic-net models with a smooth loss, against Direct (Clarabel).

Least squares, logistic, squared hinge and Huber, each with L1() and ElasticNet(0.5), dense and
sparse, with and without intercept, with sample weights: the objective and the certificate
match a tight Direct solve. Gap Safe screening never removes a feature that is nonzero at the
Direct optimum; a lying structure or a perturbed solution is never OPTIMAL; bad options and
models the driver does not take raise named errors.
"""

import math

import numpy as np
import pytest
from smooth_loss_data import a1a_rows, abalone_rows, data_for, reference

import optframe as of
import optframe.models._risk_sparse as risk_sparse
from optframe.capabilities import ElasticNetSmoothLoss
from optframe.data import Dataset
from optframe.drivers import CoordinateDescent
from optframe.errors import IncompatibleDriver, ModelError
from optframe.losses import Hinge, Huber, Logistic, Pinball, PLQLoss, SquaredHinge
from optframe.models import EmpiricalRisk
from optframe.penalties import L1, L2, ElasticNet

LEAST_SQUARES = PLQLoss(rehu=[(1.0, 0.0, math.inf), (-1.0, 0.0, math.inf)], kind="regression")
LOSSES = {
    "least_squares": (LEAST_SQUARES, "regression"),
    "huber": (Huber(1.0), "regression"),
    "squared_hinge": (SquaredHinge(), "classification"),
    "logistic": (Logistic(), "classification"),
}


@pytest.fixture(scope="module")
def a1a():
    """400 rows of a1a (sparse binary features, labels in {-1, +1})."""
    return a1a_rows(400)


@pytest.fixture(scope="module")
def abalone():
    """400 rows of abalone, standardized, the target centered (dense, regression)."""
    return abalone_rows(400)


def check(result, ref, rel=1e-6):
    assert result.status is of.Status.OPTIMAL, result.summary()
    assert ref.status is of.Status.OPTIMAL, ref.summary()
    assert result.driver == "cd"
    assert result.objective == pytest.approx(ref.objective, rel=rel)
    # the certificate: a bound below the reference optimum, closing within the tolerance
    assert result.bound <= ref.objective + 1e-9 * max(1.0, abs(ref.objective))
    assert ref.bound <= result.objective + 1e-9 * max(1.0, abs(result.objective))
    assert result.gap <= 1e-6


@pytest.mark.parametrize("loss_name", sorted(LOSSES))
@pytest.mark.parametrize("penalty", [L1(), ElasticNet(0.5)], ids=["l1", "enet"])
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_matches_direct(a1a, abalone, loss_name, penalty, sparse):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, sparse, a1a, abalone)
    C = {"least_squares": 0.002, "huber": 0.02}.get(loss_name, 0.5)
    intercept = loss_name in ("least_squares", "logistic")  # both cases across the grid
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=penalty, C=C, fit_intercept=intercept)
    result = of.solve(model, CoordinateDescent())
    check(result, reference(model))
    assert 0 < result.stats["support"] < X.shape[1]  # a sparse solution, not a trivial one


@pytest.mark.parametrize("loss_name", ["huber", "squared_hinge"])
@pytest.mark.parametrize("prox_newton", [True, False], ids=["prox_newton", "coordinate"])
def test_with_intercept_and_both_inner_solvers(a1a, abalone, loss_name, prox_newton):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, True, a1a, abalone)
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=L1(), C=0.3, fit_intercept=True)
    result = of.solve(model, CoordinateDescent(prox_newton=prox_newton))
    check(result, reference(model))


@pytest.mark.parametrize("loss_name", ["squared_hinge", "logistic"])
def test_the_ridge_without_an_l1_part(a1a, abalone, loss_name):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, True, a1a, abalone)
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=L2(), C=0.5, fit_intercept=True)
    result = of.solve(model, CoordinateDescent())
    check(result, reference(model))
    assert result.stats["screened"] == 0  # nothing to screen without an L1 part


@pytest.mark.parametrize("loss_name", ["least_squares", "logistic"])
def test_sample_weights_equal_duplicated_rows(a1a, abalone, loss_name):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, False, a1a, abalone)
    X, y = X[:150], y[:150]
    weights = np.tile([1.0, 2.0, 0.0], 50)
    weighted = EmpiricalRisk(Dataset(X=X, y=y, sample_weight=weights), loss, penalty=L1(), C=0.3)
    rows = np.repeat(np.arange(150), weights.astype(int))
    repeated = EmpiricalRisk(Dataset(X=X[rows], y=y[rows]), loss, penalty=L1(), C=0.3)
    first = of.solve(weighted, CoordinateDescent())
    second = of.solve(repeated, CoordinateDescent())
    assert first.status is second.status is of.Status.OPTIMAL
    assert first.objective == pytest.approx(second.objective, rel=1e-6)
    check(first, reference(weighted))


@pytest.mark.parametrize("loss_name", sorted(LOSSES))
@pytest.mark.parametrize("penalty", [L1(), ElasticNet(0.7)], ids=["l1", "enet"])
def test_gap_safe_keeps_every_feature_nonzero_at_the_optimum(a1a, abalone, loss_name, penalty):
    """Along a path of C, every screened feature is zero in Direct's tight solution.

    On a1a's 123 sparse features for every loss (its labels as the regression target).
    """
    loss, _ = LOSSES[loss_name]
    X, y = a1a
    total = 0
    for C in (0.02, 0.1, 0.5, 2.0):
        model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=penalty, C=C)
        result = of.solve(model, CoordinateDescent(working_sets=False))
        ref = reference(model)
        w = np.asarray(ref.solution["w"])
        screened = result.stats["screened_features"]
        assert result.stats["screened"] == screened.size
        assert np.all(np.abs(w[screened]) <= 1e-6 * max(1.0, np.abs(w).max())), (C, screened)
        assert np.all(np.asarray(result.solution["w"])[screened] == 0.0)
        total += screened.size
    assert total > 0  # the rule did screen


def test_screening_changes_nothing_but_the_work(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L1(), C=0.3)
    on = of.solve(model, CoordinateDescent())
    off = of.solve(model, CoordinateDescent(screening=False))
    assert on.stats["screened"] > 0
    assert off.stats["screened"] == 0
    assert on.objective == pytest.approx(off.objective, rel=1e-6)


@pytest.mark.parametrize("lie", ["curvature", "costs", "recovery"])
def test_a_lying_structure_is_not_certified(a1a, monkeypatch, lie):
    """A curvature bound 1e8 times too small (screening on a ball too small), costs 5% off (the
    wrong problem) or a recovery that perturbs w: never OPTIMAL, the bound stays valid."""
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), penalty=L1(), C=0.5)
    honest = risk_sparse.elastic_net_smooth_loss

    def lying(m):
        problem = honest(m)
        recover = problem.recover

        def perturbed(w, b):
            return recover(np.asarray(w) * (1 + 1e-2) + 1e-3, b)

        changes = {
            "curvature": {"curvature": problem.curvature * 1e-8},
            "costs": {"costs": problem.costs * 1.05},
            "recovery": {"recover": perturbed},
        }[lie]
        fields = {name: getattr(problem, name) for name in problem.__dataclass_fields__}
        return ElasticNetSmoothLoss(**{**fields, **changes})

    monkeypatch.setattr("optframe.models.empirical_risk.elastic_net_smooth_loss", lying)
    result = of.solve(model, CoordinateDescent())
    ref = reference(model)
    assert result.bound <= ref.objective + 1e-9 * ref.objective
    if lie != "curvature":  # a wrong problem or a moved solution: the gap cannot close
        assert result.status is not of.Status.OPTIMAL, result.summary()
    else:  # a ball 1e4 times too small drops features the optimum uses: the gap shows it
        w = np.asarray(ref.solution["w"])
        screened = result.stats["screened_features"]
        assert np.any(np.abs(w[screened]) > 1e-6)  # the lie did harm
        assert result.status is not of.Status.OPTIMAL, result.summary()


def test_a_perturbed_solution_is_not_certified(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L1(), C=0.5)
    result = of.solve(model, CoordinateDescent())
    assert result.status is of.Status.OPTIMAL
    w = np.asarray(result.solution["w"]).copy()
    w[np.flatnonzero(w)[0]] *= 1.05
    solution = {"w": w, "intercept": result.solution["intercept"]}
    objective, bound = model.objective(solution), model.dual_bound(solution)
    assert (objective - bound) / model.gap_scale(objective, bound) > 1e-6


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"tol": -1.0}, "tol"),
        ({"tol": "1e-6"}, "tol"),
        ({"max_outer": 0}, "max_outer"),
        ({"max_epochs": 1.5}, "max_epochs"),
        ({"ws_start": 0}, "ws_start"),
        ({"inner_ratio": 1.5}, "inner_ratio"),
        ({"inner_ratio": 0.0}, "inner_ratio"),
        ({"screening": "yes"}, "screening"),
        ({"prox_newton": None}, "prox_newton"),
    ],
)
def test_bad_options_raise_model_error(options, match):
    with pytest.raises(ModelError, match=match):
        CoordinateDescent(**options)


def test_bad_run_options_and_warm_start(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), penalty=L1(), C=0.5)
    with pytest.raises(ModelError, match="max_iter"):
        of.solve(model, CoordinateDescent(), max_iter=0)
    with pytest.raises(ModelError, match="warm_start"):
        of.solve(model, CoordinateDescent(warm_start=np.zeros(3)))
    warm = of.solve(model, CoordinateDescent())
    again = of.solve(model, CoordinateDescent(warm_start=warm.solution["w"]))
    assert again.status is of.Status.OPTIMAL
    assert again.iterations <= warm.iterations


def test_refusals_name_the_reason_and_the_drivers_that_apply(a1a, abalone):
    X, y = a1a
    data = Dataset(X=X, y=y)
    with pytest.raises(IncompatibleDriver, match=r"kink.*Direct.*AggregateDisaggregate"):
        of.solve(EmpiricalRisk(data, Hinge(), penalty=L1()), CoordinateDescent())
    Xr, yr = abalone
    with pytest.raises(IncompatibleDriver, match="kink"):
        of.solve(EmpiricalRisk(Dataset(X=Xr, y=yr), Pinball(0.3), penalty=L1()), "cd")
    with pytest.raises(IncompatibleDriver, match="needs a penalty"):
        of.solve(EmpiricalRisk(data, SquaredHinge(), penalty=None), CoordinateDescent())
    smoothed = PLQLoss(rehu=[(-1.0, 1.0, 1.0)], kind="classification")
    model = EmpiricalRisk(data, {1: SquaredHinge(), -1: smoothed}, penalty=L1())
    with pytest.raises(IncompatibleDriver, match="one loss"):
        of.solve(model, CoordinateDescent())


def test_history_and_limits(a1a):
    X, y = a1a
    model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), penalty=L1(), C=0.5)
    result = of.solve(model, CoordinateDescent(), max_iter=1)
    assert result.status is of.Status.ITERATION_LIMIT
    assert result.bound <= result.objective
    full = of.solve(model, CoordinateDescent())
    gaps = [record.extras["gap"] for record in full.history]
    assert gaps[-1] <= 1e-6 * full.objective
    assert all(record.bound <= full.objective + 1e-9 for record in full.history)
    stopped = of.solve(model, CoordinateDescent(), callback=lambda record: True)
    assert stopped.status is not of.Status.OPTIMAL or stopped.gap <= 1e-6


@pytest.mark.parametrize("loss_name", sorted(LOSSES))
def test_auto_picks_coordinate_descent(a1a, abalone, loss_name):
    loss, kind = LOSSES[loss_name]
    X, y = data_for(kind, True, a1a, abalone)
    model = EmpiricalRisk(Dataset(X=X, y=y), loss, penalty=ElasticNet(0.8), C=0.05)
    result = of.solve(model)
    assert result.driver == "cd", result.stats.get("auto_rule")
    assert result.status is of.Status.OPTIMAL
    # a kinked loss with L1 keeps its route (Direct or AID): CD does not take it
    assert of.solve(EmpiricalRisk(Dataset(X=X, y=y), Pinball(0.5), penalty=L1())).driver != "cd"
