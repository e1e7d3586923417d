"""Meta-evaluation tables: bootstrap results as a JSON-ready dict, rendered as text, Markdown or JSON.

:func:`ratings_table` lays out a Spearman meta-evaluation (:func:`~.metaeval.bootstrap_spearman`),
:func:`pairwise_table` a pairwise one (:func:`~.pairwise.pairwise_agreement`); each row is a field with
its statistic and percentile interval and, when a ``baseline`` field is given, the paired difference
from it with its interval (computed within the same replicates). :func:`render` prints either.

    >>> import numpy as np
    >>> from pytest_nlgeval.trajectory.metaeval import bootstrap_spearman
    >>> res = bootstrap_spearman({"a": [1, 2, 3, 4.0], "b": [4, 3, 2, 1.0]}, [1, 2, 3, 4.0], [0, 1, 2, 3],
    ...                          n_resamples=50)
    >>> print(render(ratings_table(res, ["a", "b"], info={"rows": 4}), "markdown"))  # doctest: +ELLIPSIS
    | field | group | Spearman | 95% interval |
    ...
    | a | other | +1.000 | [+1.000, +1.000] |
    ...
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

__all__ = ["ratings_table", "pairwise_table", "render", "field_group", "FORMATS"]

FORMATS = ("text", "markdown", "json")

_GROUPS = {
    "reference-based": (
        "diversity_dtw",
        "coherence_dtw",
        "diversity_dtw_paired",
        "coherence_dtw_paired",
        "summary_mean",
        "summary_var",
        "summary_all",
        "likelihood",
        "likelihood_mean",
        "likelihood_var",
    ),
    "refit per replicate": ("summary_mean_refit", "summary_var_refit", "summary_all_refit", "qtext_refit"),
    "fixed baseline": ("qtext", "pca_1", "pca_2"),
    "reference-free": (
        "diversity_end",
        "coherence_end",
        "diversity_mean",
        "coherence_mean",
        "diversity_var",
        "coherence_var",
        "length",
    ),
}


def field_group(name: str) -> str:
    """``reference-based``, ``refit per replicate``, ``fixed baseline``, ``reference-free`` or ``other``."""
    for group, names in _GROUPS.items():
        if name in names:
            return group
    return "other"


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else round(float(x), 4)


def _interval(iv) -> dict[str, Any]:
    return {"value": _num(iv.statistic), "low": _num(iv.low), "high": _num(iv.high), "undefined": iv.n_undefined}


def _difference(result, name: str, baseline: str | None) -> dict[str, Any] | None:
    if baseline is None or name == baseline:
        return None
    d = _interval(result.difference(name, baseline))
    d["resolved"] = d["low"] is not None and (d["low"] > 0 or d["high"] < 0)
    return d


def _check_baseline(result, baseline: str | None) -> None:
    if baseline is not None and baseline not in result.point:
        raise ValueError(
            f"baseline field {baseline!r} is not among the evaluated fields {sorted(result.point)}; "
            "add it to the fields or choose another baseline"
        )


def ratings_table(
    result, fields: Sequence[str], *, baseline: str | None = None, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A Spearman table: one row per field (rho, interval, difference from ``baseline``)."""
    _check_baseline(result, baseline)
    rows = [
        {
            "field": name,
            "group": field_group(name),
            **_interval(result.interval(name)),
            "difference": _difference(result, name, baseline),
        }
        for name in fields
    ]
    return {
        "kind": "ratings",
        "statistic": "spearman",
        "confidence": result.confidence,
        "resamples": result.n_resamples,
        "seed": result.seed,
        "baseline": baseline,
        "info": dict(info or {}),
        "rows": rows,
    }


def pairwise_table(
    result, fields: Sequence[str], *, baseline: str | None = None, info: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A pairwise table: agreement with the majority, on unanimous pairs, score ties, difference from ``baseline``."""
    _check_baseline(result.all, baseline)
    rows = [
        {
            "field": name,
            "group": field_group(name),
            **_interval(result.all.interval(name)),
            "unanimous": _interval(result.unanimous.interval(name)),
            "score_ties": result.score_ties[name],
            "difference": _difference(result.all, name, baseline),
        }
        for name in fields
    ]
    counts = result.counts
    return {
        "kind": "pairwise",
        "statistic": "agreement",
        "confidence": result.all.confidence,
        "resamples": result.all.n_resamples,
        "seed": result.all.seed,
        "baseline": baseline,
        "info": dict(
            info or {},
            pairs=counts.pairs,
            prompts=counts.prompts,
            vote_ties=counts.vote_ties,
            unanimous=counts.unanimous,
        ),
        "rows": rows,
    }


def _f(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.3f}"


def _iv(d: dict[str, Any] | None) -> str:
    if d is None:
        return ""
    return f"[{_f(d['low'])}, {_f(d['high'])}]"


def _columns(table: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    pct = f"{100 * table['confidence']:g}%"
    stat = "Spearman" if table["kind"] == "ratings" else "agreement"
    head = ["field", "group", stat, f"{pct} interval"]
    if table["kind"] == "pairwise":
        head += ["unanimous", f"{pct} interval", "score ties"]
    if table["baseline"]:
        head += [f"minus {table['baseline']}", f"{pct} interval"]
    body = []
    for row in table["rows"]:
        cells = [row["field"], row["group"], _f(row["value"]), _iv(row)]
        if table["kind"] == "pairwise":
            cells += [_f(row["unanimous"]["value"]), _iv(row["unanimous"]), str(row["score_ties"])]
        if table["baseline"]:
            d = row["difference"]
            cells += ["" if d is None else _f(d["value"]) + ("" if d["resolved"] else " (n.s.)"), _iv(d)]
        body.append(cells)
    return head, body


def _caption(table: dict[str, Any]) -> str:
    info = table["info"]
    parts = [f"{k.replace('_', ' ')}: {v}" for k, v in info.items()]
    parts.append(
        f"{table['resamples']} prompt-cluster bootstrap replicates (seed {table['seed']}), "
        f"percentile {100 * table['confidence']:g}% intervals"
    )
    if table["baseline"]:
        parts.append("differences are paired within replicates; (n.s.): the interval contains 0")
    return "; ".join(parts)


def render(table: dict[str, Any], fmt: str = "text") -> str:
    """The table as aligned ``text``, a ``markdown`` table with a caption line, or ``json``."""
    if fmt == "json":
        return json.dumps(table, indent=2, sort_keys=True)
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is not one of {FORMATS}")
    head, body = _columns(table)
    if fmt == "markdown":
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        lines += ["| " + " | ".join(cells) + " |" for cells in body]
        return "\n".join(lines + ["", _caption(table)])
    widths = [max(len(r[i]) for r in [head] + body) for i in range(len(head))]
    fmt_row = lambda cells: "  ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()  # noqa: E731
    return "\n".join(
        [_caption(table), "", fmt_row(head), fmt_row(["-" * w for w in widths])] + [fmt_row(cells) for cells in body]
    )
