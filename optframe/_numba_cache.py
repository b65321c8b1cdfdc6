"""Give numba a writable cache for the drivers' kernels, so ``import optframe`` never fails.

The kernels are ``numba.njit(cache=True)`` functions: decorating one asks numba for a cache
directory, in this order: ``NUMBA_CACHE_DIR``, the ``__pycache__`` folder next to the module,
then a user-wide folder (``~/.cache/numba`` on Linux). When none is writable (a read-only install
and a read-only or missing home), numba raises ``RuntimeError: cannot cache function`` at import.

Importing this module (``optframe/__init__`` does it first) asks numba's own locators whether
they find a place for a module of ``optframe/drivers``; if not, it points ``NUMBA_CACHE_DIR`` at a
folder in the temporary directory, and if even that fails, it lets the kernels compile without a
cache (every process then compiles them again).

It also serializes numba's cache writes across processes (:func:`serialize_cache_writes`):
numba names a new specialization's data file by the first free number in the index it read, so
two processes compiling two specializations of one kernel at once (two benchmark workers, say)
could both write ``kernel.1.nbc``, and the index of one would then point at the other's machine
code, which crashes the next process that loads it.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["ensure_numba_cache", "fallback", "serialize_cache_writes"]

# A kernel module: the locators are asked about a function defined in this file.
_KERNEL_FILE = Path(__file__).resolve().parent / "drivers" / "smo_core.py"

#: What was done: ``None`` (numba's own choice works), a directory, or ``"no cache"``.
fallback: str | None = None


def _numba_can_cache(path: Path) -> bool:
    """Whether numba finds a writable cache place for a function defined in ``path``."""
    from numba.core.caching import FunctionCache

    def probe() -> None:
        """Stand-in for a kernel of ``path``."""

    probe.__code__ = probe.__code__.replace(co_filename=str(path))
    try:
        FunctionCache(probe)
    except RuntimeError:
        return False
    return True


def _use_cache_dir(directory: str) -> None:
    import numba

    os.environ["NUMBA_CACHE_DIR"] = directory  # also for worker processes started from here
    numba.config.CACHE_DIR = directory


def _compile_without_cache() -> None:
    """Let ``cache=True`` dispatchers go without a cache when numba finds no place for one."""
    from numba.core.dispatcher import Dispatcher

    enable = Dispatcher.enable_caching
    if getattr(enable, "_optframe_tolerant", False):
        return

    def enable_caching(self: Dispatcher) -> None:
        # "cannot cache function ...: no locator available": keep the NullCache
        with contextlib.suppress(RuntimeError):
            enable(self)

    enable_caching._optframe_tolerant = True  # type: ignore[attr-defined]
    Dispatcher.enable_caching = enable_caching  # type: ignore[method-assign]


def ensure_numba_cache(kernel_file: Path = _KERNEL_FILE) -> str | None:
    """Make sure decorating the kernels of ``kernel_file`` cannot fail; say what was done.

    Returns
    -------
    str or None
        ``None`` when numba's own choice works, else the cache directory chosen here, or
        ``"no cache"``.
    """
    global fallback
    if not kernel_file.exists() or _numba_can_cache(kernel_file):
        return None
    before = os.environ.get("NUMBA_CACHE_DIR")
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    for make in (
        lambda: os.path.join(tempfile.gettempdir(), f"optframe-numba-cache-{uid}"),
        lambda: tempfile.mkdtemp(prefix="optframe-numba-cache-"),  # private, for this process
    ):
        try:
            directory = make()
            os.makedirs(directory, exist_ok=True)
        except OSError:  # no usable temporary directory
            continue
        _use_cache_dir(directory)
        if _numba_can_cache(kernel_file):
            fallback = directory
            return fallback
    _use_cache_dir(before or "")
    if before is None:
        os.environ.pop("NUMBA_CACHE_DIR", None)
    _compile_without_cache()
    fallback = "no cache"
    return fallback


def serialize_cache_writes() -> bool:
    """Make numba's cache writes hold a lock file next to the index; whether it was done.

    Inside the lock the index is read again, the data file is written before the index entry
    that names it, and a new entry takes the first file number free in that fresh index. POSIX
    only (``fcntl``); elsewhere numba's own writes are kept. A lock that cannot be opened (a
    read-only cache place) falls back to numba's own write.
    """
    try:
        import fcntl
    except ImportError:
        return False
    import itertools

    from numba.core.caching import IndexDataCacheFile

    if getattr(IndexDataCacheFile.save, "_optframe_locked", False):
        return True
    unlocked = IndexDataCacheFile.save

    def save(self: IndexDataCacheFile, key: object, data: object) -> None:
        try:
            lock = open(self._index_path + ".lock", "a+b")  # noqa: SIM115 (held below)
        except OSError:
            unlocked(self, key, data)
            return
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                overloads = self._load_index()
                data_name = overloads.get(key)
                if data_name is None:
                    taken = set(overloads.values())
                    data_name = next(
                        name
                        for name in (self._data_name(i) for i in itertools.count(1))
                        if name not in taken
                    )
                self._save_data(data_name, data)
                overloads[key] = data_name
                self._save_index(overloads)
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    save._optframe_locked = True  # type: ignore[attr-defined]
    save._numba_save = unlocked  # type: ignore[attr-defined]
    IndexDataCacheFile.save = save  # type: ignore[method-assign]
    return True


ensure_numba_cache()
serialize_cache_writes()
