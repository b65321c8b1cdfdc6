"""Every example runs in its --smoke mode and prints its comparison."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("script", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_smoke(script):
    done = subprocess.run(
        [sys.executable, str(script), "--smoke"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "relative difference of the objectives" in done.stdout
    difference = float(done.stdout.rsplit("objectives:", 1)[1].split()[0])
    assert difference < 1e-4, done.stdout
