r"""A user's ``cvxpy.Problem`` as an optframe model: :func:`from_cvxpy` and :class:`CvxpyProblem`.

``optframe.solve(problem)`` takes a ``cvxpy.Problem`` as it is. The problem becomes a model with
two layers:

``matrix`` (LPs and QPs; a problem with integer variables has the cvxpy layer only)
    cvxpy's own canonicalization for QP solvers (``problem.get_problem_data(cvxpy.OSQP)``):

    .. math::

        \min_x \tfrac12 x^\top P x + q^\top x + d
        \quad\text{s.t.}\quad A x = b,\quad F x \le g,

    where :math:`x` stacks the problem's variables (column-major, as cvxpy flattens them) and
    the auxiliary variables of cvxpy's epigraph rewrites. Every matrix back-end takes it, and the
    solver's duals are made into a proven bound by :mod:`optframe.safe_bound`: the result is
    ``OPTIMAL`` exactly when that bound closes the gap, whichever solver ran.
``cvxpy``
    The problem itself, for the cvxpy back-ends (and the cone programs that have no matrix
    form: their results have no bound of optframe's own yet, so they are ``CONVERGED``).

The objective the certificate uses is the problem's own expression, evaluated at the solution's
values; the solution is keyed by the variables' names. After :func:`optframe.solve`, the values
are written back to the problem's variables and ``problem.value``, as ``problem.solve()`` does.

Before either layer, :func:`solve_cvxpy` looks for a regularized empirical risk in the problem
(:mod:`optframe.cvxpy_recognize`: a sum of convex losses of affine maps plus a penalty, without
constraints). When it finds one, the problem is solved as that
:class:`~models.empirical_risk.EmpiricalRisk` (``driver="auto"`` then reaches its drivers:
AID, DCD, SMO, ``fn``) and certified by its Fenchel dual; ``stats["recognized"]`` says what was
found, or which part was not recognized.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from optframe.errors import ModelError
from optframe.model import Formulation, MatrixProblem, Model, ProblemClass, RawSolution, Solution

__all__ = ["CvxpyProblem", "from_cvxpy", "is_cvxpy_problem", "solve_cvxpy", "write_back"]


def is_cvxpy_problem(value: Any) -> bool:
    """Whether ``value`` is a ``cvxpy.Problem`` (without importing cvxpy for other values)."""
    module = type(value).__module__ or ""
    if not module.startswith("cvxpy"):
        return False
    import cvxpy as cp

    return isinstance(value, cp.Problem)


def _names(problem: Any) -> dict[str, Any]:
    """The problem's variables by name; duplicate names get ``#id`` appended."""
    variables = problem.variables()
    counts: dict[str, int] = {}
    for v in variables:
        counts[v.name()] = counts.get(v.name(), 0) + 1
    return {(v.name() if counts[v.name()] == 1 else f"{v.name()}#{v.id}"): v for v in variables}


