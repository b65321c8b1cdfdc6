"""Helpers every back-end shares: reading values through handles, dual conventions, bounds.

Nothing here imports a solver or modeling library at module import; the cvxpy and Pyomo helpers
receive the objects they work on.

Conventions (the contract of :class:`~optframe.model.RawSolution`):

* ``primal[name]`` is a float array: for a matrix slice, the slice of the solution vector; for a
  cvxpy ``Variable``, its value with its own shape (scalars as shape ``(1,)``); for a Pyomo ``Var``,
  a 1-D array in the order of its index set (a scalar ``Var`` as shape ``(1,)``).
* ``dual[name]`` is the sensitivity of the optimal value to the constraint's right-hand side,
  ``d f* / d rhs`` for a minimization (formulations always minimize). For a matrix row it is the
  derivative with respect to the active row bound (positive when a lower bound is active,
  negative for an upper bound), which is HiGHS's and SCIP's own sign; OSQP's and Clarabel's
  multipliers are converted in their modules. For a cvxpy constraint the right-hand side is its
  constant side as written (``x >= 2``, ``x <= 2``, ``x == 2``; see :func:`cvxpy_dual_sign`); for a
  Pyomo constraint it is the active bound as Pyomo stores it (``lower <= body <= upper``), which is
  the sign Pyomo's interfaces report. A back-end returns duals only for the problem classes in
  its ``duals`` attribute, and then for every named constraint; otherwise ``dual`` is empty.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import pickle
import select
import signal
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.backend import BackendResult, ConicPoint, SolveOptions
from optframe.model import Formulation, MatrixProblem, ProblemClass, RawSolution
from optframe.result import Status

__all__ = [
    "CVXPY_STATUS",
    "PYOMO_STATUS",
    "Clock",
    "RawOutcome",
    "cvxpy_dual_sign",
    "cvxpy_raw_solution",
    "error_result",
    "finite_or_none",
    "is_large",
    "lagrangian_bound",
    "matrix_quadratic",
    "matrix_raw_solution",
    "out_of_time",
    "pyomo_raw_solution",
    "quiet",
    "run_stoppable",
    "solve_cvxpy",
    "solve_pyomo",
    "stoppable",
    "time_left",
    "upper_triangle",
]

# cvxpy's own status strings, used only when a back-end cannot read its solver's raw status
# (cvxpy merges time and iteration limits into "user_limit").
CVXPY_STATUS: dict[str, Status] = {
    "optimal": Status.OPTIMAL,
    "optimal_inaccurate": Status.CONVERGED,
    "infeasible": Status.INFEASIBLE,
    "infeasible_inaccurate": Status.INFEASIBLE,
    "unbounded": Status.UNBOUNDED,
    "unbounded_inaccurate": Status.UNBOUNDED,
    "infeasible_or_unbounded": Status.UNBOUNDED,
    "user_limit": Status.ITERATION_LIMIT,
    "solver_error": Status.ERROR,
}

# Pyomo's TerminationCondition (pyomo.contrib.solver), by member name: the Pyomo interfaces map
# their solver's codes to it, so the Pyomo layer of every solver uses this one table.
PYOMO_STATUS: dict[str, Status] = {
    "convergenceCriteriaSatisfied": Status.OPTIMAL,
    "maxTimeLimit": Status.TIME_LIMIT,
    "iterationLimit": Status.ITERATION_LIMIT,
    "objectiveLimit": Status.ITERATION_LIMIT,
    "minStepLength": Status.ERROR,
    "unbounded": Status.UNBOUNDED,
    "provenInfeasible": Status.INFEASIBLE,
    "locallyInfeasible": Status.INFEASIBLE,
    "infeasibleOrUnbounded": Status.UNBOUNDED,
    "error": Status.ERROR,
    "interrupted": Status.ERROR,
    "licensingProblems": Status.ERROR,
    "emptyModel": Status.OPTIMAL,
    "unknown": Status.ERROR,
}


class Clock:
    """Wall-clock seconds since creation."""

    def __init__(self) -> None:
        self._start = time.perf_counter()

    def __call__(self) -> float:
        return time.perf_counter() - self._start


def quiet(verbose: bool) -> contextlib.AbstractContextManager[Any]:
    """Swallow what a solver writes through Python's ``sys.stdout`` unless ``verbose``.

    Some solvers print through the interpreter even when told to be silent (OSQP reports
    "Polishing not needed" with ``verbose=False``).
    """
    return contextlib.nullcontext() if verbose else contextlib.redirect_stdout(io.StringIO())


def error_result(exc: BaseException | str, seconds: float, solver: str) -> BackendResult:
    """Return a :class:`BackendResult` with ``Status.ERROR`` and the solver's message."""
    text = exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"
    return BackendResult(Status.ERROR, None, seconds=seconds, message=f"{solver}: {text}")


