"""fn, the Frisch-Newton back-end: agreement with HiGHS, LAD and quantile fits, scope, options.

The shared conformance checks (``test_conformance.py``) run fn on the instances it takes and check
its refusal of the others; these cover random box LPs (dense and sparse ``A``, fixed columns)
against HiGHS, the LAD and quantile dual LPs through :func:`optframe.solve` (certified against
HiGHS's Direct solve), AID with fn for its aggregated LPs, and fn's own options.
"""

from dataclasses import replace

import numpy as np
import pytest
import scipy.sparse as sp
from fn_problems import box_lp

import optframe as of
from optframe.backend import SolveOptions
from optframe.data import Dataset
from optframe.drivers import AggregateDisaggregate, Direct
from optframe.errors import IncompatibleBackend
from optframe.losses import Pinball
from optframe.model import Formulation
from optframe.models import EmpiricalRisk, LADRegression, SemiSupervisedSVM
from optframe.registry import resolve_backend
from optframe.result import Status
from optframe.solvers import fn
from optframe.solvers._fn_core import Stop
from optframe.solvers.fn import FnMatrixBackend
from optframe.solvers.highs import HighsMatrixBackend


def lagrangian_value(formulation: Formulation, y: np.ndarray) -> float:
    """The box LP's dual value at row duals ``y`` (valid bound for any ``y``)."""
    p = formulation.problem
    d = p.c - np.asarray(p.A.T @ y)
    return float(p.row_upper @ y + np.minimum(d * p.lower, d * p.upper).sum() + p.offset)


# ----------------------------------------------------------------------------- box LPs vs HiGHS
@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("density", [1.0, 0.15])
def test_random_box_lps_agree_with_highs(seed, density):
    formulation = box_lp(seed, density=density)
    options = SolveOptions(tol=1e-9)
    ours = FnMatrixBackend().solve(formulation, options)
    reference = HighsMatrixBackend().solve(formulation, options)
    assert ours.status is Status.OPTIMAL, ours.message
    assert reference.status is Status.OPTIMAL
    scale = 1.0 + abs(reference.objective)
    assert ours.objective == pytest.approx(reference.objective, abs=1e-8 * scale)
    assert ours.bound <= reference.objective + 1e-9 * scale
    assert ours.bound == pytest.approx(reference.objective, abs=1e-8 * scale)
    # the bound is the dual value at the duals it returns, and they are optimal duals
    y = ours.values.dual["rows"]
    assert lagrangian_value(formulation, y) == pytest.approx(ours.bound, abs=1e-9 * scale)
    x = ours.values.primal["x"]
    p = formulation.problem
    assert np.all(x >= p.lower)
    assert np.all(x <= p.upper)
    assert np.max(np.abs(p.A @ x - p.row_upper)) < 1e-8
    assert ("dense" in ours.message) == (density == 1.0)


def test_the_dual_sign_is_the_sensitivity_to_the_right_hand_side():
    formulation = box_lp(11)
    step = 1e-6
    bumped = replace(
        formulation,
        problem=replace(
            formulation.problem,
            row_lower=formulation.problem.row_lower + step * np.eye(6)[0],
            row_upper=formulation.problem.row_upper + step * np.eye(6)[0],
        ),
    )
    options = SolveOptions(tol=1e-10)
    base = FnMatrixBackend().solve(formulation, options)
    moved = FnMatrixBackend().solve(bumped, options)
    slope = (moved.objective - base.objective) / step
    assert base.values.dual["rows"][0] == pytest.approx(slope, rel=1e-4, abs=1e-6)
    assert abs(slope) > 1e-3  # the instance does move: a sign error cannot pass


# ------------------------------------------------------------------------------ LAD and quantile
def regression(n: int, m: int, seed: int, weighted: bool) -> Dataset:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, m))
    y = X @ rng.standard_normal(m) + 0.5 + rng.laplace(size=n) * (0.5 + np.abs(X[:, 0]))
    return Dataset(X=X, y=y), (rng.uniform(0.2, 3.0, n) if weighted else None)


def lad_models():
    data, w = regression(600, 5, 0, weighted=True)
    plain, _ = regression(500, 4, 1, weighted=False)
    sparse_data = Dataset(X=sp.csr_array(sp.random(400, 30, density=0.1, random_state=2)),
                          y=np.random.default_rng(2).standard_normal(400))  # fmt: skip
    return {
        "lad-weighted": LADRegression(data, sample_weight=w),
        "lad-no-intercept": LADRegression(plain, fit_intercept=False),
        "lad-sparse": LADRegression(sparse_data),
        "quantile-0.3-weighted": EmpiricalRisk(data, Pinball(0.3), penalty=None, sample_weight=w),
        "quantile-0.85-no-intercept": EmpiricalRisk(
            plain, Pinball(0.85), penalty=None, fit_intercept=False
        ),
    }


