"""docs/checkers.md ranks the MiniCheck models as the LLM-AggreFact leaderboard does (RoBERTa 73.5, DeBERTa 73.1)
and says how the chunks are split."""

from __future__ import annotations

from pathlib import Path

DOC = (Path(__file__).resolve().parents[2] / "docs" / "checkers.md").read_text(encoding="utf-8")


def table_rows(heading: str) -> list[list[str]]:
    """The rows of the first table after ``heading``, as lists of cells."""
    after = DOC[DOC.index(heading) :]
    lines = after[after.index("\n|") + 1 :].splitlines()
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        if set(cells[0]) <= {"-", ":", " "} or cells[0] == "checker":
            continue
        rows.append(cells)
    return rows


def test_the_published_figures_rank_roberta_above_deberta():
    rows = {r[0]: r[1] for r in table_rows("### Published accuracy")}
    assert rows["MiniCheck-RoBERTa-Large"].startswith("73.5%")
    assert rows["MiniCheck-DeBERTa-v3-Large"].startswith("73.1%")
    order = [r[0] for r in table_rows("### Published accuracy")]
    assert order.index("MiniCheck-RoBERTa-Large") < order.index("MiniCheck-DeBERTa-v3-Large")


def test_the_choice_table_does_not_put_deberta_between_the_others():
    rows = table_rows("## Which checker for which job")
    names = [r[0] for r in rows]
    assert names.index("MiniCheck-RoBERTa-Large") < names.index("MiniCheck-DeBERTa-v3-Large")
    deberta = " ".join(rows[names.index("MiniCheck-DeBERTa-v3-Large")])
    assert "between the other two" not in deberta


def test_the_splitter_and_the_foundation_are_stated():
    assert "NLTK's Punkt" in DOC and '"sentences": "punkt"' in DOC
    assert "HHEMv2Config" in DOC
