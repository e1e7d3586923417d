"""Liveness probes: does each dimension react to the damage it names?

A dimension that scores word salad as fluent as prose, or an invented claim as consistent as a supported
one, cannot fail a quality gate. For every built-in dimension the probe builds pairs of texts, an
original and a damaged copy, and counts the pairs where the damaged copy scores lower:

- fluency family (summarization fluency, dialogue naturalness and understandability, data2text naturalness):
  words shuffled; a span of 3-5 words repeated twice in a row
- summarization coherence: sentences in reverse order; one sentence replaced by a sentence of another document
- summarization relevance: another document's lead instead of this document's; another document's summary instead
  of a second summary of this one (where the texts have one)
- consistency (summarization, fact): a number changed; a claim taken from another document
- dialogue coherence, groundedness: the reply of another dialogue (for groundedness, one that does not use the
  fact: dialogues on one subject share their reading sets)
- dialogue engagingness: a generic reply that says nothing
- data2text informativeness: the utterance of other data
- rag faithfulness: a number of the answer changed; the answer to another question; a sentence of another answer
  added
- rag answer relevance: the answer to another question; an evasive reply
- rag context relevance: the passage retrieved for another question; a passage on the same subject that does not
  answer
- rag context recall: the passages retrieved for another question; only the passage that does not answer

It also measures the standard deviation of each dimension's scores over all texts of its pairs (a varied
set): a dimension whose scores barely move is dead even when it ranks pairs by a hair.

The texts are original, written for these probes (``probe_texts.json`` next to this module, CC0); a
file of the same schema can replace them (``nlgeval probe MODEL --texts FILE``).

    >>> from pytest_nlgeval.core.evaluator import Evaluator
    >>> report = probe(Evaluator(cache=False))                           # doctest: +SKIP
    >>> report.failures(min_liveness=0.85, min_sd=0.05)                  # doctest: +SKIP
    []
"""

from __future__ import annotations

import json
import random
import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pytest_nlgeval.errors import NLGEvalError

__all__ = ["MIN_LIVENESS", "MIN_SD", "Pair", "ProbeReport", "build_pairs", "load_texts", "probe"]

#: the default gate of ``nlgeval probe`` and of the project's own test of the embedded model
MIN_LIVENESS = 0.85
MIN_SD = 0.05
TEXTS = Path(__file__).with_name("probe_texts.json")
FLUENCY_FAMILY = (
    "summarization/fluency",
    "dialogue/naturalness",
    "dialogue/understandability",
    "data2text/naturalness",
)
DULL_REPLIES = (
    "Yeah, I guess so.",
    "Okay.",
    "I don't know.",
    "Hmm, maybe.",
    "That's nice.",
    "Cool.",
    "Sure.",
    "I see.",
)
EVASIVE_ANSWERS = (
    "I'm not sure about that, sorry.",
    "Please check our website for more information.",
    "That is a good question.",
    "I can't help with that right now.",
)
_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)*(?![\w])")


@dataclass(frozen=True)
class Pair:
    """One probe: ``good`` and ``bad`` are the inputs of one check (``output`` plus source, reference, ...)."""

    dimension: str  # task/name
    kind: str
    good: dict
    bad: dict


class ProbeTextError(NLGEvalError, ValueError):
    """A probe text file that does not follow the schema of ``probe_texts.json``."""


def load_texts(path: str | Path | None = None) -> dict[str, list[dict]]:
    """The probe texts: ``{"documents": [...], "dialogues": [...], "utterances": [...], "rag": [...]}``."""
    path = Path(path) if path is not None else TEXTS
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProbeTextError(f"cannot read probe texts {str(path)!r}: {exc}") from None
    need = {
        "documents": ("document", "summary"),
        "dialogues": ("history", "fact", "reply"),
        "utterances": ("data", "reference", "utterance"),
        "rag": ("question", "contexts", "answer", "reference"),
    }
    out: dict[str, list[dict]] = {}
    for section, keys in need.items():
        rows = data.get(section, []) if isinstance(data, dict) else None
        if not isinstance(rows, list):
            raise ProbeTextError(f"{path}: {section!r} must be a list of objects")
        for k, row in enumerate(rows):
            missing = [key for key in keys if not row.get(key)] if isinstance(row, dict) else list(keys)
            if missing:
                raise ProbeTextError(f"{path}: {section}[{k}] lacks {missing}; each entry needs {list(keys)}")
        if 0 < len(rows) < 2:
            raise ProbeTextError(f"{path}: {section!r} needs at least two entries (damage borrows from another)")
        out[section] = rows
    if not any(out.values()):
        raise ProbeTextError(f"{path} holds no documents, dialogues, utterances or rag items")
    return out


