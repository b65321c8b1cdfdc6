"""The ridge dual of a PLQ loss on ``fn`` against the driver ``auto`` picked before it.

Every problem is ``EmpiricalRisk(data, loss, penalty=L2(), fit_intercept=...)``, linear, one
thread; each method is solved once to warm up (numba compiled, solvers loaded), then ``--repeat``
times, alternating; the median wall time, the certified status and the objective the model
evaluates at each method's solution are printed, one JSON line per method, and a markdown row.

    python docs/results/fn_ridge_bench.py --repeat 2 --out docs/results/fn_ridge_runs.jsonl

Methods: ``fn`` (``Direct(form="dual")`` on ``matrix:fn``), ``aid`` (AggregateDisaggregate on
its default back-end), ``smo`` (SMO through w), ``dcd``, ``newton``, ``clarabel`` (Direct on
Clarabel, the reference where it finishes); a method that does not take the model is skipped
with its reason.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np

PROBLEMS = (
    # name, data, loss, intercept, methods
    ("hinge + intercept", "a9a", "hinge", True, ("fn", "smo", "aid", "clarabel")),
    ("hinge + intercept", "w8a", "hinge", True, ("fn", "smo", "aid")),
    ("hinge + intercept", "ijcnn1", "hinge", True, ("fn", "smo", "aid")),
    ("hinge + intercept", "dense 100000 x 20", "hinge", True, ("fn", "aid", "clarabel")),
    ("hinge + intercept", "dense 1000000 x 20", "hinge", True, ("fn", "aid")),
    ("hinge", "a9a", "hinge", False, ("fn", "dcd", "aid")),
    ("hinge", "ijcnn1", "hinge", False, ("fn", "dcd", "aid")),
    ("quantile 0.3 + intercept", "dense 100000 x 20", "pinball", True, ("fn", "smo", "aid")),
    ("quantile 0.3", "dense 100000 x 20", "pinball", False, ("fn", "dcd", "aid")),
    ("quantile 0.3 + intercept", "564_fried", "pinball", True, ("fn", "smo", "aid")),
    ("eps-insensitive + intercept", "564_fried", "eps", True, ("fn", "smo", "aid")),
    ("squared hinge + intercept", "a9a", "squared hinge", True, ("fn", "newton")),
    ("Huber + intercept", "dense 100000 x 20", "huber", True, ("fn", "newton")),
)


def dataset(name: str, regression: bool):
    """A benchmark set by name, or generated ``dense n x d`` data (seeded)."""
    from optframe.data import Dataset, load_dataset

    if name.startswith("dense"):
        _, n, _, d = name.split()
        rng = np.random.default_rng(0)
        X = rng.standard_normal((int(n), int(d)))
        t = X @ rng.standard_normal(int(d))
        if regression:
            return Dataset(X=X, y=t + rng.laplace(size=int(n)))
        return Dataset(X=X, y=np.where(t + rng.standard_normal(int(n)) > 0, 1.0, -1.0))
    data = load_dataset(name)
    if regression:
        X = np.asarray(data.X.toarray() if hasattr(data.X, "toarray") else data.X)
        X = (X - X.mean(axis=0)) / np.maximum(X.std(axis=0), 1e-12)
        return Dataset(X=X, y=np.asarray(data.y, dtype=np.float64))
    return data


def model_of(data_name: str, loss_name: str, intercept: bool):
    """The ridge ``EmpiricalRisk`` of one row of :data:`PROBLEMS`."""
    from optframe.losses import EpsilonInsensitive, Hinge, Huber, Pinball, SquaredHinge
    from optframe.models import EmpiricalRisk
    from optframe.penalties import L2

    loss = {
        "hinge": Hinge(),
        "squared hinge": SquaredHinge(),
        "pinball": Pinball(0.3),
        "eps": EpsilonInsensitive(0.5),
        "huber": Huber(1.0),
    }[loss_name]
    regression = loss_name in ("pinball", "eps", "huber")
    data = dataset(data_name, regression)
    return EmpiricalRisk(data, loss, penalty=L2(), fit_intercept=intercept)


def run(model, method: str) -> dict:
    """One timed solve by ``method``: seconds, status, the model's objective, gap, back-end."""
    import optframe as of
    from optframe.drivers import SMO, Direct

    kwargs: dict = {"threads": 1}
    if method == "fn":
        kwargs.update(driver=Direct(form="dual"), backend="fn")
    elif method == "clarabel":
        kwargs.update(driver=Direct(), backend="clarabel")
    elif method == "smo":
        kwargs.update(driver=SMO())
    else:
        kwargs.update(driver=method)
    began = time.perf_counter()
    result = of.solve(model, **kwargs)
    seconds = time.perf_counter() - began
    objective = float(model.objective(result.solution)) if result.solution else float("nan")
    return {
        "seconds": seconds,
        "status": result.status.value,
        "objective": objective,
        "gap": result.gap,
        "backend": result.backend,
    }


def main() -> None:
    """Run every problem (or ``--only`` some data sets) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=None, help="data set names to run")
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    print("| problem | data | method | median s | status | objective |")
    print("|---|---|---|---|---|---|")
    for title, data_name, loss_name, intercept, methods in PROBLEMS:
        if args.only and data_name not in args.only:
            continue
        model = model_of(data_name, loss_name, intercept)
        times: dict[str, list[float]] = {m: [] for m in methods}
        last: dict[str, dict] = {}
        for method in methods:  # warm-up
            last[method] = run(model, method)
        for _ in range(args.repeat):
            for method in methods:
                last[method] = run(model, method)
                times[method].append(last[method]["seconds"])
        for method in methods:
            row = {
                "problem": title, "data": data_name, "method": method,
                "n": model.data.n_samples, "d": model.data.n_features,
                "median_s": statistics.median(times[method]), "times": times[method],
                **{k: v for k, v in last[method].items() if k != "seconds"},
                "load": os.getloadavg()[0],
            }  # fmt: skip
            print(f"| {title} | {data_name} | {method} | {row['median_s']:.2f} | "
                  f"{row['status']} | {row['objective']:.10g} |", flush=True)  # fmt: skip
            if args.out:
                with open(args.out, "a") as handle:
                    handle.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
