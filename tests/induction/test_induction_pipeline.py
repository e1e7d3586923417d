"""Induction end to end (offline bank-only, and with judges from a fake LM), the artifact round trip,
and the report card."""

import json
import math

import pytest
from induction_fakes import RuleLM, synthetic_rows

from pytest_nlgeval.induction import InducedMetric, induce
from pytest_nlgeval.induction.artifact import ArtifactError
from pytest_nlgeval.induction.dataset import build_dataset
from pytest_nlgeval.induction.pipeline import InductionError, InductionWarning
from pytest_nlgeval.induction.plugin import pytest_nlgeval_report_sections
from pytest_nlgeval.induction.report_card import render_report_card

# comparisons made here land in a recorder of the test's own, not in the session running these tests
pytestmark = pytest.mark.usefixtures("recorder")

BANK = ["length", "distinct_1", "rouge1"]


@pytest.fixture(scope="module")
def data():
    return build_dataset(synthetic_rows(60), target="label")


@pytest.fixture(scope="module")
def bank_metric(data):
    return induce(data, task="Answer questions", target="label", metrics=BANK, n_keep=2, n_boot=200)


def test_offline_induction_from_bank_metrics_alone(bank_metric):
    m = bank_metric
    assert all(c.kind == "bank" for c in m.components) and len(m.components) <= 2
    assert m.provenance["mode"] == "bank metrics only"
    assert any("No LLM was configured" in n for n in m.report["notes"])
    h = m.provenance["heldout"]
    assert h["n"] == 18 and h["tau"] > 0.5 and h["p_value"] < 0.05 and h["ci_low"] <= h["tau"] <= h["ci_high"]
    assert 0.0 <= m.provenance["sensitivity"] <= 1.0 and 0.0 <= m.provenance["stability"] <= 1.0
    prov = m.provenance
    assert prov["dataset"]["rows"] == 60 and prov["dataset"]["train"] == 42 and len(prov["dataset"]["sha256"]) == 64
    assert prov["seed"] == 0 and "scikit-learn" in prov["packages"]
    assert [c.name for c in m.components] == ["length", "distinct_1"] and not m.needs_references


def test_artifact_round_trip_reproduces_the_fit_exactly(bank_metric, data, tmp_path):
    path = bank_metric.save(tmp_path / "metric.json")
    raw = json.loads(path.read_text())
    assert raw["schema"] == "pytest-nlgeval/induced-metric" and raw["version"] == 1
    assert set(raw["pls"]) >= {"weights", "coefficients", "intercept"} and set(raw["scaler"]) == {"mean", "scale"}
    assert raw["components"][0]["signature"]
    loaded = InducedMetric.load(path)
    assert loaded.verify(data) == 0.0
    fit = raw["report"]["fit_check"]
    rows = {e.line: e for e in data.examples}
    first = rows[fit["lines"][0]]
    assert loaded(first.output, input=first.input, references=list(first.references)) == fit["predictions"][0]


