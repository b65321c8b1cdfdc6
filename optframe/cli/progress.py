"""A progress line on stderr for commands that run long enough to need one (``compare``)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from rich.console import Console

# Runs shorter than this show no progress at all.
PROGRESS_AFTER = 3.0


class DelayedProgress:
    """Solves done out of all, on stderr, once the work has run for ``after`` seconds.

    On a terminal it is a rich progress bar that disappears when the work ends; otherwise (a pipe
    or a file) a line every ``after`` seconds. Use as a context manager and call it as the
    :func:`optframe.compare.compare` progress hook.
    """

    def __init__(self, what: str, after: float | None = None, console: Console | None = None):
        self.what = what
        self.after = PROGRESS_AFTER if after is None else after
        self.console = console or Console(stderr=True)
        self.start = time.perf_counter()
        self.state = (0, 0, "")
        self.bar: Any = None
        self.task: Any = None
        self.lock = threading.Lock()
        self.timer: threading.Timer | None = None
        self.printed = -float("inf")

    def __enter__(self) -> DelayedProgress:
        self.start = time.perf_counter()
        if self.console.is_terminal:
            self.timer = threading.Timer(self.after, self._show)
            self.timer.daemon = True
            self.timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.timer is not None:
            self.timer.cancel()
        with self.lock:
            if self.bar is not None:
                self.bar.stop()

    def _show(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        with self.lock:
            if self.bar is not None:
                return
            self.bar = Progress(
                TextColumn(self.what),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[label]}"),
                console=self.console,
                transient=True,
            )
            done, total, label = self.state
            self.task = self.bar.add_task(self.what, total=total, completed=done, label=label)
            self.bar.start()

    def __call__(self, done: int, total: int, label: str) -> None:
        """Record that ``done`` of ``total`` steps are finished and ``label`` runs next."""
        with self.lock:
            self.state = (done, total, label)
            if self.bar is not None:
                self.bar.update(self.task, completed=done, total=total, label=label)
                return
        now = time.perf_counter()
        if self.console.is_terminal or now - self.start < self.after:
            return
        if done < total and now - self.printed >= self.after:  # a line every few seconds
            self.printed = now
            print(f"{self.what}: {done}/{total} done, now {label}", file=sys.stderr, flush=True)