# -- damage -------------------------------------------------------------------------------------------------
def _salad(text: str, rng: random.Random) -> str | None:
    words = text.split()
    if len(set(words)) < 3:
        return None
    shuffled = words[:]
    while shuffled == words:
        rng.shuffle(shuffled)
    return " ".join(shuffled)


def _stutter(text: str, rng: random.Random) -> str | None:
    words = text.split()
    if len(words) < 5:
        return None
    n = rng.randint(3, min(5, len(words) - 1))
    at = rng.randrange(0, len(words) - n + 1)
    span = words[at : at + n]
    return " ".join(words[: at + n] + span + span + words[at + n :])


def _change_number(sentence: str, rng: random.Random) -> str | None:
    spots = list(_NUMBER.finditer(sentence))
    if not spots:
        return None
    m = rng.choice(spots)
    digits = m.group(0).replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None
    factor = rng.choice((2, 3, 0.5)) if value > 3 else rng.choice((4, 7, 9))
    new = value * factor if value > 3 else factor
    text = f"{new:,.0f}" if "," in m.group(0) else (f"{new:g}" if "." in m.group(0) else str(int(round(new))))
    if text == m.group(0):
        return None
    return sentence[: m.start()] + text + sentence[m.end() :]


def _sentences(text: str) -> list[str]:
    from nlgeval_runtime.sentences import split_sentences

    return split_sentences(text)


def _other(rows: list[dict], k: int, rng: random.Random) -> dict:
    return rows[(k + 1 + rng.randrange(len(rows) - 1)) % len(rows)]


def _ungrounded_reply(rows: list[dict], k: int, fact: str, rng: random.Random) -> str:
    """The reply of another dialogue that does not use ``fact`` (shares fewer than two content words with it):
    dialogues on one subject share reading sets, and a reply of another dialogue that quotes the same fact is
    grounded in it, not a damaged reply."""
    from nlgeval_runtime.claims import content_words

    words = set(content_words(fact))
    start = rng.randrange(len(rows) - 1)
    for step in range(len(rows) - 1):
        other = rows[(k + 1 + (start + step) % (len(rows) - 1)) % len(rows)]
        if len(words & set(content_words(other["reply"]))) < 2:
            return other["reply"].strip()
    return _other(rows, k, rng)["reply"].strip()


def _history(turns: list[str]) -> str:
    return "\n".join(turns) + "\n\n"