def time_left(options: SolveOptions, clock: Clock) -> SolveOptions | None:
    """``options`` with ``time_limit`` less the seconds ``clock`` has run; ``None`` if none is left.

    A back-end calls it right before it hands over to its solver, so that the time it spent
    preparing the solver's data counts against the limit.
    """
    if options.time_limit is None:
        return options
    left = options.time_limit - clock()
    return replace(options, time_limit=left) if left > 0 else None


def out_of_time(clock: Clock, solver: str) -> BackendResult:
    """The TIME_LIMIT result of a back-end whose preparation used up the time limit."""
    return BackendResult(
        Status.TIME_LIMIT,
        None,
        seconds=clock(),
        message=f"{solver}: time limit reached before the solver started",
    )


#: How far past its time limit a solve in a child process may run before it is killed: the
#: limit times ``1 + HARD_STOP_FRACTION`` plus ``HARD_STOP_SECONDS``.
HARD_STOP_FRACTION = 0.05
HARD_STOP_SECONDS = 0.25


#: Whether this process is a child forked by :func:`run_stoppable` (a solver whose thread pool
#: the parent started must then run on one thread: the pool's threads are not in the child).
in_child = False

#: cvxpy solver options a back-end module registers for its solves in a forked child.
CHILD_SETTINGS: dict[str, dict[str, Any]] = {}


