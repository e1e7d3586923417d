"""Quantities read as a reader compares them (nlgeval_runtime.quantities): number words, fractions and
percentages, durations in other units, currencies, ranges, approximate words, derived figures, references."""

from __future__ import annotations

import pytest

from nlgeval_runtime.factcheck import check_claim
from nlgeval_runtime.quantities import quantities

POLICY = (
    "4.2 Deductible. The standard deductible is $1,000. Policyholders with five claim-free years get a 25% "
    "discount on the deductible. 5.3 Claims. Claims are paid within 30 days of approval. Items may be returned "
    "within 14 days of delivery. The cover lasts 12 months. The monthly plan costs $120 a year; the annual plan "
    "costs $100. About 20 percent of claims are settled by phone. 40% of customers renewed in 2025. The parcel "
    "box measures 40 x 30 x 15 cm and weighs 12 kg. Delivery takes 3-5 working days. The meeting starts at 15:00."
)


def fired(claim: str, evidence: str | None = None) -> list[str]:
    """The checks that fail, the evidence being the policy's sentence that shares most words with the claim (as
    the evaluator aligns a claim with its source units) and the source the whole policy."""
    if evidence is None:
        from nlgeval_runtime.claims import content_words
        from nlgeval_runtime.sentences import split_sentences

        mine = set(content_words(claim))
        evidence = max(split_sentences(POLICY), key=lambda s: len(mine & set(content_words(s))))
        return [m.message for m in check_claim(claim, evidence, POLICY)]
    return [m.message for m in check_claim(claim, evidence)]


@pytest.mark.parametrize(
    "claim",
    [
        "You can return it within two weeks.",  # a duration in other units
        "You have a fortnight to return it.",
        "The cover lasts a year.",
        "One fifth of claims are settled by phone.",  # a fraction for a percentage
        "Two in five customers renewed.",
        "With the discount the deductible is $750.",  # a percentage of a stated amount
        "You save $20 with the annual plan.",  # the difference of two stated prices
        "The standard deductible is one thousand dollars.",  # number words
        "Claims are paid within thirty days.",
        "Delivery takes four days.",  # inside a stated range
        "The meeting is at 3pm.",  # a time of day in another notation
        "More than 30 percent of customers renewed.",  # an approximate word
        "See section 5.3 for how claims are paid.",  # a reference, not an amount
        "Roughly a fifth of claims are settled by phone.",
        "The meeting finishes before midnight.",
    ],
)
def test_a_faithful_quantity_is_never_called_wrong(claim):
    assert fired(claim) == []


@pytest.mark.parametrize(
    "claim, expected",
    [
        ("Items may be returned for two months.", "the source says 14 days"),
        ("Three in five customers renewed in 2025.", "the source says 40%"),
        ("The parcel box weighs 30 kg.", "the source says 12 kg"),  # not the 30 of "40 x 30 x 15 cm"
        ("Claims are paid within 45 days.", "the source says 30 days"),
        ("The meeting is at 4pm.", "the source says 15:00"),
        ("The standard deductible is $1,500.", "the source says $1,000"),
        ("The standard deductible is 1,000 euros.", "the source says $1,000"),  # another currency
        ("The cover lasts 12 weeks.", "the source says 12 months"),  # another unit
        ("Delivery takes 15 working days.", "working days"),
    ],
)
def test_a_conflicting_quantity_is_named_with_what_the_source_says(claim, expected):
    messages = fired(claim)
    assert len(messages) == 1 and messages[0].endswith(expected), messages


def test_a_figure_the_source_states_elsewhere_is_not_a_conflict_it_can_prove():
    # "30 days" is the claims deadline, not the return window: a wrong claim, but one the head must judge
    assert fired("Items may be returned within 30 days of delivery.") == []


def test_a_quantity_of_a_kind_the_evidence_does_not_state_is_left_to_the_head():
    # absence is not a conflict: the source states no duration at all
    assert fired("The refund takes three weeks.", "Refunds go to the original card.") == []


def test_a_section_number_is_a_reference_not_evidence():
    kinds = {q.text: q.kind for q in quantities("Under section 5.3 and clause 4, pay 30 dollars.")}
    assert kinds["5.3"] == "reference" and kinds["4"] == "reference" and kinds["30 dollars"] == "money"


def test_a_size_gives_each_side_its_unit():
    sides = [q for q in quantities("It measures 40 x 30 x 15 cm.") if q.kind == "length"]
    assert [round(q.value, 2) for q in sides] == [0.4, 0.3, 0.15]


def test_two_bounds_must_agree_and_a_bound_holds_what_it_bounds():
    assert fired("Infants under five years fly free.", "Infants under two years fly free.")
    assert fired("Infants under two years fly free.", "Infants under two years fly free.") == []
    assert fired("Infants aged one fly free.", "Infants under two years fly free.") == []


def test_a_clock_time_in_words_is_compared_as_a_time():
    assert fired("Check-out is by noon.", "Check-out is until 12:00.") == []
    assert fired("Check-out is at noon.", "Check-out is at 10:00.")


