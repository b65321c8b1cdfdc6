"""SMO on an RBF SVM's dual: the steps by kernel rows against working sets, 1 and 2 threads.

Usage: ``python docs/results/smo_sets_bench.py SET {hinge,squared} {intercept,none} [REPEATS]``
with SET one of the peers suite's RBF splits (a9a, ijcnn1, w8a). Without an intercept the dual
has no equality row (single-variable steps). Each repeat runs rows and sets at one and two
threads, one after the other; compilation is done before and not counted.
"""

import sys
import time

import optframe as of
from optframe.bench.suites import peers
from optframe.data import Dataset
from optframe.drivers import SMO
from optframe.kernels import RBF
from optframe.losses import SquaredHinge
from optframe.models import EmpiricalRisk, WeightedSVM

CACHE = 2000 * 1024**2


def main() -> None:
    """Print one line per solve: set, loss, steps, threads, seconds, status, objective, gap."""
    name, loss, intercept = sys.argv[1], sys.argv[2], sys.argv[3] == "intercept"
    repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    X, y, _, _ = peers._split(name)
    data, kernel = Dataset(X=X, y=y), RBF(gamma=peers.rbf_gamma(X))
    if loss == "hinge":
        model = WeightedSVM(data, C=1.0, kernel=kernel, fit_intercept=intercept)
    else:
        model = EmpiricalRisk(data, SquaredHinge(), kernel=kernel, C=1.0, fit_intercept=intercept)
    for steps in ("pairs", "sets"):  # compile
        of.solve(model, driver=SMO(kernel_steps=steps, cache_bytes=CACHE), max_iter=10)
    for _ in range(repeats):
        for steps in ("pairs", "sets"):
            for threads in (1, 2):
                began = time.perf_counter()
                driver = SMO(kernel_steps=steps, cache_bytes=CACHE)
                result = of.solve(model, driver=driver, threads=threads)
                seconds = time.perf_counter() - began - (result.timings.compile or 0.0)
                stats = result.stats
                print(name, loss, "intercept" if intercept else "none", stats["kernel_steps"],
                      threads, f"{seconds:.2f}", result.status.value, f"{result.objective:.6f}",
                      f"{result.gap:.1e}", stats["steps"], stats["working_sets"],
                      stats["set_size"], flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
