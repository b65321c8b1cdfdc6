"""``optframe report``: tables with medians and spreads, ratios to the baseline, PNG plots."""

import json
import re
import types
from pathlib import Path

import pytest

from optframe.bench import report as report_module
from optframe.bench.aggregate import (
    ReportSpec,
    Spread,
    cell_rows,
    compute_ratios,
    group_cells,
    spread_text,
)
from optframe.bench.history import history_rows
from optframe.bench.suite import load_suite, suite_names
from optframe.errors import OptframeError
from optframe.result import IterationRecord, Result, Status

REPORT = {
    "method": "method",
    "baseline": "base",
    "problem": ("data", "n"),
    "scaling": "n",
    "memory": "peak_mb",
}


def fake_suite(**extra):
    suite = types.ModuleType("fake_suite")
    suite.DESCRIPTION = "a fake suite: fast against base"
    suite.COLUMNS = ["data", "n", "method", "status", "seconds", "peak_mb", "objective"]
    suite.REPORT = REPORT
    suite.PAPER = "Paper: fast is 3x faster than base."
    vars(suite).update(extra)
    return suite


def _history(scale):
    return [
        {
            "iteration": k,
            "seconds": 0.1 * (k + 1) * scale,
            "objective": 10.0 - k,
            "bound": 5.0 + k,
            "gap": (5.0 - 2 * k) / (10.0 - k),
        }
        for k in range(3)
    ]


def synthetic(history=True):
    """3 repeats; base takes 4, 5, 6 s and fast 1, 2, 3 s (times n / 100); ``e`` has no base."""
    records = []
    for data, n in (("d", 100), ("d", 1000), ("e", 100)):
        for method, times in (("base", (4.0, 5.0, 6.0)), ("fast", (1.0, 2.0, 3.0))):
            if data == "e" and method == "base":
                continue
            params = {"data": data, "n": n, "method": method}
            for repeat, seconds in enumerate(times):
                record = params | {
                    "status": "optimal",
                    "seconds": seconds * n / 100,
                    "peak_mb": 10.0 * n / 100 * (2 if method == "base" else 1),
                    "objective": 1.0,
                    "repeat": repeat,
                    "cell_key": json.dumps(params, sort_keys=True),
                }
                if history:
                    record["history"] = _history(seconds)
                records.append(record)
    return records


def _write(tmp_path, monkeypatch, records, suite=None, name="fake"):
    monkeypatch.setattr(report_module, "load_suite", lambda _: suite or fake_suite())
    return report_module.write_report(name, records, tmp_path)


def _links(markdown: Path) -> list[Path]:
    text = markdown.read_text()
    return [markdown.parent / link for link in re.findall(r"!\[[^]]*\]\(([^)]+)\)", text)]


def test_medians_and_spreads_over_repeats():
    spec = ReportSpec.from_mapping(REPORT)
    groups = group_cells(synthetic(), spec)
    assert [len(g.records) for g in groups] == [3] * 5
    rows = cell_rows(groups, ["data", "n", "method", "seconds", "status"])
    assert rows[0] == {"data": "d", "n": "100", "method": "base", "seconds": "5 [4, 6]",
                       "status": "optimal", "runs": "3"}  # fmt: skip
    assert rows[3]["seconds"] == "20 [10, 30]"
    assert spread_text(Spread.of([2.0, None, 7.0, 3.0])) == "3 [2, 7]"
    assert spread_text(Spread.of([1.5])) == "1.5"


def test_replicate_parameters_are_pooled_with_repeats():
    spec = ReportSpec.from_mapping(REPORT | {"replicates": ("seed",)})
    records = []
    for seed in range(4):
        params = {"data": "d", "n": 1, "method": "base", "seed": seed}
        records.append(params | {"seconds": float(seed + 1), "repeat": 0,
                                 "cell_key": json.dumps(params, sort_keys=True)})  # fmt: skip
    (group,) = group_cells(records, spec)
    assert cell_rows([group], ["seconds"])[0] == {"seconds": "2.5 [1, 4]", "runs": "4"}


def test_ratio_against_the_baseline_pairs_repeats():
    ratios = compute_ratios(synthetic(), ReportSpec.from_mapping(REPORT))
    assert [(r.problem, r.method, r.baseline) for r in ratios.rows] == [
        (("d", 100), "fast", "base"),
        (("d", 1000), "fast", "base"),
    ]
    ratio = ratios.rows[0].ratio  # 4/1, 5/2, 6/3
    assert (ratio.median, ratio.low, ratio.high) == (2.5, 2.0, 4.0)
    assert ratios.rows[0].pairs == 3
    assert ratios.missing == {"no baseline": ["e n=100"]}


def test_unpaired_records_give_the_ratio_of_medians():
    records = [r for r in synthetic() if not (r["method"] == "fast" and r["repeat"] > 0)]
    for r in records:
        if r["method"] == "fast":
            r["repeat"] = 7
    row = compute_ratios(records, ReportSpec.from_mapping(REPORT)).rows[0]
    assert (row.pairs, row.ratio.median) == (0, pytest.approx(5.0 / 1.0))


def test_failed_baseline_is_reported_not_a_crash(tmp_path, monkeypatch):
    records = synthetic()
    for r in records:
        if r["method"] == "base" and r["n"] == 1000:
            r.pop("seconds")
            r["status"], r["error"] = "failed", "RuntimeError: boom"
    text = _write(tmp_path, monkeypatch, records).read_text()
    assert "has no valid `seconds` (failed or skipped) on 1 problem(s)" in text
    assert "No baseline (`base`) was measured on 1 problem(s), so they have no ratio: e n=100" in (
        text
    )
    assert "RuntimeError: boom" in text


