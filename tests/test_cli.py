"""The command line: each sub-command runs and says what it should; bad input gives exit code 2."""

import io
import json
import math
import subprocess
import sys

import numpy as np
import pytest
from rich.console import Console

from optframe.cli import commands, progress
from optframe.cli.main import main
from optframe.cli.tables import Row, comparison_table
from optframe.compare import Comparison, Pair
from optframe.drivers import Direct
from optframe.result import Result, Status


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "optframe.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_demo_quick_prints_every_backend_table():
    done = run("demo", "--quick")
    assert done.returncode == 0, done.stderr[-3000:]
    for text in ("LADRegression", "WeightedSVM", "matrix:highs", "pyomo:highs", "cvxpy:clarabel"):
        assert text in done.stdout
    assert "refused" not in done.stdout
    assert done.stdout.count("reference: matrix:clarabel, optimal") == 1
    assert done.stdout.count("reference: matrix:highs, optimal") == 1
    # Clarabel, the QP reference, is optimal in every layer and form of both problems.
    rows = done.stdout.splitlines()
    clarabel_rows = [line for line in rows if ":clarabel " in line and "direct:" in line]
    assert len(clarabel_rows) == 8
    assert all(" optimal " in line for line in clarabel_rows)
    # AID runs on both models and proves optimality.
    aid_rows = [line for line in rows if line.split()[:1] == ["aid"]]
    assert len(aid_rows) == 2
    assert all(" optimal " in line for line in aid_rows)


def test_solve_prints_summary_and_the_figures_of_a_regression(capsys):
    code = main(["solve", "LADRegression", "--data", "cpusmall", "--rows", "300", "--form", "dual"])
    out = capsys.readouterr().out
    assert code == 0
    assert "optimal" in out
    assert "residual norm" in out
    assert "mean absolute residual" in out
    assert "non-zeros of beta:" in out
    assert "[" not in out  # no slice of a solution vector


def test_compare_covers_every_layer(capsys):
    code = main(["compare", "WeightedSVM", "--data", "a1a", "--rows", "120", "--param", "C=0.5"])
    out = capsys.readouterr().out
    assert code == 0
    for backend in ("matrix:clarabel", "cvxpy:osqp", "pyomo:scip"):
        assert backend in out


def test_datasets_lists_found_files(capsys):
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "cpusmall" in out
    assert "a9a" in out


def test_bench_list_and_quick_direct_serial(tmp_path, capsys):
    assert main(["bench", "--list"]) == 0
    listing = capsys.readouterr().out
    assert "direct: LAD LP" in listing
    # cell counts and expected times of both grids, for every suite
    assert "--quick: 6 cells, ~6 s of cell time" in listing
    assert "full: 18 cells, ~" in listing
    assert listing.count("of cell time") == 2 * listing.count("--quick:") >= 12
    db = tmp_path / "results.sqlite"
    argv = ["bench", "direct", "--quick", "--serial", "--db", str(db), "--report", str(tmp_path)]
    assert main(argv) == 0
    text = (tmp_path / "direct.md").read_text()
    assert "highspy by hand" in text
    assert "failed" not in text
    # a second run finds every cell in the database and runs nothing
    assert main(argv) == 0
    assert "6 cells already in the database" in capsys.readouterr().out
    assert main(["report", "direct", "--db", str(db), "--out", str(tmp_path / "again")]) == 0
    assert (tmp_path / "again" / "direct.md").exists()


