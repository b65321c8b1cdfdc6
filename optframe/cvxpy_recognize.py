r"""Recognizing a regularized empirical risk in a user's ``cvxpy.Problem``.

A problem without constraints whose objective is a sum of convex losses of affine functions of
the variables plus a penalty,

.. math::

    \lambda_1 \lVert w\rVert_1 + \lambda_2 \lVert w\rVert^2
    + \sum_i s_i\, \phi(u_i) + \text{const}, \qquad u = B x + e,

is the :class:`~models.empirical_risk.EmpiricalRisk`
:math:`\kappa\,[P(w) + C\sum_i s_i\,\ell(a_i)] + \text{offset}` with :math:`\kappa` the penalty's
scale (``2 lambda_2`` for the ridge, ``lambda_1`` for the lasso, ``lambda_1 + 2 lambda_2`` for
the elastic net, 1 without a penalty). :func:`recognize` returns that model with the map back to
the user's variables, or the reason it is not one (``Recognition.reason``), which names the
part that is not recognized.

The tree is read with cvxpy's public expression classes; the affine arguments are turned into
matrices by a walk over the affine atoms users write (``X @ w``, ``multiply``, ``+``, ``-``,
division by a constant, scalar promotion), without cvxpy's canonicalization, so that the data
matrix is taken as it is (dense or sparse). An affine argument with any other atom is read by
``d + 1`` evaluations (exact for an affine map; up to :data:`EVALUATION_LIMIT` columns).
The recognized model's objective is checked against the problem's at a random point before it
is used (from 20,000 rows on a random sample of 2,000 rows first, the problem's tree cut to
them, so the check costs about 5 ms at a million rows instead of a pass of cvxpy and of the
model over all of them): a mismatch (never expected) leaves the problem unrecognized.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.errors import OptframeError

__all__ = ["Recognition", "recognize"]

#: Columns up to which an affine argument with an unusual atom is read by evaluations.
EVALUATION_LIMIT = 2_000
#: Relative tolerance of the proportionality and constancy tests on coefficients.
RTOL = 1e-12
#: The largest relative difference between the model's and the problem's objective at the
#: random test point for the model to be used.
CHECK_RTOL = 1e-9
#: Rows from which the test point is first compared on a random sample of the rows, and how
#: many (at 1,000,000 x 20, all the rows cost 0.17 s, about 6% of a logistic fit).
SAMPLED_CHECK_FROM = 20_000
SAMPLED_CHECK_ROWS = 2_000


class NotRecognized(Exception):
    """A part of the problem that is not a loss or a penalty of an empirical risk."""


@dataclass
class Recognition:
    """What :func:`recognize` found: the model and its maps, or the reason there is none.

    ``model`` is the :class:`~models.empirical_risk.EmpiricalRisk` (``None`` when not
    recognized); the problem's objective is ``scale * model.objective + offset``.
    """

    model: Any = None
    reason: str = ""
    scale: float = 1.0
    offset: float = 0.0
    #: (name, variable, start, stop) of each user variable inside the model's ``w``.
    features: list[tuple[str, Any, int, int]] = field(default_factory=list)
    #: (name, variable, factor): the user's intercept is ``model intercept / factor``.
    intercept: tuple[str, Any, float] | None = None
    summary: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    @property
    def recognized(self) -> bool:
        """Whether the problem is an empirical risk."""
        return self.model is not None

    def describe(self) -> Any:
        """What ``stats["recognized"]`` shows: the summary, or ``"not recognized: ..."``."""
        return dict(self.summary) if self.recognized else f"not recognized: {self.reason}"

    def user_solution(self, solution: Any) -> dict[str, NDArray[np.float64]]:
        """The model's solution (``w``, ``intercept``) as the user's variables' values."""
        w = np.asarray(solution["w"], dtype=np.float64).reshape(-1)
        out = {}
        for name, variable, start, stop in self.features:
            out[name] = w[start:stop].reshape(variable.shape, order="F")
        if self.intercept is not None:
            name, variable, factor = self.intercept
            b = float(np.ravel(solution["intercept"])[0]) / factor
            out[name] = np.full(variable.shape, b)
        return out

    def model_solution(self, values: dict[str, Any]) -> dict[str, NDArray[np.float64]]:
        """The user's variables' values as the model's ``w`` and ``intercept``."""
        size = self.features[-1][3] if self.features else 0
        w = np.zeros(size)
        for name, _, start, stop in self.features:
            w[start:stop] = np.asarray(values[name], dtype=np.float64).reshape(-1, order="F")
        b = 0.0
        if self.intercept is not None:
            name, _, factor = self.intercept
            b = float(np.ravel(values[name])[0]) * factor
        return {"w": w, "intercept": np.array([b])}


# ------------------------------------------------------------------------- cvxpy classes
def _classes() -> dict[str, type]:
    import cvxpy as cp

    v = cp.Variable(2)
    return {
        "add": type(v + v),
        "neg": type(-v),
        "multiply": type(cp.multiply(np.ones(2), v)),
        "matmul": type(np.ones((2, 2)) @ v),
        "div": type(v / 2.0),
        "sum": type(cp.sum(v)),
        "promote": type(cp.promote(cp.Variable(), (2,))),
        "maximum": type(cp.maximum(v, 0)),
        "abs": type(cp.abs(v)),
        "huber": type(cp.huber(v, 1.0)),
        "power": cp.Power,
        "logistic": type(cp.logistic(v)),
        "quad_over_lin": type(cp.sum_squares(v)),
        "norm1": type(cp.norm1(v)),
        "pnorm": type(cp.norm(v, 2)).__mro__[1]
        if type(cp.norm(v, 2)).__name__.endswith("Approx")
        else type(cp.norm(v, 2)),
        "variable": cp.Variable,
    }


_CLASSES: dict[str, type] | None = None


def _cls() -> dict[str, type]:
    global _CLASSES
    if _CLASSES is None:
        _CLASSES = _classes()
    return _CLASSES


