"""AggregateDisaggregate on Dask: the chunked path against the in-memory one, faults, bad chunks.

One local cluster (2 worker processes x 1 thread) serves the whole module.
"""

import logging
import os
import sys

import cloudpickle
import dask.array as da
import numpy as np
import pytest
from distributed import Client, LocalCluster, WorkerPlugin

import optframe as of
from optframe.data import DaskDataset, Dataset, load_dataset, make_lad_set_a
from optframe.drivers import AggregateDisaggregate
from optframe.errors import DataError, IncompatibleDriver
from optframe.losses import Pinball
from optframe.models import (
    DaskLADRegression,
    DaskQuantileRegression,
    DaskWeightedSVM,
    EmpiricalRisk,
    LADRegression,
    WeightedSVM,
    chunked_risk,
)


@pytest.fixture(scope="module")
def client():
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers get KillOnce
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.CRITICAL,
        ) as cluster,
        Client(cluster) as dask_client,
    ):
        yield dask_client
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def clusters(result):
    return [r.extras["clusters"] for r in result.history]


def assert_same(result, reference):
    assert result.status is reference.status is of.Status.OPTIMAL
    assert result.objective == pytest.approx(reference.objective, rel=1e-9)
    assert result.iterations == reference.iterations
    assert clusters(result) == clusters(reference)
    assert result.bound is not None
    assert result.bound <= reference.objective * (1 + 1e-9)
    assert result.gap <= 1e-6
    for mine, theirs in zip(result.history, reference.history, strict=True):
        assert mine.extras["objective_t"] == pytest.approx(theirs.extras["objective_t"], rel=1e-9)
        assert mine.bound == pytest.approx(theirs.bound, rel=1e-9)


LAD_DATA = make_lad_set_a(20_000, 10, random_state=0)


@pytest.fixture(scope="module")
def lad(client):
    reference = of.solve(LADRegression(LAD_DATA), AggregateDisaggregate())
    model = DaskLADRegression(DaskDataset.from_dataset(LAD_DATA, 5_000))
    return model, reference, of.solve(model, AggregateDisaggregate())


def test_lad_on_chunks_is_the_in_memory_solve(lad):
    model, reference, result = lad
    assert model.data.n_chunks == 4
    assert_same(result, reference)
    assert result.stats["chunks"] == 4
    np.testing.assert_allclose(result.solution["beta"], reference.solution["beta"], rtol=1e-9)
    # the per-sample arrays are lazy dask arrays, computed on demand on the workers
    assert isinstance(result.solution["theta"], da.Array)
    theta = result.solution["theta"].compute()
    np.testing.assert_allclose(theta, reference.solution["theta"], atol=1e-9)
    residual = result.solution["residual"].compute()
    np.testing.assert_allclose(residual, reference.solution["residual"], atol=1e-9)
    # the certificate computed chunk by chunk is the in-memory one
    in_memory = LADRegression(LAD_DATA)
    assert model.dual_bound(result.solution) == pytest.approx(
        in_memory.dual_bound(reference.solution), rel=1e-12
    )
    assert model.objective_floor() == pytest.approx(in_memory.objective_floor(), rel=1e-12)


@pytest.mark.parametrize("tau", [0.1, 0.75])
def test_quantile_regression_on_chunks_is_the_in_memory_solve(client, tau):
    reference = of.solve(EmpiricalRisk(LAD_DATA, Pinball(tau), penalty=None), "aid")
    model = DaskQuantileRegression(DaskDataset.from_dataset(LAD_DATA, 5_000), tau=tau)
    result = of.solve(model, AggregateDisaggregate())
    assert_same(result, reference)
    np.testing.assert_allclose(result.solution["w"], reference.solution["w"], rtol=1e-9)
    alpha = result.solution["alpha"].compute()
    assert np.all((alpha >= (tau - 1.0) - 1e-12) & (alpha <= tau + 1e-12))  # the pinball's box
    np.testing.assert_allclose(alpha, reference.solution["alpha"], atol=1e-9)
    # the chunk-wise bound is a bound, and tight at the lifted dual point
    in_memory = EmpiricalRisk(LAD_DATA, Pinball(tau), penalty=None)
    assert model.dual_bound(result.solution) <= reference.objective * (1 + 1e-12)
    assert model.dual_bound(result.solution) == pytest.approx(reference.objective, rel=1e-7)
    assert model.objective(result.solution) == pytest.approx(
        in_memory.objective(reference.solution), rel=1e-12
    )
    with pytest.raises(of.ModelError, match="tau"):
        DaskQuantileRegression(DaskDataset.from_dataset(LAD_DATA, 5_000), tau=1.0)


def test_weighted_median_by_histograms(client, monkeypatch):
    rng = np.random.default_rng(4)
    data = Dataset(
        X=np.zeros((6_000, 1)),
        y=np.round(rng.standard_normal(6_000), 2),  # many ties
        sample_weight=rng.choice([0.0, 0.5, 2.0], size=6_000),
    )
    chunked = DaskLADRegression(DaskDataset.from_dataset(data, 1_500))
    monkeypatch.setattr(chunked_risk, "MEDIAN_GATHER", 50)  # force the histogram passes
    monkeypatch.setattr(chunked_risk, "MEDIAN_BINS", 16)
    assert chunked.objective_floor() == pytest.approx(LADRegression(data).objective_floor())


