"""The summariser example's gate catches a summariser that starts producing word salad: its absolute
checks fail, and so does the comparison with a baseline recorded from the working summariser."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from paths import REPO as ROOT


def _run(tmp_path, summarizer: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SUMMARIZER": summarizer}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "examples/summarization",
            f"--nlgeval-cache-dir={tmp_path / 'cache'}",
            *args,
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_word_salad_fails_the_checks_and_the_baseline(tmp_path):
    baseline = tmp_path / "baseline.json"
    recorded = _run(
        tmp_path,
        "lead",
        f"--nlgeval-baseline={baseline}",
        "--nlgeval-baseline-update",
        f"--nlgeval-json={tmp_path / 'lead.json'}",
    )
    assert recorded.returncode == 0, recorded.stdout[-3000:]
    salad = _run(tmp_path, "salad", f"--nlgeval-baseline={baseline}", f"--nlgeval-json={tmp_path / 'salad.json'}")
    assert salad.returncode != 0
    out = salad.stdout
    assert "test_summary_reads_fluently" in out and "FAILED" in out
    assert "regress" in out.lower(), out[-3000:]
    lead = json.loads((tmp_path / "lead.json").read_text())
    broken = json.loads((tmp_path / "salad.json").read_text())

    def mean_of(results, name):
        scores = [c["score"] for c in results["checks"] if c["name"] == name and c.get("kind") == "dimension"]
        assert scores, name
        return sum(scores) / len(scores)

    # the drop is large, not a hair: the fluency gate of the suite can fail
    assert mean_of(lead, "fluency") - mean_of(broken, "fluency") > 0.3
