"""DCD on L2 logistic regression against LIBLINEAR's dual solver (scikit-learn), one thread.

Jobs: the logistic loss with the ridge penalty, C = 1 and C = 10, the bias as a penalized feature
of value 1 (LIBLINEAR's ``-B 1``, scikit-learn's ``intercept_scaling=1``), on a9a (32,561 x 123,
sparse) and ijcnn1 (49,990 x 22, LIBSVM rows: CSR). The objective of every method is

    1/2 |w|^2 + 1/2 b^2 + C sum_i log(1 + exp(-y_i (x_i'w + b))),

recomputed here from each method's coefficients with one formula. Methods:

* optframe's DCD (``EmpiricalRisk(data, Logistic(), fit_intercept=False)`` on the data with a
  column of ones; Yu, Huang and Lin's dual coordinate descent), certified to a relative gap of
  1e-6 (its default) and of 1e-9; the model is built inside the timing;
* ``of.solve(model)``: auto's choice (DCD from 2,000 rows), default tolerance;
* LIBLINEAR ``-s 7`` through ``LogisticRegression(solver="liblinear", dual=True)`` at its default
  tol 1e-4 and at 1e-8 (``max_iter`` high enough that the tolerance, not the cap, stops it);
* optframe Direct (the exponential-cone program on Clarabel through CVXPY) once per job with
  ``--direct``: the reference where it finishes; with ``--crossover`` also DCD against Direct
  on the first 500 to 8,000 rows of a9a.

Times are medians of ``--repeats`` rounds after a warm-up (numba's kernels compiled before any
timing); each round runs every method once, in turn, so a change in the machine's load falls on
all of them alike; every thread pool is limited to one thread. Run from the repository root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/python docs/results/logistic_bench.py --direct --crossover --repeats 5
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


def methods(X, Xb, y, C, direct):
    """``(label, run, repeats)`` of every method; ``run()`` returns ``(w, result or None)``."""
    from sklearn.linear_model import LogisticRegression

    data = Dataset(X=Xb, y=y)

    def model():
        return EmpiricalRisk(data, Logistic(), C=C, fit_intercept=False)

    def optframe_run(**options):
        def run():
            result = of.solve(model(), **options)
            return np.asarray(result.solution["w"]), result

        return run

    def liblinear_run(tol):
        est = LogisticRegression(
            solver="liblinear", dual=True, C=C, tol=tol, fit_intercept=True,
            intercept_scaling=1.0, max_iter=1_000_000,
        )  # fmt: skip

        def run():
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            return np.r_[est.coef_.ravel(), est.intercept_], None  # the bias feature is 1

        return run

    rows = [
        ("optframe DCD (gap 1e-06)", optframe_run(driver=DCD(), tol=1e-6), None),
        ("optframe DCD (gap 1e-09)", optframe_run(driver=DCD(), tol=1e-9), None),
        ("optframe `of.solve(model)` (auto)", optframe_run(), None),
        ("LIBLINEAR -s 7 (tol 0.0001)", liblinear_run(1e-4), None),
        ("LIBLINEAR -s 7 (tol 1e-08)", liblinear_run(1e-8), None),
    ]
    if direct:
        rows.append(("optframe Direct", optframe_run(driver="direct", time_limit=900), 1))
    return rows


def run_job(X, Xb, y, C, repeats, direct):
    """Every method, ``repeats`` rounds (Direct once); ``(label, median seconds, w, result)``."""
    of.solve(EmpiricalRisk(Dataset(X=Xb, y=y), Logistic(), fit_intercept=False), DCD(), max_iter=2)
    listed = methods(X, Xb, y, C, direct)
    times: dict[str, list[float]] = {label: [] for label, _, _ in listed}
    last: dict[str, tuple] = {}
    for round_ in range(repeats):
        for label, run, limit in listed:
            if limit is not None and round_ >= limit:
                continue
            start = time.perf_counter()
            last[label] = run()
            times[label].append(time.perf_counter() - start)
    rows = []
    for label, _, _ in listed:
        w, result = last[label]
        shown = label
        if label.endswith("(auto)"):
            shown = label.replace("(auto)", f"(auto: {result.driver})")
        elif label == "optframe Direct":
            shown = f"optframe Direct ({result.backend})"
        rows.append((shown, statistics.median(times[label]), w, result))
    return rows


def crossover(repeats, sizes=(500, 2_000, 8_000)):
    """DCD against Direct on the first rows of a9a (bias as a feature, C = 1): table lines."""
    data = load_dataset("a9a")
    Xb = with_bias(sp.csr_array(data.X))
    y = np.where(np.asarray(data.y) > 0, 1.0, -1.0)
    lines = [
        "\n### DCD against Direct on the first rows of a9a (C = 1): the size rule of `auto`\n",
        "| rows | DCD seconds | Direct seconds | Direct / DCD | both optimal |",
        "|---:|---:|---:|---:|---|",
    ]
    for n in sizes:
        model = EmpiricalRisk(Dataset(X=Xb[:n], y=y[:n]), Logistic(), fit_intercept=False)
        times: dict[str, list[float]] = {"dcd": [], "direct": []}
        statuses = set()
        for _ in range(repeats):
            for name, driver in (("dcd", DCD()), ("direct", "direct")):
                start = time.perf_counter()
                result = of.solve(model, driver)
                times[name].append(time.perf_counter() - start)
                statuses.add(result.status.value)
        dcd, direct = (statistics.median(times[k]) for k in ("dcd", "direct"))
        both = "yes" if statuses == {"optimal"} else ", ".join(sorted(statuses))
        lines.append(f"| {n:,} | {dcd:.3f} | {direct:.3f} | {direct / dcd:.0f} | {both} |")
    return lines


def main() -> None:
    """Run every job and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/results/logistic.md")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--direct", action="store_true", help="also Direct on Clarabel, once")
    parser.add_argument("--jobs", default="a9a:1,a9a:10,ijcnn1:1,ijcnn1:10")
    parser.add_argument(
        "--crossover", action="store_true", help="also DCD against Direct on 500 to 8,000 rows"
    )
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
        rows = run_job(X, Xb, y, C, args.repeats, args.direct)
        values = [objective(Xb, y, w, C) for _, _, w, _ in rows]
        best = min(values)
        dcd_seconds = rows[0][1]
        kind = "sparse" if sp.issparse(X) else "dense"
        lines.append(f"\n### {name} ({X.shape[0]:,} x {X.shape[1]} + 1, {kind}), C = {C:g}\n")
        lines.append(
            "| method | seconds | ratio to DCD | objective | above the best | certified gap "
            "| status | iterations |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---|---:|")
        for (label, seconds, _, result), value in zip(rows, values, strict=True):
            above = (value - best) / max(1.0, abs(best))
            gap = "-" if result is None else f"{result.gap:.1e}"
            status = "-" if result is None else result.status.value
            epochs = "-" if result is None else str(result.iterations)  # epochs, or IPM steps
            lines.append(
                f"| {label} | {seconds:.3f} | {seconds / dcd_seconds:.2f} | {value:.10g} | "
                f"{above:.1e} | {gap} | {status} | {epochs} |"
            )
        print("\n".join(lines[-len(rows) - 3 :]), flush=True)
    if args.crossover:
        lines += crossover(args.repeats)
        print("\n".join(lines[-6:]), flush=True)
    load_after = os.getloadavg()
    with open(args.out, "w") as handle:
        handle.write("# L2 logistic regression: DCD against LIBLINEAR\n\n")
        handle.write(__doc__.split("\n\n", 1)[1].split("Times are medians")[0])
        handle.write(
            f"Times are medians of {args.repeats} rounds (Direct: one run) after a warm-up; each "
            "round runs every method once, in turn; one thread "
            "(`OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=NUMBA_NUM_THREADS=1`). Iterations are DCD's "
            "epochs and Clarabel's interior-point steps. Rerun:\n\n"
            "```sh\nexport OPTFRAME_DATA=../shared/datasets\n"
            ".venv/bin/python docs/results/logistic_bench.py --direct --crossover --repeats 5"
            "\n```\n\n"
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