def test_artifact_errors(tmp_path, bank_metric):
    with pytest.raises(ArtifactError, match="does not exist"):
        InducedMetric.load(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": "something/else"}))
    with pytest.raises(ArtifactError, match="not an induced-metric artifact"):
        InducedMetric.load(bad)
    data = bank_metric.to_dict()
    data["version"] = 99
    bad.write_text(json.dumps(data))
    with pytest.raises(ArtifactError, match="version 99 is not supported"):
        InducedMetric.load(bad)


def test_induction_with_generated_judges(data, tmp_path, monkeypatch):
    monkeypatch.setenv("NLGEVAL_LLM_CACHE", str(tmp_path / "cache"))
    metric = induce(
        data,
        task="Answer questions",
        target="label",
        lm=RuleLM(),
        n_criteria=3,
        n_rubrics=0,
        example_judge=False,
        n_boot=100,
    )
    names = [c.name for c in metric.components]
    # 60 labels < 80: generated judges only; the judge that runs against the labels is dropped
    assert metric.provenance["mode"] == "generated judges only"
    assert "judge_inverse" not in names and "judge_quality" in names
    assert metric.provenance["llm_usage"]["calls"] > 0
    assert metric.report["examples"][0]["rationales"]
    robust = metric.provenance["robustness"]
    assert robust["llm_perturbations"] and robust["per_perturbation"]["worse:llm_worse"]["sensitivity"] > 0.5
    path = metric.save(tmp_path / "judged.json")
    fresh = RuleLM()
    loaded = InducedMetric.load(path, lm=fresh)
    assert loaded.verify(data) == 0.0
    assert fresh.prompts == []  # every judgment came from the disk cache


def test_unparseable_judge_output_has_no_score(data, tmp_path, monkeypatch):
    monkeypatch.setenv("NLGEVAL_LLM_CACHE", str(tmp_path / "cache"))
    rows = synthetic_rows(60)
    rows[3][1]["output"] = "UNPARSEABLE " + rows[3][1]["output"]
    metric = induce(
        build_dataset(rows, target="label"),
        task="t",
        target="label",
        lm=RuleLM(),
        n_criteria=1,
        n_rubrics=0,
        example_judge=False,
        n_boot=50,
        robustness=False,
    )
    failures = metric.provenance["judge_parse_failures"]
    assert failures == {"judge_quality": 1}
    assert any("could not be parsed" in n for n in metric.report["notes"])
    from pytest_nlgeval.induction.artifact import JudgeParseError

    with pytest.raises(JudgeParseError, match="could not be parsed"):
        metric("UNPARSEABLE quality 5", input="q?")
    assert math.isnan(metric.score_batch(["UNPARSEABLE quality 5"], ["q?"])[0])


def test_non_significant_heldout_tau_warns(tmp_path):
    import random

    rng = random.Random(5)
    rows = [
        (i + 1, {"output": " ".join("w" for _ in range(rng.randint(1, 30))), "y": rng.randint(1, 5)}) for i in range(40)
    ]
    with pytest.warns(InductionWarning, match="p = .* > 0.05"):
        m = induce(
            build_dataset(rows, target="y"), task="t", target="y", metrics=["length"], n_boot=50, robustness=False
        )
    assert any("not shown to track the labels" in n for n in m.report["notes"])


def test_bad_requests_are_induction_errors(data):
    with pytest.raises(InductionError, match="target 'nope'"):
        induce(data, task="t", target="nope")
    with pytest.raises(InductionError, match="task must describe"):
        induce(data, task=" ", target="label")
    with pytest.raises(InductionError, match="no candidate"):
        induce(data, task="t", target="label", metrics=["no_such_metric"])


def test_report_card_and_plugin_section(bank_metric, tmp_path):
    path = bank_metric.save(tmp_path / "m.json")
    html = render_report_card(path, tmp_path / "m.html")
    for text in ("held-out Kendall", "sensitivity", "stability", "PLS weight", "No LLM was configured", "<svg"):
        assert text in html
    card = bank_metric.card()
    results = {
        "checks": [
            {"kind": "metric", "name": "label", "details": {"artifact": str(path), "metric_card": card}},
            {"kind": "metric", "name": "label", "details": {"artifact": str(path), "metric_card": card}},
            {
                "kind": "metric",
                "name": "gone",
                "details": {"artifact": str(tmp_path / "gone.json"), "metric_card": {**card, "name": "gone"}},
            },
            {"kind": "dimension", "name": "fluency", "details": {}},
        ]
    }
    (section,) = pytest_nlgeval_report_sections(results)
    assert section["replaces"] == "nlgeval-metrics"
    html = str(section["html"])
    assert html.count('class="nlg-card"') == 2  # one card per artifact, not per check
    assert "Kendall" in html and "not readable" in html
    assert pytest_nlgeval_report_sections({"checks": results["checks"][3:]}) == []


def test_card_appears_in_the_plugin_report(bank_metric, tmp_path):
    from pytest_nlgeval.report.html import render_html
    from pytest_nlgeval.report.sections import collect_sections
    from pytest_nlgeval.core.score import Score

    path = bank_metric.save(tmp_path / "m.json")
    from pytest_nlgeval.induction import assert_metric

    score = assert_metric(
        "answer 1 with quality 4: alpha beta gamma.",
        path,
        input="question 1?",
        references=["reference 1 alpha beta gamma"],
    )
    assert isinstance(score, Score)
    check = {
        "key": "t::label::0",
        "nodeid": "t",
        "kind": "metric",
        "name": "label",
        "task": None,
        "index": 0,
        "score": float(score),
        "operator": ">=",
        "threshold": 1.0,
        "passed": True,
        "evaluator": None,
        "details": score.details,
    }
    results = {
        "schema": "pytest-nlgeval/results",
        "version": 1,
        "created": "2026-01-01T00:00:00+00:00",
        "environment": {},
        "evaluators": {},
        "checks": [check],
        "summary": {"checks": 1, "passed": 1, "failed": 0},
    }
    sections = collect_sections(results, plugins=["pytest_nlgeval.induction.plugin"], autoload=False)
    html = render_html(results, sections=sections)
    assert "Induced metric <code>label</code>" in html and "held-out Kendall" in html


def test_a_candidate_identical_to_an_earlier_one_is_left_out_with_a_note():
    from pytest_nlgeval.induction.pipeline import _drop_identical

    names = ["consistency", "judge", "fact_consistency", "other"]
    generated = [False, True, False, False]
    nan = float("nan")
    columns = [[0.1, nan, 0.3], [1.0, 2.0, 3.0], [0.1, nan, 0.3], [0.1, 0.2, 0.3]]
    notes: list[str] = []
    _drop_identical(names, generated, columns, notes)
    assert names == ["consistency", "judge", "other"] and generated == [False, True, False]
    assert columns[2] == [0.1, 0.2, 0.3]
    assert notes == ["fact_consistency gives the same value as consistency on every training output; left out"]


def test_what_the_metric_reads_comes_from_its_kept_bank_metrics(data):
    m = induce(data, task="Answer questions", target="label", metrics=["rouge1", "length"], n_keep=2, n_boot=50)
    assert {c.name for c in m.components} == {"rouge1", "length"}
    assert m.needs_references and not m.needs_input  # rouge1 reads the references


def test_the_artifact_carries_no_absolute_path_of_the_machine_that_built_it(data, tmp_path, monkeypatch):
    """A bank metric that fails with a message naming a file: the note keeps the message, with the path
    relative to the folder induction ran in (or only its last part when outside it)."""
    from pytest_nlgeval.induction import pipeline

    real = pipeline._bank_values
    inside = tmp_path / "project" / "models" / "evaluator"
    outside = tmp_path / "elsewhere" / "cache" / "graph.onnx"

    def failing(metric, dataset):
        if metric.name == "rouge1":
            raise FileNotFoundError(f"{inside} has no nlgeval.json; nor has '{outside}'")
        return real(metric, dataset)

    monkeypatch.setattr(pipeline, "_bank_values", failing)
    (tmp_path / "project").mkdir()
    monkeypatch.chdir(tmp_path / "project")
    metric = induce(data, task="Answer questions", target="label", metrics=BANK, n_keep=2, n_boot=50)
    text = metric.save(tmp_path / "metric.json").read_text(encoding="utf-8")
    assert str(tmp_path) not in text
    note = next(n for n in metric.report["notes"] if "rouge1" in n)
    assert "FileNotFoundError: models/evaluator has no nlgeval.json; nor has 'graph.onnx'" in note
