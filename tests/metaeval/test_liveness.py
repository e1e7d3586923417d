"""Liveness: every dimension the embedded default model serves reacts to the damage it names, and the
ones it cannot judge are refused by name, never answered with a constant."""

from __future__ import annotations

import json
import random
import shutil

import pytest

from pytest_nlgeval.cli import main
from pytest_nlgeval.core.dimensions import Dimension, DimensionNotServedError, DimensionRegistry
from pytest_nlgeval.core.evaluator import Evaluator
from pytest_nlgeval.metaeval.liveness import (
    MIN_LIVENESS,
    MIN_SD,
    ProbeTextError,
    _change_number,
    _salad,
    _stutter,
    build_pairs,
    load_texts,
    probe,
)
from nlgeval_runtime.errors import ModelFormatError
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.resolve import embedded_model_path


@pytest.fixture(scope="module")
def default_report():
    evaluator = Evaluator(cache=False)
    try:
        yield probe(evaluator)
    finally:
        evaluator.close()


def test_every_served_dimension_of_the_default_model_is_live(default_report):
    served = [r for r in default_report.results.values() if r.refused is None]
    assert len(served) >= 8
    failing = {r.dimension: (round(r.liveness, 3), round(r.sd, 3)) for r in default_report.failures()}
    assert not failing, f"dimensions below liveness {MIN_LIVENESS} or sd {MIN_SD}: {failing}"
    for r in served:
        assert r.pairs >= 24, r.dimension
        assert r.liveness >= MIN_LIVENESS and r.sd >= MIN_SD, r.dimension


def test_the_fluency_family_is_served_and_sees_word_salad(default_report):
    for key in ("summarization/fluency", "dialogue/naturalness", "data2text/naturalness"):
        result = default_report.results[key]
        assert result.refused is None, key
        correct, pairs = result.by_kind["word salad"]
        assert correct / pairs >= 0.9, key


def test_a_refused_dimension_raises_a_named_error_naming_a_checkpoint_that_can():
    folder = ModelFolder.open(embedded_model_path())
    refused = (folder.dimensions or {}).get("refuses", {})
    if not refused:
        pytest.skip("the embedded model serves every built-in dimension")
    key, spec = sorted(refused.items())[0]
    task, name = key.split("/")
    evaluator = Evaluator(cache=False)
    with pytest.raises(DimensionNotServedError, match=r"cannot judge .*MingZhong/unieval-"):
        evaluator.score(
            "A reply that would otherwise get a number.",
            name,
            task=task,
            context="Hi.\n\n",
            fact="A fact.\n",
            source="A document.",
            reference="A reference.",
        )
    assert not evaluator.session_created or evaluator.stats["scored"] == 0


def test_a_custom_question_is_refused_by_a_model_without_zero_shot_answers():
    registry = DimensionRegistry()
    registry.add(
        Dimension(task="summarization", name="politeness", question="Is this a polite summary?", fields=("summary",))
    )
    evaluator = Evaluator(cache=False, registry=registry)
    with pytest.raises(DimensionNotServedError, match="custom zero-shot questions"):
        evaluator.score("Thank you kindly.", "politeness")


def _declared_copy(tmp_path, declaration):
    target = tmp_path / "model"
    shutil.copytree(embedded_model_path(), target)
    manifest = json.loads((target / "nlgeval.json").read_text())
    manifest["dimensions"] = declaration
    (target / "nlgeval.json").write_text(json.dumps(manifest))
    return target


def test_an_undeclared_dimension_is_refused_and_the_declaration_is_in_the_fingerprint(tmp_path):
    base = json.loads((embedded_model_path() / "nlgeval.json").read_text()).get("dimensions")
    narrowed = {
        "serves": {"summarization/consistency": {"scorer": "boolqa", "source_units": "windows"}},
        "refuses": {"dialogue/naturalness": {"reason": "it never learned the question", "use": "X/y"}},
    }
    folder = _declared_copy(tmp_path, narrowed)
    evaluator = Evaluator(folder, cache=False)
    with pytest.raises(DimensionNotServedError, match="does not declare summarization/fluency"):
        evaluator.score("A sentence.", "fluency")
    with pytest.raises(DimensionNotServedError, match="never learned the question.*--nlgeval-model X/y"):
        evaluator.score("A reply.", "naturalness", task="dialogue")
    with pytest.raises(DimensionNotServedError, match="cannot judge summarization/coherence"):
        evaluator.score("A summary.", "overall", source="A document.", reference="A reference.")

    def without_ref(ev):
        return {k: v for k, v in ev.fingerprint.items() if k != "model"}

    assert without_ref(evaluator) != without_ref(Evaluator(cache=False))
    if base is not None:  # the same declaration, copied elsewhere: the same fingerprint but for the model's name
        assert without_ref(Evaluator(_declared_copy(tmp_path / "again", base), cache=False)) == without_ref(
            Evaluator(cache=False)
        )


