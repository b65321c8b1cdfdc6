r"""The threads of a solve: BLAS's pools and numba's, held for the driver and the certificate.

Two kinds of parallel work behave differently (measured on the 2-core machine,
``docs/results/threads.md``):

* **BLAS** (OpenBLAS's pthreads pool) splits every product over its threads and waits for all
  of them at its end. A second BLAS thread made no optframe path faster and most slower, on a
  quiet machine too: Direct on ``fn`` for LAD at 200,000 x 50 took 2.18 s with one BLAS thread
  and 3.97 s with two; beside another busy process the certificate's Gram product at 300,000 x 41
  took 0.03 s on one BLAS thread and 1 to 8 s on two. A solve's BLAS therefore runs on
  ``OPTFRAME_BLAS_THREADS`` threads, one when it is unset, whatever ``threads`` says.
* **numba's parallel loops and optframe's row blocks** hand out blocks to whichever thread is
  free, and each output is summed by one thread or in the blocks' order: a busy core delays only
  the blocks its thread took, and the results do not depend on the thread count. They run on
  ``threads`` threads (the solve's option, else ``OPTFRAME_THREADS``), all of numba's when
  neither is given.

:func:`thread_limits` sets both for the duration of a solve, certificate included, and gives
the previous settings back afterwards. numba's setting is local to the calling thread, so two
solves in two threads of one process do not change each other's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numba

from optframe.validation import count_from_environment

_BLAS: Any = None  # the threadpoolctl controller, made on first use (it scans the loaded libraries)


def blas_threads(threads: int | None) -> contextlib.AbstractContextManager:
    """Limit the BLAS pools (OpenBLAS, MKL) to ``threads`` threads, one when ``None``, for a run.

    Examples
    --------
    >>> import numpy as np
    >>> with blas_threads(1):  # every BLAS pool at one thread inside, as before after
    ...     product = np.ones((200, 200)) @ np.ones(200)
    >>> float(product[0])
    200.0
    """
    global _BLAS
    try:
        if _BLAS is None:
            from threadpoolctl import ThreadpoolController

            _BLAS = ThreadpoolController()
        return _BLAS.limit(limits=threads or 1, user_api="blas")
    except Exception:  # no threadpoolctl, or a library it cannot drive: leave BLAS as it is
        return contextlib.nullcontext()


@contextlib.contextmanager
def numba_threads(threads: int | None) -> Iterator[int]:
    """Hold numba's pool to ``threads`` threads for the calling thread (``None``: all of them).

    Yields the count in force, at most ``NUMBA_NUM_THREADS``; the previous count is restored.

    Examples
    --------
    >>> with numba_threads(1) as count:
    ...     count
    1
    """
    before = numba.get_num_threads()
    wanted = numba.config.NUMBA_NUM_THREADS if threads is None else int(threads)
    numba.set_num_threads(max(1, min(wanted, numba.config.NUMBA_NUM_THREADS)))
    try:
        yield numba.get_num_threads()
    finally:
        numba.set_num_threads(before)


def blas_count() -> int:
    """``OPTFRAME_BLAS_THREADS`` as a positive int, 1 when it is unset or empty."""
    return count_from_environment("OPTFRAME_BLAS_THREADS") or 1


@contextlib.contextmanager
def thread_limits(threads: int | None) -> Iterator[int]:
    """Hold numba to ``threads`` (all when ``None``) and BLAS to :func:`blas_count` (one).

    What :func:`optframe.solve` runs a driver and its certificate under; yields numba's count.
    """
    with blas_threads(blas_count()), numba_threads(threads) as count:
        yield count
