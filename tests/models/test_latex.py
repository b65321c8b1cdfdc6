"""Models state themselves: LaTeX from the declaration (a user's loss too) and describe()."""

import numpy as np
import pytest
from latex2mathml.converter import convert

from optframe.data import Dataset
from optframe.errors import ModelError
from optframe.kernels import RBF
from optframe.losses import Huber, Pinball, PLQLoss, SquaredHinge
from optframe.models import (
    L2SVM,
    EmpiricalRisk,
    LADRegression,
    PULearning,
    SemiSupervisedSVM,
    WeightedSVM,
)
from optframe.penalties import L1, ElasticNet

REG = Dataset(X=[[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 3.0]], y=[0.0, 1.0, 3.0, 2.0])
CLS = Dataset(X=[[0.0, 1.0], [1.0, 0.0], [2.0, 1.0], [3.0, 3.0]], y=[-1.0, 1.0, 1.0, -1.0])

MODELS = [
    LADRegression(REG),
    EmpiricalRisk(REG, Pinball(0.25), penalty=None, fit_intercept=False),
    EmpiricalRisk(REG, Huber(1.5), penalty=ElasticNet(0.3), C=2.0),
    EmpiricalRisk(REG, Huber(1.0), penalty=L1(), sample_weight=[1.0, 2.0, 1.0, 1.0]),
    WeightedSVM(CLS, C=3.0),
    WeightedSVM(CLS, kernel=RBF(gamma=0.5)),
    EmpiricalRisk(CLS, SquaredHinge(), fit_intercept=False),
    EmpiricalRisk(REG, PLQLoss(relu=[(0.5, -1.0)], rehu=[(-2.0, 0.0, 3.0)])),
]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: repr(m.loss))
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_every_statement_is_valid_latex(model, form):
    latex = model.to_latex(form)
    mathml = convert(r"\begin{gathered}" + latex + r"\end{gathered}")  # raises on bad LaTeX
    assert mathml.startswith("<math")
    assert "merror" not in mathml
    assert f"{{{model.data.n_samples}}}" in latex  # the sum runs over the samples


def test_the_loss_line_is_the_declared_pieces():
    user = PLQLoss(relu=[(0.5, -1.0)], rehu=[(-2.0, 0.0, 3.0)])
    latex = EmpiricalRisk(REG, user).to_latex()
    assert r"\ell(a) = \max(0,\, 0.5a - 1) + \operatorname{rehu}_{3}(-2a)" in latex
    assert r"\operatorname{rehu}_\tau(z)" in latex  # the definition comes with a ReHU piece
    hinge = WeightedSVM(CLS, C=3.0).to_latex()
    assert r"\max(0,\, 1 - a)" in hinge
    assert r"3\,\sum" in hinge
    assert r"a_i = y_i\,(x_i^\top w + b)" in hinge


def test_the_dual_states_the_conjugate_domain_and_the_rows():
    lad = LADRegression(REG).to_latex("dual")
    assert r"\theta_i / c_i \in [-1, 1]" in lad
    assert r"X^\top v = 0" in lad
    assert r"\mathbf 1^\top v = 0" in lad
    pinball = MODELS[1].to_latex("dual")
    assert r"[-0.75, 0.25]" in pinball
    assert r"\mathbf 1^\top v" not in pinball  # no intercept, no row
    lasso = MODELS[3].to_latex("dual")
    assert r"\lVert X^\top v\rVert_\infty \le 1" in lasso
    assert r"c_i = C s_i" in lasso  # the weights are not all equal


PU = PULearning(Dataset(X=np.eye(4), y=np.array([1.0, 0.0, 1.0, 0.0])), prior=0.5)


@pytest.mark.parametrize("model", [PU, L2SVM(CLS), L2SVM(CLS, kernel=RBF(gamma=0.5))])
@pytest.mark.parametrize("form", ["primal", "dual"])
def test_per_label_losses_and_the_free_margin_state_themselves(model, form):
    latex = model.to_latex(form)
    mathml = convert(r"\begin{gathered}" + latex + r"\end{gathered}")
    assert "merror" not in mathml
    assert f"{{{model.data.n_samples}}}" in latex


