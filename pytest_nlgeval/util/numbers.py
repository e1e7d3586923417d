"""How thresholds are printed: short enough to read, exact enough to tell two apart.

A threshold often comes out of a computation (a baseline's score minus a tolerance, a quantile), and its
full repr (``0.9955536800276724``) is noise in a report. :func:`format_threshold` writes at most four
decimals, without trailing zeros; a threshold smaller than 0.001 keeps four significant digits instead of
rounding to 0. Example::

    >>> format_threshold(0.9955536800276724), format_threshold(0.7), format_threshold(4.8)
    ('0.9956', '0.7', '4.8')
    >>> format_threshold(0.000123456), format_threshold(1234.56789), format_threshold(None)
    ('0.0001235', '1234.5679', '')
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["format_threshold"]


def format_threshold(value: Any) -> str:
    """``value`` with at most four decimals (four significant digits below 0.001); ``""`` for None."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    number = float(value)
    if not math.isfinite(number):
        return str(number)
    if number != 0 and abs(number) < 0.001:
        return f"{number:.4g}"
    text = f"{number:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("", "-0") else text
