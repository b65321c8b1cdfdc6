r"""Sequential minimal optimization for duals with a box, at most one equality row and kinks.

The driver solves any model that offers a :class:`~optframe.capabilities.BoxQPDual` (the dual
and the way back to the model's solution from a dual point), for example the WeightedSVM dual and
the PULearning reduced dual (USMO, with the stopping rule completed as in notes/usmo.md). A dual
without the equality row (no free intercept) is solved by single-variable steps
(:mod:`optframe.drivers.smo_single`).
"""

from __future__ import annotations

import math
import time
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

import numba
import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from optframe.backend import SolveOptions
from optframe.capabilities import BoxQPDual, Structure
from optframe.certificate import DEFAULT_GAP_TOL, gap_of
from optframe.drivers import smo_core as core
from optframe.drivers import smo_linear as linear
from optframe.drivers import smo_quadratic as quadratic
from optframe.drivers import smo_sets as sets
from optframe.drivers import smo_single as single
from optframe.drivers._checks import Choice, set_choice, set_count, set_real
from optframe.drivers.base import Driver, RunContext, clock_timings, driver_result
from optframe.drivers.kernel_cache import cache_slots
from optframe.drivers.pacing import Pacer
from optframe.errors import ConvergenceWarning, IncompatibleDriver, ModelError
from optframe.jit import Needs, compile_kernels
from optframe.kernel_sums import kernel_code, kernel_sums, points, stays_sparse
from optframe.kernels import Kernel, Linear
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status
from optframe.threads import numba_threads

# The violation rule is not tightened below this (relative to the dual's scale, see
# SMO._tol_floor) when the certificate asks for more.
MIN_TOL = 1e-9


PARALLEL_ROWS = 8192  # active variables from which kernel rows are computed in parallel
# Pair steps between shrinkings (LIBSVM: 1000). With kernel rows every step scans the active
# set, so shrinking sooner pays: RBF, C = 1, 300 against 1000: w8a 1.63 s against 2.34 s, a9a
# 3.26 against 3.60, ijcnn1 2.60 against 3.32, a8a 1.05 against 1.12 (L2-SVM: ijcnn1 12.3
# against 13.7, w8a 5.2 against 5.0). Through w, 300 slowed w8a (2.5 s against 2.0).
SHRINK_EVERY_ROWS = 300
SHRINK_EVERY_WEIGHTS = 1000


def _kernel_code(kernel: Kernel) -> tuple[int, float, float, float]:
    code = kernel_code(kernel)
    if code is None:
        raise IncompatibleDriver(
            f"SMO supports the Linear, RBF and Polynomial kernels; got {kernel!r}"
        )
    return code


def _rows_are_kernel(dual: BoxQPDual) -> bool:
    """Whether the steps' rows are the kernel's own (M = K).

    A plain dual, or one whose diagonal of its own sits beside unsigned, unshifted rows (the
    squared hinge's standard dual: D enters the steps, not the rows).
    """
    if dual.plain:
        return True
    return (
        dual.diagonal is not None and float(dual.kernel_shift) == 0.0 and float(dual.ridge) == 0.0
        and (dual.row_sign is None or bool(np.all(np.asarray(dual.row_sign) == 1.0)))
    )  # fmt: skip


def row_points(Z: tuple, dtype: Any = np.float64) -> tuple:
    """Private points for kernel rows, which the steps permute in place (see smo_core).

    ``(XT, indptr, indices, values, colptr, rowpos, colval)``: dense points as the columns of a
    C-contiguous ``XT`` (d, n), so a row streams d contiguous arrays; sparse points as CSR rows
    and a column copy (a row scatters its non-zeros' columns), binary ones also with their bits
    in ``XT`` (n, words), in ``dtype``'s view. ``dtype=np.float32`` halves the memory a row
    reads (the products are still summed in float64).
    """
    X, indptr, indices, values, scratch = Z
    if indptr.shape[0] == 0:
        empty_int = np.empty(0, dtype=np.int64)
        # a copy always: X.T of a single feature (or of Fortran-ordered X) is already
        # C-contiguous, and ascontiguousarray would hand the steps the data's own memory
        XT = np.array(X.T, dtype=dtype, order="C", copy=True)
        return (
            XT,
            empty_int,
            empty_int,
            np.empty(0, dtype),
            empty_int,
            empty_int,
            np.empty(0, dtype),
        )
    nnz = values.shape[0]
    columns = (np.zeros(scratch.shape[0] + 1, dtype=np.int64), np.empty(nnz, dtype=np.int64))
    bits = X.view(dtype).copy() if X.shape[0] > 0 else np.empty((0, 0), dtype)  # binary points
    Zr = (bits, indptr.copy(), indices.copy(), values.astype(dtype), *columns,
          np.empty(nnz, dtype))  # fmt: skip
    core.build_columns(Zr)
    return Zr


def _check_feasible(dual: BoxQPDual, x: NDArray[np.float64], what: str) -> None:
    if x.shape != (dual.n,) or not np.all(np.isfinite(x)):
        raise ModelError(f"SMO: {what} must be a finite array of shape ({dual.n},)")
    finite = dual.upper[np.isfinite(dual.upper)]
    scale = max(1.0, float(np.max(finite, initial=0.0)), float(np.max(np.abs(x), initial=0.0)))
    if np.any(x < -1e-12 * scale) or np.any(x > dual.upper + 1e-12 * scale):
        raise ModelError(f"SMO: {what} leaves the box 0 <= x <= upper")
    if not dual.bound_scale > 0.0:
        raise ModelError(f"SMO: the dual's bound_scale must be > 0; got {dual.bound_scale!r}")
    if dual.rhs is None:  # no equality row: the box is all
        return
    residual = abs(float(dual.sign @ x) - dual.rhs)
    if residual > 1e-9 * max(1.0, abs(dual.rhs), float(np.abs(x).sum())):
        raise ModelError(f"SMO: {what} violates the equality row by {residual:.3g}")


