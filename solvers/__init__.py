"""Solver back-ends: one module per open solver.

Importing this package registers every back-end (see :mod:`optframe.registry`) without importing
any solver library: each back-end imports its solver inside ``solve``. Within a module, the
registration order is the solver's order of preference among layers.

Besides the attributes of :class:`~optframe.backend.Backend`, each back-end class sets ``duals``:
the problem classes for which its ``RawSolution.dual`` holds every named constraint (a subset of
the continuous classes in ``supports``; for other classes ``dual`` is empty). The shared helpers
and the dual sign convention are in :mod:`optframe.solvers._common`.
"""

from . import clarabel, fn, highs, osqp, piqp, scip

__all__ = ["clarabel", "fn", "highs", "osqp", "piqp", "scip"]
