"""Compile the drivers' numba kernels once, before any timer starts.

The kernels of :class:`~optframe.drivers.SMO`, :class:`~optframe.drivers.DCD`,
:class:`~optframe.drivers.FrankWolfe`, :class:`~optframe.drivers.CoreVectorMachine`,
:class:`~optframe.drivers.CoordinateDescent` and :class:`~optframe.drivers.PrimalNewton` (its
Hessian product on CSR rows) are
``numba.njit(cache=True)`` functions: the first call of each compiles it (about 10 s for SMO's on
the 2-core machine) and writes the machine code to numba's cache; later processes load it from
there (a fraction of a second). Left to the first call, compilation would run inside the solve,
count as solve time and eat the time limit. So each of those drivers calls
:func:`compile_kernels` at the start of ``run``, before its timer starts, and reports the seconds
as ``Result.timings.compile``.

:func:`compile_kernels` solves a few tiny problems (8 points) with the driver itself, so the
kernels are compiled for exactly the argument types a real run passes them. It compiles only
what the run needs (:class:`Needs`: a linear or a nonlinear kernel, dense or CSR points, SMO's
steps through the weights or by kernel rows), not every case: on an empty cache the first run
compiles a fraction of the kernels. It does so once per process, driver configuration and needs
(the second call returns 0.0 at once; a call whose needs an earlier one covered as well).

Nothing prints unless asked: ``verbose=True`` (the ``verbose`` of :func:`optframe.solve`) or
:func:`announce` (the command line) writes one line to stderr when compilation starts and one
when it ends; otherwise the seconds go to the ``optframe.jit`` logger.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

if TYPE_CHECKING:
    from optframe.drivers.base import Driver
    from optframe.model import Model

__all__ = [
    "Needs",
    "announce",
    "compile_in_background",
    "compile_kernels",
    "failures",
    "needs_of",
    "warm_up_key",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Needs:
    """What a run's kernels are compiled for; ``None`` stands for every case.

    Attributes
    ----------
    linear : bool or None
        The kernel is linear (else RBF or polynomial: the kernel sums differ).
    sparse : bool or None
        The points are CSR (the kernel sums of a nonlinear kernel differ).
    weights : bool or None
        SMO steps through the weights ``w`` (linear kernel, plain dual), not by kernel rows.
    pieces : bool or None
        DCD steps on the model's ``PiecewiseBoxDual`` (one variable per loss piece), not on
        its ``LinearBoxDual``.
    entropy : bool or None
        DCD steps on the model's ``EntropyBoxDual`` (the logistic loss's Newton steps).
    quadratic : bool or None
        SMO steps on a ``BoxQPDual`` with a diagonal of its own (quadratic loss pieces:
        :mod:`optframe.drivers.smo_quadratic`), compiled only for such a run.
    single : bool or None
        SMO's single-variable steps on a ``BoxQPDual`` without an equality row (no free
        intercept: :mod:`optframe.drivers.smo_single`), compiled only for such a run.
    sets : bool or None
        SMO's kernel working sets (:mod:`optframe.drivers.smo_sets`), not its pair steps by
        kernel rows.
    """

    linear: bool | None = None
    sparse: bool | None = None
    weights: bool | None = None
    pieces: bool | None = None
    entropy: bool | None = None
    quadratic: bool | None = None
    single: bool | None = None
    sets: bool | None = None

    def covers(self, other: Needs) -> bool:
        """Whether kernels compiled for these needs serve a run with ``other``'s."""
        return all(
            mine is None or mine == theirs
            for mine, theirs in (
                (self.linear, other.linear),
                (self.sparse, other.sparse),
                (self.weights, other.weights),
                (self.pieces, other.pieces),
                (self.entropy, other.entropy),
                (self.quadratic, other.quadratic),
                (self.single, other.single),
                (self.sets, other.sets),
            )
        )


EVERY_CASE = Needs()

# Builds the warm-up runs, (driver, model) pairs, for the driver asking and its needs.
Runs = Callable[[Any, Needs], list[tuple[Any, Any]]]

_LOCK = threading.RLock()
_STARTED: set[Hashable] = set()  # warm-up begun
_READY: set[Hashable] = set()  # warm-up finished
_WARMING = threading.local()  # inside a warm-up run (its own compile_kernels returns at once)
_ANNOUNCE = False
#: Warm-up runs that raised, by key (the real run then compiles what it needs itself).
failures: dict[Hashable, str] = {}

