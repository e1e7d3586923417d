"""The baseline file: stable format, validation that names the line, merge-updates, atomic writes."""

from __future__ import annotations

import json
import os

import pytest

from baseline_results import FINGERPRINT, base_scores, make_results
from pytest_nlgeval.baseline import store
from pytest_nlgeval.baseline.errors import BaselineFormatError
from pytest_nlgeval.baseline.store import Baseline, load_baseline, load_snapshot, write_baseline


def _baseline(tmp_path, **kw) -> tuple[Baseline, str]:
    results = make_results(
        {("summarization", "fluency"): base_scores(6), ("summarization", "coherence"): [0.5, 0.6]}, **kw
    )
    path = str(tmp_path / "nlgeval-baseline.json")
    write_baseline(Baseline.from_results(results), path)
    return load_baseline(path), path


def test_round_trip_and_stable_sorted_format(tmp_path):
    baseline, path = _baseline(tmp_path)
    text = open(path, encoding="utf-8").read()
    data = json.loads(text)
    assert data["schema"] == "pytest-nlgeval/baseline" and data["version"] == 1
    assert list(data) == sorted(data) and list(data["checks"]) == sorted(data["checks"])
    entry = data["checks"]["tests/test_app.py::test_fluency[case0]::fluency::0"]
    assert list(entry) == sorted(entry)
    assert entry["score"] == base_scores(6)[0] and entry["evaluator"] == "fp32aaaa"
    assert len(entry["inputs_sha256"]) == 64
    assert data["evaluators"]["fp32aaaa"] == FINGERPRINT
    assert len(baseline.entries) == 8
    # Writing what was read gives the same bytes: re-recording an unchanged suite leaves no diff.
    write_baseline(baseline, path)
    assert open(path, encoding="utf-8").read() == text
    assert text.endswith("}\n") and "\n  \"checks\": {\n" in text


def _edit(path, old, new, count=1):
    text = open(path, encoding="utf-8").read()
    assert old in text
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text.replace(old, new, count))
    return text


def _line_with(path, needle):
    for number, line in enumerate(open(path, encoding="utf-8"), 1):
        if needle in line:
            return number
    raise AssertionError(needle)


