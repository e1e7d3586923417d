"""Readings a person makes without thinking, in discharge notes and rental terms: doses and schedules, pounds of
weight, fluid ounces, currency codes, totals of a daily allowance, opening hours (no model)."""

from __future__ import annotations

import pytest

from nlgeval_runtime.factcheck import check_claim, names
from nlgeval_runtime.quantities import quantities

NOTES = """DISCHARGE NOTES - Westbrook General Hospital
Attending physician: Dr. Lisa Park (Cardiology).

Medication changes:
- Furosemide (water pill): dose INCREASED from 20 mg to 40 mg, taken once daily in the morning.
- Apixaban 5 mg twice daily (morning and evening, about 12 hours apart): NEW. Do not stop without asking.
- Aspirin 81 mg: STOPPED.
- Docusate 100 mg twice daily while taking oxycodone.

Diet and fluids: limit total fluids to 1.5 liters per day. Keep salt (sodium) below 2,000 mg per day.
Activity: do not lift anything heavier than 15 pounds for 4 weeks. Call if your weight goes up by more than 2 pounds
in one day. If you want a second blood-pressure reading, wait at least 3 minutes first.
"""

TERMS = """CityWheels - rental terms.
Fuel: if a car comes back with less fuel, we refuel it at EUR 2.40 per liter plus a refueling service fee of EUR 15.
Mileage: rentals of 1 to 6 days include 300 km per day; every extra kilometer costs EUR 0.25.
Drivers aged 21 to 24 pay a young-driver fee of EUR 12 per day. Deposits are EUR 800 for SUVs.
Offices: the Airport office is open every day from 06:00 to 23:00. The Central Station office is open Saturday
09:00-14:00 and is closed on Sundays.
"""


def failed(claim: str, source: str) -> list[str]:
    return [m.message for m in check_claim(claim, source, source) if m.kind != "form"]


@pytest.mark.parametrize(
    "claim, source",
    [
        ("Take docusate twice a day while you use oxycodone.", NOTES),  # "twice daily" is "twice a day"
        ("Apixaban is taken twice a day, about 12 hours apart.", NOTES),
        ("Keep your drinks to about one and a half liters (roughly 50 ounces) a day.", NOTES),  # fluid ounces
        ("Avoid lifting more than about 7 kilograms for a month.", NOTES),  # 15 lb is 6.8 kg
        ("See Dr. Lisa Park about your heart.", NOTES),  # the title is no part of the name
        ("You must stop aspirin.", NOTES),  # "do not stop" is the line above's, about apixaban
        ("A repeat reading should wait at least three minutes.", NOTES),
        ("For a three-day rental you get 300 km per day, so 900 km in total.", TERMS),  # a total, shown
        ("The young-driver fee is €12 a day.", TERMS),  # EUR 12 is €12
        ("Refuelling costs €2.40 a litre plus a €15 fee.", TERMS),
        ("For the SUV you'll need a credit card for the €800 deposit.", TERMS),  # the SUV of "SUVs"
        ("The airport office is open every day from 6 am to 11 pm.", TERMS),
    ],
)
def test_a_faithful_restatement_fires_no_check(claim, source):
    assert failed(claim, source) == []


@pytest.mark.parametrize(
    "claim, source, span",
    [
        # "below 2,000 mg" states no 60 mg; the 20 mg the claim gets right is not what it names
        ("Your furosemide has gone up from 20 mg to 60 mg.", NOTES, "`60 mg`: the source says 40 mg"),
        ("Don't lift more than 15 kilograms for 4 weeks.", NOTES, "`15 kilograms`: the source says 15 lb"),
        ("Apixaban is now 2.5 mg twice a day.", NOTES, "`2.5 mg`: the source says 5 mg"),
        ("We refill it at €2.40 a litre plus a €50 service charge.", TERMS, "`€50`: the source says €15"),
        ("The airport office is open every day from 6 am to 9 pm.", TERMS, "`9 pm`: the source says 23:00"),
    ],
)
def test_a_wrong_figure_is_still_named(claim, source, span):
    assert any(message.startswith(span) for message in failed(claim, source)), failed(claim, source)


