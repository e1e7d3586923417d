"""What a reader cites when a summary is incoherent, read against its document.

A reader calls a summary incoherent when it jumps back and forth through the story, or says the same thing
twice. Both are read from sentence embeddings (any unit vectors, e.g. :mod:`nlgeval_runtime.embedding`):

- **order**: each summary sentence is placed at the document sentence it is closest to; Kendall's tau-b
  between the summary's order and those places (the local-coherence measure of Lapata, "Probabilistic text
  structuring", ACL 2003, which ranks sentence orders by Kendall's tau). 1 is the document's order, -1 its
  reverse. The factor is ``order_floor`` + (1 - ``order_floor``) (1 + tau) / 2: a summary told backwards
  keeps ``order_floor`` of its score (a reader finds it harder to follow, not meaningless).
- **repetition**: the closest pair of summary sentences; a cosine above ``repeat_from`` counts as saying it
  again, linearly up to 1 (the same sentence twice), and the factor is 1 minus that share.

- **topic**: the summary sentence least related to the document (its best cosine with a document sentence);
  at or above ``topic_to`` it is about the document, at or below ``topic_from`` it is about something else (a
  sentence of another story), linearly in between.

The order and repetition factors are 1 where there is nothing to read (one sentence; every sentence placed at
the same document sentence).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Discourse:
    """The two readings of one summary against its document, and what a message names."""

    order: float | None = None  # Kendall's tau-b, None where it cannot be read
    places: list[int] = field(default_factory=list)  # the document sentence each summary sentence is closest to
    repeat: tuple[int, int, float] | None = None  # the closest pair of summary sentences and their cosine
    repeat_from: float = 0.6
    order_floor: float = 0.0
    least_related: tuple[int, float] | None = None  # the summary sentence least related to the document
    topic_from: float = 0.0
    topic_to: float = 0.0

    @property
    def order_factor(self) -> float:
        if self.order is None:
            return 1.0
        return self.order_floor + (1.0 - self.order_floor) * (1.0 + self.order) / 2.0

    @property
    def repeat_factor(self) -> float:
        if self.repeat is None:
            return 1.0
        share = (self.repeat[2] - self.repeat_from) / (1.0 - self.repeat_from)
        return 1.0 - min(1.0, max(0.0, share))

    @property
    def topic_factor(self) -> float:
        if self.least_related is None or self.topic_to <= self.topic_from:
            return 1.0
        share = (self.least_related[1] - self.topic_from) / (self.topic_to - self.topic_from)
        return min(1.0, max(0.0, share))

    @property
    def factor(self) -> float:
        return self.order_factor * self.repeat_factor * self.topic_factor

    def findings(self, sentences: list[str]) -> list[str]:
        """One line per reading that lowers the score, naming the sentences."""
        lines = []
        if self.order is not None and self.order < 1.0:
            back = [
                k + 1
                for k in range(1, len(self.places))
                if self.places[k] < max(self.places[:k])  # a sentence that goes back in the document
            ]
            where = f"; sentence {', '.join(map(str, back))} goes back in the document" if back else ""
            lines.append(f"order: the summary's sentences follow the document's order with tau {self.order:.2f}{where}")
        if self.least_related is not None and self.topic_factor < 1.0:
            k, cosine = self.least_related
            lines.append(
                f"off the document: sentence {k + 1} relates to no sentence of the document (best cosine "
                f"{cosine:.2f}): {_clip(sentences[k])!r}"
            )
        if self.repeat is not None and self.repeat_factor < 1.0:
            i, j, cosine = self.repeat
            lines.append(
                f"repetition: sentence {j + 1} says again what sentence {i + 1} says (cosine {cosine:.2f}): "
                f"{_clip(sentences[j])!r}"
            )
        return lines

    def as_dict(self) -> dict:
        return {
            "order": None if self.order is None else round(self.order, 4),
            "places": list(self.places),
            "repeat": None if self.repeat is None else [self.repeat[0], self.repeat[1], round(self.repeat[2], 4)],
            "least_related": None
            if self.least_related is None
            else [self.least_related[0], round(self.least_related[1], 4)],
            "factor": round(self.factor, 4),
        }


def _clip(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def kendall_tau_b(places: list[int]) -> float | None:
    """Kendall's tau-b between positions 0..n-1 and ``places`` (ties in ``places`` are neither concordant nor
    discordant); None when no pair is ordered."""
    n = len(places)
    concordant = discordant = tied = 0
    for a in range(n):
        for b in range(a + 1, n):
            if places[a] < places[b]:
                concordant += 1
            elif places[a] > places[b]:
                discordant += 1
            else:
                tied += 1
    pairs = n * (n - 1) // 2
    denominator = math.sqrt(pairs * (pairs - tied))
    return None if denominator == 0 else (concordant - discordant) / denominator


def read_discourse(
    sentences: np.ndarray,
    document: np.ndarray,
    *,
    repeat_from: float = 0.6,
    order_floor: float = 0.0,
    topic_from: float = 0.0,
    topic_to: float = 0.0,
) -> Discourse:
    """The order, repetition and topic of summary sentences (unit vectors, one row each, in reading order)
    against the document's sentences (unit vectors). ``topic_to <= topic_from`` reads no topic factor."""
    if not 0.0 <= repeat_from < 1.0:
        raise ValueError(f"repeat_from must be in [0, 1), got {repeat_from}")
    if not 0.0 <= order_floor <= 1.0:
        raise ValueError(f"order_floor must be in [0, 1], got {order_floor}")
    reading = Discourse(repeat_from=repeat_from, order_floor=order_floor, topic_from=topic_from, topic_to=topic_to)
    if len(sentences) and len(document):
        closest = sentences @ document.T
        best = closest.max(axis=1)
        k = int(np.argmin(best))
        reading.least_related = (k, float(best[k]))
        reading.places = [int(p) for p in np.argmax(closest, axis=1)]
    if len(sentences) < 2:
        reading.places = []
        return reading
    if reading.places:
        reading.order = kendall_tau_b(reading.places)
    similar = sentences @ sentences.T
    np.fill_diagonal(similar, -np.inf)
    i, j = np.unravel_index(int(np.argmax(similar)), similar.shape)
    reading.repeat = (int(min(i, j)), int(max(i, j)), float(similar[i, j]))
    return reading
