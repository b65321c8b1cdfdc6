"""DVI safe screening along C paths: SVM and LAD, with and without DVI_s / SSNSV / ESSNSV.

Every cell solves a whole path of C values with one method; the methods of one data set run one
after another in the same process, with the same inner solver, the same tolerance (relative gap
1e-6 certified on the full model at every value, inner solves at 1e-7) and the same warm starts
(the previous dual point scaled by C_k+1/C_k). ``none`` is the baseline: the full problem at
every value. Speed-up = baseline path seconds / screened path seconds, Init. and rule time
included, as the paper's tables. Inner solvers (column ``solver``):

* ``dcd``: the DCD driver as LIBLINEAR runs it, with shrinking. Shrinking sets variables stuck
  at a bound aside during a solve, so the unscreened baseline already works mostly on the
  samples screening would keep: the speed-up measures what screening adds to a shrinking solver.
* ``dcd-noshrink`` (methods ``@noshrink``): the solver the paper describes (Section 4: plain
  outer iterations over all coordinates, Hsieh et al. 2008 without shrinking). The paper gives
  no solver details; its speed-ups match 1/(1 - rejection), the cost model of a solver whose
  work is proportional to the number of samples. Only where the unscreened path is affordable.
* ``clarabel`` (methods ``:clarabel``): Direct on the full and on the reduced dual QP.

Data (notes/dvi.md 4.3-4.5 and 7.10; the paper gives no preprocessing, so these are our
decisions; no intercept, as in the paper):

* SVM: ``toy1``-``toy3`` (``make_toy``, seed 0, 2 x 1000 points, as the paper); ``ijcnn1``
  (LIBSVM train split, 49,990 x 22, features as distributed in [-1, 1]); ``wine`` (red + white,
  6,497 rows: label +1 = red, features = the 11 physico-chemical inputs + the quality score,
  n = 12 as in the paper, z-scored); ``skin`` (UCI skin_nonskin, 245,057 x 3, z-scored, +1 =
  non-skin): the large stand-in for Forest Covertype, which is not in the data folder (kddcup,
  the other stand-in, is multiclass with categorical codes).
* LAD (``RegularizedLAD``): ``magic`` (19,020 x 10; the regression target is the class coded
  -1/+1, notes/dvi.md 4.5: the paper's n = 10 leaves no other column), ``computer`` (cpusmall,
  8,192 x 12, target %usr), ``houses`` (537_houses = cadata, 20,640 x 8, target in dollars).
  Features z-scored, target centered (minus its mean). Without the centering the problem is
  degenerate: z-scored features sum to 0 over the samples, so with every target positive
  theta = +1 for all samples is dual feasible and optimal with w* = C X'1 = 0 at every C (the
  first version measured exactly that on houses: the warm start was already optimal).
  Alternatives measured on computer (DVI_s mean rejection, 100 values): z-scored X / centered y
  0.57, z-scored X / standardized y 0.44, X min-max to [-1, 1] / raw y 0.31; raw X / raw y did
  not finish a path in 120 s.

Safety is checked in every screened cell against the baseline path of the same data set and
solver: ``violations`` counts screened samples that the baseline solution proves to be on the
other side (beyond its own certified distance bound) or whose baseline dual value is more than
1e-6 of the box width from the bound the rule fixed (with Clarabel as baseline the second test
also counts interior-point duals that are not exactly at their bound). ``max_rel_diff`` is the
largest relative objective difference along the path. ``wrong_side`` counts only the first kind
(a safety failure); the second kind alone means an inexact baseline dual.

``OPTFRAME_DVI_PLOTS=DIR`` writes, per data set, the rejection ratios as CSV and (matplotlib) a
PNG: DVI_s as stacked |R|/l and |L|/l areas, SSNSV and ESSNSV as lines. The curves are stored in
the records (``curve_C``, ``curve_R``, ``curve_L``), so ``--records`` redraws them.
"""

