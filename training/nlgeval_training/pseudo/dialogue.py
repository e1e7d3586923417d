"""Pseudo data for the dialogue dimensions (Zhong et al., 2022, section 3.2;
UniEval's public code, maszhongming/UniEval).

Inputs follow the scorer's conventions: history turns joined by ``"\\n"`` and ending in ``"\\n\\n"``, the
fact ending in ``"\\n"``.

- naturalness: the gold response vs. the same response with a Poisson(3) span repeated, deleted or shuffled;
- coherence: the gold response vs. a gold response of another dialogue, for the same history;
- engagingness: an informative gold response (it cites knowledge, at least ``min_words`` words) vs. a dull,
  uninformative one. The paper sampled dull responses from a small DialoGPT; offline we draw them from a
  bank of generic back-channel replies (:data:`DULL_RESPONSES`) and from the corpus's own short turns that
  share no content word with the fact, which is the kind of reply DialoGPT produces without a prompt;
- groundedness: a sentence of the cited knowledge (half the time lightly reworded into a conversational
  paraphrase, standing in for the paper's PEGASUS paraphrases) vs. a sentence of an unrelated dialogue's
  knowledge, with the same fact.

    >>> from nlgeval_training.data import Dialogue
    >>> dlg = [Dialogue(f"c{i}", [f"hello there number {i} how are you", f"I am fine thanks {i} and you",
    ...        f"great to hear that friend {i} today"]) for i in range(5)]
    >>> recs = naturalness(dlg, seed=0)
    >>> {r["label"] for r in recs} == {0, 1}
    True
"""

from __future__ import annotations

from typing import Any

import random
import re

from nlgeval_runtime.sentences import split_sentences

from nlgeval_training.boolqa import make_record
from nlgeval_training.data import Dialogue
from nlgeval_training.pseudo.common import finalize, span_pairs
from nlgeval_training.retrieval import tokenize

TASK = "dialogue"

#: Generic replies of the kind a dialogue model gives when it has nothing to say.
DULL_RESPONSES = (
    "I don't know.",
    "Yeah.",
    "Yes.",
    "No.",
    "Ok.",
    "Okay, cool.",
    "That's cool.",
    "That is interesting.",
    "Oh really?",
    "I see.",
    "Haha, yes.",
    "Me too.",
    "I'm not sure.",
    "Sounds good.",
    "Nice.",
    "Wow.",
    "I guess so.",
    "Maybe.",
    "That's nice.",
    "Hmm, I don't know about that.",
    "I like it.",
    "Same here.",
    "Right.",
    "Sure.",
    "Lol.",
    "I have no idea.",
    "That's true.",
    "Good to know.",
    "I agree.",
    "Interesting.",
    "Yeah, I think so.",
    "Not really.",
    "I don't really know much about that.",
    "Cool, cool.",
    "Ha, nice.",
    "What do you mean?",
    "I'm not sure what you mean.",
    "Yes, I know.",
    "Oh, okay.",
    "Thanks!",
)

_PREFIXES = ("Did you know that {}", "I read that {}", "Apparently {}", "Fun fact: {}", "I heard that {}")


def history_text(turns: list[str]) -> str:
    """Turns joined by newlines, ending with a blank line (the scorer's dialogue-history convention)."""
    return "\n".join(t.strip() for t in turns) + "\n\n"


def fact_text(fact: str) -> str:
    return fact.strip() + "\n"


def _pairs(dialogues: list[Dialogue], history_turns: int, rng: random.Random, per_dialogue: int):
    """(dialogue, turn index) pairs with at least one history turn, ``per_dialogue`` per dialogue."""
    for dlg in dialogues:
        idx = list(range(1, len(dlg.turns)))
        rng.shuffle(idx)
        for t in idx[:per_dialogue]:
            yield dlg, t, dlg.turns[max(0, t - history_turns) : t]


def naturalness(
    dialogues: list[Dialogue],
    seed: int = 0,
    *,
    lam: float = 3.0,
    per_dialogue: int = 3,
    min_words: int = 4,
    ops: tuple[str, ...] | None = None,
    limit: int | None = None,
    dimension: str = "naturalness",
) -> list[dict]:
    """Positive: a gold response. Negative: the response damaged by one of ``ops`` (default: a
    Poisson(lam) span repeated/deleted/shuffled)."""
    groups = ((dlg.id, dlg.turns) for dlg in dialogues)
    records = span_pairs(
        TASK, dimension, groups, random.Random(seed), lam=lam, per_group=per_dialogue, min_words=min_words, ops=ops
    )
    return finalize(records, seed, limit)


