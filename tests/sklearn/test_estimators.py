"""optframe.sklearn: scikit-learn's estimator checks, agreement with direct solves, drivers."""

import doctest
import importlib
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.datasets import make_blobs, make_regression
from sklearn.model_selection import GridSearchCV
from sklearn.multiclass import OneVsRestClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

import optframe as of
from optframe.data import Dataset
from optframe.drivers import SMO, AggregateDisaggregate, FrankWolfe
from optframe.errors import ConvergenceWarning, DataError, ModelError, UnknownDriver
from optframe.models import (
    L2SVM,
    KnowledgeBasedSVM,
    KnowledgeSet,
    LADRegression,
    PULearning,
    SemiSupervisedSVM,
    WeightedSVM,
)
from optframe.sklearn import (
    KnowledgeBasedSVMClassifier,
    L2SVMClassifier,
    LADRegressor,
    PUClassifier,
    QuantileRegressor,
    S3VMClassifier,
    SVMClassifier,
)

CHECKED = [
    LADRegressor(),
    QuantileRegressor(quantile=0.7, alpha=0.01),
    SVMClassifier(),
    L2SVMClassifier(),
    S3VMClassifier(),
    # The checks' PU data: rows labeled 0 (unlabeled) are all negatives, a true prior of 0 among
    # them; a prior near it is the faithful choice (prior=0.5 there classifies half as positive).
    PUClassifier(prior=0.1),
    # check_sample_weight_equivalence compares decision values at rtol 1e-7; the elastic net's
    # small l2 weight (lam2=0.01) leaves w sensitive to the interior-point gap, so ask for 1e-12.
    KnowledgeBasedSVMClassifier(solve_options={"tol": 1e-12}),
]

EXPECTED_FAILURES = {
    S3VMClassifier: {
        "check_classifiers_classes": (
            "the check also fits labels [-1, 1]; -1 marks unlabeled rows (scikit-learn's "
            "semi-supervised convention), which leaves one class. The check exempts scikit-learn's "
            "own semi-supervised classifiers from that case by name."
        ),
    },
}


def _expected_failures(estimator):
    return EXPECTED_FAILURES.get(type(estimator), {})


@parametrize_with_checks(CHECKED, expected_failed_checks=_expected_failures)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ------------------------------------------------------------------------------------- data
def _blobs(n=40, seed=0, labels=("neg", "pos")):
    X, y = make_blobs(n_samples=n, centers=[[-1.5, -1.0], [1.5, 1.0]], random_state=seed)
    return X, np.asarray(labels)[y], 2.0 * y - 1.0


def _close(a, b, rel=1e-6):
    return abs(a - b) <= rel * max(1.0, abs(b))


# ------------------------------------------------------------------- agreement with direct solves
def test_lad_regressor_matches_direct_solve():
    X, y = make_regression(n_samples=60, n_features=4, noise=5.0, random_state=1)
    w = np.random.default_rng(0).integers(0, 3, size=60).astype(float)
    est = LADRegressor().fit(X, y, sample_weight=w)
    model = LADRegression(Dataset(X=X, y=y, sample_weight=w))
    ref = of.solve(model, driver="direct", backend="highs")
    assert _close(est.result_.objective, ref.objective)
    fitted = {"beta": est.coef_, "intercept": [est.intercept_]}
    assert _close(model.objective(fitted), ref.objective)
    assert np.allclose(est.predict(X), X @ est.coef_ + est.intercept_)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_classifier_matches_direct_solve(kernel):
    X, labels, signs = _blobs()
    est = SVMClassifier(C=2.0, kernel=kernel, gamma=0.5).fit(X, labels)
    model = WeightedSVM(
        Dataset(X=X, y=signs), C=2.0, kernel=of.RBF(0.5) if kernel == "rbf" else "linear"
    )
    ref = of.solve(model, driver="direct", backend="clarabel")
    assert _close(est.result_.objective, ref.objective)
    assert list(est.classes_) == ["neg", "pos"]
    # the fitted attributes reproduce the decision function and the SVM's objective
    if kernel == "linear":
        fitted = {"w": est.coef_.ravel(), "intercept": est.intercept_}
        assert _close(model.objective(fitted), ref.objective, rel=1e-5)
    gram = of.RBF(0.5)(est.support_vectors_, X) if kernel == "rbf" else est.support_vectors_ @ X.T
    assert np.allclose(est.dual_coef_ @ gram + est.intercept_, est.decision_function(X), atol=1e-5)