from __future__ import annotations

import math
import os
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from optframe.bench.suite import Cell, compare_with_baseline

DESCRIPTION = "DVI/SSNSV/ESSNSV screening on C paths (SVM, LAD): path time with and without rules"
COLUMNS = [
    "dataset",
    "problem",
    "method",
    "solver",
    "n",
    "status",
    "seconds",
    "init",
    "rule_seconds",
    "base_seconds",
    "speedup",
    "paper_speedup",
    "rejection",
    "rejection_R",
    "rejection_L",
    "violations",
    "wrong_side",
    "fallbacks",
    "max_rel_diff",
]
# For `optframe report`: path seconds against the unscreened path of the same inner solver, and
# the rejection curves against C.
REPORT = {
    "method": "method",
    "baseline": ("none", "none:clarabel", "none@noshrink"),
    "problem": ("problem", "dataset", "rows", "values", "solver"),
    "path": {
        "x": "curve_C",
        "y": ("curve_R", "curve_L"),
        "by": ("problem", "dataset", "rows", "values"),
        "label": "rejection ratio",
    },
}
SVM_SETS = ("toy1", "toy2", "toy3", "ijcnn1", "wine", "skin")
LAD_SETS = ("magic", "computer", "houses")
SVM_METHODS = ("none", "dvi", "ssnsv", "essnsv")
LAD_METHODS = ("none", "dvi")
# Direct (Clarabel) on the reduced QP: the benefit per solver, on the sets where it is affordable.
DIRECT_SETS = ("toy1", "toy2", "toy3", "wine", "houses", "computer", "magic")
DIRECT_METHODS = ("none:clarabel", "dvi:clarabel")
# DCD without shrinking: the solver the paper describes (Section 4: plain outer iterations over
# all coordinates); LIBLINEAR's shrinking already sets bound variables aside, a screening of its
# own. Not on skin (the unscreened path would take hours); wine took 424 s.
NOSHRINK_SETS = ("toy1", "toy2", "toy3", "wine", "houses", "computer", "magic", "ijcnn1")
NOSHRINK_METHODS = ("none@noshrink", "dvi@noshrink")
PAPER_SPEEDUP = {"toy1": 59.15, "toy2": 26.31, "toy3": 25.16, "ijcnn1": 5.64, "wine": 6.59,
                 "skin": 79.18, "magic": 9.86, "computer": 19.21, "houses": 114.91}  # fmt: skip
PAPER_SPEEDUP_SNSV = {("ijcnn1", "ssnsv"): 2.31, ("ijcnn1", "essnsv"): 3.01,
                      ("wine", "ssnsv"): 3.50, ("wine", "essnsv"): 4.47,
                      ("skin", "ssnsv"): 7.60, ("skin", "essnsv"): 10.72}  # fmt: skip
TOL = 1e-6

# Seconds of one cell (a whole path) on one core, per (problem, method): the full grid's mean
# over its data sets (docs/results/generated/dvi.md), the quick grid's as measured.
KIND = ("problem", "method")
EXPECTED_SECONDS = {
    "full": {
        ("svm", "none"): 11.0,
        ("svm", "dvi"): 5.0,
        ("svm", "ssnsv"): 15.0,
        ("svm", "essnsv"): 15.0,
        ("svm", "none:clarabel"): 15.0,
        ("svm", "dvi:clarabel"): 2.0,
        ("svm", "none@noshrink"): 110.0,
        ("svm", "dvi@noshrink"): 20.0,
        ("lad", "none"): 6.0,
        ("lad", "dvi"): 3.0,
        ("lad", "none:clarabel"): 40.0,
        ("lad", "dvi:clarabel"): 8.0,
        ("lad", "none@noshrink"): 135.0,
        ("lad", "dvi@noshrink"): 60.0,
    },
    "quick": {
        ("svm", "none"): 0.8,
        ("svm", "dvi"): 0.5,
        ("svm", "ssnsv"): 0.1,
        ("svm", "essnsv"): 0.1,
        ("svm", "none:clarabel"): 0.6,
        ("svm", "dvi:clarabel"): 0.2,
        ("svm", "none@noshrink"): 0.2,
        ("svm", "dvi@noshrink"): 0.1,
        ("lad", "none"): 0.3,
        ("lad", "dvi"): 0.3,
    },
}

