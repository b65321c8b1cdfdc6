"""The three layers depend one way: optframe core never imports models or solvers at import time."""

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_importing_optframe_loads_neither_models_nor_solvers():
    code = (
        "import sys, optframe, optframe.drivers, optframe.data;"
        "bad = [m for m in sys.modules if m.startswith(('optframe.models', 'optframe.solvers'))];"
        "heavy = [m for m in ('highspy', 'clarabel', 'osqp', 'pyscipopt', 'cvxpy', 'pyomo')"
        " if m in sys.modules];"
        "print(bad, heavy); sys.exit(1 if bad or heavy else 0)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_models_import_only_the_core():
    for path in (REPO / "models").rglob("*.py"):
        for name in _imports(path):
            assert not name.startswith("optframe.solvers"), f"{path.name} imports {name}"
            assert not name.startswith("optframe.drivers"), f"{path.name} imports {name}"


def test_solvers_import_only_the_core():
    for path in (REPO / "solvers").rglob("*.py"):
        for name in _imports(path):
            assert not name.startswith("optframe.models"), f"{path.name} imports {name}"
            assert not name.startswith("optframe.drivers"), f"{path.name} imports {name}"


def test_core_modules_never_import_models_or_solvers_at_module_level():
    for path in (REPO / "optframe").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith(("optframe.models", "optframe.solvers")), (
                    f"{path.relative_to(REPO)} imports {node.module} at module level"
                )