def _is(node: Any, name: str) -> bool:
    return isinstance(node, _cls()[name])


def _constant(node: Any) -> NDArray[np.float64] | None:
    """The value of a constant node (parameters at their values), flattened column-major."""
    if not node.is_constant() or node.variables():
        return None
    value = node.value
    if value is None:
        raise NotRecognized(f"a parameter without a value in {_name(node)}")
    if sp.issparse(value):
        value = value.toarray()
    return np.asarray(value, dtype=np.float64).reshape(-1, order="F")


def _name(node: Any) -> str:
    return type(node).__name__


# --------------------------------------------------------------------------- affine maps
@dataclass
class _Rows:
    """``diag(scale) @ matrix``, kept apart: the user's data matrix is scaled without a copy.

    ``scale`` has one entry per row, or one for all. Sums of two scalings of the same matrix
    stay lazy; anything else makes the product (:func:`_dense_or_sparse`).
    """

    scale: NDArray[np.float64]
    matrix: Any


def _dense_or_sparse(m: Any) -> Any:
    """The matrix ``m`` stands for (a ``_Rows`` multiplied out; the matrix itself at scale 1)."""
    if not isinstance(m, _Rows):
        return m
    scale, matrix = m.scale, m.matrix
    if scale.size == 1 or np.all(scale == scale[0]):
        k = float(scale[0])
        return matrix if k == 1.0 else matrix * k
    if sp.issparse(matrix):
        return sp.csr_array(sp.diags_array(scale) @ matrix)
    return scale[:, None] * matrix


def _add(a: Any, b: Any) -> Any:
    if isinstance(a, _Rows) and isinstance(b, _Rows) and a.matrix is b.matrix:
        return _Rows(a.scale + b.scale, a.matrix)
    a, b = _dense_or_sparse(a), _dense_or_sparse(b)
    if sp.issparse(a) and sp.issparse(b):
        return sp.csr_array(a + b)
    if sp.issparse(a):
        a = a.toarray()
    if sp.issparse(b):
        b = b.toarray()
    return np.asarray(a) + np.asarray(b)


def _rows(c: NDArray[np.float64], matrix: Any) -> _Rows:
    """diag(c) @ matrix, lazily (c of length 1 broadcasts)."""
    if isinstance(matrix, _Rows):
        return _Rows(matrix.scale * c, matrix.matrix)
    return _Rows(np.asarray(c, dtype=np.float64), matrix)


@dataclass
class Affine:
    """``vec(expr) = sum_v coef[v] @ vec(v) + const``: coefficients by variable id."""

    size: int
    coef: dict[int, Any]
    const: NDArray[np.float64]

    def scaled(self, c: NDArray[np.float64]) -> Affine:
        return Affine(self.size, {k: _rows(c, m) for k, m in self.coef.items()}, self.const * c)

    def broadcast(self, size: int) -> Affine:
        if self.size == size:
            return self
        if self.size != 1:
            raise NotRecognized(f"an affine argument of size {self.size} broadcast to {size}")
        coef = {}
        for k, m in self.coef.items():
            m = _dense_or_sparse(m)
            row = m.toarray() if sp.issparse(m) else np.asarray(m)
            coef[k] = np.repeat(row.reshape(1, -1), size, axis=0)
        return Affine(size, coef, np.full(size, float(self.const[0])))

    def plus(self, other: Affine) -> Affine:
        size = max(self.size, other.size)
        a, b = self.broadcast(size), other.broadcast(size)
        coef = dict(a.coef)
        for k, m in b.coef.items():
            coef[k] = _add(coef[k], m) if k in coef else m
        return Affine(size, coef, a.const + b.const)


class _AffineReader:
    """Affine maps of expressions, memoized by node (the same argument read once)."""

    def __init__(self, variables: dict[int, Any]) -> None:
        self.variables = variables
        self.memo: dict[int, Affine] = {}

    def __call__(self, node: Any) -> Affine:
        key = id(node)
        if key not in self.memo:
            self.memo[key] = self._read(node)
        return self.memo[key]

    def _read(self, node: Any) -> Affine:
        if not node.is_affine():
            raise NotRecognized(f"a non-affine argument {_name(node)}")
        if len(node.shape) > 1 and min(node.shape) > 1:
            return self._evaluate(node)
        value = _constant(node)
        if value is not None:
            return Affine(value.size, {}, value)
        if _is(node, "variable"):
            return Affine(node.size, {node.id: sp.identity(node.size, format="csr")},
                          np.zeros(node.size))  # fmt: skip
        if _is(node, "add"):
            out = self(node.args[0])
            for arg in node.args[1:]:
                out = out.plus(self(arg))
            return out
        if _is(node, "neg"):
            return self(node.args[0]).scaled(np.array([-1.0]))
        if _is(node, "promote"):
            return self(node.args[0]).broadcast(node.size)
        if _is(node, "div"):
            c = _constant(node.args[1])
            if c is not None and c.size == 1:
                return self(node.args[0]).scaled(1.0 / c)
        if _is(node, "multiply"):
            left, right = node.args
            for const_node, other in ((left, right), (right, left)):
                c = _constant(const_node)
                if c is not None:
                    inner = self(other)
                    if c.size > 1:
                        inner = inner.broadcast(c.size)
                    return inner.scaled(c)
        if _is(node, "matmul"):
            left, right = node.args
            if left.is_constant() and not left.variables() and len(right.shape) <= 1:
                matrix = left.value
                if not sp.issparse(matrix):
                    matrix = np.asarray(matrix, dtype=np.float64)
                    if matrix.ndim == 1:
                        matrix = matrix.reshape(1, -1)
                else:
                    matrix = sp.csr_array(matrix, dtype=np.float64)
                if _is(right, "variable"):
                    return Affine(matrix.shape[0], {right.id: matrix}, np.zeros(matrix.shape[0]))
                inner = self(right)
                coef = {k: matrix @ _dense_or_sparse(m) for k, m in inner.coef.items()}
                return Affine(matrix.shape[0], coef, np.asarray(matrix @ inner.const).reshape(-1))
        return self._evaluate(node)

    def _evaluate(self, node: Any) -> Affine:
        """The map by ``d + 1`` evaluations (exact for an affine expression)."""
        variables = node.variables()
        total = sum(v.size for v in variables)
        if total > EVALUATION_LIMIT:
            raise NotRecognized(
                f"an affine argument with the atom {_name(node)} over {total} variables "
                f"(read by evaluation up to {EVALUATION_LIMIT})"
            )
        saved = [v.value for v in variables]
        try:
            for v in variables:
                v.value = np.zeros(v.shape)
            base = np.asarray(node.value, dtype=np.float64).reshape(-1, order="F")
            coef = {}
            for v in variables:
                columns = np.empty((base.size, v.size))
                for j in range(v.size):
                    unit = np.zeros(v.size)
                    unit[j] = 1.0
                    v.value = unit.reshape(v.shape, order="F")
                    value = np.asarray(node.value, dtype=np.float64).reshape(-1, order="F")
                    columns[:, j] = value - base
                v.value = np.zeros(v.shape)
                coef[v.id] = columns
        finally:
            for v, old in zip(variables, saved, strict=True):
                v.value = old
        return Affine(base.size, coef, base)


