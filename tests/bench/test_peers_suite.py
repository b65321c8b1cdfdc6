"""The ``peers`` suite: grid, listing, objective recomputation, success flags, summary math.

Nothing here needs the optional peer packages (pyfixest, rehline, scikit-learn-intelex): the
mappings are checked on highspy and scikit-learn (core dependencies), and a missing peer is
simulated.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest

from optframe.bench import peer_methods as pm
from optframe.bench import peer_stats as ps
from optframe.bench.suite import Cell, load_suite, suite_names
from optframe.bench.suites import peers
from optframe.data import Dataset
from optframe.models import LADRegression, WeightedSVM


def test_the_suite_registers_with_its_grid():
    assert "peers" in suite_names()
    suite = load_suite("peers")
    assert suite is peers
    quick, full = peers.cells(True), peers.cells(False)
    assert {c["job"] for c in quick} == {"lad", "svm-linear", "svm-rbf", "l2svm-rbf"} | set(
        peers.LOSS_JOBS
    ) | set(peers.L1_JOBS)
    assert len(full) > len(quick)
    lad = [c for c in full if c["job"] == "lad" and c["data"] == "het"]
    assert {(c["n"], c["m"]) for c in lad} == set(peers.LAD_SIZES)
    # scikit-learn's QuantileRegressor only at the smallest size; every other method everywhere
    sizes = {(c["n"], c["m"]) for c in lad if c["method"] == "sklearn QuantileRegressor"}
    assert sizes == {(40_000, 10)}
    for method in set(peers.LAD_METHODS) - {"sklearn QuantileRegressor"}:
        assert sum(c["method"] == method for c in lad) == len(peers.LAD_SIZES)
    rbf = {c["data"] for c in full if c["job"] == "svm-rbf"}
    assert len(rbf) >= 4
    assert all(peers.expected_seconds(c, False) > 0 for c in full)
    assert len({c.key for c in full}) == len(full)  # no duplicate cells


def test_list_shows_the_suite_and_its_cell_counts():
    from optframe.cli.bench import suite_listing

    lines = suite_listing(workers=1)
    at = next(i for i, line in enumerate(lines) if line.startswith("peers:"))
    counts = lines[at + 1]
    assert f"--quick: {len(peers.cells(True))} cells" in counts
    assert f"full: {len(peers.cells(False))} cells" in counts
    assert "not declared" not in counts


def _lad_data(n=300, m=3, seed=0):
    return peers.heteroscedastic_lad(n, m, seed=seed)


def test_heteroscedastic_data_is_seeded_and_heteroscedastic():
    a, b = _lad_data(4000, 2), _lad_data(4000, 2)
    np.testing.assert_array_equal(a.y, b.y)
    model = LADRegression(a)
    import optframe as of

    result = of.solve(model)
    residual = np.abs(result.solution["residual"])
    x1 = np.abs(np.asarray(a.X)[:, 0])
    # the noise grows with |x_1|
    assert residual[x1 > 1.5].mean() > 2 * residual[x1 < 0.3].mean()


def test_highspy_dual_lp_maps_to_the_models_optimum_and_a_perturbation_fails():
    import optframe as of

    data = _lad_data()
    model = LADRegression(data)
    reference = of.solve(model, threads=1).objective
    fit = pm.highs_lad_dual(np.asarray(data.X), data.y, "ipm")
    assert fit.status == "optimal"
    got = peers.recompute(model, fit.solution)["objective"]
    assert got == pytest.approx(reference, rel=1e-9)
    assert fit.tool_objective == pytest.approx(reference, rel=1e-9)
    # the same solution with beta's sign flipped is no LAD solution: the success flag drops
    wrong = dict(fit.solution, beta=-fit.solution["beta"])
    records = [
        {"job": "lad", "data": "het", "n": 300, "m": 3, "method": "optframe aid",
         "status": "optimal", "seconds": 1.0, "objective": reference},
        {"job": "lad", "data": "het", "n": 300, "m": 3, "method": "highspy ipm",
         "status": "optimal", "seconds": 1.0, **peers.recompute(model, fit.solution)},
        {"job": "lad", "data": "het", "n": 300, "m": 3, "method": "highspy pdlp",
         "status": "optimal", "seconds": 1.0, **peers.recompute(model, wrong)},
    ]  # fmt: skip
    peers.complete(records)
    assert [r["success"] for r in records] == [True, True, False]
    assert records[2]["rel_objective"] > 1e-3


@pytest.mark.parametrize(
    ("method", "driver"), [("optframe direct fn", "direct"), ("optframe aid fn", "aid")]
)
def test_the_fn_methods_run_fn_and_reach_the_optimum(method, driver):
    import optframe as of

    data = _lad_data(3000, 4)
    model = LADRegression(data)
    reference = of.solve(model, driver="direct", backend="highs", threads=1)
    record = peers._lad_fit(method, data, quick=True)
    assert record["backend"] == "matrix:fn"
    assert record["driver"] == driver
    assert record["status"] == "optimal"
    assert record["objective"] == pytest.approx(reference.objective, rel=1e-6)
    assert method in peers.LAD_METHODS


def test_a_solution_with_nan_gives_a_nan_objective_and_no_success():
    model = LADRegression(_lad_data())
    out = peers.recompute(model, {"beta": np.full(3, np.nan), "intercept": np.zeros(1)})
    assert math.isnan(out["objective"])
    records = [
        {"job": "lad", "method": "a", "status": "optimal", "seconds": 1.0, "objective": 5.0},
        {"job": "lad", "method": "b", "status": "optimal", "seconds": 1.0, **out},
    ]
    peers.complete(records)
    assert records[0]["success"]
    assert not records[1]["success"]


def _classes(n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.4 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X, y


def test_libsvm_dual_coefficients_map_to_alpha_and_the_intercept():
    from optframe.kernels import RBF

    X, y = _classes()
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=0.5))
    fit, estimator = pm.svc_fit(X, y, 1.0, "rbf", 0.5, "libsvm", 100)
    alpha = fit.solution["alpha"]
    assert alpha.min() >= 0
    assert alpha.max() <= 1.0 + 1e-12
    assert abs(float(y @ alpha)) < 1e-6
    # the mapped solution gives the estimator's own decision function
    np.testing.assert_allclose(
        model.decision_function(fit.solution, X), estimator.decision_function(X), atol=1e-8
    )
    values = peers.recompute(model, fit.solution)
    assert values["dual_objective"] <= values["objective"] + 1e-9
    assert (values["objective"] - values["dual_objective"]) / values["objective"] < 1e-2
    flipped = dict(fit.solution, intercept=-fit.solution["intercept"] + 1.0)
    assert peers.recompute(model, flipped)["objective"] > values["objective"]


def test_liblinear_on_the_ones_column_solves_the_no_intercept_model():
    X, y = _classes(300, seed=1)
    Xb = pm.with_ones(X)
    model = WeightedSVM(Dataset(X=Xb, y=y), C=1.0, fit_intercept=False)
    fit = pm.liblinear_hinge(Xb, y, 1.0, tol=1e-8)
    w = fit.solution["w"]
    by_hand = 0.5 * w @ w + np.maximum(0.0, 1.0 - y * (Xb @ w)).sum()
    assert peers.recompute(model, fit.solution)["objective"] == pytest.approx(by_hand, rel=1e-12)
    import optframe as of

    assert by_hand == pytest.approx(of.solve(model, threads=1).objective, rel=1e-6)


def test_a_missing_peer_is_unavailable_with_its_reason(monkeypatch):
    monkeypatch.setitem(sys.modules, "rehline", None)  # import rehline then raises
    record = peers.run_cell(Cell({"job": "svm-linear", "data": "a1a", "variant": "bias",
                                  "C": 1.0, "method": "rehline tol 1e-4"}))  # fmt: skip
    assert record["status"] == "unavailable"
    assert "rehline" in record["reason"]
    assert ".[peers]" in record["reason"]
    assert "seconds" not in record
    assert "objective" not in record


def test_hipo_is_checked_against_the_installed_highspy():
    reason = pm.highs_solver_missing("hipo")
    assert reason is None or "hipo" in reason
    assert pm.highs_solver_missing("ipm") is None


def test_quick_lad_cells_run_end_to_end():
    cell = {"job": "lad", "data": "het", "n": 3000, "m": 5}
    records = []
    for method in ("optframe aid", "highspy ipm"):
        record = peers.run_cell(Cell(cell | {"method": method}))
        records.append(cell | {"method": method} | record)
    assert records[0]["objective"] == pytest.approx(records[1]["objective"], rel=1e-8)
    peers.complete(records)
    assert all(r["success"] for r in records)
    assert records[1]["ratio_to_best_peer"] == pytest.approx(1.0)
    text = peers.summarize(records)
    assert "optframe aid" in text
    assert "shifted GM" in text


# --------------------------------------------------------------------------- summary math
def test_shifted_geometric_mean_by_hand():
    # (10 * 20 * 40) ** (1/3) - 10 = 20 - 10
    assert ps.shifted_geometric_mean([0.0, 10.0, 30.0]) == pytest.approx(10.0)
    assert ps.shifted_geometric_mean([5.0], shift=1.0) == pytest.approx(5.0)
    assert ps.shifted_geometric_mean([1.0, 4.0], shift=0.0) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="undefined"):
        ps.shifted_geometric_mean([])
    with pytest.raises(ValueError, match="non-negative"):
        ps.shifted_geometric_mean([-1.0])


def _record(problem, method, seconds, objective, repeat=0, status="done"):
    return {"job": "lad", "data": problem, "method": method, "seconds": seconds,
            "objective": objective, "repeat": repeat, "status": status}  # fmt: skip


def test_method_summary_counts_a_miss_at_the_time_limit():
    records = [
        _record("p", "optframe aid", 1.0, 100.0),
        _record("p", "peer", 2.0, 100.0 + 1e-3),  # 1e-5 relative: a miss at 1e-6
        _record("q", "optframe aid", 3.0, 50.0),
        _record("q", "peer", 0.0, 50.0),
        _record("r", "peer", 1.0, None, status="failed"),
        _record("r", "optframe aid", 0.5, 7.0),
        _record("r", "absent", None, None, status="unavailable"),
    ]
    key = peers.problem_key
    ps.mark_success(records, key, peers.tolerance_of)
    assert [r["success"] for r in records[:6]] == [True, False, True, True, False, True]
    summary = {s.method: s for s in ps.method_summary(records, key, lambda r: 100.0)}
    assert set(summary) == {"optframe aid", "peer"}  # unavailable runs count nowhere
    ours, peer = summary["optframe aid"], summary["peer"]
    assert (ours.successes, ours.runs, ours.problems) == (3, 3, 3)
    assert ours.success_rate == 1.0
    assert peer.success_rate == pytest.approx(1 / 3)
    assert ours.shifted_gm == pytest.approx(ps.shifted_geometric_mean([1.0, 3.0, 0.5]))
    assert peer.shifted_gm == pytest.approx(ps.shifted_geometric_mean([100.0, 0.0, 100.0]))
    assert ours.relative_gm == 1.0
    assert peer.relative_gm == pytest.approx(peer.shifted_gm / ours.shifted_gm)


def test_cell_table_medians_and_the_best_peer_is_the_fastest_that_succeeded():
    records = []
    for repeat, (a, b, c) in enumerate([(1.0, 0.5, 2.0), (3.0, 0.7, 4.0), (2.0, 0.6, 3.0)]):
        records += [
            _record("p", "optframe aid", a, 10.0, repeat),
            _record("p", "fast but inexact", b, 10.1, repeat),
            _record("p", "exact peer", c, 10.0, repeat),
        ]
    ps.mark_success(records, peers.problem_key, peers.tolerance_of)
    rows = {row.method: row for row in ps.cell_table(records, peers.problem_key)}
    ours = rows["optframe aid"]
    assert ours.seconds == (2.0, 1.0, 3.0)
    assert ours.successes == 3
    assert rows["fast but inexact"].successes == 0
    assert ours.best_peer == "exact peer"
    assert ours.ratio_to_best_peer == pytest.approx(2.0 / 3.0)
    assert ours.fastest_peer == "fast but inexact"
    assert ours.ratio_to_fastest_peer == pytest.approx(2.0 / 0.6)
    text = peers.tables(records)
    assert "| lad p | optframe aid | 2 [1, 3] |" in text


def test_accuracy_decides_success_where_the_objectives_differ():
    records = [
        {"job": "l2svm-rbf", "data": "a", "method": "optframe mfw", "status": "converged",
         "seconds": 2.0, "objective": -0.1, "accuracy": 85.0},
        {"job": "l2svm-rbf", "data": "a", "method": "libsvm SVC", "status": "done",
         "seconds": 1.0, "accuracy": 84.9},
        {"job": "l2svm-rbf", "data": "a", "method": "other", "status": "done",
         "seconds": 1.0, "accuracy": 84.0},
    ]  # fmt: skip
    peers.complete(records)
    assert [r["success"] for r in records] == [True, True, False]
    assert records[0]["ratio_to_best_peer"] == pytest.approx(2.0)


def test_a_run_stopped_at_a_limit_has_its_objective_compared_but_never_succeeds():
    records = [
        _record("p", "optframe aid", 1.0, 10.0),
        _record("p", "highspy pdlp", 60.0, 10.0 - 1e-9, status="time_limit_reached"),
    ]
    peers.complete(records)
    assert records[1]["rel_objective"] < 0 or records[1]["rel_objective"] == 0
    assert records[0]["rel_objective"] == pytest.approx(1e-10)
    assert records[0]["success"]
    assert not records[1]["success"]
    row = {r.method: r for r in ps.cell_table(records, peers.problem_key)}["highspy pdlp"]
    assert row.seconds is None
    assert row.objective == pytest.approx(10.0 - 1e-9)


def test_optframes_own_lp_by_highspy_maps_to_the_same_optimum():
    data = _lad_data()
    model = LADRegression(data)
    textbook = pm.highs_lad_dual(np.asarray(data.X), data.y, "ipm")
    own = pm.highs_optframe_lp(model, "ipm")
    assert own.status == "optimal"
    expected = peers.recompute(model, textbook.solution)["objective"]
    assert peers.recompute(model, own.solution)["objective"] == pytest.approx(expected, rel=1e-9)


def test_one_thread_is_restored_after_the_cell(monkeypatch):
    import os

    import numba
    from threadpoolctl import threadpool_info

    monkeypatch.delenv("OPTFRAME_THREADS", raising=False)
    before = numba.get_num_threads()
    with peers.one_thread():
        assert os.environ["OPTFRAME_THREADS"] == "1"
        assert numba.get_num_threads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpool_info())
    assert "OPTFRAME_THREADS" not in os.environ
    assert numba.get_num_threads() == before
