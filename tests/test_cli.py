"""The command line: each sub-command runs and says what it should; bad input gives exit code 2."""

import subprocess
import sys

import pytest

from optframe.cli.main import main


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
    aid_rows = [line for line in rows if line.startswith("│ aid ")]
    assert len(aid_rows) == 2
    assert all(" optimal " in line for line in aid_rows)


def test_solve_prints_summary_and_solution(capsys):
    code = main(["solve", "LADRegression", "--data", "cpusmall", "--rows", "300", "--form", "dual"])
    out = capsys.readouterr().out
    assert code == 0
    assert "optimal" in out
    assert "beta =" in out


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
    assert "direct" in capsys.readouterr().out
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
