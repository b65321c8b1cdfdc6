"""AID on Dask: the scaling plot and the billion-row projection, from the recorded runs.

The records are ``aid_dask_runs.jsonl`` next to this script, one JSON object a line, of three
kinds:

* ``bench``: the JSON record that ``aid_dask_bench.py`` printed for one run (both modes), with the
  run's arguments (rows, chunk rows, two workers) and the load average just before it;
* ``profile``: one Dask solve of at most 10^6 rows timed phase by phase (written by ``--profile``:
  per iteration the centroid pass, the evaluation pass, the client's partition and the HiGHS solve;
  per task kind the workers' compute seconds, from Dask's task stream);
* ``lp``: one LAD LP solved whole by HiGHS (the aggregated problem with one cluster per sample),
  by the simplex and by the interior point (written by ``--lp``).

    cd docs/results
    python aid_dask_plot.py                        # aid_dask_scaling.png, the projection tables
    python aid_dask_plot.py --profile --rows 1000000 --workers 1 >> aid_dask_runs.jsonl
    python aid_dask_plot.py --lp 50000 100000 200000 >> aid_dask_runs.jsonl
    python aid_dask_plot.py --profile --scheduler tcp://host:8786 --rows 100000000 \
        --chunk-rows 1000000                        # the same profile on a real cluster

The projection (``docs/results/aid_dask_projection.md`` explains it) takes every constant from
these records; the assumptions that no record holds are the ``ASSUMED`` values below.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from pathlib import Path
from typing import Any

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402 (after the thread settings)

HERE = Path(__file__).resolve().parent
RECORDS = HERE / "aid_dask_runs.jsonl"
FIGURE = HERE / "aid_dask_scaling.png"

# What no record measures, stated in the projection page.
ASSUMED = {
    "iterations": 12,  # the recorded runs took 12, 12 and 11
    "chunk_rows": 1_000_000,
    "features": 20,
    "task_overhead_s": 1e-3,  # distributed's documentation: about 1 ms per task
    "client_link_bytes_s": 1.25e9,  # a 10 Gb/s link between the workers and the client
    "tree_pass_rows": 3,  # a nearest-center search by a tree: as dear as this many data passes
}
MERGE_FAN_IN = 8  # optframe.drivers.aid_dask.MERGE_FAN_IN


# ------------------------------------------------------------------------------ records
def load(path: Path = RECORDS) -> list[dict[str, Any]]:
    """The records, in file order."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def of_kind(records: list[dict], kind: str) -> list[dict]:
    """The records of one kind (``bench``, ``profile`` or ``lp``)."""
    return [r for r in records if r["kind"] == kind]


# ------------------------------------------------------------------------------- fits
def _loglog(x: Any, y: Any) -> tuple[float, float]:
    """``(coefficient, exponent)`` of ``y = c x^e`` by least squares on the logs."""
    exponent, log_c = np.polyfit(np.log(x), np.log(y), 1)
    return float(math.exp(log_c)), float(exponent)


def _fit_lp(sequences: list[list[int]], totals: list[float]) -> tuple[float, float]:
    """``t(K) = a (K / 10^4)^b`` per aggregated solve, fitted to the summed inner seconds."""
    from scipy.optimize import least_squares

    seqs = [np.asarray(s, dtype=float) / 1e4 for s in sequences]
    logs = np.log(np.asarray(totals, dtype=float))

    def residual(p: Any) -> Any:
        return np.log([math.exp(p[0]) * np.sum(s ** p[1]) for s in seqs]) - logs

    found = least_squares(residual, [0.0, 1.5])
    return float(math.exp(found.x[0])), float(found.x[1])


def entries(k: Any, n: float, chunks: float) -> Any:
    """Rows of the split's statistics (one per cluster and chunk holding members of it).

    Members of a cluster spread evenly over the chunks (the chunks are alike): a cluster of
    ``n / K`` rows is present in a chunk with probability ``1 - exp(-n / (K C))``.
    """
    k = np.asarray(k, dtype=float)
    return k * chunks * -np.expm1(-n / (k * chunks))


