r"""SMO on the linear SVM with a free intercept: kernel rows against the steps through w.

The peers suite's ``svm-linear`` job with ``variant="free"``: ``WeightedSVM(Dataset(X, y),
C=1)`` (free intercept, linear kernel; CSR points with 32-bit indices as the suite passes
them) on ijcnn1's test file, a9a and w8a, solved by ``SMO(cache_bytes=2000 MiB)`` with
``linear_steps="rows"`` and ``"weights"``, side by side in one process, alternating (rows,
weights, weights, rows, ...), after a warm-up solve that compiles or loads the kernels. Prints
per run and as medians: the solve seconds (``Result.timings.total``, compilation outside),
the CPU seconds of the solve call (compilation subtracted; steadier than the wall seconds on a
shared machine), pair steps, the objective recomputed by the model, the status, and the load
average read before each set. Run with one thread::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPTFRAME_OFFLINE=1 \
        OPTFRAME_DATA=<datasets> .venv/bin/python docs/results/smo_weights_bench.py

``--sets`` picks the sets, ``--repeats`` the runs per side (3), ``--size`` passes
``subproblem_size``, ``--only weights`` skips the rows (for profiling), ``--json`` appends
one JSON line per run to a file.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

SETS = ("ijcnn1.t", "a9a", "w8a")
CACHE_BYTES = 2000 * 1024**2


def load(name: str):
    """The free-intercept WeightedSVM of the peers suite on ``name`` (C = 1)."""
    from optframe.bench.peer_methods import as_int32
    from optframe.data import Dataset, load_dataset
    from optframe.models import WeightedSVM

    base, _, split = name.partition(".")
    data = load_dataset(base, split="test" if split == "t" else "train")
    y = np.asarray(data.y, dtype=np.float64)
    return WeightedSVM(Dataset(X=as_int32(data.X), y=y), C=1.0)


def solve(model, steps: str, size: int | None) -> dict:
    """One SMO solve with ``linear_steps=steps``: seconds, steps, objective, status."""
    import optframe as of
    from optframe.drivers import SMO

    options = {} if size is None else {"subproblem_size": size}
    driver = SMO(cache_bytes=CACHE_BYTES, linear_steps=steps, **options)
    cpu = time.process_time()
    result = of.solve(model, driver=driver, threads=1)
    cpu = time.process_time() - cpu - float(result.timings.compile or 0.0)
    return {
        "steps": steps,
        "seconds": result.timings.total,
        "cpu": cpu,
        "pair_steps": int(result.stats["steps"]),
        "working_sets": int(result.stats["working_sets"]),
        "objective": float(model.objective(result.solution)),
        "status": result.status.value,
    }


def load_average() -> float:
    """The one-minute load average."""
    return os.getloadavg()[0]


def main() -> None:
    """Run the sets side by side and print the runs and the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="*", default=list(SETS))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--size", type=int, default=None)
    parser.add_argument("--only", choices=("rows", "weights"), default=None)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()

    from optframe.data import make_svm_aid
    from optframe.models import WeightedSVM

    tiny = WeightedSVM(make_svm_aid(300, 5, random_state=1), C=1.0)
    for steps in ("rows", "weights"):  # compile (or load) both kernels before any clock
        solve(tiny, steps, args.size)
    sides = ("rows", "weights") if args.only is None else (args.only,)
    summary = []
    for name in args.sets:
        model = load(name)
        load_before = load_average()
        runs: dict[str, list[dict]] = {s: [] for s in sides}
        for r in range(args.repeats):
            order = sides if r % 2 == 0 else sides[::-1]
            for steps in order:
                run = solve(model, steps, args.size) | {"set": name, "load": load_average()}
                run["time"] = time.strftime("%H:%M:%S", time.gmtime())
                runs[steps].append(run)
                print(
                    f"{name:9s} {steps:7s} {run['seconds']:7.2f} s (cpu {run['cpu']:6.2f})"
                    f"  steps {run['pair_steps']:7d}"
                    f"  sets {run['working_sets']:4d}  objective {run['objective']:.10g}"
                    f"  {run['status']}  load {run['load']:.2f}",
                    flush=True,
                )
                if args.json:
                    with open(args.json, "a") as out:
                        out.write(json.dumps(run) + "\n")
        med = {s: statistics.median(r["seconds"] for r in runs[s]) for s in sides}
        cpu = {s: statistics.median(r["cpu"] for r in runs[s]) for s in sides}
        line = f"{name}: load {load_before:.2f} -> {load_average():.2f}; " + ", ".join(
            f"{s} {med[s]:.2f} s (cpu {cpu[s]:.2f}, {runs[s][0]['pair_steps']} steps)"
            for s in sides
        )
        if len(sides) == 2:
            line += f"; rows / weights {med['rows'] / med['weights']:.2f}x"
            line += f" (cpu {cpu['rows'] / cpu['weights']:.2f}x)"
        summary.append(line)
    print()
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