def test_l2svm_classifier_matches_direct_solve():
    X, labels, signs = _blobs(seed=2)
    est = L2SVMClassifier(C=3.0).fit(X, labels)
    model = L2SVM(Dataset(X=X, y=signs), C=3.0)
    ref = of.solve(model, driver="direct", backend="clarabel")
    assert _close(est.result_.objective, ref.objective)
    fitted = {"w": est.coef_.ravel(), "intercept": est.intercept_}
    assert _close(model.objective(fitted), ref.objective, rel=1e-5)
    assert est.rho_ > 0


def _s3vm_data():
    X, _, signs = _blobs(n=16, seed=3)
    y = np.full(16, -1)
    labeled = [0, 1, 2, 3, 4, 5]
    y[labeled] = (signs[labeled] > 0).astype(int)  # classes 0 and 1, -1 unlabeled
    return X, y, signs


def test_s3vm_classifier_matches_direct_solve():
    X, y, _ = _s3vm_data()
    assert set(y[:6]) == {0, 1}
    est = S3VMClassifier(C=5.0, C_unlabeled=1.0).fit(X, y)
    target = np.where(y == -1, 0.0, 2.0 * y - 1.0)
    model = SemiSupervisedSVM(Dataset(X=X, y=target), C_labeled=5.0, C_unlabeled=1.0)
    ref = of.solve(model, driver="direct", backend="scip")
    assert ref.status is of.Status.OPTIMAL
    assert _close(est.result_.objective, ref.objective, rel=1e-5)
    assert est.result_.model == "SemiSupervisedSVM"
    fitted = {"w": est.coef_.ravel(), "intercept": est.intercept_}
    assert _close(model.objective(fitted), ref.objective, rel=1e-5)
    # transduction: given labels where known, the sign of f elsewhere
    assert np.array_equal(est.transduction_[:6], y[:6])
    assert np.array_equal(est.transduction_[6:], est.predict(X[6:]))


def test_s3vm_without_unlabeled_rows_is_the_svm():
    X, labels, signs = _blobs(seed=4)
    est = S3VMClassifier(C=2.0).fit(X, labels)
    assert est.result_.model == "WeightedSVM"
    ref = of.solve(WeightedSVM(Dataset(X=X, y=signs), C=2.0))
    assert _close(est.result_.objective, ref.objective)
    assert np.array_equal(est.transduction_, labels)


def test_s3vm_custom_unlabeled_marker_with_string_labels():
    X, y, _ = _s3vm_data()
    names = np.where(y == -1, "?", np.where(y == 1, "yes", "no")).astype(object)
    est = S3VMClassifier(unlabeled="?").fit(X, names)
    numeric = S3VMClassifier().fit(X, y)
    assert list(est.classes_) == ["no", "yes"]
    assert set(est.transduction_) <= {"no", "yes"}
    assert _close(est.result_.objective, numeric.result_.objective, rel=1e-5)


def test_pu_classifier_matches_direct_solve_and_convention():
    rng = np.random.default_rng(5)
    X = np.vstack([rng.normal(2.0, 0.7, (30, 2)), rng.normal(-2.0, 0.7, (30, 2))])
    truth = np.r_[np.ones(30), np.zeros(30)]
    y = np.zeros(60, dtype=int)
    y[:10] = 1  # ten labeled positives; 20 positives and 30 negatives unlabeled
    est = PUClassifier(prior=0.4, lam=0.05).fit(X, y)
    model = PULearning(Dataset(X=X, y=y.astype(float)), prior=0.4, lam=0.05)
    ref = of.solve(model, driver="direct", backend="clarabel")
    assert _close(est.result_.objective, ref.objective, rel=1e-5)
    assert list(est.classes_) == [0, 1]
    assert np.mean(est.predict(X) == truth) > 0.95
    assert est.dual_coef_.shape == (1, 60)