def test_truncated_file_names_the_line(tmp_path):
    _, path = _baseline(tmp_path)
    text = open(path, encoding="utf-8").read()
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text[: len(text) // 2])
    with pytest.raises(BaselineFormatError, match=r"nlgeval-baseline.json, line \d+: not valid JSON") as info:
        load_baseline(path)
    assert info.value.line == text[: len(text) // 2].count("\n") + 1


@pytest.mark.parametrize(
    "old, new, field, problem",
    [
        ('"score": 0.', '"score": "0.', "score", "score must be a finite number"),
        ('"operator": ">"', '"operator": "=>"', "operator", "operator must be one of"),
        ('"kind": "dimension"', '"kind": "dimensoin"', "kind", "kind must be one of"),
        ('"evaluator": "fp32aaaa"', '"evaluator": "fp16bbbb"', "evaluator", "is not listed under evaluators"),
        ('"threshold": 0.1', '"threshold": true', "threshold", "threshold must be a number"),
    ],
)
def test_hand_edited_entry_names_the_line_of_the_field(tmp_path, old, new, field, problem):
    _, path = _baseline(tmp_path)
    if field == "score":  # make the string literal valid JSON: "0.xxxx" -> close the quote after the number
        text = open(path, encoding="utf-8").read()
        first = text.index('"score": ') + len('"score": ')
        end = text.index(",", first) if text.index(",", first) < text.index("\n", first) else text.index("\n", first)
        text = text[:first] + '"' + text[first:end] + '"' + text[end:]
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        _edit(path, old, new)
    needle = new if field != "score" else '"score": "'
    with pytest.raises(BaselineFormatError, match=problem) as info:
        load_baseline(path)
    assert info.value.line == _line_with(path, needle)
    assert f"line {info.value.line}" in str(info.value) and "re-record" in str(info.value)


def test_nan_duplicate_conflict_and_versions_are_errors(tmp_path):
    _, path = _baseline(tmp_path)
    original = _edit(path, '"score": 0.', '"score": NaN, "x": 0.')
    with pytest.raises(BaselineFormatError, match="NaN is not a valid score") as info:
        load_baseline(path)
    assert info.value.line == _line_with(path, "NaN")

    # A duplicated entry (e.g. a bad hand merge) names the line of the second copy.
    data = json.loads(original)
    key = sorted(data["checks"])[0]
    lines = original.splitlines(keepends=True)
    start = _line_with_text(lines, json.dumps(key) + ": {")
    block = lines[start : start + 11]
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("".join(lines[: start + 11] + block + lines[start + 11 :]))
    with pytest.raises(BaselineFormatError, match="appears twice") as info:
        load_baseline(path)
    assert info.value.line == start + 12

    with open(path, "w", encoding="utf-8") as fh:
        fh.write(original.replace('  "checks": {\n', '<<<<<<< HEAD\n  "checks": {\n', 1))
    with pytest.raises(BaselineFormatError, match="merge conflict") as info:
        load_baseline(path)
    assert info.value.line == 2

    with open(path, "w", encoding="utf-8") as fh:
        fh.write(original.replace('"version": 1', '"version": 7'))
    with pytest.raises(BaselineFormatError, match="newer pytest-nlgeval"):
        load_baseline(path)

    for bad in ("", "[1, 2]", '{"schema": "something-else"}'):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(bad)
        with pytest.raises(BaselineFormatError):
            load_baseline(path)
    with pytest.raises(BaselineFormatError, match="file not found"):
        load_baseline(tmp_path / "missing.json")


def _line_with_text(lines, needle):
    for i, line in enumerate(lines):
        if needle in line:
            return i
    raise AssertionError(needle)


def test_results_files_are_read_but_are_not_baselines(tmp_path):
    results = make_results({("summarization", "fluency"): [0.5, float("nan")]})
    results["checks"][1]["score"] = None  # how the core writes a non-finite score
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results, indent=2, sort_keys=True))
    snap = load_snapshot(path)
    assert snap.origin == "results" and snap.entries[results["checks"][1]["key"]].score is None
    with pytest.raises(BaselineFormatError, match="results file"):
        load_baseline(path)
    results["checks"][0]["operator"] = "!="
    path.write_text(json.dumps(results, indent=2, sort_keys=True))
    with pytest.raises(BaselineFormatError, match="operator must be one of") as info:
        load_snapshot(path)
    assert info.value.line == _line_with(path, '"key": ' + json.dumps(results["checks"][0]["key"]))


def test_update_rerecords_what_ran_and_keeps_the_rest(tmp_path):
    old, _ = _baseline(tmp_path)
    run = make_results({("summarization", "fluency"): [0.11, 0.12], ("summarization", "relevance"): [0.7]})
    run["checks"].append(dict(run["checks"][0], key="tests/x.py::t::fluency::0", nodeid="tests/x.py::t", score=None))
    new, summary = old.updated(Baseline.from_results(run))
    assert (
        len(summary.changed) == 2 and len(summary.added) == 1 and summary.not_finite == ("tests/x.py::t::fluency::0",)
    )
    assert len(summary.kept) == 6 and "tests/x.py::t::fluency::0" not in new.entries
    assert new.entries["tests/test_app.py::test_fluency[case0]::fluency::0"].score == 0.11
    assert (
        new.entries["tests/test_app.py::test_fluency[case5]::fluency::0"].score
        == old.entries["tests/test_app.py::test_fluency[case5]::fluency::0"].score
    )
    pruned, summary = old.updated(Baseline.from_results(run), prune=True)
    assert len(pruned.entries) == 3 and len(summary.pruned) == 6
    assert "6 kept (did not run)" in old.updated(Baseline.from_results(run))[1].describe()


