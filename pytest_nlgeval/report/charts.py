"""Inline SVG charts for the HTML report: no script, no font or stylesheet fetched, so they render from file://.

Every function returns :class:`markupsafe.Markup`; every piece of text that came from a test (labels, ids) is
escaped here, because the Jinja template inserts the Markup as it is.
"""

from __future__ import annotations

import math
import re
from typing import Mapping, Sequence

from markupsafe import Markup, escape

__all__ = ["distribution_chart", "delta_chart", "line_chart", "nice_ticks", "scale_chart"]

PASS_COLOUR = "#2e7d32"
FAIL_COLOUR = "#c62828"
NEUTRAL_COLOUR = "#546e7a"
SERIES_COLOURS = ("#1565c0", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#558b2f")


def _css(text: str) -> str:
    """A class-name-safe form of a status such as ``too few cases``."""
    return re.sub(r"[^a-z0-9-]+", "-", str(text).lower()).strip("-") or "none"


def _fmt(value: float) -> str:
    # two decimals at most: a tick at 1.25 (steps of 2.5 times a power of ten) must not read "1.2"
    return f"{value:.2f}".rstrip("0").rstrip(".") if abs(value) >= 1 else f"{value:.2f}"


_CHAR_PX = 6.5  # about the width of a character of the charts' 11 px labels
_LABEL_ROW_PX = 13  # the height of a row of threshold labels above the plot


def _text_width(text: str) -> float:
    return _CHAR_PX * len(text)


def _place_labels(anchors: Sequence[float], labels: Sequence[str], width: float) -> list[tuple[str, int]]:
    """Where the label of each vertical line at ``anchors[i]`` goes: its SVG position attributes and its row.

    A label sits right of its line, or left of it when it would run past the right edge (and right again
    when left would run past the left edge). Labels that would overlap go to the next row, so none covers
    another however many lines stand near one edge. Labels right of their lines are placed from left to
    right and those left of them from right to left, so that a line rising to its label in an upper row
    does not cross the labels below it.
    """
    spans: list[tuple[float, float, bool]] = []
    for anchor, label in zip(anchors, labels):
        w = _text_width(label)
        if anchor + 3 + w <= width - 2:  # right of the line
            spans.append((anchor + 3, anchor + 3 + w, False))
        elif anchor - 3 - w >= 2:  # left of it, near the right edge
            spans.append((anchor - 3 - w, anchor - 3, True))
        else:  # too wide for either side: as far right as it fits
            start = max(2.0, width - 2 - w)
            spans.append((start, start + w, False))
    order = sorted(range(len(anchors)), key=lambda i: (spans[i][2], anchors[i] if not spans[i][2] else -anchors[i]))
    taken: list[list[tuple[float, float]]] = []
    rows = [0] * len(anchors)
    for i in order:
        start, end, _ = spans[i]
        row = next(
            (r for r, used in enumerate(taken) if all(end + 4 <= a or start >= b + 4 for a, b in used)), len(taken)
        )
        if row == len(taken):
            taken.append([])
        taken[row].append((start, end))
        rows[i] = row
    placed = []
    for i, (start, end, flipped) in enumerate(spans):
        attrs = f'x="{end:.1f}" text-anchor="end"' if flipped else f'x="{start:.1f}"'
        placed.append((attrs, rows[i]))
    return placed


def _tick_anchor(x: float, text: str, left: float, right: float) -> tuple[float, str]:
    """Where a tick label goes: centred on its tick unless that would cut it at an edge of the drawing."""
    half = _text_width(text) / 2
    if x + half > right:
        return right, "end"
    if x - half < left:
        return left, "start"
    return x, "middle"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick positions covering [low, high] (steps of 1, 2 or 5 times a power of ten)."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    return ticks


def _domain(values: Sequence[float], *, default: tuple[float, float]) -> tuple[float, float]:
    """The default [0, 1] score range, widened to include everything drawn (sums such as engagingness)."""
    low, high = default
    finite = [v for v in values if math.isfinite(v)]
    if finite:
        low, high = min(low, min(finite)), max(high, max(finite))
    if high - low < 1e-12:
        low, high = low - 0.5, high + 0.5
    return low, high


def distribution_chart(
    scores: Sequence[float],
    passed: Sequence[bool],
    thresholds: Sequence[tuple[str, float]],
    *,
    title: str = "",
    width: int = 520,
    height: int = 150,
    bins: int = 20,
    domain: tuple[float, float] = (0.0, 1.0),
    expected: Sequence[bool] | None = None,
) -> Markup:
    """A histogram of scores, stacked passed/failed, with a dashed line per distinct threshold.

    ``domain`` is the range the axis spans at least (a judge's scale, e.g. ``(1, 5)``); it widens to
    include every score and threshold. ``expected`` marks the scores of checks that failed inside an xfail
    test: they are stacked apart in a neutral colour, not as failures. Threshold labels sit above the bars,
    right of their line or left of it near the right edge, in as many rows as it takes for none to cover
    another; they print at most four decimals.

    >>> svg = distribution_chart([0.2, 0.8, 0.9], [False, True, True], [(">", 0.5)], title="fluency")
    >>> svg.startswith("<svg")
    True
    """
    from pytest_nlgeval.util.numbers import format_threshold

    left, right, bottom = 36, 12, 26
    plot_w = width - left - right
    low, high = _domain(list(scores) + [t for _, t in thresholds], default=domain)

    def x(value: float) -> float:
        return left + (value - low) / (high - low) * plot_w

    labels = [f"{op} {format_threshold(threshold)}" for op, threshold in thresholds]
    placed = _place_labels([x(t) for _, t in thresholds], labels, width)
    rows = max((row for _, row in placed), default=-1) + 1
    # the labels' rows above the plot, then the plot at the height it has with one row
    top = 8 + _LABEL_ROW_PX * max(rows, 1) + 2
    height += _LABEL_ROW_PX * max(rows - 1, 0)
    plot_h = height - top - bottom

    bin_w = (high - low) / bins
    counts = [[0, 0, 0] for _ in range(bins)]  # [passed, failed, failed as expected (xfail)]
    marks = list(expected) if expected is not None else []
    for i, (score, ok) in enumerate(zip(scores, passed)):
        index = min(int((score - low) / bin_w), bins - 1)
        counts[index][0 if ok else 2 if i < len(marks) and marks[i] else 1] += 1
    peak = max((sum(c) for c in counts), default=0) or 1

    def y(count: float) -> float:
        return top + plot_h - count / peak * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)} score distribution">',
        f"<title>{escape(title)}: {len(scores)} scores</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" class="axis"/>',
    ]
    for tick in nice_ticks(low, high):
        text = _fmt(tick)
        tx, anchor = _tick_anchor(x(tick), text, 1, width - 1)
        parts.append(
            f'<line x1="{x(tick):.1f}" y1="{top + plot_h}" x2="{x(tick):.1f}" y2="{top + plot_h + 4}" '
            f'class="axis"/><text x="{tx:.1f}" y="{height - 8}" class="tick" text-anchor="{anchor}">{text}</text>'
        )
    for count in sorted({0, peak}):
        parts.append(f'<text x="{left - 6}" y="{y(count) + 4:.1f}" class="tick" text-anchor="end">{count}</text>')
    stack = (
        (PASS_COLOUR, "bar-pass", "passed"),
        (FAIL_COLOUR, "bar-fail", "failed"),
        (NEUTRAL_COLOUR, "bar-xfail", "expected to fail (xfail)"),
    )
    for index, bin_counts in enumerate(counts):
        if not any(bin_counts):
            continue
        x0 = x(low + index * bin_w) + 1
        bar_w = max(plot_w / bins - 2, 1)
        bin_text = f"{_fmt(low + index * bin_w)} to {_fmt(low + (index + 1) * bin_w)}"
        below = 0
        for n, (colour, css, what) in zip(bin_counts, stack):
            if n:
                parts.append(
                    f'<rect x="{x0:.1f}" y="{y(below + n):.1f}" width="{bar_w:.1f}" '
                    f'height="{y(below) - y(below + n):.1f}" fill="{colour}" class="{css}">'
                    f"<title>{bin_text}: {n} {what}</title></rect>"
                )
            below += n
    for (op, threshold), label, (position, row) in zip(thresholds, labels, placed):
        tx = x(threshold)
        ly = 8 + _LABEL_ROW_PX * (row + 1) - 3  # the baseline of the label's row
        parts.append(
            f'<line x1="{tx:.1f}" y1="{ly - 9}" x2="{tx:.1f}" y2="{top + plot_h}" class="threshold"/>'
            f'<text {position} y="{ly}" class="threshold-label">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def scale_chart(
    distribution: Mapping[str, float],
    scale: tuple[int, int],
    *,
    score: float | None = None,
    title: str = "",
    width: int = 300,
    height: int = 120,
) -> Markup:
    """A judge's probability over the points of its scale, one bar per point (a point the judge gave no
    probability has none), with the weighted score marked.

    >>> "<rect" in scale_chart({"4": 0.7, "5": 0.3}, (1, 5), score=4.3)
    True
    """
    left, right, top, bottom = 36, 12, 14, 26
    plot_w, plot_h = width - left - right, height - top - bottom
    lo, hi = int(scale[0]), int(scale[1])
    points = list(range(lo, hi + 1))
    slot = plot_w / len(points)

    def x(point: float) -> float:  # the centre of a point's slot
        return left + (point - lo + 0.5) * slot

    def y(p: float) -> float:
        return top + plot_h - p * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" class="axis"/>',
    ]
    for p in (0.0, 0.5, 1.0):
        parts.append(f'<text x="{left - 6}" y="{y(p) + 4:.1f}" class="tick" text-anchor="end">{_fmt(p)}</text>')
    for point in points:
        given = distribution.get(str(point))
        p = float(given) if isinstance(given, (int, float)) and math.isfinite(given) else 0.0
        parts.append(f'<text x="{x(point):.1f}" y="{height - 8}" class="tick" text-anchor="middle">{point}</text>')
        if p > 0:
            parts.append(
                f'<rect x="{x(point) - slot * 0.35:.1f}" y="{y(p):.1f}" width="{slot * 0.7:.1f}" '
                f'height="{y(0) - y(p):.1f}" fill="{PASS_COLOUR}" class="bar-scale">'
                f"<title>{point}: {p:.3f}</title></rect>"
            )
    if score is not None and math.isfinite(score) and lo <= score <= hi:
        sx = x(score)
        label = f"score {score:.2f}"
        fits = sx + 3 + 6.5 * len(label) <= width - 2
        anchor = f'x="{sx + 3:.1f}"' if fits else f'x="{sx - 3:.1f}" text-anchor="end"'
        parts.append(
            f'<line x1="{sx:.1f}" y1="{top - 4}" x2="{sx:.1f}" y2="{top + plot_h}" class="threshold"/>'
            f'<text {anchor} y="{top + 6}" class="threshold-label">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))


def delta_chart(
    rows: Sequence[tuple[str, float | None, float | None, float | None, float | None, str]],
    *,
    width: int = 760,
    row_height: int = 26,
) -> Markup:
    """A forest plot of per-dimension mean changes with their bootstrap intervals.

    ``rows`` holds ``(label, delta, ci_low, ci_high, tolerance, status)``; a regression is drawn red, an
    improvement green, and the tolerance as a dashed line on the side where the score gets worse (a negative
    ``tolerance`` marks a dimension where lower scores are better).

    >>> str(delta_chart([("summarization/fluency", -0.1, -0.15, -0.05, 0.02, "regression")])).count("<circle")
    1
    """
    label_w, right, top = 190, 16, 20
    height = top + row_height * max(len(rows), 1) + 28
    plot_w = width - label_w - right
    extent = 0.0
    for _, delta, low, high, tol, _ in rows:
        extent = max([extent] + [abs(v) for v in (delta, low, high, tol) if v is not None])
    extent = (extent or 0.05) * 1.15

    def x(value: float) -> float:
        return label_w + (value + extent) / (2 * extent) * plot_w

    bottom = top + row_height * max(len(rows), 1)
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="score change against the baseline">',
        "<title>mean score change against the baseline, with 95% bootstrap intervals</title>",
        f'<line x1="{x(0):.1f}" y1="{top - 8}" x2="{x(0):.1f}" y2="{bottom}" class="axis"/>',
    ]
    for tick in nice_ticks(-extent, extent):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{bottom + 16}" class="tick" text-anchor="middle">'
            f"{'0' if abs(tick) < 1e-12 else f'{tick:+g}'}</text>"
        )
    for index, (label, delta, low, high, tol, status) in enumerate(rows):
        cy = top + row_height * index + row_height / 2
        colour = {"regression": FAIL_COLOUR, "improvement": PASS_COLOUR}.get(status, NEUTRAL_COLOUR)
        parts.append(f'<text x="{label_w - 8}" y="{cy + 4:.1f}" class="label" text-anchor="end">{escape(label)}</text>')
        if tol is not None:
            parts.append(
                f'<line x1="{x(-tol):.1f}" y1="{cy - 9:.1f}" x2="{x(-tol):.1f}" y2="{cy + 9:.1f}" '
                f'class="tolerance"><title>tolerance {-tol:+g}</title></line>'
            )
        if low is not None and high is not None:
            parts.append(
                f'<line x1="{x(low):.1f}" y1="{cy:.1f}" x2="{x(high):.1f}" y2="{cy:.1f}" '
                f'stroke="{colour}" stroke-width="2"/>'
            )
            for end in (low, high):
                parts.append(
                    f'<line x1="{x(end):.1f}" y1="{cy - 5:.1f}" x2="{x(end):.1f}" y2="{cy + 5:.1f}" '
                    f'stroke="{colour}" stroke-width="2"/>'
                )
        if delta is not None:
            interval = f" [{low:+.3f}, {high:+.3f}]" if low is not None and high is not None else ""
            parts.append(
                f'<circle cx="{x(delta):.1f}" cy="{cy:.1f}" r="4.5" fill="{colour}" class="delta-{_css(status)}">'
                f"<title>{escape(label)}: {delta:+.4f}{interval} ({escape(status)})</title></circle>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))


def line_chart(
    series: Sequence[tuple[str, Sequence[float]]],
    *,
    band: tuple[Sequence[float], Sequence[float]] | None = None,
    band_label: str = "reference band",
    title: str = "",
    x_label: str = "",
    width: int = 520,
    height: int = 170,
) -> Markup:
    """Lines over a shared x axis (prefix length, step), with an optional shaded band (e.g. the human range).

    >>> "polyline" in line_chart([("diversity", [1.0, 0.9, 0.8])])
    True
    """
    left, right, top, bottom = 44, 12, 24, 34
    plot_w, plot_h = width - left - right, height - top - bottom
    values = [v for _, s in series for v in s if math.isfinite(v)]
    if band is not None:
        values += [v for side in band for v in side if math.isfinite(v)]
    length = max([len(s) for _, s in series] + ([len(band[0]), len(band[1])] if band else [1]))
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high - low < 1e-12:
        low, high = low - 0.5, high + 0.5
    pad = (high - low) * 0.05
    low, high = low - pad, high + pad

    def x(i: int) -> float:
        return left + (i / max(length - 1, 1)) * plot_w

    def y(v: float) -> float:
        return top + plot_h - (v - low) / (high - low) * plot_h

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<line x1="{left}" y1="{top + plot_h}" x2="{left + plot_w}" y2="{top + plot_h}" class="axis"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" class="axis"/>',
    ]
    for tick in nice_ticks(low, high, 4):
        parts.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" class="tick" text-anchor="end">{_fmt(tick)}</text>')
    for tick in nice_ticks(1, length, 5):
        if float(tick).is_integer():
            parts.append(
                f'<text x="{x(int(tick) - 1):.1f}" y="{top + plot_h + 14}" class="tick" '
                f'text-anchor="middle">{int(tick)}</text>'
            )
    if x_label:
        parts.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{height - 4}" class="tick" text-anchor="middle">'
            f"{escape(x_label)}</text>"
        )
    if band is not None:
        lows, highs = band
        n = min(len(lows), len(highs))
        points = [(x(i), y(highs[i])) for i in range(n)] + [(x(i), y(lows[i])) for i in reversed(range(n))]
        if points:
            parts.append(
                '<polygon class="band" points="'
                + " ".join(f"{px:.1f},{py:.1f}" for px, py in points)
                + f'"><title>{escape(band_label)}</title></polygon>'
            )
    for index, (label, values_) in enumerate(series):
        colour = SERIES_COLOURS[index % len(SERIES_COLOURS)]
        line = " ".join(f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(values_) if math.isfinite(v))
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{line}">'
            f"<title>{escape(label)}</title></polyline>"
        )
        parts.append(
            f'<text x="{left + 8 + 110 * index}" y="{top - 8}" class="legend" fill="{colour}">{escape(label)}</text>'
        )
    parts.append("</svg>")
    return Markup("".join(parts))