# ---------------------------------------------------------------------------- the terms
@dataclass
class _Leaf:
    """One elementwise convex atom of a loss: ``weight_i * phi(args_i)``."""

    kind: str  # relu, abs, huber, square, sqpos, max2, logistic
    args: tuple[Any, ...]
    weight: NDArray[np.float64]
    param: float = 0.0
    #: a constant subtracted from the argument (``max(p, k) = k + relu(p - k)``)
    shift: NDArray[np.float64] | None = None
    #: a constant added to the loss of every row (``max(|v| + c, k) = k + ...``)
    offset: float = 0.0


@dataclass
class _Terms:
    leaves: list[_Leaf] = field(default_factory=list)
    l1: dict[int, float] = field(default_factory=dict)
    l2: dict[int, float] = field(default_factory=dict)
    penalty_vars: dict[int, Any] = field(default_factory=dict)
    offset: float = 0.0


def _scalar(node: Any) -> float | None:
    c = _constant(node)
    return float(c[0]) if c is not None and c.size == 1 else None


def _split(node: Any, c: float, terms: _Terms) -> None:
    """Add ``c * node`` (a scalar expression) to ``terms``."""
    if c == 0.0:
        return
    value = _constant(node)
    if value is not None:
        terms.offset += c * float(value.sum())
        return
    if _is(node, "add"):
        for arg in node.args:
            if arg.size != 1:
                raise NotRecognized(f"a vector term of size {arg.size} in the sum")
            _split(arg, c, terms)
        return
    if _is(node, "neg"):
        _split(node.args[0], -c, terms)
        return
    if _is(node, "multiply") or _is(node, "matmul"):
        left, right = node.args
        for const_node, other in ((left, right), (right, left)):
            k = _constant(const_node)
            if k is not None and k.size == 1 and other.size == 1:
                _split(other, c * float(k[0]), terms)
                return
            if k is not None and k.size == other.size and _is(node, "matmul"):
                _elementwise(other, c * k, terms)  # weights as a dot product s @ loss
                return
    if _is(node, "div"):
        k = _scalar(node.args[1])
        if k is not None:
            _split(node.args[0], c / k, terms)
            return
    if _is(node, "promote"):
        _split(node.args[0], c, terms)
        return
    if _is(node, "sum"):
        if node.get_data()[0] is not None:
            raise NotRecognized("a sum along an axis")
        _elementwise(node.args[0], np.array([c]), terms)
        return
    if _is(node, "quad_over_lin"):
        k = _scalar(node.args[1])
        if k is None or k <= 0:
            raise NotRecognized("a quad_over_lin with a non-constant denominator")
        arg = node.args[0]
        if _is(arg, "variable"):
            _penalty(terms, arg, c / k, "l2")
            return
        _squares(arg, np.array([c / k]), terms)
        return
    if _is(node, "norm1"):
        arg = node.args[0]
        if node.get_data()[0] is not None:
            raise NotRecognized("a norm1 along an axis")
        if _is(arg, "variable"):
            _penalty(terms, arg, c, "l1")
        else:
            _leaf(terms, "abs", (arg,), np.array([c]))
        return
    if _is(node, "power") and float(node.get_data()[0]) == 2.0:
        arg = node.args[0]
        if _is(arg, "pnorm") and float(arg.get_data()[0]) == 2.0 and arg.get_data()[1] is None:
            inner = arg.args[0]
            if _is(inner, "variable"):
                _penalty(terms, inner, c, "l2")
            else:
                _squares(inner, np.array([c]), terms)
            return
        if arg.size == 1:
            _elementwise(node, np.array([c]), terms)
            return
    if _is(node, "pnorm") and _is(node.args[0], "variable"):
        raise NotRecognized(
            "a norm penalty that is not squared (cp.norm(w, 2); write cp.sum_squares(w))"
        )
    if node.size == 1 and not node.is_affine():
        _elementwise(node, np.array([c]), terms)
        return
    raise NotRecognized(_what(node))


def _what(node: Any) -> str:
    if node.is_affine():
        return f"an affine term {_name(node)} (a loss with a linear part)"
    return f"a {_name(node)} term"


def _penalty(terms: _Terms, variable: Any, c: float, kind: str) -> None:
    if c < 0:
        raise NotRecognized(f"a penalty with a negative weight on {variable.name()}")
    terms.penalty_vars[variable.id] = variable
    table = terms.l1 if kind == "l1" else terms.l2
    table[variable.id] = table.get(variable.id, 0.0) + c


def _leaf(terms: _Terms, kind: str, args: tuple, weight: NDArray, param: float = 0.0) -> None:
    if np.any(weight < 0):
        raise NotRecognized(f"a negative weight on a {kind} loss")
    terms.leaves.append(_Leaf(kind, args, weight, param))


