"""Rule-made claim pairs: each rule changes what it names and nothing else, and the pairs are balanced."""

from __future__ import annotations

import collections

import pytest

from nlgeval_training.claim_rules import (
    KINDS,
    make_pairs,
    negate,
    restate_negation,
    restate_quantity,
    restate_state,
    swap_figures,
    swap_names,
)


@pytest.mark.parametrize(
    "sentence, swapped",
    [
        ("Maria Lopez paid Tom Reed for the car.", "Tom Reed paid Maria Lopez for the car."),
        ("After the call, Priya thanked Omar for the report.", "After the call, Omar thanked Priya for the report."),
        ("Maria Lopez and Tom Reed signed the lease.", None),  # coordinated: the order carries no role
        ("Maria Lopez met Tom Reed, Ana Diaz and Ben Ode.", "Tom Reed met Maria Lopez, Ana Diaz and Ben Ode."),
        ("It is an American band led by Patty Smyth.", None),  # a name used as a modifier
        ("The team met on Monday.", None),
    ],
)
def test_names_are_swapped_across_a_verb_only(sentence, swapped):
    assert swap_names(sentence) == swapped


def test_figures_are_swapped_unless_they_form_a_range():
    assert swap_figures("A single room costs $120 and a double costs $180.") == (
        "A single room costs $180 and a double costs $120."
    )
    assert swap_figures("Delivery takes 3 to 5 days.") is None
    assert swap_figures("Delivery takes 3 days; returns take 3 days.") is None


def test_negation_is_inserted_or_removed_and_restated_without_changing_its_meaning():
    assert negate("The device must stay plugged in.") == "The device must not stay plugged in."
    assert negate("The refund was not approved.") == "The refund was approved."
    assert restate_negation("The refund was not approved.") == "The refund wasn't approved."
    assert restate_negation("No one was hurt in the fire.") == "Nobody was hurt in the fire."
    assert negate("Refunds take time.") is None


@pytest.mark.parametrize(
    "sentence, right, wrong",
    [
        ("Returns are accepted within 14 days of delivery.", "two weeks", "three weeks"),
        ("Members pay 50 percent of the fee.", "half of the fee", "a third of the fee"),
        ("The clinic has 3 doctors on duty.", "three doctors", "four doctors"),
        ("The warranty lasts 12 months from purchase.", "a year", "two years"),
    ],
)
def test_quantities_are_restated_right_and_wrong(sentence, right, wrong):
    restated = restate_quantity(sentence)
    assert restated is not None
    assert right in restated[0] and wrong in restated[1]


def test_a_state_is_restated_by_its_negated_complement():
    assert restate_state("The side door was open all night.") == (
        "The side door was not closed all night.",
        "The side door was closed all night.",
    )
    assert restate_state("The side door was red.") is None


def _passages():
    people = ["Maria Lopez", "Tom Reed", "Ana Diaz", "Omar Haddad", "Priya Shah", "Ben Ode"]
    out = []
    for k in range(60):
        a, b = people[k % 6], people[(k + 1) % 6]
        out.append(
            f"{a} paid {b} for the {k} chairs. The office was open on the day of the sale. "
            f"Nobody was hurt during the move. Returns are accepted within 14 days of delivery. "
            f"The invoice was not signed by the buyer."
        )
    return out


def test_pairs_of_every_kind_are_balanced_and_unknown_kinds_are_refused():
    pairs = list(make_pairs(_passages(), seed=1, per_kind=20))
    counts = collections.Counter((p["kind"], p["label"]) for p in pairs)
    for kind in KINDS:
        assert counts[(kind, 0)] == counts[(kind, 1)] > 0, kind
        assert counts[(kind, 0)] <= 10
    assert all(p["hypothesis"] != p["premise"] for p in pairs)
    assert pairs == list(make_pairs(_passages(), seed=1, per_kind=20))  # seeded
    with pytest.raises(ValueError, match="unknown kind"):
        list(make_pairs(_passages(), kinds=["reverse"]))
