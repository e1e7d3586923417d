"""Claims and the explicit fact checks (nlgeval_runtime.claims, nlgeval_runtime.factcheck): no model."""

from __future__ import annotations

import pytest

from nlgeval_runtime.claims import is_contentless, split_claims
from nlgeval_runtime.factcheck import FactChecks, check_claim, lexical_support, names, numbers

ARTICLE = (
    "The city council of Lindau approved a new bridge over the river on Tuesday. The project will cost 38 million "
    "euros and take eleven weeks to plan. Construction starts on 19 May. No one was injured when the old bridge "
    "partly collapsed last year. Mayor Anna Berg said traffic had grown by 31 percent since 2015."
)


def messages(claim: str, evidence: str = ARTICLE) -> list[str]:
    return [m.message for m in check_claim(claim, evidence)]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("It cost $3.5bn.", [(3.5e9, "dollar")]),
        ("It takes eleven weeks.", [(11.0, "week")]),
        ("Traffic grew 31 per cent.", [(31.0, "percent")]),
        ("Traffic grew 31%.", [(31.0, "percent")]),
        ("It opens on May 19.", [(19.0, "may")]),
        ("1,200 new jobs", [(1200.0, "job")]),
        ("a million people", [(1e6, "people")]),
        ("twenty five years", [(25.0, "year")]),
        ("No one was hurt, one of them said.", []),  # "one" counts only before a unit of time
        ("the fourth quarter", [(4.0, "quarter")]),
    ],
)
def test_numbers_read_value_scale_and_unit(text, expected):
    assert [(n.value, n.unit) for n in numbers(text)] == expected


@pytest.mark.parametrize(
    "claim, expected",
    [
        ("The project will cost 83 million euros.", "`83 million euros`: the source says 38 million euros"),
        ("Planning takes eleven months.", "`eleven months`: the source says eleven weeks"),
        ("Construction starts on 19 July.", "`19 July`: the source says 19 May"),
        ("Traffic grew by 13 percent since 2015.", "`13 percent`: the source says 31 percent"),
        ("Mayor John Peters said traffic grew.", "`John Peters`: not in the source"),
        ("The council approved the bridge on Wednesday.", "`Wednesday`: the source says Tuesday"),
        ("Construction starts in July.", "`July`: the source says May"),
        ("Traffic has grown since 2012.", "`2012`: the source says 2015"),
    ],
)
def test_each_wrong_fact_is_named_with_what_the_source_says(claim, expected):
    assert messages(claim) == [expected]


@pytest.mark.parametrize(
    "claim",
    [
        "The project will cost 38 million euros.",
        "The project will cost 38m euros.",  # a scale written short
        "Berg said traffic had grown by 31% since 2015.",
        "Nobody was hurt when the old bridge partly collapsed.",  # paraphrase: the head's job, not a mismatch
        "Planning takes eleven weeks.",
        "Construction begins on May 19th.",
        "Lindau's council approved a bridge.",  # a possessive name
    ],
)
def test_supported_facts_pass_the_checks(claim):
    assert messages(claim) == []


def test_negation_of_the_same_statement_is_caught_and_paraphrase_is_not():
    assert messages("The council did not approve a new bridge over the river.") == [
        "`not approve`: the source asserts it: "
        "'The city council of Lindau approved a new bridge over the river on Tuesday.'"
    ]
    assert messages("Some people were injured when the old bridge partly collapsed.")[0].startswith(
        "`Some people were injured when the old bridge partly collapsed.`: the source negates it"
    )
    policy = "Return shipping is free for members of the Plus programme; other customers pay a flat fee."
    assert messages("Plus members do not pay for return shipping.", policy) == []


def test_names_skip_sentence_openers_titles_and_months():
    assert names("Mayor John Peters met the Red Cross in Paris on Monday. The visit ended in May.") == [
        "John Peters",
        "Red Cross",
        "Paris",
    ]
    assert messages("British officials approved it.", "Officials in Britain approved it.") == []


def test_claims_skip_contentless_units_and_split_joined_statements():
    claims, skipped = split_claims("Yes. The kettle can be returned within 30 days, and the refund takes a week.")
    assert claims == ["The kettle can be returned within 30 days,", "and the refund takes a week."]
    assert skipped == ["Yes."]
    assert split_claims("Sure! Here is the summary:")[0] == []
    assert [is_contentless(u) for u in ["Thanks!", "Hope this helps.", "No one was hurt."]] == [True, True, False]
    # a list of items is one claim, not one per item
    assert split_claims("They visited Paris, Rome, and Berlin in May.")[0] == [
        "They visited Paris, Rome, and Berlin in May."
    ]


@pytest.mark.parametrize(
    "sentence, expected",
    [
        # a hyphenated compound is no verb, and a participle before a noun is the noun's adjective: one claim
        (
            "Kestrel 3.1 mainly adds immutable, time-locked snapshots and scheduled bandwidth limits.",
            ["Kestrel 3.1 mainly adds immutable, time-locked snapshots and scheduled bandwidth limits."],
        ),
        # a clause opening with its participle shares the first clause's subject and auxiliary, never its "not"
        (
            "The contract was signed in May and renewed in June.",
            ["The contract was signed in May", "The contract was renewed in June."],
        ),
        (
            "The contract was not signed in May and renewed in June.",
            ["The contract was not signed in May", "The contract was renewed in June."],
        ),
        (
            "Lena approved the move and scheduled it for April.",
            ["Lena approved the move", "Lena scheduled it for April."],
        ),
        # a relative clause keeps its subject
        (
            "Priya Shah, who accepted the request, will send the contract on Friday.",
            ["Priya Shah accepted the request.", "Priya Shah will send the contract on Friday."],
        ),
    ],
)
def test_each_claim_keeps_its_subject_and_no_claim_is_a_fragment(sentence, expected):
    assert split_claims(sentence)[0] == expected


