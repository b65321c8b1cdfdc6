"""The aid benchmark suite: its grid and its LAD and SVM cells (S3VM cells take minutes)."""

import pytest

from optframe.bench.suite import Cell
from optframe.bench.suites import aid


def test_grid_covers_every_method_and_the_s3vm_sets():
    full = aid.cells(quick=False)
    methods = {(c["problem"], c["method"]) for c in full}
    assert {("lad", m) for m in aid.LAD_METHODS} <= methods
    assert {("svm", m) for m in aid.SVM_METHODS} <= methods
    s3vm = [c for c in full if c["problem"] == "s3vm"]
    assert {c["data"] for c in s3vm} == set(aid.S3VM_SETS)
    assert {c["split"] for c in s3vm} == set(range(12))
    assert {c["labeled"] for c in s3vm} == {10, 100}


@pytest.mark.parametrize("method", aid.LAD_METHODS)
def test_lad_cells_agree(method):
    cell = Cell({"problem": "lad", "data": "setA", "n": 3000, "m": 5, "method": method})
    record = aid.run_cell(cell)
    reference = aid.run_cell(Cell(dict(cell.params) | {"method": "direct dual ipm"}))
    assert record["status"] == "optimal"
    assert record["objective"] == pytest.approx(reference["objective"], rel=1e-6)


@pytest.mark.parametrize("method", aid.SVM_METHODS)
def test_svm_cells_on_sparse_real_data(method):
    record = aid.run_cell(Cell({"problem": "svm", "data": "a1a", "method": method}))
    reference = aid.run_cell(Cell({"problem": "svm", "data": "a1a", "method": "direct clarabel"}))
    assert record["n"] == 1605
    # libsvm stops at its own tolerance; liblinear also penalizes the bias (a different problem)
    tolerance = {"sklearn SVC": 1e-3, "sklearn LinearSVC": 1e-2}.get(method, 1e-6)
    assert record["objective"] == pytest.approx(reference["objective"], rel=tolerance)


def test_summary_reports_ratios_and_survives_failed_cells():
    records = [
        {
            "problem": "lad",
            "data": "d",
            "n": 1,
            "m": 1,
            "method": "aid",
            "seconds": 1.0,
            "objective": 2.0,
        },
        {
            "problem": "lad",
            "data": "d",
            "n": 1,
            "m": 1,
            "method": "direct dual ipm",
            "status": "optimal",
            "seconds": 4.0,
            "objective": 2.0,
        },
        # A direct solve stopped by its time limit is no baseline.
        {
            "problem": "lad",
            "data": "d",
            "n": 1,
            "m": 1,
            "method": "direct primal ipm",
            "status": "time_limit",
            "seconds": 0.5,
            "objective": 3.0,
        },
        {
            "problem": "lad",
            "data": "d",
            "n": 1,
            "m": 1,
            "method": "aid cold",
            "status": "optimal",
            "seconds": 3.0,
            "objective": 2.0,
        },
        {"problem": "svm", "data": "e", "method": "aid", "status": "failed"},
    ]
    summary = aid.summarize(records)
    assert "rho = 0.25" in summary
    assert "cold AID 3.00 s" in summary
