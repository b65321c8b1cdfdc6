"""Conformance of every registered back-end on tiny instances with known answers.

Every back-end in ``optframe.registry.backends()`` is run on every instance of a class it declares
(built in its layer from the same data, see ``instances.py``) and checked for status, objective,
primal values, duals and their signs, and its bound; then for infeasible/unbounded statuses, time
and iteration limits, silence, option handling and errors. A back-end whose solver cannot be
imported fails here: nothing is skipped. A narrow back-end (``Backend.narrow``: ``fn`` takes only
LPs with equality rows and boxed variables) is run on the instances it takes, and must refuse the
others with an ERROR result that says why.
"""

import copy
import subprocess
import sys
import warnings

import instances as inst
import numpy as np
import pytest

from optframe.backend import Backend, SolveOptions
from optframe.model import ProblemClass
from optframe.registry import backends
from optframe.result import Status
from optframe.solvers import clarabel, highs, osqp, piqp, scip

LP, QP, MILP, MIQP = ProblemClass.LP, ProblemClass.QP, ProblemClass.MILP, ProblemClass.MIQP
EXP, SOCP = ProblemClass.EXP, ProblemClass.SOCP

ALL_CLASSES = {LP, QP, MILP, MIQP}

#: Every back-end optframe ships, in preference order per solver: (layer, supports, duals).
EXPECTED = {
    "highs": [
        ("matrix", {LP, QP, MILP}, {LP, QP}),
        ("cvxpy", {LP, QP, MILP}, {LP, QP}),
        ("pyomo", {LP, QP, MILP}, {LP, QP}),
    ],
    "osqp": [("matrix", {LP, QP}, {LP, QP}), ("cvxpy", {LP, QP}, {LP, QP})],
    "clarabel": [
        ("matrix", {LP, QP}, {LP, QP}),
        ("cvxpy", {LP, QP, EXP, SOCP}, {LP, QP, EXP, SOCP}),
    ],
    "piqp": [("matrix", {LP, QP}, {LP, QP}), ("cvxpy", {LP, QP}, {LP, QP})],
    "fn": [("matrix", {LP, QP}, {LP, QP})],
    "scip": [
        ("matrix", ALL_CLASSES, {LP}),
        ("pyomo", ALL_CLASSES, set()),
        ("cvxpy", ALL_CLASSES | {SOCP}, {LP}),
    ],
}

BACKENDS: list[type[Backend]] = [cls for group in backends().values() for cls in group]
TOL = 1e-7  # passed as SolveOptions.tol
ATOL = 1e-5  # for comparing values with the known answers


def backend_id(cls: type[Backend]) -> str:
    return f"{cls.solver}-{cls.layer}"


def takes(cls, instance):
    """Whether ``cls`` takes ``instance``: its class, and not refused by a narrow back-end."""
    if instance.problem_class not in cls.supports:
        return False
    return not cls.narrow or cls.refusal(instance.build(cls.layer)) is None


def cases(*makers, classes=None):
    """(backend, instance maker) pairs for the instances each back-end declares it takes."""
    out = []
    for cls in BACKENDS:
        for make in makers:
            instance = make()
            kind = instance.problem_class
            if takes(cls, instance) and (classes is None or kind in classes):
                out.append(pytest.param(cls, make, id=f"{backend_id(cls)}-{make.__name__}"))
    return out


def refused_cases():
    """(narrow back-end, instance maker) pairs of a class it supports that it refuses."""
    out = []
    for cls in BACKENDS:
        for make in inst.ALL:
            instance = make()
            if instance.problem_class in cls.supports and not takes(cls, instance):
                out.append(pytest.param(cls, make, id=f"{backend_id(cls)}-{make.__name__}"))
    return out


def solve(cls, instance, **options):
    # A generous time limit turns a stalled solver into a failure instead of a hung suite.
    options.setdefault("time_limit", 60.0)
    return cls().solve(instance.build(cls.layer), SolveOptions(**options))


def close(actual, expected, atol=ATOL):
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    np.testing.assert_allclose(actual, expected, rtol=min(atol, 1e-3), atol=atol)


