"""The time left in a run is estimated per kind of cell, not from the mean of all cells."""

from types import SimpleNamespace

import pytest

from optframe.bench.estimate import RemainingTime, duration_text
from optframe.bench.suite import Cell, cell_kind, expected_seconds, load_suite, suite_names


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def fake_cells():
    fast = [Cell({"problem": "lad", "method": "aid", "i": i}) for i in range(10)]
    slow = [Cell({"problem": "s3vm", "method": "AID5", "i": i}) for i in range(4)]
    return fast, slow


SUITE = SimpleNamespace(
    KIND=("problem", "method"),
    EXPECTED_SECONDS={"quick": {("lad", "aid"): 1.0, ("s3vm", "AID5"): 100.0}, "full": {}},
    CELL_TIME_LIMIT=None,
)


def pending(cells, suite=SUITE):
    return [(c.key, cell_kind(suite, c), expected_seconds(suite, c, True)) for c in cells]


def test_slow_kinds_keep_their_declared_time_until_one_of_them_finishes():
    fast, slow = fake_cells()
    clock = Clock()
    estimate = RemainingTime(pending(fast + slow), workers=2, clock=clock)
    assert estimate.seconds_left() == pytest.approx((10 * 1.0 + 4 * 100.0) / 2)
    for cell in fast[:5]:  # the fast cells take half their declared time
        clock.now += 0.5
        estimate.finished(cell.key, 0.5)
    # a mean over the finished cells would say 9 cells x 0.5 s / 2 = 2.25 s
    assert estimate.seconds_left() == pytest.approx((5 * 0.5 + 4 * 100.0) / 2)
    for cell in fast[5:]:
        estimate.finished(cell.key, 0.5)
    estimate.finished(slow[0].key, 30.0)  # slow cells run faster than declared: scaled
    assert estimate.seconds_left() == pytest.approx(3 * 30.0 / 2)
    clock.now += 10.0  # counted down between finished cells
    assert estimate.seconds_left() == pytest.approx(3 * 30.0 / 2 - 10.0)
    clock.now += 1000.0
    assert estimate.seconds_left() == 0.0
    for cell in slow[1:]:
        estimate.finished(cell.key, 30.0)
    assert estimate.seconds_left() == 0.0


def test_without_declared_times_kinds_use_their_own_mean_then_the_overall_mean():
    fast, slow = fake_cells()
    silent = SimpleNamespace(KIND=("problem", "method"))
    estimate = RemainingTime(pending(fast + slow, silent), workers=1)
    assert estimate.seconds_left() is None  # nothing measured, nothing declared
    estimate.finished(fast[0].key, 2.0)
    # the slow kind has no measurement yet: the mean of all finished cells stands in
    assert estimate.work_left() == pytest.approx(9 * 2.0 + 4 * 2.0)
    estimate.finished(slow[0].key, 50.0)
    assert estimate.work_left() == pytest.approx(9 * 2.0 + 3 * 50.0)
    # a failed cell without a time counts as done but teaches nothing
    estimate.finished(slow[1].key, None)
    assert estimate.work_left() == pytest.approx(9 * 2.0 + 2 * 50.0)


def test_one_long_cell_is_not_shared_between_workers():
    cells = [Cell({"problem": "s3vm", "method": "AID5"}), Cell({"problem": "lad", "method": "aid"})]
    estimate = RemainingTime(pending(cells), workers=4)
    assert estimate.seconds_left() == pytest.approx(100.0)


def test_declared_times_are_capped_by_the_time_limit_and_unknown_kinds_take_the_mean():
    cell = Cell({"problem": "s3vm", "method": "AID5"})
    assert expected_seconds(SUITE, cell, True, time_limit=20.0) == 20.0
    other = Cell({"problem": "svm", "method": "direct"})
    assert expected_seconds(SUITE, other, True) == pytest.approx(50.5)
    assert expected_seconds(SUITE, other, False) is None
    assert expected_seconds(SimpleNamespace(), other, True) is None
    assert cell_kind(SimpleNamespace(), Cell({"method": "x", "n": 3})) == ("x",)


def test_every_bundled_suite_declares_a_time_for_every_cell():
    for name in suite_names():
        suite = load_suite(name)
        for quick in (True, False):
            times = [expected_seconds(suite, cell, quick) for cell in suite.cells(quick)]
            assert all(t is not None and t > 0 for t in times), name


def test_duration_text():
    assert duration_text(None) == "?"
    assert duration_text(42.4) == "42 s"
    assert duration_text(600.0) == "10 min"
    assert duration_text(4 * 3600.0) == "4.0 h"