# The module whose numba kernels each warm-up key runs (for the cache check).
_KERNEL_MODULES = {
    "smo": "optframe.drivers.smo_core",  # and smo_linear
    "dcd": "optframe.drivers.dcd_core",  # and dcd_pieces_core, dcd_logistic_core
    "frank_wolfe": "optframe.drivers.fw_core",
    "cvm": "optframe.drivers.fw_core",
    "cd": "optframe.drivers.cd_core",
    "newton": "optframe.drivers.newton_core",
}


#: The warm-up keys of drivers that solve kernel models, whose certificates take kernel products
#: (:func:`optframe.kernel_sums.kernel_times`); the linear-only drivers' models never do (their
#: parallel kernel sums took 20 s to 40 s to compile on the 2-core machine for nothing).
_KERNEL_MODELS = frozenset({"smo", "frank_wolfe", "cvm"})


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


def _layouts(needs: Needs) -> tuple[bool, ...]:
    return (False, True) if needs.sparse is None else (needs.sparse,)


def _smo_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    from optframe.drivers import SMO
    from optframe.kernels import RBF, Linear
    from optframe.models import WeightedSVM

    # the linear kernel steps through w; the kernel rows of the other kernels are forced here
    steps = {None: ("weights", "rows"), True: ("weights",), False: ("rows",)}[needs.weights]
    if needs.sets:  # the kernel working sets alone (their steps run no kernel row over all)
        steps = ("sets",)
    elif needs.sets is None and not needs.linear:
        steps += ("sets",)
    if needs.quadratic or needs.single:  # those steps alone (rows: no step goes through w)
        steps = ()
    runs = []
    for step in steps:
        driver_ = SMO(
            float32_rows=driver.float32_rows, parallel_rows=driver.parallel_rows,
            check_every=5, linear_steps="rows" if step == "sets" else step,
            kernel_steps="sets" if step == "sets" else "pairs",
        )  # fmt: skip
        # the steps by rows with the run's kernel case (the gradient's kernel sums differ)
        linear_kernel = step == "weights" or (needs.linear and step == "rows")
        kernel = Linear() if linear_kernel else RBF(gamma=0.5)
        runs += [
            (driver_, WeightedSVM(_tiny_data(sparse), C=1.0, kernel=kernel))
            for sparse in _layouts(needs)
        ]
    if needs.quadratic is not False and not needs.single:
        runs += _smo_quadratic_runs(driver, needs)
    if needs.single is not False and not needs.quadratic:
        runs += _smo_single_runs(driver, needs)
    return runs


def _kernel_steps(needs: Needs) -> tuple[str, ...]:
    """SMO's ``kernel_steps`` to compile: rows, working sets (never for the linear kernel), both."""
    if needs.linear:
        return ("pairs",)
    return {None: ("pairs", "sets"), True: ("sets",), False: ("pairs",)}[needs.sets]


def _smo_quadratic_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    """SMO on the L2-loss SVM's dual (a diagonal, unbounded variables), by kernel rows."""
    from optframe.drivers import SMO
    from optframe.kernels import RBF, Linear
    from optframe.losses import SquaredHinge
    from optframe.models import EmpiricalRisk

    kernel = Linear() if needs.linear else RBF(gamma=0.5)
    return [
        (
            SMO(
                float32_rows=driver.float32_rows,
                parallel_rows=driver.parallel_rows,
                check_every=5,
                kernel_steps=step,
            ),
            EmpiricalRisk(_tiny_data(sparse), SquaredHinge(), kernel=kernel),
        )
        for step in _kernel_steps(needs)
        for sparse in _layouts(needs)
    ]


def _smo_single_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    """SMO's single-variable steps: the L2-loss SVM without intercept, by rows or by sets.

    One run serves duals with and without a diagonal (the steps always take one, zeros when
    the dual has none).
    """
    from optframe.drivers import SMO
    from optframe.kernels import RBF, Linear
    from optframe.losses import SquaredHinge
    from optframe.models import EmpiricalRisk

    kernel = Linear() if needs.linear else RBF(gamma=0.5)
    return [
        (
            SMO(
                float32_rows=driver.float32_rows,
                parallel_rows=driver.parallel_rows,
                check_every=5,
                kernel_steps=step,
            ),
            EmpiricalRisk(_tiny_data(sparse), SquaredHinge(), kernel=kernel, fit_intercept=False),
        )
        for step in _kernel_steps(needs)
        for sparse in _layouts(needs)
    ]


