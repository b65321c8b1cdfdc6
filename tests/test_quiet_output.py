"""Nothing prints unless ``verbose``: no solver banner, log or library warning, in any layer.

Solver banners come from C code writing to file descriptor 1, so every check runs in a
subprocess and reads what reached its stdout and stderr.
"""

import re
import subprocess
import sys
import textwrap

BANNERS = ("Running HiGHS", "Copyright", "SCIP version", "OSQP v", "Clarabel.rs", "Warning")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "default", "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=900,
    )


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-W", "default", "-m", "optframe.cli.main", *args],
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_the_check_sees_the_banner_of_a_bare_highs():
    done = _python("import highspy; highspy.Highs()")
    assert "Running HiGHS" in done.stdout  # what every other test here must not see


def test_hide_highs_banner_silences_every_later_highs():
    done = _python(
        """
        import highspy
        from optframe.c_output import hide_highs_banner
        hide_highs_banner()
        highspy.Highs()
        print("after")
        """
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "after\n"
    assert done.stderr == ""


API_RUNS = """
import sys
import numpy as np
import optframe as of
from optframe.compare import applicable_pairs
from optframe.data import Dataset
from optframe.models import (
    L2SVM, KnowledgeBasedSVM, KnowledgeSet, LADRegression, PULearning, RegularizedLAD,
    SemiSupervisedSVM, WeightedSVM,
)
rng = np.random.default_rng(0)
n = 40
X = rng.normal(size=(n, 3))
signs = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
target = X @ [1.0, -2.0, 0.5] + rng.normal(size=n)
partly = signs.copy()
partly[::3] = 0.0
positives = np.where((signs > 0) & (np.arange(n) % 2 == 0), 1.0, 0.0)
knowledge = [KnowledgeSet(B=[[1.0, 0.0, 0.0]], d=[0.0], label=1)]
models = [
    LADRegression(Dataset(X=X, y=target)),
    WeightedSVM(Dataset(X=X, y=signs), C=1.0),
    L2SVM(Dataset(X=X, y=signs), C=3.0),
    RegularizedLAD(Dataset(X=X, y=target), C=0.7, fit_intercept=False),
    SemiSupervisedSVM(Dataset(X=X[:12], y=partly[:12]), C_labeled=5.0, C_unlabeled=1.0),
    PULearning(Dataset(X=X, y=positives), prior=0.4, lam=0.05),
    KnowledgeBasedSVM(Dataset(X=X, y=signs), lam1=0.01, lam2=0.1, knowledge=knowledge),
]
solved = []
for model in models:
    for pair in applicable_pairs(model):
        result = of.solve(model, driver=pair.driver, backend=pair.backend, verbose=False)
        solved.append(f"{model.name} {pair.label} {result.backend} {result.status.value}")
with open(sys.argv[1], "w") as out:
    out.write("\\n".join(solved))
"""


def test_python_api_prints_nothing_on_any_backend_or_driver(tmp_path):
    listing = tmp_path / "solved.txt"
    done = subprocess.run(
        [sys.executable, "-W", "default", "-c", API_RUNS, str(listing)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    assert done.stderr == ""
    solved = listing.read_text().splitlines()
    # every layer of every solver of the README's table was reached
    layers = {line.split()[2] for line in solved}
    for backend in ("matrix", "cvxpy", "pyomo"):
        for solver in ("highs", "scip"):
            assert f"{backend}:{solver}" in layers, sorted(layers)
    for backend in ("matrix:osqp", "cvxpy:osqp", "matrix:clarabel", "cvxpy:clarabel", "numba"):
        assert backend in layers, sorted(layers)


CVXPY_BOUNDS = """
import numpy as np, cvxpy as cp
import optframe.solvers
from optframe import Formulation, ProblemClass, SolveOptions, registry
rng = np.random.default_rng(0)
X = rng.normal(size=(30, 4))
x = cp.Variable(4, nonneg=True, name="x")
# cvxpy bounds X @ x by X's positive part times x's bounds: 0 * inf, which numpy warns about
problem = cp.Problem(cp.Minimize(cp.sum(cp.pos(X @ x - 1)) + cp.sum(x)))
formulation = Formulation(layer="cvxpy", problem=problem, problem_class=ProblemClass.LP,
                          variables={"x": x})
for classes in registry.backends().values():
    for backend in classes:
        if backend.layer == "cvxpy" and ProblemClass.LP in backend.supports:
            backend().solve(formulation, SolveOptions(verbose=VERBOSE))
"""


def test_cvxpy_runtime_warnings_are_kept_quiet_unless_verbose():
    done = _python(CVXPY_BOUNDS.replace("VERBOSE", "False"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    assert done.stderr == ""
    loud = _python(CVXPY_BOUNDS.replace("VERBOSE", "True"))
    assert loud.returncode == 0, loud.stderr[-3000:]
    assert "RuntimeWarning" in loud.stderr  # the case does warn: the quiet run hid it


def _assert_quiet(done: subprocess.CompletedProcess) -> None:
    assert done.returncode == 0, done.stderr[-3000:]
    for text in BANNERS:
        assert text not in done.stdout, (text, done.stdout[:3000])
        assert text not in done.stderr, (text, done.stderr[:3000])


def test_cli_solve_prints_no_banner_in_any_highs_layer():
    for backend in ("highs", "cvxpy:highs", "pyomo:highs"):
        done = _cli("solve", "LADRegression", "--data", "cpusmall", "--rows", "300",
                    "--backend", backend)  # fmt: skip
        _assert_quiet(done)
        assert f"direct | {backend if ':' in backend else 'matrix:highs'}" in done.stdout


def test_cli_compare_prints_only_its_table():
    done = _cli("compare", "WeightedSVM", "--data", "a1a", "--rows", "120", "--param", "C=0.5")
    _assert_quiet(done)
    assert "pyomo:scip" in done.stdout
    # what the command line prints unasked, on stderr: numba compiling its kernels, and
    # compare's progress once a run takes more than a few seconds
    progress = re.compile(r"compare \w+: \d+/\d+ done")
    for line in done.stderr.splitlines():
        assert "numba kernels" in line or progress.search(line), done.stderr


SOPLEX_NOTES = """
import numpy as np
import optframe as of
from optframe.data import Dataset
from optframe.drivers import Direct
from optframe.models import L2SVM
rng = np.random.default_rng(0)
X = rng.normal(size=(100, 30)) * 1e6 * rng.uniform(1, 1e3, size=30)
y = np.where(X[:, 0] > 0, 1.0, -1.0)
model = L2SVM(Dataset(X, y), C=1.0, kernel="linear")
for backend in ("matrix:scip", "cvxpy:scip"):
    of.solve(model, Direct(form="primal"), backend=backend, time_limit=2, verbose=VERBOSE)
"""


def test_scip_numerical_notes_stay_quiet_unless_verbose():
    done = _python(SOPLEX_NOTES.replace("VERBOSE", "False"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == ""
    assert done.stderr == ""
    loud = _python(SOPLEX_NOTES.replace("VERBOSE", "True"))
    assert "Cannot set feasibility tolerance" in loud.stdout + loud.stderr  # there is a note
