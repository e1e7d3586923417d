"""An output read whole is bounded before it is tokenized and split: a 10 MB output costs about what a normal one
does, and its score is the score of what the model reads."""

from __future__ import annotations

import time

import pytest

from pytest_nlgeval.core.bounds import TAIL_CHARS, WHOLE_TEXT_CHARS, bounded_text, whole_text_chars

pytestmark = pytest.mark.usefixtures("recorder")

SENTENCE = "The committee approved the new budget after a long debate about school funding. "


def test_a_short_text_is_read_as_it_is():
    text = SENTENCE * 10
    assert bounded_text(text) is text
    assert bounded_text("x" * (WHOLE_TEXT_CHARS + TAIL_CHARS)) == "x" * (WHOLE_TEXT_CHARS + TAIL_CHARS)


def test_a_long_text_keeps_its_head_and_its_tail_whole_words():
    text = SENTENCE * 200_000 + "And then it stopped without"
    read = bounded_text(text)
    assert len(read) <= WHOLE_TEXT_CHARS + TAIL_CHARS + 2
    head, tail = read.split("\n\n")
    assert text.startswith(head) and text.endswith(tail)
    assert text[len(head)] == " " and text[-len(tail) - 1] == " "  # no word is split
    assert tail.endswith("stopped without")
    assert whole_text_chars(256) == WHOLE_TEXT_CHARS and whole_text_chars(4096) == 128 * 4096


def test_a_ten_megabyte_output_costs_about_a_normal_one(monkeypatch):
    from pytest_nlgeval.core.evaluator import Evaluator

    ev = Evaluator(cache=False, device="cpu")
    normal = SENTENCE * 3
    huge = SENTENCE * (10_000_000 // len(SENTENCE)) + "It ends in the middle of a"
    ev.score(normal, "fluency")  # the sessions are built once, outside the timing
    started = time.perf_counter()
    ev.score(normal, "fluency")
    normal_s = time.perf_counter() - started

    seen: list[int] = []
    score_texts = ev.score_texts

    def spy(texts, graph=None):
        seen.extend(len(t) for t in texts)
        return score_texts(texts, graph)

    monkeypatch.setattr(ev, "score_texts", spy)
    started = time.perf_counter()
    score = ev.score(huge, "fluency")
    huge_s = time.perf_counter() - started
    assert max(seen) < WHOLE_TEXT_CHARS + TAIL_CHARS + 1000  # what the model is handed is bounded
    assert huge_s < max(5.0, 20 * normal_s), (huge_s, normal_s)  # 54 s before the bound
    # the same score as the bounded text, and the cut-off end is still named
    assert float(score) == pytest.approx(float(ev.score(bounded_text(huge), "fluency")))
    assert any("breaks off" in line for line in score.explanation())
    assert score.details["text_read"] == f"the first 65,536 and the last 2,048 of {len(huge):,} characters"
    assert "text_read" not in ev.score(normal, "fluency").details


def test_a_long_varied_output_costs_a_bounded_number_of_model_inputs(monkeypatch):
    """Fluency and coherence read a text by its sentences: a long dump of distinct sentences is read up to the
    bound, not sentence by sentence to its end."""
    from pytest_nlgeval.core.evaluator import Evaluator

    ev = Evaluator(cache=False, device="cpu")
    huge = " ".join(f"Report {k} says the council met on day {k} and voted." for k in range(100_000))
    seen: list[int] = []

    def counted(texts, graph=None):  # the model's answers do not matter here, only how many it is asked for
        seen.append(len(texts))
        return [(0.9, False, 12) for _ in texts]

    monkeypatch.setattr(ev, "score_texts", counted)
    for dimension in ("fluency", "coherence"):
        seen.clear()
        score = ev.score(huge, dimension, source="The council met and voted.")
        assert sum(seen) < 3_000, (dimension, sum(seen))  # 100,000 sentences before the bound
        assert "text_read" in score.details