def constants(records: list[dict]) -> dict[str, Any]:
    """Every constant of the projection, from the records."""
    bench = of_kind(records, "bench")
    first = {r["rows"]: r for r in reversed(bench)}  # repetitions share their clusters
    sizes = sorted(first)
    k_coef, k_exp = _loglog(sizes, [first[s]["dask"]["clusters"][-1] for s in sizes])
    longest = max(bench, key=lambda r: r["rows"])
    out: dict[str, Any] = {
        "k_coef": k_coef,
        "k_exp": k_exp,
        "iterations": {r["rows"]: r["dask"]["iterations"] for r in bench},
        "shape_rows": longest["rows"],
        "shape": longest["dask"]["clusters"],
    }
    for mode in ("memory", "dask"):
        out[f"lp_{mode}"] = _fit_lp(
            [r[mode]["clusters"] for r in bench], [r[mode]["inner_seconds"] for r in bench]
        )
    out["lp_all"] = _fit_lp(
        [r[m]["clusters"] for r in bench for m in ("memory", "dask")],
        [r[m]["inner_seconds"] for r in bench for m in ("memory", "dask")],
    )
    # client memory against the final K; worker memory against the rows each worker held
    final_k = [r["dask"]["clusters"][-1] for r in bench]
    client = np.polyfit(final_k, [r["dask"]["client_peak_mb"] for r in bench], 1)
    out["client_mb_per_cluster"], out["client_base_mb"] = float(client[0]), float(client[1])
    held = [r["rows"] / r["workers"] for r in bench]
    worker = np.polyfit(held, [max(r["dask"]["worker_peak_mb"]) for r in bench], 1)
    out["worker_bytes_per_row"], out["worker_fit_base_mb"] = (
        float(worker[0] * 2**20),
        float(worker[1]),
    )

    profiles = [
        p for p in of_kind(records, "profile") if p["rows"] == 1_000_000 and p["workers"] == 1
    ]
    if profiles:

        def mean(values: list[float]) -> float:
            return float(np.mean(values))

        def compute(p: dict, *kinds: str) -> float:
            return sum(p["tasks"].get(k, {}).get("compute_seconds", 0.0) for k in kinds)

        out["profiles"] = len(profiles)
        pairs = [3 * p["rows"] * p["initial_clusters"] for p in profiles]
        out["c_pair"] = mean(
            [compute(p, "assign", "initial_keys") / q for p, q in zip(profiles, pairs, strict=True)]
        )
        out["c_row"] = mean(
            [
                compute(p, "centroid_part", "evaluate", "relabel") / (p["iterations"] * p["rows"])
                for p in profiles
            ]
        )
        out["c_merge"] = mean(
            [compute(p, "merge") / sum(i["entries"] for i in p["per_iteration"]) for p in profiles]
        )
        out["c_cert"] = mean(
            [p["certificate_seconds"] * p["workers"] / p["rows"] for p in profiles]
        )
        out["c_entry"] = mean(
            [
                sum(i["partition_seconds"] for i in p["per_iteration"])
                / sum(i["entries"] for i in p["per_iteration"])
                for p in profiles
            ]
        )
        out["c_cluster"] = mean(
            [
                sum(i["client_other_seconds"] for i in p["per_iteration"])
                / sum(i["clusters"] for i in p["per_iteration"])
                for p in profiles
            ]
        )
        # measured split rows over the even-spread count, iteration by iteration: 2 while every
        # cluster straddles (two pieces each), under 1 at the end (split clusters are small)
        out["entries_ratio"] = [
            mean(
                [
                    p["per_iteration"][i]["entries"]
                    / entries(p["per_iteration"][i]["clusters"], p["rows"], p["chunks"])
                    for p in profiles
                ]
            )
            for i in range(min(len(p["per_iteration"]) for p in profiles))
        ]
    lp = of_kind(records, "lp")
    for method in ("simplex", "ipm"):
        mine = [r for r in lp if r["method"] == method]
        if len(mine) >= 2:
            out[f"lp_{method}_fit"] = _loglog(
                [r["rows"] for r in mine], [r["solve_seconds"] for r in mine]
            )
    return out


