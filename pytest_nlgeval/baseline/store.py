"""The baseline file: every check's stored score, read and written safely.

A baseline is a JSON file that is reviewed and committed next to the tests (pytest-regressions keeps its
expected data the same way). Keys are sorted and indented so that a re-recorded baseline shows in a diff
as the lines of the scores that moved::

    {
      "checks": {
        "tests/test_sum.py::test_faithful[3]::consistency::0": {
          "evaluator": "3f9c2a1b7d4e",
          "inputs_sha256": "…",
          "kind": "dimension",
          "name": "consistency",
          "nodeid": "tests/test_sum.py::test_faithful[3]",
          "operator": ">",
          "score": 0.8312,
          "task": "summarization",
          "threshold": 0.7
        }
      },
      "evaluators": {"3f9c2a1b7d4e": {"model": "…", "files": {"model.onnx": "<sha256>"}, "precision": "fp32", …}},
      "root": "..",
      "schema": "pytest-nlgeval/baseline",
      "version": 1
    }

``inputs_sha256`` is the sha256 of the check's inputs (the texts that were scored); it lets a comparison
across evaluators tell cases whose texts did not change (their score change is evaluator drift) from the rest.

``root`` (optional) is the folder the node ids in the keys are relative to, written relative to the baseline
file's own folder with ``/`` separators. pytest makes node ids relative to its rootdir, and the rootdir
depends on how pytest was invoked (a path given as ``--opt PATH`` takes part in rootdir detection); the
plugin rewrites this run's node ids relative to the recorded root (:meth:`Baseline.rebased`) so that the
keys do not depend on the invocation. A baseline without ``root`` (written by ``nlgeval baseline update``
or an older version) is compared with keys as they are.

Reading validates everything and reports the line of the first problem (:class:`BaselineFormatError`);
writing goes through a temporary file in the same folder and :func:`os.replace`, so an interrupted update
leaves the old file intact. :func:`update_baseline_file` is the safe way to record: it holds an exclusive lock
(the file ``NAME.lock`` beside the baseline) while it reads the baseline as it is on disk at that moment,
merges this run's checks into it and replaces the file, so two runs that record different checks of one
baseline at the same time (``pytest -k a`` and ``pytest -k b``) both keep theirs. Example::

    head = Baseline.from_results(results)            # a results dict (docs/results-schema.md)
    new, summary = update_baseline_file("nlgeval-baseline.json", head)

which, by hand and without the lock, is::

    old = load_baseline("nlgeval-baseline.json")
    new, summary = old.updated(head)
    write_baseline(new, "nlgeval-baseline.json")
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

from pytest_nlgeval.baseline.errors import BaselineFormatError, BaselineLockError
from pytest_nlgeval.baseline.jsontext import (
    DuplicateKey,
    NonFiniteNumber,
    key_pattern,
    line_at,
    line_of,
    line_of_duplicate,
    loads_strict,
    string_pattern,
)

__all__ = [
    "BASELINE_SCHEMA",
    "BASELINE_VERSION",
    "RESULTS_SCHEMA",
    "KINDS",
    "OPERATORS",
    "Baseline",
    "BaselineEntry",
    "UpdateSummary",
    "inputs_digest",
    "load_baseline",
    "load_snapshot",
    "lock_path",
    "parse_snapshot",
    "rebase_nodeid",
    "resolve_root",
    "root_for",
    "update_baseline_file",
    "write_baseline",
]

BASELINE_SCHEMA = "pytest-nlgeval/baseline"
BASELINE_VERSION = 1
RESULTS_SCHEMA = "pytest-nlgeval/results"
#: the kinds of checks a baseline holds; each is compared on its own scale (baseline/tolerances.py)
KINDS = ("dimension", "metric", "trajectory", "aggregate", "judged")
OPERATORS = (">", ">=", "<", "<=")
_ENTRY_FIELDS = ("evaluator", "inputs_sha256", "kind", "name", "nodeid", "operator", "score", "task", "threshold")
_RERECORD = "Fix the file by hand or re-record it with `pytest --nlgeval-baseline PATH --nlgeval-baseline-update`"


@dataclass(frozen=True)
class BaselineEntry:
    """The stored outcome of one check. ``score`` is None only for a results check whose score was not finite."""

    key: str
    nodeid: str
    kind: str
    name: str
    task: str | None
    score: float | None
    operator: str
    threshold: float | None
    evaluator: str | None
    inputs_sha256: str | None = None
    tolerance: float | None = None  # the marker's tolerance; read from results, never stored in a baseline

    @property
    def higher_is_better(self) -> bool:
        """A check ``score > t`` wants high scores, ``score < t`` (a distance, an error rate) low ones."""
        return self.operator in (">", ">=")

    @property
    def group(self) -> tuple[str, str | None, str]:
        """The suite-level group: checks of the same kind, task and name are cases of one dimension."""
        return (self.kind, self.task, self.name)

    def to_json(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _ENTRY_FIELDS}


@dataclass(frozen=True)
class UpdateSummary:
    """What :meth:`Baseline.updated` did, for the terminal and the command line."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()  # in the baseline but did not run: kept as they were
    pruned: tuple[str, ...] = ()  # did not run and were removed (only with prune=True)
    not_finite: tuple[str, ...] = ()  # ran, but the score was NaN/inf: the old entry (if any) was kept

    def describe(self) -> str:
        parts = [f"{len(self.added)} added", f"{len(self.changed)} changed", f"{len(self.unchanged)} unchanged"]
        if self.kept:
            parts.append(f"{len(self.kept)} kept (did not run)")
        if self.pruned:
            parts.append(f"{len(self.pruned)} removed (did not run)")
        if self.not_finite:
            parts.append(f"{len(self.not_finite)} not recorded (score not finite)")
        return ", ".join(parts)


