"""DCD on losses with quadratic pieces against LIBLINEAR (scikit-learn) and ReHLine, one thread.

Jobs (no intercept; for the SVMs a constant feature 1 stands for the bias, as LIBLINEAR's -B):

* squared hinge, C = 1, on ijcnn1.t (91,701 x 22 + 1) and a9a (32,561 x 123 + 1): optframe's DCD
  (certified at gap 1e-6) against ``LinearSVC(loss="squared_hinge", dual=True)`` (LIBLINEAR's
  ``-s 1``) at its default tol 1e-4 and at 1e-8;
* Huber (delta = 1), C = 1, on 564_fried and houses (cadata): DCD against ReHLine's
  ``plqERM_Ridge(loss={"name": "huber"})`` at its default tol and at 1e-8, with its C scaled to
  the same objective;
* every job also by Direct on its default back-end (``of.solve(model, "direct")``), the only
  certified path these losses had before.

Each method's objective is recomputed here from its coefficients with the same formula; times are
medians of ``--repeats`` runs (compilation warmed before timing). Run from the repository root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/pip install rehline
    .venv/bin/python docs/results/dcd_pieces_bench.py --out docs/results/dcd_pieces.md
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
from optframe.losses import Huber, SquaredHinge  # noqa: E402
from optframe.models import EmpiricalRisk  # noqa: E402


def with_bias(X):
    """``X`` with a constant column 1 (the bias as a feature)."""
    ones = np.ones((X.shape[0], 1))
    return sp.hstack([X, ones], format="csr") if sp.issparse(X) else np.hstack([X, ones])


def squared_hinge_objective(X, y, w, C):
    r""":math:`\tfrac12\lVert w\rVert^2 + C\sum_i \max(0, 1 - y_i x_i^\top w)^2`."""
    margin = np.maximum(0.0, 1.0 - y * np.asarray(X @ w).reshape(-1))
    return 0.5 * float(w @ w) + C * float(margin @ margin)


def huber_objective(X, y, w, C, delta=1.0):
    r""":math:`\tfrac12\lVert w\rVert^2 + C\sum_i H_\delta(y_i - x_i^\top w)`."""
    r = np.abs(y - np.asarray(X @ w).reshape(-1))
    loss = np.where(r <= delta, 0.5 * r * r, delta * (r - 0.5 * delta))
    return 0.5 * float(w @ w) + C * float(loss.sum())


def timed(run, repeats):
    """The median wall seconds of ``repeats`` calls of ``run`` and its last output."""
    times, out = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        out = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def optframe_runs(model, repeats):
    """DCD (kernels warmed first) and Direct on its default back-end on ``model``."""
    of.solve(model, DCD(), time_limit=1)  # compile (or load) the kernels outside the timing
    seconds, result = timed(lambda: of.solve(model, DCD()), repeats)
    rows = [("optframe DCD", seconds, np.asarray(result.solution["w"]), result.status.value)]
    seconds, result = timed(lambda: of.solve(model, "direct"), 1)
    label = f"optframe Direct ({result.backend})"
    rows.append((label, seconds, np.asarray(result.solution["w"]), result.status.value))
    return rows


def liblinear_runs(X, y, C, repeats):
    """LIBLINEAR's dual solver of the L2-loss SVM (``-s 1``) at two tolerances."""
    from sklearn.svm import LinearSVC

    rows = []
    for tol in (1e-4, 1e-8):
        svc = LinearSVC(
            loss="squared_hinge", dual=True, C=C, tol=tol, fit_intercept=False, max_iter=100_000
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            seconds, fitted = timed(lambda svc=svc: svc.fit(X, y), repeats)
        rows.append((f"LIBLINEAR -s 1 (tol {tol:g})", seconds, fitted.coef_.ravel(), "-"))
    return rows


def rehline_runs(X, y, C, repeats):
    """ReHLine's ridge-penalized Huber regression at two tolerances."""
    from rehline import plqERM_Ridge

    rows = []
    X = X.toarray() if sp.issparse(X) else np.asarray(X)
    for tol in (1e-4, 1e-8):
        # ReHLine minimizes C sum loss + 1/2 |w|^2 (its C is our C)
        est = plqERM_Ridge(loss={"name": "huber", "tau": 1.0}, C=C, tol=tol, max_iter=1_000_000)
        seconds, fitted = timed(lambda est=est: est.fit(X, y), repeats)
        rows.append((f"ReHLine (tol {tol:g})", seconds, np.asarray(fitted.coef_).ravel(), "-"))
    return rows


def main() -> None:
    """Run every job and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/results/dcd_pieces.md")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    env = environment()
    lines = []
    jobs = [
        ("squared hinge", "ijcnn1.t", 1.0),
        ("squared hinge", "a9a", 1.0),
        ("huber", "564_fried", 1.0),
        ("huber", "houses", 1.0),
    ]
    for loss, name, C in jobs:
        data = load_dataset(name)
        y = np.asarray(data.y, dtype=np.float64)
        if loss == "squared hinge":
            X = with_bias(sp.csr_array(data.X) if sp.issparse(data.X) else np.asarray(data.X))
            y = np.where(y > 0, 1.0, -1.0)
            model = EmpiricalRisk(Dataset(X=X, y=y), SquaredHinge(), C=C, fit_intercept=False)
            rows = optframe_runs(model, args.repeats) + liblinear_runs(X, y, C, args.repeats)
            objective = lambda w, X=X, y=y, C=C: squared_hinge_objective(X, y, w, C)  # noqa: E731
        else:
            X = data.X.toarray() if sp.issparse(data.X) else np.asarray(data.X, dtype=np.float64)
            model = EmpiricalRisk(Dataset(X=X, y=y), Huber(1.0), C=C, fit_intercept=False)
            rows = optframe_runs(model, args.repeats) + rehline_runs(X, y, C, args.repeats)
            objective = lambda w, X=X, y=y, C=C: huber_objective(X, y, w, C)  # noqa: E731
        values = [objective(w) for _, _, w, _ in rows]
        best = min(values)
        dcd_seconds = rows[0][1]
        lines.append(f"\n### {loss}, {name} ({X.shape[0]:,} x {X.shape[1]}), C = {C:g}\n")
        lines.append("| method | seconds | ratio to DCD | objective | above the best | status |")
        lines.append("|---|---:|---:|---:|---:|---|")
        for (label, seconds, _, status), value in zip(rows, values, strict=True):
            above = (value - best) / max(1.0, abs(best))
            lines.append(
                f"| {label} | {seconds:.3f} | {seconds / dcd_seconds:.2f} | {value:.10g} | "
                f"{above:.1e} | {status} |"
            )
        print("\n".join(lines[-len(rows) - 3 :]), flush=True)
    with open(args.out, "w") as handle:
        handle.write("# DCD on losses with quadratic pieces, against LIBLINEAR and ReHLine\n\n")
        handle.write(__doc__.split("\n\n", 1)[1].split("Each method's")[0])
        handle.write(
            "Each method's objective is recomputed from its coefficients with one formula; "
            f"times are medians of {args.repeats} runs, one thread "
            "(`OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=NUMBA_NUM_THREADS=1`). Rerun:\n\n"
            "```sh\nexport OPTFRAME_DATA=../shared/datasets\n.venv/bin/pip install rehline\n"
            ".venv/bin/python docs/results/dcd_pieces_bench.py --out docs/results/dcd_pieces.md\n"
            "```\n\n"
        )
        handle.write(
            f"Run: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} on "
            f"{env.get('cpu', 'this machine')}, git "
            f"`{env.get('git', '')}`.\n"
        )
        handle.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
