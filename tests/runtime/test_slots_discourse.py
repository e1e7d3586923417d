"""The meaning-representation reader and the discourse readings of the runtime."""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval_runtime.discourse import kendall_tau_b, read_discourse
from nlgeval_runtime.slots import Slot, conveys, missing_slots, parse_mr


def test_reads_dialogue_acts_brackets_and_json():
    assert parse_mr("inform(name='red door cafe';food=none;address='1608 bush street')") == [
        Slot("name", "red door cafe"),
        Slot("food", "none"),
        Slot("address", "1608 bush street"),
    ]
    assert parse_mr("?request(area)") == [Slot("area", None)]
    assert parse_mr("inform(name='a 16',price_range=moderate)") == [
        Slot("name", "a 16"),
        Slot("price_range", "moderate"),
    ]
    assert parse_mr("name[The Eagle], food[French]") == [Slot("name", "The Eagle"), Slot("food", "French")]
    assert parse_mr('{"name": "Zizzi", "area": "city centre"}') == [Slot("name", "Zizzi"), Slot("area", "city centre")]


@pytest.mark.parametrize("text", ["a restaurant", "name[x] and more", "[1, 2]", "{not json"])
def test_names_the_forms_it_reads_when_it_cannot_read_one(text):
    with pytest.raises(ValueError, match="meaning representation"):
        parse_mr(text)


def test_a_value_is_stated_in_the_utterances_words():
    assert conveys("It is at 925 cortland ave .", Slot("address", "925 cortland avenue"))
    assert conveys("A sea food place.", Slot("food", "seafood"))
    assert conveys("Call 415 555 0188.", Slot("phone", "4155550188"))
    assert conveys("It is moderately priced.", Slot("price_range", "moderate"))
    assert conveys("It is at 14 market street.", Slot("address", "88 king street")) is False
    assert conveys("It is cheap.", Slot("price_range", "expensive")) is False
    # values that are not words of their own are not checked
    assert conveys("No dogs.", Slot("dogs_allowed", "no")) is None
    assert conveys("Any area is fine.", Slot("area", "dont_care")) is None
    assert conveys("What area?", Slot("area", None)) is None
    assert missing_slots("Blue lantern is in mission bay.", "inform(name='blue lantern';phone='4155550188')") == [
        Slot("phone", "4155550188")
    ]


def test_kendall_tau_b():
    assert kendall_tau_b([0, 1, 2]) == 1.0
    assert kendall_tau_b([2, 1, 0]) == -1.0
    assert kendall_tau_b([3, 3]) is None
    assert kendall_tau_b([0, 2, 1]) == pytest.approx(1 / 3)


def _unit(*rows):
    m = np.asarray(rows, dtype=float)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_order_and_repetition_readings():
    document = _unit([1, 0, 0], [0, 1, 0], [0, 0, 1])
    in_order = read_discourse(_unit([1, 0.1, 0], [0, 1, 0.1], [0.1, 0, 1]), document, order_floor=0.5)
    assert in_order.order == 1.0 and in_order.factor == 1.0 and in_order.findings(["a", "b", "c"]) == []
    backwards = read_discourse(_unit([0.1, 0, 1], [0, 1, 0.1], [1, 0.1, 0]), document, order_floor=0.5)
    assert backwards.order == -1.0 and backwards.order_factor == 0.5
    assert backwards.findings(["a", "b", "c"])[0].startswith("order:")
    twice = read_discourse(_unit([1, 0, 0], [0, 1, 0], [1, 0, 0]), document)
    assert twice.repeat[:2] == (0, 2) and twice.repeat_factor == 0.0
    assert "sentence 3 says again what sentence 1 says" in twice.findings(["a", "b", "a"])[-1]
    astray = read_discourse(_unit([1, 0, 0], [0.1, 0.1, -1]), document, topic_from=0.2, topic_to=0.5)
    assert astray.least_related[0] == 1 and astray.topic_factor == 0.0
    assert astray.findings(["a", "b"])[-1].startswith("off the document: sentence 2")
    one = read_discourse(_unit([1, 0, 0]), document)
    assert one.factor == 1.0 and one.order is None
    with pytest.raises(ValueError, match="repeat_from"):
        read_discourse(_unit([1, 0, 0]), document, repeat_from=1.0)


def test_form_names_a_text_that_breaks_off_and_a_doubled_word():
    from nlgeval_runtime.form import read_form

    whole = read_form("The bridge opened. Work starts in May.", ["The bridge opened.", "Work starts in May."])
    assert whole.findings == [] and whole.factor == 1.0
    cut = read_form(
        "The bridge opened. Work starts in May and the", ["The bridge opened.", "Work starts in May and the"]
    )
    assert cut.factor == 0.5 and "breaks off" in cut.findings[0]
    doubled = read_form("The the bridge opened. It cost 38 million euros.", ["The the bridge opened.", "It cost..."])
    assert "'The the'" in doubled.findings[0] and doubled.factor == 0.5
    both = read_form("The the bridge opened. Work starts", ["The the bridge opened.", "Work starts"])
    assert both.factor == 0.25
    # one sentence without a full stop, a list, a heading, and the words English doubles are not signs
    assert read_form("Prices rose sharply", ["Prices rose sharply"]).factor == 1.0
    listed = "Results:\n- revenue up 5%\n- costs down"
    assert read_form(listed, ["Results:", "- revenue up 5%", "- costs down"]).factor == 1.0
    assert read_form("He had had enough. Fine.", ["He had had enough.", "Fine."]).factor == 1.0
