"""PIQP, the fifth back-end: option mapping, names, time limit, and duals against Clarabel's.

The shared conformance checks (``test_conformance.py``) run PIQP like every other back-end; these
cover what is PIQP's own: it has no time limit, ``threads`` reaches only its parallel KKT solver,
and its multipliers (``y``, ``z_l``, ``z_u``) are turned into optframe's ``d f*/d rhs`` duals.
"""

import time

import instances as inst
import numpy as np
import pytest

import optframe as of
from optframe.backend import BackendResult, SolveOptions
from optframe.data import Dataset, make_knowledge_data
from optframe.drivers import Direct
from optframe.kernels import RBF
from optframe.models import (
    L2SVM,
    KnowledgeBasedSVM,
    KnowledgeSet,
    LADRegression,
    PULearning,
    RegularizedLAD,
    WeightedSVM,
)
from optframe.registry import resolve_backend
from optframe.result import Status
from optframe.solvers import piqp
from optframe.solvers.clarabel import ClarabelCvxpyBackend, ClarabelMatrixBackend
from optframe.solvers.piqp import PiqpCvxpyBackend, PiqpMatrixBackend


def test_common_options_map_to_piqp_settings():
    settings = piqp.piqp_settings(SolveOptions(tol=1e-6, threads=2, max_iter=40, time_limit=5.0))
    assert settings == {
        "verbose": False,
        "eps_abs": 1e-6,
        "eps_rel": 1e-6,
        "eps_duality_gap_abs": 1e-6,
        "eps_duality_gap_rel": 1e-6,
        "num_threads": 2,
        "max_iter": 40,
    }  # no time limit: PIQP has none
    options = SolveOptions(tol=1e-6, solver_options={"eps_abs": 1e-3, "max_iter": 9})
    settings = piqp.piqp_settings(options)
    assert (settings["eps_abs"], settings["eps_rel"], settings["max_iter"]) == (1e-3, 1e-6, 9)


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("piqp", PiqpMatrixBackend),
        ("matrix:piqp", PiqpMatrixBackend),
        ("cvxpy:piqp", PiqpCvxpyBackend),
    ],
)
def test_names_resolve(name, cls):
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([-1.0, -1.0, 1.0, 1.0])
    model = WeightedSVM(Dataset(X=X, y=y), C=1.0)
    assert type(resolve_backend(name, model)) is cls
    assert resolve_backend("auto", model).solver == "clarabel"  # auto is unchanged


@pytest.mark.parametrize("cls", [PiqpMatrixBackend, PiqpCvxpyBackend], ids=["matrix", "cvxpy"])
def test_kkt_solver_by_name(cls):
    options = SolveOptions(tol=1e-8, solver_options={"kkt_solver": "sparse_ldlt_cond"})
    result = cls().solve(inst.qp_box().build(cls.layer), options)
    assert result.status is Status.OPTIMAL, result.message
    assert result.objective == pytest.approx(inst.qp_box().objective, abs=1e-6)


# ------------------------------------------------------------- dense and sparse PIQP solvers
@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize("make", inst.CONTINUOUS, ids=lambda make: make.__name__)
def test_both_piqp_solvers_reach_the_known_answers(make, kind):
    instance = make()
    options = SolveOptions(tol=1e-9, solver_options={"backend": kind})
    result = PiqpMatrixBackend().solve(instance.build("matrix"), options)
    assert result.status is Status.OPTIMAL, result.message
    assert result.message.endswith(f"({kind})")
    assert result.objective == pytest.approx(instance.objective, abs=1e-6)
    for name, expected in instance.primal.items():
        np.testing.assert_allclose(result.values.primal[name], expected, atol=1e-6)
    for name, expected in instance.dual.items():
        np.testing.assert_allclose(result.values.dual[name], expected, atol=1e-6)


@pytest.mark.parametrize("kind", ["dense", "sparse"])
@pytest.mark.parametrize(
    ("make", "status"),
    [(inst.lp_infeasible, Status.INFEASIBLE), (inst.lp_unbounded, Status.UNBOUNDED)],
    ids=["infeasible", "unbounded"],
)
def test_both_piqp_solvers_detect_infeasibility(make, status, kind):
    options = SolveOptions(solver_options={"backend": kind})
    result = PiqpMatrixBackend().solve(make().build("matrix"), options)
    assert result.status is status, result.message


