"""Certificate sweep: checks every OPTIMAL optframe reports against a tight reference.

Solves small real problems over models x data scalings x C x drivers x back-ends x layers x
forms, and checks every result's certificate against a reference optimum computed
independently for each model instance (Clarabel at 1e-10 tolerances, HiGHS simplex for the LP,
enumeration of the labelings for the tiny semi-supervised SVM):

(a) OPTIMAL is true: (objective - ref) / scale <= gap_tol + 1e-9, with scale = result.scale;
(b) no bound above the optimum: bound <= ref + 1e-9 max(1, |ref|);
(c) the gap is never negative (and the bound never above the objective).

Cells whose instance has no proven reference are reported and left out of (a) and (b). Then it
measures what the certificate costs (``optframe.certificate.certify``: the model's objective and
dual bound at the solution) against the solve, on large cells of the ``aid`` suite and on
~10k-row kernel problems, and writes everything to a Markdown report.

Run from the repository root::

    export OPTFRAME_DATA=../shared/datasets
    .venv/bin/python docs/results/certificate_sweep.py --out docs/results/certificates.md
    .venv/bin/python docs/results/certificate_sweep.py --out certificates-quick.md --quick

``--skip-cost`` leaves out the certificate-cost measurement; ``--jsonl FILE`` also writes one
JSON record per solve; ``--save FILE`` keeps everything the report is made of, and
``--from FILE --out REPORT`` writes the report again from it without solving anything.
"""

from __future__ import annotations

import os

for _name in (
    "OPTFRAME_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "NUMBA_NUM_THREADS",
):
    os.environ.setdefault(_name, "1")  # one core: the other one is someone else's

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import datetime as dt  # noqa: E402
import itertools  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
import warnings  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import optframe as of  # noqa: E402
from optframe.bench.environment import environment  # noqa: E402
from optframe.certificate import certify  # noqa: E402
from optframe.data import Dataset, load_dataset, make_knowledge_data  # noqa: E402
from optframe.drivers import (  # noqa: E402
    ADMM,
    DCD,
    FW,
    MFW,
    PFW,
    SMO,
    ADMMThenIPM,
    AggregateDisaggregate,
    CoreVectorMachine,
    Direct,
)
from optframe.kernels import RBF  # noqa: E402
from optframe.models import (  # noqa: E402
    L2SVM,
    KnowledgeBasedSVM,
    LADRegression,
    PULearning,
    RegularizedLAD,
    SemiSupervisedSVM,
    WeightedSVM,
)
from optframe.models.knowledge_svm import KnowledgeSet  # noqa: E402

TIME_LIMIT = 10.0  # seconds of each sweep solve
REF_TIME_LIMIT = 120.0
TIGHT = {"tol_gap_rel": 1e-10, "tol_gap_abs": 1e-10, "tol_feas": 1e-10}
# When TIGHT is not proven (an objective of 1e-7 is within tol_gap_abs = 1e-10 long before the
# relative gap closes), the same solve again with no absolute gap test.
TIGHTER = {"tol_gap_rel": 1e-12, "tol_gap_abs": 0.0, "tol_feas": 1e-12, "max_iter": 500}
# The fallback when no Clarabel try is proven: OSQP at 1e-13 with solution polishing.
OSQP_TIGHT = {"eps_abs": 1e-13, "eps_rel": 1e-13, "polishing": True, "max_iter": 200_000}
REF_GAP_TOL = 1e-8  # a reference is proven when optframe's own gap at it is below this
ROUNDING = 1e-9  # slack of check (a)
BOUND_SLACK = 1e-9  # slack of check (b), times max(1, |ref|)
C_VALUES = (1e-3, 1.0, 1e3, 1e6)
C_VALUES_QUICK = (1e-3, 1e6)

# Back-ends (layer:solver) the README's table lists per model, for Direct.
ALL_QP = (
    "matrix:highs",
    "cvxpy:highs",
    "pyomo:highs",
    "matrix:clarabel",
    "cvxpy:clarabel",
    "matrix:osqp",
    "cvxpy:osqp",
    "matrix:scip",
    "pyomo:scip",
    "cvxpy:scip",
)
KERNEL_QP = tuple(b for b in ALL_QP if not b.startswith("pyomo"))
MATRIX_CVXPY = KERNEL_QP
MATRIX_ONLY = ("matrix:highs", "matrix:clarabel", "matrix:osqp", "matrix:scip")
CVXPY_ONLY = ("cvxpy:highs", "cvxpy:clarabel", "cvxpy:osqp", "cvxpy:scip")
KNOWLEDGE = (
    "cvxpy:highs",
    "pyomo:highs",
    "cvxpy:clarabel",
    "cvxpy:osqp",
    "cvxpy:scip",
    "pyomo:scip",
)
S3VM_BACKENDS = ("matrix:scip", "pyomo:scip", "cvxpy:scip")
# A few back-ends for the no-intercept variants that exist mainly for DCD.
NO_INTERCEPT = ("matrix:highs", "matrix:clarabel", "cvxpy:osqp", "pyomo:scip")


# ------------------------------------------------------------------------------------- data
def _standardize(X: np.ndarray) -> np.ndarray:
    std = X.std(axis=0)
    return (X - X.mean(axis=0)) / np.where(std > 0, std, 1.0)


#: One column of the standardized data multiplied by each of these: an unpenalized model's
#: optimum does not change, and a projection that drops the column's row gave bounds above it.
COLUMN_SCALES = (1e-12, 1e-9, 1e-6, 1e6, 1e12)


def _variants(X: np.ndarray) -> dict[str, np.ndarray]:
    """Standardized, raw, standardized times 1e4, and standardized with column 1 times s."""
    Xs = _standardize(X)
    variants = {"std": Xs, "raw": np.array(X, dtype=np.float64), "std*1e4": Xs * 1e4}
    for s in COLUMN_SCALES:
        Xc = Xs.copy()
        Xc[:, 1] *= s
        variants[f"std,x1*{s:g}"] = Xc
    return variants


