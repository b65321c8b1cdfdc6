"""Bad input gets a named OptframeError with a message a user can act on (issue 15, item 4).

Each test here failed before its fix with a generic exception (TypeError, ValueError,
AttributeError, OverflowError, IndexError, PermissionError, MatReadError), with a bad value
accepted, or with a numpy scalar refused.
"""

import math
import re
from pathlib import Path

import numpy as np
import pytest

import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.data.readers import read_mat
from optframe.errors import DataError, ModelError, OptframeError, UnknownBackend, UnknownDriver
from optframe.kernels import RBF, Polynomial
from optframe.models import (
    L2SVM,
    KnowledgeBasedSVM,
    LADRegression,
    PULearning,
    SemiSupervisedSVM,
    WeightedSVM,
)


def _svm_data(n=20, weights=None):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return Dataset(X=X, y=y, sample_weight=weights)


def _pu_data(weights=None):
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(1, 1, (10, 2)), rng.normal(-1, 1, (20, 2))]
    return Dataset(X=X, y=np.r_[np.ones(5), np.zeros(25)], sample_weight=weights)


def _s3vm_data():
    data = _svm_data()
    y = data.y.copy()
    y[:8] = 0.0
    y[8], y[9] = 1.0, -1.0
    return Dataset(X=data.X, y=y)


def _lad():
    return LADRegression(Dataset(X=[[0.0], [1.0], [2.0]], y=[0.0, 1.0, 5.0]))


# ------------------------------------------------------------------------------------- kernels
@pytest.mark.parametrize("gamma", ["1", None, math.inf, -math.inf, math.nan, True, 0.0, -1.0])
def test_rbf_refuses_bad_gamma(gamma):
    with pytest.raises(ModelError, match="RBF: gamma must be a finite number > 0"):
        RBF(gamma=gamma)


def test_rbf_none_or_scale_says_where_scale_lives():
    for gamma in (None, "scale"):
        with pytest.raises(ModelError, match=r"optframe\.sklearn"):
            RBF(gamma=gamma)


def test_kernels_take_numpy_scalars_and_store_plain_numbers():
    kernel = RBF(gamma=np.float32(0.5))
    assert kernel.gamma == 0.5
    assert type(kernel.gamma) is float
    assert RBF(gamma=1) == RBF(gamma=1.0)
    poly = Polynomial(degree=np.int64(2), gamma=np.float32(0.5), coef0=np.float64(1.0))
    assert (poly.degree, poly.gamma, poly.coef0) == (2, 0.5, 1.0)
    assert type(poly.degree) is int
    assert Polynomial(degree=2.0).degree == 2


@pytest.mark.parametrize(
    "kwargs",
    [
        {"degree": math.nan},
        {"degree": math.inf},
        {"degree": 2.5},
        {"degree": 0},
        {"degree": "2"},
        {"degree": None},
        {"coef0": math.nan},
        {"coef0": math.inf},
        {"coef0": -1.0},
        {"coef0": "1"},
        {"gamma": math.inf},
        {"gamma": None},
    ],
)
def test_polynomial_refuses_bad_parameters(kwargs):
    with pytest.raises(ModelError, match="Polynomial"):
        Polynomial(**kwargs)


# -------------------------------------------------------------------------------------- models
def test_models_take_numpy_scalars():
    assert WeightedSVM(_svm_data(), C=np.float32(1)).C == 1.0
    assert L2SVM(_svm_data(), C=np.int64(2)).C == 2.0
    s3vm = SemiSupervisedSVM(
        _s3vm_data(), C_labeled=np.float32(2), C_unlabeled=np.float32(0.5), big_m=np.float32(50)
    )
    assert (s3vm.C_labeled, s3vm.C_unlabeled, s3vm.big_m) == (2.0, 0.5, 50.0)
    pu = PULearning(_pu_data(), prior=np.float32(0.5), lam=np.float32(0.01))
    assert pu.prior == 0.5
    assert pu.lam == pytest.approx(0.01)
    kb = KnowledgeBasedSVM(_svm_data(), lam1=np.float32(0.01), lam2=np.float16(0.01))
    assert isinstance(kb.lam1, float)


@pytest.mark.parametrize(
    "make",
    [
        lambda: WeightedSVM(_svm_data(), C="1"),
        lambda: WeightedSVM(_svm_data(), C=None),
        lambda: WeightedSVM(_svm_data(), C=True),
        lambda: L2SVM(_svm_data(), C="1"),
        lambda: SemiSupervisedSVM(_s3vm_data(), C_labeled="1"),
        lambda: SemiSupervisedSVM(_s3vm_data(), C_labeled=None),
        lambda: SemiSupervisedSVM(_s3vm_data(), C_unlabeled="0"),
        lambda: SemiSupervisedSVM(_s3vm_data(), big_m="100"),
        lambda: SemiSupervisedSVM(_s3vm_data(), big_m=math.nan),
        lambda: PULearning(_pu_data(), prior="0.5"),
        lambda: PULearning(_pu_data(), lam="0.1"),
        lambda: KnowledgeBasedSVM(_svm_data(), lam1="0.1"),
    ],
)
def test_models_refuse_strings_and_none(make):
    with pytest.raises(ModelError, match="must be"):
        make()


