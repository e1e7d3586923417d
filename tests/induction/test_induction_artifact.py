"""The induced-metric artifact refuses tampered, mistyped and misconfigured files, naming the file and field."""

from __future__ import annotations

import json

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
    _edit(saved, lambda d: d["pls"]["coefficients"].__setitem__(0, 40.0))
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