# ------------------------------------------------------------------------- projection
def clusters(c: dict, n: float) -> Any:
    """The cluster counts of the projected iterations.

    The longest run's counts scaled to the fitted final K(n), padded to ``ASSUMED["iterations"]``
    with the last; at least the initial K0 = n / 2000 doubled in each of the first four
    iterations (the recorded runs split every cluster in their first three or four), and never
    decreasing.
    """
    shape = np.asarray(c["shape"], dtype=float) / c["shape"][-1]
    if shape.size < ASSUMED["iterations"]:
        shape = np.concatenate([shape, np.ones(ASSUMED["iterations"] - shape.size)])
    final = c["k_coef"] * n ** c["k_exp"]
    ks = shape * final
    k0 = math.ceil(5e-4 * n)
    for i in range(ks.size):
        floor = k0 * 2**i if i < 4 else ks[i - 1]
        ks[i] = min(final, max(ks[i], floor))
    return ks


def merge_peak_bytes(k: float, n: float, chunks: int, m: int) -> tuple[float, float]:
    """The memory of the centroid tree's largest merge task: ``(low, high)``, bytes.

    The task holds its inputs, their stacked copy and its output; ``chunks`` chunks are merged
    ``MERGE_FAN_IN`` at a time. High: every cluster's members spread evenly over the chunks, so
    that a part covering a few chunks already holds nearly every cluster. Low: the last merge's
    inputs hold each cluster once (clusters of one or two rows), ``3 K m`` numbers with the
    output.
    """
    rows_per_cluster = n / k
    covered, parts, peak = 1, chunks, 0.0
    while parts > 1:
        fan = min(MERGE_FAN_IN, parts)
        part_rows = k * -math.expm1(-rows_per_cluster * covered / chunks)
        covered *= fan
        out_rows = k * -math.expm1(-rows_per_cluster * min(covered, chunks) / chunks)
        peak = max(peak, (2 * fan * part_rows + out_rows) * m * 8)
        parts = math.ceil(parts / fan)
    return 3 * k * m * 8.0, peak


