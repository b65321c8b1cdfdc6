r"""The kernel cache policy of SMO, Frank-Wolfe and the CVM: one budget rule, one LRU index.

A compiled driver keeps rows (SMO, the CVM's coreset) or full columns (FW, MFW, PFW, CVM's
exact passes) of its kernel matrix in one kind of store, SMO's row cache
(:func:`optframe.drivers.smo_core.row_cache`): ``slots`` arrays of ``length`` entries, the LRU
index below and each slot's filled length. :func:`cache_slots` turns a byte budget into the
number of slots, the same way for all of them, and :func:`lru_slot` decides which slot holds
which row: its own on a hit, the least recently used one on a miss. SMO's rows are over its
active positions (permuted by shrinking, float32 or float64, forgotten when positions move); the
coreset's rows grow with the coreset (completed over new members); the Frank-Wolfe columns are
full columns of :math:`\tilde K = yy^\top \circ (K + 1) + \rho I` in the points' order.

numba's cache does not track calls across modules: the compiled kernels of ``smo_core`` and
``fw_core`` keep the version of :func:`lru_slot` they were compiled with until their own file
changes, so an edit here needs those files (and ``smo_linear``) touched, or the cache cleared.
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray


def cache_slots(length: int, budget: int, entry_bytes: int) -> int:
    """The rows (or columns) of ``length`` entries that fit in ``budget`` bytes.

    Parameters
    ----------
    length : int
        Entries per row (the number of points or active positions).
    budget : int
        Bytes for the values (the driver's ``cache_bytes``).
    entry_bytes : int
        Bytes per entry (4 for float32 rows, 8 for float64, 16 with a tag per entry).

    Returns
    -------
    int
        At least two (a pair step reads two rows), at most ``length`` (the whole matrix).
    """
    return int(min(length, max(2, budget // (entry_bytes * max(length, 1)))))


@numba.njit(cache=True)
def lru_index(
    keys: int, slots: int
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Empty index arrays of an LRU cache: ``(slot_of, owner, stamp)``.

    ``slot_of[key]`` is the slot holding ``key`` (-1: none), ``owner[slot]`` the key a slot
    holds (-1: none), ``stamp[slot]`` the clock of its last use.
    """
    return (
        np.full(keys, -1, dtype=np.int64),
        np.full(slots, -1, dtype=np.int64),
        np.zeros(slots, dtype=np.int64),
    )


@numba.njit(cache=True)
def lru_slot(key, slot_of, owner, stamp, clock):
    """The slot of ``key`` and whether it was cached there already.

    On a miss the least recently used slot is taken from its owner (which is then uncached);
    either way the slot is stamped with ``clock``. The caller fills a missed slot.
    """
    s = slot_of[key]
    if s >= 0:
        stamp[s] = clock
        return s, True
    s = 0
    oldest = stamp[0]
    for t in range(1, stamp.shape[0]):
        if stamp[t] < oldest:
            oldest = stamp[t]
            s = t
    if owner[s] >= 0:
        slot_of[owner[s]] = -1
    owner[s] = key
    slot_of[key] = s
    stamp[s] = clock
    return s, False


@numba.njit(cache=True)
def clear_cache(slot_of, owner, stamp):
    """Forget every cached row (after positions moved or the active set grew)."""
    slot_of[:] = -1
    owner[:] = -1
    stamp[:] = 0
