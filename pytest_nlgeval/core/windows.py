"""Source windows: long documents scored in overlapping, sentence-aligned pieces that fit the model.

A Boolean-QA evaluator reads at most ``max_length`` tokens, and UniEval's inputs put the document last,
so truncation cuts the document's tail (UniEval's public code, maszhongming/UniEval): a claim supported only by the end
of a long article is judged against its first sentences. With source windows, when the whole input is longer
than the model's maximum, the document is split into windows of whole sentences that fit next to the
question and the claim, consecutive windows sharing one sentence (so every pair of adjacent sentences is
seen together in some window). The claim is scored against every window in the same batched call, and
the window scores are combined: ``max`` for consistency-type dimensions (a claim is supported when some
part of the document supports it; SummaC zero-shot, Laban et al., TACL 2022), ``mean`` where a dimension
asks about the document as a whole.

An input that fits is scored exactly as without windows, so short documents give identical scores in
both modes.

    >>> planner = WindowPlanner(counter, max_length=256)                     # doctest: +SKIP
    >>> planner.plan(prefix_tokens=40, source="First. Second. ...")          # doctest: +SKIP
    [Window(index=0, count=3, first=0, last=7, text='First. ...'), ...]
"""

from __future__ import annotations

import functools

from dataclasses import dataclass
from typing import Callable, Sequence

__all__ = ["MODES", "UNITS", "Window", "WindowPlanner", "alignment_units", "check_mode", "sentence_spans", "word_share"]

#: How a model folder may declare that a dimension reads its source (``source_units`` in nlgeval.json):
#: ``windows``, long sources in passage windows (this module's planner); ``sentences``, every claim
#: against each source sentence and each pair of adjacent sentences, max over them (SummaC zero-shot
#: granularity, Laban et al., TACL 2022); ``both``, the max over the sentence units and the windows.
UNITS = ("windows", "sentences", "both")

#: ``auto``: windows when an input is longer than the model's maximum; ``off``: tail truncation (UniEval).
MODES = ("auto", "off")


def check_mode(mode: str, what: str = "source_windows") -> str:
    if mode not in MODES:
        raise ValueError(f"{what} must be one of {', '.join(MODES)}, got {mode!r}")
    return mode


