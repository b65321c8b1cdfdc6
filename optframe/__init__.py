"""optframe: declare machine-learning training problems once, solve them many ways.

The front door is :func:`solve`. Models live in :mod:`optframe.models`, drivers in
:mod:`optframe.drivers`, back-ends in :mod:`optframe.solvers`, data in :mod:`optframe.data`.
"""

import optframe._numba_cache  # first: a writable numba cache before any kernel
import optframe._openmp  # noqa: F401  before OpenMP loads: idle threads sleep, not spin
from optframe.backend import Backend, BackendResult, SolveOptions
from optframe.cvxpy_problem import CvxpyProblem, from_cvxpy
from optframe.errors import (
    ConvergenceWarning,
    DataError,
    IncompatibleBackend,
    IncompatibleDriver,
    ModelError,
    OptframeError,
    SolverError,
    SolverUnavailable,
    UnknownBackend,
    UnknownDriver,
)
from optframe.kernels import RBF, Kernel, Linear, Polynomial
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution
from optframe.path import PathResult, solve_path
from optframe.result import IterationRecord, Result, Status, Timings
from optframe.solve import solve

__version__ = "0.1.0"

__all__ = [
    "RBF",
    "Backend",
    "BackendResult",
    "ConvergenceWarning",
    "CvxpyProblem",
    "DataError",
    "Formulation",
    "IncompatibleBackend",
    "IncompatibleDriver",
    "IterationRecord",
    "Kernel",
    "Linear",
    "MatrixProblem",
    "Model",
    "ModelError",
    "OptframeError",
    "PathResult",
    "Polynomial",
    "ProblemClass",
    "RawSolution",
    "Result",
    "SolveOptions",
    "SolverError",
    "SolverUnavailable",
    "Status",
    "Timings",
    "UnknownBackend",
    "UnknownDriver",
    "__version__",
    "from_cvxpy",
    "solve",
    "solve_path",
]
