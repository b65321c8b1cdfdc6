r"""Active-set ("shrinking") phases for FW, MFW and PFW on an MEB dual.

A plain FW-type step updates :math:`s = \tilde K \alpha` on all m points, one full kernel column
per step, so on large sets a step is bound by memory traffic. A phase here restricts the steps to
an active set A (the coreset and the points of smallest :math:`s` outside it): the restricted
problem :math:`\min \alpha_A^\top \tilde K_{AA} \alpha_A` on the simplex is solved by the same
numba steps (:func:`optframe.drivers.fw_core.fw_chunk`, exact search over A) with columns of
length |A| in a cache of their own, and then one exact pass recomputes :math:`s` on every point
from the coreset's full columns. The run stops only on that exact pass, so the stop is proven on
all points, as for MFW with ``verify``. Points outside A have :math:`\alpha_i = 0`, so R and the
gap g are the same for the restricted and the full problem, and a phase whose A holds a violator
strictly lowers R.

This is LIBSVM's shrinking (Chang and Lin 2011, section 5.1) transposed to the simplex: its
gradient is :math:`s`, its reconstruction the exact pass. When the next active set would hold
more than a given fraction of the points, phases stop paying for their passes and the caller goes
on with ordinary steps on every point.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.drivers import fw_core as core
from optframe.drivers.pacing import Pacer
from optframe.result import IterationRecord, Status

if TYPE_CHECKING:
    from optframe.drivers.frank_wolfe import Problem


@dataclass
class ActivePhases:
    """Counters of the phases, reported in ``Result.stats``."""

    phases: int = 0
    active_max: int = 0
    active_steps: int = 0
    unshrunk_at: int | None = None


def choose_active(s: NDArray, core_idx: NDArray[np.int64], extra: int) -> NDArray[np.int64]:
    """The coreset and the ``extra`` points of smallest s outside it, sorted."""
    m = s.shape[0]
    outside = s.copy()
    outside[core_idx] = np.inf
    k = min(extra, m - core_idx.size)
    if k <= 0:
        return np.sort(core_idx)
    chosen = np.argpartition(outside, k - 1)[:k]
    return np.sort(np.concatenate([core_idx, chosen]))


# A phase solves its restricted problem to max(thr, INNER_RATIO * delta_plus at its start): far
# from the optimum, solving a restricted problem to the final tolerance wastes steps on an active
# set that the next exact pass will change.
INNER_RATIO = 0.1


class Restricted:
    """The arrays of the restricted problem on ``members`` (local indices 0..|A|-1)."""

    def __init__(self, prob: Problem, members: NDArray[np.int64], cache_bytes: int) -> None:
        a = members.size
        X = sp.csr_array(prob.X[members])
        X.sort_indices()
        dense = prob.Xd.shape[0] > 0
        self.Xd = np.ascontiguousarray(prob.Xd[members]) if dense else prob.Xd
        self.indptr, self.indices, self.data, self.csc = core.point_arrays(X, dense)
        self.sqn = prob.sqn[members].copy()
        self.y = prob.y[members].copy()
        self.diag = prob.diag[members].copy()
        self.kp = prob.kp
        self.work = np.zeros(prob.work.shape[0])
        self.cache, self.slots = core.column_cache(a, cache_bytes)
        self.members = members
        self.alpha = prob.alpha[members].copy()
        self.s = prob.s[members].copy()
        local = np.searchsorted(members, prob.core[: prob.q])
        self.core = np.zeros(a, dtype=np.int64)
        self.core[: local.size] = local
        self.pos = np.full(a, -1, dtype=np.int64)
        self.pos[local] = np.arange(local.size)
        self.ints = np.array([local.size, -1, -1, -1], dtype=np.int64)
        self.sc = prob.sc.copy()
        # the coreset's full columns are cached by the exact pass: restrict them, do not recompute
        core.gather_columns(local, members, prob.cache, self.cache, prob.counters)

    @property
    def points(self) -> tuple:
        """(indptr, indices, data, Xd, cptr, crow, cval, sqn, y, kp)."""
        return (self.indptr, self.indices, self.data, self.Xd, *self.csc, self.sqn, self.y,
                self.kp)  # fmt: skip

    def write_back(self, prob: Problem) -> None:
        """Copy alpha, the coreset and R to the full problem (s there is stale until a pass)."""
        prob.alpha[self.members] = self.alpha
        q = int(self.ints[core.Q])
        prob.set_core(self.members[self.core[:q]])
        prob.sc[core.S_R] = self.sc[core.S_R]


def run_phases(
    prob: Problem,
    variant: int,
    thr: float,
    extra: int,
    limit: float,
    cache_bytes: int,
    max_iter: int,
    check_every: int,
    start: float,
    time_limit: float | None,
    callback: Callable[[IterationRecord], bool] | None,
    history: list[IterationRecord],
    counts: ActivePhases,
) -> tuple[Status, int]:
    """Alternate restricted solves and exact passes until an exact pass proves the stop.

    ``prob`` holds the exact s on every point at entry and at return. Returns (status, steps);
    the status is None when the next active set would exceed ``limit * m`` points: the caller
    goes on with steps on every point.
    """
    steps = 0
    dplus = prob.delta_plus(int(core.argmin(prob.s)))
    while True:
        history.append(prob.record(steps, start, dplus, float("nan")))
        if dplus <= thr:
            return Status.OPTIMAL, steps
        if steps >= max_iter:
            return Status.ITERATION_LIMIT, steps
        if time_limit is not None and time.perf_counter() - start >= time_limit:
            return Status.TIME_LIMIT, steps
        members = choose_active(prob.s, prob.core[: prob.q].copy(), max(extra, prob.q))
        if members.size > limit * prob.m:
            counts.unshrunk_at = steps
            return None, steps
        sub = Restricted(prob, members, cache_bytes)
        counts.phases += 1
        counts.active_max = max(counts.active_max, members.size)
        inner = max(thr, INNER_RATIO * dplus)
        stop = None
        pacer = Pacer(start, time_limit)
        while True:
            budget = pacer.budget(min(check_every, max_iter - steps))
            if budget <= 0:
                stop = Status.ITERATION_LIMIT
                break
            code, done = core.fw_chunk(
                *sub.points, sub.diag, sub.cache, prob.counters,
                sub.alpha, sub.s, sub.core, sub.pos, sub.ints, sub.sc,
                0, variant, core.MAINTAINED, inner, int(budget), np.zeros((0, 5)),
                np.zeros((0, 4), dtype=np.int64), True,
            )  # fmt: skip
            pacer.done(int(done))
            steps += int(done)
            counts.active_steps += int(done)
            if code == 1:
                break
            sub.write_back(prob)  # R and the coreset for the record (s stays stale)
            record = prob.record(steps, start, float(sub.sc[core.S_DPLUS]), float("nan"))
            history.append(record)
            if callback is not None and callback(record):
                stop = Status.CONVERGED
                break
            if pacer.expired():
                stop = Status.TIME_LIMIT
                break
        sub.write_back(prob)
        dplus, _, _ = prob.full_pass()
        if stop is not None:
            history.append(prob.record(steps, start, dplus, float("nan")))
            if stop is Status.CONVERGED and dplus <= thr:
                stop = Status.OPTIMAL
            return stop, steps
