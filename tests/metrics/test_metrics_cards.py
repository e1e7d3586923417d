"""Metric cards: one per metric, every AutoMetrics section present, shown by the CLI."""

from __future__ import annotations

import pytest

from pytest_nlgeval.cli import main
from pytest_nlgeval.metrics import REQUIRED_SECTIONS, CardError, list_metrics, load_card
from pytest_nlgeval.metrics.cards import CARD_DIR, parse_card


@pytest.mark.parametrize("name", list_metrics())
def test_every_metric_has_a_complete_card(name):
    card = load_card(name)
    assert card.name == name and card.title
    assert card.missing_sections() == [], f"{name}: missing {card.missing_sections()}"
    assert 20 < len(card.summary) < 300 and "\n" not in card.summary
    details = card.sections["Metric Details"]
    for field in ("Range:", "Higher is better:", "Reference-based:", "Input required:"):
        assert field in details, f"{name}: Metric Details lacks {field!r}"
    assert f"`{name}`" in card.sections["Implementation and Cost"]


def test_no_card_without_a_metric():
    stems = {p.stem for p in CARD_DIR.glob("*.md")}
    assert stems == set(list_metrics())


def test_cards_describe_reference_needs_consistently():
    from pytest_nlgeval.metrics import get_metric

    for name in ("rouge2", "bleu", "distinct_2", "fkgl", "length", "levenshtein"):
        said = load_card(name).sections["Metric Details"].split("Reference-based:")[1].split("\n")[0].strip()
        assert said.startswith("yes") == get_metric(name).needs_references, name


def test_parse_card_sections_and_summary():
    text = (
        "# My Metric\n\nFirst line\nsecond line.\n\n"
        "## Metric Details\n\nbody\n### Sub\nmore\n\n"
        "## Intended Use\n\nuse\n"
    )
    card = parse_card("my", text)
    assert card.title == "My Metric"
    assert card.summary == "First line second line."
    assert card.sections["Metric Details"] == "body\n### Sub\nmore"
    assert set(card.missing_sections()) == set(REQUIRED_SECTIONS) - {"Metric Details", "Intended Use"}


def test_card_headings_inside_code_fences_are_not_sections():
    card = parse_card("x", "# T\n\ns\n\n## Metric Details\n```\n## not a heading\n```\n")
    assert list(card.sections) == ["Metric Details"]


def test_card_errors():
    with pytest.raises(CardError, match="no '# Title'"):
        parse_card("x", "no title here\n## Metric Details\n")
    with pytest.raises(CardError, match="no metric card for 'nope'"):
        load_card("nope")


def test_cli_metrics_list_shows_every_metric_with_its_summary(capsys):
    assert main(["metrics", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(list_metrics())
    rouge = next(line for line in lines if line.startswith("rouge2 "))
    assert load_card("rouge2").summary in rouge
    assert "(no card)" not in "\n".join(lines)


def test_cli_metrics_show(capsys):
    assert main(["metrics", "show", "fkgl"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Flesch-Kincaid Grade Level") and "## Known Limitations" in out
    assert main(["metrics", "show", "bleu", "--section", "Further Reading"]) == 0
    assert "Papineni" in capsys.readouterr().out


def test_cli_metrics_show_errors(capsys):
    assert main(["metrics", "show", "bleuu"]) == 2
    assert "did you mean bleu" in capsys.readouterr().err
    assert main(["metrics", "show", "bleu", "--section", "Nope"]) == 2
    assert "has no section 'Nope'" in capsys.readouterr().err
