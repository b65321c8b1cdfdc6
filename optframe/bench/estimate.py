"""The time a benchmark run has left, estimated per kind of cell.

Cells of one suite differ by orders of magnitude (a LAD cell of the ``aid`` suite takes a tenth
of a second, an S3VM cell runs to its time limit), so the mean time of the cells finished so far
says little about the ones left. :class:`RemainingTime` keeps the cells of each *kind* (a suite's
``KIND`` keys, e.g. problem and method; see :func:`optframe.bench.suite.cell_kind`) apart: a
pending cell is expected to take

* its declared time (the suite's ``EXPECTED_SECONDS``) times the ratio measured / declared of the
  finished cells of its kind, or the mean measured time of its kind when nothing is declared;
* its declared time when no cell of its kind has finished yet;
* the mean measured time of every finished cell when neither is known;

and the work left is spread over the workers (never less than the longest cell left). Nothing
is known before the first cell finishes if the suite declares no times:
:meth:`RemainingTime.seconds_left` is then ``None``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass, field


@dataclass
class _Kind:
    """What the finished cells of one kind took, and what they were expected to take."""

    measured: float = 0.0
    declared: float = 0.0
    count: int = 0
    declared_count: int = 0


@dataclass
class RemainingTime:
    """Seconds left in a run, from per-kind measurements and the suite's declared times.

    Parameters
    ----------
    pending : iterable of (key, kind, expected)
        One entry per cell still to run: a key naming it (handed back to :meth:`finished`), its
        kind (any hashable) and its declared seconds (``None`` if the suite declares none).
    workers : int
        Cells running at once; the work left is divided among them.
    clock : callable, optional
        Returns the current time in seconds (tests pass a fake clock).
    """

    pending: Iterable[tuple[Hashable, Hashable, float | None]]
    workers: int = 1
    clock: Callable[[], float] = time.monotonic
    _left: dict[Hashable, tuple[Hashable, float | None]] = field(init=False, repr=False)
    _kinds: dict[Hashable, _Kind] = field(init=False, repr=False)
    _estimate: float | None = field(init=False, default=None, repr=False)
    _stamp: float = field(init=False, default=0.0, repr=False)

    def __post_init__(self) -> None:
        self._left = {key: (kind, expected) for key, kind, expected in self.pending}
        self._kinds = {}
        self.workers = max(1, int(self.workers))
        self._refresh()

    def finished(self, key: Hashable, seconds: float | None) -> None:
        """Record that the cell ``key`` took ``seconds`` (None or nan: unknown, not counted)."""
        kind, expected = self._left.pop(key, (None, None))
        if seconds is not None and math.isfinite(seconds) and seconds >= 0:
            seen = self._kinds.setdefault(kind, _Kind())
            seen.measured += seconds
            seen.count += 1
            if expected is not None:
                seen.declared += expected
                seen.declared_count += 1
        self._refresh()

    def cell_seconds(self, kind: Hashable, expected: float | None) -> float | None:
        """The seconds a pending cell of ``kind``, declared to take ``expected``, should take."""
        seen = self._kinds.get(kind)
        if seen is not None and seen.count:
            if expected is not None and seen.declared_count == seen.count and seen.declared > 0:
                return expected * seen.measured / seen.declared
            return seen.measured / seen.count
        if expected is not None:
            return expected
        count = sum(k.count for k in self._kinds.values())
        if count:
            return sum(k.measured for k in self._kinds.values()) / count
        return None

    def _cells_left(self) -> list[float] | None:
        seconds = [self.cell_seconds(kind, expected) for kind, expected in self._left.values()]
        return None if any(s is None for s in seconds) else seconds  # type: ignore[return-value]

    def work_left(self) -> float | None:
        """Cell-seconds left over every pending cell (None while some cell has no estimate)."""
        seconds = self._cells_left()
        return None if seconds is None else sum(seconds)

    def _refresh(self) -> None:
        seconds = self._cells_left()
        if seconds is None:
            self._estimate = None
        else:  # spread over the workers, but never less than the longest cell left
            self._estimate = max(sum(seconds) / self.workers, max(seconds, default=0.0))
        self._stamp = self.clock()

    def seconds_left(self) -> float | None:
        """Wall seconds left: the estimate at the last finished cell, counted down since then."""
        if self._estimate is None:
            return None
        if not self._left:
            return 0.0
        return max(0.0, self._estimate - (self.clock() - self._stamp))


def duration_text(seconds: float | None) -> str:
    """``"45 s"``, ``"12 min"``, ``"3.4 h"``; ``"?"`` for an unknown duration."""
    if seconds is None or not math.isfinite(seconds):
        return "?"
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
