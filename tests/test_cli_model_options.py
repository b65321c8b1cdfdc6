"""``optframe solve`` and ``compare`` with ``--loss``, ``--penalty`` and a model of one's own."""

import os
import subprocess
import sys
import textwrap

import pytest

from optframe.cli import expressions
from optframe.cli.main import main
from optframe.losses import Huber, Pinball
from optframe.penalties import L1, ElasticNet

# A model of the user's own, not registered: the quantile regression LP of the tutorial, bare.
USER_MODULE = textwrap.dedent(
    """
    from dataclasses import dataclass
    from typing import ClassVar

    import numpy as np
    import scipy.sparse as sp

    import optframe as of
    from optframe.data import Dataset


    @dataclass(frozen=True, eq=False)
    class Quantile(of.Model):
        problem_class: ClassVar = of.ProblemClass.LP
        layers: ClassVar = ("matrix",)
        data: Dataset
        tau: float = 0.5

        def _build_matrix(self, form):
            X, y, tau = sp.csc_array(self.data.X), self.data.y, self.tau
            (n, m), eye = X.shape, sp.eye_array(X.shape[0], format="csc")
            problem = of.MatrixProblem(
                c=np.concatenate([np.zeros(m + 1), np.full(n, tau), np.full(n, 1 - tau)]),
                A=sp.hstack([X, sp.csc_array(np.ones((n, 1))), eye, -eye], format="csc"),
                row_lower=y,
                row_upper=y,
                lower=np.r_[np.full(m + 1, -np.inf), np.zeros(2 * n)],
                upper=np.full(m + 1 + 2 * n, np.inf),
            )
            variables = {"beta": slice(0, m), "intercept": slice(m, m + 1)}
            return of.Formulation("matrix", problem, of.ProblemClass.LP, variables)

        def objective(self, solution):
            r = self.data.y - self.decision_function(solution, self.data.X)
            return float(np.maximum(self.tau * r, (self.tau - 1) * r).sum())

        def decision_function(self, solution, X):
            return X @ solution["beta"] + solution["intercept"][0]
    """
)


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    """A package ``usermodels.quantile`` in ``tmp_path``, on sys.path."""
    package = tmp_path / "usermodels"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "quantile.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("usermodels", "usermodels.quantile"):
        sys.modules.pop(name, None)


def _objective(out: str) -> float:
    return float(out.split("objective ")[1].split(",")[0])


def test_solve_with_a_huber_loss_builds_an_empirical_risk(capsys):
    argv = ["solve", "--loss", "Huber(1.0)", "--data", "cpusmall", "--rows", "300"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("EmpiricalRisk | direct")
    assert "optimal" in out
    # the same model named: the same objective
    assert main(["solve", "EmpiricalRisk", *argv[1:], "--penalty", "L2()"]) == 0
    assert _objective(capsys.readouterr().out) == pytest.approx(_objective(out), rel=1e-6)


def test_the_user_model_and_the_pinball_risk_agree(user_module, capsys):
    """A user's quantile LP (tau = 0.9) and EmpiricalRisk(Pinball(0.9), penalty=None): one LP."""
    rows = ["--data", "cpusmall", "--rows", "300"]
    argv = ["solve", "--model", "usermodels.quantile:Quantile", "--param", "tau=0.9", *rows]
    assert main(argv) == 0
    user = capsys.readouterr().out
    assert user.startswith("Quantile | direct")
    argv = ["solve", "--loss", "Pinball(tau=0.9)", "--penalty", "None", *rows]
    assert main(argv) == 0
    risk = capsys.readouterr().out
    assert _objective(user) == pytest.approx(_objective(risk), rel=1e-6)


def test_compare_takes_a_user_model_from_pythonpath(user_module):
    path = os.pathsep.join([str(user_module), os.environ.get("PYTHONPATH", "")])
    argv = ["compare", "usermodels.quantile:Quantile", "--data", "cpusmall", "--rows", "150"]
    done = subprocess.run(
        [sys.executable, "-m", "optframe.cli.main", *argv, "--param", "tau=0.25"],
        capture_output=True,
        text=True,
        timeout=600,
        env=os.environ | {"PYTHONPATH": path},
        cwd=user_module.parent,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Quantile on cpusmall (n=150, m=12)" in done.stdout
    assert "matrix:highs" in done.stdout


def test_expressions_build_the_classes_they_name():
    assert repr(expressions.loss("Huber(1.5)")) == repr(Huber(1.5))
    assert repr(expressions.loss(" Pinball( tau = 0.25 ) ")) == repr(Pinball(0.25))
    assert repr(expressions.loss("Huber")) == repr(Huber())
    assert isinstance(expressions.penalty("L1()"), L1)
    assert repr(expressions.penalty("ElasticNet(l1_ratio=+0.3)")) == repr(ElasticNet(0.3))
    assert expressions.penalty("None") is None
    assert "PLQLoss" not in expressions.concrete_classes(__import__("optframe.losses").losses)


@pytest.mark.parametrize(
    ("argv", "error", "message"),
    [
        (["--loss", "huber(1.0)"], "ExpressionError", "Did you mean 'Huber'? Known losses: "),
        (["--loss", "Huber(1.0"], "ExpressionError", "is not a call such as Name(1.0)"),
        (["--loss", "__import__('os').system('echo hi')"], "ExpressionError", "class name"),
        (["--loss", "os.system('echo hi')"], "ExpressionError", "class name and its arguments"),
        (["--loss", "Huber(delta=x)"], "ExpressionError", "'x' is not a literal"),
        (["--loss", "Huber(**{'delta': 1})"], "ExpressionError", "** arguments"),
        (["--loss", "Huber(1, 2)"], "ExpressionError", "Its signature: Huber(delta=1.0)"),
        (["--loss", "Huber(-1.0)"], "ModelError", "delta must be a finite number > 0"),
        (["--loss", "Hinge()", "--penalty", "L1(0.1)"], "ExpressionError", "Its signature: L1()"),
        (["--loss", "Hinge()", "--penalty", "Lasso()"], "ExpressionError", "Known penalties: "),
        (["LADRegression", "--loss", "Huber()"], "ModelError", "LADRegression takes no loss"),
        (["EmpiricalRisk"], "ModelError", "give the loss with --loss"),
        ([], "ModelError", "name a model (e.g. LADRegression)"),
        (["--model", "nowhere.models:X"], "UserModelError", "cannot import 'nowhere.models'"),
        (
            ["--model", "no_colon"],
            "ModelError",
            "A model of your own: --model package.module:Class",
        ),
        (["--model", ":X"], "UserModelError", "--model takes package.module:Class"),
        (["--model", "optframe.losses:Huber"], "UserModelError", "is not a subclass of"),
        (["--model", "optframe.models:Nope"], "UserModelError", "has no 'Nope'"),
        (["WeightedSVM", "--model", "optframe.models:WeightedSVM"], "ModelError", "once"),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_bad_loss_penalty_and_model_exit_with_code_2(capsys, argv, error, message):
    assert main(["solve", *argv, "--data", "cpusmall", "--rows", "50"]) == 2
    err = capsys.readouterr().err
    assert f"optframe: {error}: " in err
    assert message in err
    assert "hi\n" not in err


def test_a_bad_user_model_parameter_is_named(user_module, capsys):
    argv = ["compare", "--model", "usermodels.quantile:Quantile", "--param", "tua=0.5"]
    assert main([*argv, "--data", "cpusmall"]) == 2
    assert "Quantile has no parameter 'tua'. Did you mean 'tau'?" in capsys.readouterr().err
