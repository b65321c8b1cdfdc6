"""The results database's lock file is removed when its runner ends, never by a refused one."""

import pytest

from optframe.bench.store import ResultStore
from optframe.errors import ResultStoreError


def test_lock_file_is_removed_after_the_run(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as store:
        with store.run_lock(["optframe", "bench", "x"]):
            assert store.lock_path.exists()
            assert "optframe bench x" in store.lock_path.read_text()
        assert not store.lock_path.exists()
        with store.run_lock():  # and the database can be locked again
            assert store.lock_path.exists()
        assert not store.lock_path.exists()


def test_a_refused_runner_leaves_the_holders_lock_file(tmp_path):
    db = tmp_path / "r.sqlite"
    with ResultStore(db) as first, ResultStore(db) as second:
        with first.run_lock(["first"]):
            refused = pytest.raises(ResultStoreError, match="in use by another optframe bench")
            with refused, second.run_lock(["second"]):
                pass  # pragma: no cover
            assert first.lock_path.exists()
            assert "first" in first.lock_path.read_text()
            with pytest.raises(ResultStoreError), second.run_lock(["second"]):  # still held
                pass  # pragma: no cover
        assert not first.lock_path.exists()


def test_the_lock_file_goes_on_error_too(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as store:
        with pytest.raises(RuntimeError), store.run_lock():
            raise RuntimeError("a cell failed")
        assert not store.lock_path.exists()
