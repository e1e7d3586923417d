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