def _in_order(
    x: NDArray[np.float64], G: NDArray[np.float64], perm: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``x`` and ``G`` from positions back to the variables' order (``perm[p]``: the variable)."""
    x_out, G_out = np.empty(x.shape[0]), np.empty(x.shape[0])
    x_out[perm], G_out[perm] = x, G
    return x_out, G_out


class WorkingSet(Choice):
    """:class:`SMO`'s pair selection: second order (LIBSVM) or the maximal violating pair."""

    SECOND_ORDER = "second_order"
    MVP = "mvp"


class LinearSteps(Choice):
    """:class:`SMO`'s steps for the linear kernel: through ``w`` or by kernel rows."""

    WEIGHTS = "weights"
    ROWS = "rows"


class KernelSteps(Choice):
    """:class:`SMO`'s steps for the RBF and polynomial kernels: working sets, pairs, or by size."""

    AUTO = "auto"
    SETS = "sets"
    PAIRS = "pairs"


class Stopping(Choice):
    """:class:`SMO`'s stopping rule: complete, or the USMO paper's (g1)-(g3)."""

    COMPLETE = "complete"
    PAPER = "paper"


#: The fewest steps between two history records of a small problem (see ``check_every``).
RECORD_MIN_STEPS = 100

#: Passes over ``n`` times the support that a run with a time limit keeps time for after its
#: loop: the gradient from scratch and the solution's ``f`` (the model's kernel sums); one more
#: pass over ``n`` times ``n`` is kept for the certificate (a kernel model's dual bound tries
#: the loss's subgradient, non-zero on every margin error: 5,520 of 6,000 RBF points at a
#: time limit of 1 s) when it takes at most half the limit, else the certificate is skipped at
#: a time-limit stop. The seconds per kernel value are measured by a probe.
POST_PASSES = 2
#: The probe that times a kernel value: rows against support points.
PROBE_ROWS, PROBE_SUPPORT = 2048, 256


@register_driver
@dataclass(frozen=True, eq=False)
class SMO(Driver):
    r"""SMO for :class:`~optframe.capabilities.BoxQPDual` (WeightedSVM's, PULearning's duals).

    Each step picks a pair (i, j), moves :math:`x_i \mathrel{+}= a_i t`,
    :math:`x_j \mathrel{-}= a_j t` by the exact minimizer of the 1-D convex piecewise quadratic
    (for PU these are the paper's four cases, with the kinks as breakpoints and :math:`\eta = 0`
    handled by endpoints), snaps values within ``1e-12 * u`` of :math:`\{0, \kappa, u\}` onto them,
    and updates :math:`G = Qx + c` with two kernel rows. It stops when
    :math:`\max_i \mathrm{up}_i - \min_j \mathrm{low}_j \le` ``tol`` on all variables with
    :math:`G` recomputed from scratch (the complete rule, which for PU includes the condition (g4)
    that the paper omits); if the fresh gradient violates the rule, the steps go on from it.

    A dual without the equality row (``rhs`` is ``None``: no free intercept) is solved by
    single-variable steps instead of pairs (kernel dual coordinate descent,
    :mod:`optframe.drivers.smo_single`): the variable of the largest rate in either direction
    (of the two candidates, the larger second-order gain), moved to its exact 1-D minimizer on
    its box and kink, :math:`G` updated with its kernel row from the same cache, the same
    shrinking; the rule is :math:`\max_i \mathrm{up}_i \le \tau` and
    :math:`\min_j \mathrm{low}_j \ge -\tau` on the gradient from scratch. Any kernel (the
    linear one by kernel rows), with or without a ``diagonal``; not the paper's rule.

    Parameters
    ----------
    tol : float
        :math:`\tau` of the stopping rule (LIBSVM's ``eps``; the USMO code's ``2 * tol``).
    max_iter : int, optional
        Pair steps (default ``max(10^6, 100 n)``).
    working_set : WorkingSet or {"second_order", "mvp"}
        Second-order selection (Fan, Chen and Lin 2005; LIBSVM) or the maximal violating pair.
    stopping : Stopping or {"complete", "paper"}
        ``"paper"`` reproduces USMO's rule (g1)-(g3) (its pairs only): it can stop early.
    shrinking : bool
        Every ``min(n, 300)`` steps (``min(n, 1000)`` through w; LIBSVM: 1000), move the variables
        that are in no violating pair (at a bound and not pointing into the violation, or at a kink
        with both rates outside it) behind the active set: steps, kernel rows and scans then cost
        the active variables only. When the active set is :math:`\tau`-optimal, the gradient is
        recomputed on all variables (from scratch the first time, then as the last one plus Q times
        the change of x) and the steps go on if needed. No running sum over the variables at a bound
        (LIBSVM's ``G_bar``) is kept: for PU nearly every step moves a variable onto a bound or the
        kink, so keeping it would need full-length rows at every step; the gradient from scratch
        costs one pass instead. Measured side by side, shrinking every 1000 steps (one process,
        shared 2-core machine, load 2.5; PULearning scaling cells of the pu suite, 20,000 unlabeled
        rows, RBF, float32 rows): adult 3.94 s with shrinking against 6.32 s without, kddcup 7.74 s
        against 10.03 s, same steps; WeightedSVM (RBF, C = 1, gamma = 1/d, with float32 rows against
        neither option, load 1.9): ijcnn1 5.45 s against 8.92 s, a9a 8.38 s against 9.64 s.
    cache_bytes : int
        Memory budget of the kernel-row LRU cache (rows of n values; at least two rows). When n
        rows fit, the whole kernel matrix ends up cached.
    float32_rows : bool
        Compute the steps' kernel rows from a float32 copy of the points (products summed in
        float64; half the memory a row reads) and cache them in float32 (twice the rows in the
        budget, as LIBSVM's ``Qfloat``): the steps see kernel values to about 1e-6 relative.
        :math:`G` stays float64, and the stopping rule, the bound and the solution use the
        float64 gradient from scratch, so they are exact. Measured as above (shrinking on in
        both): adult 3.94 s against 4.51 s with float64 rows, kddcup (41 features) 7.74 s
        against 10.91 s; objectives 1.993013 and 1.993032 at tol 1e-3 (bounds 1.992968 both),
        within 1e-7 relative at tol 1e-6 in the tests.
    threads : int, optional
        Numba threads for the gradient from scratch (default: the solve's ``threads``, else all
        numba threads). Every value is computed by one thread in a fixed order, so results do
        not depend on it.
    parallel_rows : bool
        Also split each kernel row (of at least 8192 variables) over the threads. One parallel
        region per row: it can pay only on otherwise idle cores. On the shared 2-core machine
        (another process busy on one core) it did not: adult, 20,000 unlabeled rows, RBF,
        102 s with it against 3.9 s without (the threads wait for each other at every row);
        the gradient passes took 0.92 s with 2 threads and with 1 there.
    warm_start : array, optional
        A feasible dual point to start from (default: the model's ``start``).
    check_every : int
        Steps between history records, time-limit and callback checks, at most; a problem of
        :math:`n` variables is also checked every :math:`\max(100, n/2)` steps, so a small one,
        which converges in a few thousand steps, still draws its history.
    linear_steps : LinearSteps or {"weights", "rows"}
        The steps for the linear kernel. ``"weights"`` keeps :math:`w = \sum_j a_j x_j z_j`
        (dense, d values) and never forms a kernel row over all the variables: it solves working
        sets of ``subproblem_size`` variables chosen from the gradient from :math:`w` (O(nnz) over
        the active variables) by the pair steps above, with the working set's own Gram rows, and
        adds the moves to :math:`w` (:mod:`optframe.drivers.smo_linear`). ``"rows"`` takes the
        kernel-row steps of the other kernels (for comparison). Other kernels, and
        ``stopping="paper"`` (the paper's pairs), always go by kernel rows. The stopping rule,
        the gradient from scratch, the bound and the status are the same for both.
    subproblem_size : int
        Variables per working set of the steps through :math:`w` to start with (at least 2):
        half with the largest ``up``, half with the smallest ``low``, and the maximal violating
        pair; each is solved to :math:`\max(\tau, 0.1\,\text{gap})` (shrinking inside it), its
        Gram rows in an LRU cache within ``cache_bytes``. After four sets in a row that each
        met that rule within q / 32 pair steps, while more than 2q variables are active, the
        size doubles, up to twice this one (ijcnn1's test file: 558 sets of about 64 steps at
        4096 without it, 112 sets with it). Fewer variables mean more working sets, each
        costing a gradient from :math:`w`; more mean dearer steps. Measured in one process at
        fixed sizes, before the sets could grow (linear, free intercept, C = 1, one thread,
        load 3.4-3.6), 2048 / 4096 / 8192:
        ijcnn1's test file 3.72 / 2.74 / 2.03 s, a9a 7.66 / 2.86 / 3.93 s, w8a 1.40 / 2.08 /
        2.10 s. Also the size of the kernel working sets (``kernel_steps``), which grow the
        same way up to four times this one.
    kernel_steps : KernelSteps or {"auto", "sets", "pairs"}
        The steps for the RBF and polynomial kernels. ``"sets"``: working sets of
        ``subproblem_size`` variables chosen from :math:`G` as above, each solved by the pair
        steps with its own kernel rows (q values), then the moves added to :math:`G` in one
        pass over all the variables spread over the threads
        (:mod:`optframe.drivers.smo_sets`); no row cache of length n. ``"pairs"``: the pair
        steps with two kernel rows over the active variables a step. ``"auto"``: sets from
        4,096 variables, for duals without a diagonal of their own. Only a dual whose rows
        are the kernel's, not under the paper's rule, goes by sets; the others always go by
        pairs. A dual without the equality row (no intercept) takes the single-variable
        steps inside its sets (RBF, no intercept, C = 1, quiet: a9a 4.0 s by rows against
        3.9 s by sets at one thread, 2.9 s against 2.2 s at two; ijcnn1 2.6-2.8 / 2.5 and
        1.66 / 1.17 s; w8a 3.9-4.0 / 4.7 and 3.4 / 2.9 s). The squared hinge's standard
        dual (a diagonal, no upper bounds) goes by sets only when asked: slower than the
        pairs on ijcnn1 and w8a with an intercept (RBF, C = 1: 8.95 against 7.92 s and 5.19
        against 4.11 s at one thread), up to 2.9x without. Measured
        (RBF, C = 1, one and two threads, quiet 2-core machine, all certified): a9a 2.46 s by
        pairs against 1.97 s by sets at one thread, 2.16 s against 1.18 s at two; ijcnn1
        1.83 / 1.58 and 1.53 / 0.93 s; w8a 1.32 / 1.08 and 1.15 / 0.69 s.

    Notes
    -----
    ``Result.objective`` is the model's objective at the recovered solution (the dual's
    ``objective`` from the fresh gradient when it has one, else the model's ``objective``);
    ``Result.bound`` is :math:`-\Phi(x) + \text{offset}` at the final (feasible) dual point with
    the fresh gradient, a proven lower bound; the status is CONVERGED when the stopping rule is
    met (the gap says how close). History extras: ``violation`` (the gap of the rule),
    ``dual_objective`` (tracked incrementally from the exact pair decreases), ``active``
    (unshrunk variables), ``kernel_rows`` (rows computed so far), ``pair`` (the dual
    variables ``(i, j)`` of the last pair step, ``None`` before the first); a record's
    ``objective`` is the dual's ``objective`` when no variable is shrunk, else NaN. A step
    that cannot decrease the dual in floating point ends the run (``stats["stalled"]``, a
    ConvergenceWarning).
    Stats of the steps through :math:`w`: ``linear_steps`` (which steps ran), ``working_sets``,
    ``gram_rows`` (working-set Gram rows computed), ``set_size`` (the working-set size at the
    end, after any growth; also for the kernel working sets, 0 without sets) and ``w_drift``
    (the largest difference, relative to :math:`\max(1, \lVert w\rVert_\infty)`, between the
    kept :math:`w` and :math:`w` from scratch, checked with every gradient from scratch, when
    :math:`w` is reset).

    Cost: the gradient from scratch (at the start and at the end) is one pass over the kernel
    values between all variables and the support, in blocks (inner products by BLAS, one thread
    per block); linear kernel: O(nnz) through :math:`w`. Each step is O(m) work for m active
    variables plus at most two kernel rows (O(m d) each on a cache miss). The scans keep ``up``
    and ``low`` as :math:`-a_k G_k` plus offsets that change only when :math:`x_k` does, so they
    have no data-dependent branches, and the exponentials are vectorized. Memory: O(n d) for
    the data and the vectors plus ``cache_bytes``; no n x n matrix unless it fits the budget.
    Sparse points stay sparse (CSR rows and a column copy) below 25% non-zeros, and are made
    dense from there (at most twice their CSR memory).

    Measured on 2026-11-22 (shared 2-core machine, load 2-2.7, each pair side by side in one
    process; PULearning with 100 labeled positives, lam 1e-2, tol 1e-3, the pu suite's scaling
    cells): kddcup, 50,000 unlabeled rows, RBF: 49.9 s with this version against 227.3 s with
    the previous one (starting gradient and final objective by numpy kernel blocks, O(n) scans
    with branches on all n variables, no shrinking, float64 rows); adult, 48,742 rows, linear:
    14.2 s against 56.8 s. In the suite (``optframe bench pu --serial --threads 2``) every 50k
    cell of adult, kddcup and shuttle took 12-54 s (linear and RBF). WeightedSVM against
    scikit-learn's SVC in the same run: a9a 9.0 s against 32.8 s, ijcnn1 5.4 s against 13.2 s.

    Measured on 2026-11-26, the linear kernel through :math:`w` against kernel rows
    (``linear_steps="rows"``, float32 rows), side by side in one process, alternating, three
    repeats, median solve seconds (compilation excluded), one thread, shared 2-core machine at
    load 3.1-5.7 (other jobs running), objectives recomputed by the model (all OPTIMAL, within
    8e-8 relative of each other); WeightedSVM, C = 1, free intercept, ``cache_bytes``
    2000 MiB: ijcnn1's test file (91,701 x 22) 2.66 s against 10.54 s (4.0x), a9a
    (32,561 x 123) 2.60 s against 9.27 s (3.6x), w8a (49,749 x 300) 2.16 s against 4.76 s
    (2.2x); PULearning on the pu suite's adult scaling cell (48,742 unlabeled rows, linear,
    lam 1e-2, tol 1e-3) 1.41 s against 10.80 s (7.7x). The working sets take more pair steps
    than the kernel-row steps (ijcnn1 52,842 against 33,192, w8a 281,901 against 313,711), and
    a step still pays O(q) plus its Gram rows over the working set: the gain is the ratio of
    the active set to the working set in the early steps, when the kernel-row steps pay for
    rows over most of the variables (w8a's kernel-row steps spend most of their time at about
    560 active variables, where the two cost the same).

    References
    ----------
    R.-E. Fan, P.-H. Chen, C.-J. Lin, "Working set selection using second order information for
    training support vector machines", JMLR 6 (2005). E. Sansone, F. G. B. De Natale, Z.-H. Zhou,
    "Efficient training for positive unlabeled learning", IEEE TPAMI 2019 (USMO), with the fixes
    of notes/usmo.md.
    """

    name: ClassVar[str] = "smo"
    needs: ClassVar[tuple[type[Structure], ...]] = (BoxQPDual,)

    tol: float = 1e-3
    max_iter: int | None = None
    working_set: WorkingSet | Literal["second_order", "mvp"] = WorkingSet.SECOND_ORDER
    stopping: Stopping | Literal["complete", "paper"] = Stopping.COMPLETE
    shrinking: bool = True
    cache_bytes: int = 256 * 1024**2
    float32_rows: bool = True
    threads: int | None = None
    parallel_rows: bool = False
    warm_start: NDArray[np.float64] | None = field(default=None, repr=False)
    check_every: int = 2000
    linear_steps: LinearSteps | Literal["weights", "rows"] = LinearSteps.WEIGHTS
    subproblem_size: int = 4096
    kernel_steps: KernelSteps | Literal["auto", "sets", "pairs"] = KernelSteps.AUTO

    def __post_init__(self) -> None:
        set_real(self, "tol", "SMO")
        set_choice(self, "working_set", WorkingSet, "SMO")
        set_choice(self, "stopping", Stopping, "SMO")
        set_choice(self, "linear_steps", LinearSteps, "SMO")
        set_choice(self, "kernel_steps", KernelSteps, "SMO")
        set_count(self, "check_every", "SMO")
        set_count(self, "subproblem_size", "SMO", low=2)
        if self.max_iter is not None:
            set_count(self, "max_iter", "SMO")
        if self.threads is not None:
            set_count(self, "threads", "SMO")

    def run(self, model: Model, context: RunContext) -> Result:
        """Solve the model's dual by SMO and return the model's solution, objective and bound."""
        wanted = self.threads if self.threads is not None else context.options.threads
        with numba_threads(wanted) as threads:
            return self._run(model, context, threads)

    def kernel_needs(self, dual: BoxQPDual) -> Needs:
        """What the kernels of a run on ``dual`` are compiled for (:class:`optframe.jit.Needs`).

        The steps go through the weights for the linear kernel of a plain dual (unless
        ``linear_steps="rows"`` or ``stopping="paper"``), by kernel rows otherwise.
        """
        kind = _kernel_code(dual.kernel)[0]
        single_steps = dual.rhs is None
        by_sets = (
            kind != 0 and self.stopping != "paper" and _rows_are_kernel(dual)
            and (self.kernel_steps == "sets"
                 or (self.kernel_steps == "auto" and dual.n >= sets.SETS_FROM
                     and dual.diagonal is None))
        )  # fmt: skip
        return Needs(
            linear=kind == 0,
            sparse=stays_sparse(dual.X),
            weights=(
                kind == 0 and self.linear_steps == "weights" and self.stopping != "paper"
                and bool(dual.plain) and not single_steps
            ),
            quadratic=dual.diagonal is not None and not single_steps,
            single=single_steps,
            sets=by_sets,
        )  # fmt: skip

    def _run(self, model: Model, context: RunContext, threads: int) -> Result:
        start = time.perf_counter()
        dual = model.structure(BoxQPDual)
        if dual.rhs is None and self.stopping == "paper":
            raise IncompatibleDriver(
                f"SMO: stopping='paper' is USMO's rule for pair steps on an equality row; "
                f"{model.name}'s dual has none (no free intercept): use stopping='complete'"
            )
        if dual.diagonal is not None and self.stopping == "paper":
            raise IncompatibleDriver(
                f"SMO: stopping='paper' is USMO's rule for duals without a diagonal; "
                f"{model.name}'s dual has one (quadratic loss pieces): use stopping='complete'"
            )
        needs = self.kernel_needs(dual)
        # the kernels this run needs, compiled off the clock (the dual's build stays on it)
        compiled = compile_kernels(self, context.options.verbose, needs)
        start += compiled
        n = dual.n
        options = self.common_options(
            context.options, tol=self.tol, max_iter=self.max_iter,
            default_max_iter=max(10**6, 100 * n),
        )  # fmt: skip
        tol, max_iter = options.tol, options.max_iter
        # Without a tol of the user's, the violation rule is tightened until the gap closes (not
        # the paper's rule: it misses violations at the kink that no tolerance brings back).
        tighten = context.options.tol is None and self.stopping == "complete"
        tightened, gap_tol = 0, self.gap_tolerance(context.options)
        kind, gamma, coef0, degree = _kernel_code(dual.kernel)
        X, Z = points(dual.X)
        a0, c0, u0, kink0, sb0, sa0 = (
            np.array(v, dtype=np.float64)
            for v in (
                dual.sign,
                dual.linear,
                dual.upper,
                dual.kink,
                dual.slope_below,
                dual.slope_above,
            )
        )
        x0 = self.warm_start if self.warm_start is not None else dual.start
        if x0 is None:
            raise ModelError(f"SMO: {model.name} gives no feasible start; pass warm_start=")
        x = np.array(x0, dtype=np.float64).reshape(-1)
        _check_feasible(dual, x, "the warm start" if self.warm_start is not None else "start")
        x = np.clip(x, 0.0, u0)
        sqn0 = np.array(Linear().diagonal(X), dtype=np.float64)  # squared norms
        # Q = diag(a) M diag(a), M = diag(r) (K + shift) diag(r) + ridge I (see smo_core)
        plain, shift, ridge = _rows_are_kernel(dual), float(dual.kernel_shift), float(dual.ridge)
        r0 = np.ones(n) if dual.row_sign is None else np.array(dual.row_sign, dtype=np.float64)
        # a diagonal D of the dual's own (quadratic loss pieces): its steps add it themselves
        D0 = None if dual.diagonal is None else np.array(dual.diagonal, dtype=np.float64)
        q0 = a0 * r0  # the sign of Q's rows

        exact_x, exact_G = np.zeros(n), np.array(c0)  # the last exact gradient (orig. order)

        def fresh_gradient() -> NDArray[np.float64]:
            """G = Qx + c in float64 from the kernel, in the original order, returned by position.

            From scratch, or as the last such gradient plus Q times the change of x when fewer
            variables changed than are non-zero: the same float64 kernel values, none of the
            float32 rows' rounding that the steps' gradient carries. After a tightened rule
            few variables move (a9a, RBF: the second pass costs a fraction of the first).
            """
            nonlocal exact_x, exact_G
            x_orig = np.empty(n)
            x_orig[perm] = x
            change = x_orig - exact_x
            from_last = np.count_nonzero(change) < np.count_nonzero(x_orig)
            weights, offset = (change, np.zeros(n)) if from_last else (x_orig, c0)
            G_orig = np.empty(n)
            chunk = numba.set_parallel_chunksize(1)  # blocks to whichever thread is free
            try:
                with threadpool_limits(limits=1, user_api="blas"):  # BLAS inside the threads
                    kernel_sums(Z, sqn0, kind, gamma, coef0, degree, q0, offset, weights, 0, n,
                                G_orig)  # fmt: skip
            finally:
                numba.set_parallel_chunksize(chunk)
            if shift != 0.0 or ridge != 0.0:
                G_orig += q0 * (shift * float(q0 @ weights)) + ridge * weights
            if D0 is not None:
                G_orig += D0 * weights
            if from_last:
                G_orig += exact_G
            exact_x, exact_G = x_orig, G_orig
            return G_orig[perm]

        # The steps work on positions: the arrays below (and Zrow, the points kernel rows are
        # computed from) are permuted in place by shrinking; perm[p] is the variable at p.
        perm = np.arange(n, dtype=np.int64)
        a, c, u, kink, sb, sa = (v.copy() for v in (a0, c0, u0, kink0, sb0, sa0))
        sqn = sqn0.copy()
        diag = np.array(dual.kernel.diagonal(X), dtype=np.float64) + (shift + ridge)
        extra = np.zeros(0) if D0 is None else D0.copy()  # permuted with the positions
        if D0 is not None:
            diag += D0
        terms = (r0.copy(), shift, ridge, plain)
        paper = self.stopping == "paper"
        single_steps = bool(needs.single)  # no equality row: one variable per step
        if single_steps:
            extra = np.zeros(n) if D0 is None else extra
        through_w = bool(needs.weights)  # linear kernel, plain dual, not the paper's rule
        by_sets = bool(needs.sets)  # kernel working sets: no row over all the variables kept
        by_rows = not (through_w or by_sets)
        row_dtype = np.float32 if self.float32_rows and by_rows else np.float64
        Zrow = row_points(Z, row_dtype)
        itemsize = np.dtype(row_dtype).itemsize
        slots = cache_slots(n, self.cache_bytes, itemsize) if by_rows else 0
        cache = core.row_cache(np.empty((slots, n), dtype=row_dtype), n)
        counters = np.zeros(core.N_COUNTERS, dtype=np.int64)
        counters[core.ACTIVE] = n
        wcount = np.zeros(linear.N_WCOUNT, dtype=np.int64)
        work = np.empty((5, n))
        set_scratch = (work, np.zeros(n), np.empty(n, dtype=np.int64)) if by_sets else None
        buf = np.empty(n)
        G = fresh_gradient()
        exact, fresh_passes = True, 1
        drift = 0.0

        def exact_weights() -> NDArray[np.float64]:
            """The weights sum_l a_l x_l z_l from scratch; keeps how far the kept w had drifted."""
            nonlocal drift
            x_orig = np.empty(n)
            x_orig[perm] = x
            fresh = np.asarray(X.T @ (q0 * x_orig), dtype=np.float64)
            if w.shape == fresh.shape:
                scale = max(1.0, float(np.max(np.abs(fresh), initial=0.0)))
                drift = max(drift, float(np.max(np.abs(w - fresh), initial=0.0)) / scale)
            return fresh

        w, gram = np.empty(0), np.empty(0)
        if through_w:
            w = exact_weights()
        if through_w or by_sets:
            # the working sets' Gram rows: at least two, at most all, within cache_bytes
            q = min(self.subproblem_size, n) + 2
            gram = np.empty(max(2 * q, min(q * q, self.cache_bytes // 8)))
        phi = core.dual_value(x, G, c, kink, sb, sa)
        built = time.perf_counter()

        history: list[IterationRecord] = []
        steps, status, gap = 0, Status.ITERATION_LIMIT, math.inf
        stalled = False
        second = self.working_set == "second_order"
        shrink_every = min(n, SHRINK_EVERY_WEIGHTS if through_w else SHRINK_EVERY_ROWS)
        parallel_ok = self.parallel_rows and threads > 1 and n >= PARALLEL_ROWS
        parallel = True if parallel_ok else core.SERIAL  # SERIAL: no parallel row code
        # a small problem converges in fewer steps than check_every: records every n / 2 steps
        # (at least RECORD_MIN_STEPS) draw its history; from 4,000 variables check_every rules
        record_every = max(RECORD_MIN_STEPS, n // 2)
        pacer = Pacer(start, options.time_limit)
        # seconds per kernel value of a pass over the data (the gradient from scratch, the
        # solution's f, the certificate's): the loop ends early enough for them
        per_value = 0.0
        if options.time_limit is not None and not through_w:
            per_value = self._pass_rate(Z, sqn0, kind, gamma, coef0, degree, n)
        # the certificate's pass over all the points is kept for when it is a modest part of the
        # limit; a larger one is skipped at a time-limit stop (certificate_skipped) instead of
        # leaving the steps no time
        certificate = per_value * n * n
        keep_certificate = options.time_limit is None or certificate <= 0.5 * options.time_limit
        if pacer.expired():  # the set-up used the time: no step
            status = Status.TIME_LIMIT
        while status is not Status.TIME_LIMIT:
            support_passes = per_value * n * POST_PASSES * np.count_nonzero(x)
            pacer.reserve(support_passes + (certificate if keep_certificate else 0.0))
            budget = pacer.budget(min(self.check_every, record_every, max_iter - steps))
            if budget <= 0:
                break
            if by_sets:
                code, done, gap, dphi = sets.run_chunk(
                    Zrow, Z, sqn, (kind, gamma, coef0, degree), diag,
                    None if D0 is None else extra, (a, u, kink, sb, sa), x, G, set_scratch,
                    counters, wcount, float(tol), int(budget), second, self.subproblem_size, gram,
                    single_steps,
                )  # fmt: skip
            elif through_w:
                code, done, gap, dphi = linear.run_chunk(
                    Zrow, w, diag, a, c, u, kink, sb, sa, x, G, perm, work, counters, wcount,
                    float(tol), int(budget), second, self.shrinking, shrink_every,
                    self.subproblem_size, 1e-12, gram, linear.INNER_SHRINK,
                )  # fmt: skip
            elif single_steps:
                code, done, gap, dphi = single.run_chunk(
                    Zrow, sqn, kind, gamma, coef0, degree, terms, diag, extra, a, c, u, kink, sb,
                    sa, x, G, perm, work, cache, counters, buf, float(tol), int(budget), second,
                    self.shrinking, shrink_every, 1e-12, parallel,
                )  # fmt: skip
            elif D0 is not None:
                code, done, gap, dphi = quadratic.run_chunk(
                    Zrow, sqn, kind, gamma, coef0, degree, terms, diag, extra, a, c, u, kink, sb,
                    sa, x, G, perm, work, cache, counters, buf, float(tol), int(budget), second,
                    self.shrinking, shrink_every, 1e-12, parallel,
                )  # fmt: skip
            else:
                code, done, gap, dphi = core.run_chunk(
                    Zrow, sqn, kind, gamma, coef0, degree, terms, diag, a, c, u, kink, sb, sa,
                    x, G, perm, work, cache, counters, buf, float(tol),
                    int(budget), second, paper, self.shrinking, shrink_every, 1e-12, parallel,
                )  # fmt: skip
            pacer.done(int(done))
            steps += int(done)
            phi += dphi
            exact = exact and done == 0
            if code == 3 or (code == 1 and not exact):
                # Accept the rule only on a gradient from scratch (all variables active again).
                G[:] = fresh_gradient()
                exact, fresh_passes = True, fresh_passes + 1
                counters[core.ACTIVE], counters[core.N_SHRUNK] = n, 0
                counters[core.SINCE_SHRINK] = 0
                # Forgotten as after a shrinking. Rows carried across shrinkings computed fewer
                # rows but ran slower: kept rows spread over the whole cache, whose first touch
                # costs more than the rows saved (w8a's L2-SVM, 2000 MiB: 5.8 s against 3.9 s;
                # four of five RBF cells in docs/results/peers.md, fourth run).
                core.forget_rows(cache)
                if through_w:
                    w[:] = exact_weights()
                code = 0
            record = self._record(dual, x, G, perm, counters, steps, start, gap, phi)
            history.append(record)
            floor = self._tol_floor(x, phi) if code == 1 and tighten else 0.0
            if code == 1 and tighten and tol > floor:
                # the bound from the exact dual value: the record's sums the steps' decreases,
                # which drift by the float32 rows' rounding; that matters when Phi is small (the
                # simplex QP of an L2-SVM: Phi near 1e-4)
                phi_exact = core.dual_value(x, G, c, kink, sb, sa)
                bound = -dual.bound_scale * phi_exact + dual.bound_offset
                open_gap = self._open_gap(model, dual, record.objective, bound, x, G, perm)
                if open_gap > gap_tol:
                    # the violation rule holds but the certificate does not: a tighter rule; the
                    # gap shrinks about as the square of the rule's tolerance (w8a's L2-SVM:
                    # 8e-9 at 1e-7, 7e-11 at 1e-8)
                    tol = max(tol * min(0.1, math.sqrt(0.5 * gap_tol / open_gap)), floor)
                    tightened += 1
                    code = 0
            if code == 1:
                status = Status.CONVERGED
                break
            if code == 2:
                status, stalled = Status.CONVERGED, True
                break
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if pacer.expired():
                status = Status.TIME_LIMIT
                break
        if not exact:
            G[:] = fresh_gradient()
            fresh_passes += 1
        if through_w:
            exact_weights()  # the drift of the kept w at the end
        x_out, G_out = _in_order(x, G, perm)
        all_active = np.int64(n)
        if single_steps:
            final_gap, _ = single.violation(a0, x_out, G_out, u0, kink0, sb0, sa0, all_active)
        else:
            final_gap, _, _ = core.violation(
                a0, x_out, G_out, u0, kink0, sb0, sa0, all_active, False
            )
        if stalled and not tightened:  # a stall below the user's rule is the certificate's call
            warnings.warn(
                f"SMO stalled (no step decreases the dual) with violation {final_gap:.3g} "
                f"> tol {tol:g}",
                ConvergenceWarning,
                stacklevel=3,
            )
        solved = time.perf_counter()
        solution = dual.recover(x_out.copy(), G_out.copy())
        phi_exact = core.dual_value(x_out, G_out, c0, kink0, sb0, sa0)
        bound = -dual.bound_scale * phi_exact + dual.bound_offset
        if dual.objective is not None:
            objective = float(dual.objective(x_out, G_out))
        else:
            objective = model.objective(solution)
        paper_gap = (
            final_gap
            if single_steps
            else core.violation(a0, x_out, G_out, u0, kink0, sb0, sa0, all_active, True)[0]
        )
        stats = {
            "violation": float(final_gap),
            "paper_violation": float(paper_gap),
            "dual_objective": bound,
            "steps": steps,
            "kernel_rows": int(counters[core.ROWS]),
            "cache_hits": int(counters[core.HITS]),
            "cache_rows": slots,
            "cache_bytes": slots * n * itemsize,
            "gradient_passes": fresh_passes,
            "threads": threads,
            "stalled": stalled,
            "equality_residual": (
                0.0 if dual.rhs is None else abs(float(a0 @ x_out) - float(dual.rhs))
            ),
            "tol": tol,
            "tightened": tightened,
            "linear_steps": "weights" if through_w else "rows",
            "kernel_steps": "sets" if by_sets else "pairs",
            "single_steps": single_steps,
            "working_sets": int(wcount[linear.SETS]),
            "gram_rows": int(wcount[linear.GRAM_ROWS]),
            "set_size": int(wcount[linear.SIZE]),
            "w_drift": drift,
        }
        if status is Status.TIME_LIMIT and options.time_limit is not None:
            margin = start + 1.1 * options.time_limit + 0.5 - time.perf_counter()
            if not keep_certificate or certificate > margin:
                stats["certificate_skipped"] = (
                    f"the model's dual bound (about {certificate:.2g} s) does not fit in the "
                    "time limit"
                )
        return driver_result(
            self, model, status, solution,
            objective=objective, bound=bound, iterations=steps, history=history,
            timings=clock_timings(start, built, solved, compile_seconds=compiled),
            stats=stats, backend="numba",
        )  # fmt: skip

    @staticmethod
    def _pass_rate(
        Z: tuple,
        sqn: NDArray[np.float64],
        kind: int,
        gamma: float,
        coef0: float,
        degree: float,
        n: int,
    ) -> float:
        """Seconds per kernel value of a kernel sum, measured on a probe of the data.

        At most ``PROBE_ROWS`` rows against ``PROBE_SUPPORT`` points (a few milliseconds), run
        as :func:`~optframe.kernel_sums.kernel_sums` is for the gradient from scratch. The
        passes after the loop cost about this rate times ``n`` times the support each.
        """
        rows, support = min(n, PROBE_ROWS), min(n, PROBE_SUPPORT)
        x = np.zeros(n)
        x[np.linspace(0, n - 1, support).astype(np.int64)] = 1.0
        ones, zeros, out = np.ones(n), np.zeros(n), np.empty(n)
        chunk = numba.set_parallel_chunksize(1)
        seconds = math.inf
        try:
            with threadpool_limits(limits=1, user_api="blas"):
                for _ in range(2):  # the faster of two: the first can wait for the threads
                    tick = time.perf_counter()
                    kernel_sums(Z, sqn, kind, gamma, coef0, degree, ones, zeros, x, 0, rows, out)
                    seconds = min(seconds, time.perf_counter() - tick)
        finally:
            numba.set_parallel_chunksize(chunk)
        return seconds / (rows * np.count_nonzero(x))

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else 1e-6: ``tol`` is the violation rule's, not a gap."""
        return DEFAULT_GAP_TOL if options.gap_tol is None else float(options.gap_tol)

    @staticmethod
    def _tol_floor(x: NDArray[np.float64], phi: float) -> float:
        r"""The tightest rule: ``MIN_TOL`` relative to the dual's scale.

        A point meeting the rule at :math:`\tau` is within about :math:`\tau \lVert x\rVert_1`
        of the dual optimum; the floor keeps that at ``MIN_TOL`` relative to :math:`|\Phi|`
        (the SVM duals have :math:`|\Phi| \approx \lVert x\rVert_1`; the simplex QP of a
        well-fitted L2-SVM has :math:`\lVert x\rVert_1 = 1` and :math:`\Phi` near 1e-3).
        """
        size = float(np.abs(x).sum())
        return MIN_TOL * min(1.0, abs(phi) / size) if size > 0.0 else MIN_TOL

    @staticmethod
    def _open_gap(
        model: Model,
        dual: BoxQPDual,
        objective: float,
        bound: float,
        x: NDArray[np.float64],
        G: NDArray[np.float64],
        perm: NDArray[np.int64],
    ) -> float:
        """The relative gap between the objective at ``x`` (exact ``G``) and ``bound``.

        ``objective`` when finite (the dual's cheap ``objective``), else the model's objective at
        the recovered solution (one more pass over the data, only at a stop); 0 when there is
        nothing to compare (the certificate then judges).
        """
        if not math.isfinite(objective):
            objective = float(model.objective(dual.recover(*_in_order(x, G, perm))))
        if not (math.isfinite(objective) and bound is not None and math.isfinite(bound)):
            return 0.0
        return gap_of(objective, bound, model.gap_scale(objective, bound))

    def _record(self, dual, x, G, perm, counters, steps, start, gap, phi):
        n = x.shape[0]
        active = int(counters[core.ACTIVE])
        objective = math.nan
        if active == n and dual.objective is not None:
            objective = float(dual.objective(*_in_order(x, G, perm)))
        return IterationRecord(
            iteration=steps,
            seconds=time.perf_counter() - start,
            objective=objective,
            bound=-dual.bound_scale * phi + dual.bound_offset,
            extras={
                "violation": float(gap),
                "dual_objective": -dual.bound_scale * phi + dual.bound_offset,
                "active": active,
                "kernel_rows": int(counters[core.ROWS]),
                # the dual variables of the last pair step (None before the first)
                "pair": (int(counters[core.LAST_I]), int(counters[core.LAST_J]))
                if counters[core.STEPS] > 0
                else None,
            },
        )
