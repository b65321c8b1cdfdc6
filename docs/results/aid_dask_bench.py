"""AggregateDisaggregate on LAD data in memory and on a local Dask cluster: seconds, memory, result.

The data (``n`` rows x ``m`` features, LAD "Set A" distributions) are generated chunk by chunk
from a seed (:func:`optframe.data.dask.lad_chunk`): on the workers for the Dask run, where they are
never held whole; concatenated in one process for the in-memory run (the same numbers). Each mode
runs in its own process so that its peak memory is its own.

    python docs/results/aid_dask_bench.py --rows 1000000               # both modes, the table
    python docs/results/aid_dask_bench.py --rows 1000000 --mode dask   # one mode, JSON

Threads: the command sets one BLAS/OpenMP thread per process (the two workers have one thread
each, the client's back-end runs on one), so both runs use the same compute.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")


def _peak_mb() -> float:
    """The peak resident memory of the calling process, MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _summary(result: Any, seconds: float) -> dict[str, Any]:
    return {
        "status": result.status.value,
        "objective": result.objective,
        "bound": result.bound,
        "gap": result.gap,
        "iterations": result.iterations,
        "clusters": [r.extras["clusters"] for r in result.history],
        "solve_seconds": seconds,
        "inner_seconds": sum(r.extras["inner_seconds"] for r in result.history),
        "certificate_seconds": result.stats.get("certificate_seconds"),
        "passes": result.stats.get("passes"),
    }


def run_memory(rows: int, m: int, chunk_rows: int, seed: int) -> dict[str, Any]:
    """Generate the chunks in this process, concatenate them, solve with AID."""
    import numpy as np

    import optframe as of
    from optframe.data import Dataset
    from optframe.data.dask import lad_chunk
    from optframe.drivers import AggregateDisaggregate
    from optframe.models import LADRegression

    tick = time.perf_counter()
    parts = [
        lad_chunk(seed, i, min(chunk_rows, rows - lo), m)
        for i, lo in enumerate(range(0, rows, chunk_rows))
    ]
    data = Dataset(X=np.vstack([p[0] for p in parts]), y=np.concatenate([p[1] for p in parts]))
    del parts
    generated = time.perf_counter() - tick
    model = LADRegression(data)
    tick = time.perf_counter()
    result = of.solve(model, AggregateDisaggregate(), backend="highs")
    out = _summary(result, time.perf_counter() - tick)
    out |= {"mode": "memory", "data_seconds": generated, "client_peak_mb": _peak_mb()}
    return out


def run_dask(rows: int, m: int, chunk_rows: int, seed: int, workers: int) -> dict[str, Any]:
    """A local cluster of ``workers`` processes x 1 thread; the data generated on it."""
    from distributed import Client, LocalCluster

    import optframe as of
    from optframe.data import make_lad_dask
    from optframe.drivers import AggregateDisaggregate
    from optframe.models import DaskLADRegression

    with (
        LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=":0",
            silence_logs=logging.ERROR,
        ) as cluster,
        Client(cluster) as client,
    ):
        tick = time.perf_counter()
        data = make_lad_dask(rows, m, chunk_rows, random_state=seed)  # persisted, validated
        generated = time.perf_counter() - tick
        model = DaskLADRegression(data)
        tick = time.perf_counter()
        result = of.solve(model, AggregateDisaggregate(), backend="highs")
        out = _summary(result, time.perf_counter() - tick)
        peaks = client.run(_peak_mb)
        memory = {
            address: info["metrics"]["memory"] / 2**20
            for address, info in client.scheduler_info()["workers"].items()
        }
        out |= {
            "mode": "dask",
            "data_seconds": generated,
            "chunks": data.n_chunks,
            "client_peak_mb": _peak_mb(),
            "worker_peak_mb": sorted(peaks.values()),
            "worker_memory_end_mb": sorted(memory.values()),
        }
    return out


def machine() -> dict[str, Any]:
    """CPU, cores, memory and versions."""
    from importlib.metadata import version

    import dask
    import numpy as np

    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        names = [ln for ln in cpuinfo.read_text().splitlines() if ln.startswith("model name")]
        cpu = names[0].split(":", 1)[1].strip() if names else cpu
    pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(pages / 2**30, 1),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "dask": dask.__version__,
        "highspy": version("highspy"),
        "distributed": version("distributed"),
    }


def both(arguments: argparse.Namespace) -> None:
    """Each mode in a child process; print the comparison and the JSON records."""
    records = {}
    for mode in ("memory", "dask"):
        command = [
            sys.executable,
            __file__,
            "--mode",
            mode,
            "--rows",
            str(arguments.rows),
            "--features",
            str(arguments.features),
            "--chunk-rows",
            str(arguments.chunk_rows),
            "--seed",
            str(arguments.seed),
            "--workers",
            str(arguments.workers),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        records[mode] = json.loads(done.stdout.strip().splitlines()[-1])
    memory, chunked = records["memory"], records["dask"]
    relative = abs(chunked["objective"] - memory["objective"]) / abs(memory["objective"])
    same = memory["clusters"] == chunked["clusters"]
    ratio = chunked["solve_seconds"] / memory["solve_seconds"]
    print(f"rows {arguments.rows}, features {arguments.features}, {chunked['chunks']} chunks")
    for name, r in records.items():
        workers = r.get("worker_peak_mb")
        shown = "" if workers is None else f", worker peaks {[round(w) for w in workers]} MB"
        print(
            f"  {name:6s} {r['status']}, {r['iterations']} iterations, solve "
            f"{r['solve_seconds']:.1f} s (inner {r['inner_seconds']:.1f} s, certificate "
            f"{r['certificate_seconds']:.2f} s), data {r['data_seconds']:.1f} s, gap "
            f"{r['gap']:.1e}, client peak {r['client_peak_mb']:.0f} MB{shown}"
        )
    print(f"  relative difference of the objectives: {relative:.1e}; same history: {same}")
    print(f"  overhead ratio dask / memory (solve seconds): {ratio:.2f}")
    print(json.dumps({"machine": machine(), "records": records}))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--mode", choices=("both", "memory", "dask"), default="both")
    arguments = parser.parse_args()
    if arguments.mode == "both":
        both(arguments)
    elif arguments.mode == "memory":
        size = (arguments.rows, arguments.features, arguments.chunk_rows)
        record = run_memory(*size, arguments.seed)
        print(json.dumps(record))
    else:
        record = run_dask(
            arguments.rows,
            arguments.features,
            arguments.chunk_rows,
            arguments.seed,
            arguments.workers,
        )
        print(json.dumps(record))
