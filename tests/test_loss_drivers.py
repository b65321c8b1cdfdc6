"""The table of which drivers reach each loss is generated, and the committed one is current."""

import importlib.util
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def load_script():
    path = REPO / "docs" / "results" / "loss_drivers.py"
    spec = importlib.util.spec_from_file_location("loss_drivers", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_table_is_the_generated_one():
    script = load_script()
    committed = (REPO / "docs" / "results" / "loss_drivers.md").read_text()
    assert committed == script.PREAMBLE + script.table()


def test_every_loss_reaches_dcd_linear_without_intercept():
    script = load_script()
    for line in script.table().splitlines()[2:]:
        no_intercept_linear = line.split("|")[2]
        assert "`dcd`" in no_intercept_linear, line
