"""The offline sentence splitter on cases where naive splitting goes wrong."""

from __future__ import annotations

import pytest

from nlgeval_runtime.sentences import split_sentences


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The cat sat. The dog ran.", ["The cat sat.", "The dog ran."]),
        ("Dr. Smith met Mr. Jones at 5 p.m. on Friday.", ["Dr. Smith met Mr. Jones at 5 p.m. on Friday."]),
        ("Growth was 3.5 percent. It beat forecasts.", ["Growth was 3.5 percent.", "It beat forecasts."]),
        ("The price rose to 3.5. Then it fell.", ["The price rose to 3.5.", "Then it fell."]),
        ("He lives in the U.S. and works in the U.K. now.", ["He lives in the U.S. and works in the U.K. now."]),
        ("J. K. Rowling wrote it. She is British.", ["J. K. Rowling wrote it.", "She is British."]),
        ('He said "Stop." Then he left.', ['He said "Stop."', "Then he left."]),
        ('"Stop!" she shouted. Nobody did.', ['"Stop!" she shouted.', "Nobody did."]),
        ("Really?! Yes. Wow...", ["Really?!", "Yes.", "Wow..."]),
        ("Wait... What happened?", ["Wait...", "What happened?"]),
        ("(It rained.) We stayed in.", ["(It rained.)", "We stayed in."]),
        ("Apples, pears, etc. are sold here.", ["Apples, pears, etc. are sold here."]),
        ("See Fig. 3 and Eq. 2 for details.", ["See Fig. 3 and Eq. 2 for details."]),
        ("Visit example.com/a.html today. It is free.", ["Visit example.com/a.html today.", "It is free."]),
        ("It ended. and then it restarted.", ["It ended. and then it restarted."]),
        ("1. Preheat the oven. 2. Mix the flour.", ["1. Preheat the oven.", "2. Mix the flour."]),
        ("First point\n\nSecond point", ["First point", "Second point"]),
        ("A line\nthat wraps. Next.", ["A line\nthat wraps.", "Next."]),
        ("No final punctuation", ["No final punctuation"]),
        ("", []),
        ("   \n ", []),
        ("The 2020 results. 2021 was better.", ["The 2020 results.", "2021 was better."]),
    ],
)
def test_split(text, expected):
    assert split_sentences(text) == expected


def test_rejects_non_strings():
    with pytest.raises(TypeError, match="expects a str"):
        split_sentences(None)


def test_round_trip_keeps_all_words():
    text = 'Mr. Brown said "Yes." It cost $4.20 in the U.S. on Jan. 3. Then prices rose! Did they? Yes.'
    assert " ".join(split_sentences(text)).split() == text.split()


@pytest.mark.parametrize(
    "text, expected",
    [
        ("The answer was no. We left.", ["The answer was no.", "We left."]),
        ("See No. 5 on the list. It is red.", ["See No. 5 on the list.", "It is red."]),
        ("Smith et al. Found it first.", ["Smith et al. Found it first."]),
        ("They sat. Then they ate.", ["They sat.", "Then they ate."]),
    ],
)
def test_abbreviation_words_that_are_also_words(text, expected):
    assert split_sentences(text) == expected
