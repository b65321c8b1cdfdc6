r"""The threads of a solve: BLAS's pools and numba's, held to the solve's ``threads`` option.

Two kinds of parallel work behave differently on a shared machine (measured on the 2-core
machine, ``docs/results/threads.md``):

* **BLAS** (OpenBLAS's pthreads pool) splits every product over its threads and waits for all
  of them at its end. When another process holds a core, each product waits for a time slice:
  the certificate's Gram product :math:`A^\top A` at 300,000 x 41 took 0.03 s on one BLAS thread
  and 1 to 8 s on two beside another busy process. A solve's BLAS runs on one thread unless
  ``threads`` asks for more.
* **numba's parallel loops** in optframe's kernels hand out blocks to whichever thread is free
  (``numba.set_parallel_chunksize(1)`` and blocks of fixed size), and each output value is summed
  by one thread in a fixed order: a busy core delays only the blocks its thread took, and the
  results do not depend on the thread count. They use every numba thread unless ``threads``
  says otherwise.

:func:`thread_limits` sets both for the duration of a solve, certificate included, and gives
the previous settings back afterwards. numba's setting is local to the calling thread, so two
solves in two threads of one process do not change each other's.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numba

_BLAS: Any = None  # the threadpoolctl controller, made on first use (it scans the loaded libraries)


def blas_threads(threads: int | None) -> contextlib.AbstractContextManager:
    """Limit the BLAS pools (OpenBLAS, MKL) to ``threads`` threads, one when ``None``, for a run.

    A second BLAS thread made no run faster and several slower: measured on the 2-core machine,
    LAD at 200,000 x 50, Direct on ``fn`` took 1.55 times as long with two BLAS threads on a
    quiet machine and 1.86 times with another process busy on one core; AID was level quiet and
    1.14 times slower loaded (``docs/results/peers.md``, threads). ``threads`` (the solve's
    option, or ``OPTFRAME_THREADS``) gives BLAS more when a user asks for them.

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


@contextlib.contextmanager
def thread_limits(threads: int | None) -> Iterator[int]:
    """BLAS at ``threads`` (one when ``None``) and numba at ``threads`` (all when ``None``).

    What :func:`optframe.solve` runs a driver and its certificate under; yields numba's count.
    """
    with blas_threads(threads), numba_threads(threads) as count:
        yield count
