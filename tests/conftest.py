"""Shared test configuration.

The benchmark data live in ``../shared/datasets`` beside the repository (see the README). Tests
point ``OPTFRAME_DATA`` there unless it is already set; tests that need the files fail when they
are missing, they never skip.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("OPTFRAME_DATA", str(REPO.parent / "shared" / "datasets"))
os.environ.setdefault("OPTFRAME_OFFLINE", "1")
# scikit-learn's array-API estimator check (numpy inputs with dispatch on) runs only with this
# set before SciPy is imported; without it the check is skipped.
os.environ.setdefault("SCIPY_ARRAY_API", "1")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261121)


@pytest.fixture(autouse=True)
def _back_ends_loaded_once():
    """The back-ends are ``optframe.solvers``; the repository's top-level ``solvers`` directory
    imported under its own name is a second copy, whose classes replace the first ones in the
    registry (a monkeypatched back-end is then never called)."""
    yield
    assert "solvers" not in sys.modules, "import optframe.solvers.<module>, not solvers.<module>"