def _child(work: Callable[[], BackendResult], pipe: int) -> None:
    # In the forked child: run the solve, send back its result (or its exception), never return.
    global in_child
    in_child = True
    code = 0
    try:
        # The parent answers Ctrl-C (it kills this process); a terminal's Ctrl-C reaches the
        # whole process group, and this process must not print a traceback for it.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            payload = pickle.dumps(("result", work()), protocol=pickle.HIGHEST_PROTOCOL)
        except BaseException as exc:  # handed to the parent, which raises it
            try:
                payload = pickle.dumps(("raise", exc), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception:
                payload = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
        sys.stdout.flush()  # what a verbose solver printed, before the parent may kill this
        sys.stderr.flush()
        with open(pipe, "wb", closefd=True) as out:
            out.write(payload)
    except BaseException:
        code = 1
    finally:
        os._exit(code)


def run_stoppable(
    work: Callable[[], BackendResult], time_limit: float | None, solver: str
) -> BackendResult:
    """Run a back-end's ``work`` in a forked child process that Ctrl-C and the clock can stop.

    A solver that does not look at Python's signals (a SIGINT arrives while it runs C code that
    never returns to the interpreter), or that spends longer than its time limit in a phase where
    it does not read its clock (a factorization, a presolve), cannot be stopped in the process
    that runs it. Here the parent only waits: Ctrl-C raises ``KeyboardInterrupt`` at once, after
    the child is killed, and a child still running ``time_limit * (1 + HARD_STOP_FRACTION) +
    HARD_STOP_SECONDS`` seconds after the start is killed and the result is ``TIME_LIMIT``
    without a point. The solver's own time limit (in the options ``work`` uses) normally stops
    it first, with its last point. An exception ``work`` raises is raised here. Without
    ``os.fork`` (Windows) ``work`` runs in this process.

    Parameters
    ----------
    work : callable
        The solve, returning a picklable :class:`BackendResult`.
    time_limit : float or None
        The seconds the solve may take, ``None`` for no limit.
    solver : str
        The solver's name for messages (``"SCIP"``, ``"cvxpy PIQP"``).

    Returns
    -------
    BackendResult
        What ``work`` returned in the child, or a ``TIME_LIMIT`` or ``ERROR`` result saying
        why the child gave none.
    """
    if not hasattr(os, "fork"):
        return work()
    clock = Clock()
    hard = None if time_limit is None else time_limit * (1 + HARD_STOP_FRACTION) + HARD_STOP_SECONDS
    sys.stdout.flush()  # the child must not write what this process buffered
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child (coverage does not follow it)
        os.close(read_end)
        _child(work, write_end)
    os.close(write_end)
    chunks: list[bytes] = []
    killed = False
    poller = select.poll()  # not select(): it refuses descriptors past FD_SETSIZE
    poller.register(read_end, select.POLLIN)
    try:
        while True:
            wait = None if hard is None else max(0.0, hard - clock()) * 1000.0
            ready = poller.poll(wait)
            if not ready:
                killed = True
                break
            chunk = os.read(read_end, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:  # also on KeyboardInterrupt: the child never outlives the call
        os.close(read_end)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)  # a child that sent its result is exiting anyway
        _, wait_status = os.waitpid(pid, 0)
    if killed:
        return BackendResult(
            Status.TIME_LIMIT,
            None,
            seconds=clock(),
            message=f"{solver}: did not stop at the time limit of {time_limit:.3g} s; "
            f"stopped by optframe after {clock():.3g} s (no point)",
        )
    if not chunks:
        how = (
            f"signal {os.WTERMSIG(wait_status)}"
            if os.WIFSIGNALED(wait_status)
            else f"exit code {os.WEXITSTATUS(wait_status)}"
        )
        return error_result(f"the solver's process ended with {how} and no result", clock(), solver)
    try:
        kind, payload = pickle.loads(b"".join(chunks))
    except Exception as exc:
        return error_result(f"unreadable result from the solver's process ({exc})", clock(), solver)
    if kind == "raise":
        raise payload
    if kind == "error":
        return error_result(payload, clock(), solver)
    return payload


#: Problems with at least this many nonzeros (``A`` and ``P``; cvxpy's scalar data) count as
#: large: a solver's first factorization of them, during which it reads no signal, can take
#: seconds, so back-ends that answer Ctrl-C themselves still solve them in a child process.
#: Not lower: a child forked after the parent ran Clarabel's threads can wait for them forever
#: (200,000 hung a Clarabel solve in the test suite), so smaller problems stay in this process
#: and read Ctrl-C late (Clarabel through cvxpy: 1.2 to 1.9 s on 660,000 scalars).
LARGE_DATA = 1_000_000


def is_large(formulation: Formulation) -> bool:
    """Whether ``formulation`` has :data:`LARGE_DATA` nonzeros or more (matrix and cvxpy)."""
    problem = formulation.problem
    if isinstance(problem, MatrixProblem):
        nnz = problem.A.nnz + (problem.P.nnz if problem.P is not None else 0)
        return nnz >= LARGE_DATA
    metrics = getattr(problem, "size_metrics", None)
    return metrics is not None and int(metrics.num_scalar_data) >= LARGE_DATA


def stoppable(
    work: Callable[[], BackendResult],
    options: SolveOptions,
    solver: str,
    always: bool = False,
    preload: tuple[str, ...] = (),
) -> BackendResult:
    """``work()``, in a child process (:func:`run_stoppable`) when it has a time limit.

    ``always`` runs it in a child without a limit too: for a solver that Ctrl-C cannot stop.
    ``preload`` names modules to import here first, so that the child does not spend its time
    limit importing them (again at every solve: a child's imports die with it). In a child
    already (a driver's phase run by :func:`run_stoppable`) ``work`` runs in place: that child
    is stopped as a whole, and a child of its own would outlive it.
    """
    if in_child or (not always and options.time_limit is None):
        return work()
    for name in preload:
        importlib.import_module(name)
    return run_stoppable(work, options.time_limit, solver)


def finite_or_none(value: Any) -> float | None:
    """``float(value)`` when it is a finite number, else ``None``."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if np.isfinite(number) else None


# ---------------------------------------------------------------------------------------- matrix
def matrix_raw_solution(
    formulation: Formulation,
    x: NDArray[np.float64],
    row_dual: NDArray[np.float64] | None,
) -> RawSolution:
    """Read a matrix formulation's handles (slices) out of the solution vectors.

    ``row_dual`` must already follow the ``d f*/d (active row bound)`` convention; ``None`` (integer
    problems, or no duals available) gives an empty ``dual``.
    """
    primal = {name: x[index] for name, index in formulation.variables.items()}
    dual = (
        {}
        if row_dual is None
        else {name: row_dual[index] for name, index in formulation.constraints.items()}
    )
    return RawSolution(primal=primal, dual=dual)


def _active_bound(
    multiplier: NDArray[np.float64], lower: NDArray[np.float64], upper: NDArray[np.float64]
) -> NDArray[np.float64]:
    # The bound a multiplier prices: the lower one for a positive multiplier, the upper one for a
    # negative one. A multiplier whose bound is infinite is a dual infeasibility within the
    # solver's tolerance; it is dropped (priced at 0) rather than turning the bound into -inf.
    bound = np.where(multiplier > 0, lower, upper)
    return np.where(np.isfinite(bound), bound, 0.0)


def lagrangian_bound(
    offset: float,
    quadratic: float,
    row_dual: NDArray[np.float64],
    row_lower: NDArray[np.float64],
    row_upper: NDArray[np.float64],
    col_dual: NDArray[np.float64],
    lower: NDArray[np.float64],
    upper: NDArray[np.float64],
) -> float:
    r"""Dual objective of a continuous LP/QP at the multipliers ``(y, z)``.

    With multipliers in the sensitivity convention (stationarity :math:`c + Px = A^\top y + z`)
    and ``quadratic`` :math:`= \tfrac12 x^\top P x` at the primal point,

    .. math::

        g = \text{offset} - \tfrac12 x^\top P x + \sum_i y_i\, b_i + \sum_j z_j\, d_j,

    where :math:`b_i` is the row bound priced by :math:`y_i` (lower if positive, upper if
    negative) and :math:`d_j` likewise for the variable bounds. When the multipliers are dual
    feasible and stationarity holds exactly this is a proven lower bound (weak duality); with a
    solver's multipliers it is one to the solver's dual feasibility tolerance.
    """
    value = float(offset) - float(quadratic)
    value += float(row_dual @ _active_bound(row_dual, row_lower, row_upper))
    value += float(col_dual @ _active_bound(col_dual, lower, upper))
    return value


def matrix_quadratic(problem: MatrixProblem, x: NDArray[np.float64]) -> float:
    """``0.5 x'Px`` of a matrix problem (0 for an LP)."""
    if problem.P is None or not problem.P.nnz:
        return 0.0
    return 0.5 * float(x @ (problem.P @ x))


def upper_triangle(P: sp.csc_array | None, n: int) -> sp.csc_matrix:
    """Upper triangle of ``P`` as a ``csc_matrix`` with sorted indices (zero matrix if ``None``)."""
    if P is None:
        return sp.csc_matrix((n, n), dtype=np.float64)
    upper = sp.csc_matrix(sp.triu(P, format="csc"))
    upper.sort_indices()
    return upper


# ----------------------------------------------------------------------------------------- cvxpy
def cvxpy_dual_sign(constraint: Any) -> float:
    """Factor turning cvxpy's dual of ``constraint`` into ``d f*/d rhs``.

    cvxpy's multipliers are nonnegative for inequalities and enter its Lagrangian as
    ``+ dual * (lhs - rhs)``. The right-hand side is the constant side of the constraint: for
    ``expr <= b`` and ``expr == b`` (constant on the right) the sensitivity is ``-dual``; for
    ``expr >= b``, which cvxpy stores as ``b <= expr`` (constant on the left), it is ``+dual``.
    ``NonPos``/``Zero`` (``expr <= 0``, ``expr == 0``) give ``-dual``, ``NonNeg`` (``expr >= 0``)
    ``+dual``. When neither side is constant, the right side is taken as the right-hand side.
    Other cones (SOC, PSD, ...) keep cvxpy's sign.
    """
    kind = type(constraint).__name__
    if kind in ("Inequality", "Equality"):
        lhs, rhs = constraint.args
        return 1.0 if lhs.is_constant() and not rhs.is_constant() else -1.0
    if kind in ("NonPos", "Zero"):
        return -1.0
    if kind == "NonNeg":
        return 1.0
    return 1.0


def _as_array(value: Any, shape: tuple[int, ...]) -> NDArray[np.float64]:
    if value is None:
        return np.full(shape or (1,), np.nan)
    return np.atleast_1d(np.asarray(value, dtype=np.float64))


def _cvxpy_dual(handle: Any) -> NDArray[np.float64]:
    # A tuple/list handle holds the two one-sided constraints of a ranged expression; at most one
    # of them is active, so the sum of their converted duals is the sensitivity to the active one.
    constraints = handle if isinstance(handle, tuple | list) else (handle,)
    total: NDArray[np.float64] | None = None
    for con in constraints:
        value = cvxpy_dual_sign(con) * _as_array(con.dual_value, con.shape)
        total = value if total is None else total + value
    assert total is not None
    return total


def cvxpy_raw_solution(formulation: Formulation, duals: bool) -> RawSolution:
    """Read a solved cvxpy formulation's handles.

    Variables keep cvxpy's shape (scalars become shape ``(1,)``). A constraint handle is a cvxpy
    constraint or a tuple of constraints on the same expression (a ranged row as its two sides),
    whose converted duals are summed. ``duals=False`` (integer problems) gives an empty ``dual``.
    """
    primal = {name: _as_array(var.value, var.shape) for name, var in formulation.variables.items()}
    dual = (
        {name: _cvxpy_dual(handle) for name, handle in formulation.constraints.items()}
        if duals
        else {}
    )
    return RawSolution(primal=primal, dual=dual)


# ----------------------------------------------------------------------------------------- pyomo
def _pyomo_items(component: Any) -> list[Any]:
    # Scalar components iterate over themselves; indexed ones in the order of their index set.
    return list(component.values())


def pyomo_raw_solution(formulation: Formulation, results: Any, duals: bool) -> RawSolution:
    """Load a Pyomo (``pyomo.contrib.solver``) solution and read the formulation's handles.

    ``results`` is the ``Results`` of a solve with ``load_solutions=False``. Variables are loaded
    into the model, then read as 1-D arrays in index order (scalars as shape ``(1,)``; a variable
    the solver never saw reads ``nan``). Duals come from the solution loader; Pyomo's sign for a
    minimization already is ``d f*/d bound`` of the constraint's active bound.
    """
    results.solution_loader.load_vars()
    primal: dict[str, NDArray[np.float64]] = {}
    for name, var in formulation.variables.items():
        values = [v.value for v in _pyomo_items(var)]
        primal[name] = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    dual: dict[str, NDArray[np.float64]] = {}
    if duals and formulation.constraints:
        items = {name: _pyomo_items(con) for name, con in formulation.constraints.items()}
        everything = [c for group in items.values() for c in group]
        loaded: Mapping[Any, float] = results.solution_loader.get_duals(everything)
        for name, group in items.items():
            dual[name] = np.array([loaded[c] for c in group], dtype=np.float64)
    return RawSolution(primal=primal, dual=dual)


# ------------------------------------------------------------------------- layer solve loops
@dataclass(frozen=True)
class RawOutcome:
    """What a cvxpy back-end reads from its solver's raw output (all on the solver's scale)."""

    status: Status | None
    objective: float | None = None
    bound: float | None = None
    text: str = ""
    #: Whether the solver holds a primal solution worth returning (``None``: trust cvxpy).
    has_solution: bool | None = None


SolverOpts = dict[str, Any] | Callable[[SolveOptions], dict[str, Any]]


def solve_cvxpy(
    formulation: Formulation,
    options: SolveOptions,
    solver: str,
    solver_opts: SolverOpts,
    read_raw: Callable[[Any], RawOutcome | None],
    duals: bool,
    always: bool = False,
    preload: tuple[str, ...] = (),
    conic: Callable[[Any], tuple[Any, Any]] | None = None,
) -> BackendResult:
    """Solve a cvxpy formulation with ``solver`` and normalize the outcome.

    cvxpy compiles the problem first (``Problem.get_problem_data``), then the solver runs on
    its data (``solve_via_data``) and the results are unpacked, as ``Problem.solve`` does. The
    compilation counts against the time limit: a limit it used up gives ``TIME_LIMIT`` before
    the solver starts. ``solver_opts`` is the solver's options (a fresh dict: cvxpy's
    interfaces pop and add keys in it), or a function of the options that makes them, called
    with the time the compilation left (so the solver's own time limit is what is left).
    ``read_raw`` reads the solver's own status, objective and bound from what cvxpy kept of its
    raw output (on a failure cvxpy keeps no stats: the raw output is then in
    ``problem._optframe_raw``); cvxpy's status is the fallback. The bound is shifted by the
    constant cvxpy keeps outside the solver (``problem.value - raw objective``). ``duals`` says
    whether to read the constraints' duals (the back-end returns them for this problem class).
    The solve (cvxpy's compilation included) runs in a child process (:func:`stoppable`) when
    there is a time limit, or ``always``; ``preload`` as in :func:`stoppable`. ``conic`` reads
    the solver's primal point and dual values (in the solver's own cone convention) from its raw
    output: for a cone program (SOCP, EXP) the result then carries the data cvxpy handed the
    solver with that point (``BackendResult.conic``), from which a certificate is built.
    """
    return stoppable(
        lambda: _solve_cvxpy(formulation, options, solver, solver_opts, read_raw, duals, conic),
        options,
        f"cvxpy {solver}",
        always=always,
        preload=preload,
    )


def _solve_cvxpy(
    formulation: Formulation,
    options: SolveOptions,
    solver: str,
    solver_opts: SolverOpts,
    read_raw: Callable[[Any], RawOutcome | None],
    duals: bool,
    conic: Callable[[Any], tuple[Any, Any]] | None = None,
) -> BackendResult:
    clock = Clock()

    def opts_for(given: SolveOptions) -> dict[str, Any]:
        chosen = dict(solver_opts(given) if callable(solver_opts) else solver_opts)
        if in_child:  # settings a back-end asks for in a forked child (its solve runs here)
            chosen.update(CHILD_SETTINGS.get(solver, {}))
        return chosen

    problem = formulation.problem
    cache = getattr(problem, "_solver_cache", None)
    if isinstance(cache, dict):
        cache.pop(solver, None)  # never read a previous solve's raw output
    problem._optframe_raw = None
    try:
        with warnings.catch_warnings(), quiet(options.verbose):
            # cvxpy warns about inaccurate or limited solves; the status says it, quietly.
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            if not options.verbose:  # numpy's, from cvxpy's bound propagation meeting 0 * inf
                warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"cvxpy\.")
            # Problem.solve in its steps, so that the compilation counts against the limit
            data, chain, inverse = problem.get_problem_data(
                solver, verbose=options.verbose, solver_opts=opts_for(options)
            )
            timed = time_left(options, clock)
            if timed is None:
                return BackendResult(
                    Status.TIME_LIMIT,
                    None,
                    seconds=clock(),
                    message=f"cvxpy {solver}: time limit reached while cvxpy compiled the "
                    f"problem ({clock():.3g} s); not solved",
                )
            output = chain.solve_via_data(problem, data, True, options.verbose, opts_for(timed))
            problem._optframe_raw = output
            problem.unpack_results(output, chain, inverse)
        raw = read_raw(problem)
    except Exception as exc:  # solver failures are statuses
        return _cvxpy_failure(problem, exc, clock(), solver, read_raw)
    cvxpy_status = str(problem.status)
    status = raw.status if raw is not None and raw.status is not None else None
    if status is None:
        status = CVXPY_STATUS.get(cvxpy_status, Status.ERROR)
    has_solution = (
        (status.is_success or status.is_limit)
        and cvxpy_status in ("optimal", "optimal_inaccurate", "user_limit")
        and any(var.value is not None for var in problem.variables())
        and (raw is None or raw.has_solution is not False)
    )
    values = objective = bound = None
    if has_solution:
        values = cvxpy_raw_solution(formulation, duals=duals)
        objective = finite_or_none(problem.value)
        if objective is None:  # some interfaces leave the value out at a limit
            objective = finite_or_none(problem.objective.value)
    if raw is not None and None not in (raw.bound, raw.objective, objective):
        bound = finite_or_none(raw.bound + (objective - raw.objective))
    stats = problem.solver_stats
    text = raw.text if raw is not None and raw.text else cvxpy_status
    point = None
    if has_solution and conic is not None and formulation.problem_class in _CONES:
        with contextlib.suppress(Exception):  # no point, no certificate: never a failure
            point = _conic_point(data, *conic(output))
    return BackendResult(
        status=status,
        values=values,
        objective=objective,
        bound=bound,
        iterations=max(0, int(stats.num_iters or 0)) if stats is not None else 0,
        seconds=clock(),
        message=f"cvxpy {solver}: {text}",
        conic=point,
    )


