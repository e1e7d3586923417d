"""The application under test: a small extractive summariser, and the articles it summarises."""

from __future__ import annotations

import json
from pathlib import Path

from nlgeval_runtime.sentences import split_sentences

ARTICLES = json.loads((Path(__file__).parent / "articles.json").read_text(encoding="utf-8"))


def lead_summary(article: str, n_sentences: int = 2) -> str:
    """The classic lead-n baseline: the first sentences of the article."""
    return " ".join(split_sentences(article)[:n_sentences])


def tail_summary(article: str, n_sentences: int = 2) -> str:
    """A worse variant (the last sentences), to see what a regression looks like against a baseline."""
    return " ".join(split_sentences(article)[-n_sentences:])


def salad_summary(article: str, n_sentences: int = 2) -> str:
    """A broken variant: the lead sentences with their words shuffled (a generator that degenerated into
    word salad), to see that the fluency and coherence checks and the baseline catch it."""
    import random

    rng = random.Random(len(article))
    sentences = []
    for sentence in split_sentences(article)[:n_sentences]:
        words = sentence.rstrip(".").split()
        rng.shuffle(words)
        sentences.append(" ".join(words).capitalize() + ".")
    return " ".join(sentences)


SUMMARIZERS = {"lead": lead_summary, "tail": tail_summary, "salad": salad_summary}
