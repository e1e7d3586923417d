"""Who said or does what: misattributions in transcripts, and a name altered in one word (no model)."""

from __future__ import annotations

import pytest

from nlgeval_runtime.attribution import misattributions, transcript_turns
from nlgeval_runtime.factcheck import check_claim

# A parent-teacher association meeting: not a domain of the benchmark's transcripts.
PTA = """Greenfield Primary PTA - committee meeting, 3 March
Present: Sarah Okafor (chair), Liam Brandt (treasurer), Mei Tanaka (secretary), Joe Russo (head teacher)

[19:00] Sarah Okafor: Welcome, everyone. First item is the spring fair. Liam, how did the numbers come out?
[19:02] Liam Brandt: The winter raffle raised 1,840 pounds after costs. I propose we spend 600 on library books.
[19:04] Joe Russo: The library shelves are half empty, so I support that. I can order the books via the county.
[19:05] Mei Tanaka: I'd rather we kept some back for the playground mural. The artist quoted 900 pounds.
[19:07] Sarah Okafor: Mei, could you ask the artist whether she would start in May?
[19:08] Mei Tanaka: Yes, I'll email her this week.
[19:10] Liam Brandt: I'm against paying a deposit before we see a sketch.
[19:12] Sarah Okafor: To sum up: Joe orders the library books by the end of March. Mei emails the artist.
[19:13] Sarah Okafor: We vote on the mural in April.
[19:14] Joe Russo: Fine by me.
"""


@pytest.mark.parametrize(
    "claim",
    [
        "Brandt proposed spending 600 pounds of the raffle money on library books.",
        "The treasurer, Liam Brandt, said the winter raffle raised 1,840 pounds after costs.",
        "Russo will order the library books via the county by the end of March.",
        "Joe Russo supported buying books because the library shelves are half empty.",
        "Tanaka wanted to keep some money back for the playground mural.",
        "Okafor asked Tanaka to find out whether the artist could start in May.",  # said to Mei, by Sarah
        "Tanaka will email the mural artist this week.",
        "Brandt opposed paying a deposit before seeing a sketch.",
        "The committee will vote on the mural in April.",  # names no participant: the head's
        "Sarah Okafor chaired the meeting.",  # no sentence holds three of its words
        # the chair relays it: whoever says a sentence is part of it
        "Okafor said Joe would order the library books by the end of March.",
    ],
)
def test_faithful_attributions_fire_nothing(claim):
    assert misattributions(claim, PTA) == []
    assert [m for m in check_claim(claim, PTA, PTA) if m.kind == "attribution"] == []


@pytest.mark.parametrize(
    "claim, owner",
    [
        ("Tanaka proposed spending 600 pounds of the raffle money on library books.", "Liam Brandt"),
        ("Brandt will order the library books via the county.", "Joe Russo"),
        ("Russo wanted to keep some money back for the playground mural.", "Mei Tanaka"),
        ("Tanaka opposed paying a deposit before seeing a sketch.", "Liam Brandt"),
        ("Tanaka will order the library books by the end of March.", "Joe Russo"),  # the chair's summing-up
    ],
)
def test_a_statement_given_to_another_participant_is_named(claim, owner):
    found = [m for m in check_claim(claim, PTA, PTA) if m.kind == "attribution"]
    assert len(found) == 1
    assert f"the source gives this to {owner}:" in found[0].message
    assert found[0].message.startswith("`" + claim.split()[0] + "`")
    assert [span for span, _ in misattributions(claim, PTA)] == [claim.split()[0]]


@pytest.mark.parametrize(
    "source",
    [
        # labelled lines of a manual are no conversation
        "Rear-facing: for children weighing 2.3-18 kg.\nForward-facing: for children weighing 10-25 kg.\n"
        "Warning: never place the seat in front of an active airbag.",
        # a support chat's roles are nobody's name
        "Customer: My router light is amber.\nAgent: Amber means no internet.\nCustomer: It says Brandt on the box.\n"
        "Agent: Brandt is the manufacturer. Please restart it.",
        # two speakers, but one speaks once
        "Ana Silva: The budget is 400.\nBen Cole: Fine.\nAna Silva: We order on Monday.\nAna Silva: Done.",
    ],
)
def test_only_a_transcript_is_read_for_speakers(source):
    assert transcript_turns(source) == ()
    assert misattributions("Cole said the budget is 400 and we order on Monday.", source) == []


def test_speaker_lines_with_times_and_roles_are_turns():
    source = (
        "Maya Goldberg (00:00:41): Thanks for joining.\nPaul Ferreira (00:01:02): The approved figure was 240,000.\n"
        "Maya Goldberg (00:01:31): I'd rather lose the print magazines first.\nPaul Ferreira (00:02:10): Agreed."
    )
    assert [speaker for speaker, _ in transcript_turns(source)] == ["Maya Goldberg", "Paul Ferreira"] * 2
    found = misattributions("Ferreira would rather lose the print magazines first.", source)
    assert [said.split(":")[0] for _, said in found] == ["the source gives this to Maya Goldberg"]


LEASE = (
    "RESIDENTIAL LEASE - 14 Alder Street, Unit 3B. This lease is between Corbin Street Properties LLC (the landlord) "
    "and Naomi Reyes (the tenant). The plan is underwritten by Meridian Mutual Assurance Ltd. Halden Roofing bid "
    "$86,000, Crestline $79,500. Questions go to Dana Whitfield."
)


@pytest.mark.parametrize(
    "claim, rival",
    [
        ("Naomi Reyes rents the unit from Alder Street Properties.", "Corbin Street Properties"),
        ("The plan is underwritten by Waypoint Mutual Assurance.", "Meridian Mutual Assurance"),
        ("Questions go to Dana Whitman.", "Dana Whitfield"),
    ],
)
def test_a_name_altered_in_one_word_is_named_with_the_sources(claim, rival):
    found = [m for m in check_claim(claim, LEASE, LEASE) if m.kind == "name"]
    assert [m.evidence for m in found] == [rival]


@pytest.mark.parametrize(
    "claim",
    [
        "Naomi Reyes rents the unit from Corbin Street Properties.",  # part of the source's longer name
        "The plan is underwritten by Meridian Mutual.",
        "Crestline Roofing bid $79,500.",  # the source writes Crestline alone: the fuller form is no other company
        "Questions go to Whitfield.",
        "The unit is at 14 Alder Street.",
    ],
)
def test_a_name_the_source_holds_or_shortens_is_no_variant(claim):
    assert [m for m in check_claim(claim, LEASE, LEASE) if m.kind == "name"] == []
