"""SemiSupervisedSVM: the MIQP against enumeration of the labels, AID's honest status, bad input."""

import dataclasses
import itertools

import numpy as np
import pytest

import optframe as of
from optframe.data import Dataset
from optframe.drivers import AggregateDisaggregate, Direct
from optframe.models import SemiSupervisedSVM, WeightedSVM


def tiny(seed=0, n_labeled=4, n_unlabeled=6, m=2):
    rng = np.random.default_rng(seed)
    X = np.vstack(
        [
            rng.normal(1.0, 1.0, (n_labeled // 2 + n_unlabeled // 2, m)),
            rng.normal(-1.0, 1.0, (n_labeled - n_labeled // 2 + n_unlabeled - n_unlabeled // 2, m)),
        ]
    )
    y = np.zeros(len(X))
    y[: n_labeled // 2] = 1.0
    half = n_labeled // 2 + n_unlabeled // 2
    y[half : half + n_labeled - n_labeled // 2] = -1.0
    return Dataset(X=X, y=y)


def brute_force(model):
    """min over every labeling of the unlabeled samples of the convex weighted SVM."""
    y = model.data.y
    unlabeled = np.flatnonzero(y == 0)
    penalty = np.where(y != 0, model.C_labeled * model._cost, model.C_unlabeled * model.weights)
    best = np.inf
    for labels in itertools.product((-1.0, 1.0), repeat=unlabeled.size):
        full = y.copy()
        full[unlabeled] = labels
        svm = WeightedSVM(Dataset(X=model.data.X, y=full), C=1.0, sample_weight=penalty)
        best = min(best, of.solve(svm).objective)
    return best


@pytest.mark.parametrize("backend", ["matrix:scip", "pyomo:scip", "cvxpy:scip"])
@pytest.mark.parametrize("seed", [0, 1])
def test_scip_reaches_the_enumerated_optimum(backend, seed):
    model = SemiSupervisedSVM(tiny(seed), C_labeled=5.0, C_unlabeled=1.0)
    result = of.solve(model, backend=backend)
    assert result.status is of.Status.OPTIMAL
    expected = brute_force(model)
    assert result.objective == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert result.bound is not None
    assert result.bound <= expected * (1 + 1e-6) + 1e-6
    f = model.decision_function(result.solution, model.data.X)
    assert np.max(1.0 + np.abs(f)) <= model.safe_big_m  # the default big-M is not binding
    unlabeled = model.data.y == 0
    np.testing.assert_array_equal(
        result.solution["labels"][unlabeled], np.where(f >= 0, 1.0, -1.0)[unlabeled]
    )


def test_auto_backend_is_scip():
    result = of.solve(SemiSupervisedSVM(tiny(2)))
    assert result.backend.endswith(":scip")


def test_balance_constraint_holds_and_cost_reweights_the_minority():
    data = tiny(3, n_labeled=6)
    constrained = of.solve(SemiSupervisedSVM(data, balance="constraint"))
    assert constrained.status is of.Status.OPTIMAL
    assert constrained.stats["violation"] <= 1e-6
    y = data.y.copy()
    y[np.flatnonzero(y == -1.0)[1:]] = 0.0  # one labeled -1 against three labeled +1
    model = SemiSupervisedSVM(Dataset(X=data.X, y=y), balance="cost")
    assert model._cost[y == -1.0] == pytest.approx([3.0])
    assert np.all(model._cost[y == 1.0] == 1.0)


def test_proposition_5_counterexample_aid_is_not_optimal():
    # notes/aid.md section 4.7: pure clusters, yet F = E = 1.875 while E* = 0.505.
    X = np.array([[0.0, 1.0], [0.0, -1.0], [-10.0, 0.0], [10.0, 0.0]])
    model = SemiSupervisedSVM(
        Dataset(X=X, y=[1.0, -1.0, 0.0, 0.0]), C_labeled=5.0, C_unlabeled=0.75
    )
    exact = of.solve(model)
    assert exact.objective == pytest.approx(0.505, abs=1e-6)
    aid = of.solve(model, driver=AggregateDisaggregate(r0=0.5))
    assert aid.iterations == 1
    assert aid.history[0].extras["clusters"] == 3
    assert aid.history[0].extras["split"] == 0  # every cluster is pure ...
    assert aid.objective == pytest.approx(1.875, abs=1e-6)  # ... and yet not optimal
    assert aid.status is of.Status.CONVERGED
    assert aid.bound is None


def test_aid_runs_on_a_small_semi_supervised_set():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(1.5, 1.0, (40, 3)), rng.normal(-1.5, 1.0, (40, 3))])
    y = np.zeros(80)
    y[:3], y[40:43] = 1.0, -1.0
    model = SemiSupervisedSVM(
        Dataset(X=X, y=y), C_labeled=5.0, C_unlabeled=1.0, balance="constraint"
    )
    result = of.solve(model, driver=AggregateDisaggregate(r0=0.1), max_iter=5, time_limit=60)
    assert result.status in (of.Status.CONVERGED, of.Status.ITERATION_LIMIT)
    assert result.bound is None
    truth = np.r_[np.ones(40), -np.ones(40)]
    assert np.mean(result.predict(X) == truth) >= 0.9


def test_aid_keeps_labeled_samples_as_singletons_unless_told_not_to():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(1.5, 1.0, (50, 2)), rng.normal(-1.5, 1.0, (50, 2))])
    y = np.zeros(100)
    y[:6], y[50:56] = 1.0, -1.0
    model = SemiSupervisedSVM(Dataset(X=X, y=y), C_labeled=5.0, C_unlabeled=1.0)
    kept = of.solve(model, driver=AggregateDisaggregate(r0=0.05), max_iter=1)
    merged = of.solve(model, driver=AggregateDisaggregate(r0=0.05, singletons=False), max_iter=1)
    assert kept.history[0].extras["clusters"] == 12 + 5  # 12 labeled rows, ceil(0.05 * 88) = 5
    assert merged.history[0].extras["clusters"] == 1 + 1 + 5


class _StoppedInner(Direct):
    """Direct, but every solve reports that it hit its time limit (keeping its solution)."""

    name = "stopped"

    def run(self, model, context):
        self.limits.append(context.options.time_limit)
        return dataclasses.replace(super().run(model, context), status=of.Status.TIME_LIMIT)


def _stopped_inner():
    inner = _StoppedInner()
    object.__setattr__(inner, "limits", [])
    return inner


def test_a_time_limited_inner_solve_hands_over_its_incumbent_for_s3vm_only():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(1.5, 1.0, (30, 2)), rng.normal(-1.5, 1.0, (30, 2))])
    y = np.zeros(60)
    y[:2], y[30:32] = 1.0, -1.0
    s3vm = SemiSupervisedSVM(Dataset(X=X, y=y), C_labeled=5.0, C_unlabeled=1.0)
    inner = _stopped_inner()
    result = of.solve(
        s3vm, driver=AggregateDisaggregate(r0=0.1, inner=inner), max_iter=3, time_limit=600
    )
    assert result.iterations == 3
    assert [r.extras["inner_status"] for r in result.history] == ["time_limit"] * 3
    # Each inner solve gets an equal share of the time left (1/3, then 1/2, then all of it).
    assert inner.limits[0] == pytest.approx(200, rel=0.05)
    assert inner.limits[1] == pytest.approx(300, rel=0.05)
    assert inner.limits[2] == pytest.approx(600, rel=0.05)
    # A convex model has a bound to protect: a stopped inner solve ends the run.
    lad = WeightedSVM(Dataset(X=X[:4], y=[1.0, 1.0, -1.0, -1.0]))
    stopped = of.solve(lad, driver=AggregateDisaggregate(inner=_stopped_inner()), time_limit=600)
    assert stopped.status is of.Status.TIME_LIMIT
    assert stopped.iterations == 0


