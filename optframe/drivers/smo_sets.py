r"""Kernel working sets of :class:`~optframe.drivers.smo.SMO` (RBF and polynomial kernels).

The pair steps of :mod:`optframe.drivers.smo_core` update :math:`G = Qx + c` with two kernel
rows over all the active variables at every step. Decomposition, as SVMlight and ThunderSVM
do, updates it once per working set instead:

1. from :math:`G` take the ``q / 2`` variables with the largest ``up`` above
   :math:`\min \mathrm{low}`, the ``q / 2`` with the smallest ``low`` below
   :math:`\max \mathrm{up}` and the maximal violating pair
   (:func:`optframe.drivers.smo_linear.select`);
2. solve the subproblem in those variables, the others fixed, by the pair steps of
   :func:`optframe.drivers.smo_core._steps` (second-order selection, exact 1-D steps, snapping,
   shrinking inside the set) to :math:`\max(\tau, 0.1\,\text{gap})`, with the set's own kernel
   rows (q values each), computed when a step first needs them and kept within the buffer;
3. add the moves to :math:`G`: :math:`G_k \mathrel{+}= a_k \sum_l a_l \Delta x_l k(z_k, z_l)`
   over the moved variables, one pass of :func:`optframe.kernel_sums.kernel_sums` over all the
   variables, in blocks spread over the threads.

A step costs O(q) and the set's rows instead of O(m) and rows over the m active variables; the
kernel values over all the variables are computed once per moved variable and set, in one
parallel region per set, so a second thread shares the bulk of the work. Only duals whose
rows are the kernel's (:math:`M = K`) go this way; a diagonal :math:`D` of the dual's own
(the squared hinge's) takes the steps of :mod:`optframe.drivers.smo_quadratic` inside the
set and :math:`D \circ \Delta x` beside the kernel sum, and a dual without the equality row
takes the single-variable steps of :mod:`optframe.drivers.smo_single` (:func:`one_set_single`).
The variables keep their positions (no shrinking outside the sets).

Call only :func:`one_set` from Python (see :mod:`optframe.drivers.smo_linear` on numba's cache:
an edit of ``smo_core`` or ``smo_linear`` needs this file touched as well).
"""

from __future__ import annotations

import numba
import numpy as np
from numpy.typing import NDArray
from threadpoolctl import threadpool_limits

from optframe.drivers import smo_core as core
from optframe.drivers import smo_linear as linear
from optframe.drivers import smo_quadratic as quadratic
from optframe.drivers import smo_single as single
from optframe.kernel_sums import kernel_sums

#: Variables from which ``kernel_steps="auto"`` takes working sets (below, the pair steps' row
#: cache holds most of the kernel matrix and a set would be the whole problem).
SETS_FROM = 4096
#: Sets that keep meeting their rule early (``smo_linear.SHORT_SET``, ``GROW_AFTER``) double,
#: up to this multiple of ``subproblem_size``: a dual with many free variables (the squared
#: hinge's: 13,795 of ijcnn1's 49,990) is not solved by sets smaller than them.
GROW_TO = 4


@numba.njit(cache=True)
def one_set(
    Z, sqn, kind, gamma, coef0, degree, diag, a, u, kink, sb, sa, x, G, dx, work, where,
    wcount, tol, n_iter, second, q, gram, every,
):  # fmt: skip
    r"""One working set: returns (code, steps, gap, objective change, moved).

    code 1: the rule holds on ``G`` (no step); 2: the set could not decrease the dual; else 0.
    ``x`` takes the set's new values and ``dx`` (n) the changes (zero elsewhere); ``G`` is not
    updated (the caller adds ``dx`` by :func:`optframe.kernel_sums.kernel_sums`). ``work`` is
    (5, n) scratch, ``where`` n integers of scratch.
    """
    gap, B = _choose(a, u, kink, sb, sa, x, G, dx, work, where, tol, q, False)
    if gap <= tol:
        return 1, 0, gap, 0.0, 0
    code, steps, dphi, xB = linear.subproblem(
        Z, B, sqn, kind, gamma, coef0, degree, diag, a, u, kink, sb, sa, x, work[3], wcount,
        max(tol, linear.INNER_FRACTION * gap), n_iter, second, 1e-12, gram, every,
    )  # fmt: skip
    return _apply(B, xB, x, dx, wcount, code, steps, gap, dphi)


