r"""The L2-loss SVM with an RBF kernel by SMO on two duals, and libsvm, on one thread.

Its standard dual (a box QP with a diagonal) against the simplex QP of ``L2SVM``, both by SMO,
and libsvm's ``SVC`` (the hinge loss).

Rerun from the repository's root (about ten minutes on a 2-core machine)::

    OPTFRAME_DATA=/path/to/datasets .venv/bin/python docs/results/l2svm_box_bench.py \
        --repeat 1 --out docs/results/l2svm_box_runs.jsonl

Each data set (a9a, w8a, ijcnn1: the training and test files of the peers suite's
``l2svm-rbf`` job, ``optframe.bench.suites.fw.split``) is solved, side by side in this process,
by

* ``box smo``: ``EmpiricalRisk(data, SquaredHinge(), C=1, kernel=RBF(gamma))``, the squared
  hinge with a free intercept, by ``SMO`` on its standard dual (``BoxQPDual`` with the
  diagonal :math:`1/(2C)` and no upper bound);
* ``simplex smo``: ``L2SVM(data, C=1, kernel=RBF(gamma))`` (free margin, penalized intercept),
  by ``SMO`` on its simplex QP, as in the peers report;
* ``libsvm SVC``: scikit-learn's ``SVC(C=1, kernel="rbf", gamma=gamma, tol=1e-3)``, the
  L1-SVM (libsvm has no squared hinge), as in the peers report.

:math:`\gamma = 1/(2\bar d^2)` as in the peers suite, caches of 2000 MiB. The optframe
seconds exclude numba's compilation (warmed up on a tiny problem first) and run to a certified
gap of 1e-6 (status ``optimal``); the objective is recomputed by the model. One JSON record per
run is appended to ``--out``; a Markdown table of medians is printed.
"""

from __future__ import annotations

import os

for _name in ("OPTFRAME_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "NUMBA_NUM_THREADS"):  # fmt: skip
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

DATASETS = ("a9a", "w8a", "ijcnn1")
METHODS = ("box smo", "simplex smo", "libsvm SVC")
C = 1.0
CACHE_MB = 2000


def _model(method: str, X: Any, y: np.ndarray, gamma: float) -> Any:
    from optframe.data import Dataset
    from optframe.kernels import RBF
    from optframe.losses import SquaredHinge
    from optframe.models import L2SVM, EmpiricalRisk

    data = Dataset(X=X, y=y)
    if method == "box smo":
        return EmpiricalRisk(data, SquaredHinge(), C=C, kernel=RBF(gamma=gamma))
    return L2SVM(data, C=C, kernel=RBF(gamma=gamma))


def run(method: str, X: Any, y: np.ndarray, Xt: Any, yt: np.ndarray, gamma: float) -> dict:
    """One solve: seconds, status, gap, objective, steps, test accuracy."""
    import optframe as of
    from optframe.bench import peer_methods as pm
    from optframe.drivers import SMO

    if method == "libsvm SVC":
        fit, estimator = pm.svc_fit(X, y, C, "rbf", gamma, "libsvm", CACHE_MB)
        return {
            "seconds": fit.seconds,
            "status": fit.status,
            "iterations": fit.iterations,
            "support": int(np.count_nonzero(fit.solution["alpha"])),
            "accuracy": pm.accuracy(estimator.predict(Xt), yt),
        }
    model = _model(method, X, y, gamma)
    tick = time.perf_counter()
    result = of.solve(model, driver=SMO(cache_bytes=CACHE_MB * 1024**2), threads=1)
    wall = time.perf_counter() - tick
    compile_s = float(result.timings.compile or 0.0)
    alpha = result.solution.get("alpha")
    return {
        "seconds": wall - compile_s,
        "compile_s": compile_s,
        "status": result.status.value,
        "gap": result.gap,
        "objective": model.objective(result.solution),
        "bound": result.bound,
        "iterations": result.iterations,
        "kernel_rows": result.stats.get("kernel_rows"),
        "gradient_passes": result.stats.get("gradient_passes"),
        "tightened": result.stats.get("tightened"),
        "support": None if alpha is None else int(np.count_nonzero(alpha)),
        "accuracy": pm.accuracy(result.predict(Xt), yt),
    }


def warm_up() -> None:
    """Compile both SMO paths (and load libsvm) on a tiny problem."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(300, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
    for method in METHODS:
        run(method, X, y, X, y, 0.5)


def main() -> None:
    """Run the comparison and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--data", default=",".join(DATASETS))
    parser.add_argument("--out", default="docs/results/l2svm_box_runs.jsonl")
    args = parser.parse_args()
    from optframe.bench.suites.peers import _split, rbf_gamma

    warm_up()
    records = []
    for name in args.data.split(","):
        X, y, Xt, yt = _split(name)
        gamma = rbf_gamma(X)
        for rep in range(args.repeat):
            order = METHODS if rep % 2 == 0 else METHODS[::-1]  # alternate the order
            for method in order:
                record = {"data": name, "n": int(y.size), "m": int(X.shape[1]),
                          "gamma": gamma, "C": C, "method": method, "repeat": rep,
                          "load": os.getloadavg()[0]}  # fmt: skip
                record |= run(method, X, y, Xt, yt, gamma)
                records.append(record)
                print(json.dumps(record), flush=True)
                with open(args.out, "a") as out:
                    out.write(json.dumps(record) + "\n")
    print()
    print("| data | n | method | seconds (median) | x libsvm | status | gap | objective | "
          "steps | support | test accuracy % |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.data.split(","):
        mine = [r for r in records if r["data"] == name]
        base = statistics.median(r["seconds"] for r in mine if r["method"] == "libsvm SVC")
        for method in METHODS:
            rows = [r for r in mine if r["method"] == method]
            seconds = statistics.median(r["seconds"] for r in rows)
            last = rows[-1]
            gap = last.get("gap")
            objective = last.get("objective")
            print(
                f"| {name} | {last['n']} | {method} | {seconds:.2f} | {seconds / base:.2f} | "
                f"{last['status']} | {'' if gap is None else f'{gap:.1e}'} | "
                f"{'' if objective is None else f'{objective:.10g}'} | {last['iterations']} | "
                f"{last['support']} | {last['accuracy']:.2f} |"
            )


if __name__ == "__main__":
    main()
