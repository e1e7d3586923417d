"""pytest side of the regression baselines (entry point ``pytest11: nlgeval_baseline``).

Options (ini keys in brackets; a path given on the command line is relative to the current folder, one
from the ini file to the rootdir)::

    --nlgeval-baseline PATH                     compare with this baseline file   [nlgeval_baseline]
    --nlgeval-baseline-update                   (re-)record the checks that ran   [nlgeval_baseline_update]
    --nlgeval-baseline-allow-evaluator-change   compare across evaluators, widening tolerances by the drift
                                                                                  [nlgeval_baseline_allow_evaluator_change]
    --nlgeval-baseline-new-checks notice|fail   what a check without entry does   [nlgeval_baseline_new_checks]
    --nlgeval-baseline-seed N                   seed of the paired bootstrap (0)  [nlgeval_baseline_seed]
    --nlgeval-baseline-markdown PATH            append the verdicts as Markdown (e.g. $GITHUB_STEP_SUMMARY)
    ini only: nlgeval_baseline_tolerances, nlgeval_baseline_suite_tolerances (lines ``SELECTOR = VALUE``,
    see :mod:`pytest_nlgeval.baseline.tolerances`)

The baseline file may be anywhere: a command-line path is taken from the current folder (or, when no file
is there, from the rootdir), an ini path from the rootdir, an absolute path as it is. Check keys hold pytest
node ids, which are relative to the rootdir, and the rootdir depends on how pytest was invoked. The baseline
records the folder its keys are relative to (``root``); before comparing, this run's keys are matched to the
baseline's three ways, and the way that matches most entries is used: as they are, rewritten relative to the
recorded root (so ``--nlgeval-baseline ../b.json``, which moves the rootdir, and ``--nlgeval-baseline=../b.json``
give the same keys), and with the folder that the two sides' test file paths differ by at their front added
or dropped (a baseline moved or downloaded elsewhere after it was recorded, whose ``root`` no longer points
at the tests). A comparison whose keys still do not line up (no check has an entry, or most are new and as
many entries did not run) fails with a message that names the test files on each side, instead of passing
over nothing.

Flow: the baseline is read and validated at configure time on the controller (an invalid or missing file is
a usage error before any test runs); the plugin core calls ``pytest_nlgeval_results_ready`` with the merged
results on the controller only, where this module compares (adding ``results["baseline"]``) or writes the
updated baseline (under a lock, merged with the file as it is at that moment, so concurrent runs that record
different checks keep each other's entries: :func:`~pytest_nlgeval.baseline.store.update_baseline_file`);
``pytest_sessionfinish`` turns a regression into exit status 1 even when every absolute
threshold passed. xdist workers never read or write the baseline. Example::

    pytest --nlgeval-baseline tests/nlgeval-baseline.json --nlgeval-baseline-update   # on main: record
    pytest --nlgeval-baseline tests/nlgeval-baseline.json                             # on a PR: compare
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import pytest

_state_key = pytest.StashKey["BaselineState"]()


def pytest_addoption(parser) -> None:
    group = parser.getgroup("nlgeval-baseline", "regression baselines (pytest-nlgeval)")
    group.addoption(
        "--nlgeval-baseline",
        action="store",
        default=None,
        dest="nlgeval_baseline",
        metavar="PATH",
        help="compare every nlgeval check with this baseline file; regressions fail the run",
    )
    group.addoption(
        "--nlgeval-baseline-update",
        action="store_true",
        default=None,
        dest="nlgeval_baseline_update",
        help="record the scores of the checks that ran into the baseline file (others are kept)",
    )
    group.addoption(
        "--nlgeval-baseline-allow-evaluator-change",
        action="store_true",
        default=None,
        dest="nlgeval_baseline_allow_evaluator_change",
        help="compare scores made by a different evaluator, widening tolerances by the measured cross-evaluator drift",
    )
    group.addoption(
        "--nlgeval-baseline-new-checks",
        action="store",
        default=None,
        choices=("notice", "fail"),
        dest="nlgeval_baseline_new_checks",
        help="a check without baseline entry passes with a notice (default) or fails",
    )
    group.addoption(
        "--nlgeval-baseline-seed",
        action="store",
        default=None,
        dest="nlgeval_baseline_seed",
        metavar="N",
        help="seed of the paired bootstrap (default 0)",
    )
    group.addoption(
        "--nlgeval-baseline-markdown",
        action="store",
        default=None,
        dest="nlgeval_baseline_markdown",
        metavar="PATH",
        help="append the verdicts as Markdown to PATH (e.g. $GITHUB_STEP_SUMMARY)",
    )
    parser.addini("nlgeval_baseline", "baseline file, relative to the rootdir", type="string", default="")
    parser.addini("nlgeval_baseline_update", "record the baseline instead of comparing", type="bool", default=False)
    parser.addini("nlgeval_baseline_allow_evaluator_change", "compare across evaluators", type="bool", default=False)
    parser.addini("nlgeval_baseline_new_checks", "notice or fail", type="string", default="notice")
    parser.addini("nlgeval_baseline_seed", "seed of the paired bootstrap", type="string", default="0")
    parser.addini(
        "nlgeval_baseline_tolerances", "check tolerances, lines SELECTOR = VALUE", type="linelist", default=[]
    )
    parser.addini(
        "nlgeval_baseline_suite_tolerances", "suite tolerances, lines SELECTOR = VALUE", type="linelist", default=[]
    )


@dataclass
class BaselineState:
    """What this session does with the baseline, and what came of it."""

    path: str
    rootdir: str  # this run's rootdir: the folder its node ids are relative to
    update: bool
    allow_evaluator_change: bool
    new_checks: str
    seed: int
    tolerances: Any
    markdown: str | None = None
    baseline: Any = None  # the loaded Baseline (None when recording the first one)
    comparison: Any = None
    update_summary: Any = None
    error: str | None = None  # a refusal or failure: fails the run
    notice: str | None = None
    session: Any = None
    done: bool = False  # results_ready ran: without it nothing was compared, which must not pass silently
    warnings: list = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.error is not None or (self.comparison is not None and self.comparison.failed)


def pytest_configure(config) -> None:
    if hasattr(config, "workerinput"):
        return  # xdist worker: the controller compares and writes
    path = config.getoption("nlgeval_baseline")
    base_dir = str(config.invocation_params.dir)
    if not path:
        path = config.getini("nlgeval_baseline")
        base_dir = str(config.rootpath)
    update = bool(config.getoption("nlgeval_baseline_update") or config.getini("nlgeval_baseline_update"))
    if not path:
        if update:
            raise pytest.UsageError(
                "--nlgeval-baseline-update needs a file: pass --nlgeval-baseline PATH "
                "or set nlgeval_baseline in the ini file"
            )
        return
    from pytest_nlgeval.baseline.errors import BaselineError, BaselineFormatError
    from pytest_nlgeval.baseline.store import load_baseline
    from pytest_nlgeval.baseline.tolerances import Tolerances

    path = _baseline_path(path, base_dir, str(config.rootpath), update)
    new_checks = config.getoption("nlgeval_baseline_new_checks") or config.getini("nlgeval_baseline_new_checks")
    if new_checks not in ("notice", "fail"):
        raise pytest.UsageError(f"nlgeval_baseline_new_checks must be notice or fail, got {new_checks!r}")
    raw_seed = config.getoption("nlgeval_baseline_seed") or config.getini("nlgeval_baseline_seed")
    try:
        seed = int(raw_seed)
        if seed < 0:
            raise ValueError
    except ValueError:
        raise pytest.UsageError(
            f"--nlgeval-baseline-seed / nlgeval_baseline_seed must be an integer >= 0, got {raw_seed!r}"
        ) from None
    try:
        tolerances = Tolerances.from_specs(
            config.getini("nlgeval_baseline_tolerances"), config.getini("nlgeval_baseline_suite_tolerances")
        )
    except BaselineError as exc:
        raise pytest.UsageError(f"nlgeval_baseline_tolerances / nlgeval_baseline_suite_tolerances: {exc}") from None
    markdown = config.getoption("nlgeval_baseline_markdown")
    state = BaselineState(
        path=path,
        rootdir=str(config.rootpath),
        update=update,
        allow_evaluator_change=bool(
            config.getoption("nlgeval_baseline_allow_evaluator_change")
            or config.getini("nlgeval_baseline_allow_evaluator_change")
        ),
        new_checks=new_checks,
        seed=seed,
        tolerances=tolerances,
        markdown=os.path.join(str(config.invocation_params.dir), markdown) if markdown else None,
    )
    if os.path.exists(path):
        try:
            state.baseline = load_baseline(path)
        except BaselineFormatError as exc:
            action = "refusing to overwrite it" if update else "cannot compare"
            raise pytest.UsageError(f"{exc} ({action}; nothing was run)") from None
    elif not update:
        tried = path if base_dir == str(config.rootpath) else f"{path} (nor under the rootdir {config.rootpath})"
        raise pytest.UsageError(
            f"baseline file {tried} does not exist; record one with `pytest --nlgeval-baseline {path} "
            "--nlgeval-baseline-update` and commit it"
        )
    config.stash[_state_key] = state


def _baseline_path(path: str, base_dir: str, rootdir: str, update: bool) -> str:
    """The baseline file ``path`` names: absolute as it is; relative, from ``base_dir`` (the current folder for
    the command line, the rootdir for the ini file), else from the rootdir when only that file exists there
    (``--nlgeval-baseline tests/b.json`` given from a sub-folder). A file to be recorded is placed from
    ``base_dir`` unless it already exists under the rootdir."""
    path = os.path.expanduser(path)
    if os.path.isabs(path):
        return os.path.normpath(path)
    here = os.path.normpath(os.path.join(base_dir, path))
    there = os.path.normpath(os.path.join(rootdir, path))
    if not os.path.exists(here) and os.path.exists(there):
        return there
    return here


def pytest_sessionstart(session) -> None:
    state = session.config.stash.get(_state_key, None)
    if state is not None:
        state.session = session


@pytest.hookimpl(optionalhook=True)
def pytest_nlgeval_results_ready(config, results) -> None:
    """Compare the session's checks with the baseline (or record them) and add ``results["baseline"]``."""
    state = config.stash.get(_state_key, None)
    if state is None:
        return
    state.done = True
    from pytest_nlgeval.baseline.errors import BaselineError
    from pytest_nlgeval.baseline.store import Baseline, update_baseline_file

    try:
        head = Baseline.from_results(results, source="this run")
    except BaselineError as exc:
        state.error = f"the session's results cannot be compared: {exc}"
        results["baseline"] = {"status": "error", "path": state.path, "error": state.error}
        return
    if state.update:
        if state.session is not None and state.session.exitstatus == pytest.ExitCode.INTERRUPTED:
            state.notice = f"baseline {state.path} not updated: the session was interrupted"
            results["baseline"] = {"status": "not updated", "path": state.path, "reason": "interrupted"}
            return
        if not head.entries:
            state.notice = f"baseline {state.path} not updated: no nlgeval check ran"
            results["baseline"] = {"status": "not updated", "path": state.path, "reason": "no checks"}
            return
        # Merged under a lock with the file as it is now: another run may have recorded other checks since
        # this one read it at configure time.
        try:
            new, summary = update_baseline_file(state.path, head, rootdir=state.rootdir)
        except BaselineError as exc:
            state.error = str(exc)
            results["baseline"] = {"status": "error", "path": state.path, "error": state.error}
            return
        except OSError as exc:
            state.error = f"could not write the baseline {state.path}: {exc}"
            results["baseline"] = {"status": "error", "path": state.path, "error": state.error}
            return
        state.update_summary = summary
        evaluators = sorted({e.evaluator for e in new.entries.values() if e.evaluator is not None})
        if len(evaluators) > 1:
            state.warnings.append(
                f"the baseline now holds scores of {len(evaluators)} evaluators ({', '.join(evaluators)}): entries "
                "kept from checks that did not run were scored by another evaluator; re-record the whole suite"
            )
        results["baseline"] = {
            "status": "updated",
            "path": state.path,
            "entries": len(new.entries),
            "added": len(summary.added),
            "changed": len(summary.changed),
            "unchanged": len(summary.unchanged),
            "kept": len(summary.kept),
            "not_finite": list(summary.not_finite),
        }
        return
    from pytest_nlgeval.baseline.compare import compare
    from pytest_nlgeval.baseline.errors import KeyMismatchError

    ways = _key_ways(head, state.baseline, state.rootdir, state.path)
    head = max(ways, key=lambda h: len(h.entries.keys() & state.baseline.entries.keys()))  # the first of a tie
    try:
        state.comparison = compare(
            state.baseline,
            head,
            tolerances=state.tolerances,
            allow_evaluator_change=state.allow_evaluator_change,
            new_checks=state.new_checks,
            seed=state.seed,
        )
    except KeyMismatchError:
        state.error = _mismatch_message(head, state.baseline, state.path)
        results["baseline"] = {"status": "refused", "path": state.path, "error": state.error}
        return
    except BaselineError as exc:
        state.error = str(exc)
        results["baseline"] = {"status": "refused", "path": state.path, "error": state.error}
        return
    results["baseline"] = {"path": state.path, **state.comparison.to_dict()}
    if state.markdown:
        from pytest_nlgeval.baseline.render import render_markdown

        with open(state.markdown, "a", encoding="utf-8") as fh:
            fh.write(render_markdown(state.comparison))