def _squares(arg: Any, weight: NDArray[np.float64], terms: _Terms) -> None:
    """``weight * arg**2`` summed: a square of an affine map or of its positive part."""
    if _is(arg, "variable") and weight.size == 1:
        _penalty(terms, arg, float(weight[0]), "l2")
        return
    if arg.is_affine():
        _leaf(terms, "square", (arg,), weight)
        return
    if _is(arg, "maximum") and len(arg.args) == 2:
        for a, b in ((arg.args[0], arg.args[1]), (arg.args[1], arg.args[0])):
            k = _constant(b)
            if k is not None and np.all(k == 0.0) and a.is_affine():
                _leaf(terms, "sqpos", (a,), weight)
                return
    raise NotRecognized(f"a sum of squares of {_name(arg)}")


def _elementwise(node: Any, weight: NDArray[np.float64], terms: _Terms) -> None:
    """Add ``sum(weight * node)`` for an elementwise expression ``node``."""
    value = _constant(node)
    if value is not None:
        terms.offset += float(np.sum(_times(weight, value)))
        return
    if _is(node, "add"):
        for arg in node.args:
            _elementwise(arg, weight, terms)
        return
    if _is(node, "promote"):
        _elementwise(node.args[0], weight * node.size if weight.size == 1 else weight, terms)
        return
    if _is(node, "neg"):
        _elementwise(node.args[0], -weight, terms)
        return
    if _is(node, "multiply"):
        left, right = node.args
        for const_node, other in ((left, right), (right, left)):
            k = _constant(const_node)
            if k is not None:
                _elementwise(other, _times(weight, k), terms)
                return
    if _is(node, "div"):
        k = _scalar(node.args[1])
        if k is not None:
            _elementwise(node.args[0], weight / k, terms)
            return
    if node.is_affine():
        raise NotRecognized(_what(node))
    if _is(node, "maximum"):
        if len(node.args) != 2:
            raise NotRecognized(f"a maximum of {len(node.args)} arguments")
        a, b = node.args
        for p, q in ((a, b), (b, a)):
            k = _constant(q)
            if k is not None and p.is_affine():  # max(p, k) = k + relu(p - k)
                _leaf(terms, "relu", (p,), weight)
                terms.leaves[-1].shift = k
                return
        if a.is_affine() and b.is_affine():
            _leaf(terms, "max2", (a, b), weight)
            return
        for p, q in ((a, b), (b, a)):
            k, inner = _constant(q), _abs_plus_constant(p)
            if k is not None and k.size == 1 and inner is not None:
                v, c = inner  # max(|v| + c, k) = k + relu(|v| - eps), eps = k - c >= 0
                eps = float(k[0]) - c
                if eps < 0:
                    raise NotRecognized("an epsilon-insensitive loss with a negative epsilon")
                _leaf(terms, "epsins", (v,), weight, eps)
                terms.leaves[-1].offset = float(k[0])
                return
        raise NotRecognized("a maximum of non-affine arguments")
    if _is(node, "abs") and _is(node.args[0], "variable") and weight.size == 1:
        _penalty(terms, node.args[0], float(weight[0]), "l1")
        return
    if _is(node, "abs") and node.args[0].is_affine():
        _leaf(terms, "abs", (node.args[0],), weight)
        return
    if _is(node, "huber") and node.args[0].is_affine():
        M = _scalar(node.get_data()[0])
        if M is None or not M > 0:
            raise NotRecognized("a huber with a threshold that is not a positive constant")
        _leaf(terms, "huber", (node.args[0],), weight, M)
        return
    if _is(node, "power") and float(node.get_data()[0]) == 2.0:
        _squares(node.args[0], weight, terms)
        return
    if _is(node, "logistic") and node.args[0].is_affine():
        _leaf(terms, "logistic", (node.args[0],), weight)
        return
    raise NotRecognized(_what(node))


def _abs_plus_constant(node: Any) -> tuple[Any, float] | None:
    """``(v, c)`` when ``node`` is ``abs(v) + c`` (``c`` a scalar constant, maybe absent)."""
    if _is(node, "abs") and node.args[0].is_affine():
        return node.args[0], 0.0
    if not _is(node, "add"):
        return None
    found, c = None, 0.0
    for arg in node.args:
        k = _constant(arg)
        if k is not None and np.all(k == k[0]):
            c += float(k[0])
        elif k is None and found is None and _is(arg, "abs") and arg.args[0].is_affine():
            found = arg.args[0]
        else:
            return None
    return None if found is None else (found, c)


def _times(weight: NDArray[np.float64], k: NDArray[np.float64]) -> NDArray[np.float64]:
    if weight.size == 1 or k.size == 1 or weight.size == k.size:
        return weight * k
    raise NotRecognized("weights whose shape does not match the loss")


# ----------------------------------------------------------------- from leaves to the loss
def _proportional(A: Any, B: Any) -> float | None:
    """``alpha`` with ``A == alpha * B`` (to RTOL), else ``None``."""
    if A is B:
        return 1.0
    if isinstance(A, _Rows) and isinstance(B, _Rows) and A.matrix is B.matrix:
        size = max(A.scale.size, B.scale.size)
        ratio = _proportional(
            np.broadcast_to(A.scale, (size,)).reshape(-1, 1),
            np.broadcast_to(B.scale, (size,)).reshape(-1, 1),
        )
        if ratio is not None or (A.scale.size == 1 and B.scale.size == 1):
            return ratio
    A, B = _dense_or_sparse(A), _dense_or_sparse(B)
    if A is B:
        return 1.0
    if sp.issparse(A) != sp.issparse(B):
        A = A.toarray() if sp.issparse(A) else A
        B = B.toarray() if sp.issparse(B) else B
    if A.shape != B.shape:
        return None
    if sp.issparse(A):
        A, B = sp.csr_array(A), sp.csr_array(B)
        bb = float(B.multiply(B).sum())
        alpha = float(A.multiply(B).sum()) / bb if bb > 0 else 0.0
        residual = abs(A - alpha * B)
        worst = float(residual.max()) if residual.nnz else 0.0
        size = max(float(abs(A).max()) if A.nnz else 0.0, abs(alpha) * (
            float(abs(B).max()) if B.nnz else 0.0))  # fmt: skip
    else:
        A, B = np.asarray(A), np.asarray(B)
        bb = float(np.vdot(B, B))
        alpha = float(np.vdot(A, B)) / bb if bb > 0 else 0.0
        worst = float(np.abs(A - alpha * B).max(initial=0.0))
        size = max(float(np.abs(A).max(initial=0.0)), abs(alpha) * float(
            np.abs(B).max(initial=0.0)))  # fmt: skip
    return alpha if worst <= 1e3 * RTOL * size else None


