"""Tiny conformance instances for the solver back-ends, each buildable in every layer.

An :class:`Instance` holds one :class:`~optframe.model.MatrixProblem` plus the names of its variable
groups (consecutive columns) and constraint groups (consecutive rows). :meth:`Instance.build` turns
the same data into a :class:`~optframe.model.Formulation` in the ``"matrix"``, ``"cvxpy"`` or
``"pyomo"`` layer with the same handle names, so every back-end is checked against the same
expected values:

* matrix: handles are slices of the variable vector and of the rows;
* cvxpy: a group is one ``cp.Variable`` (shape ``()`` when scalar); a constraint group is one
  vector constraint (``A x == b``, ``A x >= l`` or ``A x <= u``), or a tuple of the two one-sided
  constraints of a ranged group;
* pyomo: a group is an indexed ``Var`` over ``range(k)`` (a scalar ``Var`` when scalar); a
  constraint group is an indexed ``Constraint`` (scalar when scalar), ranged rows as
  ``inequality(l, expr, u)``.

The continuous instances were designed from their KKT conditions (primal point, active set and
multipliers chosen first, ``c`` derived from stationarity), so their optimum and their duals are
unique and known exactly; the integer ones are small enough to solve by enumeration.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.model import Formulation, MatrixProblem, ProblemClass

INF = np.inf


@dataclass(frozen=True)
class Group:
    """A named block of consecutive columns or rows; ``scalar`` blocks have size 1."""

    name: str
    size: int
    scalar: bool = False


@dataclass(frozen=True, eq=False)
class Instance:
    """A matrix problem with named groups and, when known, its optimum."""

    name: str
    problem: MatrixProblem
    variables: tuple[Group, ...]
    constraints: tuple[Group, ...] = ()
    objective: float | None = None
    primal: dict[str, NDArray[np.float64]] = field(default_factory=dict)
    dual: dict[str, NDArray[np.float64]] = field(default_factory=dict)

    @property
    def problem_class(self) -> ProblemClass:
        return self.problem.problem_class

    def _slices(self, groups: tuple[Group, ...]) -> dict[str, slice]:
        out, start = {}, 0
        for group in groups:
            out[group.name] = slice(start, start + group.size)
            start += group.size
        return out

    def build(self, layer: str) -> Formulation:
        """The instance as a formulation in ``layer``."""
        return {"matrix": self._matrix, "cvxpy": self._cvxpy, "pyomo": self._pyomo}[layer]()

    # ----------------------------------------------------------------------------------- layers
    def _matrix(self) -> Formulation:
        return Formulation(
            layer="matrix",
            problem=self.problem,
            problem_class=self.problem_class,
            variables=self._slices(self.variables),
            constraints=self._slices(self.constraints),
        )

    def _row_kind(self, rows: slice) -> str:
        lo, hi = self.problem.row_lower[rows], self.problem.row_upper[rows]
        if np.all(lo == hi):
            return "eq"
        if np.all(np.isfinite(lo)) and np.all(np.isinf(hi)):
            return "ge"
        if np.all(np.isinf(lo)) and np.all(np.isfinite(hi)):
            return "le"
        if np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)):
            return "range"
        raise ValueError(f"constraint group at rows {rows} mixes row kinds")

    def _cvxpy(self) -> Formulation:
        import cvxpy as cp

        p = self.problem
        integer = p.integrality if p.integrality is not None else np.zeros(p.n_variables, bool)
        handles: dict[str, Any] = {}
        parts = []
        for group, cols in zip(self.variables, self._slices(self.variables).values(), strict=True):
            shape: tuple[int, ...] = () if group.scalar else (group.size,)
            lo, hi = p.lower[cols], p.upper[cols]
            bounds = [lo[0], hi[0]] if group.scalar else [lo, hi]
            var = cp.Variable(
                shape, name=group.name, integer=bool(integer[cols].any()), bounds=bounds
            )
            handles[group.name] = var
            parts.append(cp.reshape(var, (1,), order="C") if group.scalar else var)
        x = cp.hstack(parts)
        constraints: dict[str, Any] = {}
        A = sp.csr_array(p.A)
        for group, rows in zip(
            self.constraints, self._slices(self.constraints).values(), strict=True
        ):
            expr = A[rows] @ x
            if group.scalar:
                expr = expr[0]
            lo, hi = p.row_lower[rows], p.row_upper[rows]
            lo, hi = (lo[0], hi[0]) if group.scalar else (lo, hi)
            kind = self._row_kind(rows)
            if kind == "eq":
                constraints[group.name] = expr == lo
            elif kind == "ge":
                constraints[group.name] = expr >= lo
            elif kind == "le":
                constraints[group.name] = expr <= hi
            else:
                constraints[group.name] = (expr >= lo, expr <= hi)
        flat = []
        for con in constraints.values():
            flat.extend(con if isinstance(con, tuple) else [con])
        objective = p.c @ x + p.offset
        if p.P is not None and p.P.nnz:
            objective = objective + 0.5 * cp.quad_form(x, p.P.toarray(), assume_PSD=True)
        problem = cp.Problem(cp.Minimize(objective), flat)
        return Formulation(
            layer="cvxpy",
            problem=problem,
            problem_class=self.problem_class,
            variables=handles,
            constraints=constraints,
        )

    def _pyomo(self) -> Formulation:
        import pyomo.environ as pyo

        p = self.problem
        integer = p.integrality if p.integrality is not None else np.zeros(p.n_variables, bool)
        mdl = pyo.ConcreteModel(name=self.name)
        columns: list[Any] = []
        handles: dict[str, Any] = {}

        def bound(value: float) -> float | None:
            return None if np.isinf(value) else float(value)

        for group, cols in zip(self.variables, self._slices(self.variables).values(), strict=True):
            domain = pyo.Integers if integer[cols].any() else pyo.Reals
            lo, hi = p.lower[cols], p.upper[cols]
            if group.scalar:
                var = pyo.Var(within=domain, bounds=(bound(lo[0]), bound(hi[0])))
                setattr(mdl, group.name, var)
                columns.append(var)
            else:
                var = pyo.Var(
                    range(group.size),
                    within=domain,
                    bounds=lambda _, i, lo=lo, hi=hi: (bound(lo[i]), bound(hi[i])),
                )
                setattr(mdl, group.name, var)
                columns.extend(var[i] for i in range(group.size))
            handles[group.name] = var
        A = sp.csr_array(p.A)

        def row_expr(i: int) -> Any:
            lo, hi = A.indptr[i], A.indptr[i + 1]
            return pyo.quicksum(
                float(a) * columns[int(j)]
                for a, j in zip(A.data[lo:hi], A.indices[lo:hi], strict=True)
            )

        def relation(i: int) -> Any:
            lo, hi = p.row_lower[i], p.row_upper[i]
            expr = row_expr(i)
            if lo == hi:
                return expr == float(lo)
            if np.isinf(hi):
                return expr >= float(lo)
            if np.isinf(lo):
                return expr <= float(hi)
            return pyo.inequality(float(lo), expr, float(hi))

        constraints: dict[str, Any] = {}
        for group, rows in zip(
            self.constraints, self._slices(self.constraints).values(), strict=True
        ):
            if group.scalar:
                con = pyo.Constraint(expr=relation(rows.start))
            else:
                con = pyo.Constraint(
                    range(group.size), rule=lambda _, k, start=rows.start: relation(start + k)
                )
            setattr(mdl, group.name, con)
            constraints[group.name] = con
        objective = pyo.quicksum(
            float(p.c[j]) * columns[j] for j in range(p.n_variables) if p.c[j]
        ) + float(p.offset)
        if p.P is not None and p.P.nnz:
            P = sp.coo_array(p.P)
            objective = objective + pyo.quicksum(
                0.5 * float(v) * columns[int(i)] * columns[int(j)]
                for i, j, v in zip(P.row, P.col, P.data, strict=True)
            )
        mdl.objective = pyo.Objective(expr=objective, sense=pyo.minimize)
        return Formulation(
            layer="pyomo",
            problem=mdl,
            problem_class=self.problem_class,
            variables=handles,
            constraints=constraints,
        )

    # ------------------------------------------------------------------------------ reference
    def split(self, x: NDArray[np.float64]) -> dict[str, NDArray[np.float64]]:
        """Cut a full variable vector into the named groups."""
        return {name: x[cols] for name, cols in self._slices(self.variables).items()}

    def enumerate(self) -> tuple[float, NDArray[np.float64], int]:
        """Optimum of a pure-integer instance by enumeration: value, argmin, number of argmins."""
        p = self.problem
        grid = [range(int(lo), int(hi) + 1) for lo, hi in zip(p.lower, p.upper, strict=True)]
        points = np.array(list(itertools.product(*grid)), dtype=np.float64)
        rows = points @ p.A.T.toarray()
        feasible = np.all((rows >= p.row_lower - 1e-9) & (rows <= p.row_upper + 1e-9), axis=1)
        points = points[feasible]
        values = points @ p.c + p.offset
        if p.P is not None:
            values = values + 0.5 * np.einsum("ij,jk,ik->i", points, p.P.toarray(), points)
        best = float(values.min())
        winners = np.flatnonzero(values <= best + 1e-9)
        return best, points[winners[0]], int(winners.size)


def _csc(rows: list[list[float]]) -> sp.csc_array:
    return sp.csc_array(np.array(rows, dtype=np.float64))


def lp_mixed() -> Instance:
    """LP with an equality row, a ranged row, one-sided rows, and lower/upper/free variables.

    Variables ``x`` (3) and scalar ``s``; at the optimum the ranged row is at its upper bound, the
    ``>=`` row at its lower bound, ``x1`` at its upper bound, and the ``<=`` row is slack.
    """
    A = _csc(
        [
            [1, 1, 1, 1],  # balance: sum x + s == 6
            [1, -1, 0, 0],  # band: 1 <= x0 - x1 <= 3
            [0, 1, 2, 0],  # cover: x1 + 2 x2 >= 4
            [1, 0, 0, 1],  # cap: x0 + s <= 5
        ]
    )
    problem = MatrixProblem(
        c=np.array([-1.0, 5.0, 7.0, 1.0]),
        A=A,
        row_lower=np.array([6.0, 1.0, 4.0, -INF]),
        row_upper=np.array([6.0, 3.0, INF, 5.0]),
        lower=np.array([0.0, 0.0, -INF, -3.0]),
        upper=np.array([INF, 2.0, INF, INF]),
        offset=0.5,
    )
    return Instance(
        "lp_mixed",
        problem,
        variables=(Group("x", 3), Group("s", 1, scalar=True)),
        constraints=(
            Group("balance", 1, scalar=True),
            Group("band", 1, scalar=True),
            Group("cover", 1),
            Group("cap", 1, scalar=True),
        ),
        objective=10.5,
        primal={"x": np.array([5.0, 2.0, 1.0]), "s": np.array([-2.0])},
        dual={
            "balance": np.array([1.0]),
            "band": np.array([-2.0]),
            "cover": np.array([3.0]),
            "cap": np.array([0.0]),
        },
    )


def lp_box() -> Instance:
    """LP with equality rows only and every variable boxed (the shape ``fn`` takes).

    At the optimum ``x0`` and ``x1`` are strictly inside their boxes, ``x2`` is at its upper
    bound (reduced cost -1) and ``t`` at its lower bound (reduced cost 2): nondegenerate, so the
    optimum and the duals ``y = (2, -1)`` are unique.
    """
    problem = MatrixProblem(
        c=np.array([1.0, 3.0, -1.0, 4.0]),
        A=_csc([[1, 1, 1, 1], [1, -1, 2, 0]]),
        row_lower=np.array([1.0, 1.0]),
        row_upper=np.array([1.0, 1.0]),
        lower=np.array([-1.0, 0.0, 0.0, -2.0]),
        upper=np.array([2.0, 3.0, 1.0, 1.0]),
        offset=0.25,
    )
    return Instance(
        "lp_box",
        problem,
        variables=(Group("x", 3), Group("t", 1, scalar=True)),
        constraints=(Group("total", 1, scalar=True), Group("mix", 1)),
        objective=-3.75,
        primal={"x": np.array([0.5, 1.5, 1.0]), "t": np.array([-2.0])},
        dual={"total": np.array([2.0]), "mix": np.array([-1.0])},
    )


def qp_box() -> Instance:
    """Strictly convex QP: an equality row, two ``>=`` rows (one active), an active upper bound."""
    P = _csc([[4, 1, 0], [1, 3, 0], [0, 0, 2]])
    problem = MatrixProblem(
        c=np.array([0.25, -1.0, -0.5]),
        A=_csc([[1, 1, 1], [1, -1, 0], [0, 1, 1]]),
        row_lower=np.array([2.0, 0.5, -5.0]),
        row_upper=np.array([2.0, INF, INF]),
        lower=np.full(3, -INF),
        upper=np.array([INF, INF, 1.0]),
        P=P,
        offset=-1.0,
    )
    return Instance(
        "qp_box",
        problem,
        variables=(Group("w", 3),),
        constraints=(Group("total", 1, scalar=True), Group("floor", 2)),
        objective=0.84375,
        primal={"w": np.array([0.75, 0.25, 1.0])},
        dual={"total": np.array([2.0]), "floor": np.array([1.5, 0.0])},
    )


def qp_free() -> Instance:
    """Unconstrained strictly convex QP (no rows, free variables): x* = -P^{-1} c."""
    problem = MatrixProblem(
        c=np.array([1.0, -1.0]),
        A=sp.csc_array((0, 2)),
        row_lower=np.zeros(0),
        row_upper=np.zeros(0),
        lower=np.full(2, -INF),
        upper=np.full(2, INF),
        P=_csc([[2, 0.5], [0.5, 1]]),
    )
    return Instance(
        "qp_free",
        problem,
        variables=(Group("v", 2),),
        objective=-8 / 7,
        primal={"v": np.array([-6 / 7, 10 / 7])},
    )


def qp_separable() -> Instance:
    """Separable QP (diagonal P): a free, a half-bounded and a boxed flat column, one row.

    min x1^2 + x2^2/2 - 2 x1 + x2 - x3 + 1/2 s.t. x1 + x2 + x3 = 3, x2 >= 0, 0 <= x3 <= 1:
    x3 sits at 1, and 2 x1 - 2 = x2 + 1 = y with x1 + x2 = 2 gives y = 4/3.
    """
    problem = MatrixProblem(
        c=np.array([-2.0, 1.0, -1.0]),
        A=_csc([[1, 1, 1]]),
        row_lower=np.array([3.0]),
        row_upper=np.array([3.0]),
        lower=np.array([-INF, 0.0, 0.0]),
        upper=np.array([INF, INF, 1.0]),
        P=_csc([[2, 0, 0], [0, 1, 0], [0, 0, 0]]),
        offset=0.5,
    )
    return Instance(
        "qp_separable",
        problem,
        variables=(Group("x", 3),),
        constraints=(Group("total", 1, scalar=True),),
        objective=-2 / 3,
        primal={"x": np.array([5 / 3, 1 / 3, 1.0])},
        dual={"total": np.array([4 / 3])},
    )


def milp_small() -> Instance:
    """Pure-integer LP on {0..3}^4 with two knapsack rows and a cover row (unique optimum)."""
    problem = MatrixProblem(
        c=np.array([-5.0, -4.0, -3.0, -7.0]),
        A=_csc([[2, 3, 1, 4], [3, 1, 2, 5], [1, 1, 1, 1]]),
        row_lower=np.array([-INF, -INF, 2.0]),
        row_upper=np.array([9.0, 10.0, INF]),
        lower=np.zeros(4),
        upper=np.array([3.0, 3.0, 3.0, 1.0]),
        integrality=np.ones(4, dtype=bool),
        offset=1.0,
    )
    return Instance(
        "milp_small",
        problem,
        variables=(Group("z", 3), Group("flag", 1, scalar=True)),
        constraints=(Group("capacity", 2), Group("cover", 1, scalar=True)),
    )


def miqp_small() -> Instance:
    """Convex integer QP on {-2..3}^3 whose continuous optimum is not integral."""
    problem = MatrixProblem(
        c=np.array([-2.3, 1.1, -0.7]),
        A=_csc([[1, 1, 1], [1, -1, 0]]),
        row_lower=np.array([-INF, -1.0]),
        row_upper=np.array([2.0, INF]),
        lower=np.full(3, -2.0),
        upper=np.full(3, 3.0),
        P=_csc([[2, 0.5, 0], [0.5, 1, 0.2], [0, 0.2, 1.5]]),
        integrality=np.ones(3, dtype=bool),
    )
    return Instance(
        "miqp_small",
        problem,
        variables=(Group("k", 3),),
        constraints=(Group("budget", 1, scalar=True), Group("order", 1, scalar=True)),
    )


def lp_infeasible() -> Instance:
    """x, y >= 0 and x + y <= -1."""
    problem = MatrixProblem(
        c=np.array([1.0, 1.0]),
        A=_csc([[1, 1], [1, -1]]),
        row_lower=np.array([-INF, -1.0]),
        row_upper=np.array([-1.0, 1.0]),
        lower=np.zeros(2),
        upper=np.full(2, INF),
    )
    return Instance(
        "lp_infeasible",
        problem,
        variables=(Group("x", 2),),
        constraints=(Group("sum", 1), Group("gap", 1)),
    )


def lp_unbounded() -> Instance:
    """min -x0 - x1 with x0 - x1 <= 1, x >= 0: unbounded along (1, 1)."""
    problem = MatrixProblem(
        c=np.array([-1.0, -1.0]),
        A=_csc([[1, -1]]),
        row_lower=np.array([-INF]),
        row_upper=np.array([1.0]),
        lower=np.zeros(2),
        upper=np.full(2, INF),
    )
    return Instance(
        "lp_unbounded",
        problem,
        variables=(Group("x", 2),),
        constraints=(Group("rows", 1),),
    )


def milp_hard(n: int = 60, m: int = 6, seed: int = 3) -> Instance:
    """A random multi-dimensional binary knapsack that takes the MIP solvers several seconds."""
    rng = np.random.default_rng(seed)
    weights = rng.integers(20, 80, size=(m, n)).astype(np.float64)
    profit = weights.sum(axis=0) / m + rng.integers(-10, 10, size=n)
    problem = MatrixProblem(
        c=-profit,
        A=sp.csc_array(weights),
        row_lower=np.full(m, -INF),
        row_upper=np.floor(weights.sum(axis=1) / 2),
        lower=np.zeros(n),
        upper=np.ones(n),
        integrality=np.ones(n, dtype=bool),
    )
    return Instance(
        "milp_hard",
        problem,
        variables=(Group("pick", n),),
        constraints=(Group("capacity", m),),
    )


def qp_large(n: int = 400, m: int = 300, seed: int = 5) -> Instance:
    """A dense-ish random convex QP for iteration/time limits of the continuous solvers."""
    rng = np.random.default_rng(seed)
    F = sp.random(n, n, density=0.05, random_state=seed, format="csc")
    P = sp.csc_array(F.T @ F + 0.01 * sp.eye(n))
    A = sp.csc_array(sp.random(m, n, density=0.1, random_state=seed + 1))
    problem = MatrixProblem(
        c=rng.standard_normal(n),
        A=A,
        row_lower=np.full(m, -1.0),
        row_upper=np.full(m, 1.0),
        lower=np.full(n, -10.0),
        upper=np.full(n, 10.0),
        P=P,
    )
    return Instance(
        "qp_large",
        problem,
        variables=(Group("x", n),),
        constraints=(Group("rows", m),),
    )


CONTINUOUS = (lp_mixed, lp_box, qp_box, qp_free, qp_separable)
INTEGER = (milp_small, miqp_small)
ALL = (*CONTINUOUS, *INTEGER, lp_infeasible, lp_unbounded)
