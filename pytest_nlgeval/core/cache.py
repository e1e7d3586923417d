"""The score cache: one SQLite file shared by every process of a test run.

A cached score is keyed by the evaluator fingerprint id (model files' sha256, provider, precision,
runtime version) and the sha256 of the exact evaluator input text, so a score is reused only for the
same question about the same text by the same evaluator. The file uses SQLite's write-ahead log, so
pytest-xdist workers read concurrently and queue their (short, batched) writes behind a busy timeout.

A file that SQLite reports as damaged is renamed to ``<name>.corrupt-<time>`` with a warning and a new
one is created: a damaged cache costs a cold run, it never yields scores. Values that are not finite
probabilities are treated as misses too.

    >>> cache = ScoreCache(".nlgeval-cache/scores.sqlite3")
    >>> cache.put_many("3f2a9c01d2e4b5a6", {"question: ...": (0.91, False, 12)})
    >>> cache.get_many("3f2a9c01d2e4b5a6", ["question: ..."])
    {'question: ...': (0.91, False, 12)}
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path
from typing import Iterable, Mapping

__all__ = ["CACHE_FILE", "DEFAULT_CACHE_DIR", "CacheWarning", "ScoreCache", "text_key"]

DEFAULT_CACHE_DIR = ".nlgeval-cache"
CACHE_FILE = "scores.sqlite3"  # the file's name inside the cache folder

_SCHEMA_VERSION = 1
_BUSY_TIMEOUT_S = 60.0
_CHUNK = 500  # SQLite limits the number of bound parameters per statement


class CacheWarning(UserWarning):
    """The score cache was damaged and has been set aside."""


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ScoreCache:
    """SQLite (WAL) score cache; safe to open from several processes at once."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @classmethod
    def in_folder(cls, folder: str | os.PathLike) -> "ScoreCache":
        """The cache file of a cache folder (``--nlgeval-cache-dir``): ``FOLDER/scores.sqlite3``."""
        return cls(Path(folder) / CACHE_FILE)

    # -- connection --------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = self._open_checked()
        except sqlite3.DatabaseError as exc:
            self._set_aside(exc)
            conn = self._open_checked()
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _open_checked(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=_BUSY_TIMEOUT_S, isolation_level=None,
                               check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            row = conn.execute("PRAGMA quick_check(1)").fetchone()
            if row is None or row[0] != "ok":
                raise sqlite3.DatabaseError(f"integrity check failed: {row[0] if row else 'no answer'}")
            conn.execute(
                "CREATE TABLE IF NOT EXISTS scores (evaluator TEXT NOT NULL, text_sha256 TEXT NOT NULL, "
                "score REAL NOT NULL, truncated INTEGER NOT NULL, n_tokens INTEGER NOT NULL, created REAL NOT NULL, "
                "PRIMARY KEY (evaluator, text_sha256)) WITHOUT ROWID"
            )
            conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(_SCHEMA_VERSION),))
            (version,) = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if version != str(_SCHEMA_VERSION):
                raise sqlite3.DatabaseError(f"schema version {version}, this version reads {_SCHEMA_VERSION}")
        except BaseException:
            conn.close()
            raise
        return conn

    def _set_aside(self, exc: Exception) -> None:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        aside = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{os.getpid()}")
        moved = False
        for suffix in ("", "-wal", "-shm"):
            source = Path(str(self.path) + suffix)
            try:
                os.replace(source, Path(str(aside) + suffix))
                moved = moved or suffix == ""
            except FileNotFoundError:
                pass  # another process set it aside first
        warnings.warn(
            f"the nlgeval score cache {str(self.path)!r} is damaged ({exc}); "
            + (f"moved it to {aside.name!r} and " if moved else "")
            + "starting an empty cache (this run scores everything again)",
            CacheWarning,
            stacklevel=4,
        )

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None

    # -- scores ------------------------------------------------------------------------------------------
    def get_many(self, evaluator_id: str, texts: Iterable[str]) -> dict[str, tuple[float, bool, int]]:
        """Cached ``(score, truncated, n_tokens)`` by text, for the texts that are cached."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, tuple[float, bool, int]] = {}
        if not keys:
            return found
        with self._lock:
            conn = self._connect()
            items = list(keys)
            for start in range(0, len(items), _CHUNK):
                chunk = items[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._query(conn, f"SELECT text_sha256, score, truncated, n_tokens FROM scores "
                                         f"WHERE evaluator=? AND text_sha256 IN ({marks})", [evaluator_id, *chunk])
                for digest, score, truncated, n_tokens in rows:
                    if isinstance(score, float) and math.isfinite(score) and 0.0 <= score <= 1.0:
                        found[keys[digest]] = (score, bool(truncated), int(n_tokens))
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, evaluator_id: str, rows: Mapping[str, tuple[float, bool, int]]) -> None:
        """Store ``{text: (score, truncated, n_tokens)}`` for one evaluator in one transaction."""
        if not rows:
            return
        now = time.time()
        values = [(evaluator_id, text_key(t), float(s), int(bool(tr)), int(n), now) for t, (s, tr, n) in rows.items()]
        with self._lock:
            conn = self._connect()
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?)", values)
                conn.execute("COMMIT")
            except sqlite3.DatabaseError as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
                    warnings.warn(f"score cache {str(self.path)!r} stayed locked; scores not cached ({exc})",
                                  CacheWarning, stacklevel=2)
                    return
                self._recover(exc)

    # -- planned fingerprints --------------------------------------------------------------------------
    def get_meta(self, key: str) -> dict | None:
        with self._lock:
            conn = self._connect()
            rows = self._query(conn, "SELECT value FROM meta WHERE key=?", [key])
        if not rows:
            return None
        try:
            value = json.loads(rows[0][0])
        except (TypeError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def put_meta(self, key: str, value: dict) -> None:
        with self._lock:
            conn = self._connect()
            try:
                conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))
            except sqlite3.DatabaseError as exc:
                self._recover(exc)

    def count(self, evaluator_id: str | None = None) -> int:
        with self._lock:
            conn = self._connect()
            if evaluator_id is None:
                rows = self._query(conn, "SELECT COUNT(*) FROM scores", [])
            else:
                rows = self._query(conn, "SELECT COUNT(*) FROM scores WHERE evaluator=?", [evaluator_id])
        return int(rows[0][0]) if rows else 0

    def _query(self, conn: sqlite3.Connection, sql: str, params: list) -> list[tuple]:
        try:
            return conn.execute(sql, params).fetchall()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                warnings.warn(f"score cache {str(self.path)!r} is busy; treating lookups as misses ({exc})",
                              CacheWarning, stacklevel=3)
                return []
            self._recover(exc)
            return []
        except sqlite3.DatabaseError as exc:
            self._recover(exc)
            return []

    def _recover(self, exc: Exception) -> None:
        """Damage found after opening: set the file aside and continue with a fresh one."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        self._set_aside(exc)
        self._conn, self._pid = self._open_checked(), os.getpid()