@dataclass
class Baseline:
    """Checks by key plus the fingerprints of the evaluators that scored them.

    Built from a baseline file (:func:`load_baseline`) or from a results dict (:meth:`from_results`); the
    comparison treats both the same way, so ``nlgeval compare`` accepts either.
    """

    entries: dict[str, BaselineEntry] = field(default_factory=dict)
    evaluators: dict[str, dict] = field(default_factory=dict)
    source: str | None = None
    origin: str = "baseline"  # "baseline" (a baseline file) or "results" (a results file or dict)
    root: str | None = None  # folder of the node ids, relative to the baseline file's folder (see above)

    @classmethod
    def from_results(cls, results: Mapping[str, Any], source: str = "<results>") -> "Baseline":
        """Validate a results dict (docs/results-schema.md) and index its checks by key."""
        return _parse_results(results, source, text=None)

    def to_dict(self) -> dict[str, Any]:
        used = {e.evaluator for e in self.entries.values() if e.evaluator is not None}
        data = {
            "schema": BASELINE_SCHEMA,
            "version": BASELINE_VERSION,
            "evaluators": {k: self.evaluators.get(k, {}) for k in sorted(used)},
            "checks": {key: self.entries[key].to_json() for key in sorted(self.entries)},
        }
        if self.root is not None:
            data["root"] = self.root
        return data

    def rebased(self, from_dir: str | os.PathLike, to_dir: str | os.PathLike) -> "Baseline":
        """This snapshot with every node id (and key) made relative to ``to_dir`` instead of ``from_dir``.

        ``tests/test_a.py::test_x`` recorded under rootdir ``/proj`` reads ``proj/tests/test_a.py::test_x``
        relative to ``/``. Node ids that are not paths (``<outside a test>``) are kept as they are.
        """
        from_dir, to_dir = os.path.abspath(from_dir), os.path.abspath(to_dir)
        if from_dir == to_dir:
            return self
        return self.renamed(lambda nodeid: rebase_nodeid(nodeid, from_dir, to_dir))

    def renamed(self, rename: Callable[[str], str]) -> "Baseline":
        """This snapshot with every node id (and the key that starts with it) replaced by ``rename(nodeid)``."""
        entries = {}
        for key, entry in self.entries.items():
            nodeid = rename(entry.nodeid)
            new_key = nodeid + key[len(entry.nodeid) :] if key.startswith(entry.nodeid) else key
            entries[new_key] = replace(entry, key=new_key, nodeid=nodeid)
        return Baseline(entries, dict(self.evaluators), self.source, self.origin, self.root)

    def dumps(self) -> str:
        """The file's text: sorted keys, two-space indent, one trailing newline (stable diffs)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"

    def updated(self, head: "Baseline", *, prune: bool = False) -> tuple["Baseline", UpdateSummary]:
        """This baseline with the checks that ran in ``head`` re-recorded.

        Entries of checks that did not run are kept (a ``-k`` run never drops the rest) unless ``prune``.
        A check that ran with a non-finite score keeps its old entry: a baseline holds numbers only.
        """
        entries = dict(self.entries)
        evaluators = dict(self.evaluators)
        added: list[str] = []
        changed: list[str] = []
        unchanged: list[str] = []
        not_finite: list[str] = []
        for key in sorted(head.entries):
            new = replace(head.entries[key], tolerance=None)
            if new.score is None:
                not_finite.append(key)
                continue
            old = entries.get(key)
            (added if old is None else unchanged if old == new else changed).append(key)
            entries[key] = new
            if new.evaluator is not None:
                evaluators[new.evaluator] = dict(head.evaluators.get(new.evaluator, {}))
        stale = sorted(set(self.entries) - set(head.entries))
        if prune:
            for key in stale:
                del entries[key]
        summary = UpdateSummary(
            tuple(added),
            tuple(changed),
            tuple(unchanged),
            kept=() if prune else tuple(stale),
            pruned=tuple(stale) if prune else (),
            not_finite=tuple(not_finite),
        )
        return Baseline(entries, evaluators, self.source, "baseline", self.root), summary


def rebase_nodeid(nodeid: str, from_dir: str, to_dir: str) -> str:
    """``nodeid`` (relative to ``from_dir``) relative to ``to_dir``, with ``/`` separators."""
    path, sep, rest = nodeid.partition("::")
    if not path or path.startswith("<") or os.path.isabs(path):
        return nodeid
    target = os.path.normpath(os.path.join(from_dir, *path.split("/")))
    try:
        rel = os.path.relpath(target, to_dir)
    except ValueError:  # another drive on Windows: no relative path exists
        return nodeid
    return rel.replace(os.sep, "/") + sep + rest


def root_for(baseline_path: str | os.PathLike, root_dir: str | os.PathLike) -> str:
    """The ``root`` field for node ids relative to ``root_dir``, stored next to ``baseline_path``."""
    folder = os.path.dirname(os.path.abspath(baseline_path))
    try:
        rel = os.path.relpath(os.path.abspath(root_dir), folder)
    except ValueError:  # another drive on Windows
        return os.path.abspath(root_dir)
    return rel.replace(os.sep, "/")


def resolve_root(baseline: Baseline, baseline_path: str | os.PathLike) -> str | None:
    """The absolute folder a baseline's node ids are relative to; None when it records none."""
    if baseline.root is None:
        return None
    folder = os.path.dirname(os.path.abspath(baseline_path))
    return os.path.normpath(os.path.join(folder, *baseline.root.split("/")))