def test_s3vm_keeps_c_unlabeled_zero():
    assert SemiSupervisedSVM(_s3vm_data(), C_unlabeled=0).C_unlabeled == 0.0


@pytest.mark.parametrize("lam", [1e-300, 1e-160, 1e-13])
def test_pu_learning_refuses_a_lam_below_the_usable_range(lam):
    with pytest.raises(ModelError, match=r"lam must be >= 1e-12.*\[1e-12, 1e-6\]"):
        PULearning(_pu_data(), prior=0.4, lam=lam)


def test_pu_learning_takes_the_smallest_usable_lam():
    model = PULearning(_pu_data(), prior=0.4, lam=1e-12)
    assert math.isfinite(model.c1)
    assert math.isfinite(model.c1**2)


def test_l2svm_refuses_sample_weights():
    weights = np.linspace(0.5, 2.0, 20)
    with pytest.raises(DataError, match=r"L2SVM does not support sample weights.*WeightedSVM"):
        L2SVM(_svm_data(weights=weights))
    L2SVM(_svm_data(weights=np.ones(20)))  # all ones change nothing


def test_pu_learning_refuses_sample_weights():
    with pytest.raises(DataError, match="PULearning does not support sample weights"):
        PULearning(_pu_data(weights=np.linspace(0.5, 2.0, 30)), prior=0.4, lam=0.1)
    PULearning(_pu_data(weights=np.ones(30)), prior=0.4, lam=0.1)


# --------------------------------------------------------------------------------- solve()
@pytest.mark.parametrize(
    ("kwargs", "error", "text"),
    [
        ({"backend": None}, UnknownBackend, "backend must be a name"),
        ({"backend": 3}, UnknownBackend, "backend must be a name"),
        ({"driver": 3}, UnknownDriver, "driver must be a driver name"),
        ({"driver": None}, UnknownDriver, "driver must be a driver name"),
        ({"max_iter": -5}, ModelError, "max_iter must be an integer >= 1"),
        ({"max_iter": 0}, ModelError, "max_iter must be an integer >= 1"),
        ({"max_iter": 2.5}, ModelError, "max_iter"),
        ({"max_iter": "5"}, ModelError, "max_iter"),
        ({"tol": -1.0}, ModelError, "tol must be"),
        ({"tol": "1e-6"}, ModelError, "tol must be"),
        ({"tol": math.nan}, ModelError, "tol must be"),
        ({"tol": math.inf}, ModelError, "tol must be a finite number >= 0"),
        ({"time_limit": -1.0}, ModelError, "time_limit must be"),
        ({"time_limit": 0}, ModelError, "time_limit must be"),
        ({"time_limit": "1"}, ModelError, "time_limit must be"),
        ({"threads": 0}, ModelError, "threads must be"),
        ({"verbose": "yes"}, ModelError, "verbose must be"),
        ({"callback": 3}, ModelError, "callback must be"),
        ({"solver_options": [("presolve", "off")]}, ModelError, "solver_options must be"),
        ({"solver_options": {1: 2}}, ModelError, "keys must be strings"),
    ],
)
def test_solve_refuses_bad_arguments(kwargs, error, text):
    with pytest.raises(error, match=text):
        of.solve(_lad(), **kwargs)


def test_solve_takes_numpy_scalars_and_an_infinite_time_limit():
    result = of.solve(
        _lad(), max_iter=np.int64(100), tol=np.float32(1e-7), time_limit=math.inf, threads=1
    )
    assert result.objective == pytest.approx(1.5)


def _backends_for(problem_class):
    from optframe import registry

    for solver, classes in sorted(registry.backends().items()):
        for cls in classes:
            if problem_class in cls.supports:
                yield f"{cls.layer}:{solver}"


@pytest.mark.parametrize("backend", list(_backends_for(of.ProblemClass.LP)))
def test_an_unknown_solver_option_is_an_error_result_naming_it(backend):
    model = _lad()
    if not model.offers(backend.split(":")[0]):
        pytest.skip(f"LADRegression has no {backend} layer")
    result = of.solve(model, backend=backend, solver_options={"no_such_option": 1})
    assert result.status is of.Status.ERROR
    assert "no_such_option" in result.stats["solver_status"]


def test_scip_suggests_the_parameter_meant():
    result = of.solve(_lad(), backend="matrix:scip", solver_options={"limits/tim": 5})
    assert result.status is of.Status.ERROR
    assert "did you mean 'limits/time'" in result.stats["solver_status"]
    nested = of.solve(
        _lad(), backend="cvxpy:scip", solver_options={"scip_params": {"limits/time": 5}}
    )
    assert nested.status is not of.Status.ERROR


