"""One runner per results database; Ctrl-C stops a run and names the command that resumes it."""

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from optframe.bench.runner import run_bench
from optframe.bench.store import ResultStore
from optframe.errors import ResultStoreError

SUITE = "suites_for_tests.fault"
HERE = Path(__file__).resolve().parent


@pytest.fixture
def fault(tmp_path, monkeypatch):
    """Environment of the fault suite; child processes find it through PYTHONPATH."""
    monkeypatch.setenv("FAULT_DIR", str(tmp_path))
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{HERE}{os.pathsep}{path}" if path else str(HERE))
    monkeypatch.syspath_prepend(str(HERE))
    return tmp_path


def wait_for_cells(db: Path, count: int, timeout: float = 120.0) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if db.exists():
            with ResultStore(db) as store:
                if len(store.done(SUITE)) >= count:
                    return
        time.sleep(0.2)
    raise AssertionError(f"fewer than {count} cells stored in {db} after {timeout} s")


def test_a_second_runner_on_the_same_database_is_refused_and_the_first_keeps_its_cells(
    fault, monkeypatch
):
    monkeypatch.setenv("FAULT_COUNT", "6")
    monkeypatch.setenv("FAULT_SLEEP", "0.5")
    db = fault / "r.sqlite"
    outcome = {}

    def first() -> None:
        with ResultStore(db) as store:
            outcome["records"] = run_bench(SUITE, store, serial=True)

    thread = threading.Thread(target=first)
    thread.start()
    try:
        wait_for_cells(db, 1)
        with ResultStore(db) as store, pytest.raises(ResultStoreError) as refused:
            run_bench(SUITE, store, serial=True)
    finally:
        thread.join(120)
    message = str(refused.value)
    assert str(db) in message
    assert "another optframe bench" in message
    assert f"pid {os.getpid()}" in message
    assert "another --db" in message
    assert sorted(r["i"] for r in outcome["records"]) == list(range(6))
    starts = [line for line in (fault / "executions").read_text().splitlines() if "start" in line]
    assert len(starts) == 6  # the refused runner ran nothing
    # once the first runner is done, the database is free again
    with ResultStore(db) as store:
        assert len(run_bench(SUITE, store, serial=True)) == 6


def test_a_second_command_line_runner_exits_with_a_message(fault):
    env = os.environ | {"FAULT_COUNT": "8", "FAULT_SLEEP": "0.5"}
    db = fault / "r.sqlite"
    argv = [sys.executable, "-m", "optframe.cli.main", "bench", SUITE, "--serial", "--db", str(db)]
    first = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_cells(db, 1)
        second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    finally:
        first.wait(120)
    assert first.returncode == 0
    assert second.returncode == 2
    assert "ResultStoreError" in second.stderr
    assert str(db) in second.stderr
    with ResultStore(db) as store:
        assert len(store.records(SUITE)) == 8


@pytest.mark.parametrize("serial", [True, False], ids=["serial", "local-cluster"])
def test_ctrl_c_prints_one_line_with_the_resume_command_and_no_traceback(fault, serial):
    env = os.environ | {"FAULT_COUNT": "40", "FAULT_SLEEP": "1.0"}
    db = fault / "r.sqlite"
    args = ["bench", SUITE, "--db", str(db), "--time-limit", "60"]
    args += ["--serial"] if serial else ["--workers", "2"]
    runner = subprocess.Popen(
        [sys.executable, "-m", "optframe.cli.main", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        wait_for_cells(db, 2)
        os.killpg(runner.pid, signal.SIGINT)  # what Ctrl-C sends: the runner and its children
        _, err = runner.communicate(timeout=120)
    finally:
        if runner.poll() is None:
            os.killpg(runner.pid, signal.SIGKILL)
    assert runner.returncode == 130, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "interrupted" in lines[0]
    assert f"Resume with: optframe {' '.join(args)}" in lines[0]
    with ResultStore(db) as store:
        assert 2 <= len(store.done(SUITE)) < 40


# Wall-clock assertions: these run on their own, after the parallel part of the suite.
pytestmark = pytest.mark.timing