PAPER = """Paper (Wang, Wonka, Ye), seconds over 100 C values in [0.01, 10], speed-up =
Solver / (Solver + rule, Init. included):
  Table 1 (SVM, DVI_s): Toy1 11.83 -> 0.20 (59.15x), Toy2 13.68 -> 0.52 (26.31x),
                        Toy3 15.35 -> 0.61 (25.16x)
  Table 2 (SVM): IJCNN1 4669.14 s: SSNSV 2.31x, ESSNSV 3.01x, DVI_s 5.64x
                 Wine 76.52 s: SSNSV 3.50x, ESSNSV 4.47x, DVI_s 6.59x
                 Covertype 1675.46 s: SSNSV 7.60x, ESSNSV 10.72x, DVI_s 79.18x
  Table 3 (LAD, DVI_s): Magic 122.34 -> 12.41 (9.86x), Computer 5.38 -> 0.28 (19.21x),
                        Houses 21.43 -> 0.19 (114.91x)
Rejection (figures): Toy1 ~100% (mostly R), Toy3 |L| ~ |R|; IJCNN1 ~80%, Wine > 80%,
Covertype ~100%; Magic ~90%, Computer and Houses ~100%; DVI_s >= ESSNSV >= SSNSV."""


def cells(quick: bool) -> list[Cell]:
    """The grid: 100 C values per path; ``quick``: toy1 and computer (first 2000 rows), 20 values.

    ``OPTFRAME_DVI_SETS`` (comma-separated) restricts the data sets.
    """
    only = {s.strip() for s in os.environ.get("OPTFRAME_DVI_SETS", "").split(",") if s.strip()}
    grid: list[Cell] = []
    count = 20 if quick else 100
    svm = ("toy1",) if quick else SVM_SETS
    lad = ("computer",) if quick else LAD_SETS
    direct = ("toy1",) if quick else DIRECT_SETS
    for problem, sets, methods in (("svm", svm, SVM_METHODS), ("lad", lad, LAD_METHODS)):
        for name in sets:
            if only and name not in only:
                continue
            chosen = methods + (DIRECT_METHODS if name in direct else ())
            chosen += NOSHRINK_METHODS if name in (("toy1",) if quick else NOSHRINK_SETS) else ()
            for method in chosen:
                params = {"dataset": name, "problem": problem, "method": method, "values": count}
                if quick:
                    params["rows"] = 2000
                grid.append(Cell(params))
    return grid


# ------------------------------------------------------------------------------------- data
def _zscore(X: np.ndarray) -> np.ndarray:
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


def _dense(X: Any) -> np.ndarray:
    return np.asarray(X.toarray() if hasattr(X, "toarray") else X, dtype=np.float64)