def build_pairs(texts: dict[str, list[dict]] | None = None, seed: int = 0) -> dict[str, list[Pair]]:
    """Probe pairs per ``task/dimension`` from the probe texts (a fixed seed gives fixed pairs)."""
    texts = texts if texts is not None else load_texts()
    rng = random.Random(seed)
    pairs: dict[str, list[Pair]] = {}

    def add(dim: str, kind: str, good: dict, bad_output: str | None, **bad_inputs) -> None:
        if bad_output is None or bad_output == good["output"]:
            return
        pairs.setdefault(dim, []).append(Pair(dim, kind, good, {**good, **bad_inputs, "output": bad_output}))

    def fluency(dim: str, text: str) -> None:
        add(dim, "word salad", {"output": text}, _salad(text, rng))
        add(dim, "span repeated twice", {"output": text}, _stutter(text, rng))

    docs = texts.get("documents", [])
    for k, row in enumerate(docs):
        summary = [s.strip() for s in row["summary"]]
        other = _other(docs, k, rng)
        document, joined = row["document"], " ".join(summary)
        for sentence in summary:
            fluency("summarization/fluency", sentence)
        good = {"output": joined, "source": document}
        add("summarization/coherence", "sentences reversed", good, " ".join(reversed(summary)))
        foreign = list(summary)
        foreign[1] = rng.choice(other["summary"]).strip()
        add("summarization/coherence", "sentence of another document", good, " ".join(foreign))
        lead = " ".join(_sentences(document)[:3])
        other_lead = " ".join(_sentences(other["document"])[:3])
        add("summarization/relevance", "another document's lead", {"output": lead, "reference": joined}, other_lead)
        if row.get("references") and other.get("references"):
            # a second human summary of the same document against one of another document
            add(
                "summarization/relevance",
                "another document's summary",
                {"output": row["references"][0], "reference": joined},
                other["references"][0],
            )
        for task in ("summarization", "fact"):
            dim = f"{task}/consistency"
            for sentence in summary:
                changed = _change_number(sentence, rng)
                if changed is not None:
                    add(dim, "number changed", {"output": sentence, "source": document}, changed)
                    break
            claim = rng.choice(summary)
            add(
                dim,
                "claim of another document",
                {"output": claim, "source": document},
                rng.choice(other["summary"]).strip(),
            )

    dialogues = texts.get("dialogues", [])
    for k, row in enumerate(dialogues):
        reply, other = row["reply"].strip(), _other(dialogues, k, rng)
        history, fact = _history(row["history"]), row["fact"].strip() + "\n"
        for dim in ("dialogue/naturalness", "dialogue/understandability"):
            fluency(dim, reply)
        add(
            "dialogue/coherence",
            "reply of another dialogue",
            {"output": reply, "context": history},
            other["reply"].strip(),
        )
        add(
            "dialogue/groundedness",
            "reply of another dialogue",
            {"output": reply, "fact": fact},
            _ungrounded_reply(dialogues, k, fact, random.Random(seed * 7919 + k)),  # the other draws unchanged
        )
        add(
            "dialogue/engagingness",
            "generic reply",
            {"output": reply, "context": history, "fact": fact},
            DULL_REPLIES[k % len(DULL_REPLIES)],
        )

    utterances = texts.get("utterances", [])
    for k, row in enumerate(utterances):
        utterance, other = row["utterance"].strip(), _other(utterances, k, rng)
        fluency("data2text/naturalness", utterance)
        add(
            "data2text/informativeness",
            "utterance of other data",
            {"output": utterance, "reference": row["reference"].strip()},
            other["utterance"].strip(),
        )

    def swap(dim: str, kind: str, good: dict, **bad_inputs) -> None:
        """A pair whose output stays and whose inputs are damaged (retrieval went wrong, not the answer)."""
        pairs.setdefault(dim, []).append(Pair(dim, kind, good, {**good, **bad_inputs}))

    items = texts.get("rag", [])
    for k, row in enumerate(items):
        other = _other(items, k, rng)
        answer, contexts = row["answer"].strip(), [c.strip() for c in row["contexts"]]
        good = {"output": answer, "context": contexts}
        changed = _change_number(answer, rng)
        if changed is not None:
            add("rag/faithfulness", "number changed", good, changed)
        add("rag/faithfulness", "answer to another question", good, other["answer"].strip())
        add("rag/faithfulness", "sentence of another answer added", good, f"{answer} {other['answer'].strip()}")
        asked = {"output": answer, "question": row["question"]}
        add("rag/answer_relevance", "answer to another question", asked, other["answer"].strip())
        add("rag/answer_relevance", "evasive reply", asked, EVASIVE_ANSWERS[k % len(EVASIVE_ANSWERS)])
        passage = {"output": answer, "question": row["question"], "context": contexts[:1]}
        swap(
            "rag/context_relevance",
            "passage retrieved for another question",
            passage,
            context=[other["contexts"][0].strip()],
        )
        if len(contexts) > 1:
            swap(
                "rag/context_relevance",
                "passage on the same subject that does not answer",
                passage,
                context=contexts[1:2],
            )
        recall = {"output": answer, "reference": row["reference"].strip(), "context": contexts}
        swap(
            "rag/context_recall",
            "passages retrieved for another question",
            recall,
            context=[c.strip() for c in other["contexts"]],
        )
        if len(contexts) > 1:
            swap("rag/context_recall", "only the passage that does not answer", recall, context=contexts[1:])
    return pairs


# -- running ------------------------------------------------------------------------------------------------
@dataclass
class DimensionResult:
    dimension: str
    pairs: int = 0
    correct: int = 0
    sd: float = 0.0
    by_kind: dict[str, list[int]] = field(default_factory=dict)  # kind -> [correct, pairs]
    refused: str | None = None
    examples: list[dict] = field(default_factory=list)  # pairs ranked wrongly (at most 3)

    @property
    def liveness(self) -> float:
        return self.correct / self.pairs if self.pairs else 0.0

    def passes(self, min_liveness: float, min_sd: float) -> bool:
        return self.refused is not None or (self.liveness >= min_liveness and self.sd >= min_sd)

    def to_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "pairs": self.pairs,
            "correct": self.correct,
            "liveness": round(self.liveness, 4),
            "sd": round(self.sd, 4),
            "refused": self.refused,
            "by_kind": {k: {"correct": c, "pairs": n} for k, (c, n) in self.by_kind.items()},
            "wrong_examples": self.examples,
        }


