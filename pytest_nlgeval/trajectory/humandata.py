"""Human judgement files for trajectory meta-evaluation: per-text ratings and pairwise preferences.

Both are JSON Lines (optionally gzip-compressed, ``.gz``), one object per line; field names are
configurable.

- **Per-text ratings**: ``{"prompt": ..., "continuation": ..., "rating": 3.5}``. The rating may be a
  number or a list of judgements (e.g. seven 0/1 acceptability votes); a list is averaged. A file of
  whole stories can be read with ``story_field``: the story's first sentence becomes the prompt and
  the rest the continuation (:func:`split_story`).
- **Pairwise preferences**: ``{"prompt": ..., "continuation_a": ..., "continuation_b": ...,
  "votes": ["a", "b", "a"]}``: two continuations of one prompt and the annotators' votes for the more
  human-like one, as a list of ``"a"``/``"b"`` or as counts ``{"a": 2, "b": 1}``.

The bootstrap cluster of a row is its prompt (whitespace-normalised) unless ``prompt_id_field`` names
a field that identifies prompts.

    >>> split_story("tom went out . he saw a dog . it barked .")
    ('tom went out .', 'he saw a dog . it barked .')
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from pytest_nlgeval.errors import NLGEvalError

__all__ = [
    "HumanDataError",
    "RatedTexts",
    "PairedTexts",
    "read_jsonl",
    "read_ratings",
    "read_pairwise",
    "split_story",
    "mean_rating",
]

# The first sentence ends at ., ! or ? (possibly repeated, possibly followed by a closing quote or
# bracket) followed by whitespace. Tokenised corpora such as ROCStories write " . " between sentences.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")


class HumanDataError(NLGEvalError, ValueError):
    """A human judgement file is missing, malformed, or lacks a field; the message names the line and the fix."""


def split_story(story: str) -> tuple[str, str]:
    """``(first sentence, rest)`` of a story; raises :class:`ValueError` if it has a single sentence."""
    text = " ".join(str(story).split())
    match = _SENTENCE_END.search(text + " ")
    if match is None or not text[match.end() :].strip():
        raise ValueError("the story has no sentence after the first one to score as a continuation")
    return text[: match.end()].strip(), text[match.end() :].strip()


def mean_rating(value: Any) -> float:
    """A rating as a float: a number as is, a non-empty list of numbers averaged."""
    if isinstance(value, bool):
        raise ValueError(f"a rating must be a number or a list of numbers, not {value!r}")
    if isinstance(value, (int, float)):
        out = float(value)
    elif (
        isinstance(value, list)
        and value
        and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
    ):
        out = float(np.mean(value))
    else:
        raise ValueError(f"a rating must be a number or a non-empty list of numbers, not {value!r}")
    if not np.isfinite(out):
        raise ValueError(f"a rating must be finite, not {value!r}")
    return out


def read_jsonl(path: str | Path) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-empty line of a JSONL or JSONL.gz file."""
    from nlgeval_runtime.jsonlines import iter_rows

    return iter_rows(path, error=HumanDataError)


def _normalise(prompt: str) -> str:
    return " ".join(prompt.split())


def _text(row: dict, name: str, where: str, flag: str, *, allow_empty: bool = False) -> str:
    if name not in row:
        raise HumanDataError(f"{where} has no {name!r} field (fields: {sorted(row)}); name the right field with {flag}")
    value = row[name]
    if not isinstance(value, str) or (not allow_empty and not value.strip()):
        raise HumanDataError(f"{where}: {name!r} must be a non-empty string, got {value!r:.60}")
    return value


def _cluster(row: dict, prompt: str, prompt_id_field: str | None, where: str) -> str:
    if prompt_id_field is None:
        return _normalise(prompt)
    if row.get(prompt_id_field) is None:
        raise HumanDataError(
            f"{where} has no {prompt_id_field!r} field; pass --prompt-id with the field that "
            "identifies each row's prompt, or leave it out to group rows by prompt text"
        )
    return str(row[prompt_id_field])


@dataclass(frozen=True)
class RatedTexts:
    """Continuations with one (mean) human rating each; ``clusters`` are the bootstrap groups (prompts)."""

    prompts: list[str]
    continuations: list[str]
    ratings: np.ndarray
    clusters: np.ndarray
    rows: list[dict] = field(repr=False, default_factory=list)

    def __len__(self) -> int:
        return len(self.continuations)


