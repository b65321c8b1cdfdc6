"""What a benchmark ran on: library versions, CPU, Python, operating system and git revision."""

from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Any

LIBRARIES = (
    "optframe",
    "numpy",
    "scipy",
    "numba",
    "highspy",
    "clarabel",
    "osqp",
    "pyscipopt",
    "cvxpy",
    "pyomo",
    "scikit-learn",
    "dask",
    "distributed",
)


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as handle:
            for line in handle:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def git_revision(folder: str | Path | None = None) -> str | None:
    """The git commit of ``folder`` (default: optframe's source), ``+dirty`` if it has changes."""
    where = Path(folder) if folder is not None else Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=where, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=where,
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    dirty = "+dirty" if status.stdout.strip() else ""
    return head.stdout.strip() + dirty


def environment() -> dict[str, Any]:
    """A JSON-able description of this machine and its libraries."""
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "hostname": platform.node(),
        "git": git_revision(),
        "libraries": versions,
    }