@dataclass(frozen=True, eq=False)
class CvxpyProblem(Model):
    r"""A user's ``cvxpy.Problem``, solved by optframe's back-ends and certified by its bound.

    Parameters
    ----------
    problem : cvxpy.Problem
        A DCP problem with a ``Minimize`` objective (write ``Minimize(-f)`` for ``Maximize(f)``).
        Parameters keep the values they have when the problem is built.

    Notes
    -----
    The problem class follows cvxpy's analysis: LP or QP (``problem.is_qp()``), MILP or MIQP
    with integer or boolean variables; otherwise SOCP (second-order cones: Clarabel or SCIP
    through cvxpy) or EXP (exponential cones: Clarabel). Semidefinite and power cones are
    refused by name. See the module docstring for the two layers.
    """

    forms: ClassVar[tuple[str, ...]] = ("primal",)
    always_feasible_and_bounded: ClassVar[bool] = False

    problem: Any
    _variables: dict[str, Any] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if not is_cvxpy_problem(self.problem):
            raise ModelError(
                f"CvxpyProblem takes a cvxpy.Problem; got {type(self.problem).__name__}"
            )
        import cvxpy as cp

        if not isinstance(self.problem.objective, cp.Minimize):
            raise ModelError(
                "optframe minimizes: write the problem as cvxpy.Minimize(-f) instead of "
                "cvxpy.Maximize(f) (the objective then is -f's value)"
            )
        if not self.problem.is_dcp():
            raise ModelError(
                "the cvxpy problem is not DCP (disciplined convex), so no solver can take it; "
                "problem.is_dcp() is False"
            )
        object.__setattr__(self, "_variables", _names(self.problem))

    def check_parameters(self) -> None:
        """Raise :class:`~optframe.errors.ModelError` naming every parameter without a value.

        Called before the problem is solved or built (a parameter may get its value after the
        model is made, as cvxpy allows).

        Examples
        --------
        >>> import cvxpy as cp
        >>> from optframe.cvxpy_problem import from_cvxpy
        >>> x, scale = cp.Variable(name="x"), cp.Parameter(name="scale", nonneg=True)
        >>> model = from_cvxpy(cp.Problem(cp.Minimize(scale * cp.square(x - 1))))
        >>> model.check_parameters()
        Traceback (most recent call last):
        ...
        optframe.errors.ModelError: the cvxpy problem has parameters without a value (scale); ...
        >>> scale.value = 2.0
        >>> model.check_parameters()  # nothing to say
        """
        missing = [p.name() for p in self.problem.parameters() if p.value is None]
        if missing:
            names = ", ".join(missing)
            raise ModelError(
                f"the cvxpy problem has parameters without a value ({names}); set each before "
                f"solving, for example {missing[0]}.value = 1.0"
            )

    @property
    def name(self) -> str:
        """``CvxpyProblem``."""
        return "CvxpyProblem"

    @cached_property
    def _is_qp(self) -> bool:
        return bool(self.problem.is_qp())

    @property  # type: ignore[override]
    def problem_class(self) -> ProblemClass:  # type: ignore[override]
        """LP, QP, MILP, MIQP; SOCP or EXP for other cone programs (by the cones they need)."""
        integer = self.problem.is_mixed_integer()
        if not self._is_qp:
            if integer:
                raise ModelError(
                    "a mixed-integer cone program (beyond QP) has no back-end in optframe"
                )
            return self._cone_class
        quadratic = not self.problem.objective.expr.is_affine()
        if integer:
            return ProblemClass.MIQP if quadratic else ProblemClass.MILP
        return ProblemClass.QP if quadratic else ProblemClass.LP

    @cached_property
    def _cone_class(self) -> ProblemClass:
        """SOCP when second-order cones and linear rows suffice, EXP with exponential cones."""
        import cvxpy as cp

        dims = self.problem.get_problem_data(cp.CLARABEL)[0]["dims"]
        other = [name for name in ("psd", "p3d", "pnd") if any(getattr(dims, name, ()) or ())]
        if other:
            raise ModelError(
                f"the cvxpy problem needs {' and '.join(other)} cones (semidefinite or power), "
                "which no back-end in optframe takes; solve it with problem.solve()"
            )
        return ProblemClass.EXP if getattr(dims, "exp", 0) else ProblemClass.SOCP

    @property  # type: ignore[override]
    def layers(self) -> tuple[str, ...]:  # type: ignore[override]
        """``("matrix", "cvxpy")`` for LPs and QPs, ``("cvxpy",)`` for other cone programs."""
        return ("matrix", "cvxpy") if self._is_qp and self._matrix_data is not None else ("cvxpy",)

    @property
    def n_samples(self) -> int:
        """0: the problem has no data set of optframe's."""
        return 0

    @cached_property
    def recognition(self) -> Any:
        """The empirical risk found in the problem (:func:`optframe.cvxpy_recognize.recognize`)."""
        from optframe.cvxpy_recognize import recognize

        return recognize(self.problem, self._variables)

    # ------------------------------------------------------------------------- the layers
    def _build_cvxpy(self, form: str) -> Formulation:
        self.check_parameters()
        return Formulation("cvxpy", self.problem, self.problem_class, dict(self._variables))

    @cached_property
    def _matrix_data(self) -> tuple[MatrixProblem, dict[str, slice]] | None:
        """The QP canonicalization of cvxpy as a MatrixProblem, and each variable's columns."""
        import cvxpy as cp

        try:  # cvxpy refuses a problem with integer variables here: it gets the cvxpy layer
            data, _, _ = self.problem.get_problem_data(cp.OSQP)
        except (cp.error.SolverError, cp.error.DCPError, ValueError):
            return None
        stuffed = data["param_prob"]
        offset = float(np.asarray(stuffed.apply_parameters(quad_obj=True)[2]).sum())
        columns = {}
        for name, variable in self._variables.items():
            start = stuffed.var_id_to_col.get(variable.id)
            if start is None:  # replaced by a reduction (an attribute such as nonneg=True)
                return None
            columns[name] = slice(start, start + variable.size)
        n = int(data["n_var"])
        lower = np.full(n, -np.inf)
        upper = np.full(n, np.inf)
        for bounds, side in ((data.get("lower_bounds"), lower), (data.get("upper_bounds"), upper)):
            if bounds is not None:
                side[:] = np.asarray(bounds, dtype=np.float64)
        n_eq, n_ineq = int(data["n_eq"]), int(data["n_ineq"])
        P = sp.csc_array(data["P"]) if data["P"] is not None else None
        problem = MatrixProblem(
            c=np.asarray(data["q"], dtype=np.float64),
            A=sp.vstack([sp.csc_array(data["A"]), sp.csc_array(data["F"])], format="csc"),
            row_lower=np.concatenate([np.asarray(data["b"], float), np.full(n_ineq, -np.inf)]),
            row_upper=np.concatenate([np.asarray(data["b"], float), np.asarray(data["G"], float)]),
            lower=lower,
            upper=upper,
            P=P if P is not None and P.nnz else None,
            offset=offset,
        )
        if problem.n_rows != n_eq + n_ineq:
            return None
        return problem, columns

    def _build_matrix(self, form: str) -> Formulation:
        self.check_parameters()
        built = self._matrix_data
        if built is None:
            raise ModelError("this cvxpy problem has no matrix form (it is not an LP or a QP)")
        problem, columns = built
        shapes = {name: v.shape for name, v in self._variables.items()}

        def recover(raw: RawSolution) -> dict[str, NDArray[np.float64]]:
            return {
                name: np.asarray(raw.primal[name], dtype=np.float64).reshape(
                    shapes[name], order="F"
                )
                for name in columns
            }

        return Formulation("matrix", problem, problem.problem_class, dict(columns), recover=recover)

    # ------------------------------------------------------------------- the oracle
    def _assign(self, solution: Solution) -> None:
        for name, variable in self._variables.items():
            if name not in solution:
                raise ModelError(f"the solution has no value for the variable {name!r}")
            variable.value = np.asarray(solution[name], dtype=np.float64).reshape(variable.shape)

    def objective(self, solution: Solution) -> float:
        """The problem's objective expression at the solution's values."""
        self._assign(solution)
        value = self.problem.objective.expr.value
        return math.nan if value is None else float(np.asarray(value).sum())

    def violation(self, solution: Solution) -> float:
        """The largest violation of the problem's constraints at the solution."""
        self._assign(solution)
        worst = 0.0
        for constraint in self.problem.constraints:
            amount = np.asarray(constraint.violation(), dtype=np.float64)
            if amount.size:
                worst = max(worst, float(np.max(amount)))
        return worst

    def decision_function(self, solution: Solution, X: Any) -> NDArray[np.float64]:
        """Not defined: a cvxpy problem is not a prediction model."""
        raise ModelError("a cvxpy problem has no decision function (it predicts nothing)")


