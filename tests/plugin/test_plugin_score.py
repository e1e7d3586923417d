"""Score and ScoreList: comparisons are assertions, failures explain themselves, checks are recorded."""

from __future__ import annotations

import math

import pytest

from pytest_nlgeval.core.checks import CheckRecorder
from pytest_nlgeval.core.score import Score, ScoreList


@pytest.fixture()
def rec():
    """A recorder inside a test whose marker sets a tolerance; the scores below are handed it."""
    recorder = CheckRecorder()
    recorder.start_test("tests/test_x.py::test_a", marker={"tolerance": 0.02})
    return recorder


def _units_score(value=0.55, recorder=None):
    return Score(
        value,
        name="consistency",
        task="summarization",
        evaluator_id="abc123",
        recorder=recorder,
        evaluator_fingerprint={"provider": "CPUExecutionProvider", "precision": "fp32"},
        details={
            "units": [{"text": "The cat sat.", "score": 0.9}, {"text": "It rained frogs.", "score": 0.2}],
            "aggregation": "mean",
            "inputs": {"output": "The cat sat. It rained frogs.", "source": "d"},
        },
    )


@pytest.mark.parametrize(
    "op, threshold, passes",
    [
        (">", 0.5, True),
        (">", 0.55, False),
        (">=", 0.55, True),
        (">=", 0.6, False),
        ("<", 0.6, True),
        ("<", 0.55, False),
        ("<=", 0.55, True),
        ("<=", 0.5, False),
    ],
)
def test_each_operator_passes_or_raises(op, threshold, passes):
    score = Score(0.55, name="fluency")
    compare = {
        ">": lambda: score > threshold,
        ">=": lambda: score >= threshold,
        "<": lambda: score < threshold,
        "<=": lambda: score <= threshold,
    }[op]
    if passes:
        assert compare() is True
    else:
        with pytest.raises(AssertionError, match=rf"fluency = 0.5500, expected {op} {threshold:g}"):
            compare()


def test_reflected_and_chained_comparisons():
    score = Score(0.55, name="fluency")
    assert 0.5 < score
    assert 0.5 < score < 0.6
    with pytest.raises(AssertionError, match=r"expected > 0.6"):
        0.6 < score  # noqa: B015 - reflected: score > 0.6


def test_failure_message_names_sentences_and_weakest():
    with pytest.raises(AssertionError) as info:
        _units_score() > 0.7
    message = str(info.value)
    assert message.splitlines()[0] == "consistency (summarization) = 0.5500, expected > 0.7"
    assert "[1] 0.9000  The cat sat." in message
    assert "[2] 0.2000  It rained frogs.   <- weakest" in message
    assert "weakest sentence (0.2000): 'It rained frogs.'" in message
    assert "evaluator abc123 (CPUExecutionProvider, fp32)" in message


def test_nan_never_passes_and_bad_thresholds_are_type_errors():
    with pytest.raises(AssertionError):
        Score(math.nan, name="x") > 0.0
    for bad in ("0.7", None, True, math.nan):
        with pytest.raises(TypeError, match="compared with a number"):
            Score(0.5, name="x") > bad


def test_float_like_but_not_a_truth_value():
    score = Score(0.25, name="fluency")
    assert float(score) == 0.25 and f"{score:.2f}" == "0.25" and round(score, 1) == 0.2
    assert score + 1 == 1.25 and 1 - score == 0.75 and score * 2 == 0.5
    assert score == 0.25 and score != 0.3
    with pytest.raises(TypeError, match="compare the fluency score with a threshold"):
        bool(score)


