"""The HTML report's induced-metric section: the report card of every induced metric a session used.

Registered as a pytest plugin (entry point ``pytest11``: ``nlgeval_induction``) so that pytest's
``--nlgeval-report`` and ``nlgeval report`` both collect it through the ``pytest_nlgeval_report_sections``
hook. Module import is stdlib and pytest only: a session without induced metrics pays nothing.
"""

from __future__ import annotations

import pytest

__all__ = ["METRIC_SECTION_ID", "pytest_nlgeval_report_sections"]

METRIC_SECTION_ID = "nlgeval-induced-metrics"
_BUILTIN_METRIC_SECTION = "nlgeval-metrics"  # the report's generic metric section, which this one replaces


@pytest.hookimpl(optionalhook=True)  # the hook exists only while the core plugin is active
def pytest_nlgeval_report_sections(results):
    """Hook implementation: one report section with the card of every induced metric the session used.

    The checks' ``details["artifact"]`` names the artifact; its card is rendered from the file when it is
    readable, otherwise from the compact card stored with the check. The section replaces the report's
    generic rendering of metric checks.
    """
    from markupsafe import Markup

    from pytest_nlgeval.induction.artifact import ArtifactError, InducedMetric
    from pytest_nlgeval.induction.report_card import card_context, card_html, stored_card_context

    seen: dict[str, dict] = {}
    for check in (results or {}).get("checks", []):
        details = check.get("details") or {}
        if check.get("kind") != "metric" or "metric_card" not in details:
            continue
        key = details.get("artifact") or check.get("name")
        seen.setdefault(key, details)
    if not seen:
        return []
    cards = []
    for details in seen.values():
        context = None
        if details.get("artifact"):
            try:
                context = card_context(InducedMetric.load(details["artifact"]))
            except (ArtifactError, OSError):
                context = None
        if context is None:
            context = stored_card_context(details["metric_card"])
        cards.append(card_html(context, standalone=False))
    return [
        {
            "id": METRIC_SECTION_ID,
            "title": "Induced metrics",
            "html": Markup("\n".join(cards)),
            "replaces": _BUILTIN_METRIC_SECTION,
        }
    ]
