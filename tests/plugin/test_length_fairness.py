"""Summarization fluency and coherence are length-fair: the same good summary, cut at 30 to 200 words, keeps its
fluency within 0.1 and its coherence within 0.15 (embedded default model; fluency is read sentence by sentence
as UniEval reads it, coherence sentence pair by sentence pair)."""

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
    drops = {d: f[0] - f[-1] for d, (f, _) in by_length.items()}
    # read sentence by sentence the score no longer falls with length (whole, it fell from 0.86 at 30 words to
    # 0.23 at 130); the form factor (a phrase repeated across sentences) may still lower a long one
    assert sum(drop > 0.1 for drop in drops.values()) <= 2, drops
    assert sorted(drops.values())[len(drops) // 2] <= 0.02, drops


def test_coherence_read_by_sentence_pairs_does_not_fall_with_length(evaluator):
    # the model's answer, read pair by pair (without the document, so without the order, repetition and topic
    # factors): its median change from 30 to 200 words is +0.02 (whole, it fell from 0.81 to 0.17 at 170 words)
    drops = []
    for d in LONG:
        texts = [_summary(DOCUMENTS[d], n) for n in LENGTHS]
        scores = [float(s) for s in evaluator.evaluate(texts, "coherence")]
        drops.append(scores[0] - scores[-1])
    drops.sort()
    assert drops[len(drops) // 2] <= 0.05, drops
    assert sum(drop > 0.15 for drop in drops) <= 2, drops


def test_coherence_with_the_document_is_measured_not_promised(by_length):
    # with the document, the whole summary's order, repetition and topic factors still lower some long good
    # summaries (median drop 0.15 from 30 to 200 words on these 25: docs/validity.md says so); this bounds it
    drops = sorted(c[0] - c[-1] for _, c in by_length.values())
    assert drops[len(drops) // 2] <= 0.2, drops
