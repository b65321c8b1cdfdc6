"""Measure what the first run of optframe costs: numba compilation and cache loading.

Each measurement runs in fresh processes, each with a numba cache of its own (an empty folder in
the temporary directory, never the ``__pycache__`` caches of the work tree):

``compile``
    The demo's workload on an empty cache, with a numba event listener that records, for every
    kernel and signature compiled, the seconds spent compiling it (exclusive of the kernels it
    compiled on the way), and the cache loads (the demo compiles in its own process here, not
    in the background). Prints the top kernels. ``--workload`` profiles one driver's first
    solve instead.
``demo``
    ``optframe demo`` on an empty cache, then again on the cache it filled (warm), back to back
    in one run; prints both wall times and their ratio.
``first-solve``
    For each driver with numba kernels (SMO, DCD, Frank-Wolfe, CVM) and AID, a new process with
    a warm cache: the first solve of a small problem against the second solve of the same
    problem in the same process (the difference is what a first solve adds).
``speed``
    Warm solves (kernels loaded before the clock) of SMO, DCD, MFW and AID on benchmark data.
``report``
    The markdown tables of the records in ``--json``.

``--against DIR`` measures another checkout (say of an earlier commit) in the same run, the two
alternating; ``--json PATH`` appends one record per measurement to ``PATH``. Run from the
repository root (``OPTFRAME_DATA`` pointing at the benchmark data)::

    .venv/bin/python docs/results/first_run.py compile --against ../optframe-before
    .venv/bin/python docs/results/first_run.py demo --repeat 2
    .venv/bin/python docs/results/first_run.py first-solve --repeat 3
    .venv/bin/python docs/results/first_run.py report --json docs/results/first_run_runs.jsonl
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable

# ------------------------------------------------------------------ inside the child processes

# First in every child: ``optframe.models`` and ``optframe.solvers`` from the tree measured (the
# editable install maps them to the work tree's ``models`` and ``solvers``).
_TREE_IMPORTS = r"""
import importlib.util, os, sys
class _TreeFinder:
    @staticmethod
    def find_spec(name, path=None, target=None):
        folder = {"optframe.models": "models", "optframe.solvers": "solvers"}.get(name)
        if folder is None:
            return None
        where = os.path.join(os.environ["PYTHONPATH"], folder)
        return importlib.util.spec_from_file_location(
            name, os.path.join(where, "__init__.py"), submodule_search_locations=[where]
        )
sys.meta_path.insert(0, _TreeFinder)
"""

_PROFILE_CHILD = r"""
import json, sys, time
from collections import defaultdict
import numba.core.event as ev
from numba.core import caching

records = defaultdict(float)  # (kernel, signature) -> exclusive compile seconds
stack = []  # [start, nested seconds]


class Compiles(ev.Listener):
    def on_start(self, event):
        stack.append([time.perf_counter(), 0.0])

    def on_end(self, event):
        start, nested = stack.pop()
        total = time.perf_counter() - start
        if stack:
            stack[-1][1] += total
        data = event.data
        name = getattr(data["dispatcher"], "__qualname__", None) or str(data["dispatcher"])
        module = getattr(getattr(data["dispatcher"], "py_func", None), "__module__", "")
        key = f"{module}.{name}"
        records[(key, str(tuple(data["args"])))] += total - nested


loads = defaultdict(lambda: [0, 0.0])
_load = caching.Cache.load_overload


def load_overload(self, sig, target_context):
    start = time.perf_counter()
    try:
        return _load(self, sig, target_context)
    finally:
        entry = loads[self._name]
        entry[0] += 1
        entry[1] += time.perf_counter() - start


