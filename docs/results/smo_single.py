r"""SMO's single-variable steps (no intercept, RBF kernel) against Direct and AID.

Kernel models without an intercept have a box dual with no equality row, which SMO solves by
single-variable steps. On the first ``n`` rows of a LIBSVM set (RBF, :math:`\gamma = 1/d`,
C = 1): the squared hinge (``EmpiricalRisk(data, SquaredHinge(), fit_intercept=False,
kernel=RBF)``) by SMO and by Direct on Clarabel, and the hinge (``WeightedSVM(data,
fit_intercept=False, kernel=RBF)``) by SMO, AID and Direct on Clarabel, side by side in one
process. Each solve is timed once after a warm-up that compiles SMO's kernels; the seconds
are the wall seconds of ``of.solve`` without compilation, the objective is recomputed by the
model at each method's solution. One JSON line per solve. Run with one thread::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 OPTFRAME_OFFLINE=1 \
        OPTFRAME_DATA=<datasets> .venv/bin/python docs/results/smo_single.py \
        --set a9a --sizes 1000 3000 5000

``--no-direct-above N`` skips Direct above N rows (its n x n Gram matrix and interior point),
``--json`` appends the lines to a file. ``--expectile`` solves instead the expectile
(:math:`\tau = 0.3`, free multipliers split in two) with and without intercept on a regression
set (``--set abalone``, standardized features), by SMO and Direct on Clarabel.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

EXPECTILE_ROWS = [(0.6**0.5, 0.0, float("inf")), (-(1.4**0.5), 0.0, float("inf"))]


def models(name: str, n: int, expectile: bool = False):
    """The (family, model, drivers) of the first ``n`` rows of ``name``."""
    from optframe.data import Dataset, load_dataset
    from optframe.kernels import RBF
    from optframe.losses import PLQLoss, SquaredHinge
    from optframe.models import EmpiricalRisk, WeightedSVM

    base, _, split = name.partition(".")
    data = load_dataset(base, split="test" if split == "t" else "train")
    data = data.subset(np.arange(min(n, data.n_samples)))
    rbf = RBF(gamma=1.0 / data.n_features)
    if expectile:
        X = np.asarray(data.X.toarray() if hasattr(data.X, "toarray") else data.X, dtype=float)
        X = (X - X.mean(axis=0)) / np.where(X.std(axis=0) > 0, X.std(axis=0), 1.0)
        data = Dataset(X=X, y=np.asarray(data.y, dtype=float))
        loss = PLQLoss(rehu=EXPECTILE_ROWS, kind="regression")
        return data, [
            (f"expectile, intercept {b}", EmpiricalRisk(data, loss, fit_intercept=b, kernel=rbf),
             ("smo", "direct"))
            for b in (False, True)
        ]  # fmt: skip
    squared = EmpiricalRisk(data, SquaredHinge(), C=1.0, fit_intercept=False, kernel=rbf)
    hinge = WeightedSVM(data, C=1.0, fit_intercept=False, kernel=rbf)
    return data, [("squared hinge", squared, ("smo", "direct")),
                  ("hinge", hinge, ("smo", "aid", "direct"))]  # fmt: skip


def solve(model, driver: str) -> dict:
    """One solve: wall seconds without compilation, the model's objective, status, gap."""
    import optframe as of

    backend = "clarabel" if driver == "direct" else "auto"
    start = time.perf_counter()
    result = of.solve(model, driver=driver, backend=backend, threads=1)
    seconds = time.perf_counter() - start - float(result.timings.compile or 0.0)
    return {
        "driver": driver,
        "seconds": round(seconds, 3),
        "objective": float(model.objective(result.solution)),
        "status": result.status.value,
        "gap": float(result.gap),
        "steps": int(result.stats.get("steps", result.iterations or 0)),
    }


def main() -> None:
    """Solve every size with every driver and print a JSON line per solve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", default="a9a")
    parser.add_argument("--sizes", nargs="*", type=int, default=[1000, 3000, 5000])
    parser.add_argument("--no-direct-above", type=int, default=10_000)
    parser.add_argument("--json", default=None)
    parser.add_argument("--expectile", action="store_true")
    args = parser.parse_args()
    import optframe as of
    from optframe.data import Dataset
    from optframe.kernels import RBF
    from optframe.losses import SquaredHinge
    from optframe.models import EmpiricalRisk

    rng = np.random.default_rng(0)
    tiny = Dataset(X=rng.normal(size=(50, 3)), y=np.where(rng.normal(size=50) > 0, 1.0, -1.0))
    warm = EmpiricalRisk(tiny, SquaredHinge(), fit_intercept=False, kernel=RBF(gamma=0.5))
    of.solve(warm, driver="smo", threads=1)  # compiles (or loads) the single-variable steps
    for n in args.sizes:
        data, cells = models(args.set, n, args.expectile)
        for family, model, drivers in cells:
            for driver in drivers:
                if driver == "direct" and data.n_samples > args.no_direct_above:
                    continue
                row = {"set": args.set, "n": data.n_samples, "family": family,
                       "load": round(os.getloadavg()[0], 2), **solve(model, driver)}  # fmt: skip
                line = json.dumps(row)
                print(line, flush=True)
                if args.json:
                    with open(args.json, "a") as out:
                        out.write(line + "\n")


if __name__ == "__main__":
    main()