def project(c: dict, n: float, workers: int, lp: str = "lp_all") -> dict[str, float]:
    """Seconds and memory of a solve of ``n`` rows on ``workers`` single-thread workers."""
    m = ASSUMED["features"]
    chunks = math.ceil(n / ASSUMED["chunk_rows"])
    k0 = math.ceil(5e-4 * n)  # default_cluster_counts: 0.05% of the samples
    ks = clusters(c, n)
    ratio = np.asarray(c["entries_ratio"], dtype=float)
    ratio = np.concatenate([ratio, np.full(max(0, ks.size - ratio.size), ratio[-1])])[: ks.size]
    es = np.minimum(n, ratio * entries(ks, n, chunks))
    a, b = c[lp]
    per_iteration_tasks = chunks * (4 + 1 / (MERGE_FAN_IN - 1)) + 1
    tasks = ks.size * per_iteration_tasks + 17 * chunks
    out = {
        "n": n,
        "workers": workers,
        "chunks": chunks,
        "k0": k0,
        "k_final": float(ks[-1]),
        "entries_final": float(es[-1]),
        "kmeans_s": 3 * n * k0 * c["c_pair"] / workers,
        "passes_s": float(np.sum(c["c_row"] * n + c["c_merge"] * es)) / workers,
        "certificate_s": c["c_cert"] * n / workers,
        "scheduler_s": tasks * ASSUMED["task_overhead_s"],
        "lp_s": float(np.sum(a * (ks / 1e4) ** b)),
        "client_s": float(np.sum(c["c_cluster"] * ks + c["c_entry"] * es)),
        "network_s": float(np.sum(ks * m * 8 + es * 24)) / ASSUMED["client_link_bytes_s"],
        "lp_last_s": float(a * (ks[-1] / 1e4) ** b),
    }
    out["workers_s"] = out["kmeans_s"] + out["passes_s"] + out["certificate_s"]
    out["client_total_s"] = out["lp_s"] + out["client_s"] + out["network_s"]
    out["total_s"] = out["workers_s"] + out["client_total_s"] + out["scheduler_s"]
    rows_each = n / workers
    out["worker_data_gb"] = rows_each * (m + 1) * 8 / 2**30
    out["worker_gb"] = (
        c["worker_fit_base_mb"] * 2**20 + c["worker_bytes_per_row"] * rows_each
    ) / 2**30
    low, high = merge_peak_bytes(ks[-1], n, chunks, m)
    out["merge_low_gb"], out["merge_gb"] = low / 2**30, high / 2**30
    # the same solve with the initial nearest-center search by a tree (a few data passes) and
    # the aggregated LPs by HiGHS's interior point (cold, as fitted to the whole LPs)
    tree_s = ASSUMED["tree_pass_rows"] * c["c_row"] * n / workers
    out["fixed_kmeans_total_s"] = out["total_s"] - out["kmeans_s"] + tree_s
    if "lp_ipm_fit" in c:
        coef, exp = c["lp_ipm_fit"]
        out["ipm_s"] = float(np.sum(coef * ks**exp))
        out["fixed_both_total_s"] = out["fixed_kmeans_total_s"] - out["lp_s"] + out["ipm_s"]
    out["client_gb"] = (
        c["client_base_mb"] * 2**20 + c["client_mb_per_cluster"] * 2**20 * ks[-1] + 40 * es[-1]
    ) / 2**30
    return out


def check(c: dict, records: list[dict]) -> list[dict[str, float]]:
    """The model at the recorded sizes (two workers, the recorded chunks) against the records."""
    rows = []
    for r in of_kind(records, "bench"):
        saved = dict(ASSUMED)
        ASSUMED["chunk_rows"] = r["chunk_rows"]
        ASSUMED["iterations"] = r["dask"]["iterations"]
        p = project(c, r["rows"], r["workers"])
        ASSUMED.update(saved)
        rows.append(
            {"rows": r["rows"], "model_s": p["total_s"], "dask_s": r["dask"]["solve_seconds"]}
        )
    return rows


# ------------------------------------------------------------------------------- plot
def _ticks(axes: Any, values: list[float]) -> None:
    """Plain-number ticks on a log axis (only those inside the data's range)."""
    from matplotlib.ticker import FixedLocator, NullLocator

    low, high = axes.get_ylim()
    shown = [v for v in values if low <= v <= high]
    axes.yaxis.set_major_locator(FixedLocator(shown))
    axes.yaxis.set_minor_locator(NullLocator())
    axes.set_yticklabels([f"{v:g}" for v in shown])
    axes.xaxis.set_minor_locator(NullLocator())


