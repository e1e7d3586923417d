"""Quality tests of a knowledge-grounded chatbot (UniEval's dialogue dimensions).

The dialogue history is a list of turns (joined and terminated the way the evaluator was trained), the
fact is the knowledge the reply should use. ``@pytest.mark.nlgeval(task="dialogue")`` makes dialogue the
default task of every assertion in the module; ``refused="skip"`` skips a test whose dimension the model
cannot judge (a model folder that refuses it in its ``nlgeval.json``) with the reason and the checkpoint that
can, instead of failing it. The embedded model and ``--nlgeval-model MingZhong/unieval-dialog`` serve them all.
"""

from __future__ import annotations

import pytest

from chatbot import CONVERSATIONS
from pytest_nlgeval import assert_dimension, assert_dimensions

pytestmark = pytest.mark.nlgeval(task="dialogue", refused="skip")


def test_reply_is_grounded_in_the_fact(chatbot, conversation):
    response = chatbot(conversation["history"], conversation["fact"])
    assert assert_dimension(response, "groundedness", fact=conversation["fact"]) > 0.2


def test_reply_follows_the_history(chatbot, conversation):
    response = chatbot(conversation["history"], conversation["fact"])
    assert assert_dimension(response, "coherence", context=conversation["history"]) > 0.35


def test_replies_are_natural_and_understandable(chatbot):
    responses = [chatbot(c["history"], c["fact"]) for c in CONVERSATIONS]
    # word salad of these replies scores below 0.01 on both; the replies themselves above 0.8
    assert assert_dimensions(responses, "naturalness").mean() > 0.45
    assert assert_dimensions(responses, "understandability").min() > 0.45


def test_engagingness_is_a_sum_over_sentences(chatbot):
    conversation = CONVERSATIONS[0]
    response = chatbot(conversation["history"], conversation["fact"])
    score = assert_dimension(response, "engagingness", context=conversation["history"], fact=conversation["fact"])
    # engagingness adds up sentence scores (range [0, inf)): two sentences can exceed 1
    assert score > 0.5


def test_an_off_topic_reply_is_less_grounded(chatbot):
    conversation = CONVERSATIONS[1]
    grounded = assert_dimension(
        chatbot(conversation["history"], conversation["fact"]), "groundedness", fact=conversation["fact"]
    )
    assert (
        assert_dimension(
            "my favourite colour is green and i think trains are loud .", "groundedness", fact=conversation["fact"]
        )
        < grounded
    )


@pytest.mark.xfail(strict=True, reason="demonstration: shows the failure message of an off-topic reply")
def test_demo_failure_message_of_an_ungrounded_reply():
    conversation = CONVERSATIONS[1]
    off_topic = "my favourite colour is green and i think trains are loud ."
    assert assert_dimension(off_topic, "groundedness", fact=conversation["fact"]) >= 0.999