def understandability(dialogues: list[Dialogue], seed: int = 0, **options) -> list[dict]:
    """The naturalness recipe asked as "Is this an understandable response in the dialogue?"."""
    return naturalness(dialogues, seed, dimension="understandability", **options)


def coherence(
    dialogues: list[Dialogue],
    seed: int = 0,
    *,
    history_turns: int = 3,
    per_dialogue: int = 3,
    same_dialogue_rate: float = 0.0,
    limit: int | None = None,
) -> list[dict]:
    """Positive: the gold response to a history. Negative: a gold response from a different dialogue, or
    (with probability ``same_dialogue_rate``) the reply to another, distant turn of the same conversation
    (hard: on topic, but not an answer to this history)."""
    if len(dialogues) < 2:
        raise ValueError("dialogue coherence needs at least two dialogues (negatives come from another one)")
    rng = random.Random(seed)
    records = []
    for dlg, t, hist in _pairs(dialogues, history_turns, rng, per_dialogue):
        own = set(dlg.turns)
        foreign = None
        if same_dialogue_rate and rng.random() < same_dialogue_rate:
            window = set(dlg.turns[max(0, t - history_turns - 1) : t + 3])
            distant = [u for k, u in enumerate(dlg.turns) if abs(k - t) > 3 and u not in window and len(u.split()) >= 4]
            if distant:
                foreign = rng.choice(distant)
        for _ in range(20 if foreign is None else 0):  # a generic turn ("lol") can occur in both dialogues
            other = rng.choice(dialogues)
            candidate = rng.choice(other.turns[1:])
            if other is not dlg and candidate not in own:
                foreign = candidate
                break
        if foreign is None:
            continue
        h = history_text(hist)
        records.append(make_record(TASK, "coherence", 1, dlg.id, output=dlg.turns[t], context=h))
        records.append(make_record(TASK, "coherence", 0, dlg.id, output=foreign, context=h))
    return finalize(records, seed, limit)


def _first_sentences(text: str, n: int | None) -> str:
    if n is None:
        return text
    return " ".join(split_sentences(text)[:n]) or text


def engagingness(
    dialogues: list[Dialogue],
    seed: int = 0,
    *,
    history_turns: int = 3,
    per_dialogue: int = 3,
    min_words: int = 10,
    fact_sentences: int | None = 3,
    limit: int | None = None,
) -> list[dict]:
    """Positive: an informative gold response that cites knowledge. Negative: a dull reply (see module doc)."""
    rng = random.Random(seed)
    mined = sorted({t for d in dialogues for t in d.turns if 1 <= len(t.split()) <= 4})
    records = []
    for dlg in dialogues:
        cands = [
            t
            for t in range(1, len(dlg.turns))
            if t < len(dlg.knowledge) and dlg.knowledge[t] and len(dlg.turns[t].split()) >= min_words
        ]
        rng.shuffle(cands)
        for t in cands[:per_dialogue]:
            fact = fact_text(_first_sentences(dlg.knowledge[t][0], fact_sentences))
            fact_words = set(tokenize(fact))
            dull_pool = [d for d in rng.sample(mined, min(20, len(mined))) if not set(tokenize(d)) & fact_words]
            dull = rng.choice(dull_pool) if dull_pool and rng.random() < 0.5 else rng.choice(DULL_RESPONSES)
            h = history_text(dlg.turns[max(0, t - history_turns) : t])
            records.append(make_record(TASK, "engagingness", 1, dlg.id, output=dlg.turns[t], context=h, fact=fact))
            records.append(make_record(TASK, "engagingness", 0, dlg.id, output=dull, context=h, fact=fact))
    return finalize(records, seed, limit)


def paraphrase(sentence: str, rng: random.Random) -> str:
    """A close conversational paraphrase: bracketed asides dropped, framed as a remark in a chat."""
    core = re.sub(r"\s*[\(\[][^\)\]]*[\)\]]", "", sentence).strip()
    if (
        core
        and core[0].isupper()
        and not core[:2].isupper()
        and core.split()[0].lower() in ("the", "a", "an", "it", "in", "this")
    ):
        core = core[0].lower() + core[1:]
    return rng.choice(_PREFIXES).format(core)


