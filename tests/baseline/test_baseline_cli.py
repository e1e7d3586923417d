"""``nlgeval compare`` and ``nlgeval baseline``: formats and exit codes."""

from __future__ import annotations

import json

import pytest

from baseline_results import FINGERPRINT, base_scores, make_results
from pytest_nlgeval.cli import main

FLU = ("summarization", "fluency")


def _write(path, results):
    path.write_text(json.dumps(results, indent=2, sort_keys=True), encoding="utf-8")
    return str(path)


@pytest.fixture
def files(tmp_path):
    scores = base_scores(12)
    base = _write(tmp_path / "main.json", make_results({FLU: scores}))
    same = _write(tmp_path / "same.json", make_results({FLU: scores}))
    worse = list(scores)
    worse[2] -= 0.3
    drop = _write(tmp_path / "drop.json", make_results({FLU: worse}))
    return tmp_path, base, same, drop, scores


def test_compare_text_exit_codes(files, capsys):
    tmp_path, base, same, drop, scores = files
    assert main(["compare", base, same]) == 0
    out = capsys.readouterr().out
    assert "passed: no regression (12 compared, 12 unchanged, 0 improved)" in out
    assert main(["compare", base, drop]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == (
        f"REGRESSION   tests/test_app.py::test_fluency[case2]::fluency::0: {scores[2]:.4f} -> "
        f"{scores[2] - 0.3:.4f} (-0.3000, tolerance 0.0500)"
    )
    assert lines[-1].startswith("FAILED: 1 regression (1 check, 0 suites)")
    assert main(["compare", base, drop, "--tolerance", "fluency=0.5"]) == 0


def test_compare_markdown_and_json(files, capsys):
    tmp_path, base, same, drop, scores = files
    assert main(["compare", base, drop, "--format", "markdown"]) == 1
    md = capsys.readouterr().out
    assert md.startswith("### nlgeval baseline: FAILED: 1 regression")
    assert "| dimension | cases | old mean | new mean | change | 95% interval | tolerance | verdict |" in md
    assert "| `tests/test_app.py::test_fluency[case2]::fluency::0` |" in md and "**REGRESSION**" in md
    out = tmp_path / "verdict.json"
    assert main(["compare", base, drop, "--format", "json", "-o", str(out), "--seed", "7"]) == 1
    data = json.loads(out.read_text())
    assert data["status"] == "regression" and data["statistics"]["seed"] == 7 and data["counts"]["regressions"] == 1


def test_compare_errors_exit_2(files, capsys, tmp_path):
    _, base, same, drop, scores = files
    int8 = _write(
        tmp_path / "int8.json",
        make_results({FLU: scores}, evaluator="int8cccc", fingerprint=dict(FINGERPRINT, precision="int8")),
    )
    assert main(["compare", base, int8]) == 2
    err = capsys.readouterr().err
    assert "nlgeval compare: error: refusing to compare" in err and "precision: fp32 -> int8" in err
    assert main(["compare", base, int8, "--allow-evaluator-change"]) == 0
    assert "cross-evaluator drift summarization/fluency: 0.0000" in capsys.readouterr().out
    broken = tmp_path / "broken.json"
    broken.write_text(open(same).read()[:200])
    assert main(["compare", base, str(broken)]) == 2
    assert "broken.json, line" in capsys.readouterr().err
    assert main(["compare", base, str(tmp_path / "nope.json")]) == 2
    assert main(["compare", base, same, "--tolerance", "fluency"]) == 2
    with pytest.raises(SystemExit):
        main(["compare", base, same, "--format", "html"])


def test_baseline_update_and_validate(files, capsys):
    tmp_path, base, same, drop, scores = files
    target = str(tmp_path / "nlgeval-baseline.json")
    assert main(["baseline", "update", base, "-o", target]) == 0
    assert "12 added, 0 changed, 0 unchanged; 12 entries" in capsys.readouterr().out
    partial = make_results({FLU: scores[:3]})
    partial["checks"][0]["score"] = 0.01
    assert main(["baseline", "update", _write(tmp_path / "partial.json", partial), "-o", target]) == 0
    assert "0 added, 1 changed, 2 unchanged, 9 kept (did not run)" in capsys.readouterr().out
    assert main(["baseline", "validate", target]) == 0
    # The baseline is itself a valid BASE for compare.
    assert main(["compare", target, same]) == 0  # case 0 goes back from 0.01 to its score: an improvement
    assert "improved     tests/test_app.py::test_fluency[case0]::fluency::0: 0.0100 ->" in capsys.readouterr().out
    assert main(["baseline", "update", target, "-o", target]) == 2  # a baseline is not a results file
    text = open(target).read().replace('"operator": ">"', '"operator": "≥"', 1)
    open(target, "w").write(text)
    assert main(["baseline", "validate", target]) == 2
    assert "operator must be one of" in capsys.readouterr().err
    assert main(["baseline", "update", base, "-o", target]) == 2  # never overwrites an invalid baseline
