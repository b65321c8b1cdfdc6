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