# ------------------------------------------------------------------------------------ registry
def test_every_expected_backend_is_registered_in_order():
    found = {
        name: [(cls.layer, set(cls.supports), set(cls.duals)) for cls in group]
        for name, group in backends().items()
    }
    assert found == EXPECTED
    for cls in BACKENDS:  # duals only for continuous classes the back-end supports
        assert cls.duals <= cls.supports - {MILP, MIQP}


@pytest.mark.parametrize("cls", BACKENDS, ids=backend_id)
def test_backend_solver_is_installed(cls):
    cls.check_available()  # raises SolverUnavailable: a missing solver fails the suite
    assert cls.available()


def test_importing_the_solvers_imports_no_solver_library():
    code = (
        "import sys, optframe.solvers; "
        "heavy = {'highspy', 'cvxpy', 'pyomo', 'clarabel', 'osqp', 'piqp', 'pyscipopt'}; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# ------------------------------------------------------------------------------ known answers
@pytest.mark.parametrize(("cls", "make"), cases(*inst.CONTINUOUS))
def test_continuous_optimum_duals_and_bound(cls, make):
    instance = make()
    result = solve(cls, instance, tol=TOL)
    assert result.status is Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(instance.objective, rel=ATOL, abs=ATOL)
    assert set(result.values.primal) == set(instance.primal)
    # SCIP minimizes an auxiliary variable t >= f(x): f is met to its feasibility tolerance, so on
    # a QP x is only accurate to about the square root of it.
    atol = 1e-3 if cls.solver == "scip" and instance.problem_class is QP else ATOL
    for name, expected in instance.primal.items():
        close(result.values.primal[name], expected, atol=atol)
    # Duals: d f*/d rhs, with the sign of the active side (known from the KKT design); a
    # back-end that cannot give them for this class (its ``duals``) returns none.
    if instance.problem_class in cls.duals:
        assert set(result.values.dual) == set(instance.dual)
        for name, expected in instance.dual.items():
            close(result.values.dual[name], expected)
    else:
        assert result.values.dual == {}
    assert result.bound is not None
    assert result.bound <= result.objective + 1e-6 * max(1.0, abs(result.objective))
    assert result.bound == pytest.approx(instance.objective, rel=ATOL, abs=ATOL)


@pytest.mark.parametrize(("cls", "make"), cases(*inst.INTEGER))
def test_integer_optimum_matches_enumeration(cls, make):
    instance = make()
    best, argmin, count = instance.enumerate()
    assert count == 1  # the instance has a unique optimum, so the argmin is checked too
    result = solve(cls, instance, tol=TOL)
    assert result.status is Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(best, rel=ATOL, abs=ATOL)
    for name, expected in instance.split(argmin).items():
        close(result.values.primal[name], expected)
    assert result.values.dual == {}
    assert result.bound is not None
    assert result.bound <= result.objective + 1e-6 * max(1.0, abs(result.objective))
    # within the solvers' tolerance (SCIP lowers its bound by 10 feasibility tolerances)
    assert result.bound == pytest.approx(best, rel=1e-5, abs=1e-6)


@pytest.mark.parametrize(("cls", "make"), cases(inst.lp_infeasible))
def test_infeasible(cls, make):
    result = solve(cls, make())
    assert result.status is Status.INFEASIBLE, result.message
    assert result.values is None


@pytest.mark.parametrize(("cls", "make"), cases(inst.lp_unbounded))
def test_unbounded(cls, make):
    result = solve(cls, make())
    assert result.status is Status.UNBOUNDED, result.message
    assert result.values is None


def test_narrow_backends_are_the_expected_ones():
    assert {cls.solver for cls in BACKENDS if cls.narrow} == {"fn"}
    # fn refuses an inequality row, a free variable without curvature, an off-diagonal P, an
    # infeasible and an unbounded instance; it takes the separable QP
    refused = {(p.values[0].solver, p.values[1].__name__) for p in refused_cases()}
    assert refused == {
        ("fn", "lp_mixed"),
        ("fn", "lp_infeasible"),
        ("fn", "lp_unbounded"),
        ("fn", "qp_box"),
        ("fn", "qp_free"),
    }


@pytest.mark.parametrize(("cls", "make"), refused_cases())
def test_narrow_backend_refuses_with_a_reason(cls, make):
    formulation = make().build(cls.layer)
    why = cls.refusal(formulation)
    assert why
    result = cls().solve(formulation, SolveOptions(tol=TOL, verbose=True))
    assert result.status is Status.ERROR
    assert result.values is None
    assert why in result.message
    assert "highs" in result.message  # it names the back-ends that take the problem


# -------------------------------------------------------------------------------------- limits
@pytest.mark.parametrize(("cls", "make"), cases(inst.milp_hard))
def test_time_limit_on_a_hard_milp(cls, make):
    result = solve(cls, make(), time_limit=0.5, threads=1)
    assert result.status is Status.TIME_LIMIT, result.message
    assert result.seconds < 10
    if result.values is not None:  # an incumbent comes back with the limit status
        pick = result.values.primal["pick"]
        assert np.allclose(pick, np.round(pick), atol=1e-6)
        assert result.objective is not None
        if result.bound is not None:
            assert result.bound <= result.objective + 1e-6


ITERATION_CASES = [
    case
    for case in cases(inst.qp_large, inst.milp_hard)
    if not (case.values[0].solver == "scip" and case.values[1] is inst.qp_large)
]


@pytest.mark.parametrize(("cls", "make"), ITERATION_CASES)
def test_iteration_limit_quietly(cls, make, capfd):
    # max_iter counts LP/QP iterations, or branch-and-bound nodes (SCIP; HiGHS on a MILP).
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        result = solve(cls, make(), max_iter=1)
    assert result.status is Status.ITERATION_LIMIT, result.message
    assert capfd.readouterr() == ("", "")
    assert [w for w in caught if issubclass(w.category, UserWarning)] == []


# -------------------------------------------------------------------------- options and output
def _small_case(cls):
    for make in (inst.lp_mixed, inst.lp_box, inst.milp_small):
        if takes(cls, make()):
            return make()
    raise AssertionError(f"no small instance for {backend_id(cls)}")


HARMLESS = {
    "highs": {"random_seed": 3},
    "osqp": {"rho": 0.2},
    "clarabel": {"equilibrate_enable": True},
    "piqp": {"preconditioner_iter": 5},
    "fn": {"backoff": 0.9999},
    "scip": {"randomization/randomseedshift": 1},
}


@pytest.mark.parametrize("cls", BACKENDS, ids=backend_id)
def test_options_are_not_mutated(cls):
    passed = dict(HARMLESS[cls.solver])
    kept = copy.deepcopy(passed)
    options = SolveOptions(tol=TOL, time_limit=30.0, solver_options=passed)
    result = cls().solve(_small_case(cls).build(cls.layer), options)
    assert result.status is Status.OPTIMAL, result.message
    assert passed == kept
    assert options.solver_options == kept


@pytest.mark.parametrize(("cls", "make"), cases(*inst.ALL))
def test_verbose_false_prints_nothing(cls, make, capfd):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", UserWarning)
        result = solve(cls, make(), tol=TOL, threads=1, verbose=False)
    assert result.status is not Status.ERROR, result.message
    assert capfd.readouterr() == ("", "")
    assert [w for w in caught if issubclass(w.category, UserWarning)] == []


@pytest.mark.parametrize("cls", BACKENDS, ids=backend_id)
def test_verbose_true_shows_the_log(cls, capfd):
    result = solve(cls, _small_case(cls), verbose=True)
    assert result.status is Status.OPTIMAL, result.message
    out, err = capfd.readouterr()
    assert out + err != ""


BOGUS = {
    "highs": {"no_such_option": 1},
    "osqp": {"no_such_setting": 1},
    "clarabel": {"no_such_setting": 1},
    "piqp": {"no_such_setting": 1},
    "fn": {"no_such_setting": 1},
    "scip": {"no/such/param": 1},
}


@pytest.mark.parametrize("cls", BACKENDS, ids=backend_id)
def test_solver_errors_become_error_status(cls):
    options = SolveOptions(solver_options=BOGUS[cls.solver])
    result = cls().solve(_small_case(cls).build(cls.layer), options)
    assert result.status is Status.ERROR
    assert result.values is None
    assert result.message


@pytest.mark.parametrize(
    ("mapping", "key"),
    [
        (highs.highs_options, "time_limit"),
        (osqp.osqp_settings, "time_limit"),
        (clarabel.clarabel_settings, "time_limit"),
        (scip.scip_params, "limits/time"),
    ],
    ids=["highs", "osqp", "clarabel", "scip"],
)
def test_solver_options_override_common_options(mapping, key):
    assert mapping(SolveOptions(time_limit=5.0))[key] == 5.0
    assert mapping(SolveOptions(time_limit=5.0, solver_options={key: 7.0}))[key] == 7.0


def test_status_tables_cover_every_solver_code():
    import clarabel as clarabel_lib
    import highspy
    import osqp as osqp_lib
    import piqp as piqp_lib

    assert set(highs.HIGHS_STATUS) == set(highspy.HighsModelStatus.__members__)
    assert set(osqp.OSQP_STATUS) == set(osqp_lib.SolverStatus.__members__)
    assert set(piqp.PIQP_STATUS) == set(piqp_lib.Status.__members__)
    clarabel_codes = {
        name for name in dir(clarabel_lib.SolverStatus) if name[0].isupper() and "_" not in name
    }
    assert set(clarabel.CLARABEL_STATUS) == clarabel_codes


def test_pyomo_table_covers_every_termination_condition():
    from pyomo.contrib.solver.common.results import TerminationCondition

    from optframe.solvers._common import PYOMO_STATUS

    assert set(PYOMO_STATUS) == set(TerminationCondition.__members__)


def _cvxpy_forms():
    import cvxpy as cp

    # min x with one constraint forcing x >= 2 (or x == 2), written in each form cvxpy knows:
    # the expected dual is the sensitivity of the optimum to the constant side as written.
    x = cp.Variable(name="x")
    return x, {
        "expr >= b": (x >= 2, 1.0),
        "b <= expr": (2 <= x, 1.0),  # noqa: SIM300 (the form under test)
        "-expr <= -b": (-x <= -2, -1.0),
        "expr == b": (x == 2, 1.0),
        "b == expr": (cp.Constant(2.0) == x, 1.0),
        "NonNeg(expr - b)": (cp.NonNeg(x - 2), 1.0),
        "Zero(expr - b)": (cp.Zero(x - 2), 1.0),
    }


@pytest.mark.parametrize(
    "form",
    [
        "expr >= b",
        "b <= expr",
        "-expr <= -b",
        "expr == b",
        "b == expr",
        "NonNeg(expr - b)",
        "Zero(expr - b)",
    ],
)
def test_cvxpy_duals_are_sensitivities_to_the_constant_side(form):
    import cvxpy as cp

    from optframe.model import Formulation
    from optframe.solvers.clarabel import ClarabelCvxpyBackend

    x, forms = _cvxpy_forms()
    constraint, expected = forms[form]
    problem = cp.Problem(cp.Minimize(x), [constraint])
    formulation = Formulation(
        "cvxpy", problem, LP, variables={"x": x}, constraints={"c": constraint}
    )
    result = ClarabelCvxpyBackend().solve(formulation, SolveOptions(tol=1e-9))
    assert result.status is Status.OPTIMAL, result.message
    close(result.values.primal["x"], [2.0])
    close(result.values.dual["c"], [expected])


def test_highs_option_named_like_a_cvxpy_argument_reaches_highs():
    # HiGHS's "solver" option shares its name with Problem.solve's first argument.
    from optframe.solvers.highs import HighsCvxpyBackend

    options = SolveOptions(solver_options={"solver": "ipm"})
    result = HighsCvxpyBackend().solve(inst.lp_mixed().build("cvxpy"), options)
    assert result.status is Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(10.5)
