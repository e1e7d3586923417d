#!/usr/bin/env python3
"""The steps of the pytest-nlgeval GitHub Action, one subcommand each.

Every value from the workflow arrives through an environment variable (``INPUT_*`` set in the step's
``env:``), never through text pasted into a script, so a branch name or an input cannot inject shell code.
Step outputs go to ``$GITHUB_OUTPUT``, environment for later steps to ``$GITHUB_ENV``, and the job summary to
``$GITHUB_STEP_SUMMARY``: the same files the runner reads, so the steps are tested with plain temporary files.

    python nlgeval_action.py prepare   # model cache key and folders
    python nlgeval_action.py run       # pytest with the plugin's options; never fails the step itself
    python nlgeval_action.py summary   # job summary (Markdown)
    python nlgeval_action.py comment   # create or update the sticky pull-request comment with `gh`
    python nlgeval_action.py verdict   # fail the job as configured
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ElementTree
from pathlib import Path

TRUE = {"1", "true", "yes", "on"}
FALSE = {"0", "false", "no", "off", ""}


class ActionError(Exception):
    """A misconfigured input: printed as a workflow error annotation, exit status 2."""


def env(name: str, default: str = "") -> str:
    return os.environ.get(name, default).strip()


def flag(name: str, default: bool) -> bool:
    value = env(name, "true" if default else "false").lower()
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ActionError(
        f"input {name.removeprefix('INPUT_').lower().replace('_', '-')} must be true or false, got {value!r}"
    )


def _write_kv(file_var: str, values: dict[str, str]) -> None:
    """Append ``name=value`` lines (heredoc form for multi-line values) to a runner command file."""
    path = os.environ.get(file_var)
    if not path:
        raise ActionError(f"${file_var} is not set; this step must run inside GitHub Actions (or set it)")
    with open(path, "a", encoding="utf-8") as handle:
        for name, value in values.items():
            value = str(value)
            if "\n" in value or "\r" in value:
                delimiter = f"EOF_{uuid.uuid4().hex}"
                handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
            else:
                handle.write(f"{name}={value}\n")


def set_outputs(**values: str) -> None:
    _write_kv("GITHUB_OUTPUT", {k.replace("_", "-"): v for k, v in values.items()})


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-")[:80] or "default"


def _runtime_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nlgeval-runtime")
    except PackageNotFoundError:
        raise ActionError("nlgeval-runtime is not installed; the install step must run before this one") from None


def cmd_prepare() -> int:
    """Model cache folders (exported to later steps) and the cache key: model id + runtime version + OS."""
    model = env("INPUT_MODEL") or "default"
    base = Path(env("NLGEVAL_ACTION_CACHE") or Path.home() / ".cache" / "nlgeval-action")
    key = f"nlgeval-models-{_slug(env('RUNNER_OS', sys.platform))}-{_slug(model)}-{_runtime_version()}"
    _write_kv("GITHUB_ENV", {"NLGEVAL_CACHE_DIR": str(base / "models"), "HF_HOME": str(base / "huggingface")})
    set_outputs(cache_key=key, cache_path=str(base))
    print(f"model cache: {base} (key {key})")
    return 0


def pytest_command(out_dir: Path) -> list[str]:
    """The pytest command line built from the inputs (split like a shell would, but never run by one)."""
    try:
        paths = shlex.split(env("INPUT_TEST_PATH") or "tests")
        extra = shlex.split(env("INPUT_PYTEST_ARGS"))
    except ValueError as exc:
        raise ActionError(f"cannot split test-path / pytest-args ({exc}); check the quoting") from None
    # "--option=value" keeps each value glued to its option: pytest picks its rootdir before it knows the
    # plugin's options, and a bare path value (a model folder) would count as a test path and move the rootdir.
    command = [
        sys.executable,
        "-m",
        "pytest",
        *paths,
        f"--nlgeval-json={out_dir / 'results.json'}",
        f"--nlgeval-report={out_dir / 'report.html'}",
        f"--junitxml={out_dir / 'junit.xml'}",
    ]
    if env("INPUT_MODEL"):
        command.append(f"--nlgeval-model={env('INPUT_MODEL')}")
    device = env("INPUT_DEVICE") or "auto"
    if device not in ("auto", "cpu", "cuda"):
        raise ActionError(f"input device must be auto, cpu or cuda, got {device!r}")
    command.append(f"--nlgeval-device={device}")
    if env("INPUT_BASELINE"):
        command.append(f"--nlgeval-baseline={env('INPUT_BASELINE')}")
    return command + extra


def read_counts(results_path: Path) -> dict[str, int] | None:
    """checks / passed / failed / regressions from the results file, or None when pytest wrote none."""
    if not results_path.is_file():
        return None
    from pytest_nlgeval.report.results import load_results
    from pytest_nlgeval.report.view import build_view

    view = build_view(load_results(results_path))
    return {"checks": view.checks, "passed": view.passed, "failed": view.failed, "regressions": view.regressions}


def junit_failures(path: Path) -> int | None:
    """Failed plus errored tests in a JUnit XML file; None when it is missing or unreadable."""
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError):
        return None
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    return sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)


def cmd_run() -> int:
    out_dir = Path(env("NLGEVAL_OUT_DIR") or Path(env("RUNNER_TEMP") or ".") / "nlgeval")
    out_dir.mkdir(parents=True, exist_ok=True)
    command = pytest_command(out_dir)
    print("+ " + shlex.join(command), flush=True)
    # Text printed by the tests (generated outputs included) must not be read as workflow commands.
    token = uuid.uuid4().hex
    print(f"::stop-commands::{token}", flush=True)
    try:
        exit_code = subprocess.call(command)
    finally:
        print(f"::{token}::", flush=True)
    counts = read_counts(out_dir / "results.json")
    report = out_dir / "report.html"
    set_outputs(
        exit_code=str(exit_code),
        out_dir=str(out_dir),
        report_path=str(report) if report.is_file() else "",
        results_path=str(out_dir / "results.json") if counts is not None else "",
        junit_path=str(out_dir / "junit.xml"),
        checks=str(counts["checks"] if counts else 0),
        passed=str(counts["passed"] if counts else 0),
        failed=str(counts["failed"] if counts else 0),
        regressions=str(counts["regressions"] if counts else 0),
    )
    if counts is None:
        print(f"::warning::pytest (exit code {exit_code}) wrote no results file; no checks were recorded")
    # The verdict step decides whether the job fails, after the summary, artifact and comment are out.
    return 0


def artifact_url() -> str | None:
    """``INPUT_ARTIFACT_URL`` when it is a plain https URL; anything else is refused (a warning, no link)."""
    url = env("INPUT_ARTIFACT_URL")
    if not url:
        return None
    if not re.fullmatch(r"https://[^\s()<>\[\]\"'`]+", url):
        shown = url if len(url) <= 80 else url[:77] + "..."
        print(
            f"::warning::refusing the artifact URL {shown!r}: only https:// URLs without spaces, quotes, "
            "brackets or parentheses are linked; the report is written without the link"
        )
        return None
    return url


def _results_or_none() -> dict | None:
    path = env("INPUT_RESULTS")
    if not path or not Path(path).is_file():
        return None
    from pytest_nlgeval.report.results import load_results

    return load_results(path)


def cmd_summary() -> int:
    from pytest_nlgeval.report.markdown import STEP_SUMMARY_LIMIT, step_summary

    results = _results_or_none()
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if not path:
        raise ActionError("$GITHUB_STEP_SUMMARY is not set; this step must run inside GitHub Actions (or set it)")
    if results is None:
        text = "## pytest-nlgeval\n\nThe test run wrote no results file (see the test step's log).\n"
    else:
        # Other steps of the job may have written to this step's summary file already; stay inside the limit.
        used = os.path.getsize(path) if os.path.exists(path) else 0
        text = step_summary(results, artifact_url=artifact_url(), limit=max(STEP_SUMMARY_LIMIT - used, 4096))
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(text)
    return 0


def _gh(args: list[str], *, stdin: str | None = None) -> str:
    completed = subprocess.run(["gh", *args], input=stdin, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr.strip() or f"gh exited with status {completed.returncode}")
    return completed.stdout


# The identity of the workflow's GITHUB_TOKEN; `gh api user` answers only for user tokens (PATs).
ACTIONS_BOT = "github-actions[bot]"


def token_login() -> str:
    """The login of the token in ``GH_TOKEN``: what `gh api user` says, else the Actions bot."""
    try:
        login = json.loads(_gh(["api", "user"]) or "{}").get("login")
    except (RuntimeError, json.JSONDecodeError, AttributeError, FileNotFoundError):
        login = None
    return login if isinstance(login, str) and login else ACTIONS_BOT


def cmd_comment() -> int:
    """Create the sticky comment, or update the one that carries this job's marker.

    Only a comment written by the token's own identity is ever edited: anyone can write a comment that
    starts with the marker, and editing theirs would put the report under their name (or overwrite it).
    """
    from pytest_nlgeval.report.markdown import comment_marker, pr_comment

    repo, number = env("GITHUB_REPOSITORY"), env("INPUT_PR_NUMBER")
    if not number.isdigit():
        print("::notice::not a pull request event; no comment posted")
        return 0
    if not re.fullmatch(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+", repo):
        raise ActionError(f"GITHUB_REPOSITORY {repo!r} is not owner/name")
    if not env("GH_TOKEN"):
        print("::warning::github-token is empty; no pull-request comment posted")
        return 0
    marker_id = _slug(env("INPUT_MARKER_ID") or "default")[:64]
    results = _results_or_none()
    if results is None:
        body = comment_marker(marker_id) + "\n### pytest-nlgeval\n\nThe test run wrote no results file.\n"
    else:
        body = pr_comment(results, artifact_url=artifact_url(), marker_id=marker_id)
    marker = comment_marker(marker_id)
    try:
        pages = _gh(["api", "--paginate", "--slurp", f"repos/{repo}/issues/{number}/comments"])
        comments = [c for page in json.loads(pages or "[]") for c in page]
        marked = [c for c in comments if isinstance(c.get("body"), str) and c["body"].startswith(marker)]
        login = token_login() if marked else None
        mine = [c for c in marked if isinstance(c.get("user"), dict) and c["user"].get("login") == login]
        if len(mine) < len(marked):
            print(
                f"::notice::{len(marked) - len(mine)} comment(s) carry this job's marker but were not written "
                f"by {login}; they are left alone"
            )
        payload = json.dumps({"body": body})
        if mine:
            _gh(
                ["api", "--method", "PATCH", f"repos/{repo}/issues/comments/{mine[-1]['id']}", "--input", "-"],
                stdin=payload,
            )
            print(f"updated comment {mine[-1]['id']}")
        else:
            _gh(["api", "--method", "POST", f"repos/{repo}/issues/{number}/comments", "--input", "-"], stdin=payload)
            print("posted a new comment")
    except (RuntimeError, json.JSONDecodeError, FileNotFoundError) as exc:
        # Pull requests from forks get a read-only token: the comment is lost, the results are not.
        print(
            f"::warning::could not post the pull-request comment ({exc}); the job summary and the artifact "
            "have the results (a pull request from a fork gets a read-only token, see the action's README)"
        )
    return 0


def cmd_verdict() -> int:
    """Exit 1 when the run must fail the job: failed checks or tests, or regressions if configured."""
    exit_code = int(env("INPUT_EXIT_CODE") or "1")
    fail_on_regression = flag("INPUT_FAIL_ON_REGRESSION", True)
    regressions = int(env("INPUT_REGRESSIONS") or "0")
    failed_tests = junit_failures(Path(env("INPUT_JUNIT"))) if env("INPUT_JUNIT") else None
    if exit_code == 0:
        if regressions and fail_on_regression:
            print(f"::error::{regressions} quality regression(s) against the baseline")
            return 1
        return 0
    if exit_code == 1 and failed_tests == 0 and regressions:
        # pytest failed the session only because of regressions: the one case fail-on-regression controls.
        if fail_on_regression:
            print(f"::error::{regressions} quality regression(s) against the baseline")
            return 1
        print(f"::warning::{regressions} quality regression(s) against the baseline (fail-on-regression: false)")
        return 0
    failed_text = (
        "the session failed without a failed test (see the test step's log)"
        if failed_tests == 0
        else f"{failed_tests if failed_tests is not None else 'some'} test(s) failed"
    )
    reasons = {
        1: failed_text,
        2: "the test run was interrupted",
        3: "pytest hit an internal error",
        4: "pytest was called with a wrong option or path (check test-path and pytest-args)",
        5: "no tests were collected (check test-path)",
    }
    print(f"::error::{reasons.get(exit_code, f'pytest exited with status {exit_code}')}")
    return 1


COMMANDS = {
    "prepare": cmd_prepare,
    "run": cmd_run,
    "summary": cmd_summary,
    "comment": cmd_comment,
    "verdict": cmd_verdict,
}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1 or argv[0] not in COMMANDS:
        print(f"usage: nlgeval_action.py {{{','.join(COMMANDS)}}}", file=sys.stderr)
        return 2
    try:
        return COMMANDS[argv[0]]()
    except ActionError as exc:
        print(f"::error::{exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