@pytest.mark.parametrize(
    "claim, evidence",
    [
        ("Alarms are now tested every seven days.", "We will test every alarm weekly instead of monthly."),
        (
            "Treatment abroad is insured up to a quarter of a million dollars.",
            "Treatment abroad is covered up to $250,000.",
        ),
        ("You have until one minute to midnight on Wednesday.", "Changes are possible until 11:59pm on Wednesday."),
        ("The phone line is open six days a week.", "Call us Monday to Saturday; a visit follows within five days."),
        (
            "From 1 May 2026, crews skip bins without a sticker.",
            "Bins without a sticker are not emptied after 30 April 2026.",
        ),
        (
            "The draft goes out by the 16th.",
            "Marcus circulates the draft by April 16. Priya replies by Friday the 19th.",
        ),
        ("For Standard the threshold is seven.", "A Standard parcel is late once 7 working days have passed."),
        ("Sixteen portions at £3.60 come to £57.60 a week.", "The Family box costs £3.60 per serving; the Duo £4.25."),
        (
            "The dozen employees on the night shift had left.",
            "The 12 night-shift staff had left. Roughly 40 people work there.",
        ),
        ("It gives 120-volt, 60-hertz AC power.", "AC output: 120 V, 60 Hz. One 12 V DC outlet."),
        (
            "It reaches from about 1,800 to 3,500 square feet.",
            "Coverage: 3,500 sq ft with both units; 1,800 sq ft alone.",
        ),
        ("Headroom was raised by seventy centimetres.", "Clearance is now 4.5 metres, up from 3.8 metres."),
        (
            "The oil has a 100-hour service interval.",
            "Change the oil every 100 hours. Clean the filter every 50 hours.",
        ),
    ],
)
def test_faithful_restatements_of_frequencies_scales_times_bounds_and_ranges_are_not_conflicts(claim, evidence):
    assert [m.message for m in check_claim(claim, evidence)] == []


@pytest.mark.parametrize(
    "claim, evidence, expected",
    [
        ("The unit weighs 27 lb.", "Weight: 27 kg (dry). The tank holds 6.5 litres.", "the source says 27 kg"),
        ("Refunds show up in 2 to 3 working days.", "Card refunds show up in 5-7 working days.", "5-7 working days"),
        ("A dog lighter than 25 lb is allowed.", "One dog under 25 kg is allowed.", "the source says 25 kg"),
        ("The retest is within a month.", "Tests run monthly. A failed test is retried within two weeks.", "two weeks"),
        ("Bins are skipped from 2 May 2026.", "Bins are not emptied after 30 April 2026.", "30 April"),
    ],
)
def test_unit_errors_ranges_comparatives_and_shifted_bounds_are_still_caught(claim, evidence, expected):
    messages = [m.message for m in check_claim(claim, evidence)]
    assert messages and expected in messages[0], messages


def test_a_multiple_is_a_ratio_never_a_count_of_what_the_source_counts():
    source = "Offline downloads now go up to 2 GB, up from 500 MB. You can keep up to 10 regions."
    assert [q.kind for q in quantities("four times the previous limit")] == ["ratio"]
    assert [m.message for m in check_claim("Downloads reach 2 GB, four times the previous 500 MB limit.", source)] == []


def test_a_fraction_ending_its_clause_is_a_share():
    assert [(q.kind, q.value) for q in quantities("Invoices shrink by roughly two fifths.", liberal=False)] == [
        ("percent", 40.0)
    ]
    assert fired("Invoices shrink by two fifths.", "Invoices are about 40% smaller.") == []
    assert fired("Invoices shrink by two thirds.", "Invoices are 40% smaller.")


def test_a_unit_error_names_the_same_number_in_the_other_unit():
    source = "A full charge takes 20 hours. Delivery takes 11 days."
    messages = [m.message for m in check_claim("A full charge takes 20 days.", source)]
    assert messages and "the source says 20 hours" in messages[0], messages


@pytest.mark.parametrize(
    "claim, evidence, expected",
    [
        ("Newcomers get a two-week free trial.", "New users get a 14-day free trial.", "Newcomers get a 14-day"),
        ("Recharging takes four and a half hours.", "A full recharge takes 4.5 hours.", "Recharging takes 4.5 hours."),
        ("The warranty lasts a year.", "The warranty lasts 12 months.", "The warranty lasts 12 months."),
        ("Invoices shrink by roughly two fifths.", "Invoices are about 40% smaller.", "by roughly 40%."),
        # left as written: a quantity the evidence states otherwise, or words it as the claim does
        ("The warranty lasts two years.", "The warranty lasts 12 months.", "The warranty lasts two years."),
        ("A quarter of members voted.", "A quarter of members voted.", "A quarter of members voted."),
        ("Section 5.3 covers claims.", "5.3 Claims. Claims are paid within 30 days.", "Section 5.3 covers claims."),
    ],
)
def test_a_claim_is_read_with_its_quantities_worded_as_its_evidence_words_them(claim, evidence, expected):
    from nlgeval_runtime.quantities import in_evidence_terms

    assert expected in in_evidence_terms(claim, evidence)


def test_the_second_quarter_and_half_are_positions_not_a_unit_of_time_or_a_share():
    from nlgeval_runtime.quantities import quantities

    assert [(q.value, q.kind) for q in quantities("in the second quarter of 2025")] == [
        (2.0, "ordinal:quarter"),
        (2025.0, "year"),
    ]
    assert [(q.value, q.kind) for q in quantities("the second half of the year")] == [(2.0, "ordinal:half")]
    assert [(q.value, q.kind) for q in quantities("Q2 2025", liberal=False)] == [
        (2.0, "ordinal:quarter"),
        (2025.0, "year"),
    ]
