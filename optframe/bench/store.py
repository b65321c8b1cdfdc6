"""The SQLite results store behind ``optframe bench --db``.

One database holds any number of suites. Every finished cell is committed at once (one
transaction per cell, ``synchronous=FULL``), so a run that is killed loses only the cells in
flight, and a rerun skips what is stored. Tables:

``meta``
    ``schema_version`` and the creating library version; a database without it is not ours.
``runs``
    One row per invocation: suite, start time, command line, and the environment (library
    versions, CPU, Python, git revision) as JSON.
``cells``
    One row per (suite, cell key, repeat): the cell's parameters, its status, the full record
    returned by the suite (objective, bound, gap, timings, iterations, driver stats, history) as
    JSON, the error text of a failed cell, the seed (the cell's ``seed`` parameter, if any), the
    seconds, the worker, the finish time and the run that measured it.

A file that is not a SQLite database, fails SQLite's integrity check, or lacks the schema is
reported as :class:`~optframe.errors.ResultStoreError`; it is never overwritten.

One runner at a time: :meth:`ResultStore.run_lock` holds an OS lock (``flock``) on the file
``PATH.lock`` beside the database for the whole run, so a second ``optframe bench`` on the same
``--db`` stops at once with a message naming the database and the runner that holds it, instead
of running every cell again and having its records dropped. The OS releases the lock when the
runner exits, however it exits; a runner that ends normally also removes the file.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from optframe.errors import ResultStoreError

SCHEMA_VERSION = 1
DEFAULT_PATH = "optframe-results.sqlite"
_SQLITE_HEADER = b"SQLite format 3\x00"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    suite TEXT NOT NULL,
    started REAL NOT NULL,
    argv TEXT NOT NULL,
    environment TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    suite TEXT NOT NULL,
    cell_key TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    params TEXT NOT NULL,
    status TEXT NOT NULL,
    record TEXT NOT NULL,
    error TEXT,
    seed INTEGER,
    seconds REAL,
    worker TEXT,
    finished REAL NOT NULL,
    run_id INTEGER REFERENCES runs(id),
    PRIMARY KEY (suite, cell_key, repeat)
);
"""


def _json_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy scalars and arrays
        return value.tolist()
    return str(value)


