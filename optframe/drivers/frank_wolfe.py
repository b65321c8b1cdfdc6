r"""Frank-Wolfe (FW) and Modified Frank-Wolfe (MFW, away steps) for MEB-type simplex QPs.

The driver solves any model that offers a :class:`~optframe.capabilities.SimplexQP` (a kernel
quadratic on the unit simplex and the way back to the model's solution), for example the L2SVM:
Frandi, Nanculef, Gasparo, Lodi and Sartori, "Training Support Vector Machines Using Frank-Wolfe
Optimization Methods", with the corrections of notes/frank_wolfe.md (the away-step radius sign,
E1; exact line search for kernels whose diagonal is not constant, section 2.8; an optional exact
pass before stopping, A2), and a pairwise variant beyond the paper (Lacoste-Julien and Jaggi
2015).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.backend import SolveOptions
from optframe.capabilities import SimplexQP, Structure
from optframe.certificate import DEFAULT_GAP_TOL, gap_of
from optframe.drivers import fw_core as core
from optframe.drivers._checks import (
    Choice,
    check_count,
    set_choice,
    set_count,
)
from optframe.drivers.base import Driver, RunContext, clock_timings, driver_result
from optframe.drivers.coreset import CoresetSteps
from optframe.drivers.fw_active import ActivePhases, run_phases
from optframe.drivers.pacing import Pacer
from optframe.drivers.smo import _kernel_code
from optframe.errors import IncompatibleDriver, ModelError
from optframe.jit import compile_kernels, needs_of
from optframe.model import Model
from optframe.registry import register_driver
from optframe.result import IterationRecord, Result, Status
from optframe.validation import check_integer, check_number


def radius_gap_tolerance(options: SolveOptions) -> float:
    r"""The certificate's tolerance for the radius rules (FW, MFW, PFW, CVM): ``gap_tol``, or 1e-6.

    ``eps`` (``tol``) bounds the ball's radius, :math:`R \le (1+\varepsilon)^2 R^\star` in the
    units of :math:`g = \delta^2 - R`, not the objective's relative gap: the rule decides when to
    stop and the certificate, at this tolerance, whether the stop is proven optimal.
    """
    return DEFAULT_GAP_TOL if options.gap_tol is None else float(options.gap_tol)


#: The former name of :class:`~optframe.capabilities.SimplexQP` (a minimal-enclosing-ball dual).
MEBDual = SimplexQP


# Dense copy of the points when at least this fraction of the entries is nonzero.
DENSE_FILL = 0.25
#: The smallest radius threshold a tightened rule uses, relative to Delta^2 / g (the rounding
#: of delta_plus = 2 (R - s_i) / g, whose terms are of the size of Delta^2).
THRESHOLD_FLOOR = 1e-13
#: Tightenings of the radius rule at most in one run (each by a factor of 10 or more).
MAX_TIGHTENINGS = 12
#: A stop by the radius rule is taken when the certificate's relative gap is at most this
#: times the rule's threshold (the accuracy its eps asks for) or the gap tolerance; a gap
#: farther open (shifted data, where g dwarfs the objective) tightens the rule to the gap
#: tolerance.
FAR_GAP = 10.0
# Columns computed by one matrix product when an exact pass needs uncached ones (store_block).
PREFETCH_BLOCK = 256


def check_common(name: str, eps: float, sample_size: int | None, init_size: int) -> None:
    """Validate the options shared by FW, MFW and CVM (ModelError naming the bad one)."""
    check_number(eps, "eps", name, low=0.0, high=1.0, low_open=True, high_open=True)
    check_integer(sample_size, "sample_size", name, allow_none=True)
    check_count(init_size, "init_size", name, low=2)


def normalize_common(driver: Any) -> None:
    """Store the checked ``eps``, ``sample_size`` and ``init_size`` as float and ints."""
    object.__setattr__(driver, "eps", float(driver.eps))
    if driver.sample_size is not None:
        object.__setattr__(driver, "sample_size", int(driver.sample_size))
    object.__setattr__(driver, "init_size", int(driver.init_size))


class Problem:
    """The arrays the numba kernels share: CSR points, kernel code, diagonal, cache and state."""

    def __init__(
        self, model: Model, cache_bytes: int, driver: str, dense_bytes: int = 0,
        coreset_bytes: int | None = None,
    ) -> None:  # fmt: skip
        self.dual = model.structure(SimplexQP)
        dual = self.dual
        if not dual.ridge > 0:
            raise ModelError(f"{driver}: the MEB dual needs ridge > 0; got {dual.ridge}")
        kind, gamma, coef0, degree = _kernel_code(dual.kernel)
        X = sp.csr_array(dual.X, dtype=np.float64) if sp.issparse(dual.X) else None
        if X is None:
            X = sp.csr_array(np.asarray(dual.X, dtype=np.float64))
        X.sum_duplicates()
        X.sort_indices()
        self.X = X
        self.sqn = np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        rows, cols = X.shape
        fits = rows * cols * 8 <= dense_bytes
        self.Xd = (
            np.ascontiguousarray(X.toarray())
            if fits and X.nnz >= DENSE_FILL * rows * cols
            else np.zeros((0, cols))
        )
        self.indptr, self.indices, self.data, self.csc = core.point_arrays(X, self.Xd.shape[0] > 0)
        self.y = np.ascontiguousarray(dual.sign, dtype=np.float64)
        m = self.m = int(self.y.shape[0])
        if X.shape[0] != m:
            raise ModelError(f"{driver}: X has {X.shape[0]} rows but sign has {m}")
        self.kp = np.array([kind, gamma, coef0, degree, float(dual.ridge)])
        base = np.asarray(dual.kernel.diagonal(X), dtype=np.float64)
        self.diag = base + 1.0 + float(dual.ridge)
        self.delta2 = float(self.diag.max())
        self.constant_diagonal = bool(np.ptp(self.diag) <= 1e-12 * self.delta2)
        self.work = np.zeros(X.shape[1])
        self.bits = np.empty(m, dtype=np.int64)  # scratch of the vectorized exp
        self.cache, self.slots = core.column_cache(m, cache_bytes)
        # the coreset's rows for SMO's steps: the budget given, else rows of the initial ball
        rows = 64 * m * 8 if coreset_bytes is None else coreset_bytes
        self.steps = CoresetSteps(self, rows)
        self.counters = np.zeros(10, dtype=np.int64)
        self.alpha = np.zeros(m)
        self.s = np.zeros(m)
        self.core = np.zeros(m, dtype=np.int64)
        self.pos = np.full(m, -1, dtype=np.int64)
        self.ints = np.array([0, -1, -1, -1], dtype=np.int64)
        self.sc = np.array([0.0, 0.0, 0.0, 0.0, self.delta2])
        self.full_passes = 0
        self.compile_seconds = 0.0  # the driver's kernel compilation, before its timer

    # ------------------------------------------------------------------------------- helpers
    @property
    def points(self) -> tuple:
        """(indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp)."""
        return (self.indptr, self.indices, self.data, self.Xd, *self.csc, self.sqn, self.y,
                self.kp)  # fmt: skip

    @property
    def q(self) -> int:
        """Coreset size."""
        return int(self.ints[core.Q])

    @property
    def R(self) -> float:
        """The maintained R = alpha' K~ alpha."""
        return float(self.sc[core.S_R])

    def set_core(self, members: NDArray[np.int64]) -> None:
        """Make ``members`` the coreset (the positions map follows)."""
        self.pos[:] = -1
        self.core[: members.size] = members
        self.pos[members] = np.arange(members.size)
        self.ints[core.Q] = members.size

    def core_s(self) -> None:
        """Compute s and R on the coreset from the coreset's rows."""
        members = self.core[: self.q]
        self.s[members] = self.steps.gradient(self)
        self.sc[core.S_R] = float(self.alpha[members] @ self.s[members])

    def grow_cache(self, cache_bytes: int) -> None:
        """Enlarge the column cache to ``cache_bytes``, keeping the cached columns in place."""
        old, old_slots = self.cache, self.slots
        new, slots = core.column_cache(self.m, cache_bytes)
        if slots <= old_slots:
            return
        cols, slot_of, owner, stamp, filled = new
        cols[:old_slots] = old[0]
        slot_of[:] = old[1]
        owner[:old_slots] = old[2]
        stamp[:old_slots] = old[3]
        filled[:old_slots] = old[4]
        self.cache, self.slots = new, slots

    def store_block(self, block: NDArray[np.int64]) -> None:
        """Compute and cache the full columns ``block`` from one matrix product.

        The product reads the points once for the block instead of once per column (BLAS on
        the dense copy, a sparse product otherwise); ``block`` must be smaller than the cache.
        """
        if self.Xd.shape[0] > 0:
            dots = self.Xd[block] @ self.Xd.T
        else:
            dots = (self.X[block] @ self.X.T).toarray()
        core.store_columns(block, np.ascontiguousarray(dots), self.sqn, self.y, self.kp,
                           self.bits, self.cache, self.counters)  # fmt: skip

    def full_pass(self) -> tuple[float, int, float]:
        """Exact s on all points: (delta_plus, argmin s, drift of the maintained coreset s).

        The cached full columns of the coreset are summed first; the others are computed by
        blocks (``store_block``), summed, and cached in place of the least recently used ones,
        so a coreset larger than the cache costs block products, never column-by-column
        recomputation.
        """
        q = self.q
        members = self.core[:q].copy()
        cols, slot_of, _, _, filled = self.cache
        slot = slot_of[members]
        cached = (slot >= 0) & (filled[np.maximum(slot, 0)] == self.m)
        fresh = np.zeros(self.m)
        core.accumulate(members[cached], self.alpha, cols, slot_of, fresh)
        self.counters[core.HITS] += int(np.count_nonzero(cached))
        missing = members[~cached]
        size = max(1, min(PREFETCH_BLOCK, self.slots - 1))
        for lo in range(0, missing.size, size):
            block = np.ascontiguousarray(missing[lo : lo + size])
            self.store_block(block)  # counts the block's misses
            core.accumulate(block, self.alpha, cols, slot_of, fresh)
        R, best, drift = core.install(fresh, self.s, self.alpha, self.core, q)
        self.sc[core.S_R] = R
        self.full_passes += 1
        return self.delta_plus(int(best)), int(best), float(drift)

    def delta_plus(self, i: int) -> float:
        """2 (R - s_i) / (Delta^2 - R): the FW gap relative to g."""
        R = self.R
        return 2.0 * (R - float(self.s[i])) / max(self.delta2 - R, 1e-300)

    def smo(self, tol: float, max_steps: int, deadline: float | None = None) -> float:
        """Solve the coreset-restricted problem by SMO's loop (:mod:`.coreset`); the final gap.

        It stops at ``deadline`` (``time.perf_counter()``) if one is given.
        """
        R, steps, gap = self.steps.solve(self, tol, max_steps, deadline)
        self.sc[core.S_R] = R
        self.counters[core.SMO_STEPS] += steps
        return gap

    def initial_ball(self, size: int, rng: np.random.Generator, thr: float) -> None:
        """The MEB of ``size`` random points (class-balanced), solved by SMO, as the start.

        Alternating the classes of two random permutations follows LibCVM (notes section 2.1).
        """
        pos = rng.permutation(np.flatnonzero(self.y > 0))
        neg = rng.permutation(np.flatnonzero(self.y <= 0))
        order = np.empty(pos.size + neg.size, dtype=np.int64)
        k = min(pos.size, neg.size)
        order[: 2 * k : 2], order[1 : 2 * k : 2] = pos[:k], neg[:k]
        order[2 * k :] = pos[k:] if pos.size > k else neg[k:]
        members = order[: min(size, self.m)]
        self.set_core(members)
        self.alpha[members] = 1.0 / members.size
        self.core_s()
        self.smo(0.25 * thr * (self.delta2 - self.R), 100_000)
        alive = members[self.alpha[members] > 0]
        self.alpha /= self.alpha.sum()
        self.set_core(alive)
        self.core_s()

    def open_gap(self, model: Model) -> float:
        r"""The relative gap of the model's objective at ``alpha`` over the bracket's lower end.

        Needs :math:`s = \tilde K\alpha` exact on every point (after an exact search or a full
        pass). The objective is the structure's O(m) ``objective`` when it has one, else the
        model's at the recovered solution.
        """
        best = int(core.argmin(self.s))
        low, _ = self.bracket(float(self.s[best]))
        if self.dual.objective is not None:
            objective = float(self.dual.objective(self.alpha, self.s))
        else:
            objective = float(model.objective(self.dual.recover(self.alpha.copy())))
        if not (math.isfinite(objective) and math.isfinite(low)):
            return 0.0  # nothing to compare: the certificate judges
        return gap_of(objective, low, model.gap_scale(objective, low))

    def tightened(self, thr: float, gap: float, gap_tol: float) -> float | None:
        r"""A tighter threshold for a rule whose stop left ``gap`` open, or ``None`` at the floor.

        The bracket's width is linear in :math:`\delta_+`, so the threshold shrinks by the
        factor the gap must (at least 10); never below the rounding of
        :math:`\delta_+ = 2(R - s_i)/g` (:data:`THRESHOLD_FLOOR` times :math:`\Delta^2/g`).
        """
        floor = THRESHOLD_FLOOR * max(1.0, self.delta2 / max(self.delta2 - self.R, 1e-300))
        if thr <= floor:
            return None
        return max(floor, thr * min(0.1, 0.5 * gap_tol / gap))

    def bracket(self, s_min: float) -> tuple[float, float]:
        """The certified range of the model's optimum from R* in [2 s_min - R, R] (section 3)."""
        R = self.R
        low_R, high_R = 2.0 * s_min - R, R
        a, b = (
            self.dual.scale * low_R + self.dual.offset,
            self.dual.scale * high_R + self.dual.offset,
        )
        return min(a, b), max(a, b)

    def finish(
        self,
        model: Model,
        driver: str,
        status_by_rule: Status,
        steps: int,
        history: list[IterationRecord],
        times: tuple[float, float],
        stats: dict[str, Any],
        s_everywhere: bool = False,
        recompute: bool = True,
    ) -> Result:
        """Final exact check (outside the solve time), the model's solution, objective and bound.

        ``s_everywhere``: s was maintained on every point. ``recompute``: recompute s and R from
        scratch (q columns) and report the drift of the maintained values; without it (only with
        ``s_everywhere``) the check reads the maintained s.
        """
        start, built = times
        solved = time.perf_counter()
        R_maintained = self.R
        drift = math.nan
        if recompute or not s_everywhere:
            maintained = self.s.copy() if s_everywhere else None
            dplus, best, drift = self.full_pass()
            if maintained is not None:
                drift = float(np.max(np.abs(maintained - self.s)))
        else:
            best = int(core.argmin(self.s))
            dplus = self.delta_plus(best)
        thr = stats["threshold"]
        proven = dplus <= thr
        status = status_by_rule
        if status is Status.OPTIMAL and not proven:
            status = Status.CONVERGED
        if status is Status.CONVERGED and proven:
            status = Status.OPTIMAL
        alpha = self.alpha.copy()
        solution = self.dual.recover(alpha)
        objective = model.objective(solution)
        low, high = self.bracket(float(self.s[best]))
        q = self.q
        counters = self.counters
        support = int(np.count_nonzero(alpha))
        stats |= {
            "delta_plus": dplus,
            # 1 - s_min / R: the largest KKT violation of the unnormalized L2-SVM dual
            # min b'K~b/2 - sum(b), b >= 0, at b = alpha / R (gradient s / R - 1), in the units
            # of libsvm's tol (there: the violating-pair gap of the L1-SVM dual)
            "kkt_violation": 1.0 - float(self.s[best]) / max(self.R, 1e-300),
            "proven": proven,
            "R": self.R,
            "R_drift": abs(R_maintained - self.R),
            "cache_drift": drift,
            "recomputed": recompute or not s_everywhere,
            "dense": self.Xd.shape[0] > 0,
            "g": self.delta2 - self.R,
            "delta2": self.delta2,
            "constant_diagonal": self.constant_diagonal,
            "coreset": q,
            "support": support,
            "support_thresholded": int(np.count_nonzero(alpha >= 1e-5 / max(support, 1))),
            "upper_bound": high,
            "kernel_evals": int(counters[core.EVALS]),
            "cache_hits": int(counters[core.HITS]),
            "cache_misses": int(counters[core.MISSES]),
            "cache_slots": self.slots,
            "cache_bytes": self.slots * self.m * 8,
            "full_passes": self.full_passes,
            "fw_steps": int(counters[core.FW_STEPS]),
            "away_steps": int(counters[core.AWAY_STEPS]),
            "drop_steps": int(counters[core.DROP_STEPS]),
            "pair_steps": int(counters[core.PAIR_STEPS]),
            "smo_steps": int(counters[core.SMO_STEPS]),
            "coreset_rows": self.steps.rows_computed,
            "coreset_rows_completed": self.steps.rows_completed,
            "coreset_cache_slots": self.steps.slots,
            "coreset_cache_bytes": self.steps.slots * self.m * 8,
        }
        return driver_result(
            driver, model, status, solution,
            objective=objective, bound=low, iterations=steps, history=history,
            timings=clock_timings(start, built, solved, compile_seconds=self.compile_seconds),
            stats=stats, backend="numba",
        )  # fmt: skip

    def record(
        self,
        steps: int,
        start: float,
        dplus: float,
        dminus: float,
        fresh: bool = False,
        vertex: int | None = None,
    ) -> IterationRecord:
        r"""A history row: the objective, the bound from R (when scale < 0) and the FW figures.

        ``fresh``: :math:`s = \tilde K\alpha` is maintained on every point, so the model's
        objective at the iterate costs O(m) through the structure's ``objective`` (no kernel
        pass); otherwise (active phases, CVM's coreset) it is ``nan``. ``vertex``: the point
        the last step moved toward (default: the last Frank-Wolfe candidate), ``away`` the last
        away candidate (-1: none).
        """
        R = self.R
        bound = self.dual.scale * R + self.dual.offset if self.dual.scale < 0 else None
        objective = math.nan
        if fresh and self.dual.objective is not None:
            objective = float(self.dual.objective(self.alpha, self.s))
        return IterationRecord(
            iteration=steps,
            seconds=time.perf_counter() - start,
            objective=objective,
            bound=bound,
            extras={
                "delta_plus": dplus,
                "delta_minus": dminus,
                "g": self.delta2 - R,
                "coreset": self.q,
                "kernel_evals": int(self.counters[core.EVALS]),
                "vertex": int(self.ints[core.LAST_I]) if vertex is None else int(vertex),
                "away": int(self.ints[core.LAST_J]),
            },
        )