def test_report_writes_tables_plots_and_links(tmp_path, monkeypatch):
    markdown = _write(tmp_path, monkeypatch, synthetic())
    assert markdown == tmp_path / "fake.md"
    text = markdown.read_text()
    assert "| d | 100 | base | optimal | 5 [4, 6] | 20 | 1 | 3 |" in text
    assert "Paper: fast is 3x faster than base." in text
    assert "| d | 100 | fast | 2 [1, 3] | base | 5 [4, 6] | 2.5 [2, 4] | 3 |" in text
    links = _links(markdown)
    names = {p.name.split("_")[0].removesuffix(".png") for p in links}
    assert names == {"speedup", "scaling", "convergence"}
    assert all(p.parent == tmp_path / "fake" for p in links)
    for path in links:
        assert path.stat().st_size > 1000
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # every PNG written is linked
    assert sorted((tmp_path / "fake").iterdir()) == sorted(links)


def test_records_without_history_skip_the_convergence_plot(tmp_path, monkeypatch):
    markdown = _write(tmp_path, monkeypatch, synthetic(history=False))
    assert "## Convergence" not in markdown.read_text()
    assert not list((tmp_path / "fake").glob("convergence*"))
    assert list((tmp_path / "fake").glob("speedup*"))


def test_suite_without_report_or_baseline(tmp_path, monkeypatch):
    suite = fake_suite()
    del suite.REPORT
    text = _write(tmp_path, monkeypatch, synthetic(), suite=suite).read_text()
    assert "The suite declares no baseline (`REPORT`): no ratios." in text
    assert "5 [4, 6]" in text


def test_summarize_output_and_its_failure_are_included(tmp_path, monkeypatch):
    suite = fake_suite(summarize=lambda records: f"{len(records)} records summarized")
    text = _write(tmp_path, monkeypatch, synthetic(), suite=suite).read_text()
    assert "15 records summarized" in text

    def broken(records):
        raise KeyError("x")

    text = _write(tmp_path, monkeypatch, synthetic(), suite=fake_suite(summarize=broken))
    assert "summarize() failed: KeyError" in text.read_text()


def test_path_curves_are_plotted(tmp_path, monkeypatch):
    report = {"method": "method", "baseline": "none", "problem": ("data",),
              "path": {"x": "grid", "y": ("a", "b"), "label": "rejection ratio"}}  # fmt: skip
    records = []
    for method in ("none", "rule"):
        params = {"data": "d", "method": method}
        record = params | {"seconds": 2.0 if method == "none" else 1.0, "repeat": 0,
                           "cell_key": json.dumps(params)}  # fmt: skip
        if method == "rule":
            record |= {"grid": [0.01, 0.1, 1.0, 10.0], "a": [0, 0.5, 0.6, 0.7], "b": [0, 0.1, 0, 0]}
        records.append(record)
    markdown = _write(tmp_path, monkeypatch, records, suite=fake_suite(REPORT=report))
    assert "## Along the path" in markdown.read_text()
    assert any(p.name.startswith("path_") and p.is_file() for p in _links(markdown))


def test_report_spec_is_validated_and_every_suite_declares_one():
    with pytest.raises(OptframeError, match="unknown REPORT keys"):
        ReportSpec.from_mapping({"metirc": "seconds"})
    with pytest.raises(OptframeError, match="path"):
        ReportSpec.from_mapping({"path": {"x": "C"}})
    for name in suite_names():
        spec = ReportSpec.of(load_suite(name))
        assert all((spec.method, spec.baseline, spec.problem)), name


def test_history_rows_are_thinned_and_json_able():
    history = [IterationRecord(k, 0.01 * k, 10.0 / (k + 1), 1.0, {"gap": 0.5, "v": [1]})
               for k in range(1000)]  # fmt: skip
    rows = history_rows(history, max_points=50)
    assert 25 <= len(rows) <= 52
    assert (rows[0]["iteration"], rows[-1]["iteration"]) == (0, 999)
    assert rows[0]["gap"] == pytest.approx(9.0 / 10.0)
    assert rows[0]["extra_gap"] == 0.5
    assert "v" not in rows[0]
    json.dumps(rows, allow_nan=False)
    result = Result(Status.ITERATION_LIMIT, float("nan"), None, {}, history=(history[0],))
    assert history_rows(result)[0]["bound"] == 1.0


def test_report_of_real_quick_aid_cells(tmp_path):
    """LAD and SVM quick cells of the aid suite, two repeats each, as the store hands them."""
    aid = load_suite("aid")
    keep = {"aid", "direct dual ipm", "direct dual simplex", "direct clarabel", "sklearn LinearSVC"}
    cells = [c for c in aid.cells(quick=True) if c["problem"] != "s3vm" and c["method"] in keep]
    records = []
    for repeat in range(2):
        for cell in cells:
            record = dict(cell.params) | aid.run_cell(cell)
            records.append(record | {"repeat": repeat, "cell_key": cell.key})
    markdown = report_module.write_report("aid", records, tmp_path, title="aid quick")
    text = markdown.read_text()
    assert text.startswith("# aid quick")
    ratios = compute_ratios(records, ReportSpec.of(aid))
    assert {(r.problem[0], r.method, r.baseline, r.pairs) for r in ratios.rows} == {
        ("lad", "aid", "direct dual ipm", 2),
        ("lad", "direct dual simplex", "direct dual ipm", 2),
        ("svm", "aid", "direct clarabel", 2),
        ("svm", "sklearn LinearSVC", "direct clarabel", 2),
    }
    links = _links(markdown)
    assert {p.name.split("_")[0] for p in links} == {"speedup", "convergence"}
    assert all(p.stat().st_size > 1000 for p in links)
