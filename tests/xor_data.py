"""Two classes split by a noisy XOR of the first two features: the kernel tests' small data."""

import numpy as np
import scipy.sparse as sp

from optframe.data import Dataset


def xor_data(m: int = 80, seed: int = 0, sparse: bool = False, d: int = 3) -> Dataset:
    """``m`` points in ``d >= 3`` dimensions; sparse: entries below 0.6 in size set to 0 (CSR)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] * X[:, 1] + 0.4 * X[:, 2] + 0.3 * rng.normal(size=m) > 0, 1.0, -1.0)
    if sparse:
        X[np.abs(X) < 0.6] = 0.0
        X = sp.csr_array(X)
    return Dataset(X=X, y=y)
