"""PrimalNewton against DCD on L2 logistic regression without intercept, by size.

The first 1,000 to 30,000 rows of a9a and ijcnn1, C = 1, one thread; both drivers warmed up,
then five rounds alternating them; medians; every run must be certified ``optimal``. This is
what ``driver="auto"``'s rule for the logistic loss rests on (``optframe.drivers.auto``).

    python docs/results/logistic_crossover.py
"""

from __future__ import annotations

import os
import time

import numpy as np

import optframe as of
from optframe.data import load_dataset
from optframe.drivers import DCD, PrimalNewton
from optframe.losses import Logistic
from optframe.models import EmpiricalRisk
from optframe.penalties import L2


def main(rounds: int = 5) -> None:
    """Print one line per data set and size: the medians and Newton's time over DCD's."""
    print(f"load average before: {os.getloadavg()}")
    for name in ("a9a", "ijcnn1"):
        full = load_dataset(name)
        for n in (1_000, 3_000, 10_000, 30_000):
            data = full.subset(np.arange(min(n, full.n_samples)))
            model = EmpiricalRisk(data, Logistic(), penalty=L2(), C=1.0, fit_intercept=False)
            drivers = {"dcd": DCD(), "newton": PrimalNewton()}
            for driver in drivers.values():
                of.solve(model, driver=driver, threads=1)  # compiled kernels, caches
            seconds: dict[str, list[float]] = {key: [] for key in drivers}
            for _ in range(rounds):
                for key, driver in drivers.items():
                    tick = time.perf_counter()
                    result = of.solve(model, driver=driver, threads=1)
                    seconds[key].append(time.perf_counter() - tick)
                    assert result.status is of.Status.OPTIMAL, result.summary()
            dcd, newton = (float(np.median(seconds[key])) for key in ("dcd", "newton"))
            print(f"{name} {n}: DCD {dcd:.4f} s, Newton {newton:.4f} s, Newton / DCD "
                  f"{newton / dcd:.2f}", flush=True)  # fmt: skip
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