@dataclass(frozen=True)
class Window:
    """One window of a source: sentences ``first`` to ``last - 1`` (0-based), ``index`` of ``count``."""

    index: int
    count: int
    first: int
    last: int
    text: str
    #: an aligned unit's rank by the content words it shares with the claim (0: the most), else None
    rank: int | None = None

    def describe(self, score: float | None = None) -> dict:
        """JSON-ready description for :attr:`Score.details` (the supporting window)."""
        out = {"index": self.index, "count": self.count, "sentences": [self.first, self.last], "text": self.text}
        if score is not None:
            out["score"] = score
        return out


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text``, lines first (facts are one per line), then sentences.

    The spans index the original string, so a window keeps the source's own spacing and line breaks.
    """
    from nlgeval_runtime.sentences import split_sentences

    spans: list[tuple[int, int]] = []
    pos = 0
    for line in text.split("\n"):
        line_start = pos
        pos += len(line) + 1
        if not line.strip():
            continue
        cursor = line_start
        for sentence in split_sentences(line):
            at = text.find(sentence, cursor, line_start + len(line))
            if at < 0:  # the splitter normalised something: fall back to the rest of the line
                spans.append((cursor, line_start + len(line)))
                cursor = line_start + len(line)
                break
            spans.append((at, at + len(sentence)))
            cursor = at + len(sentence)
    return spans


class WindowPlanner:
    """Plans the windows of sources for one tokenizer and maximum length.

    ``count_tokens(texts)`` returns the number of tokens of each text *including* the special tokens the
    tokenizer adds (as the model's input would have them). ``overlap`` sentences are shared by
    consecutive windows.
    """

    def __init__(self, count_tokens: Callable[[Sequence[str]], Sequence[int]], max_length: int, overlap: int = 1):
        if max_length < 8:
            raise ValueError(f"max_length must be >= 8, got {max_length}")
        if overlap < 0:
            raise ValueError(f"overlap must be >= 0, got {overlap}")
        self._count = count_tokens
        self.max_length = int(max_length)
        self.overlap = int(overlap)
        self._special = int(count_tokens([""])[0])
        self._sentences: dict[str, tuple[list[tuple[int, int]], list[int]]] = {}

    @property
    def special_tokens(self) -> int:
        """Tokens the tokenizer adds to every input (an empty text's length)."""
        return self._special

    def count(self, texts: Sequence[str]) -> list[int]:
        return [int(n) for n in self._count(list(texts))]

    def _split(self, source: str) -> tuple[list[tuple[int, int]], list[int]]:
        """Sentence spans of ``source`` and their token counts (memoised: many claims share a source)."""
        known = self._sentences.get(source)
        if known is None:
            spans = sentence_spans(source) or [(0, len(source))]
            counts = [max(1, n - self._special) for n in self.count([source[a:b] for a, b in spans])]
            known = self._sentences[source] = (spans, counts)
        return known

    def plan(self, prefix_tokens: int, source: str, tail: str = "") -> list[Window]:
        """Windows of ``source`` for an input whose other parts take ``prefix_tokens`` tokens.

        ``tail`` is appended to every window's text (the dialogue convention ends a fact with a line
        break). A sentence longer than the whole budget forms a window of its own (and is truncated when
        scored, which the score reports).
        """
        spans, counts = self._split(source)
        budget = max(1, self.max_length - int(prefix_tokens))
        bounds: list[tuple[int, int]] = []
        start, n = 0, len(spans)
        while True:
            end, total = start, 0
            while end < n and total + counts[end] <= budget:
                total += counts[end]
                end += 1
            end = max(end, start + 1)
            bounds.append((start, end))
            if end >= n:
                break
            start = max(end - self.overlap, start + 1)
        texts = [source[spans[a][0] : spans[b - 1][1]] + tail for a, b in bounds]
        return [Window(i, len(bounds), a, b, t) for i, ((a, b), t) in enumerate(zip(bounds, texts))]


def word_share(claim: str, text: str) -> float:
    """The share of ``claim``'s content words (three or more letters, and numbers) that ``text`` holds; 1.0 for a
    claim without any."""
    words = _content_words(claim)
    return len(words & _window_words(text)) / len(words) if words else 1.0


@functools.lru_cache(maxsize=256)
def _window_words(text: str) -> frozenset[str]:
    """A window's content words, once per window (every claim of an output shares its source's windows)."""
    return frozenset(_content_words(text))


def _content_words(text: str) -> set[str]:
    """Lower-cased words of three or more letters, and numbers."""
    import re

    return {w.lower() for w in re.findall(r"[^\W_]{3,}|\d+(?:[.,]\d+)*", text)}


@functools.lru_cache(maxsize=16)
def _units_of(source: str) -> tuple[list[tuple[int, int]], list[set[str]]]:
    """A source's sentence spans and each sentence's content words, once per source (the claims of an output,
    and the outputs of a batch, share their source). Callers do not change what they get."""
    spans = sentence_spans(source) or [(0, len(source))]
    return spans, [_content_words(source[a:b]) for a, b in spans]


def alignment_units(claim: str, source: str, *, top: int = 6, tail: str = "") -> list[Window]:
    """The source units a claim is aligned with: each sentence and each pair of adjacent sentences.

    Scoring every claim against every unit costs claims x 2 x sentences model calls; only the ``top``
    units that share the most content words with the claim (ties: earlier first) are kept, which keeps
    the one that holds the claim's evidence when the claim repeats any of its words. ``index`` is the unit's
    rank in the source order; ``tail`` is appended as in :meth:`WindowPlanner.plan`.

        >>> [w.text for w in alignment_units("Ann won.", "Ann won. Bob lost. Rain fell.", top=2)]
        ['Ann won.', 'Ann won. Bob lost.']
    """
    spans, sentence_words = _units_of(source)
    bounds = [(i, i + 1) for i in range(len(spans))] + [(i, i + 2) for i in range(len(spans) - 1)]
    bounds.sort()
    words = _content_words(claim)

    def shared(bound):
        unit = set().union(*sentence_words[bound[0] : bound[1]])
        return len(words & unit) / (1.0 + 0.1 * len(unit))  # a pair must add evidence, not just words

    ranked = sorted(range(len(bounds)), key=lambda k: (-shared(bounds[k]), k))[:top]
    rank_of = {bounds[k]: r for r, k in enumerate(ranked)}
    bounds = [bounds[k] for k in sorted(ranked)]
    windows = [
        Window(i, len(bounds), a, b, source[spans[a][0] : spans[b - 1][1]] + tail, rank=rank_of[(a, b)])
        for i, (a, b) in enumerate(bounds)
    ]
    cover = _cover(words, sentence_words)
    if len(cover) > 1 and cover[-1] - cover[0] > 1:
        # a claim that draws on two paragraphs ("X, which owns 11 percent, supports a deal worth ...") is
        # supported by no single unit: read the sentences that together hold its words, in source order
        text = " ".join(source[spans[k][0] : spans[k][1]] for k in cover) + tail
        windows = [Window(w.index, len(windows) + 1, w.first, w.last, w.text, w.rank) for w in windows]
        windows.append(Window(len(windows), len(windows) + 1, cover[0], cover[-1] + 1, text, rank=top))
    return windows


def _cover(words: set[str], sentence_words: list[set[str]], most: int = 3) -> list[int]:
    """Up to ``most`` sentences that together hold most of ``words``, chosen greedily, in source order."""
    left, chosen = set(words), list[int]()
    while left and len(chosen) < most:
        best = max(range(len(sentence_words)), key=lambda k: (len(left & sentence_words[k]), -k), default=None)
        if best is None or len(left & sentence_words[best]) < 2 and chosen:
            break
        if not left & sentence_words[best]:
            break
        chosen.append(best)
        left -= sentence_words[best]
    return sorted(chosen)
