"""Summarization fluency and coherence read by passages of three sentences: the same good summary, cut at 30 to 200
words, keeps its fluency (median change 0.03 over 25 summaries); coherence falls less than read whole, and the
rest of its fall (the whole summary's discourse factors) is bounded here as measured (docs/validity.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "domain_claims.json"
DOCUMENTS = {d["id"]: d for d in json.loads(DATA.read_text(encoding="utf-8"))["documents"]}
LENGTHS = (30, 60, 90, 130, 200)


def _summary(document: dict, words: int) -> str:
    """The document's first good renderings, in order, up to about ``words`` words (whole sentences)."""
    out: list[str] = []
    for slot in document["slots"]:
        if sum(len(s.split()) for s in out) >= words:
            break
        text = slot["good"][0].strip()
        out.append(text if text.endswith((".", "!", "?")) else text.rstrip(",;") + ".")
    return " ".join(out)


#: the documents whose first renderings make a summary of 200 words or more without repeating a claim
LONG = [d for d, doc in DOCUMENTS.items() if len(_summary(doc, 200).split()) >= 190]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    return Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.fixture(scope="module")
def by_length(evaluator):
    """``{document: (fluency by length, coherence by length)}`` of the good summaries cut at each length."""
    out = {}
    for d in LONG:
        texts = [_summary(DOCUMENTS[d], n) for n in LENGTHS]
        fluency = [float(s) for s in evaluator.evaluate(texts, "fluency")]
        coherence = [float(s) for s in evaluator.evaluate(texts, "coherence", source=DOCUMENTS[d]["source"])]
        out[d] = (fluency, coherence)
    return out


def test_fluency_of_a_good_summary_does_not_fall_with_its_length(by_length):
    assert len(by_length) >= 20
    drops = sorted(f[0] - f[-1] for f, _ in by_length.values())
    # read by passages of three sentences the score no longer falls with length (whole, it fell from 0.86 at 30
    # words to 0.23 at 130): median change 0.03 from 30 to 200 words on these 25; a weak sentence among few
    # (at 30 words) or the form factor (a phrase repeated across sentences) moves a few by more than 0.1
    assert drops[len(drops) // 2] <= 0.05, drops
    assert drops[-1] <= 0.2 and sum(drop > 0.1 for drop in drops) <= 7, drops


def test_coherence_read_by_passages_falls_less_with_length_than_read_whole(evaluator):
    # the model's answer alone (without the document, so without the order, repetition and topic factors)
    passage_drops = []
    for d in LONG:
        texts = [_summary(DOCUMENTS[d], n) for n in LENGTHS]
        scores = [float(s) for s in evaluator.evaluate(texts, "coherence")]
        passage_drops.append(scores[0] - scores[-1])
    passage_drops.sort()
    # read whole, the answer fell from 0.81 to 0.17 on a 170-word summary; by passages the median drop is 0.11
    assert passage_drops[len(passage_drops) // 2] <= 0.15, passage_drops


def test_coherence_with_the_document_is_measured_not_promised(by_length):
    # with the document, the whole summary's order, repetition and topic factors still lower long good summaries
    # (median drop 0.24 from 30 to 200 words on these 25; docs/validity.md says so): this bounds it
    drops = sorted(c[0] - c[-1] for _, c in by_length.values())
    assert drops[len(drops) // 2] <= 0.3, drops
