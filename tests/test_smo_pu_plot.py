"""examples/smo_pu.py's left panel draws a point per recorded step, even while SMO is shrunk."""

import importlib.util
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from optframe.result import IterationRecord, Result, Status

SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "smo_pu.py"


def _run(shrunk: bool) -> Result:
    """A run whose objective is known at its last step only when ``shrunk`` (SMO's history)."""
    history = tuple(
        IterationRecord(100 * k, 0.1 * k, math.nan if shrunk and k < 9 else 10.0 - 0.1 * k,
                        9.0 - 1.0 / (k + 1), extras={"violation": 1.0 / (k + 1)})
        for k in range(10)
    )  # fmt: skip
    return Result(Status.OPTIMAL, 9.1, 9.0, {"x": np.ones(1)}, iterations=900, history=history)


def test_left_panel_has_a_point_per_step(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("smo_pu", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to look at it
    module.save_plot({"complete rule": _run(True), "paper": _run(True)}, tmp_path / "p.png")
    (figure,) = figures
    left = figure.axes[0]
    longest = max(len(line.get_xdata()) for line in left.get_lines())
    assert longest == 10  # every recorded step, not the two where the objective is known
    assert (tmp_path / "p.png").exists()