def inputs_digest(inputs: Any) -> str | None:
    """sha256 of a check's inputs (``details["inputs"]``) in canonical JSON; None when there are none."""
    if not inputs:
        return None
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# ----------------------------------------------------------------------------------------------- reading


def load_baseline(path: str | os.PathLike) -> Baseline:
    """Read and validate a baseline file; :class:`BaselineFormatError` names the line of any problem."""
    path = os.fspath(path)
    snapshot = load_snapshot(path)
    if snapshot.origin != "baseline":
        raise BaselineFormatError(
            path,
            1,
            f"this is a results file ({RESULTS_SCHEMA}), not a baseline",
            "Turn it into one with `nlgeval baseline update RESULTS.json -o BASELINE.json`",
        )
    return snapshot


def load_snapshot(path: str | os.PathLike) -> Baseline:
    """Read a baseline file or a results file (told apart by their ``schema``) as a :class:`Baseline`."""
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise BaselineFormatError(path, None, "file not found") from None
    except IsADirectoryError:
        raise BaselineFormatError(path, None, "is a folder, not a baseline or results file") from None
    except OSError as exc:
        raise BaselineFormatError(path, None, f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise BaselineFormatError(path, None, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return parse_snapshot(text, path)


def parse_snapshot(text: str, path: str = "<string>") -> Baseline:
    """Parse the text of a baseline or results file (see :func:`load_snapshot`)."""
    conflict = re.search(r"^(<{7}|={7}|>{7})( |$)", text, flags=re.MULTILINE)
    if conflict:
        raise BaselineFormatError(
            path,
            line_at(text, conflict.start()),
            "unresolved merge conflict marker",
            "Resolve the conflict by re-recording the baseline rather than merging scores",
        )
    if not text.strip():
        raise BaselineFormatError(path, 1, "the file is empty", _RERECORD)
    try:
        data = loads_strict(text)
    except json.JSONDecodeError as exc:
        raise BaselineFormatError(
            path, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno})", _RERECORD
        ) from None
    except RecursionError:
        raise BaselineFormatError(path, None, "JSON nested too deeply to be a baseline or results file") from None
    except DuplicateKey as exc:
        raise BaselineFormatError(
            path, line_of_duplicate(text, exc.key), f"key {exc.key!r} appears twice", _RERECORD
        ) from None
    except NonFiniteNumber as exc:
        pos = text.find(exc.token)
        raise BaselineFormatError(
            path,
            line_at(text, pos) if pos >= 0 else None,
            f"{exc.token} is not a valid score (scores are finite numbers)",
            _RERECORD,
        ) from None
    if not isinstance(data, dict):
        raise BaselineFormatError(path, 1, "the top level must be a JSON object", _RERECORD)
    schema = data.get("schema")
    if schema == RESULTS_SCHEMA:
        return _parse_results(data, path, text)
    if schema != BASELINE_SCHEMA:
        raise BaselineFormatError(
            path,
            line_of(text, ['"schema"\\s*:']),
            f"schema is {schema!r}, expected {BASELINE_SCHEMA!r} or {RESULTS_SCHEMA!r}",
        )
    return _parse_baseline(data, path, text)