def _try_lock(handle: Any) -> bool:
    """Take an exclusive, non-blocking OS lock on the open file ``handle``; False if held."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        import msvcrt

        try:
            msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _dumps(value: Any) -> str:
    # NaN and inf are kept (Python's json reads them back); only unknown types become text.
    return json.dumps(value, default=_json_default, sort_keys=True)


class ResultStore:
    """A results database at ``path`` (created with its schema when missing or empty).

    Parameters
    ----------
    path : str or Path
        The SQLite file. Its folder must exist and be writable.

    Raises
    ------
    ResultStoreError
        The file is not an optframe results database, is corrupt or half-written, or cannot be
        created or written.
    """

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise ResultStoreError(f"the results database {self.path} is a folder; give a file")
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise ResultStoreError(f"cannot create {self.path}: {self.path.parent} is a file")
        existing = self.path.exists() and self.path.stat().st_size > 0
        if existing:
            self._check_header()
            if not os.access(self.path, os.W_OK):
                raise ResultStoreError(f"the results database {self.path} is not writable")
        elif not self.path.parent.exists():
            raise ResultStoreError(f"cannot create {self.path}: its folder does not exist")
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0)
            self._db.execute("PRAGMA synchronous=FULL")
            if not existing:  # another process may be creating it too: both may run this
                self._db.executescript(
                    "BEGIN IMMEDIATE;"
                    + _SCHEMA
                    + f"INSERT OR IGNORE INTO meta VALUES ('schema_version', '{SCHEMA_VERSION}');"
                    + "COMMIT;"
                )
            self._check_contents()
        except sqlite3.DatabaseError as exc:
            what = "is corrupt or half-written" if existing else "cannot be created"
            raise ResultStoreError(f"{self.path} {what} ({exc}); it was left untouched") from exc

    def _check_header(self) -> None:
        with open(self.path, "rb") as handle:
            header = handle.read(len(_SQLITE_HEADER))
        if header != _SQLITE_HEADER:
            raise ResultStoreError(
                f"{self.path} is not a SQLite database (it was left untouched); "
                "give another --db path or move the file away"
            )

    def _check_contents(self) -> None:
        try:
            (verdict,) = self._db.execute("PRAGMA integrity_check").fetchone()
            tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master")}
        except sqlite3.DatabaseError as exc:
            raise ResultStoreError(f"{self.path} is corrupt ({exc}); left untouched") from exc
        if verdict != "ok":
            raise ResultStoreError(f"{self.path} failed SQLite's integrity check: {verdict}")
        if not {"meta", "runs", "cells"} <= tables:
            raise ResultStoreError(
                f"{self.path} is a SQLite database but not an optframe results store "
                f"(tables: {sorted(tables)}); it was left untouched"
            )
        row = self._db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or int(row[0]) != SCHEMA_VERSION:
            found = None if row is None else row[0]
            raise ResultStoreError(
                f"{self.path} has schema version {found}, this optframe writes {SCHEMA_VERSION}"
            )

    @property
    def lock_path(self) -> Path:
        """The file a runner locks for the duration of its run (``PATH.lock``)."""
        return self.path.with_name(self.path.name + ".lock")

    @contextlib.contextmanager
    def run_lock(self, argv: Iterable[str] = ()) -> Iterator[None]:
        """Hold the database for one runner, for the duration of the ``with`` block.

        Raises
        ------
        ResultStoreError
            Another process (or another store object of this one) holds it; the message names
            the database, the holder and what to do.
        """
        handle, held = self._take_lock()
        try:
            if not held:
                handle.seek(0)
                holder = handle.read().strip() or "another process"
                raise ResultStoreError(
                    f"{self.path} is in use by another optframe bench ({holder}). Wait for it "
                    "to finish and run this command again (it skips the cells stored by then), "
                    "or give this run another --db."
                )
            handle.seek(0)
            handle.truncate()
            command = " ".join(argv) or "optframe bench"
            started = time.strftime("%Y-%m-%d %H:%M:%S")
            handle.write(f"pid {os.getpid()} on {socket.gethostname()} since {started}: {command}")
            handle.flush()
            yield
        finally:
            if held:  # remove the file while still holding it: nothing is left behind
                with contextlib.suppress(OSError):
                    self.lock_path.unlink()
            handle.close()  # closing the file releases the lock

    def _take_lock(self) -> tuple[Any, bool]:
        """Open ``PATH.lock`` and try to lock it: ``(handle, held)``.

        A runner removes the file when it ends; a lock taken on a file that was removed meanwhile
        would guard nothing, so the file is opened again until the lock is on the file at
        ``PATH.lock``.
        """
        for _ in range(100):
            try:
                handle = open(self.lock_path, "a+")  # noqa: SIM115 (held across the yield)
            except OSError as exc:
                raise ResultStoreError(
                    f"cannot create the lock file {self.lock_path}: {exc}"
                ) from exc
            if not _try_lock(handle):
                return handle, False
            try:
                same = os.fstat(handle.fileno()).st_ino == os.stat(self.lock_path).st_ino
            except OSError:
                same = False
            if same:
                return handle, True
            handle.close()
        raise ResultStoreError(f"cannot hold the lock file {self.lock_path}: it keeps changing")

    def close(self) -> None:
        """Close the connection (every write is already committed)."""
        self._db.close()

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _write(self, sql: str, args: tuple) -> sqlite3.Cursor:
        try:
            with self._db:
                return self._db.execute(sql, args)
        except sqlite3.Error as exc:
            raise ResultStoreError(f"cannot write to {self.path}: {exc}") from exc

    def start_run(self, suite: str, argv: Iterable[str], environment: Mapping[str, Any]) -> int:
        """Record the start of a run and return its id."""
        cursor = self._write(
            "INSERT INTO runs (suite, started, argv, environment) VALUES (?, ?, ?, ?)",
            (suite, time.time(), _dumps(list(argv)), _dumps(dict(environment))),
        )
        return int(cursor.lastrowid)

    def add(
        self,
        suite: str,
        cell_key: str,
        repeat: int,
        params: Mapping[str, Any],
        record: Mapping[str, Any],
        *,
        run_id: int | None = None,
        worker: str | None = None,
    ) -> bool:
        """Store one finished cell; return False (and store nothing) if it is already stored."""
        seconds = record.get("cell_seconds")
        seed = params.get("seed")
        try:
            with self._db:
                self._db.execute(
                    "INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        suite,
                        cell_key,
                        int(repeat),
                        _dumps(dict(params)),
                        str(record.get("status", "unknown")),
                        _dumps(dict(record)),
                        record.get("error"),
                        None if seed is None else int(seed),
                        None if seconds is None or not math.isfinite(seconds) else float(seconds),
                        worker,
                        time.time(),
                        run_id,
                    ),
                )
        except sqlite3.IntegrityError:
            return False
        except sqlite3.Error as exc:
            raise ResultStoreError(f"cannot write to {self.path}: {exc}") from exc
        return True

    def done(self, suite: str, *, include_failed: bool = True) -> set[tuple[str, int]]:
        """The (cell key, repeat) pairs stored for ``suite``."""
        sql = "SELECT cell_key, repeat FROM cells WHERE suite = ?"
        if not include_failed:
            sql += " AND status != 'failed'"
        return {(key, int(rep)) for key, rep in self._db.execute(sql, (suite,))}

    def remove_failed(self, suite: str) -> int:
        """Delete the failed cells of ``suite`` (so a rerun tries them again); return how many."""
        cursor = self._write("DELETE FROM cells WHERE suite = ? AND status = 'failed'", (suite,))
        return cursor.rowcount

    def records(self, suite: str) -> list[dict[str, Any]]:
        """Every stored record of ``suite``, with ``cell_key``, ``repeat`` and ``run_id`` added."""
        rows = self._db.execute(
            "SELECT cell_key, repeat, record, run_id, worker FROM cells WHERE suite = ? "
            "ORDER BY finished",
            (suite,),
        )
        records = []
        for key, repeat, text, run_id, worker in rows:
            record = json.loads(text)
            record.update(cell_key=key, repeat=int(repeat), run_id=run_id, worker=worker)
            records.append(record)
        return records

    def runs(self, suite: str | None = None) -> list[dict[str, Any]]:
        """The recorded runs (newest last), each with its environment."""
        sql = "SELECT id, suite, started, argv, environment FROM runs"
        args: tuple = ()
        if suite is not None:
            sql += " WHERE suite = ?"
            args = (suite,)
        return [
            {
                "id": run_id,
                "suite": name,
                "started": started,
                "argv": json.loads(argv),
                "environment": json.loads(env),
            }
            for run_id, name, started, argv, env in self._db.execute(sql + " ORDER BY id", args)
        ]

    def suites(self) -> list[str]:
        """The suites with at least one stored cell."""
        return [row[0] for row in self._db.execute("SELECT DISTINCT suite FROM cells ORDER BY 1")]
