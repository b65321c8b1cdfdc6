"""The interface between a built :class:`~optframe.model.Formulation` and one solver.

A back-end is one solver reached through one layer (``"highs"`` through ``"matrix"``, ``"pyomo"`` or
``"cvxpy"``). It receives common :class:`SolveOptions`, reads the solution through the formulation's
named handles, and maps the solver's status codes to :class:`~optframe.result.Status` in one table
inside its own module. It never raises for a solver limit or failure: those are statuses.
"""

from __future__ import annotations

import abc
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from optframe.basis import Basis
from optframe.errors import SolverUnavailable
from optframe.model import Formulation, ProblemClass, RawSolution
from optframe.result import Status
from optframe.validation import count_from_environment


def threads_from_environment() -> int | None:
    """``OPTFRAME_THREADS`` as a positive int, or None when it is unset or empty."""
    return count_from_environment("OPTFRAME_THREADS")


@dataclass(frozen=True, kw_only=True)
class SolveOptions:
    """Options every back-end understands, plus untouched pass-through options.

    Parameters
    ----------
    tol : float, optional
        Optimality tolerance; each back-end maps it to its own tolerance options (its module says
        which). ``None`` keeps the solver's default.
    time_limit : float, optional
        Wall seconds; a solve that hits it returns ``Status.TIME_LIMIT``.
    threads : int, optional
        Threads the solver may use (default: the environment variable ``OPTFRAME_THREADS``,
        which ``optframe bench`` sets to 1 in its workers, else the solver's own default).
    max_iter : int, optional
        Iteration limit (simplex, barrier or ADMM iterations, as the solver counts them); a solve
        that hits it returns ``Status.ITERATION_LIMIT``.
    verbose : bool
        Show the solver's log.
    solver_options : Mapping
        Passed to the solver as they are (never mutated), after the common options, so they win.
    start : Basis, optional
        A basis to start from, for the back-ends and problem classes in ``Backend.warm_starts``
        (a hint: a basis that does not fit the problem is dropped and the solve starts cold).
    gap_tol : float, optional
        The relative gap of optframe's certificate that proves optimality
        (``solve(gap_tol=...)``); drivers whose stopping rule is not a gap keep going until it
        closes. ``None``: the driver's default (:meth:`Driver.gap_tolerance`).
    """

    tol: float | None = None
    time_limit: float | None = None
    threads: int | None = field(default_factory=threads_from_environment)
    max_iter: int | None = None
    verbose: bool = False
    solver_options: Mapping[str, Any] = field(default_factory=dict)
    start: Basis | None = None
    gap_tol: float | None = None


@dataclass(frozen=True, eq=False)
class ConicPoint:
    r"""A cone program as a conic solver saw it, with the solver's point and dual values.

    The problem is :math:`\min_x \tfrac12 x^\top P x + c^\top x + \text{offset}` subject to
    :math:`A x + s = b`, :math:`s \in K`, with :math:`K` the product of ``cones`` over the rows
    in order: ``("zero", k)`` (equality rows), ``("nonneg", k)``, ``("soc", k)`` (one
    second-order cone :math:`\{(t, v): \lVert v\rVert \le t\}` of dimension k) and
    ``("exp", 3)`` (one exponential cone :math:`\{(x, y, z): y e^{x/y} \le z, y > 0\}`).
    ``x`` and ``z`` are the solver's primal point and dual values (:math:`z \in K^*`,
    :math:`P x + c + A^\top z = 0` at an exact optimum). :mod:`optframe.conic_bound` proves a
    lower bound from them.

    Examples
    --------
    :math:`\min x` subject to :math:`x \ge 1` (one nonnegative row :math:`-x + s = -1`), with
    the optimum :math:`x = 1` and its multiplier :math:`z = 1`:

    >>> import numpy as np, scipy.sparse as sp
    >>> from optframe.conic_bound import conic_lower_bound
    >>> point = ConicPoint(P=None, c=np.array([1.0]), A=sp.csc_array([[-1.0]]),
    ...                    b=np.array([-1.0]), cones=(("nonneg", 1),), offset=0.0,
    ...                    x=np.array([1.0]), z=np.array([1.0]))
    >>> round(conic_lower_bound(point).value, 9)
    1.0
    """

    P: Any
    c: NDArray[np.float64]
    A: Any
    b: NDArray[np.float64]
    cones: tuple[tuple[str, int], ...]
    offset: float
    x: NDArray[np.float64]
    z: NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class BackendResult:
    """What a back-end returns: status, values read through the handles, objective and bound.

    ``objective`` and ``bound`` are on the solver's scale (the formulation maps them to the
    model's); ``bound`` is the solver's own proven bound (dual objective, MIP dual bound) or
    ``None``. ``basis`` is the final basis, from back-ends that can start from one. ``conic``
    is the cone program the solver saw with its point and duals, from back-ends that return
    them for cone programs (a certificate is built from it, :mod:`optframe.conic_bound`).
    """

    status: Status
    values: RawSolution | None
    objective: float | None = None
    bound: float | None = None
    iterations: int = 0
    seconds: float = 0.0
    message: str = ""
    basis: Basis | None = None
    conic: ConicPoint | None = None


