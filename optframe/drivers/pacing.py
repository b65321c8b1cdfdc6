"""Chunk sizes for the compiled loops of the drivers, so that a time limit is kept.

The drivers run their steps in compiled chunks (``check_every`` steps) and look at the clock
between chunks. A chunk of a fixed number of steps can take far longer than the time left (a
kernel row of a large data set per step), so :class:`Pacer` shortens the chunks that would cross
the deadline: each chunk is sized from the measured seconds per step of the previous one to take
at most half the time left, and never less than about ``interval`` seconds. Without a time limit
the chunks are left as they are; with one, the first chunk is a short probe (``probe`` steps)
that measures the step time.
"""

from __future__ import annotations

import time

#: Seconds: chunks near the deadline are about this long, so the clock is read at least this often.
INTERVAL = 0.01
#: Steps of the first chunk when a time limit is set (to measure the seconds per step).
PROBE = 16


class Pacer:
    """Sizes the chunks of a compiled loop so that ``start + time_limit`` is not overrun.

    The driver asks :meth:`budget` for the size of each chunk, reports the steps the chunk ran
    with :meth:`done`, and stops when :meth:`expired`. The pacer measures the seconds per step of
    the last chunk and the seconds the driver spends between two chunks (records, callbacks,
    convergence tests), and plans with both. With a time limit, chunks start at ``probe`` steps
    and at most double from one to the next, up to the size asked for.

    Parameters
    ----------
    start : float
        ``time.perf_counter()`` when the driver started (the time limit counts from there).
    time_limit : float, optional
        Wall seconds; ``None`` leaves every chunk at the size asked for.
    interval : float
        The shortest chunk planned near the deadline, in seconds.
    probe : int
        Steps of the first chunk, when there is a time limit.

    Examples
    --------
    >>> pacer = Pacer(time.perf_counter(), None)
    >>> pacer.budget(1000)
    1000
    >>> pacer.expired()
    False
    """

    def __init__(
        self,
        start: float,
        time_limit: float | None,
        interval: float = INTERVAL,
        probe: int = PROBE,
    ) -> None:
        self.end = None if time_limit is None else start + float(time_limit)
        self.deadline = self.end  # the end less the time reserved for the work after the loop
        self.interval = interval
        self.probe = probe
        self.rate: float | None = None  # seconds per step in the last chunk
        self.overhead = 0.0  # seconds between the last two chunks
        self._began = 0.0
        self._ended: float | None = None
        self._steps = probe  # steps of the last chunk

    def budget(self, wanted: int) -> int:
        """Steps for the next chunk: ``wanted``, or fewer when the deadline is near (at least 1).

        The chunk is planned to take at most half the time left, and to end before the deadline
        with the work between chunks counted; never less than ``interval`` seconds.
        """
        now = time.perf_counter()
        if self._ended is not None:
            self.overhead = now - self._ended
        self._began = now
        if self.deadline is None or wanted <= 1:
            return wanted
        if self.rate is None:
            return min(wanted, self.probe)
        left = self.deadline - now
        target = max(min(0.5 * left, left - self.overhead), self.interval)
        # at most twice the last chunk: steps can get dearer (cache misses), and a rate measured
        # on a short chunk is checked again on one not much longer before it is trusted
        return max(1, min(wanted, 2 * self._steps, int(target / self.rate)))

    def reserve(self, seconds: float) -> None:
        """Keep ``seconds`` before the end of the time limit for the work after the loop.

        The loop's chunks then end ``seconds`` before ``start + time_limit`` (the final
        gradient, the solution and its certificate fit in the limit). A driver calls it again
        as its estimate of that work changes (it grows with the support).
        """
        if self.end is not None:
            self.deadline = self.end - max(0.0, float(seconds))

    def done(self, steps: int) -> None:
        """Record that the chunk started by the last :meth:`budget` call ran ``steps`` steps."""
        self._ended = time.perf_counter()
        if steps > 0:
            self.rate = max(self._ended - self._began, 1e-9) / steps
            self._steps = steps

    def expired(self) -> bool:
        """Whether the deadline has passed, or the work between two chunks alone would pass it."""
        if self.deadline is None:
            return False
        now = time.perf_counter()
        # the work since the last chunk ended (a record, a test) is what the next one costs too
        between = self.overhead if self._ended is None else now - self._ended
        return now + between >= self.deadline
