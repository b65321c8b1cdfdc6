"""Reproduce docs/results/cvxpy_recognition.md: a user's cvxpy problem, optframe against Clarabel.

Each problem is written as a user would write it in cvxpy and solved twice in one run, side by
side: ``problem.solve(solver=cvxpy.CLARABEL)`` (cvxpy's canonicalization and Clarabel, default
tolerances) and ``optframe.solve(problem)`` (recognized as an EmpiricalRisk, ``driver="auto"``).
The second part times the recognition alone at 200,000 rows (``--rows``, ``--features``)
against the solve it precedes.

Run from the project root with the data sets of ``OPTFRAME_DATA``::

    python docs/results/cvxpy_recognition_bench.py            # prints the markdown tables
    python docs/results/cvxpy_recognition_bench.py --cost-only --rows 1000000 --features 20
"""

from __future__ import annotations

import argparse
import os
import time

import cvxpy as cp
import numpy as np

import optframe as of
from optframe.cvxpy_problem import from_cvxpy
from optframe.data.load import load_dataset


def _problems():
    """(name, data, rows x features, builder) for the real data sets."""
    a9a = load_dataset("a9a")
    X, y = a9a.X, a9a.y
    houses = load_dataset("houses")
    H = (houses.X - houses.X.mean(axis=0)) / houses.X.std(axis=0)
    t = houses.y / 1e5  # house values in units of 100,000 dollars
    n_a, m_a = X.shape
    n_h, m_h = H.shape

    def hinge():
        w, b = cp.Variable(m_a, name="w"), cp.Variable(name="b")
        loss = cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
        return cp.Problem(cp.Minimize(loss + 0.5 * cp.sum_squares(w)))

    def hinge_plain():
        w = cp.Variable(m_a, name="w")
        loss = cp.sum(cp.pos(1 - cp.multiply(y, X @ w)))
        return cp.Problem(cp.Minimize(loss + 0.5 * cp.sum_squares(w)))

    def squared_hinge():
        w = cp.Variable(m_a, name="w")
        loss = cp.sum_squares(cp.pos(1 - cp.multiply(y, X @ w)))
        return cp.Problem(cp.Minimize(loss + 0.5 * cp.sum_squares(w)))

    def logistic():
        w = cp.Variable(m_a, name="w")
        loss = cp.sum(cp.logistic(-cp.multiply(y, X @ w)))
        return cp.Problem(cp.Minimize(loss + 0.5 * cp.sum_squares(w)))

    def lad():
        w, b = cp.Variable(m_h, name="w"), cp.Variable(name="b")
        return cp.Problem(cp.Minimize(cp.sum(cp.abs(t - H @ w - b))))

    def huber():
        w, b = cp.Variable(m_h, name="w"), cp.Variable(name="b")
        loss = cp.sum(cp.huber(t - H @ w - b, 1.0))
        return cp.Problem(cp.Minimize(loss + cp.sum_squares(w)))

    return [
        ("hinge + L2, intercept", "a9a", (n_a, m_a), hinge),
        ("hinge + L2", "a9a", (n_a, m_a), hinge_plain),
        ("squared hinge + L2", "a9a", (n_a, m_a), squared_hinge),
        ("logistic + L2", "a9a", (n_a, m_a), logistic),
        ("LAD, intercept", "houses", (n_h, m_h), lad),
        ("Huber + L2, intercept", "houses", (n_h, m_h), huber),
    ]


def compare() -> list[str]:
    """Each real problem solved by Clarabel through cvxpy and by optframe, one after the other."""
    rows = [
        "| problem | data (rows x features) | recognized as | optframe driver | optframe s "
        "| Clarabel s | speed-up | objective optframe | objective Clarabel | rel. diff. | status |",
        "|---|---|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, data, shape, build in _problems():
        problem = build()
        tick = time.perf_counter()
        reference = problem.solve(solver=cp.CLARABEL)
        clarabel = time.perf_counter() - tick
        problem = build()
        tick = time.perf_counter()
        result = of.solve(problem)
        ours = time.perf_counter() - tick
        said = result.stats["recognized"]
        loss = said["loss"] if isinstance(said, dict) else said
        diff = abs(result.objective - reference) / max(1.0, abs(reference))
        rows.append(
            f"| {name} | {data} ({shape[0]:,} x {shape[1]}) | {loss} | {result.driver} "
            f"({result.backend}) | {ours:.2f} | {clarabel:.2f} | {clarabel / ours:.1f}x "
            f"| {result.objective:.8g} | {reference:.8g} | {diff:.1e} | {result.status.value} |"
        )
        print(rows[-1], flush=True)
    return rows


def recognition_cost(n: int = 200_000, m: int = 50) -> list[str]:
    """The recognition alone against the whole ``optframe.solve`` at ``n`` generated rows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, m))
    y = np.sign(X @ rng.normal(size=m) + rng.normal(size=n))
    t = X @ rng.normal(size=m) + rng.laplace(size=n)
    w, b = cp.Variable(m, name="w"), cp.Variable(name="b")
    cases = {
        "hinge + L2, intercept": cp.sum(cp.pos(1 - cp.multiply(y, X @ w + b)))
        + 0.5 * cp.sum_squares(w),
        "logistic + L2": cp.sum(cp.logistic(-cp.multiply(y, X @ w))) + 0.5 * cp.sum_squares(w),
        "squared hinge + L2": cp.sum_squares(cp.pos(1 - cp.multiply(y, X @ w)))
        + 0.5 * cp.sum_squares(w),
        "LAD, intercept": cp.sum(cp.abs(t - X @ w - b)),
    }
    rows = [
        f"| problem ({n:,} x {m}, dense) | recognition s | optframe.solve s | share |",
        "|---|---:|---:|---:|",
    ]
    _ = from_cvxpy(cp.Problem(cp.Minimize(cases["LAD, intercept"]))).recognition  # imports
    for name, objective in cases.items():
        problem = cp.Problem(cp.Minimize(objective))
        tick = time.perf_counter()
        _ = from_cvxpy(problem).recognition
        seconds = time.perf_counter() - tick
        tick = time.perf_counter()
        result = of.solve(problem)
        total = time.perf_counter() - tick
        share = 100 * seconds / total
        rows.append(f"| {name} ({result.driver}) | {seconds:.3f} | {total:.2f} | {share:.1f}% |")
        print(rows[-1], flush=True)
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--cost-only", action="store_true", help="only the recognition's cost")
    parser.add_argument("--rows", type=int, default=200_000, help="rows of the cost's problems")
    parser.add_argument("--features", type=int, default=50, help="features of the same")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}, {os.cpu_count()} cores", flush=True)
    table = [] if args.cost_only else compare()
    cost = recognition_cost(args.rows, args.features)
    print(f"load average after: {os.getloadavg()}")
    print("\n".join(table))
    print()
    print("\n".join(cost))
