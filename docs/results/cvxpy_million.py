"""A user's cvxpy problem at a million rows: ``optframe.solve(problem)`` against Clarabel.

Each method runs in a fresh process of its own, one after the other in one run, with a wall-clock
limit and an address-space cap; the child reports its seconds (the problem's construction and
the imports not included, the same for both; a first solve's loading of optframe's compiled
kernels included), the objective recomputed with numpy from the solution, and its
peak resident memory (``ru_maxrss``). A method that does not finish is reported with its limit.

    python docs/results/cvxpy_million.py --rows 1000000 --limit 1200 --memory-gb 10

Problems: ``LAD``, ``"squared hinge"``, ``logistic`` (the default three) and ``"hinge +
intercept"`` (the L1-SVM with a free intercept).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

CHILD = r"""
import json, resource, sys, time
import cvxpy as cp
import numpy as np

problem_name, method, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = np.random.default_rng(0)
m = 20
X = rng.normal(size=(rows, m))
truth = rng.normal(size=m)
w = cp.Variable(m, name="w")
if problem_name == "LAD":
    t = X @ truth + rng.laplace(size=rows)
    b = cp.Variable(name="b")
    problem = cp.Problem(cp.Minimize(cp.sum(cp.abs(t - X @ w - b))))
    value = lambda wv, bv: float(np.abs(t - X @ wv - bv).sum())
elif problem_name == "squared hinge":
    y = np.where(X @ truth + rng.normal(size=rows) > 0, 1.0, -1.0)
    problem = cp.Problem(cp.Minimize(
        cp.sum_squares(cp.pos(1 - cp.multiply(y, X @ w))) + 0.5 * cp.sum_squares(w)))
    value = lambda wv, bv: float((np.maximum(0, 1 - y * (X @ wv)) ** 2).sum() + 0.5 * wv @ wv)
elif problem_name == "hinge + intercept":
    y = np.where(X @ truth + rng.normal(size=rows) > 0, 1.0, -1.0)
    b = cp.Variable(name="b")
    problem = cp.Problem(cp.Minimize(
        cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b))) + 0.5 * cp.sum_squares(w)))
    value = lambda wv, bv: float(np.maximum(0, 1 - y * (X @ wv + bv)).sum() + 0.5 * wv @ wv)
else:  # logistic
    y = np.where(X @ truth + rng.normal(size=rows) > 0, 1.0, -1.0)
    problem = cp.Problem(cp.Minimize(
        cp.sum(cp.logistic(-cp.multiply(y, X @ w))) + 0.5 * cp.sum_squares(w)))
    value = lambda wv, bv: float(np.logaddexp(0, -y * (X @ wv)).sum() + 0.5 * wv @ wv)
if method == "optframe":
    import optframe as of  # imported before the clock, as cvxpy is
start = time.perf_counter()
status = bound = None
if method == "optframe":
    result = of.solve(problem, threads=1)
    status, bound = result.status.value, result.bound
    driver = f"{result.driver} {result.backend}"
else:
    problem.solve(solver=cp.CLARABEL)
    status, driver = problem.status, "cvxpy + Clarabel"
seconds = time.perf_counter() - start
bv = 0.0
for var in problem.variables():
    if var.name() == "b":
        bv = float(var.value)
objective = value(np.asarray(w.value).ravel(), bv)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
print(json.dumps({"seconds": seconds, "objective": objective, "status": status,
                  "bound": bound, "driver": driver, "peak_gb": peak}))
"""


def run(problem: str, method: str, rows: int, limit: float, memory_gb: float) -> dict:
    """One method on one problem in a fresh process: its figures, or why it did not finish."""

    def cap() -> None:
        size = int(memory_gb * 1024**3)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "NUMBA_NUM_THREADS": "1", "OPTFRAME_THREADS": "1"}  # fmt: skip
    tick = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, problem, method, str(rows)],
            capture_output=True, text=True, timeout=limit, env=env, preexec_fn=cap,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        return {"failed": f"not finished in {limit:g} s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no message"]
        wall = time.perf_counter() - tick
        return {"failed": f"exit {done.returncode} after {wall:.0f} s: {tail[0][:160]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Print the markdown table of every problem and method."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--limit", type=float, default=1200.0)
    parser.add_argument("--memory-gb", type=float, default=10.0)
    parser.add_argument("--problems", nargs="*", default=["LAD", "squared hinge", "logistic"])
    parser.add_argument("--methods", nargs="*", default=["optframe", "clarabel"])
    args = parser.parse_args()
    print(f"| problem ({args.rows:,} x 20) | method | seconds | objective | status | peak GB |")
    print("|---|---|---|---|---|---|")
    for problem in args.problems:
        for method in args.methods:
            out = run(problem, method, args.rows, args.limit, args.memory_gb)
            if "failed" in out:
                print(f"| {problem} | {method} | {out['failed']} | | | |", flush=True)
                continue
            print(f"| {problem} | {out['driver']} | {out['seconds']:.1f} | "
                  f"{out['objective']:.10g} | {out['status']} | {out['peak_gb']:.2f} |",
                  flush=True)  # fmt: skip
    print(f"\nload average at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
