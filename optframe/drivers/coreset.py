r"""The coreset's simplex QP solved by SMO's loop (the inner solve of the CVM and of the start).

The Core Vector Machine and the Frank-Wolfe start minimize :math:`\alpha^\top\tilde K\alpha` on
the simplex restricted to a coreset. That is a :class:`~optframe.capabilities.BoxQPDual` with
equality row :math:`\mathbf 1^\top\alpha = 1`, rows of
:math:`\tilde K = yy^\top\circ(K + 1) + \rho I` and :math:`\Phi = R/2`
(:meth:`~optframe.capabilities.SimplexQP.box_qp`), so the pair steps of
:func:`optframe.drivers.smo_core.run_chunk` solve it: second-order selection, exact steps, the
rule :math:`\max_{\alpha_j > 0} s_j - \min_i s_i \le \tau` on :math:`s = \tilde K\alpha`.

Positions are the coreset's members in the order they joined (CSR rows with their column copy,
rebuilt when a member joins); a member that joins takes the next position, so a cached row stays
valid and is completed over the new positions only (:func:`~optframe.drivers.smo_core.get_row`).
No shrinking: the coreset is what is active.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from optframe.drivers import smo_core as core
from optframe.drivers.kernel_cache import cache_slots
from optframe.drivers.pacing import Pacer
from optframe.kernel_sums import kernel_sums, points


class CoresetSteps:
    r"""SMO's pair steps on the coreset of a Frank-Wolfe :class:`Problem`.

    Parameters
    ----------
    prob : Problem
        The Frank-Wolfe problem (CSR points, signs, kernel code, diagonal of :math:`\tilde K`);
        the methods take it again, so that no reference cycle keeps a problem and its column
        cache alive after a solve (MFW on a5a: 0.35 s per solve, 0.63 s once earlier problems
        awaited the garbage collector).
    cache_bytes : int
        Budget of the row cache (rows of the coreset's length; at least two rows).
    """

    def __init__(self, prob: Any, cache_bytes: int) -> None:
        X = prob.X
        m, d = X.shape
        self.kind, self.gamma, self.coef0, self.degree = (
            int(prob.kp[0]), float(prob.kp[1]), float(prob.kp[2]), float(prob.kp[3]),
        )  # fmt: skip
        self.ridge = float(prob.kp[4])
        nnz = int(X.indptr[-1])
        self.indptr = np.zeros(m + 1, dtype=np.int64)
        self.Z = [
            np.empty((0, 0)),
            self.indptr[:1],
            np.empty(nnz, dtype=np.int64),
            np.empty(nnz),
            np.zeros(d + 1, dtype=np.int64),
            np.empty(nnz, dtype=np.int64),
            np.empty(nnz),
        ]
        self.members = np.empty(m, dtype=np.int64)
        self.sqn, self.diag, self.sign = np.empty(m), np.empty(m), np.empty(m)
        self.x, self.G = np.zeros(m), np.zeros(m)
        self.ones, self.zeros = np.ones(m), np.zeros(m)
        self.slots = cache_slots(m, cache_bytes, 8)
        self.cache = core.row_cache(np.empty((self.slots, m)), m)
        self.counters = np.zeros(core.N_COUNTERS, dtype=np.int64)
        self.q = 0

    # -------------------------------------------------------------------------- membership
    def follow(self, prob: Any) -> None:
        """Take the problem's coreset: append its new members, or start over if it changed."""
        q = prob.q
        members = prob.core[:q]
        if q < self.q or not np.array_equal(self.members[: self.q], members[: self.q]):
            self.q = 0  # members left (the start keeps its support): positions start over
            core.forget_rows(self.cache)
        if q == self.q:
            return
        X = prob.X
        indices, values = self.Z[2], self.Z[3]
        for p in range(self.q, q):
            t = int(members[p])
            lo, hi = X.indptr[t], X.indptr[t + 1]
            start = self.indptr[p]
            self.indptr[p + 1] = start + hi - lo
            indices[start : start + hi - lo] = X.indices[lo:hi]
            values[start : start + hi - lo] = X.data[lo:hi]
            self.members[p] = t
            self.sqn[p] = prob.sqn[t]
            self.diag[p] = prob.diag[t]
            self.sign[p] = prob.y[t]
        self.q = q
        self.Z[1] = self.indptr[: q + 1]
        core.build_columns(tuple(self.Z))

    # ------------------------------------------------------------------------------- solve
    def solve(
        self, prob: Any, tol: float, max_steps: int, deadline: float | None = None
    ) -> tuple[float, int, float]:
        r"""Minimize :math:`\alpha^\top\tilde K\alpha` on the coreset from the problem's state.

        Reads :math:`\alpha` and :math:`s` on the coreset from the problem, writes them back;
        returns ``(R, steps, gap)`` with :math:`R = \alpha^\top s`. With a ``deadline``
        (``time.perf_counter()``) the steps run in chunks paced to end by it, and stop there.
        """
        self.follow(prob)
        q = self.q
        members = self.members[:q]
        x, G = self.x[:q], self.G[:q]
        x[:] = prob.alpha[members]
        G[:] = prob.s[members]
        self.counters[core.ACTIVE] = q
        terms = (self.sign[:q], 1.0, self.ridge, False)
        zeros, ones = self.zeros[:q], self.ones[:q]
        perm, work, buf = np.arange(q, dtype=np.int64), np.empty((5, q)), np.empty(q)
        pacer = Pacer(deadline, 0.0) if deadline is not None else None
        steps, gap = 0, float("inf")
        while steps < max_steps:
            budget = max_steps - steps if pacer is None else pacer.budget(max_steps - steps)
            code, done, gap, _ = core.run_chunk(
                tuple(self.Z), self.sqn[:q], self.kind, self.gamma, self.coef0, self.degree,
                terms, self.diag[:q], ones, zeros, ones, zeros, zeros, zeros, x, G, perm, work,
                self.cache, self.counters, buf, float(tol), int(budget), True, False, False, q,
                1e-12, core.SERIAL,
            )  # fmt: skip
            steps += int(done)
            if pacer is None or code != 0:  # converged or stalled (or the whole budget ran)
                break
            pacer.done(int(done))
            if pacer.expired():
                break
        prob.alpha[members] = x
        prob.s[members] = G
        return float(x @ G), steps, float(gap)

    def gradient(self, prob: Any) -> NDArray[np.float64]:
        r""":math:`s = \tilde K\alpha` on the coreset, in the coreset's order.

        :math:`s = y\circ K(y\circ\alpha) + y\,(y^\top\alpha) + \rho\,\alpha`, the kernel part by
        the compiled kernel sums over the coreset's points (the start's few members).
        """
        self.follow(prob)
        q = self.q
        members = self.members[:q]
        alpha, y = prob.alpha[members], self.sign[:q]
        _, Z = points(prob.X[members])
        sums = np.empty(q)
        with threadpool_limits(limits=1, user_api="blas"):
            kernel_sums(
                Z, self.sqn[:q].copy(), self.kind, self.gamma, self.coef0, self.degree, y.copy(),
                np.zeros(q), alpha, 0, q, sums,
            )  # fmt: skip
        return sums + y * float(y @ alpha) + self.ridge * alpha

    @property
    def rows_computed(self) -> int:
        """Rows computed in full so far (completions not counted)."""
        return int(self.counters[core.ROWS])

    @property
    def rows_completed(self) -> int:
        """Cached rows completed over new members."""
        return int(self.counters[core.EXTENDED])