def test_list_items_are_sentences_and_dates_keep_their_month():
    from nlgeval_runtime.sentences import split_sentences

    assert split_sentences("Medication changes:\n- Aspirin 81 mg: STOPPED\n- Apixaban 5 mg: NEW") == [
        "Medication changes:",
        "- Aspirin 81 mg: STOPPED",
        "- Apixaban 5 mg: NEW",
    ]
    assert [q.text for q in quantities("on April 8 and on 22 April")] == ["April 8", "22 April"]


def test_pounds_of_weight_are_a_mass_and_pounds_of_money_a_price():
    assert [(q.kind, round(q.value, 2)) for q in quantities("Do not lift anything heavier than 15 pounds.")] == [
        ("mass", 6.8)
    ]
    assert [q.kind for q in quantities("The ticket costs 15 pounds.")] == ["money"]
    assert [q.kind for q in quantities("Drink 64 fl oz of water a day.")] == ["volume"]
    assert [q.kind for q in quantities("Add 8 ounces of cheese.")] == ["mass"]


def test_a_count_that_is_part_of_a_name_is_no_multiplier():
    source = "Aeris X2 headphones have a 2-year warranty. Battery wear is covered only during the first 12 months."
    known = source + "\nMy Aeris X2 headphones are 18 months old."
    # 3 years is 2 x 18 months, but "X2" counts nothing: the wrong warranty is still named
    assert failed("The X2 comes with a three-year warranty.", known)


def test_a_title_inside_a_capitalised_run_starts_the_name():
    assert names("See Dr. Lisa Park on April 8 and Dr. McAllister in Building C.") == [
        "Lisa Park",
        "McAllister",
        "Building C",
    ]


DEPOSITS = "Security deposit: EUR 300 for economy and compact cars and EUR 800 for SUVs and premium cars."


@pytest.mark.parametrize(
    "claim, swapped",
    [
        # written value-first like the source: each value's thing follows it
        ("The deposit is €800 for economy and compact cars and €300 for SUVs and premium cars.", True),
        ("The deposit is €300 for economy and compact cars and €800 for SUVs and premium cars.", False),
        # written thing-first against a value-first source: left to the head, never read backwards
        ("Economy cars need a €300 deposit and SUVs €800.", False),
        ("SUVs need €800 and economy cars €300.", False),
    ],
)
def test_values_given_the_other_way_round_read_in_the_order_they_are_written(claim, swapped):
    kinds = [m.kind for m in check_claim(claim, DEPOSITS, DEPOSITS)]
    assert ("swap" in kinds) is swapped, kinds


def test_a_figure_of_another_fee_does_not_excuse_a_wrong_one():
    # EUR 15 is the refuelling fee; the young-driver fee the claim is about is EUR 12
    claim = "There's a young-driver fee of €15 a day for drivers aged 21 to 24."
    evidence = "Drivers aged 21 to 24 pay a young-driver fee of EUR 12 per day."  # where the claim aligns
    found = [m.message for m in check_claim(claim, evidence, TERMS)]
    assert any(message.startswith("`€15`: the source says €12") for message in found), found


def test_a_figure_of_the_sentence_before_is_what_the_claim_restates():
    evidence = "If uptime in a month falls below that level, the customer may request a credit of 10% of the fee."
    source = "Brightdesk targets 99.9% monthly uptime. " + evidence  # the claim aligns with the second sentence
    claim = "If uptime in a month falls short of 99.9%, the customer can ask for a credit of 10% of the fee."
    assert [m.message for m in check_claim(claim, evidence, source)] == []


