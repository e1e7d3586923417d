"""Inline SVG plot of one trajectory against the human band (no script, no external resource).

    >>> svg = trajectory_svg([1.0, 0.9, 0.5], low=[1.0, 0.8, 0.7], median=[1.0, 0.9, 0.85],
    ...                      high=[1.0, 1.0, 0.95], title="diversity", leave_at=3)
    >>> svg.startswith("<svg") and "band at token 3" in svg
    True

The machine trajectory is a solid line, the human median dashed, the band between the low and high
percentiles shaded, and ``floor`` (the bound a check uses, such as the envelope of ``assert_not_degenerate``)
dotted; ``leave_at`` (1-based token) marks where the machine leaves the band, or the floor when one is given.
"""

from __future__ import annotations

import math
from typing import Sequence

from markupsafe import Markup, escape

__all__ = ["trajectory_svg"]

MACHINE = "#c62828"
HUMAN = "#1565c0"


def _finite(values: Sequence) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def trajectory_svg(
    machine: Sequence[float],
    *,
    low: Sequence[float] = (),
    median: Sequence[float] = (),
    high: Sequence[float] = (),
    title: str = "",
    leave_at: int | None = None,
    floor: Sequence[float] = (),
    floor_label: str = "envelope",
    width: int = 460,
    height: int = 170,
) -> Markup:
    """An SVG line chart of ``machine`` over token positions 1..n with the human band behind it."""
    pad_l, pad_r, pad_t, pad_b = 46, 12, 22, 28
    n = max(len(machine), len(low), len(high), len(median), len(floor), 1)
    values = _finite(machine) + _finite(low) + _finite(high) + _finite(median) + _finite(floor)
    lo, hi = (min(values), max(values)) if values else (0.0, 1.0)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.5, hi + 0.5
    span = hi - lo
    lo, hi = lo - 0.05 * span, hi + 0.05 * span
    plot_w, plot_h = width - pad_l - pad_r, height - pad_t - pad_b

    def x(i: int) -> float:  # i is 0-based position -> token i + 1
        return pad_l + (plot_w * i / (n - 1) if n > 1 else plot_w / 2)

    def y(v: float) -> float:
        return pad_t + plot_h * (hi - v) / (hi - lo)

    def path(series: Sequence) -> str:
        pts, out = [], []
        for i, v in enumerate(series):
            if v is None or not math.isfinite(float(v)):
                continue
            pts.append(f"{x(i):.1f},{y(float(v)):.1f}")
        if pts:
            out.append("M" + " L".join(pts))
        return "".join(out)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)} trajectory">',
        f'<text x="{pad_l}" y="14" font-size="12" font-family="sans-serif">{escape(title)}</text>',
    ]
    from pytest_nlgeval.report.charts import nice_ticks

    for v in [t for t in nice_ticks(lo, hi, 4) if lo <= t <= hi]:
        parts.append(
            f'<line x1="{pad_l}" x2="{width - pad_r}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#ddd"/>'
            f'<text x="{pad_l - 4}" y="{y(v) + 4:.1f}" font-size="10" text-anchor="end" '
            f'font-family="sans-serif">{v:g}</text>'
        )
    parts.append(
        f'<text x="{pad_l + plot_w / 2:.1f}" y="{height - 6}" font-size="10" text-anchor="middle" '
        f'font-family="sans-serif">prefix length (tokens, 1..{n})</text>'
    )
    m = min(len(low), len(high))
    if m:
        upper = [f"{x(i):.1f},{y(float(high[i])):.1f}" for i in range(m)]
        lower = [f"{x(i):.1f},{y(float(low[i])):.1f}" for i in reversed(range(m))]
        parts.append(
            f'<polygon points="{" ".join(upper + lower)}" fill="{HUMAN}" fill-opacity="0.15" stroke="none">'
            '<title>human band</title></polygon>'
        )
    if median:
        parts.append(
            f'<path d="{path(median)}" fill="none" stroke="{HUMAN}" stroke-width="1.2" '
            'stroke-dasharray="4 3"><title>human median</title></path>'
        )
    if floor:
        parts.append(
            f'<path d="{path(floor)}" fill="none" stroke="{HUMAN}" stroke-width="1.2" '
            f'stroke-dasharray="1 2"><title>{escape(floor_label)}</title></path>'
        )
    parts.append(
        f'<path d="{path(machine)}" fill="none" stroke="{MACHINE}" stroke-width="1.6"><title>machine</title></path>'
    )
    if leave_at is not None and 1 <= leave_at <= len(machine):
        xv, yv = x(leave_at - 1), y(float(machine[leave_at - 1]))
        parts.append(
            f'<circle cx="{xv:.1f}" cy="{yv:.1f}" r="3.5" fill="{MACHINE}"/>'
            f'<text x="{min(xv + 5, width - 120):.1f}" y="{yv - 6 if yv > pad_t + 16 else yv + 14:.1f}" font-size="10" '
            f'font-family="sans-serif" fill="{MACHINE}">'
            f'leaves {"envelope" if floor else "band"} at token {leave_at}</text>'
        )
    legend_x = width - pad_r - (215 if floor else 150)
    human = "- - human median, band" + (", \u00b7\u00b7 envelope" if floor else "")
    parts.append(
        f'<text x="{legend_x}" y="14" font-size="10" font-family="sans-serif">'
        f'<tspan fill="{MACHINE}">\u2014 machine</tspan>  <tspan fill="{HUMAN}">{human}</tspan></text>'
    )
    parts.append("</svg>")
    return Markup("".join(parts))
