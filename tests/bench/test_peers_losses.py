"""The ``peers`` suite's loss jobs (squared hinge, logistic, smoothed hinge, Huber, quantile,
expectile with L2) and its peak-memory column, on tiny data.

No timed assertions: the figures are checked for presence and sense, the objectives against the
model and against each other.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

# ReHLine is in the test extra: a missing peer fails these tests, it never skips them
import rehline  # noqa: F401
from peer_judging import judged

from optframe.bench import peer_methods as pm
from optframe.bench.suite import Cell
from optframe.bench.suites import peers


def _classification(n=400, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return pm.with_ones(X), y


def _regression(n=400, seed=0):
    data = peers.heteroscedastic_lad(n, 3, seed=seed)
    return np.asarray(data.X), np.asarray(data.y)


def _data(job):
    return _classification() if peers.loss_of(job).is_classification else _regression()


def test_the_grid_has_every_loss_job_with_its_peers():
    full, quick = peers.cells(False), peers.cells(True)
    for job, (sets, methods, quick_sets) in peers.LOSS_JOBS.items():
        chosen = [c for c in full if c["job"] == job]
        assert {c["data"] for c in chosen} == set(sets)
        assert {c["method"] for c in chosen} == set(methods)
        assert "optframe dcd" in methods
        assert any(not m.startswith("optframe") for m in methods)
        assert {c["data"] for c in quick if c["job"] == job} == set(quick_sets)
        het = [c for c in chosen if c["data"] == "het"]
        assert all((c["n"], c["m"]) == peers.LOSS_HET for c in het)
        assert all(peers.tolerance_of(c.params) == 1e-6 for c in chosen)
    assert set(peers.LOSS_JOBS) <= set(peers.JOBS)


@pytest.mark.parametrize("job", list(peers.LOSS_JOBS))
def test_every_method_reaches_dcds_objective_recomputed_by_the_model(job):
    X, y = _data(job)
    records = []
    for method in peers.LOSS_JOBS[job][1]:
        record = peers._loss_fit(job, method, X, y, 1.0)
        records.append({"job": job, "data": "tiny", "method": method, **record})
    by_method = {r["method"]: r for r in records}
    assert by_method["optframe dcd"]["status"] == "optimal"
    reference = by_method["optframe dcd"]["objective"]
    for r in records:
        # peers at their loosest tolerance stop within 1e-4; the accurate ones within 1e-6
        assert r["objective"] == pytest.approx(reference, rel=1e-4), r["method"]
        assert r["objective"] >= reference * (1 - 1e-6), r["method"]
    peers.complete(records)
    assert by_method["optframe dcd"]["success"]


def test_the_objectives_are_the_losses_by_hand():
    """The model's recomputation is the textbook formula for the logistic and expectile fits."""
    X, y = _classification()
    fit = pm.sklearn_logistic(X, y, 1.0, "lbfgs", tol=1e-8, max_iter=10_000)
    w = fit.solution["w"]
    by_hand = 0.5 * w @ w + np.logaddexp(0.0, -y * (X @ w)).sum()
    record = peers._loss_fit("logistic-linear", "lbfgs tol 1e-8", X, y, 1.0)
    assert record["objective"] == pytest.approx(by_hand, rel=1e-9)

    X, y = _regression()
    fit = pm.rehline_plq(X, y, 1.0, 1e-8, 100_000, loss=peers.loss_of("expectile-linear"))
    w = fit.solution["w"]
    r = y - X @ w
    tau = peers.QUANTILE_TAU
    by_hand = 0.5 * w @ w + (np.where(r > 0, tau, 1 - tau) * r * r).sum()
    record = peers._loss_fit("expectile-linear", "rehline tol 1e-6", X, y, 1.0)
    assert record["objective"] == pytest.approx(by_hand, rel=1e-6)
    assert fit.tool_objective == pytest.approx(by_hand, rel=1e-9)