@numba.njit(cache=True)
def one_set_quadratic(
    Z, sqn, kind, gamma, coef0, degree, diag, extra, a, u, kink, sb, sa, x, G, dx, work,
    where, wcount, tol, n_iter, second, q, gram, every,
):  # fmt: skip
    r""":func:`one_set` for a dual with a diagonal ``extra`` of its own (:math:`D`).

    The subproblem takes the steps of :mod:`optframe.drivers.smo_quadratic` (``diag`` holds
    :math:`M_{ii} + D_i`); the caller adds :math:`D \circ dx` to ``G`` with the kernel sum.
    """
    gap, B = _choose(a, u, kink, sb, sa, x, G, dx, work, where, tol, q, False)
    if gap <= tol:
        return 1, 0, gap, 0.0, 0
    Zb, sqnB, diagB, aB, uB, kB, sbB, saB, xB, NGB, permB, scratch, cache, counters, buf = (
        linear.set_state(Z, B, sqn, diag, a, u, kink, sb, sa, x, work[3], gram)
    )
    size = B.shape[0]
    code, steps, _, dphi = quadratic._steps(
        Zb, sqnB, kind, gamma, coef0, degree, (np.ones(size), 0.0, 0.0, True), diagB,
        extra[B], aB, scratch[0], uB, kB, sbB, saB, xB, NGB, permB, scratch[3], scratch[4],
        scratch[5], cache, counters, buf, max(tol, linear.INNER_FRACTION * gap), n_iter,
        second, True, min(size, every), 1e-12, core.SERIAL,
    )  # fmt: skip
    xB = linear.set_result(B, xB, permB, counters, wcount, steps)
    return _apply(B, xB, x, dx, wcount, code, steps, gap, dphi)


@numba.njit(cache=True)
def one_set_single(
    Z, sqn, kind, gamma, coef0, degree, diag, extra, a, u, kink, sb, sa, x, G, dx, work,
    where, wcount, tol, n_iter, second, q, gram, every,
):  # fmt: skip
    r""":func:`one_set` for a dual without an equality row (no free intercept).

    The rule is the two absolute tests of :mod:`optframe.drivers.smo_single`; the set takes the
    ``q / 2`` largest ``up > 0``, the ``q / 2`` smallest ``low < 0`` and the most violating
    variable of each side, and its subproblem takes that module's single-variable steps.
    ``diag`` holds :math:`M_{ii} + D_i`, ``extra`` :math:`D` (zeros without one).
    """
    gap, B = _choose(a, u, kink, sb, sa, x, G, dx, work, where, tol, q, True)
    if gap <= tol:
        return 1, 0, gap, 0.0, 0
    Zb, sqnB, diagB, aB, uB, kB, sbB, saB, xB, NGB, permB, scratch, cache, counters, buf = (
        linear.set_state(Z, B, sqn, diag, a, u, kink, sb, sa, x, work[3], gram)
    )
    size = B.shape[0]
    code, steps, _, dphi = single._steps(
        Zb, sqnB, kind, gamma, coef0, degree, (np.ones(size), 0.0, 0.0, True), diagB,
        extra[B], aB, scratch[0], uB, kB, sbB, saB, xB, NGB, permB, scratch[3], scratch[4],
        scratch[5], cache, counters, buf, max(tol, linear.INNER_FRACTION * gap), n_iter,
        second, True, min(size, every), 1e-12, core.SERIAL,
    )  # fmt: skip
    xB = linear.set_result(B, xB, permB, counters, wcount, steps)
    return _apply(B, xB, x, dx, wcount, code, steps, gap, dphi)


@numba.njit(cache=True)
def _choose(a, u, kink, sb, sa, x, G, dx, work, where, tol, q, single_steps):
    r"""The rule's gap on ``G`` and, above ``tol``, the working set (``work[3]`` := -a G).

    With the equality row the gap is :math:`\max \mathrm{up} - \min \mathrm{low}`; without it
    (``single_steps``), :math:`\max(\max \mathrm{up}, -\min \mathrm{low})`, and only ups
    above 0 and lows below 0 are candidates (a rate <= 0 gains nothing).
    """
    n = x.shape[0]
    up_off, low_off, low, NG, keys = work[0], work[1], work[2], work[3], work[4]
    for k in range(n):
        NG[k] = -a[k] * G[k]
        dx[k] = 0.0
    core.set_offsets(a, x, u, kink, sb, sa, up_off, low_off, np.int64(0), n)  # not a literal
    gmax, imax, gmin, jmin = core.scan(NG, up_off, low_off, low, n)
    gap = max(gmax, -gmin) if single_steps else gmax - gmin
    if gap <= tol:
        return gap, np.empty(0, dtype=np.int64)
    if single_steps:  # candidates: up > 0, low < 0; the most violating of a side that violates
        imax, jmin = (imax if gmax > 0.0 else jmin), (jmin if gmin < 0.0 else imax)
        gmax, gmin = 0.0, 0.0
    return gap, linear.select(NG, up_off, low, gmax, gmin, imax, jmin, n, q, keys, where)


