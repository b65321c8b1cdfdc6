r"""A proven lower bound for a cone program from a conic solver's dual values.

The cone program a conic solver sees (:class:`~optframe.backend.ConicPoint`) is

.. math::

    \min_x \; f(x) = \tfrac12 x^\top P x + c^\top x + \text{offset}
    \quad\text{s.t.}\quad A x + s = b, \quad s \in K,

with :math:`K` a product of zero cones (equality rows), non-negative orthants, second-order
cones and exponential cones. For every :math:`z` in the dual cone :math:`K^*` and every feasible
:math:`x`, :math:`z^\top s \ge 0`, so

.. math::

    f(x) \;\ge\; f(x) - z^\top (b - A x) \;\ge\; \text{offset} - b^\top z
    + \min_x \bigl(\tfrac12 x^\top P x + (c + A^\top z)^\top x\bigr),

whatever :math:`z \in K^*` is: weak duality, with the Lagrangian's minimum as the bound. It is
the bound of :func:`optframe.safe_bound.safe_lower_bound` for the equality rows
:math:`Ax = b` at the multipliers :math:`y = -z` (the same rounding analysis, tangent plane and
kept curvature), once :math:`z` is in :math:`K^*`. Every variable of the conic form is free, so
every column without curvature needs :math:`c_j + (A^\top z)_j = 0`, as an equality row's dual
does. :func:`conic_lower_bound` therefore

1. puts the solver's :math:`z` into :math:`K^*` (a projection onto each second-order cone,
   which is self-dual; the non-negative parts clipped; for an exponential cone the third entry
   raised to the dual cone's boundary), each cone's head then raised by its own rounding error;
2. balances the columns without curvature: the least change of :math:`z` over all rows that
   zeroes their reduced costs, then step 1 again, a few times (the change of a cone's
   multipliers can leave the cone; the projection brings it back);
3. evaluates the bound with the zero cone's multipliers (free, as equality rows' are) as the
   only ones the last balance may move, so that the cone rows' multipliers stay in :math:`K^*`.

A column without curvature left with a reduced cost above its rounding error gives no bound:
the result is ``-inf`` with the reason, never a number that is not proven.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.backend import ConicPoint
from optframe.certificate import RepairStep
from optframe.duality import normal_solver
from optframe.model import MatrixProblem
from optframe.safe_bound import BALANCE_MAX_COLUMNS, SafeBound, safe_lower_bound

__all__ = ["conic_lower_bound"]

_U = 2.0**-53

#: The most passes of "balance, then back into the dual cone" before the bound is evaluated
#: (they stop when the reduced costs no longer shrink; an exponential cone's repair can take
#: tens of passes to settle with the balance).
PASSES = 60


def _blocks(point: ConicPoint) -> list[tuple[str, int, int]]:
    """``(kind, first row, last row + 1)`` of each cone (every non-negative row on its own)."""
    blocks, row = [], 0
    for kind, size in point.cones:
        blocks.append((kind, row, row + size))
        row += size
    if row != point.b.size:
        raise ValueError(f"the cones cover {row} rows of {point.b.size}")
    return blocks


class _Cones:
    """The rows of each kind of cone, as index arrays, so that the dual cone is one numpy pass."""

    def __init__(self, blocks: list[tuple[str, int, int]]) -> None:
        self.nonneg = np.concatenate(
            [np.arange(lo, hi) for kind, lo, hi in blocks if kind == "nonneg"] or [np.empty(0, int)]
        )
        self.exp = np.array([lo for kind, lo, _ in blocks if kind == "exp"], dtype=np.intp)
        soc = [(lo, hi) for kind, lo, hi in blocks if kind == "soc"]
        self.heads = np.array([lo for lo, _ in soc], dtype=np.intp)
        self.sizes = np.array([hi - lo for lo, hi in soc], dtype=np.intp)
        self.tails = np.concatenate(
            [np.arange(lo + 1, hi) for lo, hi in soc] or [np.empty(0, int)]
        ).astype(np.intp)
        self.tail_block = np.repeat(np.arange(len(soc)), self.sizes - 1)

    def tail_norms(self, z: NDArray[np.float64]) -> NDArray[np.float64]:
        squares = np.bincount(self.tail_block, z[self.tails] ** 2, minlength=self.heads.size)
        return np.sqrt(squares)


def _into_dual_cone(z: NDArray[np.float64], cones: _Cones) -> float:
    """Move ``z`` into :math:`K^*` in place; the largest change made."""
    before = z.copy()
    z[cones.nonneg] = np.maximum(z[cones.nonneg], 0.0)
    if cones.heads.size:  # second-order cones (self-dual): the projection
        head, norm = z[cones.heads], cones.tail_norms(z)
        outside = norm > head
        inside_polar = outside & (norm <= -head)
        scale = np.where(outside & ~inside_polar, (head + norm) / 2.0, head)
        scale = np.where(inside_polar, 0.0, scale)
        factor = np.where(outside, scale / np.where(norm > 0, norm, 1.0), 1.0)
        z[cones.tails] *= factor[cones.tail_block]
        z[cones.heads] = scale
        # each head above its tail's norm by the norm's own rounding error
        margin = 1.0 + 4.0 * cones.sizes * _U
        z[cones.heads] = np.maximum(z[cones.heads], cones.tail_norms(z) * margin)
    if cones.exp.size:  # Clarabel's dual: u < 0, -u exp(v / u) <= e w; or u = 0, v, w >= 0
        u, v, w = z[cones.exp], z[cones.exp + 1], z[cones.exp + 2]
        closed = u >= 0.0
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            ratio = np.where(closed, 0.0, v / np.where(closed, -1.0, u))
            need = -u * np.exp(np.minimum(ratio - 1.0, 700.0)) * (1.0 + 16.0 * _U)
        z[cones.exp] = np.where(closed, 0.0, u)
        z[cones.exp + 1] = np.where(closed, np.maximum(v, 0.0), v)
        z[cones.exp + 2] = np.where(closed, np.maximum(w, 0.0), np.maximum(w, need))
    return float(np.max(np.abs(z - before), initial=0.0))


def _settle_heads(
    z: NDArray[np.float64],
    blocks: list[tuple[str, int, int]],
    A: sp.csc_array,
    c: NDArray[np.float64],
    linear: NDArray[np.bool_],
) -> int:
    r"""Zero the reduced cost of each column priced by one second-order cone's head alone.

    Returns the number of cones set. Such a column (the epigraph variable :math:`t` of
    :math:`t \ge \lVert v\rVert`, with its cost :math:`c_t` the norm's weight) has
    :math:`c_t + A_{ht} z_h = 0` only for :math:`z_h = -c_t / A_{ht}`, which no balance over the
    zero cone can reach; the head is set to it and the tail scaled into the cone (a change the
    last balance, over the zero cone, takes up on the other columns). Left as it is when that
    head would be negative.
    """
    head_of = {lo: (lo, hi) for kind, lo, hi in blocks if kind == "soc"}
    count = 0
    for j in np.flatnonzero(linear):
        rows = A.indices[A.indptr[j] : A.indptr[j + 1]]
        if rows.size != 1 or int(rows[0]) not in head_of:
            continue
        lo, hi = head_of[int(rows[0])]
        head = -c[j] / A.data[A.indptr[j]]
        if not head > 0.0:
            continue
        z[lo] = head
        norm = float(np.linalg.norm(z[lo + 1 : hi]))
        limit = head * (1.0 - 4.0 * (hi - lo + 2) * _U)
        if norm > limit:
            z[lo + 1 : hi] *= limit / norm
        count += 1
    return count


def _linear_columns(P: sp.csc_array | None, n: int) -> NDArray[np.bool_]:
    if P is None or P.nnz == 0:
        return np.ones(n, dtype=bool)
    return np.diff(sp.csc_array(P).indptr) == 0


def _symmetric(P: sp.csc_array | None) -> sp.csc_array | None:
    """``P`` in full (a conic solver may have been handed its upper triangle)."""
    if P is None or P.nnz == 0:
        return None
    P = sp.csc_array(P)
    if abs(P - P.T).max() == 0:
        return P
    upper = sp.triu(P, format="csc")
    if (P - upper).nnz == 0 or abs(P - upper).max() == 0:
        return sp.csc_array(upper + upper.T - sp.diags(upper.diagonal()))
    return None  # neither symmetric nor a triangle: not a form this bound knows


def conic_lower_bound(point: ConicPoint) -> SafeBound:
    """A lower bound on a cone program's optimum, proven from the solver's ``x`` and ``z``.

    Parameters
    ----------
    point : ConicPoint
        The program as the solver saw it, its point and its dual values.

    Returns
    -------
    SafeBound
        The bound on ``f`` (the offset included), with the repairs in ``steps``; ``-inf`` with
        a reason when none can be proven.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> from optframe.backend import ConicPoint
    >>> # min t s.t. t >= ||(1, 2)||: the rows (t, v1, v2) - (0, 1, 2) in a second-order cone
    >>> A = sp.csc_array(np.array([[-1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]]))
    >>> point = ConicPoint(P=None, c=np.array([1.0, 0, 0]), A=A, b=np.zeros(3),
    ...                    cones=(("zero", 0), ("soc", 3)), offset=0.0,
    ...                    x=np.array([5**0.5, 1, 2]), z=np.array([1.0, -0.44, -0.9]))
    >>> round(conic_lower_bound(point).value, 6)  # the optimum is 0 here (t = ||v||, v free)
    0.0
    """
    try:
        blocks = _blocks(point)
    except ValueError as why:
        return SafeBound(-math.inf, f"the cone program is malformed: {why}")
    P = _symmetric(point.P)
    if point.P is not None and point.P.nnz and P is None:
        return SafeBound(-math.inf, "the quadratic term is neither symmetric nor a triangle")
    n, m = point.c.size, point.b.size
    x = np.asarray(point.x, dtype=np.float64)
    z = np.array(point.z, dtype=np.float64)
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(z))) or x.size != n or z.size != m:
        return SafeBound(-math.inf, "the solver's point or dual values are missing or not finite")
    A = sp.csc_array(point.A)
    steps: list[RepairStep] = []
    cones = _Cones(blocks)
    moved = _into_dual_cone(z, cones)
    steps.append(RepairStep(
        "project", "put the solver's cone multipliers into the dual cone (second-order cones "
        "projected, non-negative parts clipped, exponential cones raised to their boundary)",
        moved, 0.0, "largest change",
    ))  # fmt: skip
    linear = _linear_columns(P, n)
    columns = np.flatnonzero(linear)
    if 0 < columns.size <= BALANCE_MAX_COLUMNS:
        AF = sp.csc_array(A[:, columns])
        solve = normal_solver((AF.T @ AF).toarray())
        residual = point.c[columns] + AF.T @ z
        before = after = float(np.max(np.abs(residual), initial=0.0))
        settled = 4.0 * _U * float(np.max(np.abs(point.c[columns]), initial=1.0))
        best, passes = z.copy(), 0
        while passes < PASSES and after > settled:
            z = z - np.asarray(AF @ solve(residual)).ravel()
            _into_dual_cone(z, cones)
            residual = point.c[columns] + AF.T @ z
            passes += 1
            largest = float(np.max(np.abs(residual), initial=0.0))
            if largest < after:  # not monotone: the best pass is kept
                best, after = z.copy(), largest
        z = best
        steps.append(RepairStep(
            "balance", f"moved the multipliers least so that the {columns.size} columns without "
            f"curvature (free variables) have no reduced cost, then into the dual cone again, "
            f"{passes} times", before, after, "largest |c_j + (A'z)_j| on them",
        ))  # fmt: skip
    fixed = _settle_heads(z, blocks, A, point.c, linear)
    if fixed:
        steps.append(RepairStep(
            "heads", f"set {fixed} second-order cones' heads so that the column each one alone "
            "prices (an epigraph variable, t >= ||v||) has no reduced cost, their tails scaled "
            "into the cone",
        ))  # fmt: skip
    zero_rows = np.zeros(m, dtype=bool)
    for kind, lo, hi in blocks:
        if kind == "zero":
            zero_rows[lo:hi] = True
    equalities = MatrixProblem(
        c=np.asarray(point.c, dtype=np.float64),
        A=A,
        row_lower=np.asarray(point.b, dtype=np.float64),
        row_upper=np.asarray(point.b, dtype=np.float64),
        lower=np.full(n, -np.inf),
        upper=np.full(n, np.inf),
        P=P,
        offset=float(point.offset),
    )
    found = safe_lower_bound(equalities, x, -z, movable_rows=zero_rows)
    return SafeBound(
        found.value,
        found.reason,
        zeroed_rows=found.zeroed_rows,
        curvature_columns=found.curvature_columns,
        rounding=found.rounding,
        y=None if found.y is None else -found.y,
        z=found.z,
        x=found.x,
        steps=(*steps, *found.steps),
        terms=found.terms,
    )