# ------------------------------------------------------------------------------ S3VMClassifier
def test_s3vm_classifier_without_labeled_rows():
    from optframe.sklearn import S3VMClassifier

    X = np.random.default_rng(0).normal(size=(3, 2))
    with pytest.raises(DataError, match=r"labeled rows of two classes.*unlabeled=-1"):
        S3VMClassifier().fit(X, [-1, -1, -1])


# ----------------------------------------------------------------------------------------- data
def test_an_unreadable_data_folder_is_a_data_error(tmp_path, monkeypatch):
    # Tests run as root, which reads everything: simulate a folder this user may not search.
    root = tmp_path / "shared"
    (root / "pmlb").mkdir(parents=True)
    real_stat = Path.stat

    def stat(self, *args, **kwargs):
        if root in self.parents:
            raise PermissionError(13, "Permission denied", str(self))
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", stat)
    monkeypatch.setenv("OPTFRAME_DATA", str(root))
    monkeypatch.setenv("OPTFRAME_OFFLINE", "1")
    with pytest.raises(
        DataError, match=rf"Could not read the data folder {re.escape(str(root))} .*OPTFRAME_DATA"
    ):
        load_dataset("cpusmall")
    with pytest.raises(DataError, match="Could not read the data folder"):
        of.data.list_datasets()


def test_an_empty_mat_file_is_a_data_error(tmp_path):
    empty = tmp_path / "ALLAML.mat"
    empty.write_bytes(b"")
    with pytest.raises(
        DataError, match=rf"MATLAB file {re.escape(str(empty))} is empty \(0 bytes\)"
    ):
        read_mat(empty)
    truncated = tmp_path / "colon.mat"
    truncated.write_bytes(b"MATLAB 5.0 MAT-file")
    with pytest.raises(DataError, match=rf"Could not read MATLAB file {re.escape(str(truncated))}"):
        read_mat(truncated)


def test_an_empty_mat_file_found_by_name_is_a_data_error(tmp_path, monkeypatch):
    import lzma

    folder = tmp_path / "asu_fs"
    folder.mkdir()
    (folder / "ALLAML.mat.xz").write_bytes(lzma.compress(b""))
    monkeypatch.setenv("OPTFRAME_DATA", str(tmp_path))
    monkeypatch.setenv("OPTFRAME_OFFLINE", "1")
    with pytest.raises(DataError, match=r"ALLAML\.mat\.xz is empty"):
        load_dataset("ALLAML")


def test_every_error_above_is_an_optframe_error():
    for error in (DataError, ModelError, UnknownBackend, UnknownDriver):
        assert issubclass(error, OptframeError)


# ------------------------------------------------------------------------------------ drivers
def test_driver_options_take_numpy_scalars():
    from optframe.drivers import DCD, SMO, AggregateDisaggregate, CoreVectorMachine, FrankWolfe

    fw = FrankWolfe(
        eps=np.float32(1e-4),
        sample_size=np.int64(30),
        init_size=np.int64(10),
        check_every=np.int64(100),
    )
    assert (fw.eps, fw.sample_size, fw.init_size, fw.check_every) == (
        pytest.approx(1e-4),
        30,
        10,
        100,
    )
    assert type(fw.eps) is float
    shrinking = FrankWolfe(
        variant="mfw", shrinking=True, active_extra=np.int64(5), active_limit=np.float32(0.5)
    )
    assert (shrinking.active_extra, shrinking.active_limit) == (5, 0.5)
    assert CoreVectorMachine(redraws=np.int64(3), eps=np.float32(1e-4)).redraws == 3
    assert type(SMO(tol=np.float32(1e-3)).tol) is float
    assert DCD(max_epochs=np.int64(5)).max_epochs == 5
    assert AggregateDisaggregate(max_iter=np.int64(5)).max_iter == 5


@pytest.mark.parametrize(
    "make",
    [
        lambda d: d.FrankWolfe(check_every="5"),
        lambda d: d.FrankWolfe(eps="1e-3"),
        lambda d: d.FrankWolfe(sample_size=5.5),
        lambda d: d.CoreVectorMachine(check_every="5"),
        lambda d: d.CoreVectorMachine(redraws=True),
        lambda d: d.SMO(tol="1e-3"),
        lambda d: d.SMO(check_every="5"),
        lambda d: d.SMO(threads="2"),
        lambda d: d.DCD(tol="1e-3"),
        lambda d: d.DCD(max_epochs="5"),
        lambda d: d.ADMM(mu="1"),
        lambda d: d.ADMM(adapt_ratio=math.nan),
        lambda d: d.AggregateDisaggregate(tol="1e-3"),
        lambda d: d.AggregateDisaggregate(max_iter="5"),
        lambda d: d.AggregateDisaggregate(r0="0.1"),
    ],
)
def test_driver_options_refuse_strings_with_a_model_error(make):
    import optframe.drivers as drivers

    with pytest.raises(ModelError, match="must be"):
        make(drivers)