def _relation(arg: Affine, base: Affine, keys: list[int]) -> tuple[float, float]:
    """``(alpha, beta)`` with ``arg = alpha * base + beta`` (beta one constant), or raise."""
    if arg is base:
        return 1.0, 0.0
    alpha = None
    for k in keys:
        a, b = arg.coef.get(k), base.coef.get(k)
        if b is None and a is None:
            continue
        if b is None or a is None:
            raise NotRecognized(
                "loss terms whose arguments are not the same affine map (other variables)"
            )
        ratio = _proportional(a, b)
        if ratio is None or (alpha is not None and not math.isclose(ratio, alpha, rel_tol=1e-9)):
            raise NotRecognized("loss terms whose arguments are not the same affine map")
        alpha = ratio if alpha is None else alpha
    if alpha is None or alpha == 0.0:
        raise NotRecognized("a loss term with a constant argument")
    beta = arg.const - alpha * base.const
    if beta.size and not _nearly_constant(beta, rtol=1e-9, atol=1e-9 * (1 + abs(beta[0]))):
        raise NotRecognized("loss terms whose constants differ by row")
    return alpha, float(beta[0]) if beta.size else 0.0


def _argument(leaf: _Leaf, read: _AffineReader, n: int) -> Affine:
    """The affine argument of a one-argument leaf, its shift subtracted."""
    arg = read(leaf.args[0]).broadcast(n)
    if leaf.shift is None:
        return arg
    return Affine(n, arg.coef, arg.const - leaf.shift)


def _pieces(leaves: list[_Leaf], read: _AffineReader, base: Affine, keys: list[int], n: int):
    """The loss as PLQ pieces of the base argument ``u``, the row weights and the offsets.

    Returns ``relu, rehu, s, offset``: the loss of row i is
    ``s_i * (sum relu(p u_i + q) + sum rehu_tau(p u_i + q)) + offset_i``, ``offset`` the sum of
    the ``offset_i``. A weight of one value for every row stays one value (``s`` then a
    read-only broadcast).
    """
    weights = [np.asarray(leaf.weight, dtype=np.float64).reshape(-1) for leaf in leaves]
    top = float(weights[0].max())
    if not top > 0:
        raise NotRecognized("a loss whose weights are all zero")
    s = np.broadcast_to(weights[0] / top, (n,))
    at = int(np.argmax(weights[0]))
    relu: list[tuple[float, float]] = []
    rehu: list[tuple[float, float, float]] = []
    offset = 0.0

    def total(weight: NDArray[np.float64], value: Any) -> float:
        return float(np.sum(np.broadcast_to(weight * value, (n,))))

    for index, (leaf, weight) in enumerate(zip(leaves, weights, strict=True)):
        c = float(weight[at if weight.size > 1 else 0])
        if index and not np.allclose(weight, c * s, rtol=1e-9, atol=1e-12 * c):
            raise NotRecognized("loss terms weighted differently by row")
        if leaf.kind == "max2":
            lines = [_relation(read(arg).broadcast(n), base, keys) for arg in leaf.args]
        else:
            lines = [_relation(_argument(leaf, read, n), base, keys)]
        alpha, beta = lines[0]
        if leaf.shift is not None:
            offset += total(weight, leaf.shift)
        if leaf.offset != 0.0:
            offset += total(weight, leaf.offset)
        if leaf.kind == "relu":
            relu.append((c * alpha, c * beta))
        elif leaf.kind in ("abs", "epsins"):
            eps = leaf.param if leaf.kind == "epsins" else 0.0
            relu += [(c * alpha, c * (beta - eps)), (-c * alpha, -c * (beta + eps))]
        elif leaf.kind in ("huber", "square"):
            r = math.sqrt(2.0 * c)
            tau = r * leaf.param if leaf.kind == "huber" else math.inf
            rehu += [(r * alpha, r * beta, tau), (-r * alpha, -r * beta, tau)]
        elif leaf.kind == "sqpos":
            r = math.sqrt(2.0 * c)
            rehu.append((r * alpha, r * beta, math.inf))
        elif leaf.kind == "max2":
            (a1, b1), (a2, b2) = lines
            if a1 == a2:
                raise NotRecognized("a maximum of two parallel affine functions (a linear part)")
            r0 = (b2 - b1) / (a1 - a2)
            low, high = min(a1, a2), max(a1, a2)
            if low > 0 or high < 0:
                raise NotRecognized("a maximum of two affine functions with a linear part")
            offset += total(weight, a1 * r0 + b1)
            if high > 0:
                relu.append((c * high, -c * high * r0))
            if low < 0:
                relu.append((c * low, -c * low * r0))
        else:
            raise NotRecognized(f"a {leaf.kind} loss beside other loss terms")
    return relu, rehu, s, offset


