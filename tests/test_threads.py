"""A solve keeps the BLAS pools at one thread unless ``OPTFRAME_BLAS_THREADS`` asks for more (a
second BLAS thread made no measured optframe path faster and most slower), holds numba's loops
to ``threads``, and gives both back afterwards; the certificate runs under the same limits."""

import threading
from dataclasses import dataclass
from typing import ClassVar

import numba
import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import optframe as of
from optframe.drivers import Direct
from optframe.models import LADRegression

# the pools that take a thread count (a single-threaded BLAS build some package loads stays at 1)
RESPONSIVE: set[str] = set()


def _blas_threads() -> list[int]:
    return [
        pool["num_threads"]
        for pool in threadpool_info()
        if pool["user_api"] == "blas" and pool["filepath"] in RESPONSIVE
    ]


@dataclass(frozen=True)
class Spy(Direct):
    """Direct that notes the BLAS pools' thread counts while it runs."""

    name: ClassVar[str] = "spy"
    seen: list = None  # type: ignore[assignment]

    def run(self, model, context):
        self.seen.append(_blas_threads())
        self.numba_seen.append(numba.get_num_threads())
        return super().run(model, context)

    numba_seen: list = None  # type: ignore[assignment]


@pytest.fixture
def two_blas_threads():
    with threadpool_limits(limits=2, user_api="blas"):
        RESPONSIVE.clear()
        RESPONSIVE.update(
            pool["filepath"]
            for pool in threadpool_info()
            if pool["user_api"] == "blas" and pool["num_threads"] == 2
        )
        if not RESPONSIVE:
            pytest.fail("no BLAS pool takes two threads: numpy's and scipy's OpenBLAS do")
        yield


@pytest.mark.usefixtures("two_blas_threads")
@pytest.mark.parametrize(("threads", "expected"), [(None, 1), (1, 1), (2, 1)])
def test_blas_runs_on_one_thread_whatever_threads_says(monkeypatch, threads, expected):
    monkeypatch.delenv("OPTFRAME_THREADS", raising=False)
    monkeypatch.delenv("OPTFRAME_BLAS_THREADS", raising=False)
    seen: list = []
    model = LADRegression.examples()[0]
    result = of.solve(model, Spy(seen=seen, numba_seen=[]), threads=threads)
    assert result.status is of.Status.OPTIMAL
    assert seen
    assert set(seen[0]) == {expected}
    assert set(_blas_threads()) == {2}  # given back after the solve


@pytest.mark.usefixtures("two_blas_threads")
def test_optframe_blas_threads_gives_blas_more(monkeypatch):
    monkeypatch.setenv("OPTFRAME_BLAS_THREADS", "2")
    seen: list = []
    of.solve(LADRegression.examples()[0], Spy(seen=seen, numba_seen=[]), threads=1)
    assert set(seen[0]) == {2}


@pytest.mark.parametrize("text", ["0", "two", "-1"])
def test_a_bad_optframe_blas_threads_is_refused_by_name(monkeypatch, text):
    monkeypatch.setenv("OPTFRAME_BLAS_THREADS", text)
    with pytest.raises(of.OptframeError, match="OPTFRAME_BLAS_THREADS"):
        of.solve(LADRegression.examples()[0], Direct())


@dataclass(frozen=True, kw_only=True)
class WatchedLAD(LADRegression):
    """LAD whose certificate notes the BLAS and numba thread counts it was evaluated under."""

    seen: list

    def dual_certificate(self, solution):
        self.seen.append((_blas_threads(), numba.get_num_threads()))
        return super().dual_certificate(solution)


@pytest.mark.usefixtures("two_blas_threads")
@pytest.mark.parametrize(("threads", "blas", "numba_count"), [(None, 1, None), (1, 1, 1)])
def test_the_certificate_runs_under_the_solves_limits(monkeypatch, threads, blas, numba_count):
    monkeypatch.delenv("OPTFRAME_THREADS", raising=False)
    monkeypatch.delenv("OPTFRAME_BLAS_THREADS", raising=False)
    example = LADRegression.examples()[0]
    model = WatchedLAD(example.data, seen=[])
    result = of.solve(model, Direct(), threads=threads)
    assert result.status is of.Status.OPTIMAL
    assert model.seen, "the certificate was not evaluated"
    expected_numba = numba.config.NUMBA_NUM_THREADS if numba_count is None else numba_count
    assert model.seen[-1] == ([blas] * len(RESPONSIVE), expected_numba)
    assert set(_blas_threads()) == {2}


def test_numba_runs_on_the_threads_the_solve_asks_for_and_gets_them_back(monkeypatch):
    monkeypatch.delenv("OPTFRAME_THREADS", raising=False)
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.fail("numba has one thread: run the tests with NUMBA_NUM_THREADS unset or >= 2")
    spy = Spy(seen=[], numba_seen=[])
    before = numba.get_num_threads()
    of.solve(LADRegression.examples()[0], spy, threads=1)
    of.solve(LADRegression.examples()[0], spy)
    assert spy.numba_seen == [1, numba.config.NUMBA_NUM_THREADS]
    assert numba.get_num_threads() == before


def test_a_solve_in_another_thread_leaves_this_threads_numba_count(monkeypatch):
    monkeypatch.delenv("OPTFRAME_THREADS", raising=False)
    spy = Spy(seen=[], numba_seen=[])
    numba.set_num_threads(1)
    try:
        worker = threading.Thread(
            target=lambda: of.solve(LADRegression.examples()[0], spy, threads=2)
        )
        worker.start()
        worker.join()
        assert numba.get_num_threads() == 1
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert spy.numba_seen == [min(2, numba.config.NUMBA_NUM_THREADS)]


OPENMP_POLICY = """
import os, sys
import optframe
import numba, numpy as np

@numba.njit(parallel=True)
def total(x):
    s = 0.0
    for i in numba.prange(x.size):
        s += x[i]
    return s

total(np.ones(10))
print(os.environ.get("OMP_WAIT_POLICY"), numba.threading_layer())
"""


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_openmp_threads_sleep_unless_the_user_chose(given, expected):
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run(
        [sys.executable, "-c", OPENMP_POLICY], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    policy, layer = done.stdout.split()
    assert policy == expected
    assert layer == "omp"  # the pool the policy is for