_CONES = frozenset({ProblemClass.SOCP, ProblemClass.EXP})


def _conic_point(data: dict[str, Any], x: Any, z: Any) -> ConicPoint | None:
    """The cone program cvxpy handed a conic solver (``A x + s = b, s in K``) and its point."""
    import scipy.sparse as sp

    dims = data["dims"]
    if dims.psd or dims.p3d or getattr(dims, "pnd", None):
        return None
    cones: list[tuple[str, int]] = []
    if dims.zero:
        cones.append(("zero", int(dims.zero)))
    if dims.nonneg:
        cones.append(("nonneg", int(dims.nonneg)))
    cones += [("soc", int(k)) for k in dims.soc]
    cones += [("exp", 3)] * int(dims.exp)
    offset = float(data["param_prob"].apply_parameters()[1])
    P = data.get("P")
    return ConicPoint(
        P=None if P is None else sp.csc_array(P),
        c=np.asarray(data["c"], dtype=np.float64).copy(),
        A=sp.csc_array(data["A"]),
        b=np.asarray(data["b"], dtype=np.float64).copy(),
        cones=tuple(cones),
        offset=offset,
        x=np.asarray(x, dtype=np.float64).copy(),
        z=np.asarray(z, dtype=np.float64).copy(),
    )


def _cvxpy_failure(
    problem: Any,
    exc: Exception,
    seconds: float,
    solver: str,
    read_raw: Callable[[Any], RawOutcome | None],
) -> BackendResult:
    """The ERROR result of a cvxpy solve that raised, with the solver's own status when known.

    cvxpy answers a solver status it has no solution for (Clarabel's ``InsufficientProgress``,
    ...) with a generic ``SolverError``; the solver's status, read from what cvxpy kept, says
    why. A limit status is kept as such (there is no point to return).
    """
    raw = None
    with contextlib.suppress(Exception):
        raw = read_raw(problem)
    if raw is None or not raw.text:
        return error_result(exc, seconds, f"cvxpy {solver}")
    status = raw.status if raw.status is not None and raw.status.is_limit else Status.ERROR
    return BackendResult(
        status,
        None,
        seconds=seconds,
        message=f"cvxpy {solver}: {raw.text} (cvxpy: {type(exc).__name__}: {exc})",
    )