@pytest.mark.parametrize(
    ("y", "kwargs", "error", "message"),
    [
        ([1.0, -1.0, 1.0, -1.0], {}, of.DataError, "unlabeled"),
        ([1.0, 1.0, 0.0, 0.0], {}, of.DataError, "labeled -1"),
        ([1.0, -1.0, 2.0, 0.0], {}, of.DataError, r"\{-1, 0, \+1\}"),
        ([1.0, -1.0, 0.0, 0.0], {"C_labeled": 0.0}, of.ModelError, "C_labeled"),
        ([1.0, -1.0, 0.0, 0.0], {"C_unlabeled": -1.0}, of.ModelError, "C_unlabeled"),
        ([1.0, -1.0, 0.0, 0.0], {"balance": "oversample"}, of.ModelError, "balance"),
        ([1.0, -1.0, 0.0, 0.0], {"big_m": 0.5}, of.ModelError, "big_m"),
    ],
    ids=["no-unlabeled", "one-class", "label-2", "C_l", "C_u", "balance", "big_m"],
)
def test_bad_input(y, kwargs, error, message):
    X = np.arange(8.0).reshape(4, 2)
    with pytest.raises(error, match=message):
        SemiSupervisedSVM(Dataset(X=X, y=y), **kwargs)


def _breast_cancer_sample(column_scale):
    """The certificate sweep's 20 breast cancer rows (6 unlabeled), column 1 times a scale."""
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    rows = np.random.default_rng(2).choice(bunch.target.size, 20, replace=False)
    X = bunch.data[rows]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    X[:, 1] *= column_scale
    y = np.where(bunch.target[rows] == 1, 1.0, -1.0)
    y[np.random.default_rng(2).choice(20, 6, replace=False)] = 0.0
    return Dataset(X=X, y=y)


def test_scips_bound_is_withheld_on_badly_scaled_columns():
    # With column 1 times 1e6, SCIP claimed optimal at an objective above the enumerated
    # optimum, and optframe kept its bound: a false OPTIMAL.
    model = SemiSupervisedSVM(_breast_cancer_sample(1e6), C_labeled=1e-3, C_unlabeled=2e-4)
    result = of.solve(model, Direct(), backend="matrix:scip", time_limit=30)
    optimum = brute_force(model)
    assert result.objective > optimum * (1 + 1e-4)  # SCIP's answer is not the optimum
    assert result.status is not of.Status.OPTIMAL
    assert result.bound is None
    assert "standardize" in result.stats["bound_withheld"]


def test_scips_bound_is_kept_on_standardized_columns():
    model = SemiSupervisedSVM(_breast_cancer_sample(1.0), C_labeled=1.0, C_unlabeled=0.2)
    assert model.solver_bound_doubt() is None
    result = of.solve(model, Direct(), backend="matrix:scip", time_limit=30)
    assert result.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(brute_force(model), rel=1e-4)
