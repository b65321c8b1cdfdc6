"""The Dask runner: resume, repetitions, and the faults of issue 8 on a local 2-worker cluster."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from optframe.bench.runner import execute_cell, pending_jobs, run_bench
from optframe.bench.store import ResultStore
from optframe.bench.suite import Cell
from optframe.errors import SchedulerUnreachable, UnknownSuite

SUITE = "suites_for_tests.fault"
HERE = Path(__file__).resolve().parent


@pytest.fixture
def fault(tmp_path, monkeypatch):
    """Environment of the fault suite; workers find it through PYTHONPATH."""
    monkeypatch.setenv("FAULT_DIR", str(tmp_path))
    path = os.environ.get("PYTHONPATH", "")
    monkeypatch.setenv("PYTHONPATH", f"{HERE}{os.pathsep}{path}" if path else str(HERE))
    monkeypatch.syspath_prepend(str(HERE))
    return tmp_path


def executions(folder: Path) -> list[str]:
    log = folder / "executions"
    return log.read_text().splitlines() if log.exists() else []


def test_pending_jobs_skip_done_and_add_repeats():
    cells = [Cell({"i": 0}), Cell({"i": 1})]
    done = {(cells[0].key, 0)}
    jobs = pending_jobs("s", cells, 2, done)
    assert [(j.cell["i"], j.repeat) for j in jobs] == [(1, 0), (0, 1), (1, 1)]


def test_serial_run_resumes_and_repeats(fault, monkeypatch):
    monkeypatch.setenv("FAULT_KINDS", "ok,raise")
    monkeypatch.setenv("FAULT_COUNT", "2")
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    with ResultStore(fault / "r.sqlite") as store:
        records = run_bench(SUITE, store, serial=True)
        assert len(records) == 4
        # one thread inside each cell, and the caller's environment restored afterwards
        assert {r["threads"] for r in records if r["status"] == "optimal"} == {"1"}
        assert "OMP_NUM_THREADS" not in os.environ
        failed = [r for r in records if r["status"] == "failed"]
        assert len(failed) == 2
        assert "ValueError: cell 0 fails on purpose" in failed[0]["error"]
        assert "traceback" in failed[0]
        assert len(executions(fault)) == 2 * 2 + 2  # ok: start+finish; raise: start
        # nothing runs again; --repeat 2 adds one repetition of each cell
        run_bench(SUITE, store, serial=True)
        assert len(executions(fault)) == 6
        records = run_bench(SUITE, store, serial=True, repeat=2)
        assert sorted((r["name"], r["i"], r["repeat"]) for r in records) == sorted(
            (k, i, rep) for k in ("ok", "raise") for i in range(2) for rep in range(2)
        )
        # failed cells run again only on request
        records = run_bench(SUITE, store, serial=True, retry_failed=True)
        assert len(executions(fault)) == 12 + 2
        assert len(store.runs(SUITE)) == 3


def test_time_limit_kills_the_cell(fault, monkeypatch):
    monkeypatch.setenv("FAULT_KINDS", "slow,ok")
    monkeypatch.setenv("FAULT_COUNT", "1")
    start = time.perf_counter()
    slow = execute_cell(SUITE, {"name": "slow", "i": 0}, time_limit=4.0)
    assert time.perf_counter() - start < 30
    assert slow["status"] == "time_limit"
    assert "4 s" in slow["error"]
    # the next cell gets a fresh child process
    ok = execute_cell(SUITE, {"name": "ok", "i": 0}, time_limit=30.0)
    assert ok["status"] == "optimal"
    assert ok["threads"] == "1"


def test_local_cluster_survives_a_raising_cell_a_killed_worker_and_a_hung_cell(fault, monkeypatch):
    monkeypatch.setenv("FAULT_KINDS", "ok,raise,kill_worker,slow")
    monkeypatch.setenv("FAULT_COUNT", "2")
    seen = []
    with ResultStore(fault / "r.sqlite") as store:
        records = run_bench(
            SUITE,
            store,
            workers=2,
            time_limit=6.0,
            on_record=lambda job, record, done, failed, total: seen.append((done, total)),
        )
    assert seen[-1] == (8, 8)
    status = {(r["name"], r["i"]): r["status"] for r in records}
    assert status == {
        ("ok", 0): "optimal",
        ("ok", 1): "optimal",
        ("raise", 0): "failed",
        ("raise", 1): "failed",
        ("kill_worker", 0): "optimal",  # its worker died at the first try; rerun elsewhere
        ("kill_worker", 1): "optimal",
        ("slow", 0): "time_limit",
        ("slow", 1): "time_limit",
    }
    runs = executions(fault)
    # the worker died at the first try (its orphaned child may still finish, unheard), the
    # scheduler ran the cell again (more than once if the worker it landed on was the one the
    # other kill_worker cell killed), and the store holds it once
    assert runs.count("start kill_worker 0") >= 2
    assert len([r for r in records if r["name"] == "kill_worker" and r["i"] == 0]) == 1


def test_killed_runner_resumes_without_losing_or_repeating_finished_cells(fault):
    env = os.environ | {"FAULT_KINDS": "ok", "FAULT_COUNT": "12", "FAULT_SLEEP": "1.0"}
    db = fault / "r.sqlite"
    argv = [sys.executable, "-m", "optframe.cli.main", "bench", SUITE, "--db", str(db)]
    argv += ["--workers", "2"]
    first = subprocess.Popen(argv, env=env, start_new_session=True, stdout=subprocess.DEVNULL)
    deadline = time.time() + 120
    stored: set = set()
    while time.time() < deadline and len(stored) < 3:
        time.sleep(0.5)
        if db.exists():
            with ResultStore(db) as store:
                stored = store.done(SUITE)
    assert len(stored) >= 3, "the first run stored no cells in time"
    os.killpg(first.pid, signal.SIGKILL)  # the runner and its local cluster
    first.wait()
    with ResultStore(db) as store:
        finished_before = {key for key, _ in store.done(SUITE)}
    assert len(finished_before) < 12
    second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert f"{len(finished_before)} cells already in the database" in second.stdout
    with ResultStore(db) as store:
        records = store.records(SUITE)
    assert sorted(r["i"] for r in records) == list(range(12))
    finishes = [line for line in executions(fault) if line.startswith("finish")]
    counts = {i: finishes.count(f"finish ok {i}") for i in range(12)}
    done_first = {r["i"] for r in records if r["run_id"] == records[0]["run_id"]}
    assert all(counts[i] == 1 for i in done_first)  # stored by the first run: never rerun


def test_unreachable_scheduler_fails_fast(fault):
    start = time.perf_counter()
    with ResultStore(fault / "r.sqlite") as store, pytest.raises(SchedulerUnreachable):
        run_bench(SUITE, store, scheduler="tcp://127.0.0.1:9")
    assert time.perf_counter() - start < 20


def test_unknown_suite_module(fault):
    with ResultStore(fault / "r.sqlite") as store, pytest.raises(UnknownSuite):
        run_bench("suites_for_tests.nothing_here", store, serial=True)


THREAD_LIMIT_THEN_COMPILE = """
import numba
import numpy as np
from optframe.bench.runner import _thread_limits

