"""The HTML report card of an induced metric, alone or as a section of the plugin's report (see
:mod:`pytest_nlgeval.induction.plugin`).

The card shows what the paper calls content, criterion and construct validity: the components with their
PLS weights and coefficients, each component's Kendall tau with the labels, the held-out tau with its
p-value and bootstrap interval, sensitivity and stability, example judgments with the judges' rationales,
and the provenance. Everything comes from the artifact; nothing is recomputed.

Example::

    >>> from pytest_nlgeval.induction.report_card import render_report_card          # doctest: +SKIP
    >>> render_report_card("metrics/helpful.json", "helpful.html")                  # doctest: +SKIP
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["card_context", "card_html", "render_report_card", "stored_card_context"]

_TEMPLATE = "report_card.html.j2"


def _env():
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(Path(__file__).with_name("templates"))),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def card_context(metric) -> dict:
    """The values the template shows, read from an :class:`InducedMetric` (or its artifact dict)."""
    from pytest_nlgeval.induction.artifact import InducedMetric

    if isinstance(metric, dict):
        metric = InducedMetric.from_dict(metric)
    report, prov = metric.report or {}, metric.provenance or {}
    comps = report.get("components") or [
        {
            "name": c.name,
            "kind": c.kind,
            "weight": w,
            "coefficient": b,
            "mean": m,
            "scale": s,
            "tau_train": None,
            "tau_heldout": None,
            "criterion": (c.judge or {}).get("criterion"),
            "signature": c.signature,
        }
        for c, w, b, m, s in zip(metric.components, metric.weights, metric.coefficients, metric.mean, metric.scale)
    ]
    heldout = dict(prov.get("heldout") or {})
    for key in ("tau", "p_value", "ci_low", "ci_high", "n"):
        heldout.setdefault(key, None)
    heldout.setdefault("confidence", 0.95)
    return {
        "name": metric.name,
        "task": metric.task,
        "target": metric.target,
        "label_kind": metric.label_kind,
        "label_range": [f"{v:g}" for v in metric.label_range],
        "mode": prov.get("mode", "unknown"),
        "notes": report.get("notes") or [],
        "heldout": heldout,
        "robustness": prov.get("robustness"),
        "components": comps,
        "max_coef": max([abs(c["coefficient"]) for c in comps] + [1e-12]),
        "intercept": metric.intercept,
        "candidates": report.get("candidates") or [],
        "examples": report.get("examples") or [],
        "dataset": {
            "source": "?",
            "sha256": "",
            "rows": "?",
            "train": "?",
            "heldout": "?",
            **(prov.get("dataset") or {}),
        },
        "seed": prov.get("seed"),
        "llm_usage": prov.get("llm_usage"),
        "lm": metric.lm_identity,
        "packages": prov.get("packages") or {},
        "created": prov.get("created", ""),
    }


def card_html(context: dict, *, standalone: bool) -> str:
    """The card's HTML from its template values: a whole page, or a fragment for the plugin's report."""
    return _env().get_template(_TEMPLATE).render(metric=context, standalone=standalone)


def render_report_card(metric, path: str | Path | None = None) -> str:
    """Render the stand-alone HTML page of ``metric`` (an InducedMetric or an artifact path); write it to
    ``path`` when given. Returns the HTML."""
    from pytest_nlgeval.induction.artifact import InducedMetric

    if isinstance(metric, (str, Path)):
        metric = InducedMetric.load(metric)
    html = card_html(card_context(metric), standalone=True)
    if path is not None:
        Path(path).write_text(html, encoding="utf-8")
    return html


def stored_card_context(card: dict) -> dict:
    """The values the template shows, from the compact card stored with a check (the artifact unreadable)."""
    comps = [
        {
            "name": c["name"],
            "kind": c["kind"],
            "weight": c["weight"],
            "coefficient": c["coefficient"],
            "mean": None,
            "scale": None,
            "tau_train": None,
            "tau_heldout": None,
            "criterion": None,
            "signature": "",
        }
        for c in card.get("components", [])
    ]
    heldout = {
        "tau": None,
        "p_value": None,
        "ci_low": None,
        "ci_high": None,
        "n": None,
        "confidence": 0.95,
        **(card.get("heldout") or {}),
    }
    return {
        "name": card.get("name", "?"),
        "task": card.get("task", ""),
        "target": card.get("target", ""),
        "label_kind": "",
        "label_range": ["?", "?"],
        "mode": card.get("mode") or "unknown",
        "notes": ["artifact file not readable from here; showing the card stored with the checks"],
        "heldout": heldout,
        "robustness": card.get("robustness"),
        "components": comps,
        "max_coef": max([abs(c["coefficient"]) for c in comps] + [1e-12]),
        "intercept": card.get("intercept", 0.0),
        "candidates": [],
        "examples": [],
        "dataset": {
            "source": "?",
            "sha256": "",
            "rows": "?",
            "train": "?",
            "heldout": "?",
            **(card.get("dataset") or {}),
        },
        "seed": None,
        "llm_usage": None,
        "lm": None,
        "packages": {},
        "created": "",
    }
