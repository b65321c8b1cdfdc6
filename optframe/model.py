"""The :class:`Model` base class and what a model hands to a back-end: a :class:`Formulation`.

A model declares its optimization problem once, in one or more *layers*:

* ``"pyomo"``: a Pyomo ``ConcreteModel``;
* ``"cvxpy"``: a ``cvxpy.Problem``;
* ``"matrix"``: a :class:`MatrixProblem`, the canonical sparse LP/QP/MIQP data that native solver
  interfaces take without modeling overhead.

Whatever the layer, the formulation names its variables (and the constraints whose duals matter),
and a ``recover`` function turns the solver's values into the model's solution, named as in the
model's docstring. The model then evaluates its own objective at that solution: that number, not the
solver's, is what :class:`~optframe.result.Result` reports.
"""

from __future__ import annotations

import abc
import enum
import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

from optframe.capabilities import Structure
from optframe.errors import IncompatibleDriver, ModelError

if TYPE_CHECKING:
    from optframe.certificate import Certificate

LAYERS = ("matrix", "cvxpy", "pyomo")
Solution = Mapping[str, NDArray[np.float64]]
S = TypeVar("S", bound=Structure)


class ProblemClass(enum.Enum):
    """Mathematical class of an optimization problem, used to match models with back-ends."""

    LP = "LP"
    QP = "QP"
    MILP = "MILP"
    MIQP = "MIQP"
    #: A convex cone program with exponential cones (and linear rows, second-order cones):
    #: smooth losses such as the logistic, stated with ``cvxpy.logistic``.
    EXP = "EXP"
    #: A convex cone program with second-order cones and linear rows, no exponential cone
    #: (a group lasso, a norm constraint): Clarabel and SCIP take it through cvxpy.
    SOCP = "SOCP"

    @property
    def is_integer(self) -> bool:
        """Whether the problem has integer variables."""
        return self in (ProblemClass.MILP, ProblemClass.MIQP)

    @property
    def is_conic(self) -> bool:
        """Whether the problem needs a cone beyond the quadratic (EXP, SOCP)."""
        return self in (ProblemClass.EXP, ProblemClass.SOCP)


@dataclass(frozen=True, eq=False)
class MatrixProblem:
    r"""Canonical data of an LP, QP or mixed-integer problem.

    .. math::

        \min_x \; \tfrac12 x^\top P x + c^\top x + \text{offset}
        \quad\text{s.t.}\quad r_\ell \le A x \le r_u, \quad \ell \le x \le u,
        \quad x_j \in \mathbb{Z} \text{ for } j \in \text{integrality}.

    Parameters
    ----------
    c : ndarray of shape (N,)
        Linear objective.
    A : sparse matrix of shape (M, N)
        Constraint matrix (stored CSC).
    row_lower, row_upper : ndarray of shape (M,)
        Row bounds; ``-inf``/``inf`` for one-sided rows, equal for equality rows.
    lower, upper : ndarray of shape (N,)
        Variable bounds.
    P : sparse matrix of shape (N, N), optional
        Symmetric positive semidefinite Hessian (both triangles stored); ``None`` for an LP.
    integrality : ndarray of bool of shape (N,), optional
        Which variables are integer.
    offset : float
        Constant added to the objective.
    """

    c: NDArray[np.float64]
    A: sp.csc_array
    row_lower: NDArray[np.float64]
    row_upper: NDArray[np.float64]
    lower: NDArray[np.float64]
    upper: NDArray[np.float64]
    P: sp.csc_array | None = None
    integrality: NDArray[np.bool_] | None = None
    offset: float = 0.0

    def __post_init__(self) -> None:
        n = self.c.shape[0]
        object.__setattr__(self, "A", sp.csc_array(self.A, dtype=np.float64))
        if self.P is not None:
            object.__setattr__(self, "P", sp.csc_array(self.P, dtype=np.float64))
            if self.P.shape != (n, n):
                raise ModelError(f"P has shape {self.P.shape}, expected ({n}, {n})")
        m = self.A.shape[0]
        if self.A.shape[1] != n:
            raise ModelError(f"A has {self.A.shape[1]} columns, expected {n}")
        for name, size in (("row_lower", m), ("row_upper", m), ("lower", n), ("upper", n)):
            if getattr(self, name).shape != (size,):
                raise ModelError(
                    f"{name} has shape {getattr(self, name).shape}, expected ({size},)"
                )

    @property
    def n_variables(self) -> int:
        """Number of variables N."""
        return int(self.c.shape[0])

    @property
    def n_rows(self) -> int:
        """Number of constraint rows M."""
        return int(self.A.shape[0])

    @property
    def problem_class(self) -> ProblemClass:
        """LP, QP, MILP or MIQP, from the presence of ``P`` and integer variables."""
        quadratic = self.P is not None and self.P.nnz > 0
        integer = self.integrality is not None and bool(np.any(self.integrality))
        if integer:
            return ProblemClass.MIQP if quadratic else ProblemClass.MILP
        return ProblemClass.QP if quadratic else ProblemClass.LP

    def objective_value(self, x: NDArray[np.float64]) -> float:
        """Evaluate the objective at ``x``."""
        value = float(self.c @ x) + self.offset
        if self.P is not None:
            value += 0.5 * float(x @ (self.P @ x))
        return value


