"""Who has a duty or a price, and whether a statement holds at all: a duty given to the other party of a contract,
a figure the source gives another named thing, a negation read through an inflection ("do not use" against "may be
used") or past a modal (no model)."""

from __future__ import annotations

import pytest

from nlgeval_runtime.factcheck import check_claim

EMPLOYMENT = """EMPLOYMENT AGREEMENT - Harwick Logistics Ltd and Sana Idris

1. Probation. The first six months are a probationary period.
2. Notice. During probation, the employee may end this agreement by giving one week's written notice. After
probation, the employer must give the employee four weeks' written notice of dismissal.
3. Equipment. The employer provides safety boots and a high-visibility jacket. The employee must return all
equipment on the last working day.
4. Expenses. Mileage is reimbursed at 45p per mile. Overnight stays are reimbursed up to £90 per night.
5. Data. The employer does not share employee records with recruitment agencies."""

RENTAL = """CAR HIRE TARIFF - Loxley Vehicle Rental

The Compact class costs £38 per day and includes 150 miles a day. The Estate class costs £54 per day and includes
unlimited mileage. Child seats are £7 per rental.

Fuel policy: return the car with a full tank. Do not use the car for towing. Smoking in the vehicle is not
permitted; a £120 cleaning fee applies."""

LEAFLET = """PATIENT LEAFLET - Calprofen 200 mg tablets

Adults: take one or two tablets every six hours with food. Do not take more than six tablets in 24 hours.
Do not give to children under 12. The pharmacist must check your other medicines before supplying more than 32
tablets. Tablets can be taken with milk."""


@pytest.mark.parametrize(
    ("claim", "source", "kind"),
    [
        # a duty or a right given to the other party
        ("The employer must return all equipment on the last working day.", EMPLOYMENT, "party"),
        ("The employee must give the employer four weeks' written notice of dismissal.", EMPLOYMENT, "party"),
        ("During probation the employer may end the agreement with one week's written notice.", EMPLOYMENT, "party"),
        # a figure of the source, given to the other named thing
        ("The Compact class costs £54 per day.", RENTAL, "number"),
        ("The Estate costs £38 a day and has no mileage limit.", RENTAL, "number"),
        # a statement the source negates, through an inflection or past a modal
        ("The employer may share employee records with recruitment agencies.", EMPLOYMENT, "negation"),
        ("The car may be used for towing.", RENTAL, "negation"),
        ("Calprofen may be given to children under 12.", LEAFLET, "negation"),
    ],
)
def test_a_wrong_party_figure_or_polarity_is_named(claim, source, kind):
    found = check_claim(claim, source, source)
    assert [m.kind for m in found] == [kind], found
    assert found[0].message


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("The employee must hand back all equipment on the last working day.", EMPLOYMENT),
        ("The employer must give four weeks' written notice of dismissal after probation.", EMPLOYMENT),
        ("A probationer can resign with a week's written notice.", EMPLOYMENT),
        ("Safety boots and a high-visibility jacket are provided by the employer.", EMPLOYMENT),
        ("Employee records are never passed to recruitment agencies.", EMPLOYMENT),
        ("The Compact class costs £38 a day,", RENTAL),
        ("while the Estate costs £54.", RENTAL),
        ("Compact hire includes 150 miles a day; the Estate has unlimited mileage.", RENTAL),
        ("The Estate costs £16 a day more than the Compact.", RENTAL),
        ("Towing is not allowed.", RENTAL),
        ("Smoking in the car is not allowed and brings a £120 cleaning fee.", RENTAL),
        ("Children under 12 should not be given Calprofen.", LEAFLET),
        ("The tablets may be taken with milk.", LEAFLET),
        ("The pharmacist has to check your other medicines before supplying more than 32 tablets.", LEAFLET),
    ],
)
def test_faithful_statements_about_parties_figures_and_polarity_fire_no_check(claim, source):
    assert check_claim(claim, source, source) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Full members come in between 6 a.m. and 10 p.m. Off-Peak costs £28 a month.",
            ["Full members come in between 6 a.m. and 10 p.m.", "Off-Peak costs £28 a month."],
        ),
        ("Calls are taken from 8 a.m. to 6 p.m. Eastern time on weekdays.", None),
        ("Doors open at 9 a.m. GMT and close at 5 p.m. daily.", None),
    ],
)
def test_a_clock_time_ends_its_sentence_before_a_capitalised_word_other_than_a_day_month_or_zone(text, expected):
    from nlgeval_runtime.sentences import split_sentences

    assert split_sentences(text) == (expected or [text])


CLINIC_NOTES = """Consult 12/03 - Juno, F/N Border Collie, 6y, 19.2 kg. Presented by owner (Mr Okafor).
Hx: lame L fore x 5 days after agility class. Eating OK.
Exam: T 38.6 C. Pain on flexion L carpus. Rads L carpus: no fracture, soft tissue swelling only.
Dx: carpal sprain.
Rx: Metacam 1.5 mg/ml oral susp - 0.4 ml PO SID with food x 10 days. Omeprazole 10 mg - 1 cap PO BID x 10 days,
30 min before food. Diet: Hill's j/d.
Advice: lead walks 2 x 15 min, NO agility or ball throwing x 4 wks. Recheck 26/03 with Dr Adebayo."""