def _dcd_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    from optframe.drivers import DCD
    from optframe.losses import Logistic, SquaredHinge
    from optframe.models import EmpiricalRisk, WeightedSVM

    # dense points and CSR reach the kernel with the same types (uint64 indptr, uint32 indices)
    data = _tiny_data(False)
    runs: list[tuple[Any, Model]] = []
    if needs.entropy is True:  # the logistic loss's kernel alone
        return [(DCD(check_every=2), EmpiricalRisk(data, Logistic(), fit_intercept=False))]
    if needs.pieces is not True:
        runs.append((DCD(check_every=2), WeightedSVM(data, C=1.0, fit_intercept=False)))
    if needs.pieces is not False:
        model = EmpiricalRisk(data, SquaredHinge(), fit_intercept=False)
        runs.append((DCD(check_every=2), model))
    if needs.entropy is None:
        runs.append((DCD(check_every=2), EmpiricalRisk(data, Logistic(), fit_intercept=False)))
    return runs


def _fw_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    from optframe.drivers import FrankWolfe
    from optframe.models import L2SVM

    model = L2SVM(_tiny_data(False), C=1.0)
    # shrinking runs the active-set phases, whose kernels plain steps never call
    return [(FrankWolfe(check_every=5, shrinking=driver.shrinking), model)]


def _cvm_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    from optframe.drivers import CoreVectorMachine
    from optframe.models import L2SVM

    model = L2SVM(_tiny_data(False), C=1.0)
    # sample_size=None checks every point (the exact pass); the default draws samples
    return [(CoreVectorMachine(), model), (CoreVectorMachine(sample_size=None), model)]


def _cd_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    from optframe.drivers import CoordinateDescent
    from optframe.losses import SquaredHinge
    from optframe.models import EmpiricalRisk
    from optframe.penalties import L1

    # one loss serves both kinds (the loss is an argument of the kernels, not a type); the
    # inner solver the driver runs (proximal Newton steps, or coordinate steps), not both
    driver_ = CoordinateDescent(prox_newton=driver.prox_newton)
    return [
        (driver_, EmpiricalRisk(_tiny_data(sparse), SquaredHinge(), penalty=L1()))
        for sparse in _layouts(needs)
    ]


def _newton_runs(driver: Any, needs: Needs) -> list[tuple[Any, Model]]:
    from optframe.drivers import PrimalNewton
    from optframe.losses import SquaredHinge
    from optframe.models import EmpiricalRisk
    from optframe.penalties import L2

    if needs.sparse is False:  # dense data: BLAS products, nothing compiled
        return []
    # intercept or not is an argument, not a type: one run compiles the kernel
    return [(PrimalNewton(), EmpiricalRisk(_tiny_data(True), SquaredHinge(), penalty=L2()))]


def warm_up_key(driver: Driver) -> tuple[Hashable, Runs] | None:
    """The cache key and the warm-up runs of ``driver``, or ``None`` if it runs no numba kernel.

    The key holds what changes the kernels' argument types (SMO's ``float32_rows`` and
    ``parallel_rows``) or which kernels run (Frank-Wolfe's ``shrinking``): drivers with the same
    key run the same compiled kernels.
    """
    from optframe.drivers import (
        DCD,
        SMO,
        CoordinateDescent,
        CoreVectorMachine,
        FrankWolfe,
        PrimalNewton,
    )

    if isinstance(driver, SMO):
        return ("smo", bool(driver.float32_rows), bool(driver.parallel_rows)), _smo_runs
    if isinstance(driver, DCD):
        return ("dcd",), _dcd_runs
    if isinstance(driver, FrankWolfe):
        return ("frank_wolfe", bool(driver.shrinking)), _fw_runs
    if isinstance(driver, CoreVectorMachine):
        return ("cvm",), _cvm_runs
    if isinstance(driver, CoordinateDescent):
        return ("cd", bool(driver.prox_newton)), _cd_runs
    if isinstance(driver, PrimalNewton):
        return ("newton",), _newton_runs
    return None


