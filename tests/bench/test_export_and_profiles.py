"""``optframe bench export`` (benchopt's columns) and ``optframe bench report`` (profiles).

The records are made by hand so that every figure is known: two problems, three solvers.

=========  ===================  ===================  ==================================
problem    A (aid highs)        B (direct clarabel)  C (smo auto)
=========  ===================  ===================  ==================================
p1         1 s, optimal         2 s, optimal         4 s, time_limit, gap 0.5: failure
p2         10 s, gap 1e-8       5 s, optimal         20 s, converged, no gap: failure
=========  ===================  ===================  ==================================

Ratios to the best: A 1 and 2, B 2 and 1, C inf twice. Shifted geometric means (shift 10 s, a
failure counting the largest time, 20 s): A sqrt(11 * 20) - 10 = 4.8324, B sqrt(12 * 15) - 10
= 3.4164, C 20; relative to B: 1.4145, 1, 5.8541.
"""

import importlib.util
import json
import math

import numpy as np
import pytest

from optframe.bench import interop
from optframe.bench.interop import ExportError, benchopt_rows, read_table, write_table
from optframe.bench.profiles import Runs, is_success, markdown, shifted_geometric_mean
from optframe.bench.store import ResultStore
from optframe.cli.main import main

SOLVERS = {"A": ("aid", "highs"), "B": ("direct", "matrix:clarabel"), "C": ("smo", "auto")}
RUNS = [  # (problem's data set, solver, seconds, status, gap)
    ("p1", "A", 1.0, "optimal", 0.0),
    ("p1", "B", 2.0, "optimal", None),
    ("p1", "C", 4.0, "time_limit", 0.5),
    ("p2", "A", 10.0, "converged", 1e-8),
    ("p2", "B", 5.0, "optimal", 1e-9),
    ("p2", "C", 20.0, "converged", None),
]


def _records():
    records = []
    for k, (data, solver, seconds, status, gap) in enumerate(RUNS):
        driver, backend = SOLVERS[solver]
        record = {"model": "WeightedSVM", "dataset": data, "driver": driver, "backend": backend}
        record |= {"seconds": seconds, "status": status, "objective": 100.0 + k / 3}
        record |= {"bound": None if gap is None else 100.0 - gap, "gap": gap, "iterations": k}
        records.append(record)
    return records


def _rows():
    return benchopt_rows("handmade", _records())


def _label(solver):
    return " ".join(SOLVERS[solver])


def test_the_rows_carry_benchopt_names():
    rows = _rows()
    assert list(rows[0]) == list(interop.COLUMNS)
    first = rows[0]
    assert first["objective_name"] == "WeightedSVM"
    assert first["dataset_name"] == "p1"
    assert first["solver_name"] == "aid highs"
    assert (first["idx_rep"], first["time"], first["stop_val"]) == (0, 1.0, 0.0)
    assert (first["p_solver_driver"], first["p_solver_backend"]) == ("aid", "highs")
    assert math.isnan(rows[1]["objective_gap"])


def test_success_rule():
    assert is_success({"status": "OPTIMAL"})
    assert is_success({"status": "converged", "objective_gap": 1e-7})
    assert not is_success({"status": "converged", "objective_gap": 1e-5})
    assert is_success({"status": "converged", "objective_gap": 1e-5}, tol=1e-4)
    assert not is_success({"status": "time_limit", "objective_gap": float("nan")})


def test_profiles_by_hand():
    runs = Runs.of(_rows())
    assert runs.solvers == [_label("A"), _label("B"), _label("C")]
    assert len(runs.problems) == 2
    ratios = runs.ratios()
    np.testing.assert_array_equal(ratios, [[1.0, 2.0, np.inf], [2.0, 1.0, np.inf]])
    profile = runs.profile([1.0, 1.5, 2.0, 100.0])
    np.testing.assert_array_equal(
        profile, [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 0.0]]
    )


def test_shifted_geometric_means_by_hand():
    assert shifted_geometric_mean([1.0, 10.0]) == pytest.approx(math.sqrt(220) - 10)
    assert shifted_geometric_mean([0.0, 0.0, 0.0]) == pytest.approx(0.0, abs=1e-12)
    summary = {r["solver"]: r for r in Runs.of(_rows()).summary()}
    a, b, c = (summary[_label(s)] for s in "ABC")
    assert a["shifted_gm"] == pytest.approx(math.sqrt(11 * 20) - 10)
    assert b["shifted_gm"] == pytest.approx(math.sqrt(12 * 15) - 10)
    assert c["shifted_gm"] == pytest.approx(20.0)
    assert a["relative_gm"] == pytest.approx((math.sqrt(220) - 10) / (math.sqrt(180) - 10))
    assert b["relative_gm"] == 1.0
    assert c["relative_gm"] == pytest.approx(20 / (math.sqrt(180) - 10))
    assert [r["success_rate"] for r in (a, b, c)] == [1.0, 1.0, 0.0]
    # a declared time limit is what the failures count
    limited = {r["solver"]: r for r in Runs.of(_rows()).summary(time_limit=100.0)}
    assert limited[_label("C")]["shifted_gm"] == pytest.approx(100.0)
    assert limited[_label("A")]["shifted_gm"] == pytest.approx(a["shifted_gm"])