def plot(records: list[dict], out: Path = FIGURE) -> None:
    """Seconds and peak memory against rows, log-log, in memory and on Dask."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    bench = of_kind(records, "bench")
    sizes = sorted({r["rows"] for r in bench})

    def at(size: int, get: Any) -> list[float]:
        return [get(r) for r in bench if r["rows"] == size]

    fig = Figure(figsize=(10, 4.2))
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2)
    series = [
        ("in memory: solve", lambda r: r["memory"]["solve_seconds"], "C0", "o", "-"),
        ("Dask, 2 workers: solve", lambda r: r["dask"]["solve_seconds"], "C1", "s", "-"),
        ("in memory: HiGHS solves", lambda r: r["memory"]["inner_seconds"], "C0", "o", ":"),
        ("Dask: HiGHS solves", lambda r: r["dask"]["inner_seconds"], "C1", "s", ":"),
    ]
    for label, get, colour, marker, style in series:
        median = [float(np.median(at(s, get))) for s in sizes]
        left.plot(sizes, median, style, color=colour, marker=marker, label=label)
        for s in sizes:
            values = at(s, get)
            if len(values) > 1:
                left.plot([s] * len(values), values, marker, color=colour, alpha=0.35, ms=4)
    start = float(np.median(at(sizes[0], lambda r: r["dask"]["solve_seconds"])))
    left.plot(
        sizes, [start * s / sizes[0] for s in sizes], "--", color="0.6", lw=1, label="\u221d rows"
    )
    left.set_title("Seconds of of.solve (LAD, 20 features)")
    left.set_ylabel("seconds")
    memory = [
        ("in memory: the process", lambda r: r["memory"]["client_peak_mb"], "C0", "o", "-"),
        ("Dask: largest worker", lambda r: max(r["dask"]["worker_peak_mb"]), "C1", "s", "-"),
        ("Dask: client", lambda r: r["dask"]["client_peak_mb"], "C2", "^", "-"),
        ("X (8 n m bytes, both workers)", lambda r: r["rows"] * 20 * 8 / 2**20, "0.5", "", "--"),
    ]
    for label, get, colour, marker, style in memory:
        median = [float(np.median(at(s, get))) for s in sizes]
        right.plot(sizes, median, style, color=colour, marker=marker, label=label)
    right.set_title("Peak resident memory")
    right.set_ylabel("MB")
    ticks = ([2, 5, 10, 20, 50, 100, 200, 500], [100, 200, 500, 1000, 2000, 5000])
    for axes, values in zip((left, right), ticks, strict=True):
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("rows")
        axes.set_xticks(sizes, [f"{s / 1e6:g}M" for s in sizes])
        _ticks(axes, values)
        axes.grid(True, which="major", alpha=0.3)
        axes.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


# ------------------------------------------------------------------------------ tables
def _s(seconds: float) -> str:
    if seconds < 100:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    if seconds < 3 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def report(records: list[dict]) -> str:
    """The constants, the check against the records, and the projection, as Markdown."""
    c = constants(records)
    lines = ["constants:"]
    for key, value in c.items():
        if key not in ("shape", "iterations"):
            lines.append(f"  {key} = {value}")
    lines.append(f"  iterations = {c['iterations']}")
    lines.append("\nthe model at the recorded sizes (2 workers) against the recorded Dask seconds:")
    for row in check(c, records):
        lines.append(
            f"  {row['rows']:>10,d}: model {row['model_s']:.1f} s, recorded {row['dask_s']:.1f} s"
        )
    lines.append("")
    head = (
        "| rows | workers | K0, K (final) | k-means | data passes | certificate | scheduler "
        "| HiGHS on the client | client bookkeeping, transfers | total |"
    )
    lines += [head, "|" + "---|" * 10]
    for n in (1e8, 1e9):
        for w in (16, 64, 256):
            p = project(c, n, w)
            lines.append(
                f"| {n:.0e} | {w} | {p['k0'] / 1e3:,.0f}k, {p['k_final'] / 1e6:.2f}M "
                f"| {_s(p['kmeans_s'])} | {_s(p['passes_s'])} | {_s(p['certificate_s'])} "
                f"| {_s(p['scheduler_s'])} | {_s(p['lp_s'])} "
                f"| {_s(p['client_s'] + p['network_s'])} | {_s(p['total_s'])} |"
            )
    lines += [
        "",
        "| rows | workers | X per worker | worker (data, labels) | largest merge "
        "| client | split rows to the client |",
        "|" + "---|" * 7,
    ]
    for n in (1e8, 1e9):
        for w in (16, 64, 256):
            p = project(c, n, w)
            lines.append(
                f"| {n:.0e} | {w} | {p['worker_data_gb']:.1f} GB | {p['worker_gb']:.1f} GB "
                f"| {p['merge_low_gb']:.1f} to {p['merge_gb']:.1f} GB | {p['client_gb']:.0f} GB "
                f"| {p['entries_final'] / 1e6:,.0f}M |"
            )
    lines += [
        "",
        "| rows | workers | as measured | nearest center by a tree | and HiGHS's IPM |",
        "|" + "---|" * 5,
    ]
    for n in (1e8, 1e9):
        for w in (16, 64, 256):
            p = project(c, n, w)
            both, ipm = p.get("fixed_both_total_s", math.nan), p.get("ipm_s", math.nan)
            lines.append(
                f"| {n:.0e} | {w} | {_s(p['total_s'])} | {_s(p['fixed_kmeans_total_s'])} "
                f"| {_s(both)} (HiGHS {_s(ipm)}) |"
            )
    lines.append("\nHiGHS time with each fit (memory runs, Dask runs, both):")
    for n in (1e8, 1e9):
        parts = []
        for fit in ("lp_memory", "lp_dask", "lp_all"):
            p = project(c, n, 64, lp=fit)
            parts.append(f"{fit} {_s(p['lp_s'])} (last {_s(p['lp_last_s'])})")
        lines.append(f"  {n:.0e}: " + ", ".join(parts))
    for method in ("simplex", "ipm"):
        key = f"lp_{method}_fit"
        if key in c:
            coef, exp = c[key]
            at = [coef * k**exp for k in (clusters(c, 1e8)[-1], clusters(c, 1e9)[-1])]
            lines.append(
                f"  whole LP, {method}: {coef:.3g} K^{exp:.2f} s; at the final K of 1e8 and 1e9: "
                f"{_s(at[0])}, {_s(at[1])}"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- measuring
def _peak_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def profile(
    rows: int, chunk_rows: int, workers: int, seed: int, scheduler: str | None = None
) -> dict[str, Any]:
    """One Dask solve timed phase by phase.

    On a local cluster of ``workers`` single-thread processes, or on the cluster whose scheduler
    is at ``scheduler`` (``tcp://host:8786``).
    """
    import contextlib
    import logging
    import time

    from dask.utils import key_split
    from distributed import Client, LocalCluster, get_task_stream

    import optframe as of
    from optframe.data import make_lad_dask
    from optframe.drivers import AggregateDisaggregate, aid_dask
    from optframe.models import DaskLADRegression

    log: list[tuple[str, float, int]] = []

    def timed(name: str) -> Any:
        inner = getattr(aid_dask._Chunked, name)

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            tick = time.perf_counter()
            out = inner(self, *args, **kwargs)
            stats = args[1] if name == "partition" and len(args) > 1 else None
            size = 0 if stats is None else sum(len(s[-3]) for s in stats)
            log.append((name, time.perf_counter() - tick, size))
            return out

        return wrapper

    for name in ("centroids", "evaluate", "partition"):
        setattr(aid_dask._Chunked, name, timed(name))
    load = os.getloadavg()
    with contextlib.ExitStack() as stack:
        if scheduler:
            client = stack.enter_context(Client(scheduler))
            workers = len(client.scheduler_info()["workers"])
        else:
            cluster = stack.enter_context(
                LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=":0",
                    silence_logs=logging.ERROR,
                )
            )
            client = stack.enter_context(Client(cluster))
        data = make_lad_dask(rows, ASSUMED["features"], chunk_rows, random_state=seed)
        with get_task_stream(client) as stream:
            tick = time.perf_counter()
            result = of.solve(DaskLADRegression(data), AggregateDisaggregate(), backend="highs")
            seconds = time.perf_counter() - tick
        tasks: dict[str, dict[str, float]] = {}
        for task in stream.data:
            kind = key_split(task["key"]).lstrip("_")
            entry = tasks.setdefault(
                kind, {"count": 0, "compute_seconds": 0.0, "transfer_seconds": 0.0}
            )
            entry["count"] += 1
            for part in task["startstops"]:
                what = "compute_seconds" if part["action"] == "compute" else "transfer_seconds"
                entry[what] += part["stop"] - part["start"]
        worker_peaks = sorted(client.run(_peak_mb).values())
        chunks = data.n_chunks
    loop = [entry for entry in log if not (entry[0] == "partition" and entry[2] == 0)]
    per_iteration = []
    previous = result.timings.build
    for i, record in enumerate(result.history):
        step = {name: (t, size) for name, t, size in loop[3 * i : 3 * i + 3]}
        wall = record.seconds - previous
        previous = record.seconds
        inner = record.extras["inner_seconds"]
        parts = step["centroids"][0] + step["evaluate"][0] + step["partition"][0]
        per_iteration.append(
            {
                "clusters": record.extras["clusters"],
                "seconds": wall,
                "inner_seconds": inner,
                "centroids_seconds": step["centroids"][0],
                "evaluate_seconds": step["evaluate"][0],
                "partition_seconds": step["partition"][0],
                "client_other_seconds": max(0.0, wall - parts - inner),
                "entries": step["partition"][1],
            }
        )
    return {
        "kind": "profile",
        "rows": rows,
        "features": ASSUMED["features"],
        "chunk_rows": chunk_rows,
        "chunks": chunks,
        "workers": workers,
        "load_before": [round(v, 2) for v in load],
        "status": result.status.value,
        "iterations": result.iterations,
        "initial_clusters": result.history[0].extras["clusters"],
        "solve_seconds": seconds,
        "clustering_seconds": result.timings.build,
        "certificate_seconds": result.stats.get("certificate_seconds"),
        "passes": result.stats.get("passes"),
        "per_iteration": per_iteration,
        "tasks": tasks,
        "client_peak_mb": _peak_mb(),
        "worker_peak_mb": worker_peaks,
    }


def lp_check(rows: int, seed: int) -> list[dict[str, Any]]:
    """LAD of ``rows`` rows solved whole by HiGHS: simplex (its default) and interior point."""
    import optframe as of
    from optframe.data import Dataset
    from optframe.data.dask import lad_chunk
    from optframe.drivers import Direct
    from optframe.models import LADRegression

    X, y = lad_chunk(seed, 0, rows, ASSUMED["features"])
    model = LADRegression(Dataset(X=X, y=y))
    out = []
    for method, options in (("simplex", {}), ("ipm", {"solver": "ipm"})):
        result = of.solve(model, Direct(), backend="highs", solver_options=options)
        out.append(
            {
                "kind": "lp",
                "rows": rows,
                "features": ASSUMED["features"],
                "method": method,
                "load_before": [round(v, 2) for v in os.getloadavg()],
                "status": result.status.value,
                "objective": result.objective,
                "solve_seconds": result.timings.solve,
            }
        )
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="time one Dask solve, print JSON")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2, help="of the local cluster")
    parser.add_argument("--scheduler", help="profile on this cluster (tcp://host:8786)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--lp", type=int, nargs="*", help="solve whole LAD LPs of these sizes")
    arguments = parser.parse_args()
    if arguments.profile:
        if arguments.rows > 1_000_000 and not arguments.scheduler:
            sys.exit("--profile on a local cluster is for at most 10^6 rows; give --scheduler")
        record = profile(
            arguments.rows,
            arguments.chunk_rows,
            arguments.workers,
            arguments.seed,
            arguments.scheduler,
        )
        print(json.dumps(record))
    elif arguments.lp:
        for size in arguments.lp:
            for record in lp_check(size, arguments.seed):
                print(json.dumps(record))
    else:
        everything = load()
        plot(everything)
        print(f"wrote {FIGURE.name}")
        print(report(everything))