def _merge(relu, rehu):
    """Pieces in one direction merged (exactly): relu by slope sign, rehu by its scaled kink."""
    out_relu: dict[tuple[float, float], float] = {}
    constant = 0.0
    for u, v in relu:
        if u == 0.0:
            constant += max(v, 0.0)
            continue
        key = (math.copysign(1.0, u), v / abs(u))
        out_relu[key] = out_relu.get(key, 0.0) + abs(u)
    merged_relu = [(sign * size, kink * size) for (sign, kink), size in out_relu.items()]
    out_rehu: dict[tuple[float, float, float], float] = {}
    for s, t, tau in rehu:
        if s == 0.0:
            raise NotRecognized("a squared term with a constant argument")
        key = (math.copysign(1.0, s), t / abs(s), tau / abs(s))
        out_rehu[key] = out_rehu.get(key, 0.0) + s * s
    merged_rehu = [(sign * math.sqrt(q), kink * math.sqrt(q), tk * math.sqrt(q))
                   for (sign, kink, tk), q in out_rehu.items()]  # fmt: skip
    return merged_relu, merged_rehu, constant


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-10, abs_tol=1e-14)


def _named(relu, rehu, kind):
    """The named loss equal to ``lam * loss`` for the pieces, as ``(loss, lam)``."""
    from optframe import losses

    relu = sorted(relu)
    rehu = sorted(rehu)
    if kind == "classification":
        if not rehu and len(relu) == 1 and relu[0][0] < 0 and _close(relu[0][1], -relu[0][0]):
            return losses.Hinge(), -relu[0][0]
        if not relu and len(rehu) == 1 and rehu[0][0] < 0 and math.isinf(rehu[0][2]) and \
                _close(rehu[0][1], -rehu[0][0]):  # fmt: skip
            return losses.SquaredHinge(), rehu[0][0] ** 2 / 2.0
    else:
        if not rehu and len(relu) == 2 and relu[0][0] < 0 < relu[1][0]:
            (un, vn), (up, vp) = relu
            if _close(vn, 0.0) and _close(vp, 0.0):
                if _close(-un, up):
                    return losses.Absolute(), up
                return losses.Pinball(up / (up - un)), up - un
            if _close(-un, up) and _close(vn, vp) and vp < 0:
                return losses.EpsilonInsensitive(-vp / up), up
        if not relu and len(rehu) == 2 and rehu[0][0] < 0 < rehu[1][0]:
            (sn, tn, taun), (sp_, tp, taup) = rehu
            if _close(-sn, sp_) and _close(tn, 0.0) and _close(tp, 0.0) and (
                    taun == taup or _close(taun, taup)):  # fmt: skip
                if math.isinf(taup):
                    return losses.PLQLoss(rehu=[(1.0, 0.0, math.inf), (-1.0, 0.0, math.inf)],
                                          kind="regression"), sp_**2  # fmt: skip
                return losses.Huber(taup / sp_), sp_**2
    scale = max([abs(u) for u, _ in relu] + [abs(s) for s, _, _ in rehu])
    rehu_scaled = [(s / math.sqrt(scale), t / math.sqrt(scale), tau / math.sqrt(scale))
                   for s, t, tau in rehu]  # fmt: skip
    relu_scaled = [(u / scale, v / scale) for u, v in relu]
    return losses.PLQLoss(relu=relu_scaled, rehu=rehu_scaled, kind=kind), scale


