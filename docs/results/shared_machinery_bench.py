r"""Before/after timings of the compiled drivers for the shared-machinery change (issue 16 item 4).

Runs each cell in a fresh process per tree, the trees alternating (before, after, after, before,
...), one thread (``OPTFRAME_THREADS=1``, ``NUMBA_NUM_THREADS=1``, BLAS threads 1), and records
``Result.timings.total`` (wall seconds; numba compilation is in ``timings.compile``, outside it;
data loading is outside too) and the CPU seconds of the ``solve`` call, after the kernels were
compiled or loaded (``optframe.jit.compile_kernels``). On a shared machine the CPU seconds are
the steadier figure: the wall seconds also count the time other processes hold the cores. Usage::

    git worktree add ../sm_before 27b070e      # the commit before the change
    git worktree add ../sm_after 27b070e       # the same, with the change's drivers only
    git -C ../sm_after checkout c74a6ec -- optframe/drivers optframe/path.py
    for t in ../sm_before ../sm_after; do      # the editable install maps these two
        ln -s ../models $t/optframe/models; ln -s ../solvers $t/optframe/solvers; done
    OPTFRAME_DATA=../shared/datasets .venv/bin/python docs/results/shared_machinery_bench.py \
        --before ../sm_before --after ../sm_after --repeats 7 --out runs.jsonl

Each tree is imported through ``PYTHONPATH=<tree>``, so both run on the same interpreter and
packages. ``--cell NAME`` (repeatable) runs a subset.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys

CELLS = {
    # SMO on the WeightedSVM dual: a9a, first 20,000 rows, RBF gamma = 1/d, C = 1, tol 1e-3
    "smo_a9a_20k_rbf": "smo",
    # MFW on the L2SVM (MEB) dual: a9a, first 10,000 rows, the fw suite's RBF and driver options
    "mfw_a9a_10k_rbf": "mfw",
    # FW on the same problem with the first 20,000 rows, the fw suite's FW options
    "fw_a9a_20k_rbf": "fw",
    # DCD on the linear no-intercept SVM: w8a (49,749 x 300), C = 4, tol 1e-6
    "dcd_w8a_linear": "dcd",
}

CHILD = r"""
import json, sys, time
import numpy as np
import optframe as of
from optframe.data import load_dataset
from optframe.kernels import RBF
from optframe.models import L2SVM, WeightedSVM
from optframe.drivers import DCD, FW, MFW, SMO
from optframe.jit import compile_kernels

cell = sys.argv[1]
if cell == "smo_a9a_20k_rbf":
    data = load_dataset("a9a")
    data = data.subset(np.arange(20_000))
    model = WeightedSVM(data, C=1.0, kernel=RBF(gamma=1.0 / data.n_features))
    driver = SMO(tol=1e-3)
elif cell in ("mfw_a9a_10k_rbf", "fw_a9a_20k_rbf"):
    from optframe.bench.suites.fw import _gamma
    rows = 10_000 if cell.startswith("mfw") else 20_000
    data = load_dataset("a9a").subset(np.arange(rows))
    model = L2SVM(data, C=4.0, kernel=RBF(gamma=_gamma(data.X)))
    if cell.startswith("mfw"):
        driver = MFW(eps=1e-6, seed=0, sample_size=59, verify=True, recompute=False,
                     check_every=20_000)
    else:
        driver = FW(eps=1e-6, seed=0, verify=False, candidates="sample", max_iter=10**6,
                    recompute=False, check_every=20_000)
elif cell == "dcd_w8a_linear":
    data = load_dataset("w8a")
    model = WeightedSVM(data, C=4.0, fit_intercept=False)
    driver = DCD(tol=1e-6)
else:
    raise SystemExit(f"unknown cell {cell}")
compile_kernels(driver)  # compiled or loaded from numba's cache before the clocks
cpu = time.process_time()
result = of.solve(model, driver=driver)
cpu = time.process_time() - cpu
t = result.timings
print(json.dumps({"cell": cell, "status": result.status.value, "objective": result.objective,
                  "iterations": result.iterations, "build": t.build, "solve": t.solve,
                  "total": t.total, "compile": t.compile, "cpu": cpu, "module": of.__file__}))
"""


def run(tree: str, cell: str) -> dict:
    """One cell in a fresh process importing optframe from ``tree``."""
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.path.abspath(tree),
        OPTFRAME_THREADS="1",
        NUMBA_NUM_THREADS="1",
        OMP_NUM_THREADS="1",
        OPENBLAS_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
    )
    out = subprocess.run(
        [sys.executable, "-c", CHILD, cell],
        env=env,
        cwd=os.path.abspath(tree),  # "-c" puts the working directory first on sys.path
        capture_output=True,
        text=True,
        check=True,
    )
    row = json.loads(out.stdout.strip().splitlines()[-1])
    if not row["module"].startswith(os.path.abspath(tree)):
        raise RuntimeError(f"{tree}: optframe was imported from {row['module']}")
    return row


def main() -> None:
    """Alternate the trees over the cells and repeats; print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", required=True)
    parser.add_argument("--after", required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cell", action="append", choices=sorted(CELLS))
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    cells = args.cell or list(CELLS)
    rows = []
    for cell in cells:
        for tree in (args.before, args.after):  # compile (numba cache) once, untimed
            run(tree, cell)
        for k in range(args.repeats):
            order = ("before", "after") if k % 2 == 0 else ("after", "before")
            for label in order:
                row = run(getattr(args, label), cell) | {"tree": label, "repeat": k}
                rows.append(row)
                print(json.dumps(row), flush=True)
                if args.out:
                    with open(args.out, "a") as f:
                        f.write(json.dumps(row) + "\n")
    print("\n| cell | clock | before: median (min) s | after: median (min) s | after/before "
          "medians | mins | paired, median |")  # fmt: skip
    print("|---|---|---|---|---|---|---|")
    for cell in cells:
        for clock in ("total", "cpu"):
            got = {
                label: [r[clock] for r in rows if r["cell"] == cell and r["tree"] == label]
                for label in ("before", "after")
            }
            med = {label: statistics.median(got[label]) for label in got}
            low = {label: min(got[label]) for label in got}
            # the two runs of one repeat ran back to back: their ratio cancels slow load drifts
            paired = statistics.median(
                a / b for a, b in zip(got["after"], got["before"], strict=True)
            )
            print(f"| {cell} | {clock} | {med['before']:.3f} ({low['before']:.3f}) | "
                  f"{med['after']:.3f} ({low['after']:.3f}) | {med['after'] / med['before']:.3f} "
                  f"| {low['after'] / low['before']:.3f} | {paired:.3f} |")  # fmt: skip


if __name__ == "__main__":
    main()