def test_a_dense_hessian_goes_to_the_dense_solver():
    X, y = _svm_primal().data.X, _svm_primal().data.y
    kernel = WeightedSVM(Dataset(X=X, y=y), C=0.8, kernel=RBF(gamma=0.5))
    result = PiqpMatrixBackend().solve(kernel.build("matrix"), SolveOptions())
    assert result.status is Status.OPTIMAL, result.message
    assert result.message.endswith("(dense)")
    sparse = PiqpMatrixBackend().solve(_lad().build("matrix", "dual"), SolveOptions())
    assert sparse.message.endswith("(sparse)")


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"backend": "dense", "kkt_solver": "sparse_ldlt"}, "does not go with"),
        ({"backend": "banded"}, "'dense' or 'sparse'"),
    ],
)
def test_a_wrong_solver_choice_is_an_error_result(options, said, capfd):
    result = PiqpMatrixBackend().solve(
        inst.qp_box().build("matrix"), SolveOptions(solver_options=options)
    )
    assert result.status is Status.ERROR
    assert said in result.message
    assert capfd.readouterr() == ("", "")


def test_the_kkt_solver_picks_the_solver():
    for name, kind in (("dense_cholesky", "dense"), ("sparse_ldlt", "sparse")):
        options = SolveOptions(solver_options={"kkt_solver": name})
        result = PiqpMatrixBackend().solve(inst.qp_box().build("matrix"), options)
        assert result.status is Status.OPTIMAL, result.message
        assert result.message.endswith(f"({kind})")


@pytest.mark.parametrize("cls", [PiqpMatrixBackend, PiqpCvxpyBackend], ids=["matrix", "cvxpy"])
def test_solved_without_the_gap_check_is_converged(cls):
    options = SolveOptions(solver_options={"check_duality_gap": False})
    result = cls().solve(inst.qp_box().build(cls.layer), options)
    assert result.status is Status.CONVERGED, result.message


def test_a_time_limit_spent_before_the_solve_starts():
    result = PiqpMatrixBackend().solve(
        inst.qp_large().build("matrix"), SolveOptions(time_limit=1e-9)
    )
    assert result.status is Status.TIME_LIMIT
    assert result.values is None
    assert "before the solver started" in result.message


@pytest.mark.timing
def test_a_solve_past_the_time_limit_is_stopped():
    # cvxpy's canonicalization alone outlasts the limit; PIQP, which has no time limit, runs in
    # a child process that optframe kills (it used to run to its own end).
    options = SolveOptions(time_limit=1e-9)
    formulation = inst.qp_large().build("cvxpy")  # the model's build is not the solve
    began = time.perf_counter()
    result = PiqpCvxpyBackend().solve(formulation, options)
    assert time.perf_counter() - began < 1.0
    assert result.status is Status.TIME_LIMIT, result.message
    # stopped while cvxpy compiles (the compilation counts against the limit), or in the child
    assert "not solved" in result.message or "stopped by optframe" in result.message
    assert result.values is None


def test_a_late_solve_keeps_its_status():
    late = BackendResult(Status.OPTIMAL, None, seconds=2.0, message="PIQP: PIQP_SOLVED")
    kept = piqp._deadline(late, SolveOptions(time_limit=1.0))
    assert kept.status is Status.OPTIMAL
    assert "past the time limit of 1 s" in kept.message
    assert piqp._deadline(late, SolveOptions(time_limit=3.0)) is late
    limit = BackendResult(Status.ITERATION_LIMIT, None, seconds=2.0, message="PIQP: x")
    assert piqp._deadline(limit, SolveOptions(time_limit=1.0)).status is Status.TIME_LIMIT
    assert piqp._deadline(limit, SolveOptions()).status is Status.ITERATION_LIMIT


# ------------------------------------------------------------------- duals against Clarabel's
def _svm_primal() -> WeightedSVM:
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 3))
    y = np.where(X @ np.array([1.0, -0.5, 0.3]) + 0.4 * rng.normal(size=40) > 0, 1.0, -1.0)
    return WeightedSVM(Dataset(X=X, y=y), C=0.8, sample_weight=rng.uniform(0.5, 2.0, 40))


def _lad() -> LADRegression:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    y = X @ np.array([0.7, -1.2]) + 0.3 + rng.laplace(size=40)
    return LADRegression(Dataset(X=X, y=y))


