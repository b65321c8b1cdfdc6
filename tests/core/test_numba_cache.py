"""``import optframe`` works when numba finds no writable cache place of its own.

numba caches a ``cache=True`` kernel in ``NUMBA_CACHE_DIR``, else in the ``__pycache__`` next to
its module, else under the home directory; when none is writable it raises at import. The tests
make every one of them unusable: ``NUMBA_CACHE_DIR`` and ``HOME`` below a regular file (no
directory can be made there, even as root) and, since the package folder of this checkout is
writable, numba's own ``NUMBA_CACHE_LOCATOR_CLASSES`` leaving out the ``__pycache__`` locator.
"""

import os
import subprocess
import sys

CHECK = """
import json, os, numpy as np, optframe, optframe._numba_cache as cache
from optframe.drivers import dcd_core
norms = dcd_core.squared_row_norms(np.array([0, 2], np.uint64), np.array([3.0, 4.0]))
assert norms.tolist() == [25.0]  # a kernel compiles and runs
print(json.dumps({"fallback": cache.fallback, "dir": os.environ.get("NUMBA_CACHE_DIR"),
                  "cache": type(dcd_core.squared_row_norms._cache).__name__}))
"""


def _run(tmp_path, locators):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = {
        **os.environ,
        "NUMBA_CACHE_DIR": str(blocker / "numba"),
        "HOME": str(blocker),
        "XDG_CACHE_HOME": str(blocker / "cache"),
        "NUMBA_CACHE_LOCATOR_CLASSES": locators,
    }
    return subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=300
    )


def test_import_falls_back_to_a_temporary_cache_dir(tmp_path):
    done = _run(tmp_path, "UserProvidedCacheLocator,UserWideCacheLocator")
    assert done.returncode == 0, done.stderr[-3000:]
    assert '"cache": "FunctionCache"' in done.stdout
    assert "optframe-numba-cache" in done.stdout  # the directory chosen, in NUMBA_CACHE_DIR
    assert done.stderr == ""


def test_import_falls_back_to_no_cache_when_nothing_is_writable(tmp_path):
    # only the user-wide locator, under the blocked home: not even a temporary directory helps
    done = _run(tmp_path, "UserWideCacheLocator")
    assert done.returncode == 0, done.stderr[-3000:]
    assert '"fallback": "no cache"' in done.stdout
    assert '"cache": "NullCache"' in done.stdout
    assert done.stderr == ""


def test_a_writable_place_is_left_as_numba_chose_it(tmp_path):
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    done = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert '"fallback": null' in done.stdout
    assert str(tmp_path / "numba") in done.stdout


def _race(tmp_path, save):
    """Two writers of two specializations that read the index at the same moment."""
    import threading
    import time

    from numba.core.caching import IndexDataCacheFile

    class Slow(IndexDataCacheFile):
        def _load_index(self):
            overloads = super()._load_index()
            time.sleep(0.2)  # both writers hold the same (empty) index
            return overloads

    tmp_path.mkdir()
    stamp = ("source", 1)
    writers = [Slow(str(tmp_path), "kernel", stamp) for _ in range(2)]
    threads = [
        threading.Thread(target=save, args=(writer, f"key-{k}", f"code-{k}"))
        for k, writer in enumerate(writers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    reader = IndexDataCacheFile(str(tmp_path), "kernel", stamp)
    return [reader.load(f"key-{k}") for k in range(2)]


def test_concurrent_cache_writes_keep_each_specialization(tmp_path):
    """Locked writes keep both entries, each with its own code; numba's own lose one."""
    from numba.core.caching import IndexDataCacheFile

    import optframe._numba_cache as cache

    assert cache.serialize_cache_writes()
    locked = IndexDataCacheFile.save
    assert _race(tmp_path / "locked", locked) == ["code-0", "code-1"]
    assert _race(tmp_path / "numba", locked._numba_save) != ["code-0", "code-1"]
