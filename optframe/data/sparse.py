"""Sparse matrices in the form every consumer accepts: CSR, float64, 32-bit indices where they fit.

scipy builds sparse matrices with 64-bit ``indices`` and ``indptr`` more often than not (readers,
slicing, products), while scikit-learn's libsvm and liblinear wrappers (``SVC``, ``LinearSVC``)
accept 32-bit index arrays only. :func:`as_csr` gives a matrix both accept.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

_INT32_MAX = int(np.iinfo(np.int32).max)


def as_csr(X: Any) -> sp.csr_array:
    """Return ``X`` as a float64 CSR array with summed duplicates and sorted indices.

    ``indices`` and ``indptr`` are int32 when the number of columns and of stored entries fit in
    32 bits (always, for the benchmark sets), int64 otherwise. The caller's matrix is never
    modified in place; its value arrays may be shared when it is already canonical CSR float64.

    Parameters
    ----------
    X : scipy sparse matrix or array
        Any sparse format.

    Returns
    -------
    scipy.sparse.csr_array
        The same matrix.
    """
    X = sp.csr_array(X, dtype=np.float64)
    if not X.has_canonical_format:
        X = X.copy()  # the caller's arrays are shared until here
        X.sum_duplicates()  # also sorts the indices
    if X.nnz <= _INT32_MAX and X.shape[1] <= _INT32_MAX:
        indices = X.indices.astype(np.int32, copy=False)
        indptr = X.indptr.astype(np.int32, copy=False)
        X = sp.csr_array((X.data, indices, indptr), shape=X.shape, copy=False)
        # scipy may re-choose the index type while building; set the arrays as given.
        X.indices, X.indptr = indices, indptr
    return X
