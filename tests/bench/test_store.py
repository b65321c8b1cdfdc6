import json
import math
import sqlite3

import pytest

from optframe.bench.store import ResultStore
from optframe.errors import ResultStoreError


def test_add_records_and_skip_duplicates(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        run = store.start_run("s", ["optframe", "bench", "s"], {"cpu": "x"})
        params = {"n": 10, "seed": 3}
        record = {"status": "optimal", "objective": 1.5, "gap": math.inf, "cell_seconds": 0.25}
        assert store.add("s", "k", 0, params, record, run_id=run, worker="w")
        assert not store.add("s", "k", 0, params, record | {"objective": 9.0}, run_id=run)
        store.add("s", "k", 1, params, record | {"status": "failed", "error": "E"}, run_id=run)
        store.add("other", "k", 0, params, record, run_id=run)
        assert store.done("s") == {("k", 0), ("k", 1)}
        assert store.done("s", include_failed=False) == {("k", 0)}
        records = store.records("s")
        assert [r["repeat"] for r in records] == [0, 1]
        assert records[0]["objective"] == 1.5  # the first write stays
        assert records[0]["gap"] == math.inf
        assert records[0]["worker"] == "w"
        assert store.remove_failed("s") == 1
        assert store.done("s") == {("k", 0)}
        assert store.runs("s")[0]["environment"] == {"cpu": "x"}
        assert store.suites() == ["other", "s"]
    # it is all on disk: a new connection sees it
    with ResultStore(path) as again:
        assert again.done("s") == {("k", 0)}
        row = sqlite3.connect(path).execute("SELECT seed, seconds FROM cells").fetchone()
        assert row == (3, 0.25)


def test_numpy_values_are_stored(tmp_path):
    np = pytest.importorskip("numpy")
    with ResultStore(tmp_path / "r.sqlite") as store:
        store.add("s", "k", 0, {"n": np.int64(4)}, {"status": "ok", "v": np.float32(0.5),
                                                      "a": np.arange(3)})  # fmt: skip
        (record,) = store.records("s")
        assert record["v"] == 0.5
        assert record["a"] == [0, 1, 2]


def test_not_a_database_is_left_untouched(tmp_path):
    path = tmp_path / "notes.sqlite"
    path.write_text("my precious notes\n")
    with pytest.raises(ResultStoreError, match="not a SQLite database"):
        ResultStore(path)
    assert path.read_text() == "my precious notes\n"


def test_half_written_database_is_reported(tmp_path):
    path = tmp_path / "r.sqlite"
    with ResultStore(path) as store:
        for k in range(300):
            store.add("s", f"k{k}", 0, {"k": k}, {"status": "ok", "pad": "x" * 200})
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(ResultStoreError, match=r"corrupt or half-written"):
        ResultStore(path)
    assert path.stat().st_size == len(data) // 2


def test_foreign_database_and_schema_version(tmp_path):
    foreign = tmp_path / "foreign.sqlite"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(ResultStoreError, match="not an optframe results store"):
        ResultStore(foreign)
    newer = tmp_path / "newer.sqlite"
    ResultStore(newer).close()
    db = sqlite3.connect(newer)
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    with pytest.raises(ResultStoreError, match="schema version 99"):
        ResultStore(newer)


def test_read_only_database(tmp_path, monkeypatch):
    path = tmp_path / "r.sqlite"
    ResultStore(path).close()
    monkeypatch.setattr("os.access", lambda where, mode: False)  # root ignores chmod
    with pytest.raises(ResultStoreError, match="not writable"):
        ResultStore(path)


def test_unusable_paths(tmp_path):
    with pytest.raises(ResultStoreError, match="folder does not exist"):
        ResultStore(tmp_path / "missing" / "r.sqlite")
    with pytest.raises(ResultStoreError, match="is a folder"):
        ResultStore(tmp_path)
    (tmp_path / "plain").write_text("")
    with pytest.raises(ResultStoreError, match="is a file"):
        ResultStore(tmp_path / "plain" / "r.sqlite")


def test_environment_is_json():
    from optframe.bench.environment import environment

    env = environment()
    assert env["libraries"]["numpy"]
    assert env["cpu_count"] >= 1
    json.dumps(env)