def read_ratings(
    path: str | Path,
    *,
    rating_field: str = "rating",
    prompt_field: str = "prompt",
    continuation_field: str = "continuation",
    story_field: str | None = None,
    prompt_id_field: str | None = None,
) -> RatedTexts:
    """Read a per-text ratings file (see the module docstring); errors name the line and the fix."""
    prompts, conts, ratings, clusters, rows = [], [], [], [], []
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        if story_field is not None:
            story = _text(row, story_field, where, "--story-field")
            try:
                prompt, cont = split_story(story)
            except ValueError as exc:
                raise HumanDataError(
                    f"{where}: {exc}; give the prompt and continuation as separate fields "
                    "(--prompt-field, --continuation-field) instead of --story-field"
                ) from None
        else:
            cont = _text(row, continuation_field, where, "--continuation-field")
            prompt = _text(row, prompt_field, where, "--prompt-field", allow_empty=True)
        if rating_field not in row:
            raise HumanDataError(
                f"{where} has no {rating_field!r} field (fields: {sorted(row)}); name the field "
                "holding the human rating (a number or a list of judgements) with --rating"
            )
        try:
            rating = mean_rating(row[rating_field])
        except ValueError as exc:
            raise HumanDataError(f"{where}: {rating_field!r}: {exc}") from None
        prompts.append(prompt)
        conts.append(cont)
        ratings.append(rating)
        clusters.append(_cluster(row, prompt, prompt_id_field, where))
        rows.append(row)
    if len(conts) < 3:
        raise HumanDataError(f"{path} holds {len(conts)} rated continuations; a correlation needs at least 3")
    return RatedTexts(prompts, conts, np.array(ratings), np.array(clusters), rows)


@dataclass(frozen=True)
class PairedTexts:
    """Pairs of continuations of one prompt with the votes for each side (``votes_a``, ``votes_b``)."""

    prompts: list[str]
    a: list[str]
    b: list[str]
    votes_a: np.ndarray
    votes_b: np.ndarray
    clusters: np.ndarray
    rows: list[dict] = field(repr=False, default_factory=list)

    def __len__(self) -> int:
        return len(self.a)


def _votes(value: Any, where: str, votes_field: str) -> tuple[int, int]:
    fix = f"{votes_field!r} must be a list of \"a\"/\"b\" votes or counts {{\"a\": 2, \"b\": 1}}"
    if isinstance(value, list):
        labels = [str(v).strip().lower() for v in value]
        if not labels or any(v not in ("a", "b") for v in labels):
            raise HumanDataError(f"{where}: {fix}, got {value!r:.80}")
        return labels.count("a"), labels.count("b")
    if isinstance(value, dict) and set(value) <= {"a", "b"} and value:
        counts = [value.get("a", 0), value.get("b", 0)]
        if all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts) and sum(counts) > 0:
            return counts[0], counts[1]
    raise HumanDataError(f"{where}: {fix}, got {value!r:.80}")


def read_pairwise(
    path: str | Path,
    *,
    a_field: str = "continuation_a",
    b_field: str = "continuation_b",
    votes_field: str = "votes",
    prompt_field: str = "prompt",
    prompt_id_field: str | None = None,
) -> PairedTexts:
    """Read a pairwise preference file (see the module docstring); errors name the line and the fix."""
    prompts, a, b, va, vb, clusters, rows = [], [], [], [], [], [], []
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        prompt = _text(row, prompt_field, where, "--prompt-field", allow_empty=True)
        a.append(_text(row, a_field, where, "--a-field"))
        b.append(_text(row, b_field, where, "--b-field"))
        if votes_field not in row:
            raise HumanDataError(
                f"{where} has no {votes_field!r} field (fields: {sorted(row)}); name the field "
                "holding the votes for the more human-like continuation with --votes-field"
            )
        na, nb = _votes(row[votes_field], where, votes_field)
        prompts.append(prompt)
        va.append(na)
        vb.append(nb)
        clusters.append(_cluster(row, prompt, prompt_id_field, where))
        rows.append(row)
    if len(a) < 2:
        raise HumanDataError(f"{path} holds {len(a)} pairs; agreement with a bootstrap needs at least 2")
    return PairedTexts(prompts, a, b, np.array(va), np.array(vb), np.array(clusters), rows)