@dataclass
class ProbeReport:
    model: str
    fingerprint: str
    results: dict[str, DimensionResult]

    def failures(self, min_liveness: float = MIN_LIVENESS, min_sd: float = MIN_SD) -> list[DimensionResult]:
        """Served dimensions below either gate (refused ones never fail: they are never answered)."""
        return [r for r in self.results.values() if not r.passes(min_liveness, min_sd)]

    def to_dict(self, min_liveness: float = MIN_LIVENESS, min_sd: float = MIN_SD) -> dict[str, Any]:
        return {
            "model": self.model,
            "fingerprint": self.fingerprint,
            "gate": {"min_liveness": min_liveness, "min_sd": min_sd},
            "passed": not self.failures(min_liveness, min_sd),
            "dimensions": [r.to_dict() for r in self.results.values()],
        }

    def table(self, min_liveness: float = MIN_LIVENESS, min_sd: float = MIN_SD) -> str:
        """A markdown table: one row per dimension."""
        lines = ["| dimension | pairs | liveness | sd | by damage | verdict |", "|---|---|---|---|---|---|"]
        for r in self.results.values():
            if r.refused is not None:
                lines.append(f"| {r.dimension} | - | - | - | - | refused: {r.refused} |")
                continue
            kinds = "; ".join(f"{k} {c}/{n}" for k, (c, n) in r.by_kind.items())
            verdict = (
                "live" if r.passes(min_liveness, min_sd) else ("DEAD (sd)" if r.liveness >= min_liveness else "DEAD")
            )
            lines.append(f"| {r.dimension} | {r.pairs} | {r.liveness:.3f} | {r.sd:.3f} | {kinds} | {verdict} |")
        return "\n".join(lines)


_PLURAL = {
    "source": "sources",
    "reference": "references",
    "context": "contexts",
    "fact": "facts",
    "question": "questions",
}


def probe(
    evaluator, pairs: dict[str, list[Pair]] | None = None, dimensions: Iterable[str] | None = None
) -> ProbeReport:
    """Score every pair with ``evaluator`` (one batched call per dimension and side) and summarise."""
    from pytest_nlgeval.core.dimensions import DimensionNotServedError

    pairs = pairs if pairs is not None else build_pairs()
    wanted = list(dimensions) if dimensions is not None else sorted(pairs)
    unknown = [d for d in wanted if d not in pairs]
    if unknown:
        raise ValueError(f"no probe pairs for {unknown}; the probe covers {', '.join(sorted(pairs))}")
    results: dict[str, DimensionResult] = {}
    for key in wanted:
        task, name = key.split("/")
        result = results[key] = DimensionResult(key)
        try:
            good = _score(evaluator, [p.good for p in pairs[key]], name, task)
            bad = _score(evaluator, [p.bad for p in pairs[key]], name, task)
        except DimensionNotServedError as exc:
            result.refused = str(exc).split(": ", 1)[-1].split(". Score it")[0]
            continue
        for pair, g, b in zip(pairs[key], good, bad):
            ok = b < g
            result.pairs += 1
            result.correct += ok
            tally = result.by_kind.setdefault(pair.kind, [0, 0])
            tally[0] += ok
            tally[1] += 1
            if not ok and len(result.examples) < 3:
                result.examples.append(
                    {
                        "kind": pair.kind,
                        "good": pair.good["output"],
                        "good_score": round(g, 4),
                        "bad": pair.bad["output"],
                        "bad_score": round(b, 4),
                    }
                )
        result.sd = statistics.pstdev(good + bad) if len(good) + len(bad) > 1 else 0.0
    return ProbeReport(evaluator.model_ref, evaluator.fingerprint_id, results)


def _score(evaluator, cases: list[dict], name: str, task: str) -> list[float]:
    inputs: dict[str, list] = {}
    for argument, plural in _PLURAL.items():
        values = [c.get(argument) for c in cases]
        if any(v is not None for v in values):
            inputs[plural] = values
    return evaluator.score_batch([c["output"] for c in cases], name, task=task, recorder=None, **inputs)