caching.Cache.load_overload = load_overload
ev.register("numba:compile", Compiles())
from optframe import jit
jit.compile_in_background = lambda runs: False  # compile here, where the listener is
start = time.perf_counter()
WORKLOAD
wall = time.perf_counter() - start
json.dump(
    {
        "wall": wall,
        "compiles": [[k, s, t] for (k, s), t in sorted(records.items(), key=lambda r: -r[1])],
        "loads": {k: v for k, v in loads.items()},
    },
    open(sys.argv[1], "w"),
)
"""

_DEMO_RUN = r"""
from optframe.cli.main import main
sys.exit(main(["demo"]))
"""

_DEMO_WORKLOAD = r"""
from optframe.cli.main import main
import contextlib, io
with contextlib.redirect_stdout(io.StringIO()):
    main(["demo"])
"""

_FIRST_SOLVE_CHILD = r"""
import json, sys, time
t0 = time.perf_counter()
import numpy as np
import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.drivers import (
    DCD, SMO, AggregateDisaggregate, CoreVectorMachine, FrankWolfe,
)
from optframe.models import L2SVM, LADRegression, WeightedSVM
imported = time.perf_counter() - t0
name = sys.argv[2]
rng = np.random.default_rng(0)
X = rng.standard_normal((400, 8))
y = np.where(X[:, 0] + 0.5 * rng.standard_normal(400) > 0, 1.0, -1.0)
data = Dataset(X=X, y=y, name="first-solve")
if name == "SMO":
    driver, model = SMO(), WeightedSVM(data, C=1.0, kernel="rbf")
elif name == "DCD":
    driver, model = DCD(), WeightedSVM(data, C=1.0, fit_intercept=False)
elif name == "FrankWolfe":
    driver, model = FrankWolfe(), L2SVM(data, C=1.0)
elif name == "CVM":
    driver, model = CoreVectorMachine(), L2SVM(data, C=1.0)
else:
    lad = load_dataset("cpusmall")
    driver, model = AggregateDisaggregate(), LADRegression(lad)
times, cpu = [], []
compile_seconds = []
for _ in range(2):
    start, cpu_start = time.perf_counter(), time.process_time()
    result = of.solve(model, driver=driver)
    times.append(time.perf_counter() - start)
    cpu.append(time.process_time() - cpu_start)
    compile_seconds.append(float(getattr(result.timings, "compile", 0.0) or 0.0))
json.dump(
    {"driver": name, "import": imported, "first": times[0], "second": times[1],
     "first_cpu": cpu[0], "second_cpu": cpu[1],
     "compile": compile_seconds, "status": str(result.status)},
    open(sys.argv[1], "w"),
)
"""

# The first solve of each driver on a small problem (what ``compile`` measures besides the demo).
_DRIVER_WORKLOAD = r"""
import numpy as np
import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.drivers import DCD, SMO, CoreVectorMachine, FrankWolfe
from optframe.kernels import RBF
from optframe.models import L2SVM, WeightedSVM
rng = np.random.default_rng(0)
X = rng.standard_normal((400, 8))
y = np.where(X[:, 0] + 0.5 * rng.standard_normal(400) > 0, 1.0, -1.0)
data = Dataset(X=X, y=y, name="first-solve")
runs = {
    "smo-linear": (SMO(), WeightedSVM(data, C=1.0)),
    "smo-rbf": (SMO(), WeightedSVM(data, C=1.0, kernel=RBF(gamma=0.1))),
    "dcd": (DCD(), WeightedSVM(data, C=1.0, fit_intercept=False)),
    "frank-wolfe": (FrankWolfe(), L2SVM(data, C=1.0, kernel=RBF(gamma=0.1))),
    "cvm": (CoreVectorMachine(), L2SVM(data, C=1.0, kernel=RBF(gamma=0.1))),
}
driver, model = runs["NAME"]
of.solve(model, driver=driver)
"""
WORKLOADS = ("demo", "smo-linear", "smo-rbf", "dcd", "frank-wolfe", "cvm")

# Warm solves (kernels loaded before the clock), the cells of shared_machinery_bench.py and AID.
_SPEED_CHILD = r"""
import json, sys, time
import numpy as np
import optframe as of
from optframe.data import load_dataset
from optframe.drivers import DCD, MFW, SMO, AggregateDisaggregate
from optframe.jit import compile_kernels
from optframe.kernels import RBF
from optframe.models import L2SVM, LADRegression, WeightedSVM
cell = sys.argv[2]
if cell == "smo_a9a_20k_rbf":
    data = load_dataset("a9a").subset(np.arange(20_000))
    model = WeightedSVM(data, C=1.0, kernel=RBF(gamma=1.0 / data.n_features))
    driver = SMO(tol=1e-3)
