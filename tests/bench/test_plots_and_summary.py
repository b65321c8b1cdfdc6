"""Convergence plots without an empty panel; summary columns that tell every cell apart."""

import json

import matplotlib.image

from optframe.bench.aggregate import ReportSpec, distinguishing_columns
from optframe.bench.plots import DPI, FileNames, convergence_plots

SPEC = ReportSpec(method="method", problem=("data",), metric="seconds")


def history(bound):
    rows = []
    for k in range(4):
        row = {"iteration": k, "seconds": 1.0 + k, "objective": 10.0 - k, "bound": None}
        if bound:
            row["bound"] = 5.0 + k
        rows.append(row)
    return rows


def record(data, method, bound):
    return {"data": data, "method": method, "seconds": 4.0, "history": history(bound)}


def widths(tmp_path, records):
    figures = convergence_plots(records, SPEC, tmp_path, FileNames())
    return [matplotlib.image.imread(tmp_path / name).shape[1] for _, name in figures]


def test_convergence_without_a_bound_has_one_panel_and_with_one_two(tmp_path):
    s3vm = [record("digit1", "AID1", bound=False), record("digit1", "AID5", bound=False)]
    lad = [record("cpusmall", "aid", bound=True)]
    assert widths(tmp_path / "s3vm", s3vm) == [int(5.5 * DPI)]
    assert widths(tmp_path / "lad", lad) == [int(10.0 * DPI)]


def cell(params, **result):
    return {**params, **result, "cell_key": json.dumps(params, sort_keys=True)}


def test_summary_columns_keep_the_parameter_that_tells_two_cells_apart():
    columns = ["problem", "data", "method", "status", "accuracy", "never_filled"]
    records = [cell({"problem": "lad", "data": "setA", "method": "aid"}, status="optimal")]
    for labeled in (10, 100):
        params = {"problem": "s3vm", "data": "digit1", "labeled": labeled, "split": 0}
        for method in ("AID1", "AID5"):
            records.append(cell(params | {"method": method}, status="converged", accuracy=0.9))
    shown = distinguishing_columns(records, columns)
    # labeled tells the S3VM rows apart; one split only: split tells nothing and stays out
    assert shown == ["labeled", "problem", "data", "method", "status", "accuracy"]
    rows = {tuple(r.get(c) for c in shown) for r in records}
    assert len(rows) == len(records)
