"""Inputs a careful user or an attacker sends, and what each must get: a score in [0, 1], a bounded cost said
in the details, or a clear error naming the input and the fix."""

from __future__ import annotations

import pytest

from pytest_nlgeval.core.dimensions import InputError


@pytest.fixture(scope="module")
def evaluator():
    from pytest_nlgeval.core.evaluator import Evaluator

    return Evaluator(cache=False)


def test_a_number_with_four_hundred_digits_gives_a_score_in_range(evaluator):
    claim = "The stadium had " + "1" * 400 + " visitors on Saturday."
    score = evaluator.score(claim, "consistency", source="The stadium had 52,000 visitors on Saturday.")
    assert 0.0 <= float(score) <= 1.0


@pytest.mark.parametrize("text", ["\u200b\u200b\u200b", "...!!! ???", "\u200b.\u2060\ufeff", "— • —"])
@pytest.mark.parametrize("dimension", ["consistency", "fluency"])
def test_an_output_with_no_letters_or_digits_is_refused_like_an_empty_one(evaluator, text, dimension):
    with pytest.raises(InputError, match="no letters or digits"):
        evaluator.score(text, dimension, source="The council approved the bridge.")


def test_a_runaway_output_reads_a_bounded_number_of_claims_and_says_so(evaluator):
    from pytest_nlgeval.core.evaluator import MAX_CLAIMS

    source = "The shop sells 12 kinds of tea. It opens at 9am every day except Sunday."
    output = " ".join(f"The shop sells tea number {k} at its counter." for k in range(MAX_CLAIMS + 40))
    score = evaluator.score(output, "consistency", source=source)
    assert len(score.units) == MAX_CLAIMS
    assert score.details["claims_read"].startswith(f"the first {MAX_CLAIMS} of {MAX_CLAIMS + 40} claims")
    assert any(line.startswith("read: the first") for line in score.explanation())


def test_one_shared_list_of_passages_passed_as_contexts_suggests_context(evaluator):
    with pytest.raises(InputError, match=r"pass context=\[\.\.\.\] instead"):
        evaluator.evaluate(
            ["It costs 5 euros.", "It opens at 9am.", "It is closed on Sunday."],
            "faithfulness",
            task="rag",
            contexts=["The ticket costs 5 euros.", "The museum opens at 9am."],
        )


def test_an_evasive_answer_naming_a_brand_is_capped(evaluator):
    answer = "I'm not sure about that. Please contact Aero customer support for warranty information."
    score = evaluator.score(answer, "answer_relevance", task="rag", question="How long is the Aero X2 warranty?")
    assert float(score) <= 0.2  # the evasive cap


def test_the_score_command_lists_the_rag_task(capsys):
    from pytest_nlgeval.cli import main

    with pytest.raises(SystemExit):
        main(["score", "--help"])
    assert "rag" in capsys.readouterr().out


def test_a_threshold_prints_short_in_a_failure_message(evaluator):
    score = evaluator.score("The council approved a new bridge over the river.", "fluency")
    with pytest.raises(AssertionError) as info:
        score < 0.0055536800276724
    assert "expected < 0.0056" in str(info.value)
    assert "0.00555368" not in str(info.value)
