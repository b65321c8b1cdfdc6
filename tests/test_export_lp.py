"""Model.write to CPLEX LP files: every LP and QP matrix form read back by HiGHS to the optimum."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

import optframe as of
from optframe.data import Dataset, load_dataset
from optframe.errors import ModelError
from optframe.export import write_lp
from optframe.losses import Huber
from optframe.model import MatrixProblem
from optframe.models import (
    L2SVM,
    EmpiricalRisk,
    LADRegression,
    RegularizedLAD,
    WeightedSVM,
)


def highs_read(path):
    """HiGHS's optimum of the file, and the model it read (reading must succeed)."""
    import highspy

    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value, h.getLp()


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


def test_every_lp_and_qp_form_reads_back_to_the_models_optimum(models, tmp_path):
    written = 0
    for model in models:
        optimum = of.solve(model, backend="clarabel")
        assert optimum.status is of.Status.OPTIMAL
        for form in model.forms:
            if not model.offers("matrix", form):
                continue
            formulation = model.build("matrix", form)
            path = model.write(tmp_path / f"{model.name}-{form}.lp", form=form)
            value, lp = highs_read(path)
            assert value == pytest.approx(optimum.objective, rel=1e-7), (model.name, form)
            assert lp.num_col_ == formulation.problem.n_variables
            # the sign is the model's: a dual built as the minimum of its negative is maximized
            maximized = formulation.objective_scale < 0
            assert path.read_text().splitlines()[1] == ("Maximize" if maximized else "Minimize")
            written += 1
    assert written >= 8  # LP and QP, primal and dual forms


def test_a_qp_objective_is_read_with_its_quadratic_part(tmp_path):
    P = sp.csc_array([[2.0, 1.0, 0.0], [1.0, 2.0, -0.5], [0.0, -0.5, 1.0]])
    problem = MatrixProblem(
        c=np.array([-1.0, 0.5, 0.0]),
        A=sp.csc_array([[1.0, 1.0, 1.0]]),
        row_lower=np.array([1.0]),
        row_upper=np.array([1.0]),
        lower=np.full(3, -np.inf),
        upper=np.full(3, np.inf),
        P=P,
        offset=0.25,
    )
    # the equality-constrained QP's KKT system, by hand
    K = np.block([[P.toarray(), np.ones((3, 1))], [np.ones((1, 3)), np.zeros((1, 1))]])
    x = np.linalg.solve(K, np.r_[-problem.c, 1.0])[:3]
    optimum = problem.objective_value(x)
    value, _lp = highs_read(write_lp(problem, tmp_path / "qp.lp"))
    assert value == pytest.approx(optimum, rel=1e-9)
    value, _ = highs_read(write_lp(problem, tmp_path / "neg.lp", scale=-3.0, offset=2.0))
    assert value == pytest.approx(-3.0 * optimum + 2.0, rel=1e-9)
    text = (tmp_path / "neg.lp").read_text()
    assert "Maximize" in text
    assert "] / 2" in text


def test_ranged_free_fixed_and_integer_rows_and_columns(tmp_path):
    A = sp.csc_array(
        [[1.0, 1.0, 0.0, 1.0], [1.0, -1.0, 2.0, 0.0], [0.0, 1.0, 1.0, 1.0], [1.0, 0, 0, 0]]
    )
    problem = MatrixProblem(
        c=np.array([1.0, -2.0, 0.5, 0.0]),
        A=A,
        row_lower=np.array([1.0, -np.inf, -np.inf, -np.inf]),
        row_upper=np.array([4.0, 3.0, np.inf, np.inf]),  # ranged, <=, free, free
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
    path = write_lp(problem, tmp_path / "mixed.lp", scale=-2.0, offset=1.0)
    value, _lp = highs_read(path)
    assert value == pytest.approx(-2.0 * (reference.fun + 7.0) + 1.0, rel=1e-9)
    text = path.read_text()
    assert "r0_lo:" in text
    assert "r0_hi:" in text
    assert "r2" not in text
    assert "General\n x1\n" in text
    assert " x2 = 1.5\n" in text
    assert " x3 free\n" in text


def test_long_rows_are_wrapped(tmp_path):
    n = 400
    problem = MatrixProblem(
        c=np.ones(n), A=sp.csc_array(np.ones((1, n))), row_lower=np.array([2.0]),
        row_upper=np.array([np.inf]), lower=np.zeros(n), upper=np.ones(n),
    )  # fmt: skip
    path = write_lp(problem, tmp_path / "long.lp")
    assert max(len(line) for line in path.read_text().splitlines()) < 255
    assert highs_read(path)[0] == pytest.approx(2.0)


def test_lp_refusals(models, tmp_path):
    with pytest.raises(ModelError, match=r"\.mps or \.lp"):
        models[0].write(tmp_path / "lad.txt")
    with pytest.raises(ModelError, match="scale"):
        write_lp(models[0].build("matrix").problem, tmp_path / "x.lp", scale=0.0)
    with pytest.raises(ModelError, match="one word"):
        write_lp(models[0].build("matrix").problem, tmp_path / "x.lp", name="two words")


def test_export_docstring_examples_run():
    import doctest

    import optframe.export

    failures, tried = doctest.testmod(optframe.export, optionflags=doctest.ELLIPSIS)
    assert tried > 0
    assert failures == 0
