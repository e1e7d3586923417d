"""Source windows: planning, the evaluator's windowed scores, `off` parity with UniEval, cache and fingerprint."""

from __future__ import annotations

import json

import pytest

from pytest_nlgeval.core.dimensions import Dimension, DimensionError
from pytest_nlgeval.core.evaluator import Evaluator
from pytest_nlgeval.core.windows import WindowPlanner, check_mode, sentence_spans

FILLER = [
    f"The council met on day {i} to discuss the budget for the town's schools and its roads." for i in range(1, 25)
]
LAST = "At the end of the meeting, Mayor Linda Park announced that the public library will reopen in March."
LONG_DOC = " ".join(FILLER) + " " + LAST
# The tiny T5's tokenizer spends many tokens per word: short sentences fit its 48 tokens
T5_DOC = " ".join(f"Day {i} came." for i in range(1, 12)) + " It is open."


# comparisons made here land in a recorder of the test's own, not in the session running these tests
pytestmark = pytest.mark.usefixtures("recorder")


def _words(texts):
    """A stand-in tokenizer: one token per word plus two special tokens."""
    return [len(t.split()) + 2 for t in texts]


# -- planning ------------------------------------------------------------------------------------------------
def test_windows_fit_cover_every_sentence_and_share_one_with_the_next():
    planner = WindowPlanner(_words, max_length=60)
    source = " ".join(FILLER[:10])
    windows = planner.plan(prefix_tokens=20, source=source)
    assert len(windows) > 2
    assert [w.index for w in windows] == list(range(len(windows)))
    assert all(w.count == len(windows) for w in windows)
    assert windows[0].first == 0 and windows[-1].last == 10
    for a, b in zip(windows, windows[1:]):
        assert b.first == a.last - 1  # one shared sentence: every adjacent pair is seen together
    for w in windows:
        assert 20 + _words([w.text])[0] - 2 <= 60  # fits next to the prefix
        assert w.text == " ".join(FILLER[w.first : w.last])  # whole sentences, the source's own spacing


def test_a_sentence_longer_than_the_budget_is_a_window_of_its_own():
    planner = WindowPlanner(_words, max_length=30)
    long_sentence = "Many " + "words " * 40 + "end."
    source = f"Short one. {long_sentence.strip()} Short two."
    windows = planner.plan(prefix_tokens=10, source=source)
    assert [(w.first, w.last) for w in windows] == [(0, 1), (1, 2), (2, 3)]


def test_sentence_spans_keep_lines_and_offsets():
    text = "Paris is in France. It is big.\nBerlin is in Germany.\n"
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ["Paris is in France.", "It is big.", "Berlin is in Germany."]


def test_windows_keep_the_dialogue_fact_convention():
    planner = WindowPlanner(_words, max_length=14)
    windows = planner.plan(
        prefix_tokens=4, source="One two three four. Five six seven eight.\nNine ten eleven.", tail="\n"
    )
    assert len(windows) >= 2 and all(w.text.endswith("\n") and not w.text.endswith("\n\n") for w in windows)


def test_bad_mode_and_bad_window_argument_are_named():
    with pytest.raises(ValueError, match="source_windows must be one of auto, off"):
        check_mode("on")
    with pytest.raises(ValueError, match="source_windows must be one of auto, off, got 'always'"):
        Evaluator(None, cache=False, source_windows="always")
    with pytest.raises(DimensionError, match="window='fact' is not one of its arguments"):
        Dimension(task="summarization", name="x", question="Is it?", fields=("claim", "document"), window="fact")
    with pytest.raises(DimensionError, match="window_aggregation must be 'max' or 'mean'"):
        Dimension(
            task="summarization",
            name="x",
            question="Is it?",
            fields=("claim", "document"),
            window="source",
            window_aggregation="min",
        )


# -- a T5 model folder (max length 48 tokens) ------------------------------------------------------------------
def test_t5_windows_fit_the_model_and_name_the_supporting_window(tiny_t5_model):
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    score = ev.score("It is open.", "consistency", source=T5_DOC)
    unit = score.details["units"][0]
    window = unit["window"]
    assert score.details["source_windows"] == "auto" and not score.details["truncated"]
    assert window["count"] > 1 and 0 <= window["index"] < window["count"]
    assert window["aggregation"] == "max" and window["score"] == pytest.approx(unit["score"])
    # every window input fits the model: nothing was cut
    fields = {"source": window["text"]}
    text = ev.dimension("consistency").input_text("It is open.", fields)
    assert int(ev.window_planner.count([text])[0]) <= 48
    message = score.failure_message(">", 2.0)
    assert f"best-supporting source window {window['index'] + 1} of {window['count']}" in message
    assert "tail was cut" not in message