@pytest.mark.parametrize(
    "declaration, message",
    [
        ({"serves": []}, "'dimensions.serves' must map"),
        ({"serves": {"fluency": {}}}, "must read 'task/dimension'"),
        ({"serves": {"summarization/fluency": {"scorer": "llm"}}}, "unknown scorer"),
        ({"serves": {"summarization/consistency": {"source_units": "pages"}}}, "'source_units' must be one of"),
        ({"serves": {"summarization/fluency": {"folder": "../elsewhere"}}}, "sub-folder of the model folder"),
        ({"serves": {"summarization/fluency": {"fields": "paragraph"}}}, "'fields' must be a non-empty list"),
        (
            {"serves": {"summarization/fluency": {"unit": "word"}}},
            "'unit' must be 'whole', 'sentence', 'claim' or 'passage'",
        ),
        ({"serves": {}, "refuses": {"dialogue/naturalness": {}}}, "needs a 'reason'"),
        (
            {"serves": {"dialogue/naturalness": {}}, "refuses": {"dialogue/naturalness": {"reason": "x"}}},
            "both served and refused",
        ),
        ({"serves": {}, "extra": 1}, "unknown key"),
        ({"serves": {"summarization/relevance": {"scorer": "related", "folder": "embed"}}}, "'against' calibrations"),
        (
            {"serves": {"summarization/coherence": {"discourse": {"repeat_from": 0.6}}}},
            "'discourse' needs the 'folder'",
        ),
        (
            {"serves": {"summarization/coherence": {"discourse": {"folder": "embed", "order_floor": 2}}}},
            "'order_floor' in",
        ),
        ({"serves": {"data2text/informativeness": {"slots": {"cap": "low"}}}}, "'slots' must be an object"),
        ({"serves": {"summarization/fluency": {"form": {"penalty": 2}}}}, "'form' must be an object"),
        (
            {"serves": {"summarization/consistency": {"source_units": "both", "cascade": {"first": 0, "stop": 0.9}}}},
            "'cascade' must be an object",
        ),
        (
            {"serves": {"summarization/consistency": {"cascade": {"first": 1, "stop": 0.9}}}},
            "'sentences' or 'both'",
        ),
    ],
)
def test_a_malformed_declaration_is_a_format_error(tmp_path, declaration, message):
    with pytest.raises(ModelFormatError, match=message):
        ModelFolder.open(_declared_copy(tmp_path, declaration))


def test_sentence_alignment_finds_the_supporting_sentence_of_a_long_document(tmp_path):
    base = json.loads((embedded_model_path() / "nlgeval.json").read_text()).get("dimensions")
    if base is None or base["serves"].get("summarization/consistency", {}).get("source_units") == "windows":
        pytest.skip("the embedded model does not align claims with sentences")
    texts = load_texts()
    doc = texts["documents"][0]
    other = texts["documents"][5]
    evaluator = Evaluator(cache=False)
    supported = evaluator.score(doc["summary"][0], "consistency", source=doc["document"])
    foreign = evaluator.score(other["summary"][0], "consistency", source=doc["document"])
    assert float(supported) > float(foreign)
    unit = supported.details["units"][0]
    # the source sentences that decided the score: a sentence, two adjacent ones, or the sentences that together
    # hold the claim's words (here the council's vote and the hourly price, two sentences apart)
    from nlgeval_runtime.sentences import split_sentences

    decided = split_sentences(unit["window"]["text"])
    assert decided and all(sentence in doc["document"] for sentence in decided)


def test_damage_functions_change_what_they_name():
    rng = random.Random(0)
    sentence = "The council approved the plan by 9 votes to 4 after a long debate on Tuesday."
    salad = _salad(sentence, rng)
    assert sorted(salad.split()) == sorted(sentence.split()) and salad != sentence
    stutter = _stutter(sentence, rng)
    assert len(stutter.split()) > len(sentence.split()) + 5
    changed = _change_number(sentence, rng)
    assert changed != sentence and changed.split()[:6] == sentence.split()[:6] or "votes" in changed
    assert _change_number("No numbers here at all.", rng) is None
    assert _salad("a a a", rng) is None


def test_pairs_are_fixed_by_the_seed_and_cover_every_builtin_dimension():
    first, again = build_pairs(seed=0), build_pairs(seed=0)
    assert {k: [p.bad for p in v] for k, v in first.items()} == {k: [p.bad for p in v] for k, v in again.items()}
    builtin = {d.key for d in DimensionRegistry().all()} if hasattr(DimensionRegistry, "all") else None
    keys = set(first)
    assert {
        "summarization/fluency",
        "summarization/coherence",
        "summarization/consistency",
        "summarization/relevance",
        "dialogue/naturalness",
        "dialogue/coherence",
        "dialogue/engagingness",
        "dialogue/groundedness",
        "dialogue/understandability",
        "data2text/naturalness",
        "data2text/informativeness",
        "fact/consistency",
        "rag/faithfulness",
        "rag/answer_relevance",
        "rag/context_relevance",
        "rag/context_recall",
    } <= keys
    if builtin is not None:
        assert builtin <= keys
    for key, pairs in first.items():
        # the damage is in the output, or (rag retrieval) in the inputs the output is judged against
        assert all(p.good != p.bad for p in pairs), key


