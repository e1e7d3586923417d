"""Repeated sampling of the application under test, for apps whose output changes from call to call.

An LLM application sampled at a temperature above 0 passes a threshold on one call and fails it on the next.
:func:`samples` calls it ``n`` times with the same arguments; the assertions take the list as they take any
list of outputs, and the test asserts on a pass rate instead of a single draw::

    from pytest_nlgeval import assert_dimensions, assert_judged, samples

    def test_summaries_stay_faithful(summarize, article):
        outputs = samples(summarize, article, n=5)
        assert assert_dimensions(outputs, "consistency", source=article).fraction(above=0.2) >= 0.8
        assert assert_judged(outputs, "The summary names who decided what.").fraction(above=3) >= 0.8

The aggregate checks made from a :class:`Samples` list record the spread of the scores (lowest, highest,
standard deviation, distinct outputs), which the report shows beside the check. The ``nlgeval`` fixture
offers the same call as ``nlgeval.samples(fn, ..., n=5)``.
"""

from __future__ import annotations

import statistics
from typing import Any, Callable

__all__ = ["Samples", "samples", "spread"]


class Samples(list):
    """The outputs of ``n`` calls of one function (a ``list`` of strings), and what made them."""

    def __init__(self, outputs, *, source: str) -> None:
        super().__init__(outputs)
        self.source = source

    def describe(self) -> dict[str, Any]:
        """What the report shows about the samples themselves: how many, of what, how many distinct."""
        return {"n": len(self), "of": self.source, "distinct": len({str(o) for o in self})}

    def __repr__(self) -> str:
        return f"Samples({self.source}, n={len(self)})"


def _name(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if module and module not in ("builtins", "__main__") else str(name)


def samples(fn: Callable[..., Any], *args, n: int = 5, **kwargs) -> Samples:
    """Call ``fn(*args, **kwargs)`` ``n`` times and return the outputs as :class:`Samples`.

    Every output must be a string (a text to score); the error names the call that returned something else.
    """
    if not callable(fn):
        raise TypeError(f"samples() takes the function to call first, got {type(fn).__name__}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"samples(n=...) must be a positive integer, got {n!r}")
    outputs = []
    for i in range(n):
        out = fn(*args, **kwargs)
        if not isinstance(out, str):
            raise TypeError(
                f"samples(): call {i + 1} of {_name(fn)} returned {type(out).__name__}, not a string; "
                "sample a function that returns the text to score"
            )
        outputs.append(out)
    return Samples(outputs, source=_name(fn))


def spread(values: list[float]) -> dict[str, float]:
    """Lowest, highest, mean and population standard deviation of ``values``."""
    finite = [v for v in values if v == v]
    if not finite:
        return {}
    return {
        "min": min(finite),
        "max": max(finite),
        "mean": sum(finite) / len(finite),
        "sd": statistics.pstdev(finite) if len(finite) > 1 else 0.0,
    }