def test_lad_variants_match(client):
    data = make_lad_set_a(3_000, 6, random_state=1)
    weights = np.random.default_rng(1).uniform(0.1, 3.0, 3_000)
    weights[::7] = 0.0  # zero-weight samples are in no cluster
    data = data.with_weights(weights)
    chunked = DaskDataset.from_dataset(data, 700)
    for fit_intercept in (True, False):
        reference = of.solve(LADRegression(data, fit_intercept=fit_intercept), "aid")
        model = DaskLADRegression(chunked, fit_intercept=fit_intercept)
        assert_same(of.solve(model, AggregateDisaggregate()), reference)


def test_svm_on_sparse_chunks_of_a1a(client):
    data = load_dataset("a1a")
    reference = of.solve(WeightedSVM(data, C=1.0), AggregateDisaggregate())
    model = DaskWeightedSVM(DaskDataset.from_dataset(data, 400), C=1.0)
    assert model.data.is_sparse
    assert model.data.n_chunks == 5
    result = of.solve(model, AggregateDisaggregate())
    assert_same(result, reference)
    np.testing.assert_allclose(result.solution["w"], reference.solution["w"], atol=1e-8)
    alpha = result.solution["alpha"].compute()
    np.testing.assert_allclose(alpha, reference.solution["alpha"], atol=1e-8)
    # the chunk-wise bound repairs the same alpha as the in-memory one, which also tries the
    # hinge's subgradient: equal to the certificate's tolerance, never above it
    in_memory = WeightedSVM(data, C=1.0).dual_bound(reference.solution)
    assert model.dual_bound(result.solution) == pytest.approx(in_memory, rel=1e-8)
    assert model.dual_bound(result.solution) <= in_memory + 1e-12 * abs(in_memory)
    # without the duals the bound is the hinge's subgradient's: valid, looser
    primal = {k: v for k, v in result.solution.items() if k != "alpha"}
    assert model.dual_bound(primal) <= reference.objective


# --------------------------------------------------------------------------------- faults
class KillOnce(WorkerPlugin):
    """Kill the worker's process when it starts a centroid task, once the flag file exists."""

    def __init__(self, flag):
        self.flag = flag

    def transition(self, key, start, finish, **kwargs):
        name = key[0] if isinstance(key, tuple) else key
        if finish != "executing" or not str(name).startswith("_centroid_part"):
            return
        try:
            os.rename(self.flag, self.flag + ".taken")  # one worker only
        except FileNotFoundError:
            return
        os._exit(1)


def test_a_worker_killed_mid_iteration_costs_a_retry_not_the_solve(client, lad, tmp_path):
    model, reference, _ = lad
    flag = str(tmp_path / "kill")
    before = set(client.run(os.getpid).values())
    client.register_plugin(KillOnce(flag), name="kill-once")

    def arm(record):  # after iteration 0: the next centroid task kills its worker
        if record.iteration == 0:
            open(flag, "w").close()

    try:
        result = of.solve(model, AggregateDisaggregate(), callback=arm)
    finally:
        client.unregister_worker_plugin("kill-once")
    assert os.path.exists(flag + ".taken")  # a worker did die, in iteration 1
    client.wait_for_workers(2, timeout=60)
    assert set(client.run(os.getpid).values()) != before
    assert_same(result, reference)


# ----------------------------------------------------------------------------- bad chunks
def test_a_chunk_with_nan_names_its_rows(client):
    X = np.random.default_rng(0).standard_normal((20_000, 3))
    X[12_345, 2] = np.nan
    with pytest.raises(DataError, match=r"row 12345, column 2.*chunk 2 \(rows 10000 to 14999\)"):
        DaskDataset(da.from_array(X, chunks=(5_000, 3)), da.zeros(20_000, chunks=5_000))


def test_a_chunk_with_bad_labels_or_weights_names_its_rows(client):
    X = da.zeros((4_000, 2), chunks=(1_000, 2))
    y = np.where(np.arange(4_000) % 2 == 0, 1.0, -1.0)
    y[3_500] = 0.0
    data = DaskDataset(X, da.from_array(y, chunks=1_000))
    with pytest.raises(DataError, match=r"labels in \{-1, \+1\}.*row 3500.*rows 3000 to 3999"):
        DaskWeightedSVM(data)
    weights = np.ones(4_000)
    weights[1_001] = -1.0
    with pytest.raises(DataError, match=r"non-negative; entry 1001.*chunk 1 \(rows 1000 to 1999"):
        DaskDataset(X, da.from_array(y, chunks=1_000), da.from_array(weights, chunks=1_000))
    with pytest.raises(DataError, match=r"rechunk"):
        DaskDataset(X, da.from_array(y, chunks=500))
    with pytest.raises(DataError, match=r"class -1 is missing"):
        DaskWeightedSVM(DaskDataset(X, da.ones(4_000, chunks=1_000)))


def test_direct_cannot_take_a_chunked_model(lad):
    model, reference, _ = lad
    with pytest.raises(IncompatibleDriver, match="Drivers that apply to this model: 'aid'"):
        of.solve(model, driver="direct")
    chosen = of.solve(model)  # driver="auto" takes the only driver that can
    assert chosen.driver == "aid"
    assert chosen.objective == pytest.approx(reference.objective, rel=1e-9)
    with pytest.raises(DataError, match="DaskDataset"):
        DaskLADRegression(LAD_DATA)
