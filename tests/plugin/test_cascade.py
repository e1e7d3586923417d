"""The two-step reading of a claim's aligned source units (``cascade`` in the declaration): a claim whose
best-sharing unit supports it stops there; a wrong claim is read in full, with the score of a full reading."""

import copy

import pytest

from pytest_nlgeval.core.evaluator import Evaluator

SOURCE = (
    "The city council of Lindau approved a new bridge on Tuesday. The bridge will cost 38 million euros. "
    "Construction starts in May and should take two years. The old bridge will stay open until then. "
    "Mayor Anna Berg said the vote was a relief for commuters."
)


@pytest.fixture(scope="module")
def evaluators():
    cascaded = Evaluator(cache=False, threads=2)
    full = Evaluator(cache=False, threads=2)
    served = full._served

    def without_cascade(dim):
        spec = served(dim)
        if "cascade" in spec:
            spec = copy.deepcopy(spec)
            del spec["cascade"]
        return spec

    full._served = without_cascade
    assert "cascade" in cascaded._served(cascaded.dimension("consistency", "summarization"))
    yield cascaded, full
    cascaded.close()
    full.close()


def _read(ev, text):
    before = ev.stats["scored"]
    score = ev.score(text, "consistency", source=SOURCE)
    return score, ev.stats["scored"] - before


def test_a_supported_claim_stops_after_its_best_sharing_unit(evaluators):
    cascaded, full = evaluators
    text = "The council of Lindau approved a new bridge on Tuesday."  # the head's support from one unit >= 0.9
    quick, quick_inputs = _read(cascaded, text)
    slow, slow_inputs = _read(full, text)
    assert quick_inputs < slow_inputs
    assert quick.details["units"][0]["window"]["candidates_read"].startswith("1 of ")
    assert float(quick) >= 0.7 and float(quick) == pytest.approx(float(slow), abs=0.05)


def test_a_wrong_claim_is_read_in_full(evaluators):
    cascaded, full = evaluators
    text = "The bridge will cost 83 million euros."
    quick, quick_inputs = _read(cascaded, text)
    slow, slow_inputs = _read(full, text)
    assert quick_inputs == slow_inputs
    assert float(quick) == pytest.approx(float(slow), abs=1e-9) and float(quick) <= 0.2
    assert "candidates_read" not in quick.details["units"][0]["window"]
