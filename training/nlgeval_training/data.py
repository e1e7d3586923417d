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

import re
import hashlib
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
    sentences: list[str]  # the article, split into sentences
    summary: list[str]  # reference summary sentences

    @property
    def text(self) -> str:
        return " ".join(self.sentences)

    def lead(self, n: int) -> str:
        return " ".join(self.sentences[:n])


@dataclass(frozen=True)
class Dialogue:
    id: str
    turns: list[str]
    knowledge: list[list[str]] = field(default_factory=list)  # per turn: knowledge passages it cites
    facts: list[str] = field(default_factory=list)  # the whole reading set


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


def load_documents(
    path: str | Path,
    *,
    article_field: str = "article",
    summary_fields: tuple[str, ...] = ("highlights", "summary"),
    id_field: str = "id",
    limit: int | None = None,
    min_sentences: int = 3,
) -> list[Document]:
    """Load a summarization corpus; documents with fewer than ``min_sentences`` sentences are dropped."""
    docs: list[Document] = []
    for lineno, obj in enumerate(read_jsonl(path, limit), start=1):
        if article_field not in obj:
            raise DataError(
                f"{path}:{lineno} has no {article_field!r} field (fields: {sorted(obj)}); "
                f"pass article_field=... naming the article text"
            )
        summary = next((obj[f] for f in summary_fields if f in obj), None)
        if summary is None:
            raise DataError(
                f"{path}:{lineno} has none of the summary fields {list(summary_fields)}; pass summary_fields=(...)"
            )
        sentences = split_sentences(str(obj[article_field]).replace("\n", " \n\n "))
        summ = _summary_sentences(summary)
        if len(sentences) < min_sentences or not summ:
            continue
        docs.append(
            Document(id=str(obj.get(id_field, f"{Path(path).name}:{lineno}")), sentences=sentences, summary=summ)
        )
    return docs


def load_dialogues(
    path: str | Path,
    *,
    turns_field: str = "turns",
    text_field: str = "text",
    id_field: str = "id",
    limit: int | None = None,
    min_turns: int = 3,
) -> list[Dialogue]:
    """Load a dialogue corpus (Topical-Chat layout: ``turns`` of ``{"text", "knowledge"}``, ``facts``).

    Turns may also be plain strings. Dialogues with fewer than ``min_turns`` turns are dropped.
    """
    out: list[Dialogue] = []
    for lineno, obj in enumerate(read_jsonl(path, limit), start=1):
        if turns_field not in obj or not isinstance(obj[turns_field], list):
            raise DataError(f"{path}:{lineno} has no list field {turns_field!r}; pass turns_field=...")
        turns: list = []
        knowledge: list = []
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
        out.append(
            Dialogue(
                id=str(obj.get(id_field, f"{Path(path).name}:{lineno}")), turns=turns, knowledge=knowledge, facts=facts
            )
        )
    return out


# -- the default causal LM's corpus and the human stories it may learn from -----------------------------------

#: Share of documents (by id hash) kept out of training for perplexity and for example reference banks.
HELDOUT_PERCENT = 3

# (file, how to turn a row into text, corpus label)
_SOURCES = (
    ("cnndm.jsonl.gz", lambda r: r.get("article", ""), "cnndm"),
    ("bbc_news_summary.jsonl.gz", lambda r: r.get("article", ""), "bbc"),
    ("scitldr.jsonl.gz", lambda r: r.get("article", ""), "scitldr"),
    ("topicalchat.jsonl.gz", lambda r: "\n".join(t.get("text", "") for t in r.get("turns", [])), "topicalchat"),
)


def is_heldout(doc_id: str) -> bool:
    """True for the documents kept out of training (a stable hash of the id, about 3% of them)."""
    return int(hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:8], 16) % 100 < HELDOUT_PERCENT


def corpus_documents(data_dir: str | Path, split: str = "train") -> Iterator[tuple[str, str, str]]:
    """Yield ``(corpus, id, text)`` of the kit's documents of ``split`` (``"train"`` or ``"heldout"``)."""
    data = Path(data_dir)
    for name, to_text, label in _SOURCES:
        path = data / name
        if not path.is_file():
            continue
        for lineno, row in enumerate(read_jsonl(path), start=1):
            doc_id = f"{label}:{row.get('id', lineno)}"
            if is_heldout(doc_id) != (split == "heldout"):
                continue
            text = to_text(row).replace("\r", "").strip()
            if len(text) >= 200:
                yield label, doc_id, text


# The sentence end of pytest_nlgeval.trajectory.humandata.split_story (training may not import the plugin), so
# that a rated story's prompt here is the prompt `nlgeval trajectory meta-eval` reads from it.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")


def _normalise(text: str) -> str:
    return " ".join(str(text).split())


def _first_sentence(story: str) -> str:
    text = _normalise(story)
    match = _SENTENCE_END.search(text + " ")
    return text[: match.end()].strip() if match else text


def excluded_prompts(path: str | Path, story_field: str = "story", prompt_field: str = "prompt") -> set[str]:
    """The prompts of a file of rated texts: its ``prompt`` field, or else the first sentence of ``story``."""
    prompts = set()
    for n, row in enumerate(read_jsonl(path), start=1):
        if row.get(prompt_field):
            prompts.add(_normalise(row[prompt_field]))
        elif row.get(story_field):
            prompts.add(_first_sentence(row[story_field]))
        else:
            raise DataError(
                f"{path} row {n}: neither {prompt_field!r} nor {story_field!r}; "
                "--exclude-prompts reads rated texts with a prompt or a story field"
            )
    return prompts


def split_stories(path: str | Path, exclude: set[str] | frozenset[str] = frozenset()) -> tuple[list[dict], list[dict]]:
    """``(train, unseen)`` halves of a file of human stories (``{"prompt", "continuation"}`` rows).

    A story is trained on when the sha256 of its normalised prompt is even and the prompt is not in
    ``exclude``; every story of one prompt goes to the same half. The unseen half keeps the rows as read.
    """
    train: list[dict] = []
    unseen: list[dict] = []
    for n, row in enumerate(read_jsonl(path), start=1):
        if not isinstance(row.get("prompt"), str) or not isinstance(row.get("continuation"), str):
            raise DataError(f"{path} row {n}: a story row needs string fields 'prompt' and 'continuation'")
        prompt = _normalise(row["prompt"])
        even = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16) % 2 == 0
        (train if even and prompt not in exclude else unseen).append(row)
    return train, unseen


def story_text(row: dict) -> str:
    return _normalise(row["prompt"] + " " + row["continuation"])
