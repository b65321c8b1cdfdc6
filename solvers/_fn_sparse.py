r"""The normal matrix :math:`A \Theta A^\top` of a sparse ``A`` with few rows, compiled.

``A`` is held by columns (CSC): column :math:`j` adds :math:`\theta_j a_j a_j^\top` to the
``rows x rows`` result, a dense symmetric array of which the upper triangle is filled. The work
is :math:`\sum_j \operatorname{nnz}(a_j)^2 / 2` multiply-adds, with no sparse product and no
count of its non-zeros first (scipy's ``A @ B`` for sparse operands): on w8a's ridge dual
(301 rows, 50,049 columns, 3.9% non-zeros) an iteration's normal matrix took 72 ms by scipy.
Compiled on first use (numba's cache on disk), never by the demo.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray


@numba.njit(cache=True, nogil=True)
def upper_normal_matrix(
    indptr: NDArray[np.int64],
    indices: NDArray[np.int64],
    data: NDArray[np.float64],
    theta: NDArray[np.float64],
    rows: int,
) -> NDArray[np.float64]:
    """The upper triangle of ``A diag(theta) A'`` for ``A`` in CSC (sorted row indices)."""
    M = np.zeros((rows, rows))
    for j in range(indptr.size - 1):
        t = theta[j]
        start, end = indptr[j], indptr[j + 1]
        for p in range(start, end):
            r = indices[p]
            v = t * data[p]
            for q in range(p, end):
                M[r, indices[q]] += v * data[q]
    return M
