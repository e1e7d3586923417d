"""The induced-metric artifact refuses tampered, mistyped and misconfigured files, naming the file and field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pytest_nlgeval.cli import main
from pytest_nlgeval.induction import assert_metric
from pytest_nlgeval.induction.artifact import (
    ArtifactError,
    ArtifactIntegrityError,
    Component,
    InducedMetric,
    content_hash,
)

# comparisons made here land in a recorder of the test's own, not in the session running these tests
pytestmark = pytest.mark.usefixtures("recorder")


def _metric() -> InducedMetric:
    # Bank metrics that need no optional library: the artifact's checks are what is tested here.
    return InducedMetric(
        name="brevity",
        task="Answer briefly",
        target="brevity",
        label_kind="likert",
        label_range=(1.0, 5.0),
        components=[
            Component("bank", "length"),
            Component("bank", "length_chars", params={"metric": "length", "unit": "chars"}),
        ],
        mean=[5.0, 30.0],
        scale=[2.0, 10.0],
        weights=[0.7, 0.7],
        coefficients=[0.4, 0.3],
        intercept=2.7,
    )


@pytest.fixture
def saved(tmp_path):
    path = tmp_path / "brevity.json"
    _metric().save(path)
    return path


def _edit(path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data)
    path.write_text(json.dumps(data, indent=2, sort_keys=True), encoding="utf-8")


def test_saved_artifact_carries_its_content_hash_and_loads(saved):
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["sha256"] == content_hash(data) and len(data["sha256"]) == 64
    metric = InducedMetric.load(saved)
    assert metric.score("one two three four five") == pytest.approx(_metric().score("one two three four five"))


def test_changed_coefficient_is_refused_naming_the_file_unless_trusted(saved):
    before = InducedMetric.load(saved).score("one two three")
    _edit(saved, lambda d: d["pls"]["coefficients"].__setitem__(0, 0.8))
    with pytest.raises(ArtifactIntegrityError, match=r"brevity\.json does not match its content hash") as info:
        InducedMetric.load(saved)
    assert info.value.path == str(saved) and "nlgeval metrics seal" in str(info.value)
    with pytest.raises(ArtifactIntegrityError):
        assert_metric("one two three", str(saved))
    # The override for a reviewed hand edit: the edited number is used.
    trusted = InducedMetric.load(saved, trust=True)
    assert trusted.score("one two three") != pytest.approx(before)
    assert float(assert_metric("one two three", str(saved), trust=True)) == pytest.approx(
        trusted.score("one two three")
    )


def test_missing_hash_is_refused(saved):
    _edit(saved, lambda d: d.pop("sha256"))
    with pytest.raises(ArtifactIntegrityError, match="has no content hash"):
        InducedMetric.load(saved)


def test_seal_command_reseals_a_reviewed_edit_and_refuses_an_invalid_one(saved, capsys):
    _edit(saved, lambda d: d["pls"].__setitem__("intercept", 3.0))
    assert main(["metrics", "seal", str(saved)]) == 0
    assert "sealed, sha256" in capsys.readouterr().out
    assert InducedMetric.load(saved).intercept == 3.0
    _edit(saved, lambda d: d["pls"].__setitem__("intercept", "3.0"))
    assert main(["metrics", "seal", str(saved)]) == 2
    assert "pls.intercept must be a finite number, got '3.0' (a str)" in capsys.readouterr().err
    assert json.loads(saved.read_text(encoding="utf-8"))["pls"]["intercept"] == "3.0"  # not sealed


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda d: d["pls"].__setitem__("intercept", "2.7"),
            r"field pls\.intercept must be a finite number, got '2\.7'",
        ),
        (lambda d: d["pls"]["coefficients"].__setitem__(1, True), r"field pls\.coefficients must be a list of finite"),
        (lambda d: d["scaler"]["scale"].__setitem__(0, 0.0), r"field scaler\.scale must be a list of positive"),
        (lambda d: d["scaler"].__setitem__("mean", [1.0]), r"2 components but 1 values in scaler\.mean"),
        (lambda d: d.__setitem__("label_range", [5, 1]), r"field label_range must be two finite numbers"),
        (lambda d: d.__setitem__("needs_input", "no"), r"field needs_input must be true or false"),
        (
            lambda d: d["components"][0].__setitem__("params", ["unit"]),
            r"field components\[0\]\.params must be an object",
        ),
        (lambda d: d["components"][0].__setitem__("kind", "model"), r"field components\[0\]\.kind must be 'bank' or"),
        (lambda d: d["pls"].pop("weights"), r"field pls\.weights is missing"),
    ],
)
def test_every_field_is_type_checked_even_when_trusted(saved, change, message):
    _edit(saved, change)
    with pytest.raises(ArtifactError, match=message) as info:
        InducedMetric.load(saved, trust=True)
    assert str(saved) in str(info.value)


@pytest.mark.parametrize(
    "component, message",
    [
        (
            {"kind": "bank", "name": "embedding_cosine", "params": {"model": "/etc"}},
            r"components\[1\] \('embedding_cosine'\) has invalid params \{\"model\": \"/etc\"\}: .*'/etc' holds no "
            r"sentence-transformers model",
        ),
        (
            {"kind": "bank", "name": "length", "params": {"unit": "pages"}},
            r"components\[1\] \('length'\) has invalid params .*length unit must be 'words' or 'chars'",
        ),
        (
            {"kind": "bank", "name": "length", "params": {"colour": "red"}},
            r"components\[1\] \('length'\) has invalid params \{\"colour\": \"red\"\}: .*colour",
        ),
        (
            {"kind": "bank", "name": "no_such_metric", "params": {}},
            r"components\[1\] \('no_such_metric'\) names metric 'no_such_metric', which is not registered",
        ),
    ],
)
def test_bank_component_options_are_checked_when_loading(saved, component, message):
    _edit(saved, lambda d: d["components"].__setitem__(1, component))
    with pytest.raises(ArtifactError, match=message):
        InducedMetric.load(saved, trust=True)


def test_an_overflowing_artifact_is_named_not_blamed_on_a_judge():
    """Coefficients edited to 1e308 make the composed score infinite while every component is finite: the
    error names the artifact and what to do, never a judge the metric does not have."""
    from pathlib import Path

    from pytest_nlgeval.induction.artifact import ArtifactError, InducedMetric

    path = Path(__file__).resolve().parents[2] / "examples" / "induced_metric" / "helpful.json"
    metric = InducedMetric.load(path)
    metric.coefficients = [1e308] * len(metric.coefficients)
    with pytest.raises(
        ArtifactError, match=r"helpful\.json: the composed score (overflows|is inf|is nan).*Re-induce it"
    ):
        metric.score("Descale with vinegar and water.", input="How do I descale a kettle?", references=["Use vinegar."])


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "induced_metric" / "helpful.json"
KETTLE = {
    "input": "How do I descale an electric kettle?",
    "references": [
        "Fill the kettle with equal parts water and white vinegar, boil it, and let it sit for an hour. "
        "Empty it and boil clean water twice to remove the taste."
    ],
}


def _resealed_example(tmp_path, change) -> Path:
    """A copy of the shipped example with ``change`` applied and sealed again, as `nlgeval metrics seal` does."""
    from pytest_nlgeval.induction.artifact import seal_file

    path = tmp_path / "helpful.json"
    path.write_text(EXAMPLE.read_text(encoding="utf-8"), encoding="utf-8")
    _edit(path, change)
    seal_file(path)
    return path


@pytest.mark.parametrize(
    "change, shown",
    [
        (lambda d: d["pls"].__setitem__("intercept", 1e6), "score 1000001.4"),
        (lambda d: d["pls"]["coefficients"].__setitem__(0, 1e308), "e+308"),
    ],
    ids=["intercept-1e6", "coefficient-1e308"],
)
def test_a_score_far_outside_the_label_range_is_refused_naming_the_artifact(tmp_path, change, shown):
    from pytest_nlgeval.induction.artifact import ScoreOutOfRangeError

    path = _resealed_example(tmp_path, change)
    metric = InducedMetric.load(path)  # sealed, every number finite: only its scores betray it
    answer = "Fill the kettle with water and vinegar, boil it and rinse it twice."
    with pytest.raises(ScoreOutOfRangeError) as info:
        metric.score(answer, **KETTLE)
    message = str(info.value)
    assert message.startswith(f"{path}: the composed score ") and shown in message
    assert "outside the label range 1 to 5" in message and "-3 to 9" in message and "nlgeval induce" in message
    with pytest.raises(ScoreOutOfRangeError, match=re.escape(str(path))):
        assert_metric(answer, str(path), **KETTLE)
    with pytest.raises(ScoreOutOfRangeError):
        metric.score_batch([answer, answer], [KETTLE["input"]] * 2, [KETTLE["references"]] * 2)


def test_a_score_that_overshoots_the_labels_within_the_tolerance_is_reported_as_computed():
    """An answer identical to its reference is unlike any answer the example was fitted on: its components
    are at their bounds and the composition extrapolates beyond 5. That score is kept, not clipped."""
    metric = InducedMetric.load(EXAMPLE)
    evaluation = metric.evaluate([KETTLE["references"][0]], [KETTLE["input"]], [KETTLE["references"]])[0]
    assert 5.0 < evaluation.value <= metric.allowed_range[1]
    assert metric.score(KETTLE["references"][0], **KETTLE) == evaluation.value
    assert metric.allowed_range == (-3.0, 9.0)


def test_non_finite_numbers_are_refused_when_loading(saved):
    # 1e400 is valid JSON that Python reads as inf; the trusted load still checks every number.
    text = saved.read_text(encoding="utf-8")
    data = json.loads(text)
    data["pls"]["coefficients"][0] = "COEF"
    saved.write_text(json.dumps(data, indent=2, sort_keys=True).replace('"COEF"', "1e400"), encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"field pls\.coefficients must be a list of finite numbers, got \[inf"):
        InducedMetric.load(saved, trust=True)
    with pytest.raises(ArtifactError, match=r"every coefficient must be a finite number, got inf"):
        InducedMetric(**{**_kwargs(), "coefficients": [float("inf"), 0.3]})
    with pytest.raises(ArtifactError, match=r"every intercept must be a finite number, got nan"):
        InducedMetric(**{**_kwargs(), "intercept": float("nan")})


def _kwargs() -> dict:
    m = _metric()
    return {
        "name": m.name,
        "task": m.task,
        "target": m.target,
        "label_kind": m.label_kind,
        "label_range": m.label_range,
        "components": m.components,
        "mean": m.mean,
        "scale": m.scale,
        "weights": m.weights,
        "coefficients": m.coefficients,
        "intercept": m.intercept,
    }
