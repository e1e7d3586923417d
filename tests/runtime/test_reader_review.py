"""Faithful claims a careful reader passes and wrong ones they catch, across recipes, sport, rooms, parking,
products and transcripts; each was once read wrongly by the explicit checks (no model)."""

from __future__ import annotations

import pytest

from nlgeval_runtime.factcheck import check_claim
from nlgeval_runtime.quantities import quantities

TRANSCRIPT = (
    "Dana Whitfield: Tom, will you need to close the branch?\nTom Bexley: Only the children's section. "
    "I'll post notices two weeks before the work starts.\nDana Whitfield: Good. Marcus drafts the contract by April "
    "16.\nMarcus Oyelaran: Fine by me.\nTom Bexley: Me too."
)
CLINIC = (
    "Doctor: What brings you in today?\nPatient: I've had a cough for about three weeks.\n"
    "Doctor: Any fever? I'd like you to rest for three days and use the inhaler twice a day.\n"
    "Patient: No fever. I will book a follow-up next week."
)


@pytest.mark.parametrize(
    "claim, source",
    [
        ("Take it 0 times weekly.", "Take it 0 times weekly."),  # no division by zero
        ("The club closes at eleven at night.", "The club closes at 11pm on Saturdays."),
        ("The bar closes at midnight.", "The bar closes at twelve at night."),
        (
            "England were 45 for 2 after 10 overs.",
            "Play began at 10:30. After ten overs England were 45 for two, and lunch was taken at 12:40.",
        ),
        ("Add 9 ounces of flour and 100 g of sugar.", "Mix 2 cups of flour (9 ounces) with 100 g of sugar."),
        (
            "Ordering the soup and the burger comes to £17 in total.",
            "Soup costs £5.\nSalad costs £6.\nFish costs £14.\nThe burger costs £12.\nSteak costs £18.",
        ),
        (
            "Economy cars need a €300 deposit and SUVs an €800 deposit.",
            "A deposit of EUR 300 applies to economy cars, and EUR 800 to SUVs.",
        ),
        (
            "The museum will not open on Mondays in winter.",
            "Opening hours. The museum will not\nopen on Mondays in winter, but is open daily in summer.",
        ),
        ("Coach Smith praised the defence after the 3-0 win.", "Coach Sarah Smith praised the defence after the win."),
        ("The Bexley Library will close in June.", "The Bexley Branch Library will close for two weeks in June."),
        ("The Galaxy Ultra has a 6.8-inch screen.", "The Samsung Galaxy S24 Ultra has a 6.8-inch screen."),
        ("Sean O'Brien chaired the meeting on Tuesday.", "The meeting on Tuesday was chaired by Sean O’Brien."),
        ("The Smith-Jones Foundation gave £5,000.", "The Smith–Jones Foundation gave £5,000."),
        (
            "After a question from Whitfield, Bexley said he would post notices two weeks before the work starts.",
            TRANSCRIPT,
        ),
        ("Patient was told to rest for three days and use the inhaler twice a day.", CLINIC),  # a role, no name
    ],
)
def test_a_faithful_claim_fires_no_check(claim, source):
    assert [m.message for m in check_claim(claim, source, source)] == []


def test_a_sum_with_itself_is_no_arithmetic():
    source = "A single room costs £60 and a double room £95."
    found = [m.message for m in check_claim("A single room costs £60 and a double room £120.", source, source)]
    assert found == ["`£120`: the source says £95"]


def test_times_at_night():
    assert [q.value for q in quantities("It closes at eleven at night.")] == [23 * 60]
    assert [q.value for q in quantities("It opens at two at night.")] == [2 * 60]
