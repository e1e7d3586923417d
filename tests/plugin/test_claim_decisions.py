"""A fact check decides per claim as a reader does: one claim an explicit check proves wrong fails the output
whatever the number of claims, the message names it with what the source says, and ``score.claims`` holds the
per-claim verdicts (embedded default model, documented thresholds)."""

from __future__ import annotations

import pytest

from pytest_nlgeval.core.score import ClaimVerdict, Score
from pytest_nlgeval.core.thresholds import recommended_threshold

MINUTES = (
    "Operations meeting, Monday 3 March. Present: Lena Ortiz (chair), Raj Patel (finance), Amy Cole (IT), "
    "Sam Reid (facilities).\n"
    "Lena opened the meeting at 9:30. Raj reported that the quarterly budget for office supplies is $1,000, "
    "down from $1,200 last quarter. Amy said the new laptops will arrive on 14 March and that 25 staff will get "
    "one. Sam proposed moving the team to the third floor; Lena approved the move, which starts in April. The "
    "printer contract with Copyline ends on 30 June and will not be renewed. Amy asked everyone to finish the "
    "security training within two weeks. Raj said travel spending was flat compared with last year. The "
    "cafeteria will close early on Fridays, at 2pm, from next month. Sam warned that the fire doors on the "
    "second floor must stay closed at all times. The next meeting is on Monday 17 March."
)
GOOD = [
    "Lena Ortiz chaired the operations meeting on 3 March.",
    "The office supplies budget for the quarter is $1,000.",
    "That is $200 less than the previous quarter.",
    "New laptops are due on 14 March.",
    "Twenty-five employees will receive a laptop.",
    "Lena approved Sam's proposal to move the team to the third floor.",
    "The move begins in April.",
    "The Copyline printer contract will not be renewed after it ends on 30 June.",
    "Staff have a fortnight to complete the security training.",
    "Travel spending did not change from last year.",
    "On Fridays the cafeteria will close at 2pm.",
    "The next meeting is on 17 March.",
]


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    return Evaluator(cache_dir=tmp_path_factory.mktemp("cache"))


def test_one_claim_proven_wrong_among_twelve_fails_the_output_and_is_named(evaluator):
    threshold = recommended_threshold("consistency", "summarization")
    wrong = list(GOOD)
    wrong[1] = "The office supplies budget for the quarter is $1,500."
    good, damaged = evaluator.evaluate([" ".join(GOOD), " ".join(wrong)], "consistency", source=MINUTES)
    assert len(damaged.claims) >= 12
    assert float(damaged) <= threshold, damaged.failure_message(">", threshold)
    assert float(good) > float(damaged)
    message = damaged.failure_message(">", threshold)
    assert "`$1,500`: the source says $1,000" in message
    assert "proven wrong" in message
    assert "proven wrong claim (" in message and "'The office supplies budget for the quarter is $1,500.'" in message
    assert "weakest claim (" not in message  # a faithful claim the head doubts more is not named as the cause
    proven = [c for c in damaged.claims if c.proven_wrong]
    assert [c.text for c in proven] == ["The office supplies budget for the quarter is $1,500."]
    assert proven[0].reasons == ("`$1,500`: the source says $1,000",)
    assert proven[0] in damaged.unsupported_claims
    assert damaged.proven_wrong_claims == proven and good.proven_wrong_claims == []
    # the README's gate: its message is the explanation, which names the claim and what the source says
    with pytest.raises(AssertionError, match=r"(?s)proven wrong claim .*`\$1,500`: the source says \$1,000"):
        assert not damaged.proven_wrong_claims, "\n".join(damaged.explanation())


def test_no_explicit_check_fires_on_a_faithful_twelve_claim_summary(evaluator):
    score = evaluator.evaluate([" ".join(GOOD)], "consistency", source=MINUTES)[0]
    assert [c for c in score.claims if c.proven_wrong] == []
    assert all(isinstance(c, ClaimVerdict) for c in score.claims)


