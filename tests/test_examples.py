"""Every example runs in its --smoke mode and prints its comparison with a reference.

The teaching examples (those with an ``--out`` option) also print their trace from
``Result.history`` and write a PNG plot where ``--out`` says.
"""

import re
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))
# One teaching example per driver: AID, SMO, FW/MFW, CVM, ADMM/HIPAD, DCD, and the DVI path.
TEACHING = {
    "aid_trace",
    "smo_pu",
    "frank_wolfe_l2svm",
    "cvm_l2svm",
    "hipad_knowledge",
    "dcd_svm",
    "dvi_path",
}


def test_there_is_an_example_per_driver():
    names = {p.stem for p in EXAMPLES}
    assert TEACHING | {"own_model_quantile", "lad_direct", "svm_direct"} <= names
    for name in TEACHING:
        assert "--out" in (EXAMPLES[0].parent / f"{name}.py").read_text()


# own_model_quantile runs in its own test below (with --smoke and a second quantile level).
COMPARED = [p for p in EXAMPLES if p.stem != "own_model_quantile"]


@pytest.mark.parametrize("script", COMPARED, ids=[p.stem for p in COMPARED])
def test_example_smoke(script, tmp_path):
    command = [sys.executable, str(script), "--smoke"]
    plot = tmp_path / f"{script.stem}.png"
    teaching = "--out" in script.read_text()
    if teaching:
        command += ["--out", str(plot)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "relative difference of the objectives" in done.stdout
    difference = float(done.stdout.rsplit("objectives:", 1)[1].split()[0])
    assert difference < 1e-4, done.stdout
    if teaching:
        assert len(done.stdout.splitlines()) >= 10, done.stdout  # the trace, a line per record
        assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"plot saved to {plot}" in done.stdout


def test_own_model_agrees_with_scikit_learn_and_across_drivers(tmp_path):
    script = EXAMPLES[0].parent / "own_model_quantile.py"
    done = subprocess.run(
        [sys.executable, str(script), "--smoke", "--tau", "0.25"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    found = dict(re.findall(r"^  (.+?)\s{2,}(?:optimal\s+)?objective (\S+)", done.stdout, re.M))
    assert set(found) == {
        "Direct, HiGHS",
        "Direct, Clarabel",
        "AggregateDisaggregate",
        "scikit-learn (HiGHS)",
    }, done.stdout
    values = [float(v) for v in found.values()]
    assert max(values) - min(values) <= 2e-6 * min(values), done.stdout
    assert done.stdout.count(" optimal ") == 3