@dataclass(frozen=True, eq=False)
class RawSolution:
    """Values a back-end read through a formulation's named handles.

    ``dual`` holds, per named constraint, the sensitivity of the optimal value to the constraint's
    right-hand side (for a minimization: ``d f* / d rhs``), the convention every back-end
    converts to.
    """

    primal: Mapping[str, NDArray[np.float64]]
    dual: Mapping[str, NDArray[np.float64]] = field(default_factory=dict)


def _identity(raw: RawSolution) -> dict[str, NDArray[np.float64]]:
    return dict(raw.primal)


@dataclass(frozen=True, eq=False)
class Formulation:
    """A model built in one layer, ready for a back-end.

    Parameters
    ----------
    layer : {"matrix", "cvxpy", "pyomo"}
        Which modeling layer ``problem`` belongs to.
    problem : MatrixProblem, cvxpy.Problem or pyomo ConcreteModel
        The built problem.
    problem_class : ProblemClass
        Its class.
    variables : Mapping[str, Any]
        Named handles: Pyomo ``Var`` or cvxpy ``Variable`` objects, or slices of the matrix
        problem's variable vector.
    constraints : Mapping[str, Any]
        Named constraints whose duals the model needs (Pyomo ``Constraint``, cvxpy constraint or a
        tuple of the two one-sided cvxpy constraints of a ranged row, or a slice of the matrix
        problem's rows). A back-end may return no duals (see ``Backend.duals``): ``recover`` must
        then work from the primal values alone or raise ``SolverError``.
    recover : callable
        Maps a :class:`RawSolution` to the model's named solution.
    objective_scale, objective_offset : float
        The original model's objective equals ``scale * solver_objective + offset`` at an optimum
        (``scale = -1`` for a dual formulation maximized as the minimization of its negative).
    form : str
        Which formulation of the model this is ("primal", "dual", ...).
    """

    layer: str
    problem: Any
    problem_class: ProblemClass
    variables: Mapping[str, Any]
    constraints: Mapping[str, Any] = field(default_factory=dict)
    recover: Callable[[RawSolution], dict[str, NDArray[np.float64]]] = _identity
    objective_scale: float = 1.0
    objective_offset: float = 0.0
    form: str = "primal"

    def original_value(self, solver_value: float | None) -> float | None:
        """Map a value of the solver's objective to the original model's scale."""
        if solver_value is None:
            return None
        return self.objective_scale * solver_value + self.objective_offset


