"""What each iterative driver shows its callback: SMO's pair, Frank-Wolfe's and the CVM's vertex,
AID's aggregated problem and clusters, ADMM's residuals; a callback that returns True stops."""

import numpy as np
import pytest

import optframe as of
from optframe.data import make_classification_svm, make_regression_lad
from optframe.drivers import (
    MFW,
    SMO,
    AggregateDisaggregate,
    CoreVectorMachine,
    FrankWolfe,
)
from optframe.kernels import RBF
from optframe.models import L2SVM, LADRegression, WeightedSVM


@pytest.fixture(scope="module")
def points():
    return make_classification_svm(n=240, m=4, random_state=5)


def _records(model, driver):
    seen = []
    result = of.solve(model, driver, callback=lambda record: seen.append(record) or False)
    return result, seen


@pytest.mark.parametrize("kernel", [None, RBF(gamma=0.5)], ids=["linear", "rbf"])
def test_smo_shows_the_pair_of_its_last_step(points, kernel):
    model = WeightedSVM(points, C=1.0, **({} if kernel is None else {"kernel": kernel}))
    result, seen = _records(model, SMO(check_every=7))
    pairs = [record.extras["pair"] for record in seen if record.extras["pair"] is not None]
    assert len(pairs) >= 3
    for i, j in pairs:
        assert 0 <= i < points.n_samples
        assert 0 <= j < points.n_samples
        assert i != j
    assert len(set(pairs)) > 1  # the pair changes from record to record
    assert result.status is of.Status.OPTIMAL


@pytest.mark.parametrize("driver", [FrankWolfe(check_every=20), MFW(check_every=20)])
def test_frank_wolfe_shows_its_vertex_and_objective(points, driver):
    model = L2SVM(points, C=1.0, kernel=RBF(gamma=0.5))
    _, seen = _records(model, driver)
    assert len(seen) >= 2
    for record in seen:
        assert 0 <= record.extras["vertex"] < points.n_samples
        assert -1 <= record.extras["away"] < points.n_samples
    finite = [r.objective for r in seen if np.isfinite(r.objective)]
    assert finite  # FW keeps s on every point: its records carry the objective
    assert all(r.objective >= r.bound - 1e-9 * abs(r.objective) for r in seen if r.bound)


def test_the_cvm_shows_the_point_it_added(points):
    model = L2SVM(points, C=1.0, kernel=RBF(gamma=0.5))
    _, seen = _records(model, CoreVectorMachine(check_every=2))
    vertices = [record.extras["vertex"] for record in seen]
    assert vertices
    assert all(0 <= v < points.n_samples for v in vertices)


def test_aid_shows_the_aggregated_problem_and_the_clusters_to_its_callback_only():
    data = make_regression_lad(n=800, m=3, random_state=2)
    result, seen = _records(LADRegression(data), AggregateDisaggregate())
    assert len(seen) == len(result.history) >= 2
    for record in seen:
        labels, aggregated = record.extras["labels"], record.extras["aggregated_model"]
        assert labels.shape == (data.n_samples,)
        clusters = record.extras["clusters"]
        assert set(np.unique(labels)) == set(range(clusters))
        assert aggregated.data.n_samples == clusters
        # the aggregated model weighs each cluster by its samples' total weight
        assert aggregated.data.weights.sum() == pytest.approx(data.weights.sum())
    assert all("labels" not in record.extras for record in result.history)


@pytest.mark.parametrize("which", ["smo", "mfw", "aid"])
def test_a_callback_that_returns_true_stops_each_driver(points, which):
    model, driver = {
        "smo": (WeightedSVM(points, C=1.0, kernel=RBF(gamma=0.5)), SMO(check_every=5)),
        "mfw": (L2SVM(points, C=1.0, kernel=RBF(gamma=0.5)), MFW(check_every=5)),
        "aid": (
            LADRegression(make_regression_lad(n=800, m=3, random_state=2)),
            AggregateDisaggregate(),
        ),
    }[which]
    calls = []
    result = of.solve(model, driver, callback=lambda record: calls.append(record) or True)
    assert len(calls) == 1
    assert result.stats["claimed_status"] == "converged"
    assert result.status is not of.Status.ERROR
