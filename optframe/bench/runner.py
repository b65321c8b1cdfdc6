"""Run a suite's cells on a Dask cluster (or serially), storing each one as soon as it finishes.

``run_bench`` is what ``optframe bench SUITE`` calls. The cells still to do are those of the
grid (after ``select``) times the repetitions ``0 .. repeat-1``, minus what the results store
already holds; each runs as one Dask task through :func:`execute_cell` and is written to the
store by this process the moment its result arrives. So a run that is killed resumes where it
stopped, and a worker that dies has its cells rerun on another worker by the scheduler.

Inside a cell, solvers, BLAS and numba get one thread (``OPTFRAME_THREADS=1`` and the usual
variables, set in every local worker before it starts and again around each cell), so cells on
different cores do not fight. With a per-cell time limit the cell runs in a child process of
its worker, which is killed at the limit; the cell is then recorded as ``time_limit``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Listener
from typing import Any

from optframe.bench.environment import environment
from optframe.bench.signals import sigint_ignored
from optframe.bench.store import ResultStore
from optframe.bench.suite import Cell, load_suite
from optframe.errors import OptframeError, SchedulerUnreachable

THREAD_VARIABLES = (
    "OPTFRAME_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
)
CONNECT_TIMEOUT = 5.0


@dataclass(frozen=True)
class Job:
    """One cell of a suite at one repetition."""

    suite: str
    cell: Cell
    repeat: int

    @property
    def label(self) -> str:
        """Short text for logs: the parameters and the repetition."""
        return f"{dict(self.cell.params)} #{self.repeat}"


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


@contextlib.contextmanager
def _thread_limits(threads: int | None) -> Iterator[None]:
    """Set the thread variables and BLAS pools to ``threads`` for one cell, then restore them."""
    if threads is None:
        yield
        return
    import numba
    from threadpoolctl import threadpool_limits

    # NUMBA_NUM_THREADS is read by numba's config at every compilation: changed in this process
    # after its thread pool started, the next compilation raises. In this process numba's pool is
    # limited by set_num_threads instead (the variable is for child processes).
    names = [name for name in THREAD_VARIABLES if name != "NUMBA_NUM_THREADS"]
    saved = {name: os.environ.get(name) for name in names}
    os.environ.update({name: str(threads) for name in names})
    numba_threads = numba.get_num_threads()
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        with threadpool_limits(threads):
            yield
    finally:
        numba.set_num_threads(numba_threads)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def run_here(suite_name: str, params: Mapping[str, Any], threads: int | None) -> dict[str, Any]:
    """Run the cell in this process; a raising cell becomes a ``failed`` record."""
    suite = load_suite(suite_name)
    cell = Cell(dict(params))
    start = time.perf_counter()
    try:
        with _thread_limits(threads):
            record = dict(params) | dict(suite.run_cell(cell))
    except Exception as exc:
        record = dict(params) | {
            "status": "failed",
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(limit=20),
        }
    record.setdefault("cell_seconds", time.perf_counter() - start)
    return record


class _Child:
    """A child process (``python -m optframe.bench.child``) that runs cells one at a time.

    A plain subprocess, not :mod:`multiprocessing`, so it also works inside daemonic Dask
    workers. It is started on first use, reused for later cells, and killed at a time limit.
    """

    process: subprocess.Popen | None = None
    connection: Any = None

    @classmethod
    def _start(cls) -> None:
        key = secrets.token_bytes(16)
        with Listener(family="AF_UNIX", authkey=key) as listener:
            env = os.environ | {"OPTFRAME_CHILD_KEY": key.hex()}
            with sigint_ignored():
                cls.process = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "optframe.bench.child",
                        listener.address,
                        str(os.getpid()),
                    ],
                    env=env,
                )
            cls.connection = listener.accept()

    @classmethod
    def _stop(cls) -> None:
        if cls.process is not None:
            cls.process.kill()
            cls.process.wait()
        cls.process = cls.connection = None

    @classmethod
    def run(
        cls, suite_name: str, params: Mapping[str, Any], threads: int | None, limit: float
    ) -> dict[str, Any]:
        if cls.process is None or cls.process.poll() is not None:
            cls._start()
        start = time.perf_counter()
        try:
            cls.connection.send((suite_name, dict(params), threads))
            if cls.connection.poll(limit):
                return cls.connection.recv()
        except (EOFError, OSError):
            code = cls.process.wait()
            cls._stop()
            return dict(params) | {
                "status": "failed",
                "error": f"the cell's process died (exit code {code})",
                "cell_seconds": time.perf_counter() - start,
            }
        cls._stop()
        return dict(params) | {
            "status": "time_limit",
            "error": f"stopped at the cell time limit of {limit:g} s",
            "cell_seconds": time.perf_counter() - start,
        }


def execute_cell(
    suite_name: str,
    params: Mapping[str, Any],
    time_limit: float | None = None,
    threads: int | None = 1,
) -> dict[str, Any]:
    """Run one cell and return its record (never raises for a cell's own failure).

    Parameters
    ----------
    suite_name : str
        A suite of :mod:`optframe.bench.suites` or an importable module path.
    params : Mapping
        The cell's parameters.
    time_limit : float, optional
        Wall-clock seconds; the cell then runs in a child process killed at the limit, and the
        record's status is ``"time_limit"``.
    threads : int, optional
        Threads for solvers, BLAS and numba inside the cell (None: leave the defaults).

    Returns
    -------
    dict
        The parameters, the suite's record, ``status``, ``cell_seconds`` and ``worker``; a cell
        that raised has ``status="failed"`` and ``error``.
    """
    if time_limit is None:
        record = run_here(suite_name, params, threads)
    else:
        record = _Child.run(suite_name, params, threads, float(time_limit))
    record["worker"] = _worker_name()
    return record


def pending_jobs(
    suite_name: str,
    cells: Iterable[Cell],
    repeat: int,
    done: set[tuple[str, int]],
) -> list[Job]:
    """The (cell, repetition) pairs not in ``done``, repetition-major (all of #0 first)."""
    chosen = list(cells)
    return [
        Job(suite_name, cell, rep)
        for rep in range(repeat)
        for cell in chosen
        if (cell.key, rep) not in done
    ]


def connect(scheduler: str | None, workers: int | None, threads: int | None = 1) -> Any:
    """A Dask client on ``scheduler``, or on a new local cluster of ``workers`` processes.

    The local workers start with ``threads`` in the thread variables (None: unset).
    """
    import dask
    from distributed import Client, LocalCluster

    if scheduler is not None:
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError) as exc:
            raise SchedulerUnreachable(
                f"no Dask scheduler answered at {scheduler!r} within {CONNECT_TIMEOUT:g} s ({exc})"
            ) from exc
    environ = dict(dask.config.get("distributed.nanny.pre-spawn-environ", {}))
    # The nanny writes pre-spawn variables into this process's os.environ (and again at every
    # worker restart): only the BLAS ones, which must precede the worker's imports, go there.
    # NUMBA_NUM_THREADS changed here after numba's pool started would break every later
    # compilation in this process; it and OPTFRAME_THREADS go to the workers' own environment.
    in_worker = ("NUMBA_NUM_THREADS", "OPTFRAME_THREADS")
    worker_env: dict[str, str] = {}
    if threads is not None:
        environ |= {name: str(threads) for name in THREAD_VARIABLES if name not in in_worker}
        worker_env = {name: str(threads) for name in in_worker}
    # Non-daemonic workers may start processes (cells that measure memory in a child do).
    settings = {"distributed.nanny.pre-spawn-environ": environ, "distributed.worker.daemon": False}
    with dask.config.set(settings), sigint_ignored():
        cluster = LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",  # a free port: runs side by side never clash
            silence_logs=logging.ERROR,
            env=worker_env,
        )
    return Client(cluster)