def test_bad_probe_texts_are_named(tmp_path):
    broken = tmp_path / "texts.json"
    broken.write_text(json.dumps({"documents": [{"document": "Only a document."}]}))
    with pytest.raises(ProbeTextError, match=r"documents\[0\] lacks \['summary'\]"):
        load_texts(broken)
    broken.write_text("{not json")
    with pytest.raises(ProbeTextError, match="cannot read probe texts"):
        load_texts(broken)
    assert main(["probe", "default", "--texts", str(broken)]) == 2


def test_probe_command_fails_on_a_dead_dimension_and_writes_its_report(tmp_path, capsys, monkeypatch):
    """A model whose fluency answers are constant fails the gate with exit status 1."""
    from pytest_nlgeval.metaeval import liveness

    def constant(evaluator, cases, name, task):
        return [0.5 + 0.001 * (i % 2) for i in range(len(cases))]

    monkeypatch.setattr(liveness, "_score", constant)
    out = tmp_path / "probe.json"
    code = main(["probe", "default", "--dimension", "summarization/fluency", "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 1 and "FAILED: summarization/fluency" in printed and "DEAD" in printed
    report = json.loads(out.read_text())
    assert report["passed"] is False and report["dimensions"][0]["sd"] < MIN_SD
    assert main(["probe", "default", "--dimension", "summarization/nothing"]) == 2
    assert main(["probe", "default", "--min-sd", "2"]) == 2


@pytest.mark.parametrize("cache", [False, True])
def test_a_lone_surrogate_is_a_named_input_error_with_and_without_the_cache(tmp_path, cache):
    from pytest_nlgeval.core.dimensions import InputError

    evaluator = Evaluator(cache=cache, cache_dir=tmp_path / "cache")
    with pytest.raises(InputError, match=r"lone surrogate '\\ud800' at character 4"):
        evaluator.score("Good\ud800 text.", "fluency")
    with pytest.raises(InputError, match=r"`source=` holds a lone surrogate"):
        evaluator.score("Good text.", "consistency", source="A doc\udfff.")
    assert evaluator.stats["scored"] == 0


def test_a_claim_that_leaves_no_room_for_its_source_is_refused():
    from pytest_nlgeval.core.dimensions import InputError

    claim = "word " * 5000  # one "sentence" of 5,000 words
    evaluator = Evaluator(cache=False)
    for source in ("Completely unrelated text about tax law in 1990.", "word " * 300):
        with pytest.raises(InputError, match=r"its `source=` would not be read"):
            evaluator.score(claim, "consistency", source=source)


def test_a_refused_dimension_skips_a_test_marked_refused_skip_and_fails_one_that_is_not(pytester):
    refused = (ModelFolder.open(embedded_model_path()).dimensions or {}).get("refuses", {})
    if "dialogue/groundedness" not in refused:
        pytest.skip("the embedded model judges groundedness")
    pytester.makefile(".ini", pytest="[pytest]\n")
    suite = '''
import pytest
from pytest_nlgeval import assert_dimension

@pytest.mark.nlgeval(task="dialogue", refused="skip")
def test_skipped():
    assert_dimension("It opens next week.", "groundedness", fact="The bridge reopens next week.") > 0.5

@pytest.mark.nlgeval(task="dialogue")
def test_errors():
    assert_dimension("It opens next week.", "groundedness", fact="The bridge reopens next week.") > 0.5
'''
    pytester.makepyfile(
        test_chat=suite
        + '''
@pytest.mark.nlgeval(task="dialogue", refused="maybe")
def test_bad_marker():
    pass
'''
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    assert result.ret != 0 and "must be 'error' or 'skip', got 'maybe'" in result.stdout.str() + result.stderr.str()
    pytester.makepyfile(test_chat=suite)
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs")
    result.assert_outcomes(skipped=1, failed=1)
    result.stdout.fnmatch_lines(["*cannot judge dialogue/groundedness*MingZhong/unieval-dialog*"])


def test_a_source_that_needs_more_windows_than_the_cap_is_a_named_error():
    from pytest_nlgeval.core.dimensions import InputError

    long_source = " ".join(
        f"Sentence number {i} talks about the harbour and its ships in some detail." for i in range(120)
    )
    with pytest.raises(InputError, match=r"needs \d+ windows .* more than the cap of 2 \(--nlgeval-max-windows"):
        Evaluator(cache=False, max_windows=2).score("The harbour has ships.", "consistency", source=long_source)
    assert (
        float(Evaluator(cache=False, max_windows=50).score("The harbour has ships.", "consistency", source=long_source))
        > 0.5
    )
    with pytest.raises(ValueError, match="max_windows must be a positive integer"):
        Evaluator(cache=False, max_windows=0)
