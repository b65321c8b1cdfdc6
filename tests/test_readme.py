"""The README's example runs as written, and its set-up blocks are what .ci/run executes."""

import re
import time
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def test_readme_example_runs(capsys):
    code = re.search(r"## Example\n\n```python\n(.*?)```", README, re.S).group(1)
    scope: dict = {}
    start = time.perf_counter()
    exec(compile(code, "README.md", "exec"), scope)
    seconds = time.perf_counter() - start
    printed = capsys.readouterr().out.split()
    assert printed[0] == "OPTIMAL"
    reference, highs, aid, gap = (float(x) for x in printed[1:5])
    assert abs(highs - reference) <= 1e-9 * reference
    assert abs(aid - reference) <= 1e-6 * reference
    assert gap <= 1e-6
    # what the comments say ran, ran
    assert (scope["ref"].driver, scope["ref"].backend) == ("direct", "matrix:fn")
    assert scope["highs"].backend == "matrix:highs"
    assert seconds < 20  # "about 2 seconds"; a first-run numba compile is not in this path


def test_readme_own_arrays_example_runs(capsys):
    code = re.search(r"### Your own numpy arrays\n\n```python\n(.*?)```", README, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert capsys.readouterr().out.split()[0] == "OPTIMAL"
    assert str(scope["q90"].result_.status) == "OPTIMAL"
    assert scope["q90"].coef_.shape == (3,)


def test_readme_states_what_auto_runs_and_what_the_demo_shows():
    line = next(x for x in README.splitlines() if x.startswith("ref = of.solve(model)"))
    assert "auto: Direct on the dual LP with fn" in line
    assert "QP solver stalls" not in README
    assert "apt-get update" in README


def test_readme_sklearn_example_runs():
    code = re.search(r"### scikit-learn estimators.*?```python\n(.*?)```", README, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    best = scope["search"].best_estimator_
    assert best.C in (0.1, 1, 10)
    assert best.result_.gap <= 1e-3
    assert best.score(scope["X"], scope["y"]) > 0.8


def test_setup_blocks_exist_for_ci():
    for marker in ("<!-- setup:demo -->", "<!-- setup:tests -->"):
        block = README.split(marker, 1)[1].split("```bash\n", 1)[1].split("```", 1)[0]
        assert block.strip().startswith("python3 -m venv .venv")
    assert "optframe demo" in README.split("<!-- setup:demo -->", 1)[1].split("```", 2)[1]
    assert "pytest" in README.split("<!-- setup:tests -->", 1)[1].split("```", 2)[1]