def problem_data(name: str, rows: int | None = None) -> Any:
    """The Dataset of a suite data set, preprocessed as the module docstring says.

    ``rows`` keeps the first rows after a seeded shuffle (seed 0), for quick runs and tests.
    """
    from optframe.data import Dataset, load_dataset, make_toy

    if name.startswith("toy"):
        data = make_toy(int(name[3:]), random_state=0)
        X, y = data.X, data.y
    elif name == "ijcnn1":
        data = load_dataset("ijcnn1")
        X, y = data.X, data.y
    elif name == "wine":
        red, white = load_dataset("wine_quality_red"), load_dataset("wine_quality_white")
        # the loader codes quality 3..8 / 3..9 as 0..K-1: both start at 3
        X = np.vstack([np.c_[_dense(d.X), d.y + 3.0] for d in (red, white)])
        X = _zscore(X)
        y = np.r_[np.ones(red.n_samples), -np.ones(white.n_samples)]
    elif name == "skin":
        data = load_dataset("skin_nonskin")
        X, y = _zscore(_dense(data.X)), data.y
    elif name in ("magic", "computer", "houses"):
        source = {"magic": "magic", "computer": "cpusmall", "houses": "537_houses"}[name]
        data = load_dataset(source)
        y = np.asarray(data.y, dtype=np.float64)
        # Centered target: without an intercept, a raw positive target (houses in dollars, %usr)
        # with centered features makes theta = +1 for every sample optimal, so w* = C X'1 = 0 at
        # every C and the path is degenerate (measured: the warm start was already optimal).
        X, y = _zscore(_dense(data.X)), y - y.mean()
    else:
        raise ValueError(f"unknown dvi data set {name!r}")
    if rows is not None and rows < X.shape[0]:
        keep = np.random.default_rng(0).permutation(X.shape[0])[:rows]
        X, y = X[keep], y[keep]
    return Dataset(X=X, y=y, name=name)


def path_model(name: str, problem: str, rows: int | None = None) -> Any:
    """The model at the first C of the path (no intercept)."""
    from optframe.models import RegularizedLAD, WeightedSVM

    data = problem_data(name, rows)
    if problem == "svm":
        return WeightedSVM(data, C=0.01, fit_intercept=False)
    return RegularizedLAD(data, C=0.01, fit_intercept=False)


# ------------------------------------------------------------------------------------ cells
# Per data set: the baseline's objectives and the side of every sample at every value.
_BASELINE: dict[tuple, dict[str, Any]] = {}


def _warm_up() -> None:
    import optframe as of
    from optframe.data import make_toy
    from optframe.models import WeightedSVM
    from optframe.screening import DVI

    model = WeightedSVM(make_toy(1, 0, n_per_class=20), C=0.1, fit_intercept=False)
    of.solve_path(model, "C", [0.1, 0.2], screening=DVI())
    of.solve_path(model, "C", [0.1, 0.2], screening=DVI(), driver="direct", backend="clarabel")


def _sides(model: Any, path: Any) -> list[np.ndarray]:
    """Per value, int8 codes of each sample at the baseline solution.

    Bit 1: provably above the kink (R side); 2: provably below (L side); 4: dual at the lower
    bound; 8: at the upper (to 1e-6 of the box width: interior-point duals are not exact).
    """
    from optframe.capabilities import LinearBoxDual

    dual = model.structure(LinearBoxDual)
    norms = np.sqrt(np.asarray((dual.Z.multiply(dual.Z) if sp.issparse(dual.Z)
                                else dual.Z * dual.Z).sum(axis=1)).reshape(-1))  # fmt: skip
    codes = []
    for k, result in enumerate(path.results):
        scale = path.values[k] / path.values[0]
        w = np.asarray(result.solution[dual.primal_key])
        alpha = np.asarray(result.solution[dual.dual_key])
        gap = max(result.objective - dual.dual_value(alpha), 0.0)
        band = math.sqrt(2.0 * gap) * norms
        s = np.asarray(dual.Z @ w).reshape(-1) - dual.target
        lo, hi = dual.lower * scale, dual.upper * scale
        eps = 1e-6 * np.maximum(1e-300, np.abs(hi - lo))
        code = (s > band).astype(np.int8) | ((s < -band).astype(np.int8) << 1)
        code |= (alpha <= lo + eps).astype(np.int8) << 2
        code |= (alpha >= hi - eps).astype(np.int8) << 3
        codes.append(code)
    return codes


