"""Without the benchmark data and without a network, every entry point says so in one line, with
the fix (issue 26, item 5)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import optframe.data.load as load_mod
from optframe.cli.main import main
from optframe.data import load_dataset
from optframe.errors import DataError

ROOT = Path(__file__).resolve().parents[1]
DATA_EXAMPLES = sorted(
    p for p in (ROOT / "examples").glob("*.py") if "load_dataset" in p.read_text()
)


@pytest.fixture
def no_data(tmp_path, monkeypatch):
    """No OPTFRAME_DATA, an empty cache, and no network (downloads fail as they would)."""
    monkeypatch.delenv("OPTFRAME_DATA", raising=False)
    monkeypatch.delenv("OPTFRAME_OFFLINE", raising=False)
    monkeypatch.setenv("OPTFRAME_CACHE", str(tmp_path / "cache"))

    def unreachable(url, dest):
        raise OSError("network is unreachable")

    monkeypatch.setattr(load_mod, "_download", unreachable)


def test_failed_download_says_the_fix_in_its_first_line(no_data):
    with pytest.raises(DataError) as caught:
        load_dataset("a1a")
    summary = caught.value.summary
    assert summary == str(caught.value).splitlines()[0]
    assert "is not on this machine" in summary
    assert "network is unreachable" in summary
    assert "set OPTFRAME_DATA to the folder that holds a1a/" in summary
    assert "retry with network access" in summary
    assert caught.value.__suppress_context__  # no network traceback above the message


def test_offline_says_the_fix_in_its_first_line(no_data, monkeypatch):
    monkeypatch.setenv("OPTFRAME_OFFLINE", "1")
    with pytest.raises(DataError) as caught:
        load_dataset("a1a")
    assert "unset OPTFRAME_OFFLINE" in caught.value.summary
    assert "OPTFRAME_DATA" in caught.value.summary


def test_cli_prints_one_line(no_data, capsys):
    assert main(["solve", "LADRegression", "--data", "cpusmall"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "set OPTFRAME_DATA" in err
    assert ". Run `optframe datasets`" in err  # two sentences, each ended


def test_datasets_hints_when_everything_is_missing(no_data, capsys):
    assert main(["datasets"]) == 0
    assert "No data file was found: set OPTFRAME_DATA" in capsys.readouterr().out


def test_datasets_has_no_hint_with_data(capsys):
    if not os.environ.get("OPTFRAME_DATA"):
        pytest.skip("needs the benchmark data")
    assert main(["datasets"]) == 0
    assert "No data file was found" not in capsys.readouterr().out


@pytest.mark.parametrize("script", DATA_EXAMPLES, ids=[p.stem for p in DATA_EXAMPLES])
def test_example_without_data_prints_one_line(script, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "OPTFRAME_DATA"}
    env |= {"OPTFRAME_OFFLINE": "1", "OPTFRAME_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(script), "--smoke", *(["--out", str(tmp_path / "x.png")]
                                                   if "--out" in script.read_text() else [])],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "set OPTFRAME_DATA" in lines[0]