def test_the_proven_claim_bounds_the_score_whatever_the_claim_count(evaluator):
    one = evaluator.evaluate(["The office supplies budget for the quarter is $1,500."], "consistency", source=MINUTES)
    many = evaluator.evaluate(
        [" ".join(GOOD[:1] + ["The office supplies budget for the quarter is $1,500."] + GOOD[2:])],
        "consistency",
        source=MINUTES,
    )
    assert float(many[0]) <= float(one[0]) + 1e-9 or float(many[0]) <= 0.2


def test_claims_of_a_score_without_claim_units_are_empty():
    assert (
        Score(0.9, name="fluency", details={"unit": "sentence", "units": [{"text": "A.", "score": 0.9}]}).claims == []
    )


def test_the_message_names_the_proven_claim_not_a_lower_faithful_one():
    from pytest_nlgeval.core.score import explanation_lines

    proof = {"claim": {"mismatches": [{"kind": "number", "message": "`$1,500`: the source says $1,000"}]}}
    details = {
        "unit": "claim",
        "aggregation": "mean_min",
        "units": [
            {"text": "Staff have a fortnight to finish the training.", "score": 0.12},
            {"text": "The budget is $1,500.", "score": 0.2, "window": proof},
            {"text": "The next meeting is on 17 March.", "score": 0.93},
        ],
    }
    lines = explanation_lines(details)
    assert "proven wrong claim (0.2000): 'The budget is $1,500.'" in lines
    assert not any(line.startswith("weakest claim") for line in lines)
    assert "unsupported: `$1,500`: the source says $1,000" in lines
    # without a proof the weakest claim is named, as before
    plain = explanation_lines({**details, "units": [{**u, "window": None} for u in details["units"]]})
    assert "weakest claim (0.1200): 'Staff have a fortnight to finish the training.'" in plain


def test_a_failed_gate_shows_each_claim_in_one_short_line():
    verdict = ClaimVerdict(
        "The Lindau council approved a new 83 million euro bridge over the river on Tuesday after a long debate "
        "that lasted well into the night.",
        0.0357,
        supported=False,
        proven_wrong=True,
        reasons=("`83 million euro`: the source says 38 million euros",),
    )
    shown = repr([verdict])
    assert shown.startswith("[<proven wrong claim 0.0357: 'The Lindau council approved")
    assert "(`83 million euro`: the source says 38 million euros)>]" in shown
    assert len(shown) < 200  # the claim is clipped, not printed whole with every field


def test_a_score_equal_to_the_threshold_says_it_fails():
    message = Score(0.2, name="groundedness", task="dialogue").failure_message(">", 0.2)
    assert message.splitlines()[0] == (
        "groundedness (dialogue) = 0.2000, expected > 0.2 (a score equal to the threshold fails)"
    )
    assert "equal to the threshold" not in Score(0.1, name="groundedness").failure_message(">", 0.2)


def test_groundedness_lists_the_replys_claims_about_its_fact(evaluator):
    fact = (
        "Cancellation: free of charge up to 48 hours before the pick-up time. The Airport office is open every day "
        "from 06:00 to 23:00."
    )
    wrong, right = evaluator.evaluate(
        [
            "You can cancel for free until 48 hours before pick-up, and the airport office is open from 6 am to 9 pm.",
            "You can cancel for free until 48 hours before pick-up.",
        ],
        "groundedness",
        task="dialogue",
        fact=fact,
        context=["Can I cancel my booking?"],
    )
    assert float(wrong) <= recommended_threshold("groundedness", "dialogue")
    assert [c.proven_wrong for c in wrong.claims] == [False, True]
    assert wrong.proven_wrong_claims[0].reasons == ("`9 pm`: the source says 23:00",)
    assert wrong.claims[0].supported and wrong.claims[0].score > 0.5  # the faithful claim keeps its own reading
    assert [c.supported for c in right.claims] == [True]
    assert not right.proven_wrong_claims