def _violations(path: Any, codes: list[np.ndarray]) -> tuple[int, int]:
    """``(violations, wrong_side)``: all flagged samples, and those proven on the wrong side."""
    bad = wrong = 0
    for k in range(1, len(codes)):
        R, L = path.R[k], path.L[k]
        side = int(np.sum((codes[k][R] & 2) != 0) + np.sum((codes[k][L] & 1) != 0))
        wrong += side
        bad += side + int(np.sum((codes[k][R] & 4) == 0) + np.sum((codes[k][L] & 8) == 0))
    return bad, wrong


def _solve(model: Any, values: np.ndarray, rule: Any, driver: Any, solver: str) -> tuple:
    """The path and its wall seconds, with one BLAS thread as the paper's single solver."""
    from threadpoolctl import threadpool_limits

    import optframe as of

    # On shared cores threaded BLAS calls of a few microseconds each wait milliseconds for their
    # threads (measured 7x on houses).
    with threadpool_limits(limits=1):
        start = time.perf_counter()
        path = of.solve_path(model, "C", values, screening=rule, driver=driver,
                             backend=solver or "auto", tol=TOL, threads=1)  # fmt: skip
        return path, time.perf_counter() - start


def run_cell(cell: Cell) -> dict[str, Any]:
    """Solve one path (see the module docstring).

    A screened cell is checked against the unscreened path of the same problem: the one its
    process already solved, or one it solves itself (untimed), so cells stay independent.
    """
    from optframe.drivers.dcd import DCD
    from optframe.screening import DVI, ESSNSV, SSNSV

    if "warm" not in _BASELINE:
        _warm_up()
        _BASELINE["warm"] = {}
    name, problem, method = cell["dataset"], cell["problem"], cell["method"]
    rows = cell.params.get("rows")
    model = path_model(name, problem, rows)
    values = np.logspace(-2, 1, int(cell["values"]))
    method_rule, _, variant = method.partition("@")
    rule_name, _, solver = method_rule.partition(":")
    rule = {"none": None, "dvi": DVI(), "ssnsv": SSNSV(), "essnsv": ESSNSV()}[rule_name]
    driver: Any = "direct" if solver else DCD(shrinking=variant != "noshrink")
    solver_name = solver or ("dcd-noshrink" if variant == "noshrink" else "dcd")
    path, seconds = _solve(model, values, rule, driver, solver)
    statuses = {r.status.value for r in path.results}
    record: dict[str, Any] = {
        "solver": solver_name,
        "n": model.data.n_samples,
        "status": "optimal" if statuses == {"optimal"} else ",".join(sorted(statuses)),
        "seconds": seconds,
        "init": path.timings.init,
        "rule_seconds": path.timings.screening,
        "fallbacks": path.fallbacks,
    }
    key = (name, problem, rows, int(cell["values"]), solver_name)
    if rule is None:
        _BASELINE[key] = {"objectives": path.objectives, "codes": _sides(model, path)}
        return record
    record["rejection"] = float(np.nanmean(path.rejection))
    record["rejection_R"] = float(np.nanmean(path.rejection_R))
    record["rejection_L"] = float(np.nanmean(path.rejection_L))
    # the curves travel in the record, so --records can redraw the plots
    record["curve_C"] = [float(v) for v in values]
    record["curve_R"] = [float(v) for v in np.nan_to_num(path.rejection_R)]
    record["curve_L"] = [float(v) for v in np.nan_to_num(path.rejection_L)]
    if not rows and int(cell["values"]) == 100:
        paper = PAPER_SPEEDUP_SNSV.get((name, rule_name)) or (
            PAPER_SPEEDUP.get(name) if rule_name == "dvi" else None
        )
        if paper is not None:
            record["paper_speedup"] = paper
    if key not in _BASELINE:
        base_path, _ = _solve(model, values, None, driver, solver)
        _BASELINE[key] = {"objectives": base_path.objectives, "codes": _sides(model, base_path)}
    base = _BASELINE[key]
    diff = np.abs(path.objectives - base["objectives"])
    record["max_rel_diff"] = float(np.max(diff / np.maximum(1.0, np.abs(base["objectives"]))))
    record["violations"], record["wrong_side"] = _violations(path, base["codes"])
    return record