ProgressHook = Callable[[Job, dict[str, Any], int, int, int], None]


def run_bench(
    suite_name: str,
    store: ResultStore,
    *,
    quick: bool = False,
    select: Callable[[Cell], bool] | None = None,
    repeat: int = 1,
    time_limit: float | None = None,
    scheduler: str | None = None,
    workers: int | None = None,
    serial: bool = False,
    retry_failed: bool = False,
    threads: int | None = 1,
    argv: Sequence[str] = (),
    on_record: ProgressHook | None = None,
    on_start: Callable[[int, int], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the suite's pending cells and return the stored records of the selected cells.

    Parameters
    ----------
    suite_name : str
        Suite name (see ``optframe bench --list``) or an importable module path.
    store : ResultStore
        Where each finished cell is written at once; cells already there are skipped.
    quick, select
        The suite's small grid; a predicate choosing cells (see ``parse_filters``).
    repeat : int
        Repetitions per cell (``repeat=3`` after a run of 1 adds repetitions 1 and 2).
    time_limit : float, optional
        Per-cell wall-clock limit (default: the suite's ``CELL_TIME_LIMIT``, if any).
    scheduler, workers, serial
        A Dask scheduler address; else a local cluster of ``workers`` processes (default one
        per core); ``serial=True`` runs the cells in this process, one after another.
    retry_failed : bool
        Run again the cells stored as failed.
    threads : int, optional
        Threads of solvers, BLAS and numba inside a cell (default 1, so cells on different cores
        do not fight; None leaves each library's default, e.g. for a serial run that may use
        every core).
    argv : sequence of str
        The command line, stored with the run.
    on_record : callable, optional
        ``on_record(job, record, done, failed, total)`` after each stored cell.
    on_start : callable, optional
        ``on_start(jobs, already_done, workers)`` once the work and the number of cells that run
        at once are known (the pending :class:`Job` list and the count of cells skipped).

    Raises
    ------
    ResultStoreError
        Another runner holds the store (:meth:`ResultStore.run_lock`).
    """
    if repeat < 1:
        raise OptframeError(f"--repeat must be at least 1; got {repeat}")
    if threads is not None and threads < 1:
        raise OptframeError(f"--threads must be at least 1 (or 0 for the defaults); got {threads}")
    suite = load_suite(suite_name)
    if time_limit is None:
        time_limit = getattr(suite, "CELL_TIME_LIMIT", None)
    cells = [cell for cell in suite.cells(quick) if select is None or select(cell)]
    with store.run_lock(argv):
        if retry_failed:
            store.remove_failed(suite_name)
        done = store.done(suite_name)
        jobs = pending_jobs(suite_name, cells, repeat, done)
        skipped = len(cells) * repeat - len(jobs)
        if not jobs:
            if on_start is not None:
                on_start(jobs, skipped, 1)
        elif serial:
            if on_start is not None:
                on_start(jobs, skipped, 1)
            run_id = store.start_run(suite_name, argv, environment())
            results = (
                (job, execute_cell(suite_name, job.cell.params, time_limit, threads))
                for job in jobs
            )
            _store_all(store, suite_name, run_id, results, len(jobs), on_record)
        else:
            client = connect(scheduler, workers, threads)
            try:
                if on_start is not None:
                    on_start(jobs, skipped, _worker_count(client))
                run_id = store.start_run(suite_name, argv, environment())
                _store_all(
                    store,
                    suite_name,
                    run_id,
                    _dask_results(client, suite_name, jobs, time_limit, threads),
                    len(jobs),
                    on_record,
                )
            finally:
                cluster = None if scheduler is not None else client.cluster
                client.close()
                if cluster is not None:
                    cluster.close()
    wanted = {(cell.key, rep) for cell in cells for rep in range(repeat)}
    return [r for r in store.records(suite_name) if (r["cell_key"], r["repeat"]) in wanted]


def _worker_count(client: Any) -> int:
    """Cells the cluster runs at once (its worker threads); 1 if it cannot tell."""
    try:
        return max(1, sum(client.nthreads().values()))
    except Exception:  # a cluster that does not answer: the estimate assumes one at a time
        return 1


def _dask_results(
    client: Any, suite_name: str, jobs: list[Job], time_limit: float | None, threads: int | None
) -> Iterable[tuple[Job, dict[str, Any]]]:
    from distributed import as_completed

    futures = {
        client.submit(
            execute_cell,
            suite_name,
            dict(job.cell.params),
            time_limit,
            threads,
            pure=False,
            key=f"{suite_name}-cell-{index}-{time.time_ns()}",
        ): job
        for index, job in enumerate(jobs)
    }
    for future in as_completed(futures):
        job = futures[future]
        try:
            record = future.result()
        except Exception as exc:  # the task itself failed: KilledWorker, lost scheduler, ...
            record = dict(job.cell.params) | {
                "status": "failed",
                "error": f"{type(exc).__name__}: {exc}",
            }
        yield job, record


def _store_all(
    store: ResultStore,
    suite_name: str,
    run_id: int,
    results: Iterable[tuple[Job, dict[str, Any]]],
    total: int,
    on_record: ProgressHook | None,
) -> None:
    failed = 0
    for finished, (job, record) in enumerate(results, start=1):
        store.add(
            suite_name,
            job.cell.key,
            job.repeat,
            job.cell.params,
            record,
            run_id=run_id,
            worker=record.get("worker"),
        )
        failed += record.get("status") == "failed"
        if on_record is not None:
            on_record(job, record, finished, failed, total)