def test_bench_filter_jsonl_and_records(tmp_path):
    records = tmp_path / "cells.jsonl"
    argv = ["bench", "direct", "--quick", "--filter", "form=dual", "--filter", "path=matrix:highs"]
    argv += ["--serial", "--db", str(tmp_path / "r.sqlite")]
    assert main([*argv, "--jsonl", str(records)]) == 0
    lines = records.read_text().splitlines()
    assert len(lines) == 1
    assert '"path": "matrix:highs"' in lines[0]
    out = tmp_path / "out"
    assert main(["bench", "direct", "--records", str(records), "--report", str(out)]) == 0
    table = [line for line in (out / "direct.md").read_text().splitlines() if "| 2000" in line]
    assert len(table) == 1
    assert "matrix:highs" in table[0]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["solve", "NoSuchModel", "--data", "cpusmall"], "unknown model"),
        (["solve", "LADRegression", "--data", "nosuchdata"], "DataError"),
        (["solve", "WeightedSVM", "--data", "a1a", "--param", "C=-1"], "ModelError"),
        (["solve", "WeightedSVM", "--data", "a1a", "--param", "C"], "NAME=VALUE"),
        (["solve", "LADRegression", "--data", "cpusmall", "--backend", "gurobi"], "UnknownBackend"),
        (["solve", "LADRegression", "--data", "cpusmall", "--backend", "osqp:highs"], "no 'osqp'"),
        (["bench", "nosuchsuite"], "UnknownSuite: no benchmark suite"),
        (["bench", "no.such.module"], "cannot import the suite module"),
        (["bench", "direct", "--db", "/nonexistent/dir/r.sqlite"], "ResultStoreError"),
        (["report", "direct", "--db", "/nonexistent/dir/r.sqlite"], "ResultStoreError"),
        (["bench", "direct", "--filter", "form"], "KEY=VALUE"),
        (["bench", "direct", "--db", "/tmp/optframe-t.sqlite", "--threads", "-2"], "--threads"),
        (["bench", "direct", "--db", "/tmp/optframe-t.sqlite", "--repeat", "0"], "--repeat"),
    ],
    ids=[
        "model",
        "data",
        "param-value",
        "param-form",
        "backend",
        "layer",
        "suite",
        "suite-module",
        "db",
        "report-db",
        "filter",
        "threads",
        "repeat",
    ],
)
def test_bad_input_exits_with_code_2_and_a_message(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_solve_prints_the_figures_of_a_classifier(capsys):
    argv = ["solve", "WeightedSVM", "--data", "a1a", "--rows", "200", "--param", "C=0.5"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "training accuracy" in out
    assert "support vectors" in out
    assert "non-zeros of w:" in out


def test_solve_json_to_a_file(tmp_path, capsys):
    path = tmp_path / "result.json"
    argv = ["solve", "WeightedSVM", "--data", "a1a", "--rows", "150", "--json", "--out", str(path)]
    assert main(argv) == 0
    assert capsys.readouterr().out == ""
    (line,) = path.read_text().splitlines()
    record = json.loads(line)
    assert set(record) == {"status", "objective", "bound", "gap", "iterations", "timings",
                           "stats", "model", "driver", "backend"}  # fmt: skip
    assert record["status"] == "optimal"
    assert record["model"] == "WeightedSVM"
    assert {"build", "solve", "total"} <= set(record["timings"])
    assert not any(isinstance(v, list) for v in record["stats"].values())


def test_compare_json_has_one_record_per_result_and_progress_on_stderr(capsys, monkeypatch):
    monkeypatch.setattr(progress, "PROGRESS_AFTER", 0.0)
    argv = ["compare", "LADRegression", "--data", "cpusmall", "--rows", "150", "--json"]
    assert main(argv) == 0
    captured = capsys.readouterr()
    records = [json.loads(line) for line in captured.out.splitlines()]
    reference, runs = records[0], records[1:]
    assert reference["pair"] == "reference"
    assert reference["status"] == "optimal"
    assert len(runs) >= 10
    assert {"direct:dual matrix:highs", "aid auto"} <= {r["pair"] for r in runs}
    assert all("objective" in r and "vs_ref" in r for r in runs if r["status"] != "refused")
    assert "compare LADRegression: 1/" in captured.err


def _rendered(rows, width):
    out = Console(width=width, record=True, file=io.StringIO())
    out.print(comparison_table("title", rows, out))
    return out.export_text()


def _rows():
    numbers = ("1633.1871", "1633.1871", "2.8e-08", "7.3e-10", "1.387", "1.430")
    return [
        Row("direct:primal", "matrix:clarabel", "optimal", numbers),
        Row("admm_then_ipm", "cvxpy:clarabel", "iteration_limit", numbers, "ADMM: max steps"),
        Row("direct:dual", "pyomo:highs", "error", numbers, "Clarabel: InsufficientProgress"),
    ]


def test_tables_at_120_columns_keep_every_name_whole():
    text = _rendered(_rows(), 120)
    for name in ("direct:primal", "admm_then_ipm", "matrix:clarabel", "cvxpy:clarabel",
                 "pyomo:highs", "iteration_limit", "1633.1871", "1.430"):  # fmt: skip
        assert name in text
    assert "…" not in text
    assert "Clarabel:" in text  # the solver's words for the rows that are not optimal


def test_narrow_tables_abbreviate_with_a_legend():
    text = _rendered(_rows(), 96)
    assert "…" not in text
    assert "mx:clarabel" in text
    assert "iter_lim" in text
    assert "mx = matrix" in text
    assert "iter_lim = iteration_limit" in text
    assert "admm_then_ipm" in text
    assert "Clarabel: InsufficientProgress" in text  # under the table when the column has no room


def _failed_result(*args, **kwargs):
    return Result(Status.ERROR, math.nan, None, {}, model="LADRegression", driver="direct",
                  backend="matrix:clarabel",
                  stats={"solver_status": "Clarabel: InsufficientProgress"})  # fmt: skip


def test_solve_and_compare_show_the_solvers_reason_for_a_failure(capsys, monkeypatch):
    monkeypatch.setattr(commands, "solve", _failed_result)
    argv = ["solve", "LADRegression", "--data", "cpusmall", "--rows", "100"]
    assert main([*argv, "--backend", "clarabel"]) == 1
    assert "solver says: Clarabel: InsufficientProgress" in capsys.readouterr().out
    reference = Result(Status.OPTIMAL, 1.0, 1.0, {"beta": np.ones(1)}, backend="matrix:highs")
    failed = Comparison(Pair(Direct(form="dual"), "matrix:clarabel"), _failed_result())
    monkeypatch.setattr(commands, "compare", lambda model, **_: (reference, [failed]))
    assert main(["compare", "LADRegression", "--data", "cpusmall", "--rows", "100"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "error" in line)
    assert "matrix:clarabel" in row
    assert "Clarabel: InsufficientProgress" in row


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["solve", "WeightedSVM", "--data", "a1a", "--param", "c=1"],
         "has no parameter 'c'. Did you mean 'C'? Its parameters: C, kernel"),
        (["solve", "WeightedSVN", "--data", "a1a"], "Did you mean 'WeightedSVM'"),
        (["solve", "WeightedSVM", "--data", "a1a", "--driver", "smx"], "Did you mean 'smo'?"),
        (["solve", "WeightedSVM", "--data", "a1a", "--backend", "clarabl"],
         "Did you mean 'clarabel'?"),
        (["solve", "WeightedSVM", "--data", "a1b"], "Run `optframe datasets`"),
        (["solve", "WeightedSVM", "--data", "a1a", "--split", "val"], "optframe datasets"),
    ],
    ids=["param", "model", "driver", "backend", "data", "split"],
)  # fmt: skip
def test_names_get_suggestions(capsys, argv, message):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_names_are_matched_whatever_their_case(capsys):
    argv = ["solve", "ladregression", "--data", "CPUSMALL", "--rows", "100", "--driver", "AID",
            "--backend", "HiGHS", "--json"]  # fmt: skip
    assert main(argv) == 0
    record = json.loads(capsys.readouterr().out)
    assert (record["model"], record["driver"]) == ("LADRegression", "aid")
    assert record["status"] == "optimal"