@numba.njit(cache=True)
def _apply(B, xB, x, dx, wcount, code, steps, gap, dphi):
    """The set's new values into ``x`` and its changes into ``dx``; one_set's return."""
    wcount[linear.SETS] += 1
    moved = 0
    for t in range(B.shape[0]):
        k = B[t]
        change = xB[t] - x[k]
        if change != 0.0:
            dx[k] = change
            x[k] = xB[t]
            moved += 1
    if steps == 0 and code == 2:
        return 2, 0, gap, 0.0, 0
    return 0, steps, gap, dphi, moved


def run_chunk(
    Zrow: tuple,
    Zsum: tuple,
    sqn: NDArray[np.float64],
    kernel: tuple[int, float, float, float],
    diag: NDArray[np.float64],
    extra: NDArray[np.float64] | None,
    dual: tuple[NDArray[np.float64], ...],
    x: NDArray[np.float64],
    G: NDArray[np.float64],
    scratch: tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.int64]],
    counters: NDArray[np.int64],
    wcount: NDArray[np.int64],
    tol: float,
    n_iter: int,
    second: bool,
    q: int,
    gram: NDArray[np.float64],
    single_steps: bool = False,
) -> tuple[int, int, float, float]:
    """Working sets for at most ``n_iter`` pair steps; return (code, steps, gap, dphi).

    The codes of :func:`optframe.drivers.smo_core.run_chunk` (never 3: nothing is shrunk).
    ``Zrow``: the points in the steps' layout (:func:`optframe.drivers.smo.row_points`);
    ``Zsum``: the same points in :func:`optframe.kernel_sums.points`'s layout, in the same
    order; ``extra`` the dual's own diagonal :math:`D` or ``None``; ``single_steps`` for a
    dual without an equality row (:func:`one_set_single`);
    ``dual = (a, u, kink, sb, sa)`` (the linear term is in ``G``);
    ``scratch = (work (5, n), dx (n), where (n))``.
    """
    kind, gamma, coef0, degree = kernel
    a, u, kink, sb, sa = dual
    work, dx, where = scratch
    n = x.shape[0]
    done, dphi, gap = 0, 0.0, np.inf
    if wcount[linear.SIZE] == 0:
        wcount[linear.SIZE] = q
    largest = max(q, min(GROW_TO * q, gram.shape[0] // 2 - 2))
    own = np.zeros(n) if extra is None and single_steps else extra  # single steps take D
    chunk = numba.set_parallel_chunksize(1)  # blocks to whichever thread is free
    try:
        with threadpool_limits(limits=1, user_api="blas"):  # BLAS inside the threads
            while True:
                size = int(wcount[linear.SIZE])
                if single_steps:
                    code, steps, gap, step_phi, moved = one_set_single(
                        Zrow, sqn, kind, gamma, coef0, degree, diag, own, a, u, kink, sb, sa,
                        x, G, dx, work, where, wcount, tol, int(n_iter - done), second, size,
                        gram, linear.INNER_SHRINK,
                    )  # fmt: skip
                elif extra is None:
                    code, steps, gap, step_phi, moved = one_set(
                        Zrow, sqn, kind, gamma, coef0, degree, diag, a, u, kink, sb, sa, x,
                        G, dx, work, where, wcount, tol, int(n_iter - done), second, size, gram,
                        linear.INNER_SHRINK,
                    )  # fmt: skip
                else:
                    code, steps, gap, step_phi, moved = one_set_quadratic(
                        Zrow, sqn, kind, gamma, coef0, degree, diag, extra, a, u, kink, sb,
                        sa, x, G, dx, work, where, wcount, tol, int(n_iter - done), second,
                        size, gram, linear.INNER_SHRINK,
                    )  # fmt: skip
                if code == 1 or code == 2:
                    return int(code), done, float(gap), dphi
                if steps < min(size // linear.SHORT_SET, n_iter - done):  # met its rule early
                    wcount[linear.SHORT] += 1
                else:
                    wcount[linear.SHORT] = 0
                if wcount[linear.SHORT] >= linear.GROW_AFTER and n > 2 * size:
                    wcount[linear.SIZE] = min(2 * size, largest)
                    wcount[linear.SHORT] = 0
                if moved:
                    kernel_sums(Zsum, sqn, kind, gamma, coef0, degree, a, G, dx, 0, n, G)
                    if extra is not None:
                        G += extra * dx
                    counters[core.ROWS] += moved
                done += int(steps)
                dphi += float(step_phi)
                counters[core.STEPS] += steps
                if steps > 0:
                    counters[core.LAST_I] = wcount[linear.LAST_I]
                    counters[core.LAST_J] = wcount[linear.LAST_J]
                if done >= n_iter:
                    return 0, done, float(gap), dphi
    finally:
        numba.set_parallel_chunksize(chunk)