@pytest.mark.parametrize(
    ("make", "form"),
    [
        (_svm_primal, "primal"),
        (_svm_primal, "dual"),
        (inst.qp_large, None),
        (_lad, "primal"),
        (_lad, "dual"),
    ],
    ids=["svm-primal", "svm-dual", "qp_large", "lad-primal", "lad-dual"],
)
@pytest.mark.parametrize(
    ("piqp_cls", "clarabel_cls"),
    [(PiqpMatrixBackend, ClarabelMatrixBackend), (PiqpCvxpyBackend, ClarabelCvxpyBackend)],
    ids=["matrix", "cvxpy"],
)
def test_duals_match_clarabels(make, form, piqp_cls, clarabel_cls):
    source = make()
    layer = piqp_cls.layer

    def build():
        return source.build(layer) if form is None else source.build(layer, form)

    options = SolveOptions(tol=1e-9)
    ours = piqp_cls().solve(build(), options)
    reference = clarabel_cls().solve(build(), options)
    assert ours.status is Status.OPTIMAL, ours.message
    assert reference.status is Status.OPTIMAL, reference.message
    assert ours.objective == pytest.approx(reference.objective, rel=1e-6, abs=1e-6)
    assert set(ours.values.dual) == set(reference.values.dual)
    assert ours.values.dual  # every instance here has constraints
    for name, expected in reference.values.dual.items():
        # LP duals need not be unique; these instances' are (the two solvers agree).
        np.testing.assert_allclose(ours.values.dual[name], expected, rtol=1e-4, atol=1e-5)


def test_solve_through_the_front_door():
    result = of.solve(_svm_primal(), backend="piqp")
    assert result.status is of.Status.OPTIMAL, result.stats
    assert result.backend == "matrix:piqp"


# ------------------------------------------------------------------ the README's PIQP column
def _classes(n=60, seed=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X @ np.array([1.0, 0.5, -0.7]) + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Dataset(X=X, y=y)


def _pu():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(1, 1, (8, 3)), rng.normal(1, 1, (16, 3)), rng.normal(-1, 1, (24, 3))])
    return Dataset(X=X, y=np.r_[np.ones(8), np.zeros(40)])


def _knowledge():
    # tests/models/test_knowledge_svm.py's instance. On make_knowledge_data(30, 20, 100) PIQP's
    # point is as accurate as Clarabel's, but the model's dual point fails its repair step by
    # 3e-18 (a strict sign test), so that certificate has no bound and the status is CONVERGED.
    train, _ = make_knowledge_data(40, 20, 200, random_state=0, block_size=10)
    sets = [KnowledgeSet(k["B"], k["d"], k["label"]) for k in train.meta["knowledge"]]
    return KnowledgeBasedSVM(train, knowledge=sets, lam1=2e-3, lam2=1e-2, rho=1.0)


README_CELLS = {
    "LADRegression": (_lad, ("dual", "primal"), ("matrix", "cvxpy")),
    "WeightedSVM": (_svm_primal, ("primal", "dual"), ("matrix", "cvxpy")),
    "WeightedSVM-rbf": (
        lambda: WeightedSVM(_classes(), C=1.0, kernel=RBF(gamma=0.5)),
        ("dual",),
        ("matrix", "cvxpy"),
    ),
    "L2SVM": (lambda: L2SVM(_classes(), C=1.0), ("dual", "primal"), ("matrix", "cvxpy")),
    "RegularizedLAD": (
        lambda: RegularizedLAD(_lad().data),
        ("dual", "primal"),
        ("matrix",),
    ),
    "PULearning": (lambda: PULearning(_pu(), prior=0.4, lam=1e-2), ("dual", "primal"), ("cvxpy",)),
    "KnowledgeBasedSVM": (_knowledge, (None,), ("cvxpy",)),
}


@pytest.mark.parametrize(
    ("make", "form", "layer"),
    [
        pytest.param(make, form, layer, id=f"{name}-{form or 'default'}-{layer}")
        for name, (make, forms, layers) in README_CELLS.items()
        for form in forms
        for layer in layers
    ],
)
def test_every_readme_cell_is_optimal_and_agrees_with_clarabel(make, form, layer):
    model = make()
    driver = Direct(form=form) if form else Direct()
    ours = of.solve(model, driver, backend=f"{layer}:piqp")
    reference = of.solve(model, Direct(form=form) if form else Direct(), backend="clarabel")
    assert ours.status is of.Status.OPTIMAL, (ours.status, ours.stats)
    assert reference.status is of.Status.OPTIMAL, (reference.status, reference.stats)
    assert ours.objective == pytest.approx(reference.objective, rel=1e-6, abs=1e-6)