BAGGAGE = """Checked baggage. Light fares include no checked baggage. Business fares include two checked bags of up to
32 kg each. Bags over 32 kg are not accepted as checked baggage and must be sent as cargo."""


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("The X-rays showed no fracture, only some swelling.", CLINIC_NOTES),  # "X-ray" is no name
        ("Feed her the Hill's j/d food.", CLINIC_NOTES),  # a name written with its possessive
        ("Give one omeprazole capsule twice a day for ten days, half an hour before food.", CLINIC_NOTES),  # BID
        ("Keep to two 15-minute lead walks a day and stop ball throwing for four weeks.", CLINIC_NOTES),
        ("Although Light fares include no checked bag, Business fares include two.", BAGGAGE),  # an opener
        ("Anything over 32 kg can't be checked in at all.", BAGGAGE),  # about heavy bags, not Business fares
    ],
)
def test_clipped_notes_and_fare_rules_read_as_a_reader_reads_them(claim, source):
    assert check_claim(claim, source, source) == []


def test_a_long_faithful_instruction_is_no_word_salad_and_its_shuffle_is():
    import random

    from nlgeval_runtime.factcheck import FactChecks

    checks = FactChecks(-2.0, (1.0, 3.0), cap=0.2, form_floor=0.1)
    claim = (
        "Give her 0.4 ml of Metacam by mouth once a day with food for ten days, and one omeprazole capsule twice a "
        "day for ten days, half an hour before food."
    )
    shuffled = claim.split()
    random.Random(0).shuffle(shuffled)
    # the fluency readings measured for a faithful 31-45-word claim and for its shuffle (docs/validity.md)
    assert not checks.judge(claim, head=0.9, form=0.035, evidence=CLINIC_NOTES, source=CLINIC_NOTES).mismatches
    salad = checks.judge(" ".join(shuffled), head=0.9, form=0.001, evidence=CLINIC_NOTES, source=CLINIC_NOTES)
    assert "form" in [m.kind for m in salad.mismatches]
    short = checks.judge("Food with day once give.", head=0.9, form=0.05, evidence=CLINIC_NOTES, source=CLINIC_NOTES)
    assert [m.kind for m in short.mismatches] == ["form"]


@pytest.mark.parametrize(
    ("claim", "source", "expected"),
    [
        (
            "The council of Lindau rejected the new bridge.",
            "The city council of Lindau approved a new bridge.",
            "rejected",
        ),
        (
            "Hearing protection near the press is optional.",
            "Hearing protection near the press is mandatory.",
            "optional",
        ),
        ("Visitors were permitted on the roof.", "Visitors were prohibited on the roof.", "permitted"),
        ("Sales rose in May.", "Sales fell in May after rising in April.", "rose"),
    ],
)
def test_a_statement_made_with_the_opposite_word_is_a_contradiction(claim, source, expected):
    found = check_claim(claim, source, source)
    assert [(m.kind, m.span) for m in found] == [("contradiction", expected)], found


@pytest.mark.parametrize(
    ("claim", "source"),
    [
        ("Sales rose in May.", "Sales rose in May after falling in April."),
        ("The council did not reject the bridge.", "The city council approved a new bridge."),
        (
            "Ear defenders are required near the press; elsewhere they are optional.",
            "Hearing protection is mandatory near the press and optional elsewhere.",
        ),
    ],
)
def test_the_opposite_word_elsewhere_in_the_source_is_no_contradiction(claim, source):
    assert [m for m in check_claim(claim, source, source) if m.kind == "contradiction"] == []


def test_a_figure_stated_in_a_sentence_that_names_nothing_else_still_supports_the_claim():
    from pytest_nlgeval.core.scorers.boolqa import claim_evidence
    from pytest_nlgeval.core.windows import alignment_units

    source = (
        "What to do: stop using the cot now. Do not sell or give away the recalled cots.\n\n"
        "Remedy: Larkspur Toys will provide a free repair kit containing redesigned locking bolts, a hex key and "
        "illustrated instructions, which takes about 15 minutes to fit. Consumers who prefer not to fit the kit can "
        "instead receive a £160 voucher for use at larkspurtoys.com. Repair kits will be posted free of charge "
        "within 10 working days of registration. The remedy is available until 30 June 2025."
    )
    claim = "Larkspur Toys will post a free repair kit with new locking bolts within ten working days of registration,"
    evidence = claim_evidence(alignment_units(claim, source, top=6), source)
    assert check_claim(claim, evidence, source) == []


INSPECTION = """Not inspected: insulation on the boiler pipes that may contain asbestos was noted but not tested; a
laboratory test is recommended. The smoke alarm on the landing failed to sound when tested. Photography for personal
use without flash is permitted in the show home."""


@pytest.mark.parametrize(
    "claim",
    [
        "The pipe insulation that may contain asbestos should be sent for laboratory testing.",  # advice, not a fact
        "The landing smoke alarm did not sound when tested.",  # "failed to sound"
        "You can take non-flash photos for personal use in the show home.",  # "without flash"
    ],
)
def test_a_negation_said_in_other_words_is_no_flip(claim):
    assert check_claim(claim, INSPECTION, INSPECTION) == []


def test_a_clause_that_opens_with_its_verb_takes_the_subject_of_the_clause_before_it():
    from nlgeval_runtime.claims import split_claims

    claims = split_claims(
        "The seller will pay $1,200 toward radon mitigation, but you must arrange the installation and should "
        "retest 30 days later."
    )[0]
    assert claims[-1].startswith("you should retest"), claims


HOURS = """From 1 November to 31 March (winter), the gallery is open Wednesday to Sunday from 10:00 to 16:00 and is
closed on Mondays and Tuesdays. In summer it is open every day. The helpline is staffed on weekdays only."""


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("In winter the gallery is open on Mondays.", [("contradiction", "open on Mondays")]),
        ("In winter the gallery is closed on Mondays and Tuesdays.", []),
        ("The gallery is open on Mondays in summer.", []),  # another season than the closing day's
        ("In winter the gallery is not open on Tuesdays.", []),
    ],
)
def test_a_day_given_the_opposite_state_is_a_contradiction(claim, expected):
    assert [(m.kind, m.span) for m in check_claim(claim, HOURS, HOURS)] == expected