def assert_matches_reference(result, reference, rel=1e-9):
    """OPTIMAL by optframe's certificate, and the same objective as HiGHS's Direct solve."""
    assert reference.status is Status.OPTIMAL
    assert result.status is Status.OPTIMAL, (result.stats.get("solver_status"), result.gap)
    assert result.objective == pytest.approx(reference.objective, rel=rel)
    assert result.gap <= rel
    assert result.bound <= reference.objective * (1 + 1e-12)


@pytest.mark.parametrize("name", list(lad_models()))
def test_lad_and_quantile_through_solve_match_highs(name):
    model = lad_models()[name]
    result = of.solve(model, backend="matrix:fn")
    reference = of.solve(model, driver=Direct(), backend="highs")
    assert result.backend == "matrix:fn"
    assert result.stats["form"] == "dual"
    assert_matches_reference(result, reference)
    key = model.coef_key
    np.testing.assert_allclose(result.solution[key], reference.solution[key], atol=1e-7)


class NegatedDuals(FnMatrixBackend):
    """A lying fn: its row duals have the wrong sign."""

    def solve(self, formulation, options):
        out = super().solve(formulation, options)
        dual = {name: -value for name, value in out.values.dual.items()}
        return replace(out, values=replace(out.values, dual=dual))


def test_a_wrong_dual_sign_is_caught(monkeypatch):
    model = lad_models()["lad-weighted"]
    reference = of.solve(model, driver=Direct(), backend="highs")
    monkeypatch.setattr("optframe.drivers.direct.resolve_backend", lambda *_: NegatedDuals())
    lying = of.solve(model, driver=Direct())
    assert lying.status is not Status.OPTIMAL
    with pytest.raises(AssertionError):
        assert_matches_reference(lying, reference)


def test_aid_uses_fn_for_its_aggregated_lps():
    data, _ = regression(3000, 5, 4, weighted=False)
    model = LADRegression(data)
    result = of.solve(model, driver=AggregateDisaggregate(), backend="matrix:fn")
    reference = of.solve(model, driver=Direct(), backend="highs")
    assert result.driver == "aid"
    assert result.backend == "matrix:fn"
    assert_matches_reference(result, reference, rel=result.stats["gap_tol"])


# ------------------------------------------------------------------------------------- scope
def test_names_resolve_to_the_matrix_layer():
    model = lad_models()["lad-weighted"]
    assert type(resolve_backend("fn", model)) is FnMatrixBackend
    assert type(resolve_backend("matrix:fn", model)) is FnMatrixBackend


def test_a_mixed_integer_problem_is_refused_by_name_resolution():
    rng = np.random.default_rng(5)
    X = rng.standard_normal((30, 3))
    y = np.zeros(30)
    y[:6] = np.where(X[:6, 0] > 0, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    with pytest.raises(IncompatibleBackend, match="supports"):
        of.solve(SemiSupervisedSVM(Dataset(X=X, y=y)), driver=Direct(), backend="fn")


def test_the_primal_lad_form_is_refused_with_the_reason():
    model = lad_models()["lad-no-intercept"]
    result = of.solve(model, driver=Direct(form="primal"), backend="fn")
    assert result.status is Status.ERROR
    words = result.stats["solver_status"]
    assert "free or bounded on one side" in words
    assert "'highs'" in words


def test_too_many_rows_are_refused(monkeypatch):
    monkeypatch.setattr(fn, "MAX_ROWS", 5)
    result = FnMatrixBackend().solve(box_lp(0, rows=6), SolveOptions())
    assert result.status is Status.ERROR
    assert "6 rows, more than fn's limit of 5" in result.message


def test_default_row_limit():
    assert fn.MAX_ROWS == 5000
    assert FnMatrixBackend.refusal(box_lp(0)) is None


# ------------------------------------------------------------------------------------ options
def test_settings_and_status_table():
    settings = fn.fn_settings(SolveOptions(tol=1e-7, max_iter=12, threads=3))
    assert settings == {
        "tol": 1e-7,
        "max_iter": 12,
        "verbose": False,
        "backoff": 0.99995,
        "polish": True,
        "matrix": "auto",
    }  # threads: no effect
    assert set(fn.FN_STATUS) == set(Stop.__args__)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"no_such_option": 1}, "no_such_option"),
        ({"backoff": 1.5}, "backoff"),
        ({"matrix": "banded"}, "matrix"),
        ({"polish": "yes"}, "polish"),
    ],
)
def test_bad_solver_options_are_error_results(options, words):
    result = FnMatrixBackend().solve(box_lp(0), SolveOptions(solver_options=options))
    assert result.status is Status.ERROR
    assert words in result.message


