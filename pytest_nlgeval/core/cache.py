"""The score cache: one SQLite file shared by every process of a test run.

A cached score is keyed by the evaluator fingerprint id (model files' sha256, provider, precision,
runtime version) and the sha256 of the exact evaluator input text, so a score is reused only for the
same question about the same text by the same evaluator. The file uses SQLite's write-ahead log, so
pytest-xdist workers read concurrently and queue their (short, batched) writes behind a busy timeout.

Failures never cost the run its scores:

* A file that fails an integrity check (SQLite reports it malformed or not a database, ``PRAGMA
  quick_check`` fails) is renamed to ``<name>.corrupt-<time>`` with a warning and a new one is created: a
  damaged cache costs a cold run, it never yields scores. Values that are not finite probabilities are
  treated as misses too.
* Operational trouble (a read-only folder or file, a write lock held by another process past the busy
  timeout, a full disk, a cache written by another schema version) leaves the file as it is. The cache warns
  once (:class:`CacheWarning`) and keeps this run's scores in memory: lookups still read the file while it
  answers, and the run finishes with every score.

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
from typing import Callable, Iterable, Mapping, TypeVar

__all__ = ["CACHE_FILE", "DEFAULT_CACHE_DIR", "CacheWarning", "ScoreCache", "text_key", "user_cache_dir"]

#: the cache folder of a pytest run, under its rootdir (``--nlgeval-cache-dir`` sets another)
DEFAULT_CACHE_DIR = ".nlgeval-cache"
CACHE_FILE = "scores.sqlite3"  # the file's name inside the cache folder

_SCHEMA_VERSION = 1
_BUSY_TIMEOUT_S = 60.0
_CHUNK = 500  # SQLite limits the number of bound parameters per statement

T = TypeVar("T")


def user_cache_dir() -> Path:
    """Where an :class:`~pytest_nlgeval.core.evaluator.Evaluator` made outside pytest keeps its scores: the
    ``scores`` folder of the user's cache folder for pytest-nlgeval (platformdirs: under ``$XDG_CACHE_HOME`` or
    ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows; the LLM answer cache is
    its sibling ``llm``), never the current folder.

    >>> str(user_cache_dir())  # doctest: +SKIP
    '/home/me/.cache/pytest-nlgeval/scores'
    """
    from platformdirs import user_cache_dir as platform_cache

    return Path(platform_cache("pytest-nlgeval")) / "scores"


class CacheWarning(UserWarning):
    """The score cache was damaged and set aside, or cannot be written and keeps this run's scores in memory."""


class _Damaged(sqlite3.DatabaseError):
    """The file failed an integrity check: the one reason to set it aside."""


