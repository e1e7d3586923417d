"""The fact dimensions of the embedded default model on realistic (correct, damaged) outputs.

tests/data/fact_pairs.json holds summaries and RAG answers over news, product and policy texts with one
damage each (a wrong number, unit, date, weekday, place or name, a negation, a contradiction, an invented
sentence, word salad). Every correct output must score >= 0.7, every damaged one at least 0.2 below its
correct output, as summarization consistency and as rag faithfulness, and the failure message must name the
span that failed where an explicit check caught it. Damage an explicit check names (numbers, units, dates,
names, places) is capped for every pair; the rest is asserted as a count, at what the model reaches today.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

PAIRS = Path(__file__).resolve().parents[1] / "data" / "fact_pairs.json"
DATA = json.loads(PAIRS.read_text(encoding="utf-8"))
MARGIN = 0.2
BAR = 0.7

#: damage that an explicit check names: these must be capped whatever the head says
EXPLICIT = {"number", "unit", "date", "weekday", "money", "scale", "name", "place", "time"}
#: what the embedded model reaches today (docs/validity.md, `python benchmarks/facts_dev.py`); the misses are
#: swapped roles and numbers, contradictions and negations in other words, and paraphrases the head rejects
CAUGHT_AT_LEAST = 36
CORRECT_AT_LEAST = 21


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    evaluator = Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))
    out = {}
    for case in DATA["sources"]:
        outputs = case["correct"] + [d["text"] for d in case["damaged"]]
        out[case["id"]] = {
            "consistency": evaluator.evaluate(outputs, "consistency", source=case["source"]),
            "faithfulness": evaluator.evaluate(outputs, "faithfulness", task="rag", context=[case["source"]]),
        }
    return out


def _damaged(kinds=None):
    for case in DATA["sources"]:
        for k, damaged in enumerate(case["damaged"]):
            if kinds is None or damaged["kind"] in kinds:
                yield pytest.param(case, k, id=f"{case['id']}-{k}-{damaged['kind']}")


@pytest.mark.parametrize("dimension", ["consistency", "faithfulness"])
@pytest.mark.parametrize("case, k", list(_damaged(EXPLICIT)))
def test_a_wrong_number_date_or_name_is_capped_and_named(scored, case, k, dimension):
    score = scored[case["id"]][dimension][len(case["correct"]) + k]
    damaged = case["damaged"][k]
    weakest = min(u["score"] for u in score.units)  # the claim that holds the damage; others may be fine
    assert weakest <= 0.2, f"{damaged['kind']}: weakest claim {weakest:.3f} in {damaged['text']!r}"
    assert any(line.startswith("unsupported: `") for line in score.explanation()), score.explanation()


@pytest.mark.parametrize("dimension", ["consistency", "faithfulness"])
def test_damaged_outputs_score_a_margin_below_the_correct_ones(scored, dimension):
    caught, correct, missed = 0, {}, []
    for case in DATA["sources"]:
        scores = scored[case["id"]][dimension]
        for i in range(len(case["correct"])):
            correct[(case["id"], i)] = float(scores[i])
        for k, damaged in enumerate(case["damaged"]):
            good, bad = float(scores[damaged["of"]]), float(scores[len(case["correct"]) + k])
            if good - bad >= MARGIN:
                caught += 1
            else:
                missed.append(f"{damaged['kind']}: {good:.3f} -> {bad:.3f} {damaged['text']!r}")
    total = sum(len(c["damaged"]) for c in DATA["sources"])
    assert caught >= CAUGHT_AT_LEAST, f"{caught}/{total} caught with a margin of {MARGIN}; missed:\n" + "\n".join(
        missed
    )
    high = sum(1 for v in correct.values() if v >= BAR)
    assert high >= CORRECT_AT_LEAST, f"{high}/{len(correct)} correct outputs >= {BAR}: {correct}"


def test_the_failure_message_names_the_span_and_what_the_source_says(scored):
    bridge = next(c for c in DATA["sources"] if c["id"] == "bridge")
    score = scored["bridge"]["consistency"][len(bridge["correct"])]  # "83 million euro" for 38
    with pytest.raises(AssertionError) as info:
        score > 0.7
    message = str(info.value)
    assert "unsupported: `83 million euro`: the source says 38 million euros" in message
    assert "per-claim scores" in message


def test_a_reply_word_is_not_a_claim(scored):
    from pytest_nlgeval.core.evaluator import Evaluator

    kettle = next(c for c in DATA["sources"] if c["id"] == "kettle")
    evaluator = Evaluator(cache=False)
    answer = "You can return an unused kettle within 30 days of delivery for a full refund."
    plain = evaluator.score(answer, "faithfulness", task="rag", contexts=[kettle["source"]])
    with_yes = evaluator.score("Yes. " + answer, "faithfulness", task="rag", contexts=[kettle["source"]])
    assert float(with_yes) == pytest.approx(float(plain))
    assert [u["text"] for u in with_yes.units] == [answer]
    nothing = evaluator.score("Sure! Happy to help.", "faithfulness", task="rag", contexts=[kettle["source"]])
    assert float(nothing) == 1.0 and nothing.units == []
    assert "makes no claim" in "\n".join(nothing.explanation())