@pytest.mark.parametrize("job", ["smoothhinge-linear", "expectile-linear", "huber-linear"])
def test_rehline_arrays_state_the_same_loss(job):
    """ReHLine's terms from ``rehline_arrays`` add up to the loss at any w, no solver involved."""
    loss = peers.loss_of(job)
    X, y = _data(job)
    w = np.random.default_rng(3).normal(size=X.shape[1])
    arrays = pm.rehline_arrays(loss, y)
    z = X @ w
    relu = np.maximum(0.0, arrays["U"] * z + arrays["V"]).sum() if arrays["U"].size else 0.0
    rehu = 0.0
    for s, t, tau in zip(arrays["S"], arrays["T"], arrays["Tau"], strict=True):
        u = np.maximum(0.0, s * z + t)
        rehu += np.where(u <= tau, 0.5 * u * u, tau * (u - 0.5 * tau)).sum()
    a = y * z if loss.is_classification else y - z
    assert relu + rehu == pytest.approx(loss.value(a).sum(), rel=1e-12)


def test_a_perturbed_solution_is_no_success():
    X, y = _regression()
    job = "quantile-linear"
    good = peers._loss_fit(job, "rehline tol 1e-6", X, y, 1.0)
    fit = pm.rehline_plq(X, y, 1.0, 1e-6, 100_000, name=peers.REHLINE_NAMES[job])
    from optframe.data import Dataset
    from optframe.models import EmpiricalRisk

    model = EmpiricalRisk(Dataset(X=X, y=y), peers.loss_of(job), fit_intercept=False)
    bad = peers.recompute(model, {"w": fit.solution["w"] * 1.01})
    records = judged(job, "rehline tol 1e-6", good, bad)
    assert records[0]["success"]
    assert not records[1]["success"]
    assert records[1]["rel_objective"] > 1e-6


# ----------------------------------------------------------------------------- peak memory
def test_the_peak_is_the_blocks_own():
    """An array allocated and freed before the block does not count; one inside does."""
    big = np.ones(40_000_000)  # 320 MB, then freed
    big[::4096] = 2.0
    del big
    with peers.peak_memory() as memory:
        inside = np.ones(10_000_000)  # 80 MB
        inside[::512] = 2.0
        del inside
    if not memory:
        pytest.skip("no /proc/self/status here")
    assert memory["peak_rss_mb"] > 0
    assert memory["fit_mb"] == pytest.approx(memory["peak_rss_mb"] - memory["rss_before_mb"])
    if memory["peak_scope"] == "fit":
        assert 60 < memory["fit_mb"] < 200


def test_a_cell_runs_in_its_own_process_and_reports_its_peak_memory():
    cell = {"job": "huber-linear", "data": "het", "n": 3000, "m": 5, "C": 1.0}
    records = []
    for method in ("optframe dcd", "rehline tol 1e-6"):
        record = peers.run_cell(Cell(cell | {"method": method}))
        records.append(cell | {"method": method} | record)
    for record in records:
        assert record["peak_rss_mb"] > 0
        assert record["rss_before_mb"] > 0
        assert record["fit_mb"] >= 0
        assert record["peak_scope"] in {"fit", "process"}
        assert record["threads"] == 1
        assert record["objective"] == pytest.approx(records[0]["objective"], rel=1e-6)
    text = peers.summarize(records)
    assert "peak MB (fit)" in text
    row = next(line for line in text.splitlines() if "| optframe dcd |" in line)
    peak = row.split("|")[-3].strip()
    assert float(peak.split()[0]) > 0
    assert "peak_rss_mb" in peers.COLUMNS


def test_a_cell_that_raises_in_its_process_raises_here_with_the_reason():
    cell = Cell({"job": "huber-linear", "data": "het", "n": 3000, "m": 5, "C": 1.0,
                 "method": "no such method"})  # fmt: skip
    with pytest.raises(RuntimeError, match="no such method"):
        peers.run_cell(cell)


def test_the_threads_of_the_cell_come_from_the_runner(monkeypatch):
    monkeypatch.setenv("OPTFRAME_THREADS", "2")
    assert pm.cell_threads() == 2
    monkeypatch.delenv("OPTFRAME_THREADS")
    assert pm.cell_threads() == 1
    assert math.isnan(peers.TOLERANCE["l2svm-rbf"])
