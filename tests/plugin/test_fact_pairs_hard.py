"""The fact dimensions of the embedded default model on harder realistic cases, at the documented thresholds.

tests/data/fact_pairs_hard.json holds 500-600-word articles summarised in 100-160 words, RAG passages and
support dialogues. Correct outputs include paraphrases ("Nobody was hurt" for "No one was injured"), name
aliases (US / the United States, EU), several facts in one sentence and claims that draw on two paragraphs;
damaged outputs carry one error each: a wrong number or date, an invented name, a real name in another
person's role, a negation flipped (also where the source clause holds another negation), a contradiction in
other words, an invented fact, two figures swapped, an evasive answer.

A summary is scored as summarization consistency against its article, an answer as rag faithfulness against
its passage, a reply as dialogue groundedness against its fact. Asserted at the documented thresholds
(pytest_nlgeval/core/thresholds.py): the share of correct outputs failing (false alarms) and of damaged
outputs caught (below the threshold and at least 0.2 below their correct output) stay where the model is
today (``python benchmarks/realistic_facts.py`` prints every miss); damage that an explicit check names
(numbers, dates, roles) is named in the failure message as often as today, and no check fires on a faithful
long summary.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_nlgeval.core.thresholds import recommended_threshold

PAIRS = Path(__file__).resolve().parents[1] / "data" / "fact_pairs_hard.json"
DATA = json.loads(PAIRS.read_text(encoding="utf-8"))
MARGIN = 0.2
DIMENSION = {
    "summary": ("consistency", "summarization"),
    "rag": ("faithfulness", "rag"),
    "dialogue": ("groundedness", "dialogue"),
}
#: what the embedded model reaches at the documented thresholds (benchmarks/realistic_facts.py). The explicit checks
#: fire only on a conflict with the evidence (a figure of the same kind about the same thing), never on a figure
#: the source does not state: that is left to the head, and it costs a few catches here (rag 0.61 and dialogue 0.38
#: when absence fired) against 142 of 360 good six-domain summaries that a check failed (benchmarks/domain_claims.py).
#: summarization consistency and rag faithfulness are read at 0.2 since their thresholds moved there (the rule held
#: on each of six domains, docs/validity.md): rag faithfulness catches half of these damaged answers there (0.51 at
#: 0.35), with no false alarm.
FALSE_ALARMS_AT_MOST = {"summary": 0.071, "rag": 0.07, "dialogue": 0.0}
CAUGHT_AT_LEAST = {"summary": 0.53, "rag": 0.50, "dialogue": 0.35}
#: damaged summaries and answers whose failure message names the wrong figure, date or role (34 numbers and 18 dates
#: when a figure absent from the source was named; 25 numbers before a conflict needed a sentence on the claim's topic)
NAMED_AT_LEAST = {"number": 24, "date": 17, "role": 10}


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    evaluator = Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))
    out = {}
    for case in DATA["sources"]:
        outputs = case["correct"] + [d["text"] for d in case["damaged"]]
        name, task = DIMENSION[case["task"]]
        if task == "rag":
            out[case["id"]] = evaluator.evaluate(outputs, name, task=task, context=[case["source"]])
        elif task == "dialogue":
            out[case["id"]] = evaluator.evaluate(
                outputs, name, task=task, fact=case["source"], context=case.get("history") or [""]
            )
        else:
            out[case["id"]] = evaluator.evaluate(outputs, name, source=case["source"])
    return out


def _rates(scored, kind: str) -> tuple[float, float, list[str]]:
    name, task = DIMENSION[kind]
    threshold = recommended_threshold(name, task)
    good = bad = alarms = caught = 0
    notes = []
    for case in DATA["sources"]:
        if case["task"] != kind:
            continue
        scores = [float(s) for s in scored[case["id"]]]
        n = len(case["correct"])
        for k in range(n):
            good += 1
            if scores[k] <= threshold:
                alarms += 1
                notes.append(f"false alarm {scores[k]:.3f}: {case['correct'][k][:100]!r}")
        for k, damaged in enumerate(case["damaged"]):
            bad += 1
            if scores[n + k] <= threshold and scores[damaged["of"]] - scores[n + k] >= MARGIN:
                caught += 1
            else:
                notes.append(f"missed ({damaged['kind']}) {scores[damaged['of']]:.3f} -> {scores[n + k]:.3f}")
    return alarms / good, caught / bad, notes


@pytest.mark.parametrize("kind", ["summary", "rag", "dialogue"])
def test_correct_outputs_pass_and_damaged_ones_fail_at_the_documented_threshold(scored, kind):
    false_alarms, caught, notes = _rates(scored, kind)
    assert false_alarms <= FALSE_ALARMS_AT_MOST[kind], "\n".join(notes)
    assert caught >= CAUGHT_AT_LEAST[kind], "\n".join(notes)


def test_a_wrong_figure_date_or_role_is_named(scored):
    named: dict[str, int] = {kind: 0 for kind in NAMED_AT_LEAST}
    missed = []
    for case in DATA["sources"]:
        if case["task"] == "dialogue":
            continue
        for k, damaged in enumerate(case["damaged"]):
            if damaged["kind"] not in named:
                continue
            lines = scored[case["id"]][len(case["correct"]) + k].explanation()
            if any(line.startswith("unsupported: `") for line in lines):
                named[damaged["kind"]] += 1
            else:
                missed.append(f"{damaged['kind']}: {damaged['text'][:100]!r}")
    for kind, least in NAMED_AT_LEAST.items():
        assert named[kind] >= least, f"{kind}: {named[kind]} named; not named:\n" + "\n".join(missed)


def test_a_faithful_long_summary_fires_no_check(scored):
    """Every figure of these summaries is in the article (often in another paragraph than the claim's best
    match): no explicit check may fire on them."""
    fired = []
    for case in DATA["sources"]:
        if case["task"] != "summary" or len(case["source"].split()) < 500:
            continue
        for k, kind in enumerate(case["correct_kinds"]):
            if kind not in ("long-summary", "cross-paragraph", "multi-fact", "alias", "paraphrase"):
                continue
            score = scored[case["id"]][k]
            named = [line for line in score.explanation() if line.startswith("unsupported: `")]
            if named:
                fired.append(f"{case['correct'][k][:80]!r}: {named}")
    assert not fired, "\n".join(fired)