def _key_ways(head, baseline, rootdir: str, baseline_path: str) -> list:
    """This run's checks keyed each way they may line up with the baseline's: relative to the recorded root
    (when it is a folder), as they are, and with a leading folder added or dropped."""
    from pytest_nlgeval.baseline.store import resolve_root

    ways = []
    root = resolve_root(baseline, baseline_path)
    if root is not None and os.path.isdir(root):
        ways.append(head.rebased(rootdir, root))
    ways.append(head)
    shift = _leading_folder(_files(head), _files(baseline))
    if shift is not None:
        add, drop = shift
        ways.append(head.renamed(lambda nodeid: add + nodeid[len(drop) :] if nodeid.startswith(drop) else nodeid))
    return ways


def _files(snapshot) -> set[str]:
    """The test file paths of a snapshot's node ids (``tests/test_a.py``), without the ones that are no path."""
    return {e.nodeid.split("::", 1)[0] for e in snapshot.entries.values() if not e.nodeid.startswith("<")}


def _leading_folder(ours: set[str], theirs: set[str]) -> tuple[str, str] | None:
    """``(add, drop)``: the leading folder to put in front of this run's file paths (``add``) or take from their
    front (``drop``) so that most of them are the baseline's; None when no such folder does."""
    votes: dict[tuple[str, str], int] = {}
    for mine in ours:
        for other in theirs:
            if other.endswith("/" + mine):
                votes[(other[: -len(mine)], "")] = votes.get((other[: -len(mine)], ""), 0) + 1
            elif mine.endswith("/" + other):
                votes[("", mine[: -len(other)])] = votes.get(("", mine[: -len(other)]), 0) + 1
    if not votes:
        return None
    return max(sorted(votes), key=lambda shift: votes[shift])


