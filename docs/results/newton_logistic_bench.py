r"""PrimalNewton against LIBLINEAR ``-s 0`` on L2 logistic regression, side by side, one thread.

The peers report's ``logistic-linear`` job: :math:`\tfrac12\lVert w\rVert^2 + C\sum_i \log(1 +
e^{-y_i x_i^\top w})` with the bias as a column of ones (penalized, no intercept), C = 1, on a9a
(32,561 x 123 + 1, CSR) and ijcnn1 (49,990 x 22 + 1). Methods, run in turn in every round so
that a change in the machine's load falls on all of them alike:

* ``optframe newton``: ``of.solve(model, PrimalNewton())``, the model built inside the timing,
  optframe's certificate (relative gap 1e-6) included;
* ``optframe newton at <rev>`` with ``--before <rev>``: the driver of that git revision (its
  ``newton.py`` and ``newton_core.py``, with the present model), for a before-and-after in one
  run;
* ``liblinear -s 0``: ``LogisticRegression(solver="liblinear", fit_intercept=False, tol=1e-4)``,
  scikit-learn's default path for this model (its trust-region Newton method).

Every objective is recomputed by the model from each method's coefficients. Times are medians
of ``--repeats`` rounds after a warm-up round (numba's kernels compiled before any timing);
every thread pool is limited to one thread. Run from the repository root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/python docs/results/newton_logistic_bench.py --repeats 11 --before fc31476
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import optframe as of  # noqa: E402
from optframe.bench import peer_methods as pm  # noqa: E402
from optframe.data import Dataset, load_dataset  # noqa: E402
from optframe.drivers import PrimalNewton  # noqa: E402
from optframe.losses import Logistic  # noqa: E402
from optframe.models import EmpiricalRisk  # noqa: E402


def _source_at(revision: str, path: str) -> str:
    """The text of ``path`` at git ``revision``."""
    return subprocess.run(
        ["git", "show", f"{revision}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def _module(name: str, source: str) -> types.ModuleType:
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source, name, "exec"), vars(module))
    return module


def driver_at(revision: str) -> type:
    """``PrimalNewton`` as ``newton.py`` and ``newton_core.py`` were at ``revision``.

    Not registered; its kernels compiled in this process (numba's cache needs a file).
    """
    core = _source_at(revision, "optframe/drivers/newton_core.py")
    _module(f"newton_core_at_{revision}", core.replace("cache=True", "cache=False"))
    source = _source_at(revision, "optframe/drivers/newton.py")
    source = source.replace("@register_driver\n", "").replace(
        "from optframe.drivers import newton_core as core",
        f"import newton_core_at_{revision} as core",
    )
    return _module(f"newton_at_{revision}", source).PrimalNewton


def methods(X, y, C, before):
    """``(label, run)`` pairs; ``run()`` returns ``(w, result or None)``."""
    from sklearn.linear_model import LogisticRegression

    data = Dataset(X=X, y=y)

    def newton(driver_class):
        def run():
            model = EmpiricalRisk(data, Logistic(), C=C, fit_intercept=False)
            result = of.solve(model, driver_class())
            return np.asarray(result.solution["w"]), result

        return run

    estimator = LogisticRegression(
        C=C, fit_intercept=False, solver="liblinear", tol=1e-4, max_iter=1_000_000
    )

    def liblinear():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            estimator.fit(X, y)
        return np.ravel(estimator.coef_), None

    listed = [("optframe newton", newton(PrimalNewton))]
    if before:
        listed.append((f"optframe newton at {before}", newton(driver_at(before))))
    listed.append(("liblinear -s 0 (tol 1e-4)", liblinear))
    return listed


def run_job(name, C, repeats, before):
    """Every method, a warm-up round and ``repeats`` timed rounds: the table's lines."""
    data = load_dataset(name)
    X, y = pm.with_ones(data.X), np.asarray(data.y, dtype=np.float64)
    listed = methods(X, y, C, before)
    for _, run in listed:
        run()
    times: dict[str, list[float]] = {label: [] for label, _ in listed}
    last = {}
    for _ in range(repeats):
        for label, run in listed:
            start = time.perf_counter()
            last[label] = run()
            times[label].append(time.perf_counter() - start)
    model = EmpiricalRisk(Dataset(X=X, y=y), Logistic(), C=C, fit_intercept=False)
    values = {label: model.objective({"w": w}) for label, (w, _) in last.items()}
    best = min(values.values())
    peer = statistics.median(times["liblinear -s 0 (tol 1e-4)"])
    lines = [
        f"\n### {name} ({X.shape[0]:,} x {X.shape[1]}), C = {C:g}\n",
        "| method | median s | [min, max] | / liblinear | objective | above the best | status "
        "| gap | Newton its | CG steps |",
        "|---|---:|---|---:|---:|---:|---|---:|---:|---:|",
    ]
    for label, _ in listed:
        seconds = statistics.median(times[label])
        _, result = last[label]
        above = (values[label] - best) / abs(best)
        if result is None:
            status = gap = its = cg = "-"
        else:
            status, gap = result.status.value, f"{result.gap:.1e}"
            its, cg = str(result.iterations), str(result.stats.get("cg_steps", "-"))
        lines.append(
            f"| {label} | {seconds:.3f} | [{min(times[label]):.3f}, {max(times[label]):.3f}] | "
            f"{seconds / peer:.2f} | {values[label]:.10g} | {above:.1e} | {status} | {gap} | "
            f"{its} | {cg} |"
        )
    return lines


def main() -> None:
    """Run the jobs and print the markdown tables with the load averages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--jobs", default="a9a:1,ijcnn1:1")
    parser.add_argument("--before", default="", help="also the driver of this git revision")
    args = parser.parse_args()
    print(f"load at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for job in args.jobs.split(","):
        name, C = job.split(":")
        print("\n".join(run_job(name, float(C), args.repeats, args.before)), flush=True)
    print(f"\nload at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
