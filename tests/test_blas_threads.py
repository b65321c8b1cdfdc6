"""A solve keeps the BLAS pools at one thread unless ``threads`` asks for more (a second BLAS
thread made no measured run faster and several slower), and gives them back afterwards."""

from dataclasses import dataclass
from typing import ClassVar

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

import optframe as of
from optframe.drivers import Direct
from optframe.models import LADRegression


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


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
    if not _blas_threads():
        pytest.fail("no BLAS pool is loaded: numpy and scipy always load one")
    with threadpool_limits(limits=2, user_api="blas"):
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
