"""The SQLite score cache: round trip, isolation by evaluator, damage recovery, concurrent writers."""

from __future__ import annotations

import multiprocessing
import sqlite3
import warnings

import pytest

from pytest_nlgeval.core.cache import CacheWarning, ScoreCache


def test_round_trip_and_isolation_by_evaluator(tmp_path):
    cache = ScoreCache(tmp_path / "c" / "scores.sqlite3")
    cache.put_many("ev1", {"question: a": (0.25, False, 7), "question: b": (0.75, True, 99)})
    assert cache.get_many("ev1", ["question: a", "question: b", "question: c"]) == {
        "question: a": (0.25, False, 7),
        "question: b": (0.75, True, 99),
    }
    assert cache.get_many("ev2", ["question: a"]) == {}  # another evaluator never sees these scores
    assert cache.get_many("ev1", ["question: a "]) == {}  # exact text only
    assert cache.hits == 2 and cache.misses == 3
    cache.close()
    assert ScoreCache(tmp_path / "c" / "scores.sqlite3").count("ev1") == 2  # persisted


def test_invalid_values_are_misses(tmp_path):
    cache = ScoreCache(tmp_path / "s.sqlite3")
    cache.put_many("ev", {"x": (0.5, False, 1)})
    conn = sqlite3.connect(tmp_path / "s.sqlite3")
    conn.execute("UPDATE scores SET score = 7.0")
    conn.commit()
    conn.close()
    assert ScoreCache(tmp_path / "s.sqlite3").get_many("ev", ["x"]) == {}


