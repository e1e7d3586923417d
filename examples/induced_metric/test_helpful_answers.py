"""An induced metric as a regression threshold: answers of a (stand-in) assistant must stay helpful.

pytest examples/induced_metric
"""

import pytest

from pytest_nlgeval import assert_metric

# Stand-in for the application under test: in a real suite this calls your assistant.
ANSWERS = {
    "How do I descale an electric kettle?": (
        "Fill the kettle with equal parts water and white vinegar, boil it and leave it for an hour. "
        "Empty it and boil clean water twice to get rid of the taste."
    ),
    "How long should I boil an egg for a soft yolk?": (
        "Lower the egg into boiling water and cook it for six minutes, then cool it in cold water for a minute."
    ),
}
REFERENCES = {
    "How do I descale an electric kettle?": (
        "Fill the kettle with equal parts water and white vinegar, boil it, and let it sit for an hour. "
        "Empty it and boil clean water twice to remove the taste."
    ),
    "How long should I boil an egg for a soft yolk?": (
        "Lower the egg into boiling water and cook it for six minutes. Then cool it in cold water for a "
        "minute before peeling."
    ),
}


@pytest.mark.parametrize("question", sorted(ANSWERS))
def test_answer_is_helpful(question):
    answer = ANSWERS[question]
    assert assert_metric(answer, "helpful.json", input=question, references=REFERENCES[question]) >= 3.5


def test_a_refusal_is_not_helpful():
    question = "How do I descale an electric kettle?"
    assert (
        assert_metric(
            "Sorry, I can't help with that question.", "helpful.json", input=question, references=REFERENCES[question]
        )
        < 2.5
    )