# SQLite result codes (and their extended forms, e.g. SQLITE_CORRUPT_INDEX) that mean the file is damaged.
_DAMAGE_CODES = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def _is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` says another connection holds the lock (SQLITE_BUSY, SQLITE_LOCKED and their forms)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    name = getattr(exc, "sqlite_errorname", None) or ""
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(exc).lower()


def _while_busy(attempt: Callable[[], T]) -> T:
    """``attempt()``, tried again with backoff while SQLite refuses it as busy, up to the busy timeout.

    SQLite answers some lock conflicts with SQLITE_BUSY at once, without waiting on its busy handler (a worker that
    opened the file while another switched it to WAL, a reader's snapshot upgraded to a write)."""
    deadline, pause = time.monotonic() + _BUSY_TIMEOUT_S, 0.02
    while True:
        try:
            return attempt()
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() + pause >= deadline:
                raise
            time.sleep(pause)
            pause = min(2 * pause, 1.0)


def _is_damage(exc: BaseException) -> bool:
    """Whether ``exc`` says the file itself is damaged (rather than locked, read-only, full or unreachable)."""
    if isinstance(exc, _Damaged):
        return True
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    name = getattr(exc, "sqlite_errorname", None)  # Python 3.11+
    if name:
        return any(name == code or name.startswith(code + "_") for code in _DAMAGE_CODES)
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ScoreCache:
    """SQLite (WAL) score cache; safe to open from several processes at once."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._lock = threading.Lock()
        self._degraded: str | None = None  # why the file is not written this run (None: it is)
        self._memory: dict[tuple[str, str], tuple[float, bool, int]] = {}  # scores the file could not take
        self._memory_meta: dict[str, dict] = {}
        self.hits = 0
        self.misses = 0

    @classmethod
    def in_folder(cls, folder: str | os.PathLike) -> "ScoreCache":
        """The cache file of a cache folder (``--nlgeval-cache-dir``): ``FOLDER/scores.sqlite3``."""
        return cls(Path(folder) / CACHE_FILE)

    # -- connection --------------------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection | None:
        """The connection of this process; None when the file cannot be used this run (see :meth:`_degrade`)."""
        if self._pid == os.getpid() and (self._conn is not None or self._degraded is not None):
            return self._conn
        self._conn, self._pid = None, os.getpid()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = _while_busy(self._open_checked)  # a new file another worker is creating or switching to WAL
        except (sqlite3.Error, OSError) as exc:  # _Damaged (a failed integrity check) is a sqlite3.Error
            if _is_damage(exc):
                if not self._set_aside(exc):
                    return None
                try:
                    conn = self._open_checked()
                except (sqlite3.Error, OSError) as again:
                    self._degrade(again)
                    return None
            else:
                self._conn = self._open_read_only()
                self._degrade(exc, reads=self._conn is not None)
                return self._conn
        self._conn = conn
        return conn

    def _open_checked(self) -> sqlite3.Connection:
        conn = sqlite3.connect(str(self.path), timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                row = conn.execute("PRAGMA quick_check(1)").fetchone()
            except sqlite3.Error as exc:
                raise (_Damaged(str(exc)) if _is_damage(exc) else exc) from None
            if row is None or row[0] != "ok":
                raise _Damaged(f"integrity check failed: {row[0] if row else 'no answer'}")
            tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not {"scores", "meta"} <= tables:  # a new file: the only time opening writes
                conn.execute(
                    "CREATE TABLE IF NOT EXISTS scores (evaluator TEXT NOT NULL, text_sha256 TEXT NOT NULL, "
                    "score REAL NOT NULL, truncated INTEGER NOT NULL, n_tokens INTEGER NOT NULL, "
                    "created REAL NOT NULL, PRIMARY KEY (evaluator, text_sha256)) WITHOUT ROWID"
                )
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)", (str(_SCHEMA_VERSION),))
            row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
            if row is None or row[0] != str(_SCHEMA_VERSION):
                raise sqlite3.OperationalError(
                    f"it has schema version {row[0] if row else 'none'} and this pytest-nlgeval reads version "
                    f"{_SCHEMA_VERSION}; delete it to start a new cache"
                )
        except BaseException:
            conn.close()
            raise
        return conn

    def _open_read_only(self) -> sqlite3.Connection | None:
        """A read-only connection for lookups when the file cannot be written; None when it cannot be read."""
        if not self.path.is_file():
            return None
        uri = self.path.resolve().as_uri()
        for query in ("mode=ro", "immutable=1"):  # immutable: a read-only mount where no -shm can be made
            try:
                conn = sqlite3.connect(
                    f"{uri}?{query}", uri=True, timeout=1.0, isolation_level=None, check_same_thread=False
                )
                row = conn.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
                if row is not None and row[0] == str(_SCHEMA_VERSION):
                    return conn
                conn.close()
                return None
            except sqlite3.Error:
                continue
        return None

    def _set_aside(self, exc: Exception) -> bool:
        """Rename a damaged file out of the way; False (and degraded to memory) when that is not possible."""
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
            except OSError as err:
                self._degrade(sqlite3.OperationalError(f"it is damaged ({exc}) and could not be set aside ({err})"))
                return False
        warnings.warn(
            f"the nlgeval score cache {str(self.path)!r} is damaged ({exc}); "
            + (f"moved it to {aside.name!r} and " if moved else "")
            + "starting an empty cache (this run scores everything again)",
            CacheWarning,
            stacklevel=4,
        )
        return True

    def _degrade(self, exc: BaseException, *, reads: bool | None = None) -> None:
        """Stop writing the file for the rest of the run (and reading it, unless ``reads``); warn once.

        The file is left exactly as it is: a locked, read-only or full cache is not a damaged one.
        """
        if not reads and self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None
        first = self._degraded is None
        self._degraded = str(exc)
        if first:
            warnings.warn(
                f"the nlgeval score cache {str(self.path)!r} cannot be "
                + ("written" if reads or self._conn is not None else "used")
                + f" ({_describe(exc)}); this run keeps its scores in memory and finishes, the file is left as it is",
                CacheWarning,
                stacklevel=4,
            )

    def close(self) -> None:
        if self._conn is not None and self._pid == os.getpid():
            self._conn.close()
        self._conn = None
        self._pid = None
        self._degraded = None

    # -- scores ------------------------------------------------------------------------------------------
    def get_many(self, evaluator_id: str, texts: Iterable[str]) -> dict[str, tuple[float, bool, int]]:
        """Cached ``(score, truncated, n_tokens)`` by text, for the texts that are cached."""
        keys = {text_key(t): t for t in texts}
        found: dict[str, tuple[float, bool, int]] = {}
        if not keys:
            return found
        with self._lock:
            for digest, text in keys.items():
                if (evaluator_id, digest) in self._memory:
                    found[text] = self._memory[(evaluator_id, digest)]
            conn = self._connect()
            items = [k for k in keys if keys[k] not in found]
            for start in range(0, len(items), _CHUNK):
                if conn is None:
                    break
                chunk = items[start : start + _CHUNK]
                marks = ",".join("?" * len(chunk))
                rows = self._query(
                    conn,
                    f"SELECT text_sha256, score, truncated, n_tokens FROM scores "
                    f"WHERE evaluator=? AND text_sha256 IN ({marks})",
                    [evaluator_id, *chunk],
                )
                for digest, score, truncated, n_tokens in rows:
                    if isinstance(score, float) and math.isfinite(score) and 0.0 <= score <= 1.0:
                        found[keys[digest]] = (score, bool(truncated), int(n_tokens))
                conn = self._conn
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put_many(self, evaluator_id: str, rows: Mapping[str, tuple[float, bool, int]]) -> None:
        """Store ``{text: (score, truncated, n_tokens)}`` for one evaluator in one transaction."""
        if not rows:
            return
        now = time.time()
        # a score that is not finite is no score: never written (SQLite stores NaN as NULL, which the table
        # refuses, and a refused write would turn the file off for the rest of the run)
        values = [
            (evaluator_id, text_key(t), float(s), int(bool(tr)), int(n), now)
            for t, (s, tr, n) in rows.items()
            if math.isfinite(float(s))
        ]
        if not values:
            return
        with self._lock:
            conn = self._connect()
            if conn is None or self._degraded is not None:
                self._remember(values)
                return

            def write() -> None:
                try:
                    conn.execute("BEGIN IMMEDIATE")
                    conn.executemany("INSERT OR REPLACE INTO scores VALUES (?, ?, ?, ?, ?, ?)", values)
                    conn.execute("COMMIT")
                except (sqlite3.Error, OSError):
                    try:
                        conn.execute("ROLLBACK")
                    except sqlite3.Error:
                        pass
                    raise

            try:
                _while_busy(write)
            except (sqlite3.Error, OSError) as exc:
                if _is_damage(exc):
                    self._recover(exc)
                else:
                    self._degrade(exc, reads=True)
                self._remember(values)

    def _remember(self, values: list[tuple]) -> None:
        for evaluator_id, digest, score, truncated, n_tokens, _ in values:
            self._memory[(evaluator_id, digest)] = (score, bool(truncated), n_tokens)

    # -- planned fingerprints --------------------------------------------------------------------------
    def get_meta(self, key: str) -> dict | None:
        with self._lock:
            if key in self._memory_meta:
                return dict(self._memory_meta[key])
            conn = self._connect()
            rows = self._query(conn, "SELECT value FROM meta WHERE key=?", [key]) if conn is not None else []
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
            if conn is None or self._degraded is not None:
                self._memory_meta[key] = dict(value)
                return
            try:
                conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, json.dumps(value, sort_keys=True)))
            except (sqlite3.Error, OSError) as exc:
                if _is_damage(exc):
                    self._recover(exc)
                    return
                self._degrade(exc, reads=True)
                self._memory_meta[key] = dict(value)

    def count(self, evaluator_id: str | None = None) -> int:
        """Scores in the file (plus those this run keeps in memory because the file could not take them)."""
        with self._lock:
            conn = self._connect()
            if conn is None:
                rows = []
            elif evaluator_id is None:
                rows = self._query(conn, "SELECT COUNT(*) FROM scores", [])
            else:
                rows = self._query(conn, "SELECT COUNT(*) FROM scores WHERE evaluator=?", [evaluator_id])
            extra = sum(1 for (ev, _) in self._memory if evaluator_id is None or ev == evaluator_id)
        return (int(rows[0][0]) if rows else 0) + extra

    def _query(self, conn: sqlite3.Connection, sql: str, params: list) -> list[tuple]:
        try:
            return conn.execute(sql, params).fetchall()
        except (sqlite3.Error, OSError) as exc:
            if _is_damage(exc):
                self._recover(exc)
            else:  # busy, locked, unreadable: stop reading the file this run, never set it aside
                self._degrade(exc)
            return []

    def _recover(self, exc: Exception) -> None:
        """Damage found after opening: set the file aside and continue with a fresh one."""
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
        self._conn = None
        if not self._set_aside(exc):
            return
        try:
            self._conn, self._pid = self._open_checked(), os.getpid()
        except (sqlite3.Error, OSError) as again:
            self._degrade(again)


def _describe(exc: BaseException) -> str:
    name = getattr(exc, "sqlite_errorname", None)
    return f"{exc}, {name}" if name else str(exc)