def from_cvxpy(problem: Any) -> CvxpyProblem:
    """The optframe model of a ``cvxpy.Problem`` (for :func:`optframe.solve`, ``compare``).

    Raises
    ------
    ModelError
        If ``problem`` is not a DCP ``cvxpy.Problem`` with a ``Minimize`` objective.
    """
    return CvxpyProblem(problem)


def write_back(model: CvxpyProblem, solution: Solution, objective: float) -> None:
    """Write the solution's values to the problem's variables and ``problem.value``."""
    if solution:
        model._assign(solution)
    model.problem._value = objective if solution and math.isfinite(objective) else None


#: The largest relative difference, at the solution, between the problem's objective and the
#: recognized model's (scaled and shifted) for the model's result to be used.
AGREEMENT = 1e-7


def _lift(model: CvxpyProblem, recognition: Any, inner: Any) -> Any:
    """The recognized model's result as the problem's: its variables, objective and bound."""
    kappa, offset = recognition.scale, recognition.offset
    solution = recognition.user_solution(inner.solution) if inner.solution else {}
    objective = model.objective(solution) if solution else math.nan
    mapped = kappa * inner.objective + offset
    difference = objective - mapped if solution else 0.0
    if solution and not abs(difference) <= AGREEMENT * max(1.0, abs(objective)):
        return None
    summary = {**recognition.describe(), "model_objective": inner.objective}
    summary["objective_difference"] = difference
    bound = None if inner.bound is None else kappa * inner.bound + offset
    if bound is not None and solution:
        bound = min(bound, objective)  # weak duality: the mapping's rounding, within AGREEMENT
    history = tuple(
        replace(record, objective=kappa * record.objective + offset,
                bound=None if record.bound is None else kappa * record.bound + offset)
        for record in inner.history
    )  # fmt: skip
    timings = replace(inner.timings, total=inner.timings.total + recognition.seconds)
    return replace(
        inner, objective=objective, bound=bound, solution=solution, history=history,
        timings=timings, stats={**inner.stats, "recognized": summary},
        model=f"CvxpyProblem as {inner.model or 'EmpiricalRisk'}", source=model,
        scale=kappa * inner.scale,
    )  # fmt: skip


def solve_cvxpy(problem: Any, solve: Any, driver: Any, backend: Any, **options: Any) -> Any:
    """:func:`optframe.solve` on a ``cvxpy.Problem``: as a recognized empirical risk, else as is.

    The values are written back to the problem's variables and ``problem.value``. A recognized
    model whose result disagrees with the problem's objective at the solution (beyond
    :data:`AGREEMENT`), or that the driver or back-end asked for refuses, is not used: the
    problem is then solved as it is, and ``stats["recognized"]`` says why.
    """
    from optframe.errors import IncompatibleBackend, IncompatibleDriver

    model = from_cvxpy(problem)
    model.check_parameters()
    recognition = model.recognition
    said = recognition.describe()
    if recognition.recognized:
        try:
            inner = solve(recognition.model, driver, backend, **options)
        except (IncompatibleBackend, IncompatibleDriver, ModelError) as why:
            said = {**said, "not used": f"the recognized model was refused: {why}"}
        else:
            result = _lift(model, recognition, inner)
            if result is not None:
                write_back(model, result.solution, result.objective)
                return result
            said = {**said, "not used": "its objective differs from the problem's at the solution"}
    result = solve(model, driver, backend, **options)
    result = replace(result, stats={**result.stats, "recognized": said})
    write_back(model, result.solution, result.objective)
    return result