def _parse_baseline(data: dict, path: str, text: str) -> Baseline:
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise BaselineFormatError(
            path, line_of(text, ['"version"\\s*:']), f"version must be an integer, got {version!r}"
        )
    if version > BASELINE_VERSION:
        raise BaselineFormatError(
            path,
            line_of(text, ['"version"\\s*:']),
            f"version {version} was written by a newer pytest-nlgeval (this one reads version {BASELINE_VERSION})",
            "Upgrade pytest-nlgeval",
        )
    if version < 1:
        raise BaselineFormatError(path, line_of(text, ['"version"\\s*:']), f"unknown version {version}")
    evaluators = data.get("evaluators", {})
    if not isinstance(evaluators, dict) or not all(isinstance(v, dict) for v in evaluators.values()):
        raise BaselineFormatError(
            path,
            line_of(text, ['"evaluators"\\s*:']),
            "evaluators must map fingerprint ids to fingerprint objects",
            _RERECORD,
        )
    checks = data.get("checks")
    if not isinstance(checks, dict):
        raise BaselineFormatError(
            path, line_of(text, ['"checks"\\s*:']), "checks must be an object mapping check keys to entries", _RERECORD
        )
    unknown = sorted(set(data) - {"schema", "version", "evaluators", "checks", "root"})
    if unknown:
        raise BaselineFormatError(
            path,
            line_of(text, [re.escape(json.dumps(unknown[0])) + r"\s*:"]),
            f"unknown top-level key {unknown[0]!r}",
            _RERECORD,
        )
    root = data.get("root")
    if root is not None and (not isinstance(root, str) or not root):
        raise BaselineFormatError(
            path,
            line_of(text, ['"root"\\s*:']),
            f"root must be a non-empty folder path relative to the baseline file, got {root!r}",
            _RERECORD,
        )
    entries = {}
    for key, raw in checks.items():

        def where(field_name: str | None = None, key=key) -> int | None:
            anchors = [key_pattern(key)]
            if field_name is not None:
                anchors.append(re.escape(json.dumps(field_name)) + r"\s*:")
            return line_of(text, anchors, stop_at="}" if field_name else None)

        if not isinstance(raw, dict):
            raise BaselineFormatError(path, where(), f"entry {key!r} must be an object", _RERECORD)
        missing = [f for f in _ENTRY_FIELDS if f not in raw and f != "inputs_sha256"]
        if missing:
            raise BaselineFormatError(path, where(), f"entry {key!r} lacks {', '.join(missing)}", _RERECORD)
        extra = sorted(set(raw) - set(_ENTRY_FIELDS))
        if extra:
            raise BaselineFormatError(path, where(extra[0]), f"entry {key!r} has unknown field {extra[0]!r}", _RERECORD)
        problem, field_name = _entry_problem(raw, require_score=True)
        if problem is None and raw["evaluator"] is not None and raw["evaluator"] not in evaluators:
            problem, field_name = f"evaluator {raw['evaluator']!r} is not listed under evaluators", "evaluator"
        if problem is not None:
            raise BaselineFormatError(path, where(field_name), f"entry {key!r}: {problem}", _RERECORD)
        entries[key] = _entry(key, raw)
    return Baseline(entries, {k: dict(v) for k, v in evaluators.items()}, path, "baseline", root)


