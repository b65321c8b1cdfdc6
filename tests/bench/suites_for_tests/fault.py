"""A suite whose cells succeed, raise, hang, or kill their worker, for the runner's tests.

Cells log each execution to ``$FAULT_DIR/executions`` (one line per start and per finish), so
a test can tell which cells ran and how often.
"""

import os
import signal
import sys
import time
from pathlib import Path

from optframe.bench.suite import Cell

DESCRIPTION = "fault injection for the runner tests"
COLUMNS = ["name", "i", "status", "objective"]


def cells(quick: bool) -> list[Cell]:
    kinds = os.environ.get("FAULT_KINDS", "ok").split(",")
    count = int(os.environ.get("FAULT_COUNT", "4"))
    return [Cell({"name": kind, "i": i}) for kind in kinds for i in range(count)]


def _log(line: str) -> None:
    with open(Path(os.environ["FAULT_DIR"]) / "executions", "a") as handle:
        handle.write(line + "\n")


def run_cell(cell: Cell) -> dict:
    name, i = cell["name"], cell["i"]
    _log(f"start {name} {i}")
    if name == "raise":
        raise ValueError(f"cell {i} fails on purpose")
    if name == "slow":
        time.sleep(120)
    if name == "kill_worker":
        marker = Path(os.environ["FAULT_DIR"]) / f"killed-{i}"
        if not marker.exists():
            marker.touch()
            # with a time limit the cell runs in a child of the worker: kill the worker
            in_child = sys.argv[0].endswith(os.path.join("bench", "child.py"))
            os.kill(os.getppid() if in_child else os.getpid(), signal.SIGKILL)
    time.sleep(float(os.environ.get("FAULT_SLEEP", "0.1")))
    _log(f"finish {name} {i}")
    threads = os.environ.get("OMP_NUM_THREADS")
    return {"status": "optimal", "objective": float(i), "threads": threads}
