"""Shared pieces of the pseudo-data generators: span perturbations, balancing, deduplication, splits.

Span operations follow UniEval's disfluency recipe (Zhong et al., 2022, section 3.2): pick a span of
Poisson(lambda) words and repeat, delete or shuffle it. Every operation is guaranteed to change the text.

    >>> import random
    >>> text = "the cat sat on the warm mat today"
    >>> span_perturb(text, random.Random(0), lam=3.0)[0] != text
    True
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import defaultdict
from typing import Iterable

SPAN_OPS = ("repeat", "delete", "shuffle")
#: every damage ``span_perturb`` knows: UniEval's span operations, plus ``salad`` (all words shuffled) and
#: ``stutter`` (a span repeated twice in a row): the damage a degenerate generator produces
ALL_OPS = SPAN_OPS + ("salad", "stutter")


def poisson(rng: random.Random, lam: float) -> int:
    """A Poisson(lam) draw (Knuth's multiplication method; lam is small here)."""
    limit, k, p = math.exp(-lam), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def span_perturb(
    text: str, rng: random.Random, lam: float, op: str | tuple[str, ...] | None = None
) -> tuple[str, str] | None:
    """Repeat, delete or shuffle a span of max(1, Poisson(lam)) words; ``None`` if no op can change ``text``.

    Returns ``(new_text, op)``. Deletion keeps at least two words; shuffling needs two distinct words.
    ``op`` is one name of :data:`ALL_OPS` or a tuple of them to choose from (default: :data:`SPAN_OPS`).
    ``salad`` shuffles every word; ``stutter`` repeats a span twice in a row.
    """
    words = text.split()
    if len(words) < 3:
        return None
    ops = [op] if isinstance(op, str) else list(op or SPAN_OPS)
    unknown = [o for o in ops if o not in ALL_OPS]
    if unknown:
        raise ValueError(f"unknown span operation(s) {unknown}; choose from {ALL_OPS}")
    rng.shuffle(ops)
    for name in ops:
        if name == "salad":
            if len(set(words)) < 3:
                continue
            shuffled = words[:]
            while shuffled == words:
                rng.shuffle(shuffled)
            return " ".join(shuffled), name
        length = min(max(1, poisson(rng, lam)), len(words) - 2 if name == "delete" else len(words))
        if name == "shuffle":
            length = max(length, 2)
            if length > len(words):
                continue
        start = rng.randrange(0, len(words) - length + 1)
        span = words[start : start + length]
        if name == "repeat":
            new = words[: start + length] + span + words[start + length :]
        elif name == "stutter":
            new = words[: start + length] + span + span + words[start + length :]
        elif name == "delete":
            new = words[:start] + words[start + length :]
        else:
            if len(set(span)) < 2:
                continue
            shuffled = span[:]
            while shuffled == span:
                rng.shuffle(shuffled)
            new = words[:start] + shuffled + words[start + length :]
        out = " ".join(new)
        if out != " ".join(words):
            return out, name
    return None


def span_pairs(
    task: str,
    dimension: str,
    groups: Iterable[tuple[str, list[str]]],
    rng: random.Random,
    *,
    lam: float,
    per_group: int,
    min_words: int,
    ops: tuple[str, ...] | None = None,
    max_words: int | None = None,
) -> list[dict]:
    """Disfluency pairs (UniEval's fluency/naturalness pseudo data): a text as the positive, the same text with a
    Poisson(``lam``) span repeated, deleted or shuffled as the negative; ``per_group`` texts of at least
    ``min_words`` words (and at most ``max_words``) from each ``(group_id, texts)``; ``ops`` as in
    :func:`span_perturb`."""
    from nlgeval_training.boolqa import make_record

    records = []
    for group_id, texts in groups:
        units = [t for t in texts if min_words <= len(t.split()) <= (max_words or len(t.split()))]
        rng.shuffle(units)
        for unit in units[:per_group]:
            bad = span_perturb(unit, rng, lam, tuple(ops) if ops else None)
            if bad is None:
                continue
            records.append(make_record(task, dimension, 1, group_id, output=unit))
            records.append(make_record(task, dimension, 0, group_id, output=bad[0]))
    return records


def balanced_subset(records: Iterable[dict], per_group: int, rng: random.Random, group) -> list[dict]:
    """``per_group // 2`` records of each label within each ``group(record)``, in a seeded shuffled order
    that does not depend on the input order (records are sorted by their input text before shuffling)."""
    by: dict[tuple, list[dict]] = defaultdict(list)
    for rec in records:
        by[(group(rec), rec["label"])].append(rec)
    out = []
    for key in sorted(by):
        recs = sorted(by[key], key=lambda r: r["input"])
        rng.shuffle(recs)
        out.extend(recs[: per_group // 2])
    return out


def finalize(records: Iterable[dict], seed: int, limit: int | None = None) -> list[dict]:
    """Deduplicate, drop inputs seen with both labels, balance 50/50 per (task, dimension), shuffle.

    ``limit`` caps the records per (task, dimension) (half positive, half negative).
    """
    by_input: dict[str, dict] = {}
    conflicted: set[str] = set()
    for rec in records:
        prev = by_input.get(rec["input"])
        if prev is None:
            by_input[rec["input"]] = rec
        elif prev["label"] != rec["label"]:
            conflicted.add(rec["input"])
    buckets: dict[tuple[str, str, int], list[dict]] = defaultdict(list)
    for text, rec in by_input.items():
        if text not in conflicted:
            buckets[(rec["task"], rec["dimension"], rec["label"])].append(rec)
    rng = random.Random(seed)
    out: list[dict] = []
    for task, dim in sorted({(t, d) for t, d, _ in buckets}):
        pos, neg = buckets[(task, dim, 1)], buckets[(task, dim, 0)]
        n = min(len(pos), len(neg))
        if limit is not None:
            n = min(n, limit // 2)
        rng.shuffle(pos)
        rng.shuffle(neg)
        out.extend(pos[:n] + neg[:n])
    rng.shuffle(out)
    return out


def is_held_out(group: str, fraction: float) -> bool:
    """Deterministic group-level split: the same source item always lands on the same side."""
    digest = hashlib.sha1(group.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def split_records(records: list[dict], fraction: float = 0.1) -> tuple[list[dict], list[dict]]:
    """(train, held_out): records whose ``group`` hashes below ``fraction`` are held out."""
    train: list[dict] = []
    test: list[dict] = []
    for rec in records:
        (test if is_held_out(rec["group"], fraction) else train).append(rec)
    return train, test


def match_case(template: str, word: str) -> str:
    """``word`` with the capitalisation of ``template`` (for substitutions inside a sentence)."""
    if template.isupper() and len(template) > 1:
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word
