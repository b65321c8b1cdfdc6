"""AggregateDisaggregate on data held in chunks by a Dask cluster: LAD regression, certified.

The data are generated chunk by chunk on the workers (``make_lad_dask``) and never held whole by
this process. AID clusters them, solves the small aggregated LP here with HiGHS, and evaluates
the objective, the loss pieces, the splits and the certificate's bound chunk by chunk on the
cluster. The same data are then rebuilt in memory (chunk by chunk, from the same seed) and solved
by the in-memory AID: the two runs agree (objective, iterations, cluster counts).

    python examples/aid_dask.py                                  # 1,000,000 x 20, local cluster
    python examples/aid_dask.py --smoke                          # 20,000 x 10, for the tests
    python examples/aid_dask.py --scheduler tcp://host:8786      # on a running cluster
    python examples/aid_dask.py --rows 10000000 --no-compare     # larger than the comparison
"""

import argparse
import logging
import time

import numpy as np

import optframe as of
from optframe.data import Dataset, make_lad_dask
from optframe.data.dask import lad_chunk
from optframe.drivers import AggregateDisaggregate
from optframe.models import DaskLADRegression, LADRegression


def connect(scheduler: str | None):
    """A client of the cluster at ``scheduler``, or of a local one (2 workers x 1 thread)."""
    from distributed import Client, LocalCluster

    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    return Client(cluster), cluster


def in_memory(rows: int, m: int, chunk_rows: int, seed: int) -> Dataset:
    """The same data, rebuilt here chunk by chunk from the seed."""
    parts = [
        lad_chunk(seed, i, min(chunk_rows, rows - lo), m)
        for i, lo in enumerate(range(0, rows, chunk_rows))
    ]
    return Dataset(X=np.vstack([p[0] for p in parts]), y=np.concatenate([p[1] for p in parts]))


def print_trace(result: of.Result) -> None:
    print("  iter  seconds  clusters   E_t (original)       bound F_t       gap")
    for record in result.history:
        extras = record.extras
        print(
            f"  {record.iteration:4d} {record.seconds:8.2f} {extras['clusters']:9d} "
            f"{extras['objective_t']:16.4f} {record.bound:15.4f} {extras['gap']:9.2e}"
        )


def main(rows: int, m: int, chunk_rows: int, scheduler: str | None, compare: bool) -> None:
    client, cluster = connect(scheduler)
    try:
        tick = time.perf_counter()
        data = make_lad_dask(rows, m, chunk_rows, random_state=0)  # generated on the workers
        print(
            f"{data}: generated and validated on the cluster in {time.perf_counter() - tick:.1f} s"
        )
        result = of.solve(DaskLADRegression(data), AggregateDisaggregate(), backend="highs")
        print_trace(result)
        print(f"  on Dask:   {result.summary()}")
        beta, truth = result.solution["beta"][:3], data.meta["coef"][:3]
        print(f"  beta[:3] = {beta.round(4)}, truth {truth.round(4)}")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    if not compare:
        return
    reference = of.solve(
        LADRegression(in_memory(rows, m, chunk_rows, 0)), AggregateDisaggregate(), backend="highs"
    )
    print(f"  in memory: {reference.summary()}")
    same = [r.extras["clusters"] for r in result.history] == [
        r.extras["clusters"] for r in reference.history
    ]
    print(f"  same iterations and cluster counts: {same}")
    difference = abs(result.objective - reference.objective) / abs(reference.objective)
    print(f"  relative difference of the objectives: {difference:.1e}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="20,000 x 10 in 4 chunks")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--features", type=int, default=20)
    parser.add_argument("--chunk-rows", type=int, default=100_000)
    parser.add_argument("--scheduler", help="a Dask scheduler's address, tcp://host:8786")
    parser.add_argument("--no-compare", action="store_true", help="skip the in-memory solve")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.rows, arguments.features, arguments.chunk_rows = 20_000, 10, 5_000
    main(
        arguments.rows,
        arguments.features,
        arguments.chunk_rows,
        arguments.scheduler,
        not arguments.no_compare,
    )
