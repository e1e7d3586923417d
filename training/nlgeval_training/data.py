"""Loaders for the training corpora: gzip or plain JSONL files (the shared data kit or the user's own).

Summarization corpora become :class:`Document` (an article and its reference summary sentences);
dialogue corpora become :class:`Dialogue` (turns, the knowledge each turn cites, the reading set).
Field names are configurable so users can point the same loaders at their own files or at a
Hugging Face dataset exported with ``dataset.to_json(path)``.

    >>> docs = load_documents("$NLGEVAL_DATA/cnndm.jsonl.gz", limit=2)   # doctest: +SKIP
    >>> docs[0].summary[:1]                                                  # doctest: +SKIP
    ['Zully Broussard decided to give a kidney to a stranger .']
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from nlgeval_runtime.sentences import split_sentences

__all__ = ["Document", "Dialogue", "read_jsonl", "load_documents", "load_dialogues", "DataError"]


class DataError(ValueError):
    """A data file is missing, unreadable or lacks a required field."""


@dataclass(frozen=True)
class Document:
    id: str
    sentences: list[str]          # the article, split into sentences
    summary: list[str]            # reference summary sentences

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def lead(self, n: int) -> str:
        return " ".join(self.sentences[:n])


@dataclass(frozen=True)
class Dialogue:
    id: str
    turns: list[str]
    knowledge: list[list[str]] = field(default_factory=list)   # per turn: knowledge passages it cites
    facts: list[str] = field(default_factory=list)              # the whole reading set


def read_jsonl(path: str | Path, limit: int | None = None) -> Iterator[dict]:
    """Yield the JSON objects of a ``.jsonl`` or ``.jsonl.gz`` file, with line numbers in errors."""
    from nlgeval_runtime.jsonlines import iter_rows

    for _, obj in iter_rows(path, error=DataError, limit=limit):
        yield obj


def _summary_sentences(value) -> list[str]:
    # CNN/DM highlights are one sentence per line; other corpora are running text or a list.
    if isinstance(value, list):
        return [s.strip() for s in value if isinstance(s, str) and s.strip()]
    lines = [line.strip() for line in str(value).split("\n") if line.strip()]
    if len(lines) > 1:
        return lines
    return split_sentences(str(value))


def load_documents(path: str | Path, *, article_field: str = "article",
                   summary_fields: tuple[str, ...] = ("highlights", "summary"), id_field: str = "id",
                   limit: int | None = None, min_sentences: int = 3) -> list[Document]:
    """Load a summarization corpus; documents with fewer than ``min_sentences`` sentences are dropped."""
    docs: list[Document] = []
    for lineno, obj in enumerate(read_jsonl(path, limit), start=1):
        if article_field not in obj:
            raise DataError(f"{path}:{lineno} has no {article_field!r} field (fields: {sorted(obj)}); "
                            f"pass article_field=... naming the article text")
        summary = next((obj[f] for f in summary_fields if f in obj), None)
        if summary is None:
            raise DataError(f"{path}:{lineno} has none of the summary fields {list(summary_fields)}; "
                            f"pass summary_fields=(...)")
        sentences = split_sentences(str(obj[article_field]).replace("\n", " \n\n "))
        summ = _summary_sentences(summary)
        if len(sentences) < min_sentences or not summ:
            continue
        docs.append(Document(id=str(obj.get(id_field, f"{Path(path).name}:{lineno}")), sentences=sentences,
                             summary=summ))
    return docs


def load_dialogues(path: str | Path, *, turns_field: str = "turns", text_field: str = "text",
                   id_field: str = "id", limit: int | None = None, min_turns: int = 3) -> list[Dialogue]:
    """Load a dialogue corpus (Topical-Chat layout: ``turns`` of ``{"text", "knowledge"}``, ``facts``).

    Turns may also be plain strings. Dialogues with fewer than ``min_turns`` turns are dropped.
    """
    out: list[Dialogue] = []
    for lineno, obj in enumerate(read_jsonl(path, limit), start=1):
        if turns_field not in obj or not isinstance(obj[turns_field], list):
            raise DataError(f"{path}:{lineno} has no list field {turns_field!r}; pass turns_field=...")
        turns, knowledge = [], []
        for turn in obj[turns_field]:
            if isinstance(turn, str):
                turns.append(turn.strip())
                knowledge.append([])
            elif isinstance(turn, dict) and text_field in turn:
                turns.append(str(turn[text_field]).strip())
                knowledge.append([k for k in turn.get("knowledge", []) if isinstance(k, str) and k.strip()])
            else:
                raise DataError(f"{path}:{lineno}: a turn is neither a string nor an object with {text_field!r}")
        if len(turns) < min_turns:
            continue
        facts = [f for f in obj.get("facts", []) if isinstance(f, str) and f.strip()]
        out.append(Dialogue(id=str(obj.get(id_field, f"{Path(path).name}:{lineno}")), turns=turns,
                            knowledge=knowledge, facts=facts))
    return out
