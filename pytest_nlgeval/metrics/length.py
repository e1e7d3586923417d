"""Length metrics: output length, length ratio to the reference, compression ratio to the source.

Words are counted as runs of word characters (punctuation is not a word). Compression ratio is
``|source words| / |output words|`` as defined for summarisation corpora by Grusky et al. (2018,
Newsroom). These numbers describe an output rather than judge it: whether longer is better depends on
the task, so ``higher_is_better`` is nominal here (the cards say so).

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> get_metric("compression_ratio").score("a short summary", input="one two three four five six")
    2.0
"""

from __future__ import annotations

from pytest_nlgeval.metrics._text import words
from pytest_nlgeval.metrics.base import Metric, MetricInputError


class Length(Metric):
    """Number of words in the output (``unit="words"``) or characters (``unit="chars"``).

    >>> Length().score("The cat sat, happily.")
    4.0
    """

    name = "length"

    def __init__(self, unit: str = "words"):
        if unit not in ("words", "chars"):
            raise ValueError(f"length unit must be 'words' or 'chars', got {unit!r}")
        self.unit = unit

    def _score(self, output, input, references):
        return float(len(words(output)) if self.unit == "words" else len(output))

    def _options(self):
        return {"unit": self.unit}


class LengthRatio(Metric):
    """Output words / mean reference words (1.0 = as long as the references).

    >>> LengthRatio().score("one two three", references=["a b c d e f"])
    0.5
    """

    name = "length_ratio"
    needs_references = True

    def _score(self, output, input, references):
        ref_len = sum(len(words(r)) for r in references) / len(references)
        if ref_len == 0:
            raise MetricInputError(
                "metric 'length_ratio': every reference is empty (no words), so the ratio is undefined; "
                "drop the empty references"
            )
        return len(words(output)) / ref_len

    def _options(self):
        return {"refs": "mean-length"}


class CompressionRatio(Metric):
    """Source words / output words (Grusky et al., 2018); 10.0 = the output is a tenth of the source.

    >>> CompressionRatio().score("b c", input="a b c d")
    2.0
    """

    name = "compression_ratio"
    needs_input = True

    def _score(self, output, input, references):
        n_out = len(words(output))
        if n_out == 0:
            raise MetricInputError(
                "metric 'compression_ratio': the output has no words, so the ratio is undefined (infinite); "
                "check for empty generations before scoring"
            )
        return len(words(input)) / n_out
