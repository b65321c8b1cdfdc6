"""RegularizedLAD (DVI's LAD): its forms agree with and without intercept; the dvi quick cell."""

import numpy as np
import pytest

import optframe as of
from optframe.bench.suite import Cell
from optframe.bench.suites import dvi
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.errors import ModelError
from optframe.models import RegularizedLAD


def data(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return Dataset(X=X, y=X @ [1.0, -2.0, 0.5] + 3.0 + rng.laplace(size=n))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_dual_and_primal_forms_agree(fit_intercept):
    model = RegularizedLAD(data(), C=0.7, fit_intercept=fit_intercept)
    dual = of.solve(model, driver=Direct(form="dual"), backend="clarabel")
    primal = of.solve(model, driver=Direct(form="primal"), backend="clarabel")
    assert dual.status is primal.status is of.Status.OPTIMAL
    assert dual.objective == pytest.approx(primal.objective, rel=1e-7)
    assert dual.gap <= 1e-7
    # the objective by hand; b is a minimizer given beta (weighted median)
    beta, b = dual.solution["beta"], dual.solution["intercept"][0]
    by_hand = 0.5 * beta @ beta + 0.7 * np.abs(model.data.y - model.data.X @ beta - b).sum()
    assert dual.objective == pytest.approx(by_hand, rel=1e-12)
    assert model.dual_objective(dual.solution["theta"]) <= dual.objective + 1e-9
    if not fit_intercept:
        assert b == 0.0


def test_large_C_approaches_plain_lad_and_bad_C():
    plain = of.solve(of.models.LADRegression(data(), fit_intercept=False))
    ridge = of.solve(RegularizedLAD(data(), C=1e4, fit_intercept=False))
    np.testing.assert_allclose(ridge.solution["beta"], plain.solution["beta"], atol=1e-3)
    for bad in (0.0, -1.0, np.inf, "x"):
        with pytest.raises(ModelError, match="C must be"):
            RegularizedLAD(data(), C=bad)


def test_suite_quick_cells_run_and_agree():
    cells = dvi.cells(quick=True)
    assert {c["method"] for c in cells} >= {"none", "dvi", "ssnsv", "essnsv", "dvi:clarabel"}
    full = dvi.cells(quick=False)
    assert {c["dataset"] for c in full} == set(dvi.SVM_SETS) | set(dvi.LAD_SETS)
    assert {c["values"] for c in full} == {100}
    chosen = [c for c in cells if c["dataset"] == "computer"]
    records = [dvi.run_cell(Cell(c.params)) for c in chosen]
    screened = records[-1]
    assert screened["status"] == "optimal"
    assert screened["violations"] == 0
    assert screened["max_rel_diff"] <= 1e-6
    # 20 values (ratio 1.44 per step) and centered targets: far below the 100-value figure
    assert 0.05 < screened["rejection"] < 1.0
    assert len(screened["curve_R"]) == 20
    merged = [c.params | r for c, r in zip(chosen, records, strict=True)]
    dvi.complete(merged)
    assert merged[-1]["speedup"] == pytest.approx(records[0]["seconds"] / screened["seconds"])
    assert "speed-up" in dvi.summarize(merged)
    # a screened cell whose process has not solved the baseline solves it itself
    dvi._BASELINE.clear()
    alone = dvi.run_cell(Cell(chosen[-1].params))
    assert alone["violations"] == 0
    assert alone["max_rel_diff"] <= 1e-6


def test_suite_lad_targets_are_centered():
    # raw positive targets without intercept give w* = 0 at every C (a degenerate path)
    y = dvi.problem_data("houses").y
    assert abs(y.mean()) <= 1e-9 * y.std()


def test_docstring_example():
    import doctest

    import optframe.models.regularized_lad as module

    failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
