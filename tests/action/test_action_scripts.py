"""The GitHub Action's steps (action/scripts/nlgeval_action.py) against fake runner files and a fake `gh`."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest
from paths import DATA, REPO as ROOT

_spec = importlib.util.spec_from_file_location("nlgeval_action", ROOT / "action" / "scripts" / "nlgeval_action.py")
action = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(action)


def read_kv(path: Path) -> dict[str, str]:
    """Parse a $GITHUB_OUTPUT / $GITHUB_ENV file the way the runner does (name=value and heredocs)."""
    values, lines = {}, path.read_text().splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and "=" not in line.split("<<")[0]:
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        else:
            name, value = line.split("=", 1)
            values[name] = value
            i += 1
    return values


@pytest.fixture()
def runner(tmp_path, monkeypatch):
    """Fake runner command files, and no INPUT_* leaking in from the environment."""
    for name in list(os.environ):
        if name.startswith("INPUT_") or name in ("GH_TOKEN", "GITHUB_REPOSITORY"):
            monkeypatch.delenv(name)
    files = {}
    for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY"):
        files[name] = tmp_path / name.lower()
        files[name].write_text("")
        monkeypatch.setenv(name, str(files[name]))
    return files


def test_prepare_keys_the_cache_by_model_and_runtime_version(runner, monkeypatch, tmp_path):
    from importlib.metadata import version

    monkeypatch.setenv("RUNNER_OS", "Linux")
    monkeypatch.setenv("NLGEVAL_ACTION_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("INPUT_MODEL", "MingZhong/unieval-sum")
    assert action.main(["prepare"]) == 0
    outputs, exported = read_kv(runner["GITHUB_OUTPUT"]), read_kv(runner["GITHUB_ENV"])
    assert outputs["cache-key"] == f"nlgeval-models-Linux-MingZhong-unieval-sum-{version('nlgeval-runtime')}"
    assert outputs["cache-path"] == str(tmp_path / "cache")
    assert exported["NLGEVAL_CACHE_DIR"] == str(tmp_path / "cache" / "models")
    assert exported["HF_HOME"] == str(tmp_path / "cache" / "huggingface")
    monkeypatch.setenv("INPUT_MODEL", "")
    assert action.main(["prepare"]) == 0
    assert read_kv(runner["GITHUB_OUTPUT"])["cache-key"].startswith("nlgeval-models-Linux-default-")


def test_pytest_command_splits_inputs_without_a_shell(runner, monkeypatch, tmp_path):
    monkeypatch.setenv("INPUT_TEST_PATH", "tests/quality 'tests/with space'")
    monkeypatch.setenv("INPUT_PYTEST_ARGS", '-k "fluency and not slow" -x $(touch pwned); echo')
    monkeypatch.setenv("INPUT_MODEL", "/models/my model")
    monkeypatch.setenv("INPUT_BASELINE", "tests/nlgeval-baseline.json")
    command = action.pytest_command(tmp_path)
    assert command[:5] == [sys.executable, "-m", "pytest", "tests/quality", "tests/with space"]
    assert "--nlgeval-model=/models/my model" in command and "--nlgeval-device=auto" in command
    assert "--nlgeval-baseline=tests/nlgeval-baseline.json" in command
    assert command[-6:] == ["-k", "fluency and not slow", "-x", "$(touch", "pwned);", "echo"]  # inert words
    monkeypatch.setenv("INPUT_PYTEST_ARGS", '-k "unclosed')
    assert action.main(["run"]) == 2
    monkeypatch.setenv("INPUT_PYTEST_ARGS", "")
    monkeypatch.setenv("INPUT_DEVICE", "tpu")
    with pytest.raises(action.ActionError, match="device must be auto, cpu or cuda"):
        action.pytest_command(tmp_path)


def test_run_step_records_outputs_and_fences_test_output(runner, monkeypatch, tmp_path, tiny_t5_model, capfd):
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "tests" / "test_quality.py").write_text(
        textwrap.dedent('''
        from pytest_nlgeval import assert_dimension

        def test_fluent():
            print("::error::printed by a test")
            assert_dimension("The bridge will reopen next week.", "fluency") > 0.0

        def test_too_strict():
            assert_dimension("The bridge will reopen next week.", "fluency") > 0.999
    ''')
    )
    monkeypatch.chdir(project)
    monkeypatch.setenv("INPUT_MODEL", str(tiny_t5_model))
    monkeypatch.setenv("INPUT_DEVICE", "cpu")
    monkeypatch.setenv("INPUT_PYTEST_ARGS", "-p no:cacheprovider -s")
    monkeypatch.setenv("NLGEVAL_OUT_DIR", str(tmp_path / "out"))
    assert action.main(["run"]) == 0  # the step itself never fails; the verdict step decides
    out = capfd.readouterr().out
    outputs = read_kv(runner["GITHUB_OUTPUT"])
    assert outputs["exit-code"] == "1"
    assert (outputs["checks"], outputs["passed"], outputs["failed"], outputs["regressions"]) == ("2", "1", "1", "0")
    assert Path(outputs["report-path"]).read_text().startswith("<!DOCTYPE html>")
    assert json.loads(Path(outputs["results-path"]).read_text())["summary"]["failed"] == 1
    assert action.junit_failures(Path(outputs["junit-path"])) == 1
    # what the tests print is fenced off from the workflow command parser
    start = out.index("::stop-commands::")
    token = out[start:].split("\n", 1)[0].removeprefix("::stop-commands::")
    assert len(token) == 32 and start < out.index("::error::printed by a test") < out.index(f"::{token}::")


def test_run_step_without_results(runner, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("INPUT_PYTEST_ARGS", "--no-such-option")  # pytest stops before any session
    monkeypatch.setenv("NLGEVAL_OUT_DIR", str(tmp_path / "out"))
    assert action.main(["run"]) == 0
    outputs = read_kv(runner["GITHUB_OUTPUT"])
    assert outputs["exit-code"] == "4" and outputs["checks"] == "0" and outputs["results-path"] == ""
    assert outputs["report-path"] == ""


def test_summary_step_appends_to_the_job_summary(runner, monkeypatch):
    runner["GITHUB_STEP_SUMMARY"].write_text("# earlier step\n")
    monkeypatch.setenv("INPUT_RESULTS", str(DATA / "report_results.json"))
    monkeypatch.setenv("INPUT_ARTIFACT_URL", "https://github.com/o/r/actions/runs/1/artifacts/9")
    assert action.main(["summary"]) == 0
    text = runner["GITHUB_STEP_SUMMARY"].read_text()
    assert text.startswith("# earlier step\n## ❌ pytest-nlgeval: 29 checks, 20 passed, 9 failed, 3 regressions")
    assert "[Full HTML report](https://github.com/o/r/actions/runs/1/artifacts/9)" in text
    monkeypatch.setenv("INPUT_RESULTS", "")
    assert action.main(["summary"]) == 0
    assert (
        runner["GITHUB_STEP_SUMMARY"]
        .read_text()
        .endswith("The test run wrote no results file (see the test step's log).\n")
    )
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    assert action.main(["summary"]) == 2


FAKE_GH = '''#!{python}
import json, os, sys
log = os.environ["FAKE_GH_LOG"]
call = {{"args": sys.argv[1:], "stdin": sys.stdin.read() if "--input" in sys.argv else None,
        "token": os.environ.get("GH_TOKEN")}}
with open(log, "a") as fh:
    fh.write(json.dumps(call) + "\\n")
if os.environ.get("FAKE_GH_FAIL"):
    print("gh: Resource not accessible by integration (HTTP 403)", file=sys.stderr)
    sys.exit(1)
if "--paginate" in sys.argv:
    print(os.environ.get("FAKE_GH_COMMENTS", "[[]]"))
elif sys.argv[1:] == ["api", "user"]:
    if os.environ.get("FAKE_GH_USER"):
        print(json.dumps({{"login": os.environ["FAKE_GH_USER"]}}))
    else:  # the workflow's GITHUB_TOKEN is not a user token
        print("gh: Resource not accessible by integration (HTTP 403)", file=sys.stderr)
        sys.exit(1)
else:
    print("{{}}")
'''


@pytest.fixture()
def fake_gh(tmp_path, monkeypatch, runner):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.format(python=sys.executable))
    gh.chmod(0o755)
    log = tmp_path / "gh.log"
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_GH_LOG", str(log))
    monkeypatch.setenv("GH_TOKEN", "test-token")
    monkeypatch.setenv("GITHUB_REPOSITORY", "owner/repo")
    monkeypatch.setenv("INPUT_PR_NUMBER", "17")
    monkeypatch.setenv("INPUT_RESULTS", str(DATA / "report_results.json"))
    monkeypatch.setenv("INPUT_MARKER_ID", "nlgeval-report")
    return lambda: [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_comment_is_created_once_then_updated(fake_gh, monkeypatch, capsys):
    assert action.main(["comment"]) == 0
    calls = fake_gh()
    assert [c["args"][:3] for c in calls] == [["api", "--paginate", "--slurp"], ["api", "--method", "POST"]]
    assert calls[1]["args"][3] == "repos/owner/repo/issues/17/comments" and calls[1]["token"] == "test-token"
    body = json.loads(calls[1]["stdin"])["body"]
    assert body.startswith("<!-- pytest-nlgeval-report:nlgeval-report -->\n### ❌ pytest-nlgeval")

    existing = [
        [{"id": 5, "body": "unrelated"}, {"id": 8, "body": body, "user": {"login": "github-actions[bot]"}}],
        [{"id": 9, "body": "<!-- pytest-nlgeval-report:other-job -->\nx"}],
    ]
    monkeypatch.setenv("FAKE_GH_COMMENTS", json.dumps(existing))
    assert action.main(["comment"]) == 0
    patch = fake_gh()[-1]
    assert patch["args"][:4] == ["api", "--method", "PATCH", "repos/owner/repo/issues/comments/8"]
    assert "posted a new comment" in capsys.readouterr().out


def test_comment_of_another_user_with_the_marker_is_never_edited(fake_gh, monkeypatch, capsys):
    marker = "<!-- pytest-nlgeval-report:nlgeval-report -->"
    existing = [
        [
            {"id": 3, "body": marker + "\nplanted", "user": {"login": "mallory"}},
            {"id": 4, "body": marker + "\nplanted too", "user": None},
        ]
    ]
    monkeypatch.setenv("FAKE_GH_COMMENTS", json.dumps(existing))
    assert action.main(["comment"]) == 0
    calls = fake_gh()
    assert [c["args"][:3] for c in calls] == [
        ["api", "--paginate", "--slurp"],
        ["api", "user"],
        ["api", "--method", "POST"],
    ]
    assert not any("PATCH" in c["args"] for c in calls)
    out = capsys.readouterr().out
    assert (
        "posted a new comment" in out
        and "2 comment(s) carry this job's marker but were not written by github-actions[bot]" in out
    )
    # With a user token (a PAT), the comment that token wrote is the one updated.
    monkeypatch.setenv("FAKE_GH_USER", "ci-user")
    existing[0].append({"id": 6, "body": marker + "\nmine", "user": {"login": "ci-user"}})
    existing[0].append({"id": 7, "body": marker + "\nbot's", "user": {"login": "github-actions[bot]"}})
    monkeypatch.setenv("FAKE_GH_COMMENTS", json.dumps(existing))
    assert action.main(["comment"]) == 0
    assert fake_gh()[-1]["args"][:4] == ["api", "--method", "PATCH", "repos/owner/repo/issues/comments/6"]


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "http://example.test/a",
        "data:text/html,x",
        "https://x.test/a) [click](https://evil.test",
        "https://x.test/\n::error::x",
    ],
)
def test_non_https_artifact_url_is_refused_without_a_traceback(runner, fake_gh, monkeypatch, capsys, url):
    monkeypatch.setenv("INPUT_ARTIFACT_URL", url)
    assert action.main(["summary"]) == 0
    text = runner["GITHUB_STEP_SUMMARY"].read_text()
    assert "pytest-nlgeval" in text and "Full HTML report" not in text and url not in text
    assert action.main(["comment"]) == 0
    body = json.loads(fake_gh()[-1]["stdin"])["body"]
    assert "Full HTML report" not in body and url not in body
    out = capsys.readouterr().out
    assert out.count("::warning::refusing the artifact URL") == 2
    assert "\n::error::" not in out  # the refused URL cannot start a workflow command


def test_comment_failure_is_a_warning_not_a_failed_job(fake_gh, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_GH_FAIL", "1")
    assert action.main(["comment"]) == 0
    out = capsys.readouterr().out
    assert "::warning::could not post the pull-request comment" in out and "HTTP 403" in out
    assert "fork" in out


def test_no_comment_outside_pull_requests_or_without_token(fake_gh, monkeypatch, capsys):
    monkeypatch.setenv("INPUT_PR_NUMBER", "")
    assert action.main(["comment"]) == 0
    monkeypatch.setenv("INPUT_PR_NUMBER", "17")
    monkeypatch.setenv("GH_TOKEN", "")
    assert action.main(["comment"]) == 0
    assert fake_gh() == []
    monkeypatch.setenv("GH_TOKEN", "t")
    monkeypatch.setenv("GITHUB_REPOSITORY", "owner/repo; rm -rf /")
    assert action.main(["comment"]) == 2


JUNIT = '<testsuites><testsuite name="pytest" tests="3" failures="{f}" errors="{e}"></testsuite></testsuites>'


@pytest.mark.parametrize(
    "exit_code, failures, regressions, fail_on_regression, expected, message",
    [
        (0, 0, 0, "true", 0, ""),
        (1, 2, 0, "true", 1, "2 test(s) failed"),
        (1, 0, 3, "true", 1, "3 quality regression(s)"),
        (1, 0, 3, "false", 0, "fail-on-regression: false"),
        (1, 1, 3, "false", 1, "1 test(s) failed"),  # a failed threshold still fails
        (1, 0, 0, "true", 1, "the session failed without a failed test"),
        (5, 0, 0, "true", 1, "no tests were collected"),
        (4, 0, 0, "true", 1, "wrong option or path"),
    ],
)
def test_verdict(
    runner, monkeypatch, tmp_path, capsys, exit_code, failures, regressions, fail_on_regression, expected, message
):
    junit = tmp_path / "junit.xml"
    junit.write_text(JUNIT.format(f=failures, e=0))
    monkeypatch.setenv("INPUT_EXIT_CODE", str(exit_code))
    monkeypatch.setenv("INPUT_REGRESSIONS", str(regressions))
    monkeypatch.setenv("INPUT_JUNIT", str(junit))
    monkeypatch.setenv("INPUT_FAIL_ON_REGRESSION", fail_on_regression)
    assert action.main(["verdict"]) == expected
    assert message in capsys.readouterr().out


def test_verdict_rejects_a_non_boolean_setting(runner, monkeypatch, capsys):
    monkeypatch.setenv("INPUT_EXIT_CODE", "0")
    monkeypatch.setenv("INPUT_FAIL_ON_REGRESSION", "sometimes")
    assert action.main(["verdict"]) == 2
    assert "fail-on-regression must be true or false" in capsys.readouterr().out


def test_multiline_outputs_use_the_heredoc_form(runner):
    action.set_outputs(note="line one\nline two", plain="x")
    assert read_kv(runner["GITHUB_OUTPUT"]) == {"note": "line one\nline two", "plain": "x"}


def test_scripts_are_stdlib_only_until_they_read_results():
    source = (ROOT / "action" / "scripts" / "nlgeval_action.py").read_text()
    top_imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert all(line.split()[1].split(".")[0] in sys.stdlib_module_names | {"__future__"} for line in top_imports)
    assert shutil.which("bash")  # the action's steps run with shell: bash
