"""``fn``'s dense ``A``: one transposed copy of a CSC's full columns, and ``|A| u`` by blocks.

A CSC matrix whose leading columns each hold every row (the ridge dual's ``[X, 1]' D``) is, in
those columns, a dense array stored column by column: ``fn`` copies that block with one
transpose instead of scipy's Fortran-ordered ``toarray`` and a second C-ordered pass. Any
matrix must come out exactly as ``toarray`` gives it.
"""

import numpy as np
import pytest
import scipy.sparse as sp

from optframe.solvers import _fn_core
from optframe.solvers._fn_core import BoxLP
from optframe.solvers.fn import dense_rows


def test_a_csc_becomes_the_same_c_ordered_array_whatever_its_pattern():
    rng = np.random.default_rng(1)
    full = rng.normal(size=(5, 30))
    holes = full.copy()
    holes[2, 3] = 0.0  # the leading block ends at column 3
    holes[:, 20:] = 0.0
    holes[1, 25] = 4.0
    tail = np.hstack([full, -np.eye(5, 3)])  # the ridge dual's -z columns after the full ones
    unsorted = sp.csc_array(full)
    unsorted.indices = unsorted.indices.copy()
    unsorted.indices[:5] = unsorted.indices[:5][::-1]
    unsorted.data[:5] = unsorted.data[:5][::-1]
    unsorted.has_sorted_indices = False
    # every column has five entries, but column 0 holds row 0 twice and no row 4
    twice = sp.csc_array((np.arange(1.0, 151.0), np.r_[[0, 0, 1, 2, 3], np.tile(np.arange(5), 29)],
                          np.arange(0, 151, 5)), shape=(5, 30))  # fmt: skip
    for A in (sp.csc_array(full), sp.csc_array(holes), sp.csc_array(tail), unsorted, twice,
              sp.csc_array((4, 0)), sp.csc_array((0, 4))):  # fmt: skip
        out = dense_rows(A)
        assert out.flags.c_contiguous
        assert not np.shares_memory(out, A.data)
        np.testing.assert_array_equal(out, A.toarray())


@pytest.mark.parametrize("block", [7, 16_384])
def test_abs_times_by_blocks_is_the_whole_product(monkeypatch, block):
    monkeypatch.setattr(_fn_core, "NORMAL_BLOCK", block)
    rng = np.random.default_rng(0)
    A, u = rng.normal(size=(4, 50)), rng.uniform(0.0, 3.0, 50)
    for matrix in (A, sp.csr_array(A)):
        lp = BoxLP(matrix, np.zeros(4), np.zeros(50), np.ones(50), np.zeros(50))
        np.testing.assert_allclose(lp.abs_times(u), np.abs(A) @ u, rtol=1e-13)