def test_knowledge_classifier_matches_direct_solve_and_label_mapping():
    X = np.array([[0.0], [1.0], [3.0], [4.0]])
    y = np.array(["low", "low", "high", "high"])  # classes_ = ["high", "low"]: "low" is +1
    # "x <= -2 implies low" (label +1 = classes_[1] = "low")
    kset = KnowledgeSet(B=[[1.0]], d=[-2.0], label=+1)
    est = KnowledgeBasedSVMClassifier(lam2=0.1, knowledge=[kset]).fit(X, y)
    signs = np.where(y == "low", 1.0, -1.0)
    model = KnowledgeBasedSVM(Dataset(X=X, y=signs), lam1=0.01, lam2=0.1, knowledge=[kset])
    ref = of.solve(model, driver="direct", backend="clarabel")
    assert _close(est.result_.objective, ref.objective, rel=1e-5)
    assert list(est.classes_) == ["high", "low"]
    assert est.predict([[-3.0], [5.0]]).tolist() == ["low", "high"]


def test_knowledge_sample_weights_are_an_average():
    X, y = make_blobs(n_samples=30, centers=[[-1.0, 0.0], [1.0, 0.5]], random_state=6)
    labels = np.asarray(["a", "b"])[y]
    w = np.arange(30) % 4
    # with lam2 = 1 the solution moves when the loss is scaled (with a weak regularizer it sits
    # at a vertex of the piecewise-linear loss, which scaling does not move)
    est = KnowledgeBasedSVMClassifier(lam2=1.0)
    weighted = clone(est).fit(X, labels, sample_weight=w)
    scaled = clone(est).fit(X, labels, sample_weight=5 * w)
    repeated = clone(est).fit(np.repeat(X, w, axis=0), np.repeat(labels, w))
    for other in (scaled, repeated):
        assert np.allclose(weighted.coef_, other.coef_, atol=1e-5)


# ------------------------------------------------------------------------ Pipeline, GridSearchCV
def test_pipeline_and_grid_search():
    X, labels, _ = _blobs(n=60, seed=7)
    X = X * [100.0, 0.01] + [5.0, -3.0]
    pipe = make_pipeline(StandardScaler(), SVMClassifier())
    search = GridSearchCV(pipe, {"svmclassifier__C": [0.1, 1.0, 10.0]}, cv=3).fit(X, labels)
    assert search.best_params_["svmclassifier__C"] in (0.1, 1.0, 10.0)
    assert search.score(X, labels) > 0.9
    fitted = search.best_estimator_[-1]
    assert isinstance(fitted.result_, of.Result)
    assert fitted.result_.status.is_success

    Xr, yr = make_regression(n_samples=40, n_features=3, noise=1.0, random_state=0)
    grid = GridSearchCV(
        make_pipeline(StandardScaler(), LADRegressor()),
        {"ladregressor__fit_intercept": [True, False]},
        cv=2,
    ).fit(Xr, yr)
    assert grid.best_params_ == {"ladregressor__fit_intercept": True}


# ------------------------------------------------------------------------------ other drivers
def test_lad_regressor_with_aggregate_disaggregate():
    X, y = make_regression(n_samples=200, n_features=3, noise=3.0, random_state=2)
    est = LADRegressor(driver=AggregateDisaggregate()).fit(X, y)
    ref = LADRegressor().fit(X, y)
    assert est.result_.driver == "aid"
    assert _close(est.result_.objective, ref.result_.objective, rel=1e-6)


def test_svm_classifier_with_smo_by_instance_and_by_name():
    X, labels, _ = _blobs(n=80, seed=8)
    ref = SVMClassifier(kernel="rbf").fit(X, labels)
    for driver in (SMO(tol=1e-6), "smo"):
        est = clone(SVMClassifier(kernel="rbf", driver=driver)).fit(X, labels)
        assert est.result_.driver == "smo"
        assert _close(est.result_.objective, ref.result_.objective, rel=1e-3)
        assert np.mean(est.predict(X) == ref.predict(X)) >= 0.98