def _parse_results(data: Mapping[str, Any], path: str, text: str | None) -> Baseline:
    def fail(problem: str, line: int | None = None):
        raise BaselineFormatError(
            path, line, problem, "Results files are written by `pytest --nlgeval-json PATH`; do not edit them"
        )

    if data.get("schema") != RESULTS_SCHEMA:
        fail(f"schema is {data.get('schema')!r}, expected {RESULTS_SCHEMA!r}")
    checks = data.get("checks")
    if not isinstance(checks, list):
        fail("checks must be a list", line_of(text, ['"checks"\\s*:']) if text else None)
    evaluators = data.get("evaluators") or {}
    if not isinstance(evaluators, dict):
        fail("evaluators must be an object", line_of(text, ['"evaluators"\\s*:']) if text else None)
    entries: dict[str, BaselineEntry] = {}
    for position, raw in enumerate(checks or []):
        if not isinstance(raw, dict) or not isinstance(raw.get("key"), str):
            fail(f"checks[{position}] must be an object with a string key")
        key = raw["key"]
        line = line_of(text, [r'"key"\s*:\s*' + string_pattern(key)]) if text else None
        for name in ("nodeid", "kind", "name", "operator"):
            if name not in raw:
                fail(f"check {key!r} lacks {name}", line)
        problem, _ = _entry_problem(raw, require_score=False)
        if (
            problem is None
            and "tolerance" in raw
            and raw["tolerance"] is not None
            and not _finite_number(raw["tolerance"])
        ):
            problem = f"tolerance must be a number, got {raw['tolerance']!r}"
        if problem is not None:
            fail(f"check {key!r}: {problem}", line)
        if key in entries:
            fail(f"check key {key!r} appears twice", line)
        details = raw.get("details") or {}
        digest = inputs_digest(details.get("inputs")) if isinstance(details, dict) else None
        entries[key] = _entry(key, {**raw, "inputs_sha256": digest})
    return Baseline(entries, {k: dict(v) for k, v in evaluators.items() if isinstance(v, dict)}, path, "results")


def _entry_problem(raw: Mapping[str, Any], *, require_score: bool) -> tuple[str | None, str | None]:
    """The first thing wrong with an entry's fields, and the field's name."""
    if not isinstance(raw.get("nodeid"), str):
        return f"nodeid must be a string, got {raw.get('nodeid')!r}", "nodeid"
    if raw.get("kind") not in KINDS:
        return f"kind must be one of {', '.join(KINDS)}, got {raw.get('kind')!r}", "kind"
    if not isinstance(raw.get("name"), str) or not raw["name"]:
        return f"name must be a non-empty string, got {raw.get('name')!r}", "name"
    if raw.get("task") is not None and not isinstance(raw["task"], str):
        return f"task must be a string or null, got {raw['task']!r}", "task"
    score = raw.get("score")
    if not (_finite_number(score) or (score is None and not require_score)):
        return f"score must be a finite number, got {score!r}", "score"
    if raw.get("operator") not in OPERATORS:
        return f"operator must be one of {' '.join(OPERATORS)}, got {raw.get('operator')!r}", "operator"
    if raw.get("threshold") is not None and not _finite_number(raw["threshold"]):
        return f"threshold must be a number or null, got {raw['threshold']!r}", "threshold"
    if raw.get("evaluator") is not None and not isinstance(raw["evaluator"], str):
        return f"evaluator must be a fingerprint id or null, got {raw['evaluator']!r}", "evaluator"
    digest = raw.get("inputs_sha256")
    if digest is not None and not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
        return f"inputs_sha256 must be 64 hex digits or null, got {digest!r}", "inputs_sha256"
    return None, None


