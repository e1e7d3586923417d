"""The SQLite score cache: round trip, isolation by evaluator, damage recovery, concurrent writers."""
from __future__ import annotations

import multiprocessing
import sqlite3
import warnings

import pytest

from pytest_nlgeval.cache import CacheWarning, ScoreCache


def test_round_trip_and_isolation_by_evaluator(tmp_path):
    cache = ScoreCache(tmp_path / "c" / "scores.sqlite3")
    cache.put_many("ev1", {"question: a": (0.25, False, 7), "question: b": (0.75, True, 99)})
    assert cache.get_many("ev1", ["question: a", "question: b", "question: c"]) == {
        "question: a": (0.25, False, 7), "question: b": (0.75, True, 99)}
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
