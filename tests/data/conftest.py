"""Fixtures for the data-layer tests.

The benchmark folder is ``../shared/datasets`` beside the repository; when that is absent the
``OPTFRAME_DATA`` environment variable is used. If neither exists the tests FAIL (they never
skip): the data layer cannot be checked without its data.
"""

import os
from functools import lru_cache
from pathlib import Path

import pytest

from optframe.data import Dataset, load_dataset

REPO = Path(__file__).resolve().parents[2]


def _data_root() -> Path | None:
    relative = REPO.parent / "shared" / "datasets"
    if relative.is_dir():
        return relative
    env = os.environ.get("OPTFRAME_DATA")
    if env and Path(env).is_dir():
        return Path(env)
    return None


DATA_ROOT = _data_root()


@pytest.fixture(scope="session")
def data_root() -> Path:
    if DATA_ROOT is None:
        pytest.fail(
            f"Benchmark data folder not found: neither {REPO.parent / 'shared' / 'datasets'} "
            "nor $OPTFRAME_DATA exists. Point OPTFRAME_DATA at the shared datasets folder."
        )
    return DATA_ROOT


@pytest.fixture(autouse=True)
def _data_env(monkeypatch, tmp_path):
    """Every test sees the shared folder, a private empty cache and no network."""
    if DATA_ROOT is not None:
        monkeypatch.setenv("OPTFRAME_DATA", str(DATA_ROOT))
    monkeypatch.setenv("OPTFRAME_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("OPTFRAME_OFFLINE", "1")


@lru_cache(maxsize=8)  # a few sets reused across tests; not all 100+ splits at once
def _cached_load(name: str, split: str) -> Dataset:
    return load_dataset(name, split, data_home=DATA_ROOT)


@pytest.fixture(scope="session")
def loaded(data_root):
    """``loaded(name, split)``: recently used benchmark splits are read only once."""
    return _cached_load