def _entry(key: str, raw: Mapping[str, Any]) -> BaselineEntry:
    score = raw.get("score")
    threshold = raw.get("threshold")
    tolerance = raw.get("tolerance")
    return BaselineEntry(
        key=key,
        nodeid=raw["nodeid"],
        kind=raw["kind"],
        name=raw["name"],
        task=raw.get("task"),
        score=None if score is None else float(score),
        operator=raw["operator"],
        threshold=None if threshold is None else float(threshold),
        evaluator=raw.get("evaluator"),
        inputs_sha256=raw.get("inputs_sha256"),
        tolerance=None if tolerance is None else float(tolerance),
    )


def _finite_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


# ----------------------------------------------------------------------------------------------- writing


def write_baseline(baseline: Baseline, path: str | os.PathLike) -> None:
    """Write ``baseline`` to ``path`` atomically.

    The text goes to a temporary file in the same folder, is flushed to disk, and then replaces ``path``
    in one :func:`os.replace` (atomic on POSIX and Windows): after an interrupt or a crash at any point the
    file is either the old baseline or the new one, never half of each.
    """
    from pytest_nlgeval.util.files import write_text_atomic

    write_text_atomic(path, baseline.dumps())


def lock_path(path: str | os.PathLike) -> str:
    """The lock file of the baseline ``path``: ``NAME.lock`` in the same folder (present only during an update)."""
    return os.fspath(path) + ".lock"


def update_baseline_file(
    path: str | os.PathLike,
    head: Baseline,
    *,
    prune: bool = False,
    rootdir: str | os.PathLike | None = None,
    timeout: float | None = None,
) -> tuple[Baseline, UpdateSummary]:
    """Record the checks of ``head`` into the baseline file ``path``, merged with what the file holds now.

    Under an exclusive lock on :func:`lock_path` (waiting at most ``timeout`` seconds for another update, then
    :class:`BaselineLockError`), the file is read as it is on disk at this moment (not as it was when the run
    started: another run may have recorded other checks meanwhile), ``head`` is merged in
    (:meth:`Baseline.updated`, with ``prune``) and the result replaces the file atomically.

    ``rootdir`` is the folder the node ids of ``head`` are relative to (pytest's rootdir): they are rewritten
    relative to the baseline's recorded ``root`` before merging, and a baseline without a usable ``root``
    records ``rootdir`` as its root. Without ``rootdir`` the keys are merged as they are.
    """
    from pytest_nlgeval.util.locks import DEFAULT_TIMEOUT_S, LockTimeout, exclusive_lock

    path = os.fspath(path)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    try:
        with exclusive_lock(lock_path(path), timeout=DEFAULT_TIMEOUT_S if timeout is None else timeout):
            old = load_baseline(path) if os.path.exists(path) else Baseline(source=path)
            if rootdir is not None:
                root = resolve_root(old, path)
                if root is not None and os.path.isdir(root):
                    head = head.rebased(rootdir, root)  # keys as the baseline has them, whatever the rootdir now
                else:
                    # First recording, a baseline without root (its keys are taken as relative to this
                    # rootdir), or a recorded root that no longer exists: the keys are relative to ``rootdir``.
                    old = replace(old, root=root_for(path, rootdir))
            new, summary = old.updated(head, prune=prune)
            write_baseline(new, path)
    except LockTimeout as exc:
        raise BaselineLockError(path, f"{exc} (another run is updating it)") from None
    return new, summary