class Variant(Choice):
    """:class:`FrankWolfe`'s steps: plain, with away steps, or pairwise."""

    FW = "fw"
    MFW = "mfw"
    PFW = "pfw"


class Candidates(Choice):
    """Where a sampled step looks for its vertex: the draws and the coreset, or the draws."""

    UNION = "union"
    SAMPLE = "sample"


class Radius(Choice):
    """How :class:`FrankWolfe` keeps the radius: maintained, the paper's recursions, or its text."""

    MAINTAINED = "maintained"
    RECURSION = "recursion"
    PAPER = "paper"


RADIUS_MODES = {
    Radius.MAINTAINED: core.MAINTAINED,
    Radius.RECURSION: core.RECURSION,
    Radius.PAPER: core.PAPER_SIGN,
}
VARIANTS = {Variant.FW: core.PLAIN, Variant.MFW: core.AWAY, Variant.PFW: core.PAIRWISE}


@register_driver
@dataclass(frozen=True, eq=False)
class FrankWolfe(Driver):
    r"""Frank-Wolfe on a :class:`~optframe.capabilities.SimplexQP`: ``"fw"``, ``"mfw"``, ``"pfw"``.

    Plain steps (``"fw"``), away steps (``"mfw"``) or pairwise steps (``"pfw"``).

    Each step moves :math:`\alpha` toward the vertex :math:`i^\star = \arg\min_i s_i` (FW) or, for
    MFW when :math:`\delta_- > \delta_+`, away from :math:`j^\star = \arg\max_{j \in I} s_j` (a
    drop step sets :math:`\alpha_{j^\star} = 0` exactly when the step bound is hit), with
    :math:`s = \tilde K\alpha` and :math:`R = \alpha^\top s` updated in closed form from one column
    of :math:`\tilde K`. Step sizes are the exact line search with the true diagonal
    :math:`\tilde k_{tt}`: :math:`\lambda = (R - s_t)/(\tilde k_{tt} + R - 2 s_t)` toward and
    :math:`(s_t - R)/(\tilde k_{tt} + R - 2 s_t)` away (the paper's closed forms when the diagonal
    is constant). It stops when :math:`\delta_+ = 2(R - s_{i^\star})/g \le (1+\varepsilon)^2 - 1`,
    :math:`g = \Delta^2 - R`, :math:`\Delta^2 = \max_i \tilde k_{ii}`, which proves
    :math:`g^\star \le (1 + 2\varepsilon + \varepsilon^2)\, g` when :math:`i^\star` is the true
    argmin (notes section 3.5).

    Parameters
    ----------
    variant : Variant or {"fw", "mfw", "pfw"}
        Plain FW (Algorithm 2), with away and drop steps (Algorithm 3), or pairwise FW: every
        step moves mass from the away vertex :math:`j^\star` straight to the toward vertex
        :math:`i^\star` (see Notes). ``"pfw"`` needs ``radius="maintained"``.
    eps : float
        The radius tolerance :math:`\varepsilon \in (0, 1)` (default 1e-6, as the paper).
    sample_size : int or None
        Candidates per step for :math:`i^\star`: the coreset plus this many uniform draws (the
        paper's 59; notes option (c)); ``None`` searches all points. Either way :math:`s` is kept
        on every point, so a candidate costs one lookup and the exact search O(m) comparisons:
        sampling saves no kernel values here (it did in the paper's implementation, which kept
        :math:`s` on the coreset only), it only changes which vertex is chosen.
    verify : bool
        With sampling, run an exact search over all points (on the maintained :math:`s`) before
        stopping; if it finds a violator, step toward it and go on. Without it the stop only
        certifies the samples.
    candidates : Candidates or {"union", "sample"}
        With sampling: the draws and the coreset (notes option (c), default), or the draws
        only (option (a), the paper's wording; the coreset is used when every draw is in it).
        Plain FW with ``"union"`` rarely meets the rule on its spurious coreset points (note
        A1), so it runs far longer than the paper's FW.
    init_size : int
        Points of the random initial ball (20, as LibCVM), solved by SMO.
    seed : int
        Seed of the initial ball and of the sampling.
    max_iter : int, optional
        Steps (default 10^6; ``solve(max_iter=...)`` overrides).
    cache_bytes : int
        Memory budget of the kernel-column LRU cache (full columns, 8 bytes per entry; SMO's
        row cache). CVM gives half of it to the coreset's rows.
    dense_bytes : int
        Memory budget of a dense copy of the points, made when at least a quarter of the entries
        are nonzero (a full kernel column is then one matrix-vector product).
    recompute : bool
        At exit, recompute :math:`s` and :math:`R` from scratch (q kernel columns, outside the
        solve time) for the certificate and report the drift of the maintained values
        (``stats["cache_drift"]``, ``stats["R_drift"]``); else certify from the maintained
        :math:`s` (drift NaN).
    radius : Radius or {"maintained", "recursion", "paper"}
        ``"maintained"``: :math:`r^2 = \Delta^2 - R` and exact line search (default).
        ``"recursion"``: the paper's closed forms for :math:`\lambda` and its :math:`r^2`
        recursions with the corrected away-step sign; ``"paper"``: the paper's literal step 21
        (erratum E1; it converges to a wrong point, kept for the regression test). Both need a
        constant kernel diagonal (RBF).
    trace : bool
        Keep a per-step trace in ``stats["trace"]`` (R, lambda, delta_plus, delta_minus, r^2,
        kind 0 FW / 1 away / 2 drop, index, coreset size after the step).
    check_every : int
        Steps between history records, time-limit and callback checks.
    shrinking : bool
        Run the variant's steps in active-set phases (see Notes): each phase restricts the
        steps to the coreset and the ``active_extra`` (at least the coreset's size) points of
        smallest :math:`s` outside it, with the exact search over that set (``sample_size``
        applies only after the phases, see ``active_limit``), and an exact pass on every point
        follows; the run stops only on that pass, so its OPTIMAL status is proven on all
        points. Needs ``radius="maintained"``; no trace.
    active_extra : int
        With ``shrinking``: points added to the coreset's active set per phase (the coreset's
        size when that is larger).
    active_limit : float
        With ``shrinking``: when the next active set would exceed this fraction of the points,
        the phases end and the steps go on over every point (sampling and ``verify`` as
        without shrinking), with the cache grown to the whole ``cache_bytes``;
        ``stats["unshrunk_at"]`` is the step count at that moment (None if it never happened),
        ``stats["active_steps"]`` the steps taken inside the phases.

    Notes
    -----
    ``Result.objective`` is the model's objective at the dual's ``recover(alpha)``.
    ``Result.bound`` is the lower end of the certified range of the model's optimum from
    :math:`R^\star \in [2 s_{\min} - R, R]` (the FW duality gap, section 3), computed at an exact
    final search (outside the solve time): for the L2SVM (``scale = -1/2``) it is :math:`-R/2`, and
    ``stats["upper_bound"]`` is :math:`s_{\min} - R/2`. The status is OPTIMAL when that final search
    proves :math:`\delta_+ \le (1+\varepsilon)^2 - 1` (always the case when the run stopped with
    an exact search or a verified sample), CONVERGED when the rule held on samples only,
    ITERATION_LIMIT or TIME_LIMIT otherwise. ``stats["delta_plus"]`` is the true value at exit.

    Cost per step: one column of :math:`\tilde K` (m kernel values, O(nnz(X)), or a cache hit)
    plus O(m) for the update of :math:`s` and O(q) for :math:`\alpha` (q = coreset size). Memory
    O(nnz(X) + m) plus the cache and the dense copy.

    **Pairwise FW** (``variant="pfw"``; S. Lacoste-Julien and M. Jaggi, "On the Global Linear
    Convergence of Frank-Wolfe Optimization Variants", NIPS 2015, Algorithm 2): with the same
    candidates, away vertex, stopping rule, exact pass, certificate and statuses as MFW, every
    step is :math:`\alpha \leftarrow \alpha + \lambda (e_{i^\star} - e_{j^\star})`,
    :math:`\lambda \in [0, \alpha_{j^\star}]`. Along it
    :math:`R(\lambda) = R + 2\lambda (s_{i^\star} - s_{j^\star}) + \lambda^2 \eta`,
    :math:`\eta = \tilde k_{i^\star i^\star} + \tilde k_{j^\star j^\star}
    - 2 \tilde k_{i^\star j^\star} = \lVert z_{i^\star} - z_{j^\star} \rVert^2 > 0`, so the
    exact line search is :math:`\lambda = \min\{(s_{j^\star} - s_{i^\star})/\eta,
    \alpha_{j^\star}\}` with the true diagonal (any kernel; no constant-:math:`\Delta^2` form
    exists, hence ``radius="maintained"``); at the bound :math:`\alpha_{j^\star}` is set to 0
    exactly (a drop step). :math:`s` moves by
    :math:`\lambda (\tilde K_{:, i^\star} - \tilde K_{:, j^\star})`: **two columns per step**,
    both counted in ``stats["cache_hits"]``/``["cache_misses"]``; :math:`\alpha` changes in two
    entries only (no O(q) rescaling). ``stats["pair_steps"]`` and ``["drop_steps"]`` count the
    steps; trace kinds are 3 (pairwise) and 4 (pairwise drop), ``trace["away_index"]`` is
    :math:`j^\star`.

    Measured side by side with MFW in one process (fw suite protocol: its split, RBF with
    :math:`\sigma^2` the mean squared distance, its C, eps = 1e-6, 59 draws and the coreset, exact
    pass before stopping, seed 0, 4 GB cache; order MFW, PFW, PFW, MFW; shared, loaded 2-core
    machine, so compare the ratios). Training seconds MFW vs PFW (steps; cache misses):
    a9a (m = 32,561, C = 1) 33.4 / 40.3 s vs 29.0 / 35.4 s (75,028 vs 52,107 steps; 25,417 vs
    25,938 misses), PFW/MFW 0.87; w8a (m = 39,799, C = 4) 23.4 / 17.8 s vs 15.2 / 15.0 s (74,768
    vs 32,437; 9,019 vs 8,498), 0.73; ijcnn1 (m = 49,990, C = 256) 86.9 / 79.0 s vs 73.9 / 79.2 s
    (305,358 vs 272,722; 4,280 vs 4,420), 0.92. Both runs certified (OPTIMAL) on all three; test
    accuracy equal on a9a (85.27%) and w8a (98.93%), 98.74% (MFW) vs 98.48% (PFW) on ijcnn1,
    whose eps = 1e-6 bracket on the objective is wider than the objective itself (R ~ 2.4e-6
    against g ~ 2). A PFW step reads two columns, so it saves time only where it saves steps; on
    a9a the cost is mostly kernel evaluations (the support, ~20k, exceeds the 16.5k cached
    columns).

    **Shrinking** (``shrinking=True``; LIBSVM's shrinking, Chang and Lin 2011 section 5.1,
    transposed to the simplex). A step updates :math:`s` on all m points, so on large sets it is
    bound by memory traffic while most points stay far from the active constraints. A phase
    solves the restricted problem on A = coreset + the ``active_extra`` points of smallest
    :math:`s` with the same steps, columns of length |A| (the coreset's restricted from the cached
    full ones) and the exact argmin over A; since :math:`\alpha_i = 0` outside A, R and g are
    those of the full problem. A phase stops at
    :math:`\delta_+ \le \max(\text{thr}, 0.1\,\delta_+^{\text{start}})` on A (solving an early
    restricted problem to the final tolerance wastes steps); then the exact pass recomputes
    :math:`s = \tilde K\alpha` on every point from the coreset's full columns (cached ones
    first, the others by blocks of one matrix product) and either proves the stop or starts the
    next phase. A phase whose A holds a violator strictly lowers R. The cache budget is split
    in halves between full columns and restricted ones; when the next A would exceed
    ``active_limit`` times m, phases stop saving traffic and the run goes on with the ordinary
    steps on every point. ``stats["phases"]`` and
    ``["active_max"]`` report the phases.
    """

    name: ClassVar[str] = "frank_wolfe"
    needs: ClassVar[tuple[type[Structure], ...]] = (SimplexQP,)

    variant: Variant | Literal["fw", "mfw", "pfw"] = Variant.MFW
    eps: float = 1e-6
    sample_size: int | None = 59
    verify: bool = True
    candidates: Candidates | Literal["union", "sample"] = Candidates.UNION
    init_size: int = 20
    seed: int = 0
    max_iter: int | None = None
    cache_bytes: int = 256 * 1024**2
    dense_bytes: int = 1024**3
    recompute: bool = True
    radius: Radius | Literal["maintained", "recursion", "paper"] = Radius.MAINTAINED
    trace: bool = False
    check_every: int = 1000
    shrinking: bool = False
    active_extra: int = 1000
    active_limit: float = 0.25

    def __post_init__(self) -> None:
        set_choice(self, "variant", Variant, "FrankWolfe")
        check_common("FrankWolfe", self.eps, self.sample_size, self.init_size)
        normalize_common(self)
        set_choice(self, "candidates", Candidates, "FrankWolfe")
        set_choice(self, "radius", Radius, "FrankWolfe")
        if self.variant == "pfw" and self.radius != "maintained":
            raise ModelError(
                "FrankWolfe: variant='pfw' has no closed forms; use radius='maintained'"
            )
        set_count(self, "check_every", "FrankWolfe")
        if self.max_iter is not None:
            set_count(self, "max_iter", "FrankWolfe")
        if self.shrinking:
            if self.radius != "maintained":
                raise ModelError("FrankWolfe: shrinking needs radius='maintained'")
            if self.trace:
                raise ModelError("FrankWolfe: trace is not available with shrinking")
            set_count(self, "active_extra", "FrankWolfe")
            check_number(self.active_limit, "active_limit", "FrankWolfe", low=0.0, high=1.0,
                         low_open=True)  # fmt: skip
            object.__setattr__(self, "active_limit", float(self.active_limit))

    def gap_tolerance(self, options: SolveOptions) -> float:
        """``gap_tol``, else 1e-6 (``eps`` is the radius rule's tolerance, not a gap)."""
        return radius_gap_tolerance(options)

    def run(self, model: Model, context: RunContext) -> Result:
        """Run FW or MFW and return the model's solution with the certified bound."""
        options = self.common_options(
            context.options, tol=self.eps, max_iter=self.max_iter, default_max_iter=10**6
        )
        compiled = compile_kernels(self, options.verbose, needs_of(model))  # before the timer
        start = time.perf_counter()
        eps, max_iter = options.tol, options.max_iter
        check_common("FrankWolfe", eps, self.sample_size, self.init_size)
        # with shrinking, half the budget caches full columns (exact passes), half the
        # restricted problem's columns
        cache_budget = self.cache_bytes // 2 if self.shrinking else self.cache_bytes
        prob = Problem(model, cache_budget, "FrankWolfe", self.dense_bytes)
        prob.compile_seconds = compiled
        mode = RADIUS_MODES[self.radius]
        if mode != core.MAINTAINED and not prob.constant_diagonal:
            raise IncompatibleDriver(
                f"FrankWolfe(radius={self.radius!r}) uses the paper's closed forms, which need a "
                "kernel with a constant diagonal (RBF); use radius='maintained'"
            )
        thr = (1.0 + eps) ** 2 - 1.0
        rng = np.random.default_rng(self.seed)
        prob.initial_ball(self.init_size, rng, thr)
        core.seed(int(self.seed))
        exact = self.sample_size is None
        prob.full_pass()  # s on every point, from the initial ball's columns
        prob.sc[core.S_R2] = prob.delta2 - prob.R
        rows = max_iter if self.trace else 0
        trace_f = np.zeros((rows, 5))
        trace_i = np.zeros((rows, 4), dtype=np.int64)
        built = time.perf_counter()

        history: list[IterationRecord] = []
        steps, status = 0, Status.ITERATION_LIMIT
        sample = 0 if exact else int(self.sample_size)  # type: ignore[arg-type]
        # without solve(tol=...), a stop whose certificate is far open tightens the rule (the
        # radius mode keeps the true R only when maintained)
        tighten = context.options.tol is None and self.radius == "maintained"
        tightenings, gap_tol = 0, self.gap_tolerance(context.options)
        far = FAR_GAP * max(thr, gap_tol)  # a gap the rule's own eps does not account for
        phases = ActivePhases()
        shrunk = self.shrinking
        if shrunk:
            phase_status, steps = run_phases(
                prob, VARIANTS[self.variant], thr, self.active_extra, self.active_limit,
                cache_budget, max_iter, self.check_every, start, options.time_limit,
                context.callback, history, phases,
            )  # fmt: skip
            if phase_status is None:  # the active set outgrew active_limit: all points now
                shrunk = False
                prob.grow_cache(self.cache_bytes)
            else:
                status = phase_status
        pacer = Pacer(start, options.time_limit)
        if not shrunk and pacer.expired():  # the set-up used the time: no step
            status = Status.TIME_LIMIT
        while not shrunk and status is not Status.TIME_LIMIT:
            budget = pacer.budget(min(self.check_every, max_iter - steps))
            if budget <= 0:
                break
            code, done = core.fw_chunk(
                *prob.points, prob.diag, prob.cache, prob.counters,
                prob.alpha, prob.s, prob.core, prob.pos, prob.ints, prob.sc,
                sample, VARIANTS[self.variant], mode, thr, int(budget), trace_f, trace_i,
                self.candidates == "union",
            )  # fmt: skip
            pacer.done(int(done))
            steps += int(done)
            dplus, dminus = float(prob.sc[core.S_DPLUS]), float(prob.sc[core.S_DMINUS])
            record = prob.record(steps, start, dplus, dminus, fresh=True)
            history.append(record)
            if code == 1:
                if not exact and not self.verify:
                    status = Status.CONVERGED
                    break
                if not exact:
                    best = int(core.argmin(prob.s))  # the exact search: O(m) on the maintained s
                    dplus = prob.delta_plus(best)
                if exact or dplus <= thr:
                    # the rule holds on every point; a certificate it leaves far open (shifted
                    # data: g is huge against the objective) asks for a tighter rule
                    gap = prob.open_gap(model) if tighten else 0.0
                    tighter = prob.tightened(thr, gap, gap_tol) if gap > far else None
                    if tighter is None or tightenings >= MAX_TIGHTENINGS:
                        status = Status.OPTIMAL
                        break
                    thr, tightenings = tighter, tightenings + 1
                else:
                    prob.ints[core.FORCED] = best
            if context.callback is not None and context.callback(record):
                status = Status.CONVERGED
                break
            if pacer.expired():
                status = Status.TIME_LIMIT
                break
        stats: dict[str, Any] = {
            "variant": str(self.variant),
            "eps": eps,
            "threshold": thr,
            "tightened": tightenings,
            "delta_plus_candidates": float(prob.sc[core.S_DPLUS]),
            "steps": steps,
            "sample_size": self.sample_size,
            "shrinking": self.shrinking,
        }
        if self.shrinking:
            stats |= {
                "phases": phases.phases,
                "active_max": phases.active_max,
                "unshrunk_at": phases.unshrunk_at,
                "active_steps": phases.active_steps,
                "restricted_cache_bytes": cache_budget,
            }
        if self.trace:
            stats["trace"] = {
                "R": trace_f[:steps, 0].copy(),
                "lam": trace_f[:steps, 1].copy(),
                "delta_plus": trace_f[:steps, 2].copy(),
                "delta_minus": trace_f[:steps, 3].copy(),
                "r2": trace_f[:steps, 4].copy(),
                "kind": trace_i[:steps, 0].copy(),
                "index": trace_i[:steps, 1].copy(),
                "coreset": trace_i[:steps, 2].copy(),
                "away_index": trace_i[:steps, 3].copy(),
                "s": prob.s.copy(),
            }
        stats["r2_tracked"] = float(prob.sc[core.S_R2])
        return prob.finish(
            model, self.name, status, steps, history, (start, built), stats,
            s_everywhere=True, recompute=self.recompute,
        )  # fmt: skip


@register_driver
@dataclass(frozen=True, eq=False)
class FW(FrankWolfe):
    """:class:`FrankWolfe` with ``variant="fw"`` (registered as ``"fw"``)."""

    name: ClassVar[str] = "fw"
    variant: Variant | Literal["fw", "mfw", "pfw"] = Variant.FW


@register_driver
@dataclass(frozen=True, eq=False)
class MFW(FrankWolfe):
    """:class:`FrankWolfe` with ``variant="mfw"`` (registered as ``"mfw"``)."""

    name: ClassVar[str] = "mfw"
    variant: Variant | Literal["fw", "mfw", "pfw"] = Variant.MFW


@register_driver
@dataclass(frozen=True, eq=False)
class PFW(FrankWolfe):
    """:class:`FrankWolfe` with ``variant="pfw"``, pairwise steps (registered as ``"pfw"``)."""

    name: ClassVar[str] = "pfw"
    variant: Variant | Literal["fw", "mfw", "pfw"] = Variant.PFW
