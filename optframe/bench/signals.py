"""Child processes of a benchmark run leave Ctrl-C to the runner."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def sigint_ignored() -> Iterator[None]:
    """Ignore SIGINT while child processes start, so they inherit that and ignore it too.

    Ctrl-C reaches every process of the terminal's group: the runner stops the run and ends
    its workers and cell processes, which would only print tracebacks if they took the signal
    themselves. A Python started with SIGINT ignored leaves it ignored. Outside the main thread
    signals cannot be set, and nothing changes.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