class Model(abc.ABC):
    """Base class of every model: a dataset plus hyper-parameters, declared once.

    Subclasses are frozen dataclasses. They set the class attributes below, implement
    ``_build_<layer>(form)`` for each layer they offer, and implement :meth:`objective`. A model
    that offers drivers mathematical structure lists the types in :attr:`structures` and builds
    them in ``_structure(kind)``; drivers get them with :meth:`structure`.
    """

    problem_class: ClassVar[ProblemClass]
    layers: ClassVar[tuple[str, ...]]
    forms: ClassVar[tuple[str, ...]] = ("primal",)
    is_classifier: ClassVar[bool] = False
    #: Whether every instance has a finite optimum (no solver may call it infeasible or
    #: unbounded: such a status means the data are badly scaled for the solver).
    always_feasible_and_bounded: ClassVar[bool] = True
    #: The mathematical structures (:mod:`optframe.capabilities`) the class offers to drivers;
    #: built by :meth:`_structure`, refused by an instance in :meth:`structure_refusal`.
    structures: ClassVar[tuple[type[Structure], ...]] = ()

    @property
    def default_form(self) -> str:
        """The formulation built when none is asked for (the first of :attr:`forms`)."""
        return self.forms[0]

    @classmethod
    def examples(cls) -> tuple[Model, ...]:
        """Small instances of the class, one per variant that changes what it offers.

        :mod:`optframe.conformance` runs every registered model's examples through every
        applicable (driver, back-end, layer, form) against the Direct reference; a registered
        class without examples fails that test. Tens of samples, so that every back-end solves
        them in well under a second.
        """
        return ()

    def structure(self, kind: type[S]) -> S:
        """The structure ``kind`` (a type of :mod:`optframe.capabilities`) of this model.

        Raises
        ------
        IncompatibleDriver
            Naming ``kind`` and the model's reason, when this instance does not offer it.
        """
        reason = self.structure_refusal(kind)
        if reason is not None:
            raise IncompatibleDriver(f"{self.name} does not offer {kind.__name__}: {reason}")
        if kind in self.structures:
            return self._structure(kind)  # type: ignore[return-value]
        return kind.from_members(self)  # type: ignore[return-value]

    def offers_structure(self, kind: type[Structure]) -> bool:
        """Whether this instance offers the structure ``kind``."""
        return self.structure_refusal(kind) is None

    def structure_refusal(self, kind: type[Structure]) -> str | None:
        """Why this instance does not offer ``kind``, or ``None`` when it does.

        A class offers the kinds it lists in :attr:`structures`; an instance whose parameters rule
        one out (an SVM without intercept has no equality row for SMO) overrides this method,
        returns its reason for that kind and defers to this one for the others.
        """
        if kind in self.structures:
            return None
        return kind.refusal_by_members(self)

    def _structure(self, kind: type[Structure]) -> Structure:
        """Build the structure ``kind``, one of :attr:`structures` (models override this)."""
        raise NotImplementedError(f"{self.name} lists {kind.__name__} but does not build it")

    def check_form(self, form: str | None) -> str:
        """Return ``form`` (or the default form if ``None``); raise ModelError if unknown."""
        form = self.default_form if form is None else form
        if form not in self.forms:
            raise ModelError(f"{self.name} has no {form!r} form; it offers {list(self.forms)}")
        return form

    def offers(self, layer: str, form: str | None = None) -> bool:
        """Whether the model can be built in ``layer`` and ``form`` (default: the default form).

        The class attributes :attr:`layers` and :attr:`forms` list what the class can build; a
        model whose parameters rule some of them out (a kernel without a primal, say) overrides
        this method, so drivers and comparisons skip those combinations instead of failing.
        """
        form = self.default_form if form is None else form
        return layer in self.layers and form in self.forms

    @property
    def name(self) -> str:
        """The model's class name."""
        return type(self).__name__

    @property
    def is_linear(self) -> bool:
        """Whether the model is linear in the features; a model with a kernel says so here."""
        return True

    @property
    def n_samples(self) -> int:
        """The number of training samples in the model's ``data`` (0 for a model without)."""
        data = self.__dict__.get("data")
        return int(data.n_samples) if data is not None else 0

    def build(self, layer: str, form: str | None = None) -> Formulation:
        """Build the model's problem in ``layer``.

        Parameters
        ----------
        layer : {"matrix", "cvxpy", "pyomo"}
            The modeling layer.
        form : str, optional
            One of :attr:`forms` (default: :attr:`default_form`).

        Raises
        ------
        ModelError
            If the model does not offer the layer or the form.
        """
        if layer not in self.layers:
            raise ModelError(
                f"{self.name} cannot be built in layer {layer!r}; it offers {list(self.layers)}"
            )
        form = self.check_form(form)
        return getattr(self, f"_build_{layer}")(form)

    def to_latex(self, form: str = "primal") -> str:
        r"""The model's problem in LaTeX (lines joined by ``\\``), generated from its declaration.

        Models that can state themselves override this (:class:`~optframe.models.EmpiricalRisk`
        and every model built on it: LAD, the SVMs, quantile regression and a user's loss).

        Raises
        ------
        ModelError
            If this model has no LaTeX statement, or ``form`` is unknown.
        """
        raise ModelError(
            f"{self.name} has no LaTeX statement; its problem is in its docstring and "
            "model.build(layer) gives it in a modeling layer"
        )

    def _repr_latex_(self) -> str | None:
        """The primal in LaTeX for notebooks (``None`` when the model has no statement)."""
        try:
            return "$$\\begin{gathered}" + self.to_latex("primal") + "\\end{gathered}$$"
        except ModelError:
            return None

    def describe(self) -> str:
        """A few lines on the model: problem class, sizes, forms, layers, and the drivers it takes.

        Examples
        --------
        >>> from optframe.data import Dataset
        >>> from optframe.models import LADRegression
        >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 3.0]))
        >>> print(model.describe().splitlines()[0])
        LADRegression: an LP on 3 samples x 1 features
        """
        from optframe import registry

        data = self.__dict__.get("data")
        size = f" on {data.n_samples} samples x {data.n_features} features" if data else ""
        article = "an" if self.problem_class.name[0] in "AEFHILMNORSX" else "a"
        lines = [f"{self.name}: {article} {self.problem_class.name}{size}"]
        lines.append(f"forms: {', '.join(self.forms)} (default {self.default_form})")
        lines.append(f"layers: {', '.join(self.layers)}")
        offered = [k.__name__ for k in self.structures if self.structure_refusal(k) is None]
        lines.append(f"structures: {', '.join(offered) if offered else 'none'}")
        drivers = []
        for name, driver_class in registry.drivers().items():
            try:
                if driver_class().accepts(self):
                    drivers.append(name)
            except Exception:  # a driver that needs arguments is not listed
                continue
        lines.append(f"drivers: {', '.join(drivers)}")
        return "\n".join(lines)

    def write(self, path: str | os.PathLike[str], form: str | None = None) -> Path:
        r"""Write the ``"matrix"`` formulation to an MPS or LP file, with the model's optimum.

        The file holds the problem of :meth:`build` ``("matrix", form)`` with the model's own
        objective: a dual maximized as the minimization of its negative is written as the
        maximization of the dual itself (``OBJSENSE MAX``, ``Maximize``), and the formulation's
        constant is in the objective, so another solver (HiGHS, SCIP, Gurobi, CPLEX) reads the
        model's optimal value. The suffix chooses the format: ``.mps`` is free MPS
        (:func:`optframe.export.write_mps`), ``.lp`` is CPLEX LP format
        (:func:`optframe.export.write_lp`; quadratic objectives as ``[ ... ] / 2``, which HiGHS
        reads).

        Parameters
        ----------
        path : str or path-like
            The file to write; its suffix must be ``.mps`` or ``.lp``.
        form : str, optional
            One of :attr:`forms` that the matrix layer offers (default: :attr:`default_form`).

        Returns
        -------
        Path
            The file written.

        Raises
        ------
        ModelError
            If the suffix is neither ``.mps`` nor ``.lp``, or the model offers no matrix layer
            for ``form``.

        Examples
        --------
        A round trip through HiGHS: the LAD dual, written as an LP file, is read back to the
        model's optimum.

        >>> import tempfile, pathlib
        >>> import highspy
        >>> import optframe as of
        >>> from optframe.data import Dataset
        >>> from optframe.models import LADRegression
        >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 3.0]))
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> model.write(folder / "lad.mps", form="dual").read_text().splitlines()[1:3]
        ['OBJSENSE', '    MAX']
        >>> out = model.write(folder / "lad.lp", form="dual")
        >>> out.read_text().splitlines()[1]
        'Maximize'
        >>> h = highspy.Highs()
        >>> h.setOptionValue("output_flag", False)
        <HighsStatus.kOk: 0>
        >>> h.readModel(str(out)), h.run()
        (<HighsStatus.kOk: 0>, <HighsStatus.kOk: 0>)
        >>> round(h.getInfo().objective_function_value, 9), round(of.solve(model).objective, 9)
        (0.5, 0.5)
        """
        from optframe.export import write_lp, write_mps

        path = Path(path)
        writers = {".mps": write_mps, ".lp": write_lp}
        writer = writers.get(path.suffix.lower())
        if writer is None:
            raise ModelError(
                f"{self.name}.write: MPS and LP files are written (a path ending in .mps or "
                f".lp); got {str(path)!r}"
            )
        if not self.offers("matrix", form):
            raise ModelError(
                f"{self.name}.write needs the matrix layer in the form {self.check_form(form)!r}, "
                f"which this model does not offer (layers {list(self.layers)}, forms "
                f"{list(self.forms)})"
            )
        formulation = self.build("matrix", form)
        return writer(
            formulation.problem,
            path,
            scale=formulation.objective_scale,
            offset=formulation.objective_offset,
            name=f"{self.name}_{formulation.form}",
        )

    @abc.abstractmethod
    def objective(self, solution: Solution) -> float:
        """Evaluate the original objective at ``solution`` (the oracle every certificate uses)."""

    def violation(self, solution: Solution) -> float:
        """Largest constraint violation of ``solution`` (0 for models without constraints)."""
        return 0.0

    def dual_bound(self, solution: Solution) -> float | None:
        """A lower bound on the optimal value, proven from ``solution`` (the certificate).

        A model builds a dual-feasible point from any solution, exact or not, primal or dual
        (see :class:`~optframe.capabilities.CertifiedBound`) and returns its dual objective:
        weak duality makes it valid whatever produced the solution. The base class offers none
        (a model without it is certified, on the matrix layer, from the solver's duals made
        safe, :mod:`optframe.safe_bound`), unless the class writes :meth:`dual_certificate`,
        whose value it then returns.
        """
        if type(self).dual_certificate is Model.dual_certificate:
            return None
        certificate = self.dual_certificate(solution)
        return None if certificate is None else certificate.value

    def dual_certificate(self, solution: Solution) -> Certificate | None:
        """The certificate behind :meth:`dual_bound`: the dual point, its repairs, its terms.

        A model that builds its dual point itself overrides this (and makes :meth:`dual_bound`
        return its ``value``, so the two share one computation); the default wraps
        :meth:`dual_bound`: the value alone, without a point. ``None`` when the model writes
        neither. :func:`optframe.certificate.certify` stores it on the result
        (``Result.certificate``).

        Returns
        -------
        Certificate or None
            Its ``value`` is the bound; ``-inf`` or ``None`` when none could be proven.

        Examples
        --------
        >>> from optframe.data import Dataset
        >>> from optframe.models import LADRegression
        >>> model = LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))
        >>> certificate = model.dual_certificate({"beta": [2.5], "intercept": [0.0]})
        >>> round(certificate.value, 6), sorted(certificate.dual_point)
        (1.5, ['theta'])
        """
        from optframe.certificate import Certificate

        if type(self).dual_bound is Model.dual_bound:
            return None
        value = self.dual_bound(solution)
        if value is None:
            return None
        return Certificate(
            float(value),
            terms={f"{self.name}.dual_bound(solution)": float(value)},
            origin=f"{self.name}.dual_bound (the model gives the value, not the point)",
        )

    @classmethod
    def writes_dual(cls) -> bool:
        """Whether the class proves its own bound (:meth:`dual_bound` or :meth:`dual_certificate`).

        A model that does not is certified from the solver's duals on the matrix layer
        (:mod:`optframe.safe_bound`).

        Examples
        --------
        >>> from optframe.models import LADRegression
        >>> LADRegression.writes_dual()
        True
        """
        return cls.dual_bound is not Model.dual_bound or (
            cls.dual_certificate is not Model.dual_certificate
        )

    def solver_bound_doubt(self) -> str | None:
        """Why a mixed-integer solver's branch-and-bound bound is not trusted here, or None.

        optframe keeps the solver's bound for mixed-integer models (there is no dual point to
        build); a model whose formulation is numerically beyond the solver's tolerances on its
        data says so here, and the bound is withheld (the status is then ``CONVERGED``).
        """
        return None

    def objective_floor(self) -> float:
        """A magnitude below which this model's optimal values count as zero (default 0).

        Models whose optimum can be 0 (a LAD fit through every point) return a small fraction
        of a trivial solution's objective, so that a gap at the level of rounding is not
        divided by a vanishing optimum; models with a positive or negative optimum keep 0.
        """
        return 0.0

    def gap_scale(self, objective: float, bound: float | None) -> float:
        """The magnitude the certificate's gap is relative to.

        ``max(|objective|, |bound|, objective_floor())``: relative to the optimal value however
        small it is (no absolute test on a tiny objective such as the L2-SVM's), with the
        model's floor where the optimum may be 0.
        """
        values = [abs(objective), self.objective_floor()]
        if bound is not None and math.isfinite(bound):
            values.append(abs(bound))
        return max(values)

    def decision_function(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        """Decision values (classifiers) or predictions (regression) at ``X``."""
        raise NotImplementedError(f"{self.name} does not define a decision function")

    def predict(self, solution: Solution, X: ArrayLike) -> NDArray[np.float64]:
        """Predicted targets; classifiers return labels in {-1, +1}."""
        values = self.decision_function(solution, X)
        if self.is_classifier:
            return np.where(values >= 0, 1.0, -1.0)
        return values