@pytest.mark.parametrize("matrix", ["dense", "sparse"])
def test_matrix_option_chooses_the_storage(matrix):
    options = SolveOptions(solver_options={"matrix": matrix})
    result = FnMatrixBackend().solve(box_lp(3), options)
    assert result.status is Status.OPTIMAL
    assert f"{matrix} A" in result.message


def test_iteration_limit():
    result = FnMatrixBackend().solve(box_lp(1), SolveOptions(max_iter=1))
    assert result.status is Status.ITERATION_LIMIT
    assert result.iterations == 1
    assert result.values is not None


def test_time_limit(monkeypatch):
    from optframe.solvers import _fn_core

    ticks = iter(np.arange(0.0, 1e6, 1.0))
    monkeypatch.setattr(_fn_core.time, "perf_counter", lambda: float(next(ticks)))
    result = FnMatrixBackend().solve(box_lp(1), SolveOptions(time_limit=5.0))
    assert result.status is Status.TIME_LIMIT, result.message


def test_without_polish_the_interior_point_is_returned():
    formulation = box_lp(2)
    options = SolveOptions(tol=1e-9, solver_options={"polish": False})
    result = FnMatrixBackend().solve(formulation, options)
    polished = FnMatrixBackend().solve(formulation, SolveOptions(tol=1e-9))
    assert result.status is Status.OPTIMAL
    assert "polish" not in result.message
    assert "polish" in polished.message
    assert result.objective == pytest.approx(polished.objective, rel=1e-8)


def test_verbose_logs_each_iteration(capfd):
    result = FnMatrixBackend().solve(box_lp(2), SolveOptions(verbose=True))
    out, _ = capfd.readouterr()
    assert result.status is Status.OPTIMAL
    assert out.count("\n") >= result.iterations + 3
    quiet = FnMatrixBackend().solve(box_lp(2), SolveOptions())
    assert quiet.status is Status.OPTIMAL
    assert capfd.readouterr() == ("", "")


def test_compare_pairs_fn_only_with_the_forms_it_takes():
    from optframe.compare import applicable_pairs

    model = lad_models()["lad-weighted"]
    pairs = {(pair.label, pair.backend) for pair in applicable_pairs(model)}
    assert ("direct:dual", "matrix:fn") in pairs
    assert ("direct:primal", "matrix:fn") not in pairs  # free coefficients: refused
    assert ("direct:primal", "matrix:highs") in pairs


def test_no_rows_and_all_fixed_are_solved_without_iterating():
    formulation = box_lp(4, rows=3)
    p = formulation.problem
    no_rows = replace(
        formulation,
        problem=replace(p, A=p.A[:0], row_lower=p.row_lower[:0], row_upper=p.row_upper[:0]),
        constraints={},
    )
    ours = FnMatrixBackend().solve(no_rows, SolveOptions())
    reference = HighsMatrixBackend().solve(no_rows, SolveOptions())
    assert ours.status is Status.OPTIMAL
    assert ours.objective == pytest.approx(reference.objective, rel=1e-12)
    fixed = replace(formulation, problem=replace(p, upper=p.lower.copy()))
    result = FnMatrixBackend().solve(fixed, SolveOptions())
    assert result.status is Status.INFEASIBLE  # the rows held at an interior point, not at l
    consistent = replace(
        fixed, problem=replace(fixed.problem, row_lower=p.A @ p.lower, row_upper=p.A @ p.lower)
    )
    result = FnMatrixBackend().solve(consistent, SolveOptions())
    assert result.status is Status.OPTIMAL
    assert result.objective == pytest.approx(float(p.c @ p.lower) + p.offset)


def test_badly_scaled_low_quantile_converges_within_the_default_iterations():
    # 344_mv (features up to 1,200) at tau = 0.1 takes about 120 iterations, where LAD on
    # standardized data takes 11 to 16: the default limit leaves room for it
    from optframe.data import load_dataset

    raw = load_dataset("344_mv")
    data = Dataset(X=np.asarray(raw.X, dtype=np.float64), y=raw.y)
    model = EmpiricalRisk(data, Pinball(0.1), penalty=None)
    result = of.solve(model, backend="fn")
    reference = of.solve(model, driver=Direct(), backend="highs")
    assert result.iterations > 100  # more than the old default limit
    assert_matches_reference(result, reference, rel=1e-6)