@numba.njit(parallel=True)
def total(x):
    s = 0.0
    for i in numba.prange(x.size):
        s += x[i]
    return s

total(np.ones(8))  # numba's pool starts with NUMBA_NUM_THREADS = 2
with _thread_limits(1):
    assert numba.get_num_threads() == 1
    numba.njit(lambda v: v + 1.0)(1.0)  # a compilation inside the limit
numba.njit(lambda v: v * 2.0)(1.0)  # and after it
assert numba.get_num_threads() == 2
print("compiled")
"""


def test_a_thread_limit_in_process_leaves_numba_able_to_compile(tmp_path):
    """Setting NUMBA_NUM_THREADS after numba's pool started breaks the next compilation."""
    env = {**os.environ, "NUMBA_NUM_THREADS": "2", "NUMBA_CACHE_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", THREAD_LIMIT_THEN_COMPILE],
        env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "compiled" in done.stdout


def test_a_local_cluster_limits_its_workers_threads_without_touching_this_process():
    """distributed's nanny writes pre-spawn variables into the parent: NUMBA's must not go there."""
    from optframe.bench.runner import connect

    before = os.environ.get("NUMBA_NUM_THREADS")
    client = connect(None, 1, threads=1)
    try:
        seen = client.run(lambda: os.environ.get("NUMBA_NUM_THREADS"))
        assert list(seen.values()) == ["1"]
        client.restart()  # a restarted worker is spawned again
        assert os.environ.get("NUMBA_NUM_THREADS") == before
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()


# Wall-clock assertions: these run on their own, after the parallel part of the suite.
pytestmark = pytest.mark.timing
