"""LAD at 200,000 x 50 by Direct on fn and by AID: BLAS at one thread against two, in one process.

The BLAS pools are set by ``OPTFRAME_BLAS_THREADS`` for each ``optframe.solve``
(``threads=1``), the two counts alternating; the medians of the repeats are printed. For the
loaded figures, run another process that spins on one core beside it
(``python -c "while 1: pass"``)::

    python docs/results/blas_threads_bench.py 3
"""

from __future__ import annotations

import os
import sys
import time

import numpy as np

import optframe as of
from optframe.data import Dataset
from optframe.drivers import AggregateDisaggregate, Direct
from optframe.models import LADRegression


def main(repeats: int) -> None:
    """Time both methods at 1 and 2 BLAS threads, ``repeats`` times each, and print medians."""
    rng = np.random.default_rng(0)
    n, m = 200_000, 50
    X = rng.normal(size=(n, m))
    y = X @ rng.normal(size=m) + rng.laplace(size=n)
    model = LADRegression(Dataset(X=X, y=y))
    runs = {
        "direct fn": lambda: of.solve(model, Direct(), backend="fn", threads=1),
        "aid": lambda: of.solve(model, AggregateDisaggregate(), threads=1),
    }
    for run in runs.values():  # warm-up: kernels, imports, caches
        run()
    seconds: dict[tuple[str, int], list[float]] = {}
    for _ in range(repeats):
        for name, run in runs.items():
            for blas in (1, 2):
                os.environ["OPTFRAME_BLAS_THREADS"] = str(blas)  # read by optframe.solve
                tick = time.perf_counter()
                result = run()
                spent = time.perf_counter() - tick
                seconds.setdefault((name, blas), []).append(spent)
                print(name, blas, f"{spent:.2f}", result.status.value, flush=True)
    for (name, blas), times in seconds.items():
        print(f"{name} blas={blas}: median {np.median(times):.2f} s {[round(t, 2) for t in times]}")
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
