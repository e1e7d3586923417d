"""Summarization coherence and relevance, and data-to-text informativeness, of the embedded default model on
realistic cases (tests/data/summary_pairs.json).

coherence: a good summary in the document's order >= 0.7; the same sentences told backwards, or with a
sentence said twice, at least 0.2 lower, and the message names the reading. relevance: a good summary >= 0.7,
another document's summary at least 0.2 lower, a summary of minor details lower. informativeness: an utterance
that states every slot >= 0.7; one that drops a slot or gets a value wrong is capped at 0.2 and the message
names the slot.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "summary_pairs.json").read_text(encoding="utf-8"))
SUMMARIES = DATA["summaries"]
DATA2TEXT = DATA["data2text"]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    return Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("k", range(len(SUMMARIES)), ids=[c["id"] for c in SUMMARIES])
def test_coherence_falls_when_the_summary_jumps_back_repeats_itself_or_strays(evaluator, k):
    from nlgeval_runtime.sentences import split_sentences

    case, other = SUMMARIES[k], SUMMARIES[(k + 1) % len(SUMMARIES)]
    sentences = split_sentences(case["good"])
    backwards = " ".join(reversed(sentences))
    repeated = " ".join([*sentences, sentences[0]])
    strays = " ".join([*sentences, split_sentences(other["good"])[0]])
    good, back, again, astray = evaluator.evaluate(
        [case["good"], backwards, repeated, strays], "coherence", task="summarization", source=case["document"]
    )
    assert float(good) >= 0.7, float(good)
    for damaged in (back, again, astray):
        assert float(good) - float(damaged) >= 0.2, (float(good), float(damaged))
    assert any(line.startswith("order:") for line in back.explanation())
    assert any(line.startswith("repetition:") for line in again.explanation())
    assert any(line.startswith("off the document:") for line in astray.explanation())
    assert not any(line.startswith(("order:", "repetition:", "off the document:")) for line in good.explanation())


def test_coherence_without_the_document_is_the_model_answer_alone(evaluator):
    case = SUMMARIES[0]
    alone = evaluator.score(case["good"], "coherence", task="summarization")
    read = evaluator.score(case["good"], "coherence", task="summarization", source=case["document"])
    # coherence is read by sentence pairs: each pair's reading carries the whole summary's discourse factors
    assert all("discourse" not in (u.get("window") or {}) for u in alone.units)
    assert read.units and all(u["window"]["discourse"]["order"] == 1.0 for u in read.units)


@pytest.mark.parametrize("k", range(len(SUMMARIES)), ids=[c["id"] for c in SUMMARIES])
def test_relevance_passes_a_good_summary_and_fails_another_documents(evaluator, k):
    case, other = SUMMARIES[k], SUMMARIES[(k + 1) % len(SUMMARIES)]
    good, minor, foreign = evaluator.score_batch(
        [case["good"], case["minor"], other["good"]],
        "relevance",
        task="summarization",
        source=case["document"],
        reference=case["reference"],
    )
    assert good >= 0.7 and good - foreign >= 0.2, (good, foreign)
    assert good > minor, (good, minor)


def test_relevance_ranks_minor_details_well_below_the_main_points_in_most_cases(evaluator):
    gaps = []
    for case in SUMMARIES:
        good, minor = evaluator.score_batch(
            [case["good"], case["minor"]],
            "relevance",
            task="summarization",
            source=case["document"],
            reference=case["reference"],
        )
        gaps.append(good - minor)
    # the two news cases whose minor details share the story's subject are ranked lower but within 0.2
    # (docs/validity.md: a sentence encoder reads the subject more than which points are kept)
    assert sum(gap >= 0.2 for gap in gaps) >= 3, gaps


def test_relevance_reads_the_reference_alone_when_no_document_is_given(evaluator):
    case = SUMMARIES[0]
    both = evaluator.score(
        case["good"], "relevance", task="summarization", source=case["document"], reference=case["reference"]
    )
    alone = evaluator.score(case["good"], "relevance", task="summarization", reference=case["reference"])
    assert float(alone) >= 0.7 and float(alone) != float(both)


@pytest.mark.parametrize("case", DATA2TEXT, ids=[c["id"] for c in DATA2TEXT])
def test_informativeness_caps_an_utterance_that_drops_or_changes_a_slot(evaluator, case):
    good, missing, wrong = evaluator.evaluate(
        [case["good"], case["missing"], case["wrong"]],
        "informativeness",
        task="data2text",
        source=case["mr"],
        reference=case["reference"],
    )
    assert float(good) >= 0.7, float(good)
    for damaged in (missing, wrong):
        assert float(damaged) <= 0.2 and float(good) - float(damaged) >= 0.2, float(damaged)
        assert any(line.startswith("missing slot:") for line in damaged.explanation())


def test_informativeness_names_an_unreadable_meaning_representation(evaluator):
    from pytest_nlgeval.core.dimensions import InputError

    case = DATA2TEXT[0]
    with pytest.raises(InputError, match="meaning representation"):
        evaluator.score(
            case["good"], "informativeness", task="data2text", source="a restaurant", reference=case["reference"]
        )


@pytest.mark.parametrize("case", SUMMARIES, ids=[c["id"] for c in SUMMARIES])
def test_fluency_falls_when_the_summary_breaks_off_or_doubles_a_word(evaluator, case):
    words = case["good"].split()
    cut = " ".join(words[: int(len(words) * 0.8)]).rstrip(".,;")
    doubled = " ".join([*words[:3], words[2], *words[3:]])  # "... must must boil ..."
    good, broken, slip = evaluator.evaluate([case["good"], cut, doubled], "fluency", task="summarization")
    assert float(good) >= 0.7, float(good)
    for damaged, sign in ((broken, "breaks off"), (slip, "twice in a row")):
        assert float(good) - float(damaged) >= 0.2, (float(good), float(damaged))
        assert any(sign in line for line in damaged.explanation()), damaged.explanation()