def _unscreened(record: dict[str, Any]) -> bool:
    return record["method"].partition(":")[0].partition("@")[0] == "none"


def complete(records: list[dict[str, Any]]) -> None:
    """``base_seconds`` and ``speedup``: the unscreened path's seconds (same problem and solver)."""
    same = ("dataset", "problem", "rows", "values", "solver")
    for how, into in (("value", "base_seconds"), ("speedup", "speedup")):
        compare_with_baseline(
            records, same=same, is_baseline=_unscreened, column="seconds", into=into, how=how
        )


def _curves(records: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """Per (data set, problem, rows): the DCD (shrinking) rejection curves of each rule."""
    curves: dict[tuple, dict[str, Any]] = {}
    for r in records:
        if "curve_R" not in r or r.get("solver", "dcd") != "dcd":
            continue
        key = (r["dataset"], r["problem"], r.get("rows"))
        entry = curves.setdefault(key, {"values": np.asarray(r["curve_C"])})
        entry[r["method"]] = (np.asarray(r["curve_R"]), np.asarray(r["curve_L"]))
    return curves


def _plots(directory: str, records: list[dict[str, Any]]) -> list[str]:
    os.makedirs(directory, exist_ok=True)
    written = []
    for (name, problem, rows), curves in _curves(records).items():
        stem = os.path.join(directory, f"{problem}_{name}")
        values = curves["values"]
        header = ["C"]
        columns = [values]
        for rule in ("dvi", "essnsv", "ssnsv"):
            if rule in curves:
                header += [f"{rule}_R", f"{rule}_L"]
                columns += list(curves[rule])
        np.savetxt(stem + ".csv", np.column_stack(columns), delimiter=",",
                   header=",".join(header), comments="", fmt="%.6g")  # fmt: skip
        written.append(stem + ".csv")
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:  # pragma: no cover - matplotlib is a dependency
            continue
        fig, ax = plt.subplots(figsize=(5, 3.2))
        if "dvi" in curves:
            r, lo = (np.nan_to_num(c) for c in curves["dvi"])
            ax.stackplot(values, r, lo, labels=["DVI_s |R|/l", "DVI_s |L|/l"],
                         colors=["#4c72b0", "#c44e52"], alpha=0.8)  # fmt: skip
        for rule, style in (("essnsv", "k-"), ("ssnsv", "k--")):
            if rule in curves:
                total = curves[rule][0] + curves[rule][1]
                ax.plot(values, total, style, label=rule.upper())
        ax.set_xscale("log")
        ax.set_ylim(0, 1)
        ax.set_xlabel("C")
        ax.set_ylabel("rejection ratio")
        ax.set_title(f"{problem.upper()} {name}" + (f" (first {rows} rows)" if rows else ""))
        ax.legend(loc="lower left", fontsize=7)
        fig.tight_layout()
        fig.savefig(stem + ".png", dpi=110)
        plt.close(fig)
        written.append(stem + ".png")
    return written


def summarize(records: list[dict[str, Any]]) -> str:
    """Speed-ups and safety per data set; writes the plots when ``OPTFRAME_DVI_PLOTS`` is set."""
    lines = []
    for r in records:
        if r.get("method", "none").startswith("none") or "speedup" not in r:
            continue
        lines.append(
            f"{r['problem']} {r['dataset']} {r['method']}: speed-up {r['speedup']:.2f}x (paper "
            f"{r.get('paper_speedup', '-')}), mean "
            f"rejection {r.get('rejection', float('nan')):.3f}, violations {r.get('violations')}, "
            f"max rel. objective difference {r.get('max_rel_diff', float('nan')):.1e}"
        )
    directory = os.environ.get("OPTFRAME_DVI_PLOTS")
    if directory:
        written = _plots(directory, records)
        lines.append(f"rejection curves: {len(written)} files in {directory}")
    return "\n".join(lines)
