"""Metric cards: one Markdown document per metric, loaded as data.

The sections follow the metric cards of the AutoMetrics paper (Ryan et al., 2025, Appendix):
"Metric Details" (with range and reference needs), "Intended Use", "Implementation and Cost",
"Known Limitations", "Related Metrics", "Further Reading". Induction retrieves metrics by running
BM25 over the card texts, so a card's words matter as much as its structure.

Example::

    >>> from pytest_nlgeval.metrics import load_card
    >>> card = load_card("rouge2")
    >>> sorted(card.sections)[:2]
    ['Further Reading', 'Implementation and Cost']
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from pytest_nlgeval.errors import NLGEvalError

CARD_DIR = Path(__file__).with_name("cards")

REQUIRED_SECTIONS = (
    "Metric Details",
    "Intended Use",
    "Implementation and Cost",
    "Known Limitations",
    "Related Metrics",
    "Further Reading",
)

_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


class CardError(NLGEvalError, ValueError):
    """A metric card is missing or malformed."""


@dataclass(frozen=True)
class MetricCard:
    """A parsed metric card.

    Attributes:
        name: the metric's registry name (the card's file stem).
        title: the text of the card's ``#`` heading.
        summary: the first paragraph under the title (one line in ``nlgeval metrics list``).
        text: the whole Markdown.
        sections: ``## heading`` -> the text under it (sub-headings included), stripped.
        path: where the card was read from.
    """

    name: str
    title: str
    summary: str
    text: str
    sections: dict[str, str] = field(default_factory=dict)
    path: Path | None = None

    def missing_sections(self) -> list[str]:
        """Required sections that the card lacks or leaves empty."""
        return [s for s in REQUIRED_SECTIONS if not self.sections.get(s, "").strip()]


def parse_card(name: str, text: str, path: Path | None = None) -> MetricCard:
    """Parse card Markdown (``# Title``, a summary paragraph, then ``## Section`` blocks)."""
    title = ""
    summary_lines: list[str] = []
    summary_done = False
    sections: dict[str, list[str]] = {}
    current: str | None = None
    in_fence = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        m = None if in_fence else _HEADING.match(line)
        if m and len(m.group(1)) == 1 and not title:
            title = m.group(2)
            continue
        if m and len(m.group(1)) == 2:
            current = m.group(2)
            sections[current] = []
            continue
        if current is not None:
            sections[current].append(line)
        elif title and not summary_done:
            if line.strip():
                summary_lines.append(line.strip())
            elif summary_lines:
                summary_done = True
    if not title:
        raise CardError(f"metric card {name!r} ({path}): no '# Title' line at the top")
    parsed = {k: "\n".join(v).strip() for k, v in sections.items()}
    return MetricCard(name=name, title=title, summary=" ".join(summary_lines), text=text, sections=parsed, path=path)


def load_card(name: str) -> MetricCard:
    """Load the card of a registered metric from ``pytest_nlgeval/metrics/cards/NAME.md``.

    Raises :class:`CardError` naming the file when it does not exist.
    """
    from pytest_nlgeval.metrics.registry import card_path

    declared = card_path(name)
    path = Path(declared) if declared else CARD_DIR / f"{name}.md"
    if not path.is_file():
        from pytest_nlgeval.metrics.registry import list_metrics

        known = ", ".join(list_metrics())
        raise CardError(f"no metric card for {name!r} (looked for {path}); metrics with cards: {known}")
    return parse_card(name, path.read_text(encoding="utf-8"), path)


def load_cards(names: list[str] | None = None) -> list[MetricCard]:
    """Load the cards of ``names`` (default: every registered metric)."""
    from pytest_nlgeval.metrics.registry import list_metrics

    return [load_card(n) for n in (names if names is not None else list_metrics())]