def needs_of(model: Model | None, driver: Driver | None = None) -> Needs:
    """The :class:`Needs` of running ``driver`` on ``model`` (``None``: every case).

    Read from the model's ``kernel`` and points; for SMO, whether it steps through the weights
    needs the model's dual (built here; SMO passes its own instead).
    """
    if model is None:
        return EVERY_CASE
    import scipy.sparse as sp

    from optframe.kernels import Linear

    kernel = getattr(model, "kernel", None)
    data = getattr(model, "data", None)
    X = getattr(data, "X", None)
    needs = Needs(
        linear=None if kernel is None else isinstance(kernel, Linear),
        sparse=None if X is None else bool(sp.issparse(X)),
    )
    from optframe.drivers import SMO

    if isinstance(driver, SMO):
        from optframe.capabilities import BoxQPDual

        try:
            dual = model.structure(BoxQPDual)
        except Exception:  # the run will say why it cannot take the model
            return needs
        return driver.kernel_needs(dual)
    from optframe.drivers import DCD

    if isinstance(driver, DCD):
        from dataclasses import replace

        from optframe.capabilities import EntropyBoxDual, LinearBoxDual, PiecewiseBoxDual

        if model.structure_refusal(LinearBoxDual) is None:
            return replace(needs, pieces=False, entropy=False)
        if model.structure_refusal(PiecewiseBoxDual) is None:
            return replace(needs, pieces=True, entropy=False)
        if model.structure_refusal(EntropyBoxDual) is None:
            return replace(needs, pieces=False, entropy=True)
    return needs


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


def _covered(key: Hashable, needs: Needs) -> bool:
    return any(
        done[0] == key and done[1].covers(needs)  # type: ignore[index]
        for done in _READY
    )


def compile_kernels(
    drivers: Driver | Iterable[Driver], verbose: bool = False, needs: Needs | None = None
) -> float:
    """Compile (or load from numba's cache) the kernels ``drivers`` run; return the seconds.

    Parameters
    ----------
    drivers : Driver or iterable of Driver
        Drivers about to run; those without numba kernels (Direct, AggregateDisaggregate, ADMM)
        are skipped.
    verbose : bool
        Write a line to stderr when compilation starts and when it ends (as :func:`announce`).
    needs : Needs or None
        What the run needs (:func:`needs_of`); ``None``: every case (every kernel of the
        drivers, for any model).

    Returns
    -------
    float
        Wall seconds spent here: 0.0 when every kernel needed was already ready in this process
        (or when called from inside a warm-up run).
    """
    if getattr(_WARMING, "active", False):
        return 0.0
    needs = EVERY_CASE if needs is None else needs
    listed = [drivers] if not isinstance(drivers, Iterable) else list(drivers)
    wanted = [(found, driver) for driver in listed if (found := warm_up_key(driver)) is not None]
    if all(_covered(key, needs) for (key, _), _ in wanted):
        return 0.0
    start = time.perf_counter()
    with _LOCK:  # another thread compiling the same kernels: wait for it
        _wait_for_background(verbose)  # then the kernels load from the cache it filled
        pending: dict[Hashable, tuple[Runs, Any]] = {}
        for (key, runs), driver in wanted:
            full = (key, needs)
            if not _covered(key, needs) and full not in _STARTED and full not in pending:
                pending[full] = (runs, driver)
        if pending:
            _STARTED.update(pending)
            _warm_up(pending, verbose, start)
    return time.perf_counter() - start


_BACKGROUND: list[tuple[Any, float]] = []  # warm-up processes and their start
_BACKGROUND_RUN = """
import pickle, sys
from optframe.jit import compile_kernels
for driver, needs in pickle.load(sys.stdin.buffer):
    compile_kernels(driver, needs=needs)
"""


