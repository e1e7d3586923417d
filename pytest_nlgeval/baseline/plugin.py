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

Check keys hold pytest node ids, which are relative to the rootdir, and the rootdir depends on how pytest
was invoked. The baseline records the folder its keys are relative to (``root``); this run's keys are
rewritten relative to that folder before comparing or recording, so ``--nlgeval-baseline ../b.json`` (which
moves the rootdir) and ``--nlgeval-baseline=../b.json`` give the same keys. A comparison whose keys still do
not line up (no check has an entry, or most are new and as many entries did not run) fails with
:class:`~pytest_nlgeval.baseline.errors.KeyMismatchError` instead of passing over nothing.

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

    path = os.path.join(base_dir, path)
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
        raise pytest.UsageError(
            f"baseline file {path} does not exist; record one with `pytest --nlgeval-baseline {path} "
            "--nlgeval-baseline-update` and commit it"
        )
    config.stash[_state_key] = state


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
    from pytest_nlgeval.baseline.store import Baseline, resolve_root, update_baseline_file

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

    root = resolve_root(state.baseline, state.path) if state.baseline is not None else None
    if root is not None and os.path.isdir(root):
        head = head.rebased(state.rootdir, root)  # keys as the baseline has them, whatever the rootdir now
    try:
        state.comparison = compare(
            state.baseline,
            head,
            tolerances=state.tolerances,
            allow_evaluator_change=state.allow_evaluator_change,
            new_checks=state.new_checks,
            seed=state.seed,
        )
    except BaselineError as exc:
        state.error = str(exc)
        results["baseline"] = {"status": "refused", "path": state.path, "error": state.error}
        return
    results["baseline"] = {"path": state.path, **state.comparison.to_dict()}
    if state.markdown:
        from pytest_nlgeval.baseline.render import render_markdown

        with open(state.markdown, "a", encoding="utf-8") as fh:
            fh.write(render_markdown(state.comparison))


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
