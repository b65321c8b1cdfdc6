"""A/B of SMO's existing runs: the driver at a given revision against the working tree.

The weighted SVM (hinge, RBF, C = 1, tol 1e-3, caches of 2000 MiB) on a set of the peers suite,
one thread, twice each in alternating order, in one process; the seconds exclude compilation.
The old driver is ``optframe/drivers/smo.py`` read from ``git show REV:...`` (the compiled
kernels it calls are the same modules). Rerun from the repository's root::

    OPTFRAME_DATA=/path/to/datasets .venv/bin/python docs/results/l2svm_box_ab.py aeee8fc w8a
"""

from __future__ import annotations

import os

for _name in ("OPTFRAME_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_name] = "1"

import importlib.util  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402


def main() -> None:
    """Run the A/B and print one JSON record per solve."""
    revision, name = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "w8a"
    import optframe as of
    from optframe.bench.suites.peers import _split, rbf_gamma
    from optframe.data import Dataset
    from optframe.drivers import SMO
    from optframe.kernels import RBF
    from optframe.models import WeightedSVM

    source = subprocess.run(
        ["git", "show", f"{revision}:optframe/drivers/smo.py"],
        capture_output=True, text=True, check=True,
    ).stdout.replace("\n@register_driver\n", "\n")  # fmt: skip
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as file:
        file.write(source)
    spec = importlib.util.spec_from_file_location("optframe.drivers.smo_before", file.name)
    old = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = old
    spec.loader.exec_module(old)
    X, y, _, _ = _split(name)
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=rbf_gamma(X)))
    cache = 2000 * 1024**2
    drivers = {"before": old.SMO(cache_bytes=cache), "after": SMO(cache_bytes=cache)}
    tiny = WeightedSVM(Dataset(X=X[:300], y=y[:300]), C=1.0, kernel=RBF(gamma=0.5))
    for driver in drivers.values():  # compile first
        of.solve(tiny, driver=driver, threads=1)
    for rep in range(2):
        for label in ("before", "after") if rep % 2 == 0 else ("after", "before"):
            tick = time.perf_counter()
            result = of.solve(model, driver=drivers[label], threads=1, tol=1e-3)
            seconds = time.perf_counter() - tick - float(result.timings.compile or 0.0)
            record = {"data": name, "version": label, "repeat": rep, "seconds": seconds,
                      "objective": result.objective, "steps": result.iterations,
                      "load": os.getloadavg()[0]}  # fmt: skip
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    main()