def compile_in_background(runs: Iterable[tuple[Driver, Needs]]) -> bool:
    """Start compiling the kernels of ``runs`` in another process; whether it was started.

    The process fills numba's cache while this one goes on (another core does the compiling);
    the next :func:`compile_kernels` here waits for it, then loads the kernels from the cache.
    Not started when the cache already holds these drivers' kernels, when numba has no cache to
    fill, or when no core is free (:func:`_spare_core`: on a busy machine the two processes
    would only share the same cores, and the compilation took longer than in this process).

    Parameters
    ----------
    runs : iterable of (Driver, Needs)
        The drivers about to run and what each run needs (:func:`needs_of`).
    """
    import pickle
    import subprocess

    from optframe import _numba_cache

    wanted = [
        (driver, needs)
        for driver, needs in runs
        if (found := warm_up_key(driver)) is not None and not _covered(found[0], needs)
    ]
    keys = {warm_up_key(driver)[0] for driver, _ in wanted}  # type: ignore[index]
    if not wanted or _numba_cache.fallback == "no cache" or _cache_is_warm(keys):
        return False
    if not _spare_core():
        return False
    if _ANNOUNCE:
        _say("compiling numba kernels, once per install (later runs load them) ...")
    process = subprocess.Popen(
        [sys.executable, "-c", _BACKGROUND_RUN],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    assert process.stdin is not None
    with process.stdin:
        process.stdin.write(pickle.dumps(wanted))
    _BACKGROUND.append((process, time.perf_counter()))
    return True


#: Seconds over which :func:`_spare_core` samples the processors' idle time.
IDLE_SAMPLE_SECONDS = 0.15


def _idle_cores(cpus: set[int], seconds: float) -> float | None:
    """Processors of ``cpus`` left idle over the next ``seconds`` (Linux ``/proc/stat``), or None.

    The idle and iowait ticks of each of those processors, read twice, over their total ticks:
    what the machine does now, where the load average remembers the last minute (say, the
    ``pip install`` just before a first ``optframe demo``).
    """

    def ticks() -> tuple[float, float]:
        idle = total = 0.0
        with open("/proc/stat") as stat:
            for line in stat:
                name, _, rest = line.partition(" ")
                if not (name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus):
                    continue
                fields = [float(v) for v in rest.split()[:8]]
                idle += fields[3] + fields[4]
                total += sum(fields)
        return idle, total

    try:
        idle0, total0 = ticks()
        time.sleep(seconds)
        idle1, total1 = ticks()
    except (OSError, ValueError, IndexError):
        return None
    if total1 <= total0:
        return None
    return len(cpus) * (idle1 - idle0) / (total1 - total0)


def _cgroup_cores() -> float:
    """The processors a cgroup v2 quota (``cpu.max``) grants this process; ``inf`` without one."""
    try:
        with open("/sys/fs/cgroup/cpu.max") as limit:
            quota, period = limit.read().split()[:2]
        return math.inf if quota == "max" else float(quota) / float(period)
    except (OSError, ValueError):
        return math.inf


def _spare_core() -> bool:
    """Whether a core is free for a second process, besides the one this process goes on using.

    On Linux, from the processors' idle time sampled now (:func:`_idle_cores`; this process
    sleeps while it samples, so it needs one idle core and the second process another). Elsewhere
    from the 1-minute load average, which counts this process; without one, two cores suffice.
    """
    try:
        cpus = set(os.sched_getaffinity(0))
    except AttributeError:
        cpus = set(range(os.cpu_count() or 1))
    if _cgroup_cores() < 2.0:  # a container's quota: the processors are shared beyond it
        return False
    idle = _idle_cores(cpus, IDLE_SAMPLE_SECONDS)
    if idle is not None:
        return idle >= 1.75
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        return len(cpus) > 1
    return len(cpus) - load >= 1.0


def _wait_for_background(verbose: bool) -> None:
    """Wait for the warm-up processes :func:`compile_in_background` started."""
    while _BACKGROUND:
        process, started = _BACKGROUND.pop()
        process.wait()
        seconds = time.perf_counter() - started
        logger.info("numba kernels compiled in the background in %.2f s", seconds)
        if verbose or _ANNOUNCE:
            _say(f"numba kernels compiled in {seconds:.1f} s")


def _warm_up(pending: dict[Hashable, tuple[Runs, Any]], verbose: bool, start: float) -> None:
    """Solve the warm-up problems of ``pending`` ((key, needs): the runs and the driver asking).

    ``verbose`` prints a line before (when numba's cache holds none of these kernels) and after;
    :func:`announce` the same, the second line only when it took a second or more.
    """
    from optframe import kernel_sums
    from optframe.kernels import RBF, Linear
    from optframe.solve import solve

    if (verbose or _ANNOUNCE) and not _cache_is_warm(key for key, _ in pending):
        _say("compiling numba kernels, once per install (later runs load them) ...")
    _WARMING.active = True
    try:
        for full, (runs, asking) in pending.items():
            needs: Needs = full[1]  # type: ignore[index]
            try:
                for driver, model in runs(asking, needs):
                    solve(model, driver=driver)
                if full[0][0] in _KERNEL_MODELS:  # type: ignore[index]
                    # the certificate's kernel products on large data
                    kernel = None if needs.linear is None else Linear() if needs.linear else RBF()
                    kernel_sums.warm_up(kernel, needs.sparse)
            except Exception as exc:  # the real run then compiles what it needs
                failures[full] = f"{type(exc).__name__}: {exc}"
                logger.debug("warm-up of %s failed: %s", full, failures[full])
            _READY.add(full)
    finally:
        _WARMING.active = False
    seconds = time.perf_counter() - start
    names = ", ".join(dict.fromkeys(str(full[0][0]) for full in pending))  # type: ignore[index]
    logger.info("numba kernels of %s ready in %.2f s", names, seconds)
    if verbose or (_ANNOUNCE and seconds >= 1.0):
        _say(f"numba kernels of {names} ready in {seconds:.1f} s")
