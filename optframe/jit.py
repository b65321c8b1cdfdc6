"""Compile the drivers' numba kernels once, before any timer starts.

The kernels of :class:`~optframe.drivers.SMO`, :class:`~optframe.drivers.DCD`,
:class:`~optframe.drivers.FrankWolfe` and :class:`~optframe.drivers.CoreVectorMachine` are
``numba.njit(cache=True)`` functions: the first call of each compiles it (about 10 s for SMO's on
the 2-core machine) and writes the machine code to numba's cache; later processes load it from
there (a fraction of a second). Left to the first call, compilation would run inside the solve,
count as solve time and eat the time limit. So each of those drivers calls
:func:`compile_kernels` at the start of ``run``, before its timer starts, and reports the seconds
as ``Result.timings.compile``.

:func:`compile_kernels` solves a few tiny problems (8 points, dense and sparse) with the driver
itself, so the kernels are compiled for exactly the argument types a real run passes them; it
does so once per process and driver configuration (the second call returns 0.0 at once).

Nothing prints unless asked: ``verbose=True`` (the ``verbose`` of :func:`optframe.solve`) or
:func:`announce` (the command line) writes one line to stderr when compilation starts and one
when it ends; otherwise the seconds go to the ``optframe.jit`` logger.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from optframe.drivers.base import Driver
    from optframe.model import Model

__all__ = ["announce", "compile_kernels", "failures", "warm_up_key"]

logger = logging.getLogger(__name__)

# Builds the warm-up runs, (driver, model) pairs, for the driver asking.
Runs = Callable[[Any], list[tuple[Any, Any]]]

_LOCK = threading.RLock()
_STARTED: set[Hashable] = set()  # warm-up begun (the warm-up runs call back in)
_READY: set[Hashable] = set()  # warm-up finished
_ANNOUNCE = False
#: Warm-up runs that raised, by key (the real run then compiles what it needs itself).
failures: dict[Hashable, str] = {}

# The module whose numba kernels each warm-up key runs (for the cache check).
_KERNEL_MODULES = {
    "smo": "optframe.drivers.smo_core",  # and smo_linear
    "dcd": "optframe.drivers.dcd_core",
    "frank_wolfe": "optframe.drivers.fw_core",
    "cvm": "optframe.drivers.fw_core",
}


def announce(on: bool = True) -> None:
    """Print a line on stderr when kernels compile (the command line turns this on)."""
    global _ANNOUNCE
    _ANNOUNCE = bool(on)


def _tiny_data(sparse: bool) -> Any:
    """Eight points in two overlapping classes (a free support vector and bounded ones).

    The sparse version puts each point's two coordinates in its own pair of ten columns: at
    under a quarter non-zeros it stays sparse in every driver (SMO makes denser input dense).
    """
    from optframe.data import Dataset

    X = np.array(
        [[0.0, 1.0], [1.0, 0.5], [2.0, 2.0], [0.5, 2.5], [1.5, 0.0], [2.5, 1.0], [0.2, 0.1],
         [3.0, 2.0]]
    )  # fmt: skip
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0, -1.0, 1.0, -1.0])
    if sparse:
        spread = np.zeros((8, 10))
        for i, row in enumerate(X):
            spread[i, 2 * (i % 5) : 2 * (i % 5) + 2] = row
        return Dataset(X=sp.csr_array(spread), y=y, name="jit-warm-up")
    return Dataset(X=X, y=y, name="jit-warm-up")


def _smo_runs(driver: Any) -> list[tuple[Any, Model]]:
    from optframe.drivers import SMO
    from optframe.models import WeightedSVM

    # the linear kernel steps through w; the kernel rows of the other kernels are forced here
    drivers = [
        SMO(float32_rows=driver.float32_rows, check_every=5, linear_steps=steps)
        for steps in ("weights", "rows")
    ]
    return [
        (d, WeightedSVM(_tiny_data(sparse), C=1.0)) for d in drivers for sparse in (False, True)
    ]


def _dcd_runs(driver: Any) -> list[tuple[Any, Model]]:
    from optframe.drivers import DCD
    from optframe.models import WeightedSVM

    # dense points and CSR reach the kernel with the same types (uint64 indptr, uint32 indices)
    return [
        (DCD(check_every=2), WeightedSVM(_tiny_data(sparse), C=1.0, fit_intercept=False))
        for sparse in (False, True)
    ]


def _fw_runs(driver: Any) -> list[tuple[Any, Model]]:
    from optframe.drivers import FrankWolfe
    from optframe.models import L2SVM

    model = L2SVM(_tiny_data(False), C=1.0)
    # shrinking runs the active-set phases, whose kernels plain steps never call
    return [(FrankWolfe(check_every=5), model), (FrankWolfe(shrinking=True, check_every=5), model)]


def _cvm_runs(driver: Any) -> list[tuple[Any, Model]]:
    from optframe.drivers import CoreVectorMachine
    from optframe.models import L2SVM

    model = L2SVM(_tiny_data(False), C=1.0)
    # sample_size=None checks every point (the exact pass); the default draws samples
    return [(CoreVectorMachine(), model), (CoreVectorMachine(sample_size=None), model)]


def warm_up_key(driver: Driver) -> tuple[Hashable, Runs] | None:
    """The cache key and the warm-up runs of ``driver``, or ``None`` if it runs no numba kernel.

    The key holds what changes the kernels' argument types (SMO's ``float32_rows``): drivers with
    the same key run the same compiled kernels.
    """
    from optframe.drivers import DCD, SMO, CoreVectorMachine, FrankWolfe

    if isinstance(driver, SMO):
        return ("smo", bool(driver.float32_rows)), _smo_runs
    if isinstance(driver, DCD):
        return ("dcd",), _dcd_runs
    if isinstance(driver, FrankWolfe):
        return ("frank_wolfe",), _fw_runs
    if isinstance(driver, CoreVectorMachine):
        return ("cvm",), _cvm_runs
    return None


def _cache_is_warm(keys: Iterable[Hashable]) -> bool:
    """Whether numba's cache holds compiled kernels of the modules ``keys`` run.

    A module counts as cached when one of its kernels has an index file (kernels called only
    from other kernels are compiled into their callers and have none). A stale cache (a module
    edited since) still counts: the line after compilation then says how long it took.
    """
    import importlib

    try:
        for key in keys:
            module = importlib.import_module(_KERNEL_MODULES[key[0]])  # type: ignore[index]
            indexes = [
                getattr(
                    getattr(getattr(value, "_cache", None), "_cache_file", None),
                    "_index_path",
                    None,
                )
                for value in vars(module).values()
            ]
            if not any(index is not None and os.path.exists(index) for index in indexes):
                return False
    except Exception:  # numba's private layout changed: assume compiling
        return False
    return True


def _say(text: str) -> None:
    sys.stderr.write(f"optframe: {text}\n")
    sys.stderr.flush()


def compile_kernels(drivers: Driver | Iterable[Driver], verbose: bool = False) -> float:
    """Compile (or load from numba's cache) the kernels ``drivers`` run; return the seconds.

    Parameters
    ----------
    drivers : Driver or iterable of Driver
        Drivers about to run; those without numba kernels (Direct, AggregateDisaggregate, ADMM)
        are skipped.
    verbose : bool
        Write a line to stderr when compilation starts and when it ends (as :func:`announce`).

    Returns
    -------
    float
        Wall seconds spent here: 0.0 when every kernel was already ready in this process.
    """
    listed = [drivers] if not isinstance(drivers, Iterable) else list(drivers)
    wanted = [(found, driver) for driver in listed if (found := warm_up_key(driver)) is not None]
    if all(key in _READY for (key, _), _ in wanted):
        return 0.0
    start = time.perf_counter()
    with _LOCK:  # another thread compiling the same kernels: wait for it
        pending: dict[Hashable, tuple[Runs, Any]] = {}
        for (key, runs), driver in wanted:
            if key not in _STARTED and key not in pending:
                pending[key] = (runs, driver)
        if pending:
            _STARTED.update(pending)  # before running: the warm-up runs call back in here
            _warm_up(pending, verbose, start)
    return time.perf_counter() - start


def _warm_up(pending: dict[Hashable, tuple[Runs, Any]], verbose: bool, start: float) -> None:
    """Solve the warm-up problems of ``pending`` (key: the runs and the driver asking).

    ``verbose`` prints a line before (when numba's cache holds none of these kernels) and after;
    :func:`announce` the same, the second line only when it took a second or more.
    """
    from optframe import kernel_sums
    from optframe.solve import solve

    if (verbose or _ANNOUNCE) and not _cache_is_warm(pending):
        _say("compiling numba kernels, once per install (later runs load them) ...")
    for key, (runs, asking) in pending.items():
        try:
            for driver, model in runs(asking):
                solve(model, driver=driver)
            kernel_sums.warm_up()  # the certificate's kernel products on large data
        except Exception as exc:  # the real run then compiles what it needs
            failures[key] = f"{type(exc).__name__}: {exc}"
            logger.debug("warm-up of %s failed: %s", key, failures[key])
        _READY.add(key)
    seconds = time.perf_counter() - start
    names = ", ".join(str(key[0]) for key in pending)
    logger.info("numba kernels of %s ready in %.2f s", names, seconds)
    if verbose or (_ANNOUNCE and seconds >= 1.0):
        _say(f"numba kernels of {names} ready in {seconds:.1f} s")
