"""DCD on L2 logistic regression against LIBLINEAR's dual solver (scikit-learn), one thread.

Jobs: the logistic loss with the ridge penalty, C = 1 and C = 10, the bias as a penalized feature
of value 1 (LIBLINEAR's ``-B 1``, scikit-learn's ``intercept_scaling=1``), on a9a (32,561 x 123,
sparse) and ijcnn1 (49,990 x 22, dense). The objective of every method is

    1/2 |w|^2 + 1/2 b^2 + C sum_i log(1 + exp(-y_i (x_i'w + b))),

recomputed here from each method's coefficients with one formula. Methods:

* optframe's DCD (``EmpiricalRisk(data, Logistic(), fit_intercept=False)`` on the data with a
  column of ones; Yu, Huang and Lin's dual coordinate descent), certified to a relative gap of
  1e-6 (its default) and of 1e-9; the model is built inside the timing;
* ``of.solve(model)``: auto's choice (DCD from 2,000 rows), default tolerance;
* LIBLINEAR ``-s 7`` through ``LogisticRegression(solver="liblinear", dual=True)`` at its default
  tol 1e-4 and at 1e-8 (``max_iter`` high enough that the tolerance, not the cap, stops it);
* optframe Direct (the exponential-cone program on Clarabel through CVXPY) once per job with
  ``--direct``: the reference where it finishes.

Times are medians of ``--repeats`` runs after a warm-up (numba's kernels compiled before any
timing); every thread pool is limited to one thread. Run from the repository root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/python docs/results/logistic_bench.py --out docs/results/logistic.md --direct
"""

from __future__ import annotations

import os

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

import optframe as of  # noqa: E402
from optframe.bench.environment import environment  # noqa: E402
from optframe.data import Dataset, load_dataset  # noqa: E402
from optframe.drivers import DCD  # noqa: E402
from optframe.losses import Logistic  # noqa: E402
from optframe.models import EmpiricalRisk  # noqa: E402


def with_bias(X):
    """``X`` with a constant column 1 (the bias as a feature)."""
    ones = np.ones((X.shape[0], 1))
    return sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])


def objective(Xb, y, w, C):
    r""":math:`\tfrac12\lVert w\rVert^2 + C\sum_i \log(1 + e^{-y_i x_i^\top w})` (bias in x)."""
    margins = y * np.asarray(Xb @ w).reshape(-1)
    return 0.5 * float(w @ w) + C * float(np.logaddexp(0.0, -margins).sum())


def timed(run, repeats):
    """The median wall seconds of ``repeats`` calls of ``run`` and its last output."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def optframe_runs(Xb, y, C, repeats, direct):
    """DCD at two gap tolerances, auto's choice, and Direct on Clarabel once (``direct``)."""
    data = Dataset(X=Xb, y=y)

    def model():
        return EmpiricalRisk(data, Logistic(), C=C, fit_intercept=False)

    of.solve(model(), DCD(), max_iter=2)  # compile (or load) the kernels outside the timing
    rows = []
    for tol in (1e-6, 1e-9):
        seconds, result = timed(lambda tol=tol: of.solve(model(), DCD(), tol=tol), repeats)
        label = f"optframe DCD (gap {tol:g})"
        rows.append((label, seconds, np.asarray(result.solution["w"]), result))
    seconds, result = timed(lambda: of.solve(model()), repeats)
    label = f"optframe `of.solve(model)` (auto: {result.driver})"
    rows.append((label, seconds, np.asarray(result.solution["w"]), result))
    if direct:
        seconds, result = timed(lambda: of.solve(model(), "direct", time_limit=900), 1)
        label = f"optframe Direct ({result.backend})"
        rows.append((label, seconds, np.asarray(result.solution["w"]), result))
    return rows


def liblinear_runs(X, y, C, repeats):
    """LIBLINEAR's dual solver of logistic regression (``-s 7``, bias 1) at two tolerances."""
    from sklearn.linear_model import LogisticRegression

    rows = []
    for tol in (1e-4, 1e-8):
        est = LogisticRegression(
            solver="liblinear", dual=True, C=C, tol=tol, fit_intercept=True,
            intercept_scaling=1.0, max_iter=1_000_000,
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, fitted = timed(lambda est=est: est.fit(X, y), repeats)
        w = np.r_[fitted.coef_.ravel(), fitted.intercept_]  # the bias feature has value 1
        rows.append((f"LIBLINEAR -s 7 (tol {tol:g})", seconds, w, None))
    return rows


def main() -> None:
    """Run every job and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/results/logistic.md")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--direct", action="store_true", help="also Direct on Clarabel, once")
    parser.add_argument("--jobs", default="a9a:1,a9a:10,ijcnn1:1,ijcnn1:10")
    args = parser.parse_args()
    env = environment()
    load_before = os.getloadavg()
    lines = []
    for job in args.jobs.split(","):
        name, C = job.split(":")[0], float(job.split(":")[1])
        data = load_dataset(name)
        X = sp.csr_array(data.X) if sp.issparse(data.X) else np.asarray(data.X, dtype=np.float64)
        y = np.where(np.asarray(data.y) > 0, 1.0, -1.0)
        Xb = with_bias(X)
        rows = optframe_runs(Xb, y, C, args.repeats, args.direct)
        rows += liblinear_runs(X, y, C, args.repeats)
        values = [objective(Xb, y, w, C) for _, _, w, _ in rows]
        best = min(values)
        dcd_seconds = rows[0][1]
        kind = "sparse" if sp.issparse(X) else "dense"
        lines.append(f"\n### {name} ({X.shape[0]:,} x {X.shape[1]} + 1, {kind}), C = {C:g}\n")
        lines.append(
            "| method | seconds | ratio to DCD | objective | above the best | certified gap "
            "| status | epochs |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---|---:|")
        for (label, seconds, _, result), value in zip(rows, values, strict=True):
            above = (value - best) / max(1.0, abs(best))
            gap = "-" if result is None else f"{result.gap:.1e}"
            status = "-" if result is None else result.status.value
            epochs = "-" if result is None else str(result.iterations)
            lines.append(
                f"| {label} | {seconds:.3f} | {seconds / dcd_seconds:.2f} | {value:.10g} | "
                f"{above:.1e} | {gap} | {status} | {epochs} |"
            )
        print("\n".join(lines[-len(rows) - 3 :]), flush=True)
    load_after = os.getloadavg()
    with open(args.out, "w") as handle:
        handle.write("# L2 logistic regression: DCD against LIBLINEAR\n\n")
        handle.write(__doc__.split("\n\n", 1)[1].split("Times are medians")[0])
        handle.write(
            f"Times are medians of {args.repeats} runs (Direct: one run) after a warm-up, one "
            "thread (`OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=NUMBA_NUM_THREADS=1`), all methods "
            "side by side in one run. Rerun:\n\n"
            "```sh\nexport OPTFRAME_DATA=../shared/datasets\n"
            ".venv/bin/python docs/results/logistic_bench.py --out docs/results/logistic.md "
            "--direct\n```\n\n"
        )
        handle.write(
            f"Run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
            f"{env.get('cpu', 'this machine')} ({os.cpu_count()} cores shared with other jobs; "
            f"1-minute load average {load_before[0]:.1f} at the start, {load_after[0]:.1f} at "
            f"the end), git `{env.get('git', '')}`.\n"
        )
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