elif cell == "mfw_a9a_10k_rbf":
    from optframe.bench.suites.fw import _gamma
    data = load_dataset("a9a").subset(np.arange(10_000))
    model = L2SVM(data, C=4.0, kernel=RBF(gamma=_gamma(data.X)))
    driver = MFW(eps=1e-6, seed=0, sample_size=59, verify=True, recompute=False,
                 check_every=20_000)
elif cell == "dcd_w8a_linear":
    model = WeightedSVM(load_dataset("w8a"), C=4.0, fit_intercept=False)
    driver = DCD(tol=1e-6)
else:  # aid_cpusmall_lad
    model = LADRegression(load_dataset("cpusmall"))
    driver = AggregateDisaggregate()
compile_kernels(driver)
result = of.solve(model, driver=driver)
t = result.timings
json.dump({"cell": cell, "status": str(result.status), "objective": result.objective,
           "total": t.total, "solve": t.solve, "compile": t.compile}, open(sys.argv[1], "w"))
"""
SPEED_CELLS = ("smo_a9a_20k_rbf", "dcd_w8a_linear", "mfw_a9a_10k_rbf", "aid_cpusmall_lad")

FIRST_SOLVE_DRIVERS = ("SMO", "DCD", "FrankWolfe", "CVM", "AID")


def _env(cache: Path, tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = str(tree)  # optframe, models and solvers of that tree
    env.setdefault("OPTFRAME_OFFLINE", "1")
    env.setdefault("MPLBACKEND", "Agg")
    return env


def _child(code: str, cache: Path, tree: Path, *args: str) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as out:
        path = out.name
    try:
        subprocess.run(
            [PYTHON, "-c", _TREE_IMPORTS + code, path, *args],
            cwd=tree,
            env=_env(cache, tree),
            check=True,
        )
        return json.loads(Path(path).read_text())
    finally:
        os.unlink(path)


def _fresh_cache(tag: str) -> Path:
    cache = Path(tempfile.gettempdir()) / f"nbcache_first_run_{tag}_{os.getpid()}"
    shutil.rmtree(cache, ignore_errors=True)
    cache.mkdir(parents=True)
    return cache


# ------------------------------------------------------------------------------ measurements


def measure_compile(top: int, workload: str, tree: Path) -> dict[str, Any]:
    """Compile the kernels of ``workload`` on an empty cache; per kernel and signature seconds."""
    cache = _fresh_cache("compile")
    code = _DEMO_WORKLOAD if workload == "demo" else _DRIVER_WORKLOAD.replace("NAME", workload)
    record = _child(_PROFILE_CHILD.replace("WORKLOAD", code), cache, tree)
    by_kernel: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for kernel, _, seconds in record["compiles"]:
        by_kernel[kernel][0] += 1
        by_kernel[kernel][1] += seconds
    total = sum(seconds for _, seconds in by_kernel.values())
    print(
        f"{tree}: {workload} on an empty cache: {record['wall']:.1f} s wall, "
        f"{total:.1f} s compiling"
    )
    print(f"{'kernel':60s} {'specializations':>15s} {'seconds':>8s}")
    for kernel, (count, seconds) in sorted(by_kernel.items(), key=lambda r: -r[1][1])[:top]:
        print(f"{kernel:60s} {count:15d} {seconds:8.2f}")
    shutil.rmtree(cache, ignore_errors=True)
    return {
        "measure": "compile",
        "tree": str(tree),
        "workload": workload,
        "wall": record["wall"],
        "compile": total,
        "kernels": {k: v for k, v in by_kernel.items()},
        "signatures": record["compiles"],
    }


def _demo_wall(cache: Path, tree: Path) -> float:
    start = time.perf_counter()
    subprocess.run(
        [PYTHON, "-c", _TREE_IMPORTS + _DEMO_RUN],
        cwd=tree,
        env=_env(cache, tree),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def measure_demo(repeat: int, trees: list[Path]) -> list[dict[str, Any]]:
    """``optframe demo`` on an empty cache, then warm, back to back; ``repeat`` times per tree."""
    records = []
    for r in range(repeat):
        for tree in trees:
            cache = _fresh_cache("demo")
            cold = _demo_wall(cache, tree)
            warm = _demo_wall(cache, tree)
            shutil.rmtree(cache, ignore_errors=True)
            print(
                f"{tree} run {r + 1}: empty cache {cold:.1f} s, warm {warm:.1f} s, "
                f"ratio {cold / warm:.2f}"
            )
            records.append(
                {"measure": "demo", "tree": str(tree), "empty": cold, "warm": warm,
                 "ratio": cold / warm}
            )  # fmt: skip
    return records


def measure_first_solve(repeat: int, trees: list[Path]) -> list[dict[str, Any]]:
    """Per driver: first against second solve in a new process on a warm cache."""
    caches = {tree: _fresh_cache(f"first_solve_{t}") for t, tree in enumerate(trees)}
    for tree, cache in caches.items():
        for name in FIRST_SOLVE_DRIVERS:  # fill the cache
            _child(_FIRST_SOLVE_CHILD, cache, tree, name)
    records = []
    print(
        f"{'tree':24s} {'driver':12s} {'import':>7s} {'first':>7s} {'second':>7s} {'added':>7s}"
        f" {'added cpu':>9s}"
    )
    for name in FIRST_SOLVE_DRIVERS:
        for _ in range(repeat):
            for tree, cache in caches.items():
                rec = _child(_FIRST_SOLVE_CHILD, cache, tree, name)
                rec["added"] = rec["first"] - rec["second"]
                rec["added_cpu"] = rec["first_cpu"] - rec["second_cpu"]
                rec["measure"] = "first-solve"
                rec["tree"] = str(tree)
                records.append(rec)
                print(
                    f"{str(tree)[-24:]:24s} {name:12s} {rec['import']:7.2f} {rec['first']:7.2f} "
                    f"{rec['second']:7.2f} {rec['added']:7.2f} {rec['added_cpu']:9.2f}"
                )
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)
    return records


def measure_speed(repeat: int, trees: list[Path], cells: list[str]) -> list[dict[str, Any]]:
    """Warm solves per cell, the trees alternating in each repeat (the first run fills caches)."""
    caches = {tree: _fresh_cache(f"speed_{t}") for t, tree in enumerate(trees)}
    records = []
    for cell in cells:
        for tree, cache in caches.items():
            _child(_SPEED_CHILD, cache, tree, cell)
        for r in range(repeat):
            order = list(caches.items())
            for tree, cache in order if r % 2 == 0 else order[::-1]:
                rec = _child(_SPEED_CHILD, cache, tree, cell)
                rec |= {"measure": "speed", "tree": str(tree), "repeat": r}
                records.append(rec)
                print(
                    f"{cell:18s} {str(tree)[-20:]:20s} total {rec['total']:7.3f} s "
                    f"(objective {rec['objective']:.8g}, {rec['status']})"
                )
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)
    return records


def _label(tree: str) -> str:
    return "this checkout" if Path(tree) == ROOT else f"{Path(tree).name} (--against)"


def report(path: Path, top: int) -> None:
    """Print the markdown tables of the records in ``path`` (the last record of each kind)."""
    import statistics

    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    compiles = {r["tree"]: r for r in records if r["measure"] == "compile"}
    if compiles:
        trees = list(compiles)
        names: dict[str, float] = defaultdict(float)
        for r in compiles.values():
            for kernel, (_, seconds) in r["kernels"].items():
                names[kernel] = max(names[kernel], seconds)
        head = " | ".join(f"{_label(t)}: specializations, s" for t in trees)
        print(f"| kernel | {head} |")
        print("|---|" + "---|" * len(trees))
        for kernel in sorted(names, key=lambda k: -names[k])[:top]:
            cells = []
            for t in trees:
                count, seconds = compiles[t]["kernels"].get(kernel, [0, 0.0])
                cells.append(f"{count}, {seconds:.1f}" if count else "-")
            print(f"| `{kernel.removeprefix('optframe.')}` | " + " | ".join(cells) + " |")
        totals = " | ".join(
            f"{compiles[t]['compile']:.0f} of {compiles[t]['wall']:.0f} s" for t in trees
        )
        print(f"| **all, compiling of the wall seconds** | {totals} |")
        print()
    demos = [r for r in records if r["measure"] == "demo"]
    if demos:
        print("| checkout | empty cache, s | warm, s | ratio |")
        print("|---|---|---|---|")
        for r in demos:
            print(
                f"| {_label(r['tree'])} | {r['empty']:.1f} | {r['warm']:.1f} | {r['ratio']:.2f} |"
            )
        print()
    firsts = [r for r in records if r["measure"] == "first-solve"]
    if firsts:
        print("| checkout | driver | first solve, s | second, s | added, s | added CPU, s |")
        print("|---|---|---|---|---|---|")
        for r in firsts:
            print(
                f"| {_label(r['tree'])} | {r['driver']} | {r['first']:.2f} | "
                f"{r['second']:.2f} | {r['added']:.2f} | {r.get('added_cpu', math.nan):.2f} |"
            )
        print()
    speeds = [r for r in records if r["measure"] == "speed"]
    if speeds:
        trees = list(dict.fromkeys(r["tree"] for r in speeds))
        print(
            "| cell | " + " | ".join(f"{_label(t)}: total s, median (each)" for t in trees)
            + " | paired ratio, median |"
        )  # fmt: skip
        print("|---|" + "---|" * (len(trees) + 1))
        for cell in dict.fromkeys(r["cell"] for r in speeds):
            got = {t: [r for r in speeds if r["cell"] == cell and r["tree"] == t] for t in trees}
            cells = [
                f"{statistics.median(r['total'] for r in got[t]):.3f} ("
                + ", ".join(f"{r['total']:.2f}" for r in got[t]) + ")"
                for t in trees
            ]  # fmt: skip
            paired = ""
            if len(trees) == 2:
                by_repeat = {
                    (r["tree"], r["repeat"]): r["total"] for r in got[trees[0]] + got[trees[1]]
                }
                ratios = [
                    by_repeat[(trees[0], k)] / by_repeat[(trees[1], k)]
                    for k in sorted({r["repeat"] for r in got[trees[0]]})
                    if (trees[1], k) in by_repeat
                ]
                paired = f"{statistics.median(ratios):.3f}"
            print(f"| {cell} | " + " | ".join(cells) + f" | {paired} |")


def main() -> None:
    """Run the measurement named on the command line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("compile", "demo", "first-solve", "speed", "report"))
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--workload", choices=WORKLOADS, default="demo", help="for compile")
    parser.add_argument("--cell", action="append", choices=SPEED_CELLS, help="for speed")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument(
        "--against",
        type=Path,
        default=None,
        help="another checkout (say of the previous commit) measured in the same run",
    )
    args = parser.parse_args()
    if args.what == "report":  # the tables of the records in --json
        report(args.json, args.top)
        return
    trees = [ROOT] + ([args.against.resolve()] if args.against is not None else [])
    if args.what == "compile":
        records = [measure_compile(args.top, args.workload, tree) for tree in trees]
    elif args.what == "demo":
        records = measure_demo(args.repeat, trees)
    elif args.what == "first-solve":
        records = measure_first_solve(args.repeat, trees)
    else:
        records = measure_speed(args.repeat, trees, args.cell or list(SPEED_CELLS))
    if args.json is not None:
        with args.json.open("a") as out:
            for record in records:
                out.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