def test_l2svm_classifier_with_modified_frank_wolfe():
    X, labels, _ = _blobs(n=80, seed=9)
    est = L2SVMClassifier(kernel="rbf", driver=FrankWolfe(variant="mfw")).fit(X, labels)
    ref = L2SVMClassifier(kernel="rbf").fit(X, labels)
    assert est.result_.driver == "frank_wolfe"
    assert _close(est.result_.objective, ref.result_.objective, rel=1e-4)
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.98


def test_pu_classifier_with_smo():
    rng = np.random.default_rng(10)
    X = np.vstack([rng.normal(1.5, 1.0, (40, 2)), rng.normal(-1.5, 1.0, (40, 2))])
    y = np.zeros(80, dtype=int)
    y[:12] = 1
    est = PUClassifier(prior=0.35, lam=0.05, driver=SMO(tol=1e-6)).fit(X, y)
    ref = PUClassifier(prior=0.35, lam=0.05).fit(X, y)
    assert _close(est.result_.objective, ref.result_.objective, rel=1e-4)


def test_iteration_limit_warns_and_keeps_the_iterate():
    X, labels, _ = _blobs(n=60, seed=11)
    est = SVMClassifier(driver="smo", solve_options={"max_iter": 2})
    with pytest.warns(ConvergenceWarning, match="iteration_limit"):
        est.fit(X, labels)
    assert est.result_.status is of.Status.ITERATION_LIMIT
    assert est.predict(X).shape == (60,)


# ----------------------------------------------------------------------- against scikit-learn
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_svm_classifier_agrees_with_sklearn_svc(kernel):
    X, labels, _ = _blobs(n=120, seed=12)
    X_test, _, _ = _blobs(n=200, seed=13)
    ours = SVMClassifier(C=1.0, kernel=kernel).fit(X, labels)
    theirs = SVC(C=1.0, kernel=kernel, tol=1e-6).fit(X, labels)
    assert np.array_equal(ours.predict(X), theirs.predict(X))
    assert np.array_equal(ours.predict(X_test), theirs.predict(X_test))
    assert np.allclose(ours.decision_function(X_test), theirs.decision_function(X_test), atol=1e-3)
    if kernel == "linear":
        assert np.allclose(ours.coef_, theirs.coef_, atol=1e-3)


# -------------------------------------------------------------------------- labels and refits
def test_binary_labels_are_mapped_and_restored():
    X, labels, _ = _blobs(seed=14, labels=(7, 3))
    est = SVMClassifier().fit(X, labels)
    assert list(est.classes_) == [3, 7]
    decision = est.decision_function(X)
    assert np.array_equal(est.predict(X), np.where(decision > 0, 7, 3))
    assert np.mean(est.predict(X) == labels) > 0.95


def test_one_vs_rest_wraps_the_binary_classifiers():
    X, y = make_blobs(n_samples=60, centers=3, random_state=0)
    ours = OneVsRestClassifier(SVMClassifier()).fit(X, y).predict(X)
    theirs = OneVsRestClassifier(SVC(kernel="linear", tol=1e-6)).fit(X, y).predict(X)
    assert np.mean(ours == theirs) >= 0.98
    assert np.mean(ours == y) > 0.85


def test_refit_forgets_attributes_of_the_earlier_fit():
    X, labels, _ = _blobs(seed=15)
    est = SVMClassifier().fit(X, labels)
    assert hasattr(est, "coef_")
    est.set_params(kernel="rbf").fit(X, labels)
    assert not hasattr(est, "coef_")
    assert est.predict(X).shape == labels.shape


def test_sparse_input_stays_usable():
    X, labels, _ = _blobs(seed=16)
    dense = SVMClassifier().fit(X, labels)
    sparse = SVMClassifier().fit(sp.csr_matrix(X), labels)
    assert _close(sparse.result_.objective, dense.result_.objective)
    assert np.array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))


# ---------------------------------------------------------------------------------- bad input
def test_multiclass_targets_are_refused():
    X, y = make_blobs(n_samples=30, centers=3, random_state=0)
    for est in (SVMClassifier(), L2SVMClassifier(), KnowledgeBasedSVMClassifier()):
        with pytest.raises(DataError, match="Only binary classification is supported"):
            est.fit(X, y)