@pytest.mark.parametrize(
    "text, minutes",
    [("twenty past three", 200), ("half past nine", 570), ("a quarter to five", 285), ("ten past 6", 370)],
)
def test_a_time_told_by_the_clock_face_is_a_time(text, minutes):
    assert [(q.kind, q.value) for q in quantities(f"Order at {text}.")] == [("time", minutes)]


def test_two_to_three_days_is_no_clock():
    assert [q.kind for q in quantities("Delivery takes two to three days.")] == ["duration", "duration"]


ACCOUNT = (
    "The Everyday Plus Current Account has a monthly account fee of £4. The fee is waived in any month in which you "
    "pay in at least £1,500. You must be resident in the UK. An arranged overdraft of up to £2,500 is available. "
    "The first £100 of your arranged overdraft is interest-free.\n\nBalances up to £5,000 earn 2.5% AER; no "
    "interest is paid on the part of a balance above £5,000. If you switch and set up two Direct Debits within 60 "
    "days, we will pay you £175."
)


def test_a_figure_worked_out_from_the_question_is_shown_arithmetic():
    claim = "You'd earn 2.5% on the first £5,000 only; the remaining £3,000 would earn nothing."
    question = "How much interest will I earn on £8,000 in the Everyday Plus account?"
    assert [m.message for m in check_claim(claim, ACCOUNT, ACCOUNT, given=question)] == []
    # without the question, £3,000 is a figure of nothing the source states
    assert any(m.message.startswith("`£3,000`") for m in check_claim(claim, ACCOUNT, ACCOUNT))


def test_in_a_text_full_of_sums_a_difference_of_two_is_a_coincidence():
    # £1,000 is £5,000 - £4,000 or £1,100 - £100, but the source is full of sums: the wrong threshold is named
    source = ACCOUNT + " Savers can hold up to £4,000 in the linked pot. Cash withdrawals are limited to £1,100 a day."
    claim = "The £4 monthly fee is waived for any month in which you pay in £1,000 or more."
    evidence = ACCOUNT.split(" You must")[0]  # where the claim aligns: the fee and its waiver
    found = [m.message for m in check_claim(claim, evidence, source)]
    assert found == ["`£1,000`: the source says £1,500"], found


@pytest.mark.parametrize(
    "claim, source",
    [
        ("Signing up by 28 February takes £5 off the first bin, so it costs £47.", "A garden bin costs £52 a year."),
        ("Standard is free on orders over £40, so your £27.51 basket was £12.49 short.", "Standard is free over £40."),
    ],
)
def test_a_sum_the_claim_works_out_from_its_own_figures_is_shown_arithmetic(claim, source):
    assert failed(claim, source) == []


def test_a_time_of_day_in_words():
    assert [(q.kind, q.value) for q in quantities("No trains after seven in the evening.")] == [("time", 1140)]
    assert [(q.kind, q.value) for q in quantities("It opens at six in the morning.")] == [("time", 360)]


def test_a_route_number_and_the_two_are_no_amounts():
    source = "Bus route 47 links Castle Halt with Orchard Road station every 15 minutes."
    assert failed("Bus 47 connects the two every quarter of an hour.", source) == []
    assert [q.kind for q in quantities("the two schools will close")] == ["count:school"]


POSTMORTEM = """Incident Postmortem: INC-2291 - Checkout failures after payments-gateway 4.12.0 deploy
Timeline (UTC):
- 14:02 - payments-gateway 4.12.0 is deployed to all regions.
- 14:31 - Tomasz identifies that 4.12.0 opens a new database connection per request, exhausting the pool.
- 14:44 - Tomasz begins rolling back payments-gateway to 4.11.3.
- 15:02 - Rollback completes in all three regions. No orders or payments were affected.
- 15:10 - The lag alert pages on-call once lag reaches 100,000 messages.
"""


