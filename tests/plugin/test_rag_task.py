"""The rag task through the assertions, on the embedded default model: grounded answers score above ungrounded
ones, per-context and per-sentence details are recorded, and missing inputs are named errors."""

import json
import textwrap

import pytest

from pytest_nlgeval.core.dimensions import InputError
from pytest_nlgeval.core.evaluator import Evaluator

QUESTION = "How long does the warranty on the Kestrel K2 kettle last?"
PASSAGES = [
    "The Kestrel K2 electric kettle comes with a warranty of 3 years from the date of purchase.",
    "Kestrel also sells toasters in four colours, all with a removable crumb tray.",
]


@pytest.fixture(scope="module")
def evaluator():
    return Evaluator(cache=False)


def test_grounded_answers_score_above_ungrounded_ones(evaluator):
    def score(answer, dimension, **inputs):
        return float(evaluator.score(answer, dimension, task="rag", **inputs))

    grounded, invented = "The K2 kettle has a 3-year warranty.", "The K2 kettle has a 10-year warranty."
    assert score(grounded, "faithfulness", contexts=PASSAGES) > score(invented, "faithfulness", contexts=PASSAGES) + 0.3
    assert (
        score(grounded, "answer_relevance", question=QUESTION)
        > score("Please check our website.", "answer_relevance", question=QUESTION) + 0.3
    )
    relevance = evaluator.score(grounded, "context_relevance", task="rag", question=QUESTION, contexts=PASSAGES)
    units = relevance.details["units"]
    assert [u["text"] for u in units] == PASSAGES and units[0]["score"] > units[1]["score"] + 0.3
    assert float(relevance) == pytest.approx((units[0]["score"] + units[1]["score"]) / 2)
    recall = evaluator.score(
        grounded,
        "context_recall",
        task="rag",
        contexts=PASSAGES,
        reference="The warranty lasts 3 years. It starts on the date of purchase.",
    )
    assert [u["text"] for u in recall.details["units"]] == [
        "The warranty lasts 3 years.",
        "It starts on the date of purchase.",
    ]
    assert float(recall) > 0.5
    with pytest.raises(InputError, match="pass the retrieved passages once"):
        evaluator.score(grounded, "faithfulness", task="rag", contexts=PASSAGES, context=PASSAGES)
    with pytest.raises(InputError, match="wrap a single passage"):
        evaluator.score(grounded, "faithfulness", task="rag", contexts=PASSAGES[0])


def test_rag_checks_in_a_pytest_run(pytester):
    pytester.makepyfile(
        test_rag=textwrap.dedent(f"""
        import pytest
        from pytest_nlgeval import assert_dimension, assert_dimensions

        QUESTION = {QUESTION!r}
        PASSAGES = {PASSAGES!r}

        def app():
            return "The K2 kettle has a 3-year warranty."

        @pytest.mark.nlgeval(task="rag")
        def test_answer(nlgeval):
            assert assert_dimension(app(), "faithfulness", contexts=PASSAGES) > 0.5
            outputs = nlgeval.samples(app, n=3)
            assert assert_dimensions(outputs, "context_relevance", question=QUESTION,
                                     contexts=[PASSAGES] * 3).fraction(above=0.3) >= 1.0
    """)
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-no-cache", "--nlgeval-json", "out.json")
    result.assert_outcomes(passed=1)
    checks = json.loads((pytester.path / "out.json").read_text())["checks"]
    faithful = next(c for c in checks if c["name"] == "faithfulness")
    assert faithful["task"] == "rag" and faithful["details"]["inputs"]["context"] == PASSAGES
    rate = next(c for c in checks if c["kind"] == "aggregate")
    assert rate["details"]["samples"]["n"] == 3 and rate["details"]["samples"]["distinct"] == 1
    assert rate["details"]["samples"]["sd"] == 0.0
