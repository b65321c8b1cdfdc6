"""A solve keeps the BLAS pools at one thread unless ``threads`` asks for more (a second BLAS
thread made no measured run faster and several slower), and gives them back afterwards."""

from dataclasses import dataclass
from typing import ClassVar

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
        return super().run(model, context)


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
@pytest.mark.parametrize(("threads", "expected"), [(None, 1), (1, 1), (2, 2)])
def test_blas_runs_on_the_threads_the_solve_asks_for(monkeypatch, threads, expected):
    monkeypatch.delenv("OPTFRAME_THREADS", raising=False)
    seen: list = []
    model = LADRegression.examples()[0]
    result = of.solve(model, Spy(seen=seen), threads=threads)
    assert result.status is of.Status.OPTIMAL
    assert seen
    assert set(seen[0]) == {expected}
    assert set(_blas_threads()) == {2}  # given back after the solve


@pytest.mark.usefixtures("two_blas_threads")
def test_optframe_threads_sets_the_blas_threads_too(monkeypatch):
    monkeypatch.setenv("OPTFRAME_THREADS", "2")
    seen: list = []
    of.solve(LADRegression.examples()[0], Spy(seen=seen))
    assert set(seen[0]) == {2}