def test_one_class_is_refused():
    X, _, _ = _blobs()
    with pytest.raises(DataError, match="1 class"):
        SVMClassifier().fit(X, np.zeros(len(X)))
    with pytest.raises(DataError, match="1 class"):  # every row unlabeled but one class
        S3VMClassifier().fit(X, np.r_[0, np.full(len(X) - 1, -1)])
    with pytest.raises(DataError, match="needs labeled positives and unlabeled rows"):
        PUClassifier(prior=0.3).fit(X, np.ones(len(X)))


def test_continuous_targets_are_refused():
    X, _, _ = _blobs()
    with pytest.raises(ValueError, match="Unknown label type"):
        SVMClassifier().fit(X, np.linspace(0, 1, len(X)))


@pytest.mark.parametrize(
    ("est", "match"),
    [
        (SVMClassifier(C=0.0), "C must be a finite number > 0"),
        (SVMClassifier(C="big"), "C must be a finite number > 0; got .big."),
        (SVMClassifier(kernel="sigmoid"), "kernel must be one of"),
        (SVMClassifier(kernel="rbf", gamma="wide"), "gamma must be 'scale', 'auto'"),
        (SVMClassifier(kernel="rbf", gamma=-1.0), "gamma must be a finite number > 0"),
        (SVMClassifier(kernel="poly", degree=1.5), "degree must be an integer"),
        (SVMClassifier(fit_intercept="yes"), "fit_intercept must be True or False"),
        (SVMClassifier(solve_options={"tolerance": 1e-3}), "unknown solve_options"),
        (SVMClassifier(solve_options=[("tol", 1e-3)]), "solve_options must be a dict"),
        (SVMClassifier(driver=3), "driver must be a driver name"),
        (SVMClassifier(backend=None), "backend must be a string"),
        (L2SVMClassifier(C=-1.0), "C must be a finite number > 0"),
        (LADRegressor(fit_intercept=None), "fit_intercept must be True or False"),
        (PUClassifier(), "needs prior="),
        (PUClassifier(prior=1.0), r"prior must lie in \(0, 1\)"),
        (PUClassifier(prior=0.3, lam=0.0), "lam must be a finite number > 0"),
        (S3VMClassifier(balance="equal"), "balance must be one of"),
        (S3VMClassifier(C_unlabeled=-1.0), "C_unlabeled must be a finite number >= 0"),
        (KnowledgeBasedSVMClassifier(lam2=0.0), "lam2 must be a finite number > 0"),
        (KnowledgeBasedSVMClassifier(rho_hinge=-1.0), "rho_hinge must be a finite number >= 0"),
        (KnowledgeBasedSVMClassifier(knowledge="x <= 1"), "knowledge must be a list"),
    ],
)
def test_bad_parameters_raise_model_error_in_fit(est, match):
    X, labels, _ = _blobs(n=20)
    fit_labels = (labels == "pos").astype(int)
    with pytest.raises(ModelError, match=match):
        est.fit(X, fit_labels)


def test_unknown_driver_name_and_incompatible_knowledge():
    X, labels, _ = _blobs(n=20)
    with pytest.raises(UnknownDriver, match="unknown driver 'fastest'"):
        SVMClassifier(driver="fastest").fit(X, labels)
    kset = KnowledgeSet(B=[[1.0, 0.0, 0.0]], d=[0.0], label=1)
    with pytest.raises(ModelError, match="3 columns but the data has 2 features"):
        KnowledgeBasedSVMClassifier(knowledge=[kset]).fit(X, labels)


def test_predict_checks_the_number_of_features():
    X, labels, _ = _blobs(n=20)
    est = SVMClassifier().fit(X, labels)
    with pytest.raises(ValueError, match="X has 3 features"):
        est.predict(np.ones((2, 3)))


# ------------------------------------------------------------------------- layers and doctests
def test_importing_optframe_sklearn_loads_neither_models_nor_solvers():
    code = (
        "import sys, optframe.sklearn;"
        "bad = [m for m in sys.modules if m.startswith(('optframe.models', 'optframe.solvers'))];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("name", ["lad", "svm", "s3vm", "pu", "knowledge"])
def test_docstring_examples(name):
    module = importlib.import_module(f"optframe.sklearn.{name}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        failures, tried = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