def test_repetitions_are_problems_of_their_own():
    rows = _rows() + [r | {"idx_rep": 1} for r in _rows()]
    runs = Runs.of(rows)
    assert len(runs.problems) == 4
    assert runs.profile([1.0])[0].tolist() == [0.5, 0.5, 0.0]


def _same(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if isinstance(a[key], float) and math.isnan(a[key]):
            assert isinstance(b[key], float), key
            assert math.isnan(b[key]), key
        else:
            assert a[key] == b[key], key


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_tables_round_trip(tmp_path, fmt):
    if fmt == "parquet" and importlib.util.find_spec("pyarrow") is None:
        pytest.skip("pyarrow is not installed")
    rows = _rows()
    path = write_table(rows, tmp_path / f"results.{fmt}")
    back = read_table(path)
    assert len(back) == len(rows)
    for row, read in zip(rows, back, strict=True):
        _same(row, read)


def test_parquet_without_pyarrow_is_refused(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name)
    )
    with pytest.raises(ExportError, match="Parquet needs pyarrow: pip install pyarrow"):
        write_table(_rows(), tmp_path / "results.parquet")
    with pytest.raises(ExportError, match="cannot tell the format"):
        write_table(_rows(), tmp_path / "results.xlsx")


@pytest.fixture
def database(tmp_path):
    path = tmp_path / "results.sqlite"
    with ResultStore(path) as store:
        for k, record in enumerate(_records()):
            store.add("handmade", json.dumps({"k": k}), 0, {"k": k}, record)
    return path


def test_cli_export_reads_back_as_the_stored_records(database, tmp_path, capsys):
    path = tmp_path / "out.csv"
    assert main(["bench", "export", "--db", str(database), str(path)]) == 0
    assert "6 rows" in capsys.readouterr().out
    back = read_table(path)
    for row, read in zip(_rows(), back, strict=True):
        _same(row, read)
    header = path.read_text().splitlines()[0].split(",")
    for name in ("solver_name", "dataset_name", "objective_name", "idx_rep", "time"):
        assert name in header


def test_cli_report_writes_the_profiles_and_the_table(database, tmp_path, capsys):
    out = tmp_path / "report"
    out.mkdir()
    assert main(["bench", "report", "--db", str(database), "--out", str(out)]) == 0
    text = (out / "profiles.md").read_text()
    assert (out / "profiles.png").stat().st_size > 5000
    assert "| direct matrix:clarabel | 100.0 % (2/2) | 2 | 3.416 | 1 |" in text
    assert "| aid highs | 100.0 % (2/2) | 2 | 4.832 | 1.41 |" in text
    assert "| smo auto | 0.0 % (0/2) | 2 | 20 | 5.85 |" in text
    assert "status is optimal or its gap is at most 1e-06" in text
    # the same figures from the exported table
    table = tmp_path / "out.csv"
    assert main(["bench", "export", "--db", str(database), str(table)]) == 0
    capsys.readouterr()
    assert main(["bench", "report", "--from", str(table), "--out", str(out)]) == 0
    assert "| aid highs | 100.0 % (2/2) | 2 | 4.832 | 1.41 |" in capsys.readouterr().out


def test_markdown_states_a_declared_time_limit():
    text = markdown(Runs.of(_rows()), 1e-6, 10.0, 100.0)
    assert "as the time limit, 100 s;" in text
    assert "| smo auto | 0.0 % (0/2) | 2 | 100 | " in text


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["bench", "export", "--db", "missing.sqlite", "x.csv"], "no results database"),
        (["bench", "export", "--db", "{db}", "{tmp}/x.txt"], "cannot tell the format"),
        (["bench", "export", "--db", "{db}", "--suite", "other", "{tmp}/x.csv"], "no records"),
        (["bench", "report", "--from", "{tmp}/none.csv"], "no file"),
    ],
)
def test_bad_export_and_report_input(database, tmp_path, capsys, argv, message):
    argv = [a.format(db=database, tmp=tmp_path) for a in argv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_benchopt_result_file_is_read_and_judged_by_its_gap(tmp_path):
    """benchopt's columns, its extra ones, no status: a run succeeds when its gap is small."""
    import csv

    path = tmp_path / "benchopt_run.csv"
    columns = ["objective_name", "solver_name", "dataset_name", "idx_rep", "p_obj_model"]
    columns += ["time", "objective_value", "objective_gap", "objective_optimal"]
    runs = [("direct[backend=highs]", 0.5, 1e-9), ("driver[driver=smo]", 0.25, 1e-3)]
    with open(path, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        for solver, seconds, gap in runs:
            row = ["model[C=1.0]", solver, "Simulated[n=10]", 0, "LAD", seconds, 1.0, gap, 1]
            writer.writerow(row)
    rows = read_table(path)
    assert rows[0]["status"] is None
    assert rows[0]["p_solver_driver"] is None
    summary = {r["solver"]: r for r in Runs.of(rows).summary()}
    assert summary["direct[backend=highs]"]["success_rate"] == 1.0
    assert summary["driver[driver=smo]"]["success_rate"] == 0.0
    assert Runs.of(rows, tol=1e-2).ratios().tolist() == [[2.0, 1.0]]
    path.write_text("solver_name,time\na,1.0\n")
    with pytest.raises(ExportError, match="lacks the columns"):
        read_table(path)