class Backend(abc.ABC):
    """One solver through one layer.

    Subclasses set ``solver`` (lower-case solver name), ``layer``, ``supports`` (problem
    classes), ``duals`` (the classes for which every named constraint gets a dual; for the others
    ``RawSolution.dual`` is empty) and ``requires`` (import names checked by :meth:`available`),
    ``warm_starts`` (the classes for which it returns ``BackendResult.basis`` and honours
    ``SolveOptions.start``), and implement :meth:`solve`. A back-end that takes only some
    problems of its classes (a shape, a size) sets ``narrow`` and says why it refuses one in
    :meth:`refusal`; its :meth:`solve` returns an ERROR result with the same words.
    """

    solver: ClassVar[str]
    layer: ClassVar[str]
    supports: ClassVar[frozenset[ProblemClass]]
    duals: ClassVar[frozenset[ProblemClass]] = frozenset()
    requires: ClassVar[tuple[str, ...]] = ()
    warm_starts: ClassVar[frozenset[ProblemClass]] = frozenset()
    narrow: ClassVar[bool] = False

    @classmethod
    def full_name(cls) -> str:
        """``"layer:solver"``, for example ``"pyomo:highs"``."""
        return f"{cls.layer}:{cls.solver}"

    @classmethod
    def available(cls) -> bool:
        """Whether the solver's libraries can be imported (checked without importing them)."""
        return all(importlib.util.find_spec(name) is not None for name in cls.requires)

    @classmethod
    def check_available(cls) -> None:
        """Raise :class:`SolverUnavailable` naming the missing package, if any."""
        missing = [name for name in cls.requires if importlib.util.find_spec(name) is None]
        if missing:
            raise SolverUnavailable(
                f"back-end {cls.full_name()!r} needs the Python package(s) {missing}; "
                f"install them with pip (they are dependencies of optframe)"
            )

    @classmethod
    def refusal(cls, formulation: Formulation) -> str | None:
        """Why this back-end cannot take ``formulation`` of a class it supports, or None.

        Always None unless ``narrow``: :func:`optframe.compare.applicable_pairs` builds the
        model to ask a narrow back-end, and leaves it out of the pairs it refuses.
        """
        return None

    def prepare(self, formulation: Formulation) -> float:
        """Compile the back-end's own kernels for ``formulation``; the seconds it took.

        Called by :class:`~optframe.drivers.Direct` before its solve clock starts, so that a
        first run's compilation is reported as ``Timings.compile``, never as solve time. Most
        back-ends compile nothing (0.0).
        """
        return 0.0

    @abc.abstractmethod
    def solve(self, formulation: Formulation, options: SolveOptions) -> BackendResult:
        """Solve ``formulation`` and return the normalized result."""