def groundedness(
    dialogues: list[Dialogue],
    seed: int = 0,
    *,
    per_dialogue: int = 3,
    fact_sentences: int | None = 3,
    paraphrase_rate: float = 0.5,
    turns_per_dialogue: int = 0,
    limit: int | None = None,
) -> list[dict]:
    """Positive: a knowledge sentence (or a close paraphrase). Negative: an unrelated knowledge sentence.

    With ``turns_per_dialogue``, also real replies: a gold turn that shares content words with the
    knowledge it cites is a positive against that fact, a gold turn of another dialogue a negative.
    """
    rng = random.Random(seed)
    knowledge = [(d.id, k) for d in dialogues for ks in d.knowledge for k in ks]
    knowledge += [(d.id, f) for d in dialogues for f in d.facts]
    if len({dlg_id for dlg_id, _ in knowledge}) < 2:
        raise ValueError("groundedness needs knowledge from at least two dialogues (negatives come from another)")
    sentences: dict[str, list[str]] = {}

    def split(passage: str) -> list[str]:
        # Reading sets repeat across dialogues: split each passage once.
        if passage not in sentences:
            sentences[passage] = split_sentences(passage) or [passage]
        return sentences[passage]

    records = []
    for dlg in dialogues:
        passages = sorted({k for ks in dlg.knowledge for k in ks} | set(dlg.facts))
        rng.shuffle(passages)
        for passage in passages[:per_dialogue]:
            fact_sents = split(passage)
            if fact_sentences is not None:
                fact_sents = fact_sents[:fact_sentences]
            if not fact_sents:
                continue
            fact = fact_text(" ".join(fact_sents))
            pos = rng.choice(fact_sents)
            if rng.random() < paraphrase_rate:
                pos = paraphrase(pos, rng)
            neg = None
            for _ in range(20):  # reading sets overlap across dialogues: the negative must not be in the fact
                other_id, other = rng.choice(knowledge)
                candidate = rng.choice(split(other))
                if other_id != dlg.id and other not in passages and candidate not in fact:
                    neg = candidate
                    break
            if neg is None:
                continue
            if rng.random() < paraphrase_rate:
                neg = paraphrase(neg, rng)
            records.append(make_record(TASK, "groundedness", 1, dlg.id, output=pos, fact=fact))
            records.append(make_record(TASK, "groundedness", 0, dlg.id, output=neg, fact=fact))
        if turns_per_dialogue:
            records.extend(_grounded_turns(dlg, dialogues, rng, turns_per_dialogue, fact_sentences))
    return finalize(records, seed, limit)


def _grounded_turns(
    dlg: Dialogue, dialogues: list[Dialogue], rng: random.Random, n: int, fact_sentences: int | None
) -> list[dict]:
    """Groundedness pairs of real replies (see :func:`groundedness`)."""
    out: list[dict] = []
    cands = [t for t in range(len(dlg.turns)) if t < len(dlg.knowledge) and dlg.knowledge[t]]
    rng.shuffle(cands)
    for t in cands:
        if len(out) >= 2 * n:
            break
        fact = fact_text(_first_sentences(dlg.knowledge[t][0], fact_sentences))
        fact_words = _content(fact)
        if len(_content(dlg.turns[t]) & fact_words) < 2:
            continue  # the reply does not visibly use its knowledge
        other = rng.choice(dialogues)
        if other is dlg or len(other.turns) < 2:
            continue
        neg = rng.choice(other.turns[1:])
        if _content(neg) & fact_words or len(neg.split()) < 4:
            continue
        out.append(make_record(TASK, "groundedness", 1, dlg.id, output=dlg.turns[t], fact=fact))
        out.append(make_record(TASK, "groundedness", 0, dlg.id, output=neg, fact=fact))
    return out


def _content(text: str) -> set[str]:
    """Tokens longer than three characters: the words that show a reply uses its knowledge."""
    return {w for w in tokenize(text) if len(w) > 3}


GENERATORS: dict[str, Any] = {
    "coherence": coherence,
    "naturalness": naturalness,
    "groundedness": groundedness,
    "engagingness": engagingness,
    "understandability": understandability,
}