def test_a_loss_per_label_is_written_per_label():
    primal = PU.to_latex()
    assert r"\ell_{y_i}(a_i)" in primal
    assert r"\ell_{+1}(a) = -a" in primal  # the labeled positives' linear loss
    assert r"\ell_{-1}(a) = \max(0,\, 0.5 - 0.5a)" in primal  # the unlabeled rows' double hinge
    dual = PU.to_latex("dual")
    assert r"\theta_i / c_i \in [-1, -1] \text{ for } y_i = +1" in dual  # a fixed multiplier


def test_the_l2svm_states_its_free_margin_and_its_simplex_dual():
    primal = L2SVM(CLS).to_latex()
    assert r"r \in \mathbb{R}" in primal
    assert r"(\lVert w\rVert_2^2 + b^2)" in primal  # the penalized intercept
    assert primal.split(r" \\ ")[0].endswith("- r")
    dual = L2SVM(CLS).to_latex("dual")
    assert r"\mathbf 1^\top \alpha = 1" in dual
    assert r"y_i y_j (x_i^\top x_j + 1)" in dual


def test_notebooks_get_latex_and_models_without_a_statement_say_so():
    assert LADRegression(REG)._repr_latex_().startswith("$$")
    assert PU._repr_latex_().startswith("$$")
    import cvxpy as cp

    from optframe.cvxpy_problem import from_cvxpy

    x = cp.Variable(name="x")
    users = from_cvxpy(cp.Problem(cp.Minimize(cp.square(x - 1))))
    assert users._repr_latex_() is None
    with pytest.raises(ModelError, match="no LaTeX"):
        users.to_latex()
    with pytest.raises(ModelError, match="form"):
        LADRegression(REG).to_latex("primal-dual")
    free_only = EmpiricalRisk(CLS, SquaredHinge(), free_margin=True, fit_intercept=False)
    with pytest.raises(ModelError, match="simplex QP only"):
        free_only.to_latex("dual")


def test_describe_lists_forms_layers_structures_and_drivers():
    text = WeightedSVM(CLS).describe()
    assert text.splitlines()[0] == "WeightedSVM: a QP on 4 samples x 2 features"
    assert "drivers: direct, aid, smo" in text
    assert "BoxQPDual" in text


def test_the_s3vm_and_the_knowledge_svm_state_themselves():
    """The mixed-integer QP with its sizes and M; the ENK-SVM with one line per knowledge set."""
    from optframe.models import KnowledgeBasedSVM

    data = Dataset(X=np.eye(4), y=np.array([1.0, 0.0, -1.0, 0.0]))
    for balance in ("none", "constraint", "cost"):
        s3vm = SemiSupervisedSVM(data, C_labeled=2.0, C_unlabeled=0.5, big_m=7.0, balance=balance)
        latex = s3vm.to_latex()
        convert(r"\begin{gathered}" + latex + r"\end{gathered}")
        lines = latex.split(r" \\ ")
        assert r"2\sum_{i \in I_l}" in lines[0]
        assert r"0.5\sum_{i \in I_u}" in lines[0]
        assert r"\lvert I_l\rvert = 2,\ \lvert I_u\rvert = 2,\ M = 7" in latex
        assert (r"\sum_{I_u} s_i(x_i^\top w + b)" in latex) == (balance == "constraint")
        assert ("c_i" in lines[0]) == (balance == "cost")
        assert s3vm._repr_latex_().startswith("$$")
    plain, knowing = KnowledgeBasedSVM.examples()
    assert r"u_k" not in plain.to_latex()
    latex = knowing.to_latex()
    convert(r"\begin{gathered}" + latex + r"\end{gathered}")
    lines = latex.split(r" \\ ")
    assert r"\frac{1}{40}\sum_{i=1}^{40}" in lines[0]
    assert r"0.05\lVert w\rVert_1 + \frac{0.1}{2}\lVert w\rVert^2" in lines[0]
    assert lines[1].startswith(r"+ \sum_{k=1}^{2}")
    assert lines[2].startswith("k = 1")
    assert r"y = +1" in lines[2]
    assert lines[3].startswith("k = 2")
    assert r"y = -1" in lines[3]
