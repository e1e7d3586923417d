"""A long context is read within a cap: past WHOLE_SOURCE_TOKENS a claim of a fact dimension reads the source
units it is aligned with (found lexically over the whole source) instead of the whole source window by
window, and the details say so; a fact deep inside a 1.8 MB context is still found, and a wrong one caught."""

import pytest

from pytest_nlgeval.core.evaluator import WHOLE_SOURCE_TOKENS, Evaluator

CONTEXT = " ".join(
    f"Warehouse W{i} in district D{i % 97} stores {5000 + i * 7 % 1000} pallets of grain." for i in range(30000)
)


@pytest.fixture(scope="module")
def evaluator():
    ev = Evaluator(cache=False, threads=2)
    yield ev
    ev.close()


def test_a_long_context_is_read_through_aligned_units_and_the_details_say_so(evaluator):
    assert len(CONTEXT.encode()) > 8 * WHOLE_SOURCE_TOKENS
    before = evaluator.stats["scored"]
    right = evaluator.score(
        "Warehouse W1234 stores 5638 pallets of grain.", "faithfulness", task="rag", contexts=[CONTEXT]
    )
    wrong = evaluator.score(
        "Warehouse W1234 stores 56380 pallets of grain.", "faithfulness", task="rag", contexts=[CONTEXT]
    )
    # each claim: at most its aligned units and its form, not ~10,000 windows of the whole context
    top = evaluator.folder.dimensions["serves"]["rag/faithfulness"].get("top_units", 6)
    assert evaluator.stats["scored"] - before <= 2 * (top + 1)
    assert float(right) >= 0.7 and float(wrong) <= float(right) - 0.5
    window = right.details["units"][0]["window"]
    assert "aligned units only" in window["source_read"]
    assert "Warehouse W1234 in district D70 stores 5638 pallets" in window["text"]


def test_a_context_under_the_cap_is_still_read_whole(evaluator):
    context = "The depot opened in 1998. It stores grain for the region. " * 20
    score = evaluator.score("The depot opened in 1998.", "faithfulness", task="rag", contexts=[context])
    assert "source_read" not in score.details["units"][0]["window"]