@pytest.mark.parametrize("damage", ["garbage", "truncated"])
def test_damaged_file_is_set_aside_with_a_warning(tmp_path, damage):
    path = tmp_path / "scores.sqlite3"
    cache = ScoreCache(path)
    cache.put_many("ev", {f"text {i}": (0.5, False, 3) for i in range(2000)})
    cache.close()
    data = path.read_bytes()
    if damage == "garbage":
        path.write_bytes(b"this is not a database at all" * 100)
    else:
        path.write_bytes(data[: len(data) // 2])
    with pytest.warns(CacheWarning, match="damaged"):
        fresh = ScoreCache(path)
        assert fresh.get_many("ev", ["text 1"]) == {}  # never read as scores
    aside = [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]
    assert len(aside) == 1
    fresh.put_many("ev", {"text 1": (0.9, False, 3)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ScoreCache(path).get_many("ev", ["text 1"]) == {"text 1": (0.9, False, 3)}


def _writer(path, worker, n):
    cache = ScoreCache(path)
    for start in range(0, n, 50):
        cache.put_many("ev", {f"w{worker} t{i}": (i / n, False, i) for i in range(start, start + 50)})
    cache.close()


def test_concurrent_processes_share_one_cache(tmp_path):
    path = tmp_path / "scores.sqlite3"
    ScoreCache(path).count()  # create it once, as a first worker would
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(path), w, 400)) for w in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    cache = ScoreCache(path)
    assert cache.count("ev") == 1200
    assert cache.get_many("ev", ["w2 t399"]) == {"w2 t399": (399 / 400, False, 399)}


def _recorded(tmp_path, n=20):
    path = tmp_path / "scores.sqlite3"
    cache = ScoreCache(path)
    cache.put_many("ev", {f"old {i}": (0.5, False, 3) for i in range(n)})
    cache.close()
    return path


def _file_rows(path):
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT COUNT(*) FROM scores").fetchone()[0]
    finally:
        conn.close()


def _warnings_of(action):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = action()
    return result, [w for w in caught if issubclass(w.category, CacheWarning)]


def _nothing_set_aside(tmp_path):
    return not [p.name for p in tmp_path.iterdir() if ".corrupt-" in p.name]


def _run_in_memory(cache):
    """What the evaluator does over a run: look up, store the misses, look up again."""
    assert cache.get_many("ev", ["old 1", "new 1"]) == {"old 1": (0.5, False, 3)}
    cache.put_many("ev", {f"new {i}": (0.25, True, 5) for i in range(3000)})
    cache.put_many("ev", {"new more": (0.75, False, 2)})
    cache.put_meta("plan", {"fingerprint": {"a": 1}})
    found = cache.get_many("ev", [f"new {i}" for i in range(3000)] + ["new more", "old 2"])
    assert len(found) == 3002 and found["new 7"] == (0.25, True, 5) and found["old 2"] == (0.5, False, 3)
    assert cache.get_meta("plan") == {"fingerprint": {"a": 1}}
    return found


def test_read_only_cache_warns_once_and_keeps_scores_in_memory(tmp_path, monkeypatch):
    path = _recorded(tmp_path)
    real_connect = sqlite3.connect

    def read_only(database, *args, **kwargs):  # what a read-only mount or file gives: SQLITE_READONLY on writes
        kwargs.pop("uri", None)
        return real_connect(
            f"file:{database}?mode=ro" if "file:" not in str(database) else database, *args, uri=True, **kwargs
        )

    monkeypatch.setattr(sqlite3, "connect", read_only)
    cache = ScoreCache(path)
    _, caught = _warnings_of(lambda: _run_in_memory(cache))
    assert len(caught) == 1 and "cannot be written" in str(caught[0].message)
    assert "readonly" in str(caught[0].message) and "keeps its scores in memory" in str(caught[0].message)
    monkeypatch.undo()
    assert _nothing_set_aside(tmp_path) and _file_rows(path) == 20  # the file is left as it was


def test_cache_folder_that_cannot_be_created_scores_in_memory(tmp_path):
    (tmp_path / "blocked").write_text("a file where the cache folder should be")
    cache = ScoreCache(tmp_path / "blocked" / "scores.sqlite3")
    _, caught = _warnings_of(lambda: cache.put_many("ev", {"a": (0.5, False, 1)}))
    assert len(caught) == 1 and "cannot be used" in str(caught[0].message)
    (found, more) = _warnings_of(lambda: cache.get_many("ev", ["a"]))
    assert found == {"a": (0.5, False, 1)} and not more and cache.count("ev") == 1


def test_write_lock_held_past_the_timeout_never_sets_the_cache_aside(tmp_path, monkeypatch):
    from pytest_nlgeval.core import cache as cache_module

    path = _recorded(tmp_path)
    monkeypatch.setattr(cache_module, "_BUSY_TIMEOUT_S", 0.2)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holding the write lock
    try:
        cache = ScoreCache(path)
        _, caught = _warnings_of(lambda: _run_in_memory(cache))
        assert len(caught) == 1 and "locked" in str(caught[0].message)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert _nothing_set_aside(tmp_path) and _file_rows(path) == 20
    # A later run writes to it again.
    later = ScoreCache(path)
    later.put_many("ev", {"after": (0.5, False, 1)})
    assert _file_rows(path) == 21


def test_full_disk_keeps_the_run_s_scores_and_the_file(tmp_path, monkeypatch):
    path = _recorded(tmp_path)
    real_connect = sqlite3.connect

    def full(database, *args, **kwargs):  # no page can be added: SQLITE_FULL, as on a full disk
        conn = real_connect(database, *args, **kwargs)
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return conn

    monkeypatch.setattr(sqlite3, "connect", full)
    cache = ScoreCache(path)
    _, caught = _warnings_of(lambda: _run_in_memory(cache))
    assert len(caught) == 1 and "full" in str(caught[0].message)
    assert cache.count("ev") == 20 + 3001
    monkeypatch.undo()
    assert _nothing_set_aside(tmp_path) and _file_rows(path) == 20


def test_damaged_file_that_cannot_be_moved_is_left_and_the_run_scores_in_memory(tmp_path, monkeypatch):
    import os

    path = _recorded(tmp_path)
    path.write_bytes(b"this is not a database at all" * 100)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)
    cache = ScoreCache(path)
    (found, caught) = _warnings_of(lambda: (cache.put_many("ev", {"a": (0.5, False, 1)}), cache.get_many("ev", ["a"])))
    assert found[1] == {"a": (0.5, False, 1)}
    assert len(caught) == 1 and "could not be set aside" in str(caught[0].message)
    assert path.read_bytes().startswith(b"this is not a database")


def test_a_write_sqlite_refuses_at_once_as_busy_is_retried_until_it_lands(tmp_path, monkeypatch):
    """SQLite answers some lock conflicts with SQLITE_BUSY without waiting (two pytest-xdist workers opening a new
    cache while one switches it to WAL): the write waits and lands; no warning, nothing kept only in memory."""
    path = _recorded(tmp_path)
    cache = ScoreCache(path)
    cache.get_many("ev", ["a"])  # connected
    real = cache._connect()
    refusals = {"left": 3}

    class Refusing:
        """The connection, refusing its first write transactions as SQLite does under such a conflict."""

        def execute(self, sql, *args):
            if sql == "BEGIN IMMEDIATE" and refusals["left"]:
                refusals["left"] -= 1
                error = sqlite3.OperationalError("database is locked")
                error.sqlite_errorname = "SQLITE_BUSY"
                raise error
            return real.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(real, name)

    monkeypatch.setattr(cache, "_connect", lambda: Refusing())
    _, caught = _warnings_of(lambda: cache.put_many("ev", {"late": (0.25, False, 3)}))
    assert not caught and refusals["left"] == 0
    assert _file_rows(path) == 21  # in the file, for the next run and the other worker