@pytest.mark.parametrize("where", ["write", "fsync", "replace"])
def test_interrupted_update_leaves_the_old_file(tmp_path, monkeypatch, where):
    old, path = _baseline(tmp_path)
    before = open(path, "rb").read()
    new, _ = old.updated(Baseline.from_results(make_results({("summarization", "fluency"): [0.0] * 6})))

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if where == "write":
        real_fdopen = os.fdopen
        # Half of the text reaches the temporary file, then the interrupt comes.
        monkeypatch.setattr(store.os, "fdopen", lambda *a, **k: _HalfWriter(real_fdopen(*a, **k)))
    else:
        monkeypatch.setattr(store.os, where, interrupt)
    with pytest.raises(KeyboardInterrupt):
        write_baseline(new, path)
    assert open(path, "rb").read() == before
    assert load_baseline(path).entries == old.entries
    assert os.listdir(tmp_path) == ["nlgeval-baseline.json"]  # no temporary file left behind


class _HalfWriter:
    """A file whose writing is interrupted halfway through the text."""

    def __init__(self, fh):
        self.fh = fh

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.fh.close()

    def write(self, text):
        self.fh.write(text[: len(text) // 2])
        self.fh.flush()
        raise KeyboardInterrupt


def test_write_sets_ordinary_permissions_and_creates_folders(tmp_path):
    baseline, _ = _baseline(tmp_path)
    target = tmp_path / "sub" / "dir" / "b.json"
    write_baseline(baseline, target)
    assert load_baseline(target).entries == baseline.entries
    assert os.stat(target).st_mode & 0o644 == 0o644


def test_root_is_recorded_validated_and_rebases_node_ids(tmp_path):
    baseline, path = _baseline(tmp_path)
    assert baseline.root is None and "root" not in json.loads(open(path, encoding="utf-8").read())
    (tmp_path / "proj").mkdir()
    baseline.root = store.root_for(path, tmp_path / "proj")
    assert baseline.root == "proj"
    write_baseline(baseline, path)
    again = load_baseline(path)
    assert again.root == "proj" and store.resolve_root(again, path) == str(tmp_path / "proj")
    updated, _ = again.updated(Baseline())
    assert updated.root == "proj"  # re-recording keeps it
    # A run whose rootdir is the folder above: its node ids are rewritten relative to the recorded root.
    wide = again.rebased(tmp_path / "proj", tmp_path)
    key = "proj/tests/test_app.py::test_fluency[case0]::fluency::0"
    assert wide.entries[key].nodeid == "proj/tests/test_app.py::test_fluency[case0]"
    assert sorted(wide.rebased(tmp_path, tmp_path / "proj").entries) == sorted(again.entries)
    assert store.rebase_nodeid("<outside a test>", "/a", "/") == "<outside a test>"
    _edit(path, '"root": "proj"', '"root": 3')
    with pytest.raises(BaselineFormatError, match=r"line \d+: root must be a non-empty folder path"):
        load_baseline(path)


def test_temporary_files_of_a_killed_update_are_removed_by_the_next_write(tmp_path):
    import time

    baseline, path = _baseline(tmp_path)
    # What a SIGKILL between writing the temporary file and the replace leaves behind.
    killed = tmp_path / ".nlgeval-baseline.json.k1ll3d.tmp"
    killed.write_text('{"checks": {')
    old = time.time() - 3600
    os.utime(killed, (old, old))
    recent = tmp_path / ".nlgeval-baseline.json.wr1t1ng.tmp"  # another writer, still at work
    recent.write_text("{")
    other = tmp_path / ".other.json.k1ll3d.tmp"  # not this file's
    other.write_text("{")
    os.utime(other, (old, old))
    write_baseline(baseline, path)
    assert not killed.exists() and recent.exists() and other.exists()
    assert load_baseline(path).entries == baseline.entries


def test_update_merges_with_the_file_as_it_is_at_write_time(tmp_path):
    # Two runs read the same (empty) baseline; each records its own checks. The second must keep the first's.
    path = str(tmp_path / "nlgeval-baseline.json")
    first = Baseline.from_results(make_results({("summarization", "fluency"): [0.4, 0.5]}))
    second = Baseline.from_results(make_results({("summarization", "coherence"): [0.6]}))
    store.update_baseline_file(path, first)
    new, summary = store.update_baseline_file(path, second)
    assert sorted(load_baseline(path).entries) == sorted([*first.entries, *second.entries])
    assert summary.added == tuple(second.entries) and len(summary.kept) == 2
    assert new.entries == load_baseline(path).entries
    assert os.listdir(tmp_path) == ["nlgeval-baseline.json"]  # the lock file is gone after the update


def test_update_records_the_root_and_rebases_onto_it(tmp_path):
    (tmp_path / "proj").mkdir()
    path = str(tmp_path / "bl" / "b.json")
    run = Baseline.from_results(make_results({("summarization", "fluency"): [0.4]}))
    store.update_baseline_file(path, run, rootdir=tmp_path / "proj")
    assert load_baseline(path).root == "../proj"
    # The same check from a run whose rootdir is the folder above: the key stays the recorded one.
    wide = run.rebased(tmp_path / "proj", tmp_path)
    _, summary = store.update_baseline_file(path, wide, rootdir=tmp_path)
    assert summary.unchanged == tuple(run.entries) and not summary.added


def test_a_held_lock_makes_an_update_wait_then_fail_naming_the_lock(tmp_path):
    import threading

    from pytest_nlgeval.baseline.errors import BaselineLockError
    from pytest_nlgeval.util.locks import exclusive_lock

    path = str(tmp_path / "nlgeval-baseline.json")
    run = Baseline.from_results(make_results({("summarization", "fluency"): [0.4]}))
    lock = store.lock_path(path)
    assert lock == path + ".lock"
    with exclusive_lock(lock):
        with pytest.raises(
            BaselineLockError, match=r"could not update the baseline .*: could not lock .*\.lock within"
        ):
            store.update_baseline_file(path, run, timeout=0.2)
        assert not os.path.exists(path)
        # An update waiting for the lock goes ahead once it is released, and reads what was written meanwhile.
        waiting = threading.Thread(target=store.update_baseline_file, args=(path, run), kwargs={"timeout": 30})
        waiting.start()
        other = Baseline.from_results(make_results({("summarization", "coherence"): [0.6]}))
        write_baseline(other, path)
    waiting.join(30)
    assert not waiting.is_alive()
    assert sorted(load_baseline(path).entries) == sorted([*run.entries, *other.entries])


class _RefusingFcntl:
    """fcntl on a file system that does not support flock (some network file systems)."""

    LOCK_EX, LOCK_NB = 2, 4

    @staticmethod
    def flock(fd, operation):
        import errno

        raise OSError(errno.ENOLCK, "No locks available")


@pytest.mark.parametrize("kind", ["flock", "exclusive-file", "flock-refused"])
def test_the_lock_is_exclusive_between_threads(tmp_path, monkeypatch, kind):
    import threading
    import time

    from pytest_nlgeval.util import locks

    if kind == "exclusive-file":
        monkeypatch.setattr(locks, "fcntl", None)  # what Windows has
    elif kind == "flock-refused":
        monkeypatch.setattr(locks, "fcntl", _RefusingFcntl)
    elif locks.fcntl is None:
        pytest.skip("no fcntl on this platform")
    lock = str(tmp_path / "f.lock")
    inside, overlaps = [], []

    def worker():
        for _ in range(20):
            with locks.exclusive_lock(lock, timeout=30, poll=0.001):
                if inside:
                    overlaps.append(1)
                inside.append(1)
                time.sleep(0.001)
                inside.pop()

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not overlaps and os.listdir(tmp_path) == []


def test_a_lock_file_left_by_a_killed_process_is_named_in_the_error(tmp_path, monkeypatch):
    from pytest_nlgeval.util import locks

    monkeypatch.setattr(locks, "fcntl", None)  # the exclusive-file lock: a killed holder leaves its file
    lock = tmp_path / "nlgeval-baseline.json.lock"
    lock.write_text("pid 4242 on ci-runner\n")
    with pytest.raises(locks.LockTimeout) as info:
        with locks.exclusive_lock(lock, timeout=0.1):
            pass
    message = str(info.value)
    assert "held by pid 4242 on ci-runner" in message and f"delete {lock} and run again" in message
    lock.unlink()
    with locks.exclusive_lock(lock, timeout=0.1):
        assert lock.exists()
    assert not lock.exists()