def breast_cancer(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of scikit-learn's breast cancer set, labels +-1 (+1 = benign)."""
    from sklearn.datasets import load_breast_cancer

    bunch = load_breast_cancer()
    rng = np.random.default_rng(seed)
    rows = rng.choice(bunch.target.size, n, replace=False)
    return bunch.data[rows], np.where(bunch.target[rows] == 1, 1.0, -1.0)


def cpusmall(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` rows of LIBSVM's cpusmall (8,192 x 12), raw targets."""
    data = load_dataset("cpusmall")
    rng = np.random.default_rng(seed)
    rows = rng.choice(data.n_samples, n, replace=False)
    return np.asarray(data.X)[rows], np.asarray(data.y)[rows]


def rbf_for(X: np.ndarray) -> RBF:
    """scikit-learn's gamma="scale": 1 / (m var(X))."""
    return RBF(gamma=1.0 / (X.shape[1] * float(X.var())))


# ------------------------------------------------------------------------------- the grid
@dataclass
class Instance:
    """One model (data variant, parameters) with its reference."""

    key: str
    model_name: str
    data: str
    params: str
    build: Callable[[], Any]
    reference: Callable[[Any], dict[str, Any]]
    model: Any = None
    ref: dict[str, Any] | None = None


@dataclass
class Cell:
    """One solve: an instance, a driver (made fresh for the solve) and a back-end."""

    instance: Instance
    driver_label: str
    driver: Callable[[], Any]
    backend: str = "auto"


@dataclass
class Grid:
    """The instances and the cells of the sweep."""

    instances: list[Instance] = field(default_factory=list)
    cells: list[Cell] = field(default_factory=list)

    def add(self, instance: Instance, runs: list[tuple[str, Callable[[], Any], str]]) -> None:
        """Add ``instance`` and one cell per (driver label, driver factory, back-end)."""
        self.instances.append(instance)
        self.cells += [Cell(instance, label, make, backend) for label, make, backend in runs]


def _direct(form: str | None, backends: tuple[str, ...]) -> list[tuple[str, Callable, str]]:
    label = "Direct" if form is None else f"Direct({form})"
    return [(label, lambda f=form: Direct(form=f), b) for b in backends]


def _tight_solve(model: Any, backend: str, form: str | None, options: dict | None) -> Any:
    """One reference solve; Clarabel first at TIGHT, then at TIGHTER if that is not proven."""
    result = None
    for opts in (options, TIGHTER) if options is TIGHT else (options,):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = of.solve(
                model,
                Direct(form=form),
                backend,
                solver_options=opts,
                gap_tol=REF_GAP_TOL,
                time_limit=REF_TIME_LIMIT,
                threads=1,
            )
        if result.status is of.Status.OPTIMAL:
            break
    return result


def _solve_reference(model: Any, specs: list[tuple[str, str | None, dict | None]]) -> dict:
    """Solve ``model`` tightly with every spec; the reference is the lowest proven objective."""
    tries = []
    fallback = []
    for backend, form, options in specs:
        if options is TIGHT:  # the same layer and form on OSQP, if Clarabel proves nothing
            fallback.append((backend.replace("clarabel", "osqp"), form, OSQP_TIGHT))
    for backend, form, options in specs:
        try:
            result = _tight_solve(model, backend, form, options)
            tries.append(
                {
                    "how": f"{backend} {form or ''}".strip(),
                    "status": result.status.value,
                    "objective": result.objective,
                    "gap": result.gap,
                    "violation": float(result.stats.get("violation", 0.0) or 0.0),
                }
            )
        except Exception as error:
            tries.append({"how": f"{backend} {form}", "status": f"exception: {error}"})
    proven = [t for t in tries if t["status"] == "optimal" and math.isfinite(t["objective"])]
    if not proven and fallback:
        second = _solve_reference(model, fallback)
        if second["proven"]:
            return second
        tries += second["tries"]
    if proven:
        best = min(proven, key=lambda t: t["objective"])
        return {"proven": True, "value": best["objective"], "how": best["how"], "tries": tries}
    finite = [t for t in tries if math.isfinite(t.get("objective", math.nan))]
    value = min((t["objective"] for t in finite), default=math.nan)
    return {"proven": False, "value": value, "how": "none proven", "tries": tries}


def _ref(*specs: tuple[str, str | None, dict | None]) -> Callable[[Any], dict]:
    return lambda model: _solve_reference(model, list(specs))


def _s3vm_reference(model: SemiSupervisedSVM) -> dict:
    """Enumerate the labelings of the unlabeled rows; each is a weighted SVM on Clarabel."""
    y = np.asarray(model.data.y)
    unlabeled = np.flatnonzero(y == 0)
    weight = np.where(y != 0, model.C_labeled * model._cost, model.C_unlabeled * model.weights)
    best, proven, worst_gap = math.inf, True, 0.0
    for labels in itertools.product((-1.0, 1.0), repeat=unlabeled.size):
        full = y.copy()
        full[unlabeled] = labels
        svm = WeightedSVM(Dataset(X=model.data.X, y=full), C=1.0, sample_weight=weight)
        result = _tight_solve(svm, "matrix:clarabel", "primal", TIGHT)
        if proven and result.status is not of.Status.OPTIMAL:  # once one fails, no fallbacks
            result = _tight_solve(svm, "matrix:osqp", "primal", OSQP_TIGHT)
        proven &= result.status is of.Status.OPTIMAL
        worst_gap = max(worst_gap, result.gap)
        if not result.has_solution:
            continue
        # the S3VM's objective at this (w, b): at most the SVM's, at least the S3VM optimum
        best = min(best, model.objective(result.solution))
    how = f"enumeration of {2**unlabeled.size} labelings (matrix:clarabel)"
    tries = [
        {
            "how": how,
            "status": "optimal" if proven else "not proven",
            "objective": best,
            "gap": worst_gap,
        }
    ]
    return {"proven": proven, "value": best, "how": how, "tries": tries}


def build_grid(quick: bool) -> Grid:
    """Every instance and cell of the sweep (``quick``: two values of C, two scalings)."""
    grid = Grid()
    Cs = C_VALUES_QUICK if quick else C_VALUES
    columns = tuple(f"std,x1*{s:g}" for s in COLUMN_SCALES)
    scalings = ("std", "std*1e4", "std,x1*1e-09") if quick else ("std", "raw", "std*1e4", *columns)

    # LAD regression: cpusmall, 200 rows; the loss weight c multiplies every sample weight.
    Xl, yl = cpusmall(200, seed=0)
    lad_weights = (1.0, 1e6) if quick else (1e-3, 1.0, 1e6)
    for scaling, X in _variants(Xl).items():
        if scaling not in scalings:
            continue
        data = Dataset(X=X, y=yl, name=f"cpusmall200/{scaling}")
        for c in lad_weights:
            inst = Instance(
                f"LAD|{scaling}|w={c:g}",
                "LADRegression",
                data.name,
                f"w={c:g}",
                lambda d=data, c=c: LADRegression(d, sample_weight=np.full(d.n_samples, c)),
                _ref(
                    ("matrix:highs", "dual", None),
                    ("matrix:highs", "primal", None),
                    ("matrix:clarabel", "primal", TIGHT),
                ),
            )
            runs = _direct("dual", ALL_QP) + _direct("primal", ALL_QP)
            runs += [
                ("AID", lambda: AggregateDisaggregate(), "auto"),
                (
                    "AID(inner dual)",
                    lambda: AggregateDisaggregate(inner=Direct(form="dual")),
                    "osqp",
                ),
                (
                    "AID(inner dual)",
                    lambda: AggregateDisaggregate(inner=Direct(form="dual")),
                    "clarabel",
                ),
            ]
            grid.add(inst, runs)

    # RegularizedLAD: the same rows, with and without intercept (DCD needs none).
    for scaling, X in _variants(Xl).items():
        if scaling not in scalings:
            continue
        data = Dataset(X=X, y=yl, name=f"cpusmall200/{scaling}")
        for C, intercept in itertools.product(Cs, (True, False)):
            inst = Instance(
                f"RLAD|{scaling}|C={C:g}|b={intercept}",
                "RegularizedLAD",
                data.name,
                f"C={C:g}" + ("" if intercept else ", no intercept"),
                lambda d=data, C=C, b=intercept: RegularizedLAD(d, C=C, fit_intercept=b),
                _ref(("matrix:clarabel", "dual", TIGHT), ("matrix:clarabel", "primal", TIGHT)),
            )
            if intercept:
                runs = _direct("dual", MATRIX_ONLY) + _direct("primal", MATRIX_ONLY)
            else:
                runs = _direct("dual", MATRIX_ONLY[:2]) + _direct("primal", MATRIX_ONLY[2:])
                runs += [("DCD", lambda: DCD(), "auto")]
            grid.add(inst, runs)

    # Weighted SVM and L2-SVM: breast cancer, 150 rows.
    Xb, yb = breast_cancer(150, seed=0)
    for scaling, X in _variants(Xb).items():
        if scaling not in scalings:
            continue
        data = Dataset(X=X, y=yb, name=f"breast_cancer150/{scaling}")
        rbf = rbf_for(X)
        for C in Cs:
            inst = Instance(
                f"WSVM|{scaling}|C={C:g}|linear",
                "WeightedSVM",
                data.name,
                f"C={C:g}, linear",
                lambda d=data, C=C: WeightedSVM(d, C=C),
                _ref(("matrix:clarabel", "primal", TIGHT), ("matrix:clarabel", "dual", TIGHT)),
            )
            runs = _direct("primal", ALL_QP) + _direct("dual", ALL_QP)
            runs += [
                ("AID", lambda: AggregateDisaggregate(), "auto"),
                (
                    "AID(inner dual)",
                    lambda: AggregateDisaggregate(inner=Direct(form="dual")),
                    "osqp",
                ),
                ("SMO", lambda: SMO(), "auto"),
            ]
            grid.add(inst, runs)

            inst = Instance(
                f"WSVM|{scaling}|C={C:g}|rbf",
                "WeightedSVM",
                data.name,
                f"C={C:g}, rbf(gamma={rbf.gamma:.3g})",
                lambda d=data, C=C, k=rbf: WeightedSVM(d, C=C, kernel=k),
                _ref(("matrix:clarabel", "dual", TIGHT), ("cvxpy:clarabel", "dual", TIGHT)),
            )
            runs = _direct("dual", KERNEL_QP)
            runs += [
                ("AID", lambda: AggregateDisaggregate(), "auto"),
                (
                    "AID(inner dual)",
                    lambda: AggregateDisaggregate(inner=Direct(form="dual")),
                    "osqp",
                ),
                ("SMO", lambda: SMO(), "auto"),
            ]
            grid.add(inst, runs)

            inst = Instance(
                f"WSVM|{scaling}|C={C:g}|linear|nob",
                "WeightedSVM",
                data.name,
                f"C={C:g}, linear, no intercept",
                lambda d=data, C=C: WeightedSVM(d, C=C, fit_intercept=False),
                _ref(("matrix:clarabel", "primal", TIGHT), ("matrix:clarabel", "dual", TIGHT)),
            )
            runs = [*_direct("primal", NO_INTERCEPT), ("DCD", lambda: DCD(), "auto")]
            grid.add(inst, runs)

            for kernel in ("linear", "rbf"):
                k = "linear" if kernel == "linear" else rbf
                inst = Instance(
                    f"L2SVM|{scaling}|C={C:g}|{kernel}",
                    "L2SVM",
                    data.name,
                    f"C={C:g}, {kernel}"
                    + ("" if kernel == "linear" else f"(gamma={rbf.gamma:.3g})"),
                    lambda d=data, C=C, k=k: L2SVM(d, C=C, kernel=k),
                    _ref(("matrix:clarabel", "dual", TIGHT), ("cvxpy:clarabel", "dual", TIGHT))
                    if kernel == "rbf"
                    else _ref(
                        ("matrix:clarabel", "dual", TIGHT), ("matrix:clarabel", "primal", TIGHT)
                    ),
                )
                runs = _direct("dual", MATRIX_CVXPY)
                if kernel == "linear":
                    runs += _direct("primal", MATRIX_CVXPY)
                runs += [
                    ("FrankWolfe(fw)", lambda: FW(), "auto"),
                    ("FrankWolfe(mfw)", lambda: MFW(), "auto"),
                    ("FrankWolfe(pfw)", lambda: PFW(), "auto"),
                    ("CoreVectorMachine", lambda: CoreVectorMachine(), "auto"),
                ]
                grid.add(inst, runs)

    # PU learning: breast cancer, half the positives labeled (+1), the rest unlabeled (0).
    Xp, yp = breast_cancer(150, seed=1)
    rng = np.random.default_rng(1)
    labeled = (yp == 1) & (rng.random(yp.size) < 0.5)
    pu_y = np.where(labeled, 1.0, 0.0)
    prior = float(np.mean(yp[~labeled] == 1))
    for scaling, X in _variants(Xp).items():
        if scaling not in scalings:
            continue
        data = Dataset(X=X, y=pu_y, name=f"breast_cancer150-PU/{scaling}")
        rbf = rbf_for(X)
        for C in Cs:
            lam = 1.0 / C
            for kernel in ("linear", "rbf"):
                k = "linear" if kernel == "linear" else rbf
                inst = Instance(
                    f"PU|{scaling}|lam={lam:g}|{kernel}",
                    "PULearning",
                    data.name,
                    f"lam={lam:g}, prior={prior:.3f}, {kernel}",
                    lambda d=data, lam=lam, k=k: PULearning(d, prior=prior, lam=lam, kernel=k),
                    _ref(("cvxpy:clarabel", "dual", TIGHT), ("cvxpy:clarabel", "primal", TIGHT)),
                )
                runs = _direct("dual", CVXPY_ONLY) + _direct("primal", CVXPY_ONLY)
                runs += [("SMO", lambda: SMO(), "auto")]
                grid.add(inst, runs)

    # Knowledge-based SVM: HIPAD's synthetic data, 40 rows x 60 features, two knowledge sets.
    train, _ = make_knowledge_data(40, 20, 60, random_state=0, block_size=10)
    sets = [KnowledgeSet(k["B"], k["d"], k["label"]) for k in train.meta["knowledge"]]
    Xk = train.X.toarray() if hasattr(train.X, "toarray") else np.asarray(train.X)
    for scaling, X in (("raw", Xk), ("raw*1e4", Xk * 1e4)):
        if quick and scaling != "raw":
            continue
        data = Dataset(X=X, y=train.y, name=f"knowledge40x60/{scaling}")
        for C in Cs:
            lam1, lam2 = 2e-3 / C, 1e-2 / C
            inst = Instance(
                f"KSVM|{scaling}|C={C:g}",
                "KnowledgeBasedSVM",
                data.name,
                f"lam1={lam1:g}, lam2={lam2:g}, 2 sets",
                lambda d=data, a=lam1, b=lam2: KnowledgeBasedSVM(
                    d, lam1=a, lam2=b, knowledge=sets, rho=1.0
                ),
                _ref(("cvxpy:clarabel", None, TIGHT)),
            )
            runs = _direct(None, KNOWLEDGE)
            runs += [
                ("ADMM", lambda: ADMM(), "auto"),
                ("ADMMThenIPM", lambda: ADMMThenIPM(), "auto"),
            ]
            grid.add(inst, runs)

    # Semi-supervised SVM: 20 breast cancer rows, 14 labeled, 6 unlabeled; MIQP on SCIP.
    Xs3, ys3 = breast_cancer(20, seed=2)
    ys3 = ys3.copy()
    ys3[np.random.default_rng(2).choice(20, 6, replace=False)] = 0.0
    if not ((ys3 == 1).any() and (ys3 == -1).any()):
        raise RuntimeError("the S3VM sample lacks a labeled class")
    for scaling, X in _variants(Xs3).items():
        if scaling not in scalings:
            continue
        data = Dataset(X=X, y=ys3, name=f"breast_cancer20-S3VM/{scaling}")
        for C in Cs:
            inst = Instance(
                f"S3VM|{scaling}|C={C:g}",
                "SemiSupervisedSVM",
                data.name,
                f"C_l={C:g}, C_u={C / 5:g}",
                lambda d=data, C=C: SemiSupervisedSVM(d, C_labeled=C, C_unlabeled=C / 5),
                _s3vm_reference,
            )
            runs = [("Direct", lambda: Direct(), b) for b in S3VM_BACKENDS]
            runs += [("AID", lambda: AggregateDisaggregate(), "auto")]
            grid.add(inst, runs)
    return grid


# ------------------------------------------------------------------------------- the sweep
# What earlier runs of this sweep found, kept in every report.
HISTORY = """\
Two full runs before this one (the same grid; code at `1262cb3` with uncommitted changes, then
at a revision before `6c677c7`) found 4 violations of (a) and 6 of (b), the same cells both
times, all SemiSupervisedSVM solved by SCIP. SCIP's branch-and-bound bound, which optframe then
kept as it was, lay above the optimum (the enumeration's) by up to 3.9e-6 in absolute terms,
about four times SCIP's feasibility tolerance (1e-6): a large relative gap where the objective is
about 1e-3. SCIP had found the optimal labels (the same as the enumeration's), and `big_m` was not
binding (raw, C_l = 1e-3: max 1 + |f| = 17.0 against M = 1236):

| check | data | params | backend | objective | bound | optimum | true gap (gap_tol 1e-6) |
|---|---|---|---|---:|---:|---:|---:|
| (a), (b) | breast_cancer20-S3VM/std | C_l=0.001, C_u=0.0002 | cvxpy:scip | 0.0130222207969 \
| 0.0130222207969 | 0.0130221903353 | 2.34e-06 |
| (b) | breast_cancer20-S3VM/std | C_l=1000, C_u=200 | cvxpy:scip | 0.158882778491 | 0.15888277849 \
| 0.158882762366 | 1.01e-07 |
| (b) | breast_cancer20-S3VM/std | C_l=1e+06, C_u=200000 | cvxpy:scip | 0.15888280423 \
| 0.158882803231 | 0.158882762356 | 2.64e-07 |
| (a), (b) | breast_cancer20-S3VM/raw | C_l=0.001, C_u=0.0002 | matrix:scip | 0.00120376126308 \
| 0.00120376126103 | 0.00119984453442 | 3.25e-03 |
| (a), (b) | breast_cancer20-S3VM/raw | C_l=0.001, C_u=0.0002 | cvxpy:scip | 0.00119986140535 \
| 0.00119986140535 | 0.00119984453442 | 1.41e-05 |
| (a), (b) | breast_cancer20-S3VM/raw | C_l=1e+06, C_u=200000 | cvxpy:scip | 0.00124977206991 \
| 0.00124977206991 | 0.00124975713233 | 1.20e-05 |

Commit `6c677c7` lowers SCIP's bound by ten feasibility tolerances and gives mixed-integer models
a default gap_tol of 1e-4; the convex models had no violation in that run.

The scalings `std,x1*s` (one column times s from 1e-12 to 1e12) were added after an adversarial
probe: LAD with one column times 1e-9 was OPTIMAL on HiGHS, Clarabel, OSQP, PIQP, SCIP and AID
with a bound above the optimum (abalone, 4,177 rows, on HiGHS: objective and bound 6535.623
against the optimum 6458.071, 1.2e-2 above it). The projection onto the unpenalized
dual's rows `X'v = 0` dropped the column's row (its Gram eigenvalue, 8.2e-19, fell
below the relative cutoff), so the point was not dual-feasible. The projection now solves on
unit-norm columns, and every such point is checked at the point evaluated
(`optframe.duality.equality_residual`): a row above its rounding error gives no bound.
"""

STATUS_GROUPS = {
    "optimal": "OPTIMAL",
    "converged": "CONVERGED",
    "iteration_limit": "LIMIT",
    "time_limit": "LIMIT",
    "error": "ERROR",
    "infeasible": "INFEASIBLE",
    "unbounded": "UNBOUNDED",
}
COLUMNS = ("OPTIMAL", "CONVERGED", "LIMIT", "ERROR", "INFEASIBLE", "UNBOUNDED")


def _finite(x: Any) -> bool:
    return x is not None and isinstance(x, float | int) and math.isfinite(x)


def run_cell(cell: Cell) -> dict[str, Any]:
    """Solve one cell; an exception becomes an ERROR record with its text."""
    inst = cell.instance
    record: dict[str, Any] = {
        "model": inst.model_name,
        "data": inst.data,
        "params": inst.params,
        "instance": inst.key,
        "driver": cell.driver_label,
        "backend": cell.backend,
    }
    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = of.solve(
                inst.model, cell.driver(), cell.backend, time_limit=TIME_LIMIT, threads=1
            )
    except Exception as error:
        record.update(
            status="error",
            exception=f"{type(error).__name__}: {error}".splitlines()[0][:300],
            seconds=time.perf_counter() - start,
            objective=math.nan,
            bound=None,
            scale=math.nan,
            gap=math.inf,
            gap_tol=math.nan,
            claimed="exception",
        )
        return record
    stats = result.stats
    violation = math.nan
    if result.has_solution:
        try:
            violation = float(inst.model.violation(result.solution))
        except Exception:
            violation = math.nan
    record.update(
        status=result.status.value,
        claimed=stats.get("claimed_status"),
        objective=result.objective,
        bound=result.bound,
        scale=result.scale,
        gap=result.gap,
        gap_tol=stats.get("gap_tol"),
        seconds=time.perf_counter() - start,
        solve_seconds=result.timings.total,
        resolved_backend=result.backend,
        solver_status=stats.get("solver_status"),
        error_text=stats.get("error") or stats.get("certificate_error"),
        violation=violation,
        iterations=result.iterations,
    )
    return record


def check(record: dict[str, Any], ref: dict[str, Any]) -> None:
    """Fill checks (a), (b), (c) of one record against its instance's reference."""
    record["ref"] = ref["value"]
    record["ref_proven"] = ref["proven"]
    objective, bound, scale = record["objective"], record["bound"], record["scale"]
    value = ref["value"]
    record["true_gap"] = (
        (objective - value) / scale
        if _finite(objective) and _finite(value) and _finite(scale) and scale > 0
        else math.nan
    )
    record["violation_a"] = record["violation_b"] = record["violation_c"] = False
    if _finite(bound) and _finite(objective):
        record["violation_c"] = bool(record["gap"] < 0 or bound > objective)
    if not ref["proven"]:
        return
    if record["status"] == "optimal":
        tg = record["true_gap"]
        record["violation_a"] = not (_finite(tg) and tg <= record["gap_tol"] + ROUNDING)
    if _finite(bound):
        record["violation_b"] = bound > value + BOUND_SLACK * max(1.0, abs(value))


def sweep(grid: Grid, jsonl: Any, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Each instance's reference, then its cells, then the checks; one record per solve."""
    records = []
    by_instance = defaultdict(list)
    for cell in grid.cells:
        by_instance[id(cell.instance)].append(cell)
    done, total = 0, len(grid.cells)
    for inst in grid.instances:
        inst.model = inst.build()
        t0 = time.perf_counter()
        try:
            inst.ref = inst.reference(inst.model)
        except Exception as error:
            inst.ref = {
                "proven": False,
                "value": math.nan,
                "how": f"exception: {error}",
                "tries": [],
            }
        inst.ref["seconds"] = time.perf_counter() - t0
        log(
            f"reference {inst.key}: {inst.ref['value']:.12g} "
            f"({'proven' if inst.ref['proven'] else 'NOT proven'}, {inst.ref['how']}, "
            f"{inst.ref['seconds']:.1f} s)"
        )
        for cell in by_instance[id(inst)]:
            record = run_cell(cell)
            record["n"], record["m"] = inst.model.data.n_samples, inst.model.data.n_features
            records.append(record)
            done += 1
            log(
                f"[{done}/{total}] {inst.key} {cell.driver_label} {cell.backend}: "
                f"{record['status']} (claimed {record['claimed']}) obj {record['objective']:.10g} "
                f"gap {record['gap']:.2e} {record['seconds']:.2f} s"
                + (f" {record['exception']}" if "exception" in record else "")
            )
        # The lowest objective of a feasible solution found in the sweep is also an upper
        # bound on the optimum: a reference above it was not tight (say so, and use it).
        mine = [r for r in records if r["instance"] == inst.key]
        feasible = [
            r["objective"]
            for r in mine
            if _finite(r["objective"]) and (r.get("violation") or 0.0) <= 1e-9
        ]
        ref = dict(inst.ref)
        lowest = min(feasible, default=math.inf)
        inst.ref["lowest_found"] = lowest
        if _finite(ref["value"]) and lowest < ref["value"]:
            ref["value"] = lowest
        inst.ref["used"] = ref["value"]
        for r in mine:
            check(r, ref)
            if jsonl is not None:
                jsonl.write(json.dumps(r, default=str) + "\n")
                jsonl.flush()
    return records


# ------------------------------------------------------------------------ certificate cost
def _median_certify(model: Any, result: Any, cold: bool, repeats: int = 3) -> float:
    """Median seconds of ``certify``; ``cold`` on fresh copies of the solution's arrays.

    Some models keep the kernel margins of the last solution they evaluated (L2SVM: the ones
    its ``meb_solution`` computed while the driver ran), so the certificate inside ``solve``
    reuses them; a copy of the solution is evaluated from scratch.
    """
    times = []
    for _ in range(repeats):
        target = result
        if cold:
            copied = {k: np.array(v, copy=True) for k, v in result.solution.items()}
            target = dataclasses.replace(result, solution=copied)
        t = time.perf_counter()
        certify(model, target, 1e-6)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def cost_cells(quick: bool) -> list[dict[str, Any]]:
    """The large cells: (label, data factory, model factory, driver, backend, options)."""
    from optframe.data import make_lad_set_a, make_svm_aid

    def subsample(name: str, n: int) -> Callable[[], Dataset]:
        def make() -> Dataset:
            data = load_dataset(name)
            rows = np.sort(np.random.default_rng(0).choice(data.n_samples, n, replace=False))
            return Dataset(X=data.X[rows], y=np.asarray(data.y)[rows], name=f"{name}[{n}]")

        return make

    def set_a(n: int, m: int) -> Callable[[], Dataset]:
        return lambda: make_lad_set_a(n, m, random_state=0)

    # (data, Direct?, AID?): the aid suite's LAD cells; AID needs 10-20 minutes at m = 300
    # (it hit the suite's 1,200 s limit there) and at 400k x 100, so it runs at 200k x 100.
    if quick:
        lad = [(set_a(20_000, 10), True, True)]
        svm = ("aid-svm", lambda: make_svm_aid(10_000, 10, random_state=0))
        kernel_n = 2_000
    else:
        lad = [
            (set_a(400_000, 300), True, False),
            (set_a(200_000, 100), True, True),
            (set_a(400_000, 10), True, True),
        ]
        svm = ("aid-svm", lambda: make_svm_aid(100_000, 50, random_state=0))
        kernel_n = 10_000
    cells = []
    for make, direct, aid in lad:
        if direct:
            cells.append(
                dict(
                    data="setA",
                    make=make,
                    model=lambda d: LADRegression(d),
                    driver="Direct(dual, ipm)",
                    build=lambda: Direct(form="dual"),
                    backend="highs",
                    options={"solver": "ipm"},
                )
            )
        if aid:
            cells.append(
                dict(
                    data="setA",
                    make=make,
                    model=lambda d: LADRegression(d),
                    driver="AID",
                    build=lambda: AggregateDisaggregate(inner=Direct(form="dual"), tol=1e-6),
                    backend="highs",
                    options=None,
                )
            )
    name, make = svm
    cells += [
        dict(
            data=name,
            make=make,
            model=lambda d: WeightedSVM(d, C=0.1),
            driver="AID",
            build=lambda: AggregateDisaggregate(tol=1e-6),
            backend="clarabel",
            options=None,
        ),
        dict(
            data=name,
            make=make,
            model=lambda d: WeightedSVM(d, C=0.1),
            driver="SMO",
            build=lambda: SMO(),
            backend="auto",
            options=None,
        ),
        dict(
            data=name,
            make=make,
            model=lambda d: WeightedSVM(d, C=0.1, fit_intercept=False),
            driver="DCD (no intercept)",
            build=lambda: DCD(),
            backend="auto",
            options=None,
        ),
    ]
    a9a = subsample("a9a", kernel_n)
    cells += [
        dict(
            data=f"a9a[{kernel_n}]",
            make=a9a,
            model=lambda d: WeightedSVM(d, C=1.0, kernel=RBF(gamma=1.0 / d.n_features)),
            driver="SMO",
            build=lambda: SMO(),
            backend="auto",
            options=None,
        ),
        dict(
            data=f"a9a[{kernel_n}]",
            make=a9a,
            model=lambda d: L2SVM(d, C=1.0, kernel=RBF(gamma=1.0 / d.n_features)),
            driver="FrankWolfe(mfw)",
            build=lambda: MFW(),
            backend="auto",
            options=None,
        ),
    ]
    return cells


def certificate_cost(quick: bool, log: Callable[[str], None]) -> list[dict[str, Any]]:
    """Solve each large cell once and time ``certify`` on its result."""
    rows = []
    cache: dict[int, Any] = {}
    for cell in cost_cells(quick):
        key = id(cell["make"])
        if key not in cache:
            cache.clear()
            cache[key] = cell["make"]()
        data = cache[key]
        model = cell["model"](data)
        kind = model.name
        if getattr(model, "kernel", None) is not None:
            kind += f" ({type(model.kernel).__name__.lower()})"
        log(f"cost: {cell['data']} {data.n_samples}x{data.n_features} {kind} {cell['driver']} ...")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = of.solve(
                    model,
                    cell["build"](),
                    cell["backend"],
                    threads=1,
                    solver_options=cell["options"],
                    time_limit=1800.0,
                )
            hot = _median_certify(model, result, cold=False)
            cold = _median_certify(model, result, cold=True)
        except Exception as error:
            log(f"cost: failed: {type(error).__name__}: {error}")
            continue
        rows.append(
            {
                "data": cell["data"],
                "n": data.n_samples,
                "m": data.n_features,
                "model": kind,
                "driver": cell["driver"],
                "backend": result.backend,
                "status": result.status.value,
                "gap": result.gap,
                "solve": result.timings.total,
                "certificate": hot,
                "cold": cold,
            }
        )
        log(
            f"cost: {result.status.value} gap {result.gap:.1e}, "
            f"solve {result.timings.total:.2f} s, "
            f"certificate {hot:.4f} s (from scratch {cold:.4f} s)"
        )
    return rows


# ------------------------------------------------------------------------------ the report
def _fmt(x: Any, spec: str = ".6g") -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        return format(x, spec)
    return str(x)


def _status_table(records: list[dict[str, Any]], key: Callable[[dict], str], title: str) -> list:
    counts: dict[str, Counter] = defaultdict(Counter)
    for r in records:
        counts[key(r)][STATUS_GROUPS.get(r["status"], r["status"])] += 1
    lines = [
        f"| {title} | solves | " + " | ".join(COLUMNS) + " |",
        "|---|---:|" + "---:|" * len(COLUMNS),
    ]
    total: Counter = Counter()
    for name in sorted(counts):
        c = counts[name]
        total.update(c)
        lines.append(
            f"| {name} | {sum(c.values())} | " + " | ".join(str(c[k]) for k in COLUMNS) + " |"
        )
    lines.append(
        f"| **all** | **{sum(total.values())}** | "
        + " | ".join(f"**{total[k]}**" for k in COLUMNS)
        + " |"
    )
    return lines


def _gap_tols(records: list[dict[str, Any]]) -> str:
    """The gap tolerances the results were certified with, per model."""
    seen: dict[float, set[str]] = defaultdict(set)
    for r in records:
        if _finite(r.get("gap_tol")):
            seen[r["gap_tol"]].add(r["model"])
    return "; ".join(
        f"{tol:g}: {', '.join(sorted(models))}" for tol, models in sorted(seen.items())
    )


def _backend_key(r: dict[str, Any]) -> str:
    if r["driver"].startswith("Direct"):
        return r["backend"]
    if r["driver"].startswith("AID"):
        return f"{r.get('resolved_backend') or r['backend']} (AID inner)"
    if r["driver"] == "ADMMThenIPM":
        return f"{r.get('resolved_backend') or 'auto'} (ADMMThenIPM)"
    return f"— (own algorithm: {r['driver']})"


def write_report(
    path: str,
    records: list[dict[str, Any]],
    references: list[dict[str, Any]],
    cost: list[dict[str, Any]] | None,
    wall: dict[str, float],
    argv: list[str],
    quick: bool,
    env: dict[str, Any],
) -> None:
    """Write the Markdown report: totals, status tables, checks, lists, certificate cost."""
    git_now = environment()["git"]
    lines: list[str] = []
    add = lines.append
    add("# Certificate sweep: optframe's own certificates against tight references")
    add("")
    add(
        "Every `optframe.solve` result is certified by optframe itself "
        "(`optframe/certificate.py`): OPTIMAL only when (objective - bound) / scale <= gap_tol "
        "with a bound the *model* proves from a dual-feasible point it builds from the "
        "solution. This sweep checks that claim on "
        f"{len(records)} solves of {len(references)} model instances: "
        f"{len({r['model'] for r in records})} model(s) x data scalings x C (or the "
        "loss weight, or lam = 1/C) from 1e-3 to 1e6 x "
        "drivers x back-ends x layers x forms, each against a reference optimum computed "
        "independently for the instance."
    )
    add("")
    add("## How to rerun")
    add("")
    add("```sh")
    add("export OPTFRAME_DATA=../shared/datasets")
    add(".venv/bin/python docs/results/certificate_sweep.py " + " ".join(argv))
    add("# a few minutes: two values of C, two scalings, small cost cells")
    add(".venv/bin/python docs/results/certificate_sweep.py --out certificates-quick.md --quick")
    add("```")
    add("")
    add(
        f"This report: `{' '.join(['docs/results/certificate_sweep.py', *argv])}`"
        + (" (**quick grid**)" if quick else "")
        + "."
    )
    add("")
    add("## Machine")
    add("")
    libs = ", ".join(f"{k} {v}" for k, v in env["libraries"].items() if v)
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    add(
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC; {env['cpu']}, {env['cpu_count']} cores "
        f"shared with other work (one process here, one thread per solve: "
        f"`OPTFRAME_THREADS=1`, `threads=1`); load average at the end "
        f"{', '.join(f'{x:.1f}' for x in load) if load else 'n/a'}; Python {env['python']} on "
        f"{platform.system()} {platform.release()}; git `{env['git']}` when the run started"
        + (f" (`{git_now}` when the report was written)" if git_now != env["git"] else "")
        + f". Libraries: {libs}."
    )
    add("")
    add("## What runs")
    add("")
    add(
        "* **Data** (small, real): scikit-learn's breast cancer (150 rows x 30, y = +-1; "
        "PU: half the positives labeled +1, the rest of the rows unlabeled 0, the prior their "
        "true positive share; S3VM: 20 rows, 14 labeled, 6 unlabeled), LIBSVM's cpusmall "
        "(200 rows x 12) for LADRegression and RegularizedLAD, HIPAD's synthetic knowledge data "
        "(`make_knowledge_data`, 40 rows x 60, its two knowledge sets) for KnowledgeBasedSVM. "
        "Scalings: `std` (standardized columns), `raw` (the features as published), and a badly "
        "scaled `std*1e4` (standardized times 1e4; the knowledge data: `raw` and `raw*1e4`), "
        "and `std,x1*s`: standardized with column 1 multiplied by s in {"
        + ", ".join(f"{s:g}" for s in COLUMN_SCALES)
        + "} (an ill-conditioned column; the quick grid: 1e-9 only). "
        "RBF kernels take gamma = 1 / (m var(X)) of the variant."
    )
    add(
        "* **Parameters**: C in {"
        + ", ".join(f"{c:g}" for c in (C_VALUES_QUICK if quick else C_VALUES))
        + "} for WeightedSVM, L2SVM, RegularizedLAD, the S3VM's C_l (C_u = C_l / 5); "
        "PULearning's lam = 1/C; KnowledgeBasedSVM lam1 = 2e-3 / C, lam2 = 1e-2 / C; LAD: every "
        "sample weight equal to w in {1e-3, 1, 1e6} (the loss weight)."
    )
    add(
        "* **Drivers x back-ends**: Direct on every layer:solver of the README's table for the "
        "model, in every form the model offers for it; AggregateDisaggregate (LAD, WeightedSVM "
        "linear and RBF; default inner solve on the reference solver, and `inner=Direct(form="
        '"dual")` on OSQP, for LAD also on Clarabel; S3VM); SMO (WeightedSVM with intercept, '
        "PULearning); DCD (WeightedSVM and RegularizedLAD without intercept); FrankWolfe `fw`, "
        "`mfw`, `pfw` and CoreVectorMachine (L2SVM); ADMM and ADMMThenIPM (KnowledgeBasedSVM). "
        f"Driver defaults, `time_limit={TIME_LIMIT:g}` s, `threads=1`, gap_tol the default "
        "`solve` picks (" + _gap_tols(records) + ")."
    )
    add(
        "* **Reference** per instance: Clarabel at `tol_gap_rel = tol_gap_abs = tol_feas = "
        "1e-10` on the matrix or cvxpy layer in every form listed, again at `tol_gap_rel = "
        "tol_feas = 1e-12, tol_gap_abs = 0` when that is not proven, and when no Clarabel try is "
        "proven, OSQP on the same layer and forms at `eps_abs = eps_rel = 1e-13` with solution "
        "polishing (LAD: HiGHS simplex on both "
        "forms and Clarabel on the primal; S3VM: the minimum over all 64 labelings of the "
        "unlabeled rows of the weighted SVM, each on Clarabel at 1e-10 or OSQP at 1e-13, of the "
        "S3VM objective at each solution), the lowest objective "
        f"among the tries proven optimal at gap_tol = {REF_GAP_TOL:g}. Since any feasible "
        "solution's objective bounds the optimum from above, the reference used is the lower of "
        "that and the lowest objective any sweep cell found at a feasible solution (so a bound "
        "above any solution seen is also caught)."
    )
    add(
        f"* **Checks**: (a) OPTIMAL => (objective - ref) / result.scale <= gap_tol + {ROUNDING:g}; "
        f"(b) every finite bound <= ref + {BOUND_SLACK:g} max(1, |ref|); (c) gap >= 0 and "
        "bound <= objective. Instances whose reference is not proven are listed below, and "
        "their cells are not counted against (a) and (b). The S3VM's bound is SCIP's "
        "branch-and-bound bound (optframe keeps the solver's bound for mixed-integer models; "
        "AID on the S3VM has none)."
    )
    add("")

    n_err_exc = sum(1 for r in records if "exception" in r)
    statuses = Counter(STATUS_GROUPS.get(r["status"], r["status"]) for r in records)
    counted = [r for r in records if r.get("ref_proven")]
    va = [r for r in records if r.get("violation_a")]
    vb = [r for r in records if r.get("violation_b")]
    vc = [r for r in records if r.get("violation_c")]
    caught = [r for r in records if r.get("claimed") == "optimal" and r["status"] != "optimal"]
    unproven = [i for i in references if not i["proven"]]
    tightened = [
        i
        for i in references
        if i["proven"]
        and i.get("lowest_found", math.inf) < i["value"] - 1e-9 * max(1.0, abs(i["value"]))
    ]

    add("## Totals")
    add("")
    add("| | |")
    add("|---|---:|")
    add(f"| solves | {len(records)} |")
    add(f"| model instances (references) | {len(references)} |")
    add(f"| sweep wall time (references included) | {wall['sweep'] / 60:.1f} min |")
    if "cost" in wall:
        add(f"| certificate-cost measurement wall time | {wall['cost'] / 60:.1f} min |")
    for k in COLUMNS:
        extra = f" (of which {n_err_exc} raised an exception)" if k == "ERROR" and n_err_exc else ""
        add(
            f"| {k}{' (ITERATION_LIMIT + TIME_LIMIT)' if k == 'LIMIT' else ''} | "
            f"{statuses[k]}{extra} |"
        )
    add(f"| solves checked against a proven reference | {len(counted)} |")
    add(f"| of them OPTIMAL (checked by (a)) | {sum(r['status'] == 'optimal' for r in counted)} |")
    add(
        f"| of them with a finite bound (checked by (b)) | "
        f"{sum(_finite(r['bound']) for r in counted)} |"
    )
    add(f"| **violations of (a)**: OPTIMAL but the true gap exceeds gap_tol | **{len(va)}** |")
    add(f"| **violations of (b)**: a bound above the optimum | **{len(vb)}** |")
    add(f"| **violations of (c)**: negative gap or bound above the objective | **{len(vc)}** |")
    add(f"| solver/driver claimed optimal, certificate said otherwise | {len(caught)} |")
    add("")
    worst = max(
        (r["true_gap"] for r in counted if r["status"] == "optimal" and _finite(r["true_gap"])),
        default=math.nan,
    )
    add(
        f"The largest true gap of an OPTIMAL result: {_fmt(worst, '.2e')} "
        "(relative to the result's scale)."
    )
    add("")
    if va or vb or vc:
        add("### Violations")
        add("")
        add(
            "| check | model | data | params | driver | backend | claimed | status | objective "
            "| bound | ref | gap_tol | true gap |"
        )
        add("|---|---|---|---|---|---|---|---|---:|---:|---:|---:|---:|")
        for tag, rows in (("a", va), ("b", vb), ("c", vc)):
            for r in rows:
                add(
                    f"| ({tag}) | {r['model']} | {r['data']} | {r['params']} | {r['driver']} | "
                    f"{r['backend']} | {r['claimed']} | {r['status']} | "
                    f"{_fmt(r['objective'], '.12g')} | {_fmt(r['bound'], '.12g')} | "
                    f"{_fmt(r['ref'], '.12g')} | {_fmt(r['gap_tol'], '.0e')} | "
                    f"{_fmt(r['true_gap'], '.2e')} |"
                )
        add("")
    add("### Earlier runs")
    add("")
    lines.extend(HISTORY.rstrip("\n").split("\n"))
    add("")
    add("### Checks per model")
    add("")
    add(
        "OPTIMAL results checked by (a) and finite bounds checked by (b) (cells of instances "
        "with a proven reference), their violations, and the largest true gap of an OPTIMAL "
        "result. Where the bound comes from: optframe's own dual point for every model but "
        "SemiSupervisedSVM (SCIP's branch-and-bound bound)."
    )
    add("")
    add(
        "| model | solves | OPTIMAL checked | (a) violations | largest true gap of an OPTIMAL "
        "| bounds checked | (b) violations | (c) violations |"
    )
    add("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in sorted({r["model"] for r in records}):
        mine = [r for r in records if r["model"] == name]
        checked = [r for r in mine if r.get("ref_proven")]
        optimal = [r for r in checked if r["status"] == "optimal"]
        top = max((r["true_gap"] for r in optimal if _finite(r["true_gap"])), default=math.nan)
        add(
            f"| {name} | {len(mine)} | {len(optimal)} | "
            f"{sum(bool(r.get('violation_a')) for r in mine)} | {_fmt(top, '.2e')} | "
            f"{sum(_finite(r['bound']) for r in checked)} | "
            f"{sum(bool(r.get('violation_b')) for r in mine)} | "
            f"{sum(bool(r.get('violation_c')) for r in mine)} |"
        )
    add("")
    add("## Status counts per driver")
    add("")
    lines += _status_table(records, lambda r: r["driver"], "driver")
    add("")
    add("## Status counts per back-end (layer:solver)")
    add("")
    add(
        "Direct cells by the back-end they ran on; AID by its inner back-end; drivers with "
        "their own algorithm apart."
    )
    add("")
    lines += _status_table(records, _backend_key, "back-end")
    add("")
    add("## Status counts per model and data scaling")
    add("")
    lines += _status_table(
        records, lambda r: f"{r['model']} / {r['data'].split('/')[-1]}", "model / scaling"
    )
    add("")
    add("## References")
    add("")
    proven_gaps = [
        t.get("gap", math.nan)
        for i in references
        if i["proven"]
        for t in i["tries"]
        if t.get("how") == i["how"]
    ]
    largest = _fmt(max(proven_gaps, default=math.nan), ".1e")
    add(
        f"{len(references) - len(unproven)} of {len(references)} references proven "
        f"(largest certified gap of a reference used: {largest}); "
        f"reference seconds in all: {sum(i['seconds'] for i in references):.0f}."
    )
    if tightened:
        add("")
        add("Proven references that a sweep cell beat (the lower objective was used):")
        add("")
        for i in tightened:
            add(
                f"- {i['key']}: reference {i['value']:.12g} ({i['how']}), lowest found "
                f"{i['lowest_found']:.12g}"
            )
    if unproven:
        add("")
        add(
            "Instances whose reference could not be proven (their cells are not counted in (a) "
            "and (b); statuses still counted above):"
        )
        add("")
        add("| instance | cells | best objective of the tries | tries (status, certified gap) |")
        add("|---|---:|---:|---|")
        for i in unproven:
            tries = "; ".join(
                f"{t['how']}: {t['status']}"
                + (f", gap {t['gap']:.1e}" if _finite(t.get("gap")) else "")
                for t in i["tries"]
            )
            add(f"| {i['key']} | {i['cells']} | {_fmt(i['value'], '.10g')} | {tries} |")
    add("")
    add("## Claimed optimal, certified otherwise")
    add("")
    add(
        'Cells where the solver or driver claimed optimal (`stats["claimed_status"] == '
        '"optimal"`) and optframe\'s certificate did not prove it (status CONVERGED, or ERROR '
        "for a numerically failed solution), with the certified gap and the true gap against the "
        'reference ("—" when it is not proven). Sorted by model, then by certified gap.'
    )
    add("")
    judged = [r for r in caught if r.get("ref_proven") and _finite(r["true_gap"])]
    wrong = [r for r in judged if r["true_gap"] > r["gap_tol"] + ROUNDING]
    by_model = Counter(r["model"] for r in judged if r not in wrong)
    add(
        f"Of these {len(caught)}, {len(judged)} have a proven reference and a solution: in "
        f"{len(wrong)} the claim was wrong (true gap above gap_tol: the certificate caught a "
        f"solver or driver error), in {len(judged) - len(wrong)} the solution was optimal to "
        "gap_tol but the bound optframe had for it was too loose to prove it ("
        + ", ".join(f"{name} {count}" for name, count in sorted(by_model.items()))
        + ")."
    )
    add("")
    add("| model | data | params | driver | backend | status | certified gap | true gap |")
    add("|---|---|---|---|---|---|---:|---:|")
    for r in sorted(
        caught, key=lambda r: (r["model"], -(r["gap"] if _finite(r["gap"]) else 1e300))
    ):
        tg = _fmt(r["true_gap"], ".2e") if r.get("ref_proven") else "—"
        add(
            f"| {r['model']} | {r['data']} | {r['params']} | {r['driver']} | {r['backend']} | "
            f"{r['status']} | {_fmt(r['gap'], '.2e')} | {tg} |"
        )
    add("")
    errors = [r for r in records if r["status"] == "error"]
    add("## ERROR rows")
    add("")
    if not errors:
        add("None.")
    else:
        add("| model | data | params | driver | backend | claimed | what |")
        add("|---|---|---|---|---|---|---|")
        for r in errors:
            what = (
                r.get("exception")
                or r.get("error_text")
                or r.get("solver_status")
                or "(the result carries no message)"
            )
            what = str(what).replace("|", "\\|").replace("\n", " ")[:220]
            add(
                f"| {r['model']} | {r['data']} | {r['params']} | {r['driver']} | {r['backend']} | "
                f"{r['claimed']} | {what} |"
            )
    add("")
    if cost is not None:
        add("## What the certificate costs")
        add("")
        add(
            "`optframe.certificate.certify(model, result, 1e-6)` (the model's objective and its "
            "dual bound at the solution: what `solve` adds to every result) timed with "
            "`time.perf_counter`, median of 3, against the solve's `result.timings.total`, "
            'one thread. "certificate" is what `solve` adds: certify on the result as '
            "returned (L2SVM keeps the kernel margins that its `meb_solution` computed while the "
            'driver ran, so the certificate reuses them); "from scratch" is certify on a copy of '
            "the solution's arrays, which evaluates everything again. LAD: AID's Set A generator "
            "(the `aid` suite's LAD sets: its largest, 400k x 300, by Direct; AID, which needs "
            "10-20 minutes there and at 400k x 100, at 200k x 100 and 400k x 10); linear SVM: the "
            "suite's largest SVM set (`make_svm_aid` 100k x 50, C = 0.1; DCD on the same model "
            "without intercept); kernels: a random subsample of a9a (10,000 rows; 2,000 with "
            "`--quick`), RBF gamma = 1/m, "
            "C = 1."
        )
        add("")
        add(
            "| data set | n x m | model | driver | back-end | status | solve (s) | certificate (s) "
            "| ratio | certificate from scratch (s) | ratio |"
        )
        add("|---|---|---|---|---|---|---:|---:|---:|---:|---:|")
        for c in cost:
            add(
                f"| {c['data']} | {c['n']:,} x {c['m']} | {c['model']} | {c['driver']} | "
                f"{c['backend']} | {c['status']} | {c['solve']:.2f} | {c['certificate']:.4f} | "
                f"{c['certificate'] / c['solve']:.2%} | {c['cold']:.4f} | "
                f"{c['cold'] / c['solve']:.2%} |"
            )
        add("")
    with open(path, "w") as handle:
        handle.write("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    """Run the sweep and the cost measurement; write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="docs/results/certificates.md")
    parser.add_argument("--quick", action="store_true", help="a small grid (minutes)")
    parser.add_argument("--skip-cost", action="store_true", help="no certificate-cost part")
    parser.add_argument("--jsonl", help="also write one JSON record per solve here")
    parser.add_argument("--save", help="also save everything the report is made of (JSON)")
    parser.add_argument(
        "--models", help="only these models, comma-separated (e.g. SemiSupervisedSVM)"
    )
    parser.add_argument(
        "--from", dest="source", help="write the report from a --save file, solving nothing"
    )
    args = parser.parse_args(argv)

    def log(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    if args.source:
        with open(args.source) as handle:
            saved = json.load(handle)
        write_report(
            args.out, saved["records"], saved["references"], saved["cost"], saved["wall"],
            saved["argv"], saved["quick"], saved["env"],
        )  # fmt: skip
        log(f"wrote {args.out} from {args.source}")
        return 0
    env = environment()  # the revision that is run, before anyone changes the tree
    jsonl = open(args.jsonl, "w") if args.jsonl else None  # noqa: SIM115
    wall: dict[str, float] = {}
    start = time.perf_counter()
    grid = build_grid(args.quick)
    if args.models:
        keep = set(args.models.split(","))
        grid.instances = [i for i in grid.instances if i.model_name in keep]
        grid.cells = [c for c in grid.cells if c.instance.model_name in keep]
    log(f"{len(grid.cells)} solves on {len(grid.instances)} instances")
    try:
        records = sweep(grid, jsonl, log)
    finally:
        if jsonl is not None:
            jsonl.close()
    wall["sweep"] = time.perf_counter() - start
    log(f"sweep: {wall['sweep']:.0f} s")
    cost = None
    if not args.skip_cost:
        t = time.perf_counter()
        try:
            cost = certificate_cost(args.quick, log)
        except Exception:
            traceback.print_exc()
            cost = []
        wall["cost"] = time.perf_counter() - t
    references = [
        {"key": i.key, "cells": sum(1 for c in grid.cells if c.instance is i), **i.ref}
        for i in grid.instances
    ]
    shown = ["--out", args.out] + ["--quick"] * args.quick + ["--skip-cost"] * args.skip_cost
    shown += ["--models", args.models] if args.models else []
    if args.save:
        with open(args.save, "w") as handle:
            json.dump(
                {"records": records, "references": references, "cost": cost, "wall": wall,
                 "argv": shown, "quick": args.quick, "env": env},
                handle, default=float,
            )  # fmt: skip
    write_report(args.out, records, references, cost, wall, shown, args.quick, env)
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
