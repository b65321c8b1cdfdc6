"""A solver-independent simplex basis, by the formulation's named blocks.

Back-ends that can start from a basis (``Backend.warm_starts``) return the final one in
``BackendResult.basis`` and accept one in ``SolveOptions.start``. Naming the blocks after the
formulation's variables and constraints lets a driver carry a basis from one problem to a
related one (AID maps the blocks indexed by aggregated samples to the split clusters).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray


class BasisStatus(enum.IntEnum):
    """Status of a column or row: HiGHS's codes (``HighsBasisStatus``)."""

    LOWER = 0
    BASIC = 1
    UPPER = 2
    ZERO = 3
    NONBASIC = 4


@dataclass(frozen=True)
class Basis:
    """Basis status codes (:class:`BasisStatus`) per named variable block and constraint block.

    Parameters
    ----------
    variables, constraints : Mapping[str, ndarray of int8]
        One status per entry of each of the formulation's named handles.
    """

    variables: Mapping[str, NDArray[np.int8]]
    constraints: Mapping[str, NDArray[np.int8]]

    def refine(self, parent: NDArray[np.int64], n_parents: int) -> Basis:
        """Carry the basis to a problem whose aggregated samples were split.

        Every block with one entry per old sample (length ``n_parents``) takes, for new sample
        ``j``, the status of its ``parent[j]``; when a basic entry has several children, the first
        stays basic and the others start at their lower bound, so the number of basic entries (one
        per row) is kept. Other blocks are kept as they are.
        """
        parent = np.asarray(parent, dtype=np.int64)
        first = np.zeros(parent.size, dtype=bool)
        first[np.unique(parent, return_index=True)[1]] = True

        def carry(block: NDArray[np.int8]) -> NDArray[np.int8]:
            if block.size != n_parents:
                return block
            child = block[parent].copy()
            child[(child == BasisStatus.BASIC) & ~first] = BasisStatus.LOWER
            return child

        return Basis(
            {name: carry(block) for name, block in self.variables.items()},
            {name: carry(block) for name, block in self.constraints.items()},
        )