def solve_pyomo(
    formulation: Formulation,
    solver: Any,
    options: SolveOptions,
    solver_options: dict[str, Any],
    label: str,
    duals: bool,
    iteration_keys: tuple[str, ...] = (),
    always: bool = False,
    explain: Callable[[Any], str] | None = None,
    preload: tuple[str, ...] = (),
) -> BackendResult:
    """Solve a Pyomo formulation with a ``pyomo.contrib.solver`` interface and normalize it.

    ``solver_options`` go to the interface's ``solver_options`` (the solver's own option names);
    ``verbose`` becomes ``tee``. The status comes from :data:`PYOMO_STATUS`, the objective from
    ``incumbent_objective`` and the bound from ``objective_bound``. ``duals`` says whether to load
    the constraints' duals (the back-end returns them for this problem class). The solve runs
    in a child process (:func:`stoppable`) when there is a time limit, or ``always``.
    ``explain`` reads the solver's own reason for an ERROR out of Pyomo's ``Results`` (a
    termination condition ``error`` alone does not say why); it is added to the message.
    """
    return stoppable(
        lambda: _solve_pyomo(
            formulation, solver, options, solver_options, label, duals, iteration_keys, explain
        ),
        options,
        label,
        always=always,
        preload=preload,
    )


def _solve_pyomo(
    formulation: Formulation,
    solver: Any,
    options: SolveOptions,
    solver_options: dict[str, Any],
    label: str,
    duals: bool,
    iteration_keys: tuple[str, ...],
    explain: Callable[[Any], str] | None,
) -> BackendResult:
    clock = Clock()
    try:
        results = solver.solve(
            formulation.problem,
            tee=options.verbose,
            load_solutions=False,
            raise_exception_on_nonoptimal_result=False,
            solver_options=dict(solver_options),
        )
    except Exception as exc:  # solver failures are statuses
        return error_result(exc, clock(), label)
    condition = results.termination_condition.name
    status = PYOMO_STATUS.get(condition, Status.ERROR)
    values = None
    solved = status.is_success or status.is_limit
    if solved and results.solution_status.name in ("optimal", "feasible"):
        try:
            values = pyomo_raw_solution(formulation, results, duals=duals)
        except Exception:
            # No duals at a limit: return the primal point with the limit status.
            values = pyomo_raw_solution(formulation, results, duals=False)
    iterations = 0
    for key in iteration_keys:
        with contextlib.suppress(TypeError, ValueError, KeyError):
            iterations += max(0, int(getattr(results.extra_info, key, 0) or 0))
    return BackendResult(
        status=status,
        values=values,
        objective=finite_or_none(results.incumbent_objective) if values is not None else None,
        bound=finite_or_none(results.objective_bound),
        iterations=iterations,
        seconds=clock(),
        message=f"{label}: {condition}{_reason(explain, results, status)}",
    )


def _reason(explain: Callable[[Any], str] | None, results: Any, status: Status) -> str:
    # The solver's own words for an ERROR, as " (...)", or "".
    if explain is None or status is not Status.ERROR:
        return ""
    text = ""
    with contextlib.suppress(Exception):
        text = explain(results)
    return f" ({text})" if text else ""
