"""``nlgeval score``: a JSONL file in, scores per row out, the same numbers as the Python API."""

from __future__ import annotations

import json

import pytest

from pytest_nlgeval import cli
from pytest_nlgeval.core.evaluator import Evaluator

DOC = "Officials said the bridge would reopen next week after repairs. The cat sat on the mat."
ROWS = [
    {"id": 1, "summary": "The bridge will reopen. Repairs are done.", "article": DOC},
    {"id": 2, "summary": "The cat sat on the mat.", "article": DOC},
    {"id": 3, "summary": "It is raining today.", "article": DOC},
]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_scores_match_the_python_api(tiny_t5_model, tmp_path, capsys):
    data = _write(tmp_path / "in.jsonl", ROWS)
    out = tmp_path / "out.jsonl"
    code = cli.main(
        [
            "score",
            str(data),
            "-d",
            "consistency",
            "-d",
            "fluency",
            "--model",
            str(tiny_t5_model),
            "--device",
            "cpu",
            "--output-field",
            "summary",
            "--source-field",
            "article",
            "--no-cache",
            "--chunk",
            "2",
            "-o",
            str(out),
        ]
    )
    assert code == 0
    scored = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in scored] == [1, 2, 3] and scored[0]["article"] == DOC
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    expected = ev.score_batch([r["summary"] for r in ROWS], "consistency", source=DOC)
    assert [r["nlgeval"]["consistency"] for r in scored] == pytest.approx(expected, abs=1e-6)
    printed = capsys.readouterr()
    assert "3 rows, task summarization" in printed.out and "consistency          mean 0." in printed.out
    assert "nlgeval score" not in printed.err  # 6 checks: too short a run for a progress bar


@pytest.mark.parametrize(
    "content, args, message",
    [
        ('{"output": "fine"}\n{not json\n', [], "in.jsonl:2: not valid JSON"),
        ('{"text": "fine"}\n', [], "rows [0] have no 'output' field (choose the field with --output-field)"),
        ('[1, 2]', [], "row 0 is a JSON int, not an object"),
        ('', [], "holds no rows"),
        (
            '{"output": "A claim."}\n',
            ["-d", "consistency"],
            "rows 0-0: dimension 'consistency' (task 'summarization') needs `source`",
        ),
        ('{"output": "A claim."}\n', ["-d", "faithfulness"], "unknown dimension 'faithfulness'"),
    ],
)
def test_user_errors_exit_2_with_a_message(tiny_t5_model, tmp_path, capsys, content, args, message):
    data = tmp_path / "in.jsonl"
    data.write_text(content)
    argv = ["score", str(data), "--model", str(tiny_t5_model), "--device", "cpu", "--no-cache"]
    argv += args or ["-d", "fluency"]
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_missing_model_is_a_usage_error(tmp_path, capsys):
    data = _write(tmp_path / "in.jsonl", [{"output": "Fine."}])
    assert cli.main(["score", str(data), "-d", "fluency", "--model", str(tmp_path / "nope"), "--no-cache"]) == 2
    assert "nope" in capsys.readouterr().err