@pytest.mark.parametrize(
    "claim",
    [
        "Incident INC-2291 was a checkout outage.",  # an identifier, not another incident's name
        "Tomasz found the root cause at 14:31 and rolled back to 4.11.3.",  # a timeline's time, one shared name
        "Orders and payments were not affected.",  # "No orders or payments were affected" asserts nothing
        "The rollback completed in all three regions at 15:02.",
    ],
)
def test_a_postmortem_restated_fires_no_check(claim):
    evidence = "\n".join(line for line in POSTMORTEM.splitlines() if "14:44" in line or "15:02" in line)
    assert [m.message for m in check_claim(claim, evidence, POSTMORTEM)] == []


def test_once_as_a_conjunction_is_no_count():
    source = "- 22:48 - The lag alert fires at 100,000 messages and pages Kenji Watanabe, the on-call engineer."
    claim = "The lag alert paged on-call Kenji Watanabe at 22:48 once lag reached 100,000 messages."
    assert failed(claim, source) == []
    assert [q.text for q in quantities(claim, liberal=False)] == ["22:48", "100,000"]


def test_a_span_of_hours_is_the_same_whichever_period_the_sentence_gives_it():
    source = (
        "You can use flat rates: £10 a month for 25 to 50 hours of work at home, £18 a month for 51 to 100 hours. "
        "You cannot claim the flat rate if you work fewer than 25 hours a month at home."
    )
    claim = "Use the flat rate, which for 51 to 100 hours a month is £18 per month."
    assert failed(claim, source) == []


RECALL = """Little Fern Baby Products Ltd recalls about 18,400 Little Fern 'Sprout' convertible wooden high chairs,
model numbers LF-HC100 and LF-HC120, with production dates from 01/2022 to 06/2023. Chairs produced from July 2023
onwards are not affected. Other Northcove products, including the hot smoked salmon flakes, are not recalled."""

TARIFF = """EV Night charges 8.50p per kWh between 00:30 and 05:30 every night, including weekends. Customers who are
leaving Fixed Saver 24 early pay an exit fee of 75 pounds per fuel. Let Brightwater know 48 hours before you move.
Brightwater Fixed Saver 24 fixes the price for two years."""


@pytest.mark.parametrize(
    "claim, source",
    [
        # a time inside a span of the day the source gives ("between 00:30 and 05:30") is no conflict
        ("At 2am you would pay 8.5p per kWh on EV Night.", TARIFF),
        ("Off-peak on EV Night runs from half past midnight to half past five.", TARIFF),
        ("At 10:00 the Airport office is open.", TERMS),
        # months written as numbers of a year ("01/2022") are those months
        ("The recall covers model numbers LF-HC100 and LF-HC120 made between January 2022 and June 2023.", RECALL),
        # a quoted word inside a name is part of the name; a sentence's opening verb is no part of one
        ("About 18,400 Little Fern Sprout high chairs are recalled.", RECALL),
        ("Leaving Fixed Saver 24 early costs 75 pounds per fuel.", TARIFF),
        ("Let Brightwater know 48 hours before you move.", TARIFF),
    ],
)
def test_recall_and_tariff_readings_fire_no_check(claim, source):
    assert failed(claim, source) == []


@pytest.mark.parametrize(
    "claim, source, span",
    [
        ("The recall covers chairs produced between March 2022 and June 2023.", RECALL, "March"),
        ("Off-peak on EV Night runs from 01:30 to 05:30.", TARIFF, "01:30"),
        ("The Airport office is open from 07:00 to 23:00.", TERMS, "07:00"),
        ("About 18,400 Little Fern Sapling high chairs are recalled.", RECALL, "Little Fern Sapling"),
    ],
)
def test_a_wrong_month_time_or_name_is_still_named(claim, source, span):
    assert any(span in message for message in failed(claim, source))


def test_a_listed_inclusion_between_commas_keeps_its_sentence_whole():
    from nlgeval_runtime.claims import split_claims

    text = "Other Northcove products, including the hot smoked salmon flakes and smoked trout, are not affected."
    assert split_claims(text)[0] == [text]
    assert failed(text.replace("and smoked trout, ", ""), RECALL) == []
