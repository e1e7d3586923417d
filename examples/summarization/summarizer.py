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


SUMMARIZERS = {"lead": lead_summary, "tail": tail_summary}
