"""optframe's drivers at one thread and at two, quiet and beside a busy process, in one process.

Each job is solved by ``optframe.solve(..., threads=t)`` for each setting of ``--threads``: a
count (BLAS and numba's pool at ``t`` threads) or ``default`` (``threads`` not given: numba's
pool at all its threads, BLAS at one; :mod:`optframe.threads`), the settings alternating,
``repeats`` times each, after a warm-up solve; the medians are printed with the load
average. ``--load`` also starts a process that spins on one core for the whole run (the
shared-machine case); ``--load blas`` one that multiplies matrices on two BLAS threads (other
multi-threaded work). ``--json FILE`` appends one line per job and setting.

Jobs: the RBF SVM on a9a by SMO (30,162 training rows, kernel cache 2000 MiB), LAD at
300,000 x 40 by AID (HiGHS) and by Direct on ``fn``, the hinge on ijcnn1 (49,990 x 22, no
intercept) by DCD and the logistic loss on ijcnn1 (intercept) by PrimalNewton::

    python docs/results/threads_bench.py --repeats 3 --json docs/results/threads_runs.jsonl
    python docs/results/threads_bench.py --repeats 3 --load --json docs/results/threads_runs.jsonl
    python docs/results/threads_bench.py --repeats 3 --load blas --only smo aid
    python docs/results/threads_bench.py --repeats 3 --threads 1 --tree ../optframe-before

``--tree DIR`` imports optframe from another checkout (the A/B at one thread: run it with
``--threads 1`` on both trees, one after the other).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

# The other work beside a loaded run: a Python loop on one core, or NumPy's matrix products on
# two BLAS threads (OpenBLAS's pool, whose threads spin while they wait for work).
LOADS = {
    "spin": "while True: pass",
    "blas": "import numpy as np\na = np.random.rand(800, 800)\nwhile True: a @ a",
}
LOAD_ENV = {**os.environ, "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2"}


def jobs() -> dict[str, Callable[[int], Any]]:
    """Name -> a function of the thread count that solves the job once and returns the result."""
    import optframe as of
    from optframe.bench.suites.peers import _split, rbf_gamma
    from optframe.data import Dataset, load_dataset, make_regression_lad
    from optframe.drivers import SMO, AggregateDisaggregate, Direct
    from optframe.kernels import RBF
    from optframe.losses import Hinge, Logistic
    from optframe.models import EmpiricalRisk, LADRegression, WeightedSVM

    X, y, _, _ = _split("a9a")
    svm = WeightedSVM(Dataset(X=X, y=y), C=1.0, kernel=RBF(gamma=rbf_gamma(X)))
    lad = LADRegression(make_regression_lad(300_000, 40, random_state=0))
    ijcnn1 = load_dataset("ijcnn1")
    hinge = EmpiricalRisk(ijcnn1, Hinge(), fit_intercept=False)
    logistic = EmpiricalRisk(ijcnn1, Logistic(), fit_intercept=True)
    cache = 2000 * 1024**2
    return {
        "smo rbf a9a": lambda t: of.solve(svm, SMO(cache_bytes=cache), threads=t),
        "aid lad 300000x40": lambda t: of.solve(lad, AggregateDisaggregate(), threads=t),
        "direct fn lad 300000x40": lambda t: of.solve(lad, Direct(), backend="fn", threads=t),
        "dcd hinge ijcnn1": lambda t: of.solve(hinge, "dcd", threads=t),
        "newton logistic ijcnn1": lambda t: of.solve(logistic, "newton", threads=t),
    }


def _import_from(root: str) -> None:
    """Import optframe, ``optframe.models`` and ``optframe.solvers`` from the checkout ``root``.

    The project's editable install maps those names to its own tree; its finder is dropped.
    """
    import importlib.util

    sys.meta_path[:] = [f for f in sys.meta_path if "_EditableFinder" not in repr(f)]
    sys.path.insert(0, root)
    import optframe  # the parent package first

    for name in ("models", "solvers"):
        folder = os.path.join(root, name)
        spec = importlib.util.spec_from_file_location(
            f"optframe.{name}", os.path.join(folder, "__init__.py"),
            submodule_search_locations=[folder],
        )  # fmt: skip
        assert spec is not None
        assert spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
        setattr(optframe, name, module)


def main() -> None:
    """Parse the options, run the jobs alternating the thread counts, print and store medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", nargs="+", default=["1", "default", "2"])
    parser.add_argument(
        "--load", nargs="?", const="spin", choices=["spin", "blas"],
        help="beside the run: spin one core (spin, the default) or multiply matrices on two "
        "BLAS threads (blas: other multi-threaded work)",
    )  # fmt: skip
    parser.add_argument("--only", nargs="+", help="job names to run (substrings)")
    parser.add_argument("--tree", help="import optframe from this checkout")
    parser.add_argument("--json", help="append one JSON line per job and thread count")
    args = parser.parse_args()
    if args.tree:
        _import_from(os.path.abspath(args.tree))
    import optframe

    spinner = None
    if args.load:
        spinner = subprocess.Popen([sys.executable, "-c", LOADS[args.load]], env=LOAD_ENV)
    try:
        chosen = {
            name: run
            for name, run in jobs().items()
            if not args.only or any(part in name for part in args.only)
        }
        for run in chosen.values():  # warm-up: compiled kernels, imports, caches
            run(1)
        seconds: dict[tuple[str, str], list[float]] = {}
        status: dict[tuple[str, str], set[str]] = {}
        loads: list[float] = []
        for _ in range(args.repeats):
            for name, run in chosen.items():
                for threads in args.threads:
                    tick = time.perf_counter()
                    result = run(None if threads == "default" else int(threads))
                    spent = time.perf_counter() - tick
                    seconds.setdefault((name, threads), []).append(spent)
                    status.setdefault((name, threads), set()).add(result.status.value)
                    loads.append(os.getloadavg()[0])
                    print(name, f"threads={threads} {spent:.3f} s", result.status.value, flush=True)
    finally:
        if spinner is not None:
            spinner.kill()
    tree = os.path.dirname(os.path.dirname(os.path.abspath(optframe.__file__)))
    git = subprocess.run(
        ["git", "-C", tree, "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    for (name, threads), times in seconds.items():
        line = {
            "job": name,
            "threads": threads,
            "median_s": float(np.median(times)),
            "seconds": [round(t, 4) for t in times],
            "status": sorted(status[(name, threads)]),
            "loaded": args.load,
            "load_average": [round(min(loads), 2), round(max(loads), 2)],
            "git": git,
            "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        print(json.dumps(line))
        if args.json:
            with open(args.json, "a") as out:
                out.write(json.dumps(line) + "\n")


if __name__ == "__main__":
    main()