def test_off_reproduces_unieval_tail_truncation(tiny_t5_checkpoint, tiny_t5_model):
    """`off` is UniEval: the full input, cut at the tail to the model's maximum, scored once."""
    pytest.importorskip("transformers")
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_training.export import t5_reference_scores

    source = " ".join(FILLER[:8])
    claims = ["The council met on day 3.", "Nothing happened."]
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False, source_windows="off")
    scores = ev.evaluate(claims, "consistency", source=source)
    texts = [
        f"question: Is this claim consistent with the document? </s> claim: {c} </s> document: {source}" for c in claims
    ]
    tok = AutoTokenizer.from_pretrained(str(tiny_t5_checkpoint))
    model = T5ForConditionalGeneration.from_pretrained(str(tiny_t5_checkpoint)).eval()
    manifest = json.loads((tiny_t5_model / "nlgeval.json").read_text())
    reference = t5_reference_scores(
        model, tok, texts, max_length=48, yes_id=manifest["yes_token_id"], no_id=manifest["no_token_id"]
    )
    assert [float(s) for s in scores] == pytest.approx(list(reference), abs=1e-5)
    assert all(s.details["truncated"] for s in scores) and "window" not in scores[0].details["units"][0]


def test_an_input_that_fits_scores_the_same_in_both_modes(tiny_t5_model):
    short = "The cat sat."
    on = Evaluator(tiny_t5_model, device="cpu", cache=False).score("A cat sat.", "consistency", source=short)
    off = Evaluator(tiny_t5_model, device="cpu", cache=False, source_windows="off").score(
        "A cat sat.", "consistency", source=short
    )
    assert float(on) == float(off) and "window" not in on.details["units"][0]


def test_the_setting_is_part_of_the_fingerprint_and_the_cache_key(tiny_t5_model, tmp_path):
    on = Evaluator(tiny_t5_model, device="cpu", cache_dir=tmp_path)
    off = Evaluator(tiny_t5_model, device="cpu", cache_dir=tmp_path, source_windows="off")
    assert on.fingerprint["source_windows"] == "auto" and off.fingerprint["source_windows"] == "off"
    assert on.fingerprint_id != off.fingerprint_id
    short = "The cat sat on the mat."
    on.score("A cat sat.", "consistency", source=short)
    off.score("A cat sat.", "consistency", source=short)
    assert off.stats["scored"] == 1 and off.stats["cached"] == 0  # the other mode's entry is not served
    again = Evaluator(tiny_t5_model, device="cpu", cache_dir=tmp_path, source_windows="off")
    again.score("A cat sat.", "consistency", source=short)
    assert again.stats == {"scored": 0, "cached": 1, "sessions": 0, "calls": 1}
    assert again.scorer.fingerprint_id != again.fingerprint_id  # the runtime's id lacks the evaluator setting
    assert again.fingerprint_id == off.fingerprint_id


def test_groundedness_windows_the_fact(tiny_t5_model):
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    fact = T5_DOC.replace(". ", ".\n")
    score = ev.score("It is open.", "groundedness", task="dialogue", fact=fact)
    assert score.details["window"]["count"] > 1 and score.details["window"]["text"].endswith("\n")


def test_plugin_option_reaches_the_evaluator(pytester):
    pytester.makepyfile(f"""
        from pytest_nlgeval import assert_dimension
        DOC = {LONG_DOC!r}

        def test_long(nlgeval):
            assert nlgeval.source_windows == "off"
            score = assert_dimension("Mayor Linda Park spoke.", "consistency", source=DOC)
            assert score.details["source_windows"] == "off" and score.details["truncated"]
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-source-windows", "off", "--nlgeval-no-cache")
    result.assert_outcomes(passed=1)
    bad = pytester.runpytest("--nlgeval-source-windows", "sometimes")
    assert bad.ret != 0
    bad.stderr.fnmatch_lines(["*--nlgeval-source-windows / nlgeval_source_windows must be one of auto, off*"])


# -- the embedded default model --------------------------------------------------------------------------------
def test_embedded_model_finds_a_claim_supported_only_by_the_last_sentence():
    claim = "Mayor Linda Park announced that the public library will reopen in March."
    with_windows = Evaluator(None, cache=False).score(claim, "consistency", source=LONG_DOC)
    without = Evaluator(None, cache=False, source_windows="off").score(claim, "consistency", source=LONG_DOC)
    assert without.details["truncated"]
    window = with_windows.details["units"][0]["window"]
    assert window["index"] == window["count"] - 1 and LAST in window["text"]
    assert float(with_windows) > 0.7, with_windows.details
    assert float(without) < 0.5, without.details
    assert float(with_windows) - float(without) > 0.3
