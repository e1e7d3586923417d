"""The rag relevances of the embedded default model on realistic cases (tests/data/rag_pairs.json).

answer_relevance: does the answer address the question. A correct answer and a wrong answer that still
addresses the question (wrongness is faithfulness's job) score >= 0.7; an evasive answer and the answer to
another question score at least 0.2 lower. context_relevance: the passage that answers the question >= 0.7,
a passage on the same subject that does not at least 0.2 lower.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

DATA = json.loads((Path(__file__).resolve().parents[1] / "data" / "rag_pairs.json").read_text(encoding="utf-8"))
CASES = DATA["cases"]
IDS = [c["id"] for c in CASES]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    return Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_answer_relevance_passes_answers_that_address_the_question(evaluator, case):
    kinds = ["correct", "wrong", "evasive", "off_topic"]
    scores = dict(
        zip(
            kinds,
            evaluator.evaluate([case[k] for k in kinds], "answer_relevance", task="rag", question=case["question"]),
        )
    )
    for good in ("correct", "wrong"):
        assert float(scores[good]) >= 0.7, (good, float(scores[good]))
        for bad in ("evasive", "off_topic"):
            assert float(scores[good]) - float(scores[bad]) >= 0.2, (good, bad, float(scores[good]), float(scores[bad]))
    assert any(line.startswith("evasive:") for line in scores["evasive"].explanation())


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_context_relevance_ranks_the_answering_passage_first(evaluator, case):
    score = evaluator.score(
        case["correct"],
        "context_relevance",
        task="rag",
        question=case["question"],
        contexts=[case["relevant"], case["irrelevant"]],
    )
    relevant, irrelevant = (u["score"] for u in score.units)
    assert relevant >= 0.7 and relevant - irrelevant >= 0.2, (relevant, irrelevant)


def test_relevance_scores_are_cached_by_pair(tmp_path):
    from pytest_nlgeval.core.evaluator import Evaluator

    case = CASES[0]
    first = Evaluator(cache_dir=tmp_path)
    value = float(first.score(case["correct"], "answer_relevance", task="rag", question=case["question"]))
    again = Evaluator(cache_dir=tmp_path)
    assert float(again.score(case["correct"], "answer_relevance", task="rag", question=case["question"])) == value
    assert again.stats["scored"] == 0 and again.stats["cached"] == 1 and not again.session_created


def test_a_similarity_entry_without_its_encoder_or_calibration_is_a_format_error():
    from nlgeval_runtime.errors import ModelFormatError
    from nlgeval_runtime.modelfolder import _validate_dimensions

    def fail(msg):
        raise ModelFormatError(msg)

    with pytest.raises(ModelFormatError, match="needs the 'folder' of its sentence encoder"):
        _validate_dimensions({"serves": {"rag/answer_relevance": {"scorer": "similarity"}}}, fail)
    bad = {"scorer": "similarity", "folder": "embed", "calibration": {"scale": "x", "offset": 0}}
    with pytest.raises(ModelFormatError, match="finite 'scale' and 'offset'"):
        _validate_dimensions({"serves": {"rag/answer_relevance": bad}}, fail)
