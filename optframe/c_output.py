"""Keep what solver libraries print from C code off the process's stdout.

Python's ``contextlib.redirect_stdout`` only catches writes through ``sys.stdout``; a C library
writes to file descriptor 1 itself. HiGHS prints its banner ("Running HiGHS ... Copyright ...",
and a line on third-party software) from the constructor of the first ``Highs`` object of a
process, before any option such as ``output_flag`` can be set, whichever layer builds it (highspy
here, CVXPY's and Pyomo's HiGHS interfaces). :func:`hide_highs_banner` builds that first object
with file descriptor 1 pointed at ``os.devnull``, so no later construction prints it.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["hide_highs_banner", "silenced_c_stdout"]

_LOCK = threading.Lock()
_BANNER_HIDDEN = False


def _flush_c_streams() -> None:
    """Flush the C library's buffered streams (what C code printed still sits there)."""
    with contextlib.suppress(Exception):  # no libc to call (Windows without msvcrt, ...)
        ctypes.CDLL(None).fflush(None)


@contextlib.contextmanager
def silenced_c_stdout(*, stderr: bool = False) -> Iterator[None]:
    """Send what anything in the process writes to file descriptor 1 (and 2) to ``os.devnull``.

    ``stderr=True`` silences file descriptor 2 too (SoPlex, under SCIP, prints numerical notes
    there). The whole process is affected for the duration (other threads' output too), so the
    block should be short. A file descriptor that does not exist is left alone.
    """
    with contextlib.suppress(AttributeError, ValueError):  # no sys.stdout, or a closed one
        sys.stdout.flush()
        sys.stderr.flush()
    saved: dict[int, int] = {}
    try:
        for fd in (1, 2) if stderr else (1,):
            try:
                saved[fd] = os.dup(fd)
            except OSError:  # no such file descriptor
                continue
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, fd)
            finally:
                os.close(devnull)
        yield
    finally:
        _flush_c_streams()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)


def hide_highs_banner(verbose: bool = False) -> None:
    """Make sure HiGHS's once-per-process banner never prints (unless ``verbose``).

    Call before any layer constructs a ``highspy.Highs``. The first call that is not
    ``verbose`` constructs one with file descriptor 1 silenced; the banner then counts as shown.
    """
    global _BANNER_HIDDEN
    if verbose or _BANNER_HIDDEN:
        return
    with _LOCK:
        if _BANNER_HIDDEN:
            return
        import highspy

        with silenced_c_stdout():
            highspy.Highs()
        _BANNER_HIDDEN = True