def test_comparisons_record_checks(rec):
    recorder = rec
    seen = []
    recorder.on_record = seen.append
    s = _units_score(recorder=recorder)
    s > 0.5
    with pytest.raises(AssertionError):
        s >= 0.9
    Score(3.8, name="helpful", kind="metric", recorder=recorder) >= 3.5
    assert [c.key for c in recorder.checks] == [
        "tests/test_x.py::test_a::consistency::0",
        "tests/test_x.py::test_a::consistency::1",
        "tests/test_x.py::test_a::helpful::0",
    ]
    first, second, metric = (c.to_dict() for c in recorder.checks)
    assert first["passed"] is True and second["passed"] is False
    assert second["operator"] == ">=" and second["threshold"] == 0.9 and second["score"] == 0.55
    assert first["evaluator"] == "abc123" and first["tolerance"] == 0.02
    assert first["details"]["units"][1] == {"text": "It rained frogs.", "score": 0.2}
    assert metric["kind"] == "metric" and metric["evaluator"] is None and metric["task"] is None
    assert recorder.evaluators == {"abc123": {"provider": "CPUExecutionProvider", "precision": "fp32"}}
    assert seen == recorder.checks


def _list(recorder=None):
    values = [0.9, 0.3, 0.8, 0.1]
    outs = ["good one", "weak one", "fine one", "worst one"]
    return ScoreList(
        [Score(v, name="fluency", details={"inputs": {"output": o}}, recorder=recorder) for v, o in zip(values, outs)],
        name="fluency",
        task="summarization",
    )


def test_scorelist_aggregates():
    scores = _list()
    assert len(scores) == 4 and scores.values == [0.9, 0.3, 0.8, 0.1]
    assert float(scores.mean()) == pytest.approx(0.525)
    assert float(scores.min()) == 0.1 and float(scores.max()) == 0.9
    assert float(scores.fraction(above=0.5)) == 0.5 and float(scores.fraction(below=0.5)) == 0.5
    assert scores[0] > 0.8


def test_scorelist_failures_name_the_failing_cases(rec):
    recorder = rec
    scores = _list(recorder)
    with pytest.raises(AssertionError) as info:
        scores.min() >= 0.5
    message = str(info.value)
    assert "min(fluency) (summarization) = 0.1000, expected >= 0.5" in message
    assert "2 of 4 cases are not >= 0.5" in message
    assert "case 3: 0.1000  'worst one'" in message and "case 1: 0.3000  'weak one'" in message
    assert "good one" not in message
    with pytest.raises(AssertionError) as info:
        scores.fraction(above=0.5) >= 0.9
    message = str(info.value)
    assert "2 of 4 cases are > 0.5 (50.0%); 2 are not" in message and "'worst one'" in message
    with pytest.raises(AssertionError, match=r"mean of 4 cases; lowest cases:\n\s+case 3"):
        scores.mean() > 0.9
    kinds = {c.name: c.kind for c in recorder.checks}
    assert kinds == {"min(fluency)": "aggregate", "fraction>0.5(fluency)": "aggregate", "mean(fluency)": "aggregate"}
    assert recorder.checks[0].details["cases"][3] == {"index": 3, "score": 0.1, "output": "worst one"}


def test_scorelist_misuse_is_explained():
    scores = _list()
    with pytest.raises(TypeError, match=r"\.mean\(\) > t"):
        scores > 0.5
    with pytest.raises(TypeError, match="exactly one of above"):
        scores.fraction()
    with pytest.raises(ValueError, match="empty ScoreList"):
        ScoreList([], name="fluency").mean()


def test_check_records_are_json_ready_whatever_the_details(rec):
    recorder = rec
    import json
    from pathlib import Path

    import numpy as np

    Score(
        0.5,
        name="m",
        kind="metric",
        details={
            "nan": float("nan"),
            "arr": np.array([1.5, 2.0]),
            "np": np.float32(0.25),
            "path": Path("a/b.json"),
            "obj": object.__name__,
            "nested": [{"inf": float("inf")}],
        },
        recorder=recorder,
    ) > 0.1
    data = recorder.checks[-1].to_dict()
    json.dumps(data, allow_nan=False)
    assert data["details"]["nan"] is None and data["details"]["arr"] == [1.5, 2.0]
    assert data["details"]["np"] == 0.25 and data["details"]["path"] == "a/b.json"
    assert data["details"]["nested"] == [{"inf": None}]
