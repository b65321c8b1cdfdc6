"""Model.write: every matrix formulation read back by HiGHS (SCIP for the MIQP) to the optimum."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.errors import ModelError
from optframe.export import write_mps
from optframe.losses import Huber
from optframe.model import MatrixProblem
from optframe.models import (
    L2SVM,
    EmpiricalRisk,
    LADRegression,
    PULearning,
    RegularizedLAD,
    SemiSupervisedSVM,
    WeightedSVM,
)


def highs_optimum(path):
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


@pytest.fixture(scope="module")
def models():
    reg = load_dataset("abalone")
    X, y = reg.X.toarray()[:150], np.asarray(reg.y)[:150]
    cls = load_dataset("a1a")
    Xc, yc = cls.X[:150], np.where(np.asarray(cls.y)[:150] > 0, 1.0, -1.0)
    return [
        LADRegression(Dataset(X=X, y=y)),
        RegularizedLAD(Dataset(X=X, y=y), C=0.5),
        WeightedSVM(Dataset(X=Xc, y=yc), C=2.0),
        L2SVM(Dataset(X=Xc, y=yc)),
        EmpiricalRisk(Dataset(X=X, y=y), Huber(1.0)),
    ]


def test_every_matrix_form_reads_back_to_the_models_optimum(models, tmp_path):
    for model in models:
        optimum = of.solve(model, backend="clarabel")
        assert optimum.status is of.Status.OPTIMAL
        for form in model.forms:
            if not model.offers("matrix", form):
                continue
            path = model.write(tmp_path / f"{model.name}-{form}.mps", form=form)
            value = highs_optimum(path)
            assert value == pytest.approx(optimum.objective, rel=1e-7), (model.name, form)


def test_a_mixed_integer_model_reads_back_in_scip(tmp_path):
    from pyscipopt import Model as SCIPModel

    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[::4] = 0.0  # unlabeled
    model = SemiSupervisedSVM(Dataset(X=X, y=y), C_labeled=1.0, C_unlabeled=0.2)
    optimum = of.solve(model, backend="scip")
    path = model.write(tmp_path / "s3vm.mps")
    scip = SCIPModel()
    scip.hideOutput()
    scip.readProblem(str(path))
    scip.optimize()
    assert scip.getObjVal() == pytest.approx(optimum.objective, rel=1e-5)


def test_ranged_free_fixed_and_integer_rows_and_columns(tmp_path):
    A = sp.csc_array([[1.0, 1.0, 0.0, 1.0], [1.0, -1.0, 2.0, 0.0], [0.0, 1.0, 1.0, 1.0]])
    problem = MatrixProblem(
        c=np.array([1.0, -2.0, 0.5, 0.0]),
        A=A,
        row_lower=np.array([1.0, -np.inf, -np.inf]),
        row_upper=np.array([4.0, 3.0, np.inf]),
        lower=np.array([-2.0, 0.0, 1.5, -np.inf]),
        upper=np.array([5.0, 3.0, 1.5, np.inf]),
        integrality=np.array([False, True, False, False]),
        offset=7.0,
    )
    bounded = Bounds(problem.lower, problem.upper)
    free_column = np.array([0.0, 0.0, 0.0, 1.0])  # x3 is free: keep it finite with its row
    rows = LinearConstraint(A.toarray(), problem.row_lower, problem.row_upper)
    reference = milp(problem.c + 1e-12 * free_column, constraints=rows, bounds=bounded,
                     integrality=problem.integrality.astype(int))  # fmt: skip
    assert reference.success
    path = write_mps(problem, tmp_path / "lp.mps", scale=-2.0, offset=1.0)
    assert highs_optimum(path) == pytest.approx(-2.0 * (reference.fun + 7.0) + 1.0, rel=1e-9)


def test_refusals(models, tmp_path):
    with pytest.raises(ModelError, match=r"\.mps or \.lp"):
        models[0].write(tmp_path / "lad.txt")
    pu = PULearning(Dataset(X=np.eye(4), y=np.array([1.0, 0.0, 1.0, 0.0])), prior=0.5)
    with pytest.raises(ModelError, match="matrix layer"):
        pu.write(tmp_path / "pu.mps")