def test_lexical_support_is_the_share_of_content_words_in_the_source():
    assert lexical_support("The council approved a bridge.", ARTICLE) == 1.0
    assert lexical_support("The council approved a tunnel.", ARTICLE) == pytest.approx(2 / 3)


def test_a_failed_check_caps_the_claim_whatever_the_head_says():
    checks = FactChecks(0.0, (1.0, 1.0), cap=0.2)
    verdict = checks.judge(
        "The project will cost 83 million euros.", head=0.99, form=0.9, evidence=ARTICLE, source=ARTICLE
    )
    assert verdict.score == 0.2 and verdict.head == 0.99
    assert [m.kind for m in verdict.mismatches] == ["number"]
    fine = checks.judge(
        "The project will cost 38 million euros.", head=0.99, form=0.9, evidence=ARTICLE, source=ARTICLE
    )
    assert fine.score > 0.9 and not fine.mismatches


def test_a_malformed_checks_declaration_is_a_named_error():
    from nlgeval_runtime.errors import ModelFormatError

    with pytest.raises(ModelFormatError, match="nlgeval fact-checks"):
        FactChecks.from_spec({"intercept": 0.0, "weights": {"head": 1.0}})


EARNINGS = (
    "Priya Raman (CFO): Gross margin was 38.2%, an improvement of 110 basis points over last year. We are raising our "
    "full-year revenue outlook to a range of $7.2 billion to $7.3 billion, and we now expect adjusted earnings per "
    "share of $5.10 to $5.20. The Vireo controller launch moves from the fourth quarter of 2024 to the second "
    "quarter of 2025. Frozen Meals margin was down 80 basis points. Lab B meets Thursdays, led by teaching "
    "assistant Sofia Reyes; Lab A meets Mondays, led by teaching assistant Jin Park."
)


@pytest.mark.parametrize(
    "claim",
    [
        "The company lifted its full-year revenue outlook to $7.2-7.3 billion.",  # the scale written once
        "It expects adjusted EPS of $5.10 to $5.20.",  # an acronym of lowercase words
        "The launch was pushed from Q4 2024 to Q2 2025.",  # period labels are no names
        "Frozen Meals margin was squeezed by eight-tenths of a percentage point.",  # 80 basis points, not 80%
        "Gross margin improved by 1.1 percentage points.",
        "The Thursday lab (Lab B) is led by TA Sofia Reyes.",  # "Thursdays" in the source; "TA" its acronym
    ],
)
def test_faithful_financial_and_course_claims_pass_the_checks(claim):
    assert messages(claim, EARNINGS) == []


@pytest.mark.parametrize(
    "claim, expected",
    [
        ("The outlook is $7.2-7.3 million.", "`$7.2-7.3 million`: the source says $7.2 billion"),
        ("Frozen Meals margin fell by half a percentage point.", "`50 basis points`: the source says 80 basis points"),
        ("Lab B is led by TA Maria Lopez.", "`TA Maria Lopez`: not in the source"),
    ],
)
def test_the_same_claims_with_a_wrong_fact_are_still_named(claim, expected):
    assert messages(claim, EARNINGS) == [expected]


def test_a_quarter_label_is_read_as_its_quarter():
    source = "The launch moves from the fourth quarter of 2024 to the first quarter of 2025."
    assert messages("The launch moves from Q4 2024 to Q1 2025.", source) == []
    assert messages("The launch moves from Q3 2024 to Q1 2025.", source) == [
        "`third quarter`: the source says fourth quarter"
    ]


SYLLABUS = "The midterm is worth 35% of the grade and the final exam 25%. Homework counts for the rest."


@pytest.mark.parametrize(
    "claim, expected",
    [
        (
            "The midterm is worth 25% and the final 35%.",
            ["`25% ... 35%`: the source says 35% ... 25%, the other way round"],
        ),
        ("The midterm is worth 35% and the final 25%.", []),
        ("The final is worth 25% and the midterm 35%.", []),  # the same facts in another order
        ("25% goes to the final and 35% to the midterm.", []),  # named after their values: left to the head
        ("The final is worth 25%.", []),
    ],
)
def test_two_values_given_the_other_way_round_are_named(claim, expected):
    assert messages(claim, SYLLABUS) == expected


@pytest.mark.parametrize(
    "sentence, claims",
    [
        (  # what follows a colon and opens with a preposition is part of the statement before it
            "The Red Line will be closed over two weekends in June: from 10pm on Friday 13 June until first trains "
            "on Monday 16 June.",
            1,
        ),
        ("The price is £57.60, and that price is locked for 12 months.", 2),  # "that price" is no relative pronoun
        ("Nobody was hurt, two schools will stay shut on Monday and the old bridge is closed.", 3),
    ],
)
def test_a_piece_that_is_no_statement_stays_with_its_sentence(sentence, claims):
    assert len(split_claims(sentence)[0]) == claims, split_claims(sentence)[0]