def _labels_in(node: Any, n: int) -> NDArray[np.float64] | None:
    """A vector of +-1 of length n that multiplies part of ``node`` (the user's labels)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if _is(current, "multiply"):
            for arg in current.args:
                c = _constant(arg)
                if c is not None and c.size == n and np.all(np.abs(c) == 1.0):
                    return c
        stack.extend(a for a in current.args if not a.is_constant())
    return None


def _loss_vars(base: Affine) -> list[int]:
    keys = []
    for k, m in base.coef.items():
        if isinstance(m, _Rows):
            if not np.any(m.scale):
                continue
            m = m.matrix
        if _has_nonzero(m):
            keys.append(k)
    return keys


def _nearly_constant(v: NDArray[np.float64], rtol: float, atol: float) -> bool:
    """``np.allclose(v, v[0], rtol, atol)`` in two reductions and no temporary (NaN: False)."""
    first = float(v[0])
    spread = max(float(v.max()) - first, first - float(v.min()))
    return bool(spread <= atol + rtol * abs(first))


def _both_classes_weighted(labels: NDArray[np.float64], s: NDArray[np.float64]) -> bool:
    """Whether each sign of ``labels`` has a row of positive weight ``s``."""
    if s.min() > 0:
        return bool(labels.max() > 0 > labels.min())
    weighted = s > 0
    return bool(np.any(weighted & (labels > 0)) and np.any(weighted & (labels < 0)))


def _has_nonzero(m: Any) -> bool:
    """Whether ``m`` has a nonzero entry (a data matrix's first row settles it, not a pass)."""
    if sp.issparse(m):
        return bool(m.nnz) and bool(np.any(m.data))
    flat = np.asarray(m).reshape(-1)
    return bool(np.any(flat[:1024])) or bool(np.any(flat))


def _column(m: Any) -> NDArray[np.float64]:
    m = _dense_or_sparse(m)
    return (m.toarray() if sp.issparse(m) else np.asarray(m)).reshape(-1)


def _stack(blocks: list[Any]) -> Any:
    if len(blocks) == 1:
        return blocks[0]
    blocks = [_dense_or_sparse(b) for b in blocks]
    if any(sp.issparse(b) for b in blocks):
        return sp.csr_array(sp.hstack([sp.csr_array(b) for b in blocks], format="csr"))
    return blocks[0] if len(blocks) == 1 else np.hstack(blocks)


# ---------------------------------------------------------------------------- recognize
def recognize(problem: Any, names: dict[str, Any]) -> Recognition:
    """The empirical risk of ``problem`` (``names``: its variables by name), or why not."""
    import time

    tick = time.perf_counter()
    try:
        recognition = _recognize(problem, names)
    except NotRecognized as why:
        recognition = Recognition(reason=str(why))
    except OptframeError as why:  # the model refused what was found (its own checks)
        recognition = Recognition(reason=f"the model found was refused: {why}")
    except Exception as why:  # a problem it cannot read is solved as it is
        recognition = Recognition(
            reason=f"the problem could not be read ({type(why).__name__}: {why})"
        )
    recognition.seconds = time.perf_counter() - tick
    if recognition.recognized:
        recognition.summary["seconds"] = recognition.seconds
    return recognition


def _recognize(problem: Any, names: dict[str, Any]) -> Recognition:
    from optframe import losses, penalties
    from optframe.data import Dataset
    from optframe.models import EmpiricalRisk

    if problem.constraints:
        raise NotRecognized(f"{len(problem.constraints)} constraints")
    for v in problem.variables():
        if any(value for key, value in v.attributes.items() if key != "bounds") or \
                v.attributes.get("bounds") is not None:  # fmt: skip
            raise NotRecognized(f"the variable {v.name()} has attributes")
    terms = _Terms()
    _split(problem.objective.expr, 1.0, terms)
    if not terms.leaves:
        raise NotRecognized("no loss term")
    variables = {v.id: v for v in problem.variables()}
    read = _AffineReader(variables)
    smooth = [leaf for leaf in terms.leaves if leaf.kind == "logistic"]
    if smooth and len(terms.leaves) > 1:
        raise NotRecognized("a logistic loss beside other loss terms")
    n = max([read(a).size for leaf in terms.leaves for a in leaf.args]
            + [leaf.weight.size for leaf in terms.leaves])  # fmt: skip
    if n < 2:
        raise NotRecognized("a loss over fewer than 2 rows")
    for leaf in terms.leaves:
        if leaf.weight.size not in (1, n):
            raise NotRecognized("weights whose shape does not match the loss")
    first = _argument(terms.leaves[0], read, n) if not smooth else read(
        terms.leaves[0].args[0])  # fmt: skip
    keys = sorted(set().union(*(read(a).coef for leaf in terms.leaves for a in leaf.args)))
    base = first.broadcast(n)
    offset = terms.offset
    if smooth:
        weight = np.asarray(smooth[0].weight, dtype=np.float64).reshape(-1)
        lam = float(weight.max())
        if not lam > 0:
            raise NotRecognized("a loss whose weights are all zero")
        s = np.broadcast_to(weight / lam, (n,))
        loss, kind = losses.Logistic(), "classification"
        if np.any(base.const != 0.0):
            raise NotRecognized("a logistic loss whose argument has a constant term")
    else:
        relu, rehu, s, loss_offset = _pieces(terms.leaves, read, base, keys, n)
        offset += loss_offset
        relu, rehu, constant = _merge(relu, rehu)
        offset += constant * float(s.sum())
        if not relu and not rehu:
            raise NotRecognized("a loss that is constant")
        kind = None
    gamma = 0.0
    # the variables: penalized ones are w, an unpenalized one in the loss is the intercept
    loss_keys = _loss_vars(base)
    penalized = [k for k in variables if k in terms.penalty_vars]
    l1s = {terms.l1.get(k, 0.0) for k in penalized}
    l2s = {terms.l2.get(k, 0.0) for k in penalized}
    if len(l1s) > 1 or len(l2s) > 1:
        raise NotRecognized("penalties with different weights on different variables")
    lam1 = l1s.pop() if l1s else 0.0
    lam2 = l2s.pop() if l2s else 0.0
    free = [k for k in loss_keys if k not in terms.penalty_vars]
    intercept_key, intercept_col = None, None
    if penalized:
        if len(free) > 1 or (free and variables[free[0]].size != 1):
            raise NotRecognized(
                "variables in the loss outside the penalty that are not one scalar intercept"
            )
        if free:
            intercept_key = free[0]
            intercept_col = -_column(base.coef[intercept_key])
        feature_keys = penalized
    else:
        for k in free:
            if variables[k].size == 1:
                col = -_column(base.coef[k])
                mag = np.abs(col)
                if mag[0] > 0 and _nearly_constant(mag, rtol=1e-12, atol=0.0):
                    intercept_key, intercept_col = k, col
                    break
        feature_keys = [k for k in free if k != intercept_key]
    # the kind of loss and the labels
    e = base.const
    e_constant = _nearly_constant(e, rtol=1e-12, atol=1e-14 * (1 + abs(e[0])))
    labels, factor = None, 1.0
    if intercept_col is not None:
        factor = float(np.abs(intercept_col[0]))
        if not _nearly_constant(np.abs(intercept_col), rtol=1e-12, atol=0.0):
            raise NotRecognized("an intercept whose coefficient varies by row")
        mixed = bool(intercept_col.max() > 0 > intercept_col.min())
        if kind is None:
            kind = "classification" if mixed else "regression"
        if kind == "classification":
            if not mixed:
                raise NotRecognized("a margin loss whose intercept never changes sign (one class)")
            labels = np.sign(intercept_col)
        elif intercept_col[0] < 0:
            factor = -factor
    if kind is None:
        kind = "classification" if e_constant and e[0] != 0.0 else "regression"
    if kind == "classification":
        if not smooth:
            if not e_constant:
                raise NotRecognized("a margin loss whose constant varies by row")
            gamma = float(e[0])
        if labels is None:
            labels = _labels_in(problem.objective.expr, n)
            if labels is None or not _both_classes_weighted(labels, s):
                labels = np.ones(n)
                labels[int(np.argmax(s > 0))] = -1.0
    # X and y of the model: a = -(B x) (margin, after the shift gamma) or a = u (residual)
    blocks = []
    features = []
    start = 0
    for k in feature_keys:
        v = variables[k]
        m = base.coef.get(k)
        if m is None:
            m = sp.csr_array((n, v.size))
        blocks.append(m)
        name = next(name for name, var in names.items() if var.id == k)
        features.append((name, v, start, start + v.size))
        start += v.size
    if not blocks:
        raise NotRecognized("no coefficient vector (every variable is an intercept)")
    B = _stack(blocks)
    if kind == "classification":
        X = _dense_or_sparse(_rows(-labels, B))
        y = labels
    else:
        X = _dense_or_sparse(_rows(np.array([-1.0]), B))
        y = np.asarray(e, dtype=np.float64).copy()
    if smooth:
        scale_loss = lam
    else:
        if kind == "classification":  # u = gamma - a
            relu = [(-u, u * gamma + v) for u, v in relu]
            rehu = [(-a, a * gamma + t, tau) for a, t, tau in rehu]
        loss, scale_loss = _named(relu, rehu, kind)
    # the penalty's scale
    if lam2 > 0 and lam1 > 0:
        kappa = lam1 + 2.0 * lam2
        penalty: Any = penalties.ElasticNet(lam1 / kappa)
        pen_name = f"elastic net ({lam1:g} * norm1 + {lam2:g} * sum_squares)"
    elif lam2 > 0:
        kappa, penalty, pen_name = 2.0 * lam2, penalties.L2(), f"L2 ({lam2:g} * sum_squares)"
    elif lam1 > 0:
        kappa, penalty, pen_name = lam1, penalties.L1(), f"L1 ({lam1:g} * norm1)"
    else:
        kappa, penalty, pen_name = 1.0, None, "none"
    C = scale_loss / kappa
    uniform = bool(s.min() == s.max())
    data = Dataset(X=X, y=y, sample_weight=None if uniform else np.array(s), name="cvxpy problem")
    if uniform and s[0] != 1.0:
        C *= float(s[0])
    model = EmpiricalRisk(data, loss, penalty=penalty, C=C,
                          fit_intercept=intercept_key is not None)  # fmt: skip
    intercept = None
    if intercept_key is not None:
        v = variables[intercept_key]
        name = next(name for name, var in names.items() if var.id == intercept_key)
        intercept = (name, v, factor)
    summary = {
        "loss": repr(loss),
        "penalty": pen_name,
        "C": C,
        "n": n,
        "m": int(X.shape[1]),
        "intercept": intercept[0] if intercept else None,
        "sample_weight": not uniform,
        "scale": kappa,
        "offset": offset,
    }
    recognition = Recognition(model, "", kappa, offset, features, intercept, summary)
    _check(problem, recognition)
    return recognition


def _check(problem: Any, recognition: Recognition) -> None:
    """NotRecognized unless the model's objective equals the problem's at a random point.

    From :data:`SAMPLED_CHECK_FROM` rows the two are first compared on
    :data:`SAMPLED_CHECK_ROWS` random rows (the problem's tree with every row-indexed constant
    cut to them, against the model on the same rows); only where that cannot be done or does
    not agree are all the rows compared. Every solve compares them once more on all the rows,
    at the solution (:func:`optframe.cvxpy_problem._lift`).
    """
    rng = np.random.default_rng(0)
    values = {name: rng.normal(size=v.shape) for name, v, _, _ in recognition.features}
    if recognition.intercept is not None:
        name, v, _ = recognition.intercept
        values[name] = rng.normal(size=v.shape)
    n = recognition.model.data.n_samples
    if n >= SAMPLED_CHECK_FROM:
        rows = np.sort(rng.choice(n, SAMPLED_CHECK_ROWS, replace=False))
        if _sampled_mismatch(problem, recognition, values, rows) <= CHECK_RTOL:
            return
    mismatch = objective_mismatch(problem, recognition, values)
    if mismatch > CHECK_RTOL:
        raise NotRecognized(
            f"the model found differs from the problem at a test point (relative {mismatch:.1e})"
        )


def _sampled_mismatch(
    problem: Any, recognition: Recognition, values: dict[str, Any], rows: NDArray[np.int64]
) -> float:
    """:func:`objective_mismatch` on ``rows`` only (``inf`` when the tree cannot be cut)."""
    n = recognition.model.data.n_samples
    try:
        expression = _take_rows(problem.objective.expr, rows, n)
        part = recognition.model.with_data(recognition.model.data.subset(rows))
        sampled = Recognition(part, "", recognition.scale, recognition.offset,
                              recognition.features, recognition.intercept)  # fmt: skip
        return objective_mismatch(problem, sampled, values, expression)
    except Exception:  # a tree that cannot be cut (an index, a reshape): compare every row
        return math.inf


def _take_rows(expression: Any, rows: NDArray[np.int64], n: int) -> Any:
    """``expression`` with every constant of ``n`` rows cut to ``rows`` (the other leaves kept)."""
    import cvxpy as cp
    from cvxpy.atoms.affine.promote import Promote

    if isinstance(expression, cp.Constant):
        value = expression.value
        if getattr(value, "ndim", 0) >= 1 and value.shape[0] == n:
            return cp.Constant(value[rows])
        return expression
    if not expression.args:
        return expression
    args = [_take_rows(arg, rows, n) for arg in expression.args]
    if isinstance(expression, Promote) and expression.shape and expression.shape[0] == n:
        return Promote(args[0], (rows.size, *expression.shape[1:]))
    return expression.copy(args)


def objective_mismatch(
    problem: Any, recognition: Recognition, values: dict[str, Any], expression: Any = None
) -> float:
    """The relative difference between the problem's objective and the model's at ``values``.

    ``expression``: the objective to evaluate instead of the problem's (a cut of it).
    """
    variables = {name: v for name, v, *_ in recognition.features}
    if recognition.intercept is not None:
        variables[recognition.intercept[0]] = recognition.intercept[1]
    saved = {name: v.value for name, v in variables.items()}
    try:
        for name, v in variables.items():
            v.value = np.asarray(values[name], dtype=np.float64).reshape(v.shape)
        expression = problem.objective.expr if expression is None else expression
        theirs = float(np.asarray(expression.value).sum())
    finally:
        for name, v in variables.items():
            v.value = saved[name]
    ours = recognition.scale * recognition.model.objective(recognition.model_solution(values))
    ours += recognition.offset
    return abs(theirs - ours) / max(1.0, abs(theirs))