def _mismatch_message(head, baseline, path: str) -> str:
    """Why the run's checks and the baseline's do not line up, naming the test files on each side."""
    common = head.entries.keys() & baseline.entries.keys()
    ours, theirs = _files(head), _files(baseline)
    only_ours, only_theirs = sorted(ours - theirs), sorted(theirs - ours)

    def some(files: list[str]) -> str:
        return ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")

    if not head.entries:
        what = f"no nlgeval check ran, so none of the {len(baseline.entries)} entries of the baseline {path} was read"
    else:
        what = (
            f"only {len(common)} of the {len(head.entries)} checks of this run have an entry in the baseline {path} "
            f"({len(baseline.entries)} entries)"
        )
    message = f"refusing to compare: {what}"
    if only_ours and only_theirs:
        message += (
            f". This run's test files ({some(only_ours)}) are not the baseline's ({some(only_theirs)}), matched as "
            "they are, relative to the folder the baseline records as its root, and with a leading folder added "
            "or dropped"
        )
    elif head.entries and not only_ours:
        message += ". The test files are the same; the tests in them, or the checks they make, are not"
    message += (
        ". If the tests were renamed or moved, re-record the baseline with --nlgeval-baseline-update; otherwise "
        "pass the baseline of this suite"
    )
    return message


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus) -> None:
    state = session.config.stash.get(_state_key, None)
    if state is not None and not state.done:
        state.error = (
            "no nlgeval results reached the baseline comparison (the nlgeval plugin did not finish "
            "its session, or it is disabled); nothing was compared"
        )
    if state is not None and state.failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    state = config.stash.get(_state_key, None)
    if state is None:
        return
    tr = terminalreporter
    if state.error is not None:
        tr.write_sep("=", "nlgeval baseline: FAILED", red=True, bold=True)
        tr.write_line(state.error, red=True)
    elif state.notice is not None:
        tr.write_sep("=", "nlgeval baseline", yellow=True)
        tr.write_line(state.notice, yellow=True)
    elif state.update_summary is not None:
        tr.write_sep("=", "nlgeval baseline updated", green=True)
        tr.write_line(f"{state.path}: {state.update_summary.describe()}")
        for warning in state.warnings:
            tr.write_line(warning, yellow=True)
        if state.update_summary.not_finite:
            tr.write_line(
                "not recorded (score not finite): " + ", ".join(state.update_summary.not_finite[:10]), yellow=True
            )
    elif state.comparison is not None:
        from pytest_nlgeval.baseline.render import render_text

        failed = state.comparison.failed
        tr.write_sep("=", f"nlgeval baseline: {state.path}", red=failed, green=not failed, bold=failed)
        for line, markup in render_text(state.comparison):
            tr.write_line(line, **markup)
