"""Construct validity of an induced metric: sensitivity and stability (Ryan et al., 2025, Section 3.2).

* Sensitivity = (1/N) sum_i 1[s_worse_i < s_orig_i]: how often a degraded output scores lower.
* Stability = 1 - (1/N) sum_i |s_orig_i - s_same_i|: how little a quality-preserving edit moves the score.

``s`` are normalised scores. The paper does not spell out the normalisation; here every score is min-max
normalised with the range of the metric's scores on the original outputs (clipped to [0, 1]), so stability
is 1 for a metric that ignores the edits and drops by the share of the observed range that an edit moves.

Perturbations are rule-based (deterministic for a seed) and, when an LLM is configured, also LLM-written
(the paper asks an LLM for degradation strategies; same-quality edits come from a fixed list of
transformations). Rule-based ones:

* worse: truncation (the second half is cut), sentence shuffling, an injected contradiction (a sentence of
  the output negated and added next to it), repetition (a sentence repeated three times);
* same: whitespace edits, punctuation edits (spacing around punctuation, a final full stop), casing edits
  (a function word's case), synonym swaps from a small fixed list.

Example::

    >>> perturb_worse("The cat sat. It was warm. Then it slept.", "truncate")
    'The cat sat. It'
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

__all__ = [
    "WORSE",
    "SAME",
    "perturb_worse",
    "perturb_same",
    "RobustnessReport",
    "measure_robustness",
    "sensitivity",
    "stability",
]

WORSE = ("truncate", "shuffle_sentences", "contradiction", "repetition")
SAME = ("whitespace", "punctuation", "casing", "synonyms")

_SENT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_AUX = re.compile(r"\b(is|are|was|were|can|will|would|should|could|does|do|did|has|have|had|must)\b", re.I)
_SYNONYMS = {  # pairs that stay grammatical whichever part of speech the word has in context
    "big": "large",
    "large": "big",
    "small": "little",
    "little": "small",
    "quick": "fast",
    "fast": "quick",
    "maybe": "perhaps",
    "perhaps": "maybe",
    "often": "frequently",
    "frequently": "often",
    "important": "significant",
    "significant": "important",
    "enough": "sufficient",
    "sufficient": "enough",
    "easy": "simple",
    "simple": "easy",
    "hard": "difficult",
    "difficult": "hard",
    "rapid": "swift",
    "mistake": "error",
    "error": "mistake",
    "idea": "notion",
    "problem": "issue",
    "issue": "problem",
    "method": "approach",
    "choose": "select",
    "select": "choose",
    "buy": "purchase",
    "purchase": "buy",
    "car": "automobile",
    "however": "nevertheless",
    "also": "additionally",
    "usually": "typically",
    "typically": "usually",
    "quickly": "rapidly",
    "rapidly": "quickly",
    "huge": "enormous",
}
_FUNCTION_WORDS = ("the", "a", "and", "of", "to", "in", "for", "with", "on")


def split_sentences(text: str) -> list[str]:
    """Sentences split at ., ! or ? followed by whitespace and a capital letter, digit or quote."""
    return [s for s in _SENT.split(text.strip()) if s]


def _negate(sentence: str) -> str:
    m = _AUX.search(sentence)
    if m:
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    body = sentence.rstrip(".!?")
    return f"It is not true that {body[:1].lower()}{body[1:]}."


def perturb_worse(text: str, kind: str, seed: int = 0) -> str:
    """A degraded version of ``text`` (``kind`` in :data:`WORSE`); returns ``text`` unchanged if it cannot
    apply (e.g. shuffling a single sentence)."""
    rng = random.Random(seed)
    sents = split_sentences(text)
    if kind == "truncate":
        words = text.split()
        if len(words) < 2:
            return text
        return " ".join(words[: max(1, len(words) // 2)])
    if kind == "shuffle_sentences":
        if len(sents) < 2:
            words = text.split()
            if len(words) < 3:
                return text
            rng.shuffle(words)
            return " ".join(words)
        shuffled = sents[:]
        while shuffled == sents:
            rng.shuffle(shuffled)
        return " ".join(shuffled)
    if kind == "contradiction":
        if not sents:
            return text
        i = rng.randrange(len(sents))
        out = sents[: i + 1] + [_negate(sents[i])] + sents[i + 1 :]
        return " ".join(out)
    if kind == "repetition":
        if not sents:
            return text
        i = rng.randrange(len(sents))
        out = sents[: i + 1] + [sents[i]] * 2 + sents[i + 1 :]
        return " ".join(out)
    raise ValueError(f"unknown degradation {kind!r}; choose from {WORSE}")


def perturb_same(text: str, kind: str, seed: int = 0) -> str:
    """A quality-preserving edit of ``text`` (``kind`` in :data:`SAME`); unchanged if nothing applies."""
    rng = random.Random(seed)
    if kind == "whitespace":
        words = text.split(" ")
        if len(words) > 2:
            i = rng.randrange(1, len(words))
            words[i] = " " + words[i]
        return " ".join(words) + "\n"
    if kind == "punctuation":
        edited = re.sub(r"\s+([,;:])", r"\1", text)
        edited = re.sub(r"([,;:])(?=[^\s\d])", r"\1 ", edited)
        if edited != text:
            return edited
        stripped = text.rstrip()
        if stripped and stripped[-1] not in ".!?\"')":
            return stripped + "."
        if stripped.endswith(".") and not stripped.endswith(".."):
            return stripped[:-1]  # a missing final full stop does not change what the text says
        return text
    if kind == "casing":
        words = text.split(" ")
        candidates = [i for i, w in enumerate(words) if i > 0 and w in _FUNCTION_WORDS]
        if not candidates:
            return text
        i = rng.choice(candidates)
        words[i] = words[i].upper() if len(words[i]) == 1 else words[i].capitalize()
        return " ".join(words)
    if kind == "synonyms":

        def swap(m: re.Match) -> str:
            word = m.group(0)
            repl = _SYNONYMS.get(word.lower())
            if repl is None:
                return word
            return repl.capitalize() if word[0].isupper() else repl

        pattern = re.compile(r"\b(" + "|".join(map(re.escape, _SYNONYMS)) + r")\b", re.I)
        return pattern.sub(swap, text, count=2)
    raise ValueError(f"unknown same-quality edit {kind!r}; choose from {SAME}")


def _normalise(values: Sequence[float], lo: float, hi: float) -> list[float]:
    span = hi - lo
    if span <= 0:
        return [0.5 for _ in values]
    return [min(1.0, max(0.0, (v - lo) / span)) for v in values]


def sensitivity(orig: Sequence[float], worse: Sequence[float]) -> float:
    """Share of pairs where the degraded output scores strictly lower (pairs with ``nan`` skipped)."""
    pairs = [(o, w) for o, w in zip(orig, worse) if math.isfinite(o) and math.isfinite(w)]
    return sum(1 for o, w in pairs if w < o) / len(pairs) if pairs else math.nan


def stability(orig_norm: Sequence[float], same_norm: Sequence[float]) -> float:
    """1 minus the mean absolute change of normalised scores under same-quality edits."""
    pairs = [(o, s) for o, s in zip(orig_norm, same_norm) if math.isfinite(o) and math.isfinite(s)]
    return 1.0 - sum(abs(o - s) for o, s in pairs) / len(pairs) if pairs else math.nan


@dataclass
class RobustnessReport:
    """Sensitivity and stability overall and per perturbation, with the number of pairs behind each."""

    sensitivity: float
    stability: float
    per_perturbation: dict[str, dict] = field(default_factory=dict)
    n_rows: int = 0
    normalisation: str = "min-max over the metric's scores on the original outputs, clipped to [0, 1]"
    llm_perturbations: bool = False

    def to_dict(self) -> dict:
        clean = lambda v: None if isinstance(v, float) and not math.isfinite(v) else v  # noqa: E731
        return {
            "sensitivity": clean(self.sensitivity),
            "stability": clean(self.stability),
            "per_perturbation": {k: {kk: clean(vv) for kk, vv in d.items()} for k, d in self.per_perturbation.items()},
            "n_rows": self.n_rows,
            "normalisation": self.normalisation,
            "llm_perturbations": self.llm_perturbations,
        }


def measure_robustness(
    score_batch: Callable[[list[str], list, list], list[float]],
    outputs: Sequence[str],
    inputs: Sequence | None = None,
    references: Sequence | None = None,
    *,
    seed: int = 0,
    worse: Sequence[str] = WORSE,
    same: Sequence[str] = SAME,
    lm=None,
    task: str = "",
    target: str = "",
) -> RobustnessReport:
    """Score every output and its perturbations with ``score_batch(outputs, inputs, references)``.

    Each rule-based perturbation is applied to every output where it changes the text; with ``lm`` an
    LLM-written degradation and an LLM-written paraphrase of each output are added (kinds ``llm_worse`` and
    ``llm_same``).
    """
    n = len(outputs)
    inputs = list(inputs) if inputs is not None else [None] * n
    references = list(references) if references is not None else [None] * n
    texts: list[str] = list(outputs)
    owners: list[int] = list(range(n))
    kinds: list[str] = ["orig"] * n
    for j, kind in enumerate(worse):
        for i, out in enumerate(outputs):
            changed = perturb_worse(out, kind, seed=seed * 1000 + i * 10 + j)
            if changed != out:
                texts.append(changed)
                owners.append(i)
                kinds.append("worse:" + kind)
    for j, kind in enumerate(same):
        for i, out in enumerate(outputs):
            changed = perturb_same(out, kind, seed=seed * 1000 + i * 10 + j)
            if changed != out:
                texts.append(changed)
                owners.append(i)
                kinds.append("same:" + kind)
    if lm is not None:
        for i, (w, s) in enumerate(llm_perturbations(outputs, lm, task=task, target=target)):
            if w and w != outputs[i]:
                texts.append(w)
                owners.append(i)
                kinds.append("worse:llm_worse")
            if s and s != outputs[i]:
                texts.append(s)
                owners.append(i)
                kinds.append("same:llm_same")
    scores = list(score_batch(texts, [inputs[i] for i in owners], [references[i] for i in owners]))
    orig = scores[:n]
    finite = [v for v in orig if math.isfinite(v)]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    per: dict[str, dict] = {}
    all_worse: tuple[list, list] = ([], [])
    all_same: tuple[list, list] = ([], [])
    for kind in dict.fromkeys(kinds[n:]):
        idx = [k for k in range(n, len(texts)) if kinds[k] == kind]
        o = [orig[owners[k]] for k in idx]
        p = [scores[k] for k in idx]
        if kind.startswith("worse:"):
            per[kind] = {"sensitivity": sensitivity(o, p), "n": len(idx)}
            all_worse[0].extend(o)
            all_worse[1].extend(p)
        else:
            on, pn = _normalise(o, lo, hi), _normalise(p, lo, hi)
            per[kind] = {"stability": stability(on, pn), "n": len(idx)}
            all_same[0].extend(on)
            all_same[1].extend(pn)
    return RobustnessReport(
        sensitivity=sensitivity(*all_worse),
        stability=stability(*all_same),
        per_perturbation=per,
        n_rows=n,
        llm_perturbations=lm is not None,
    )


def llm_perturbations(outputs: Sequence[str], lm, *, task: str, target: str) -> list[tuple[str | None, str | None]]:
    """For each output, an LLM-degraded version (worse on ``target``) and a same-quality rewrite."""
    from pytest_nlgeval.llm.cache import JudgeServerError, require_dspy

    dspy: Any = require_dspy()

    class DegradeOutput(dspy.Signature):
        """Rewrite the output of a text-generation task so that it is clearly worse on the named quality,
        in a way a careful human rater would notice, while keeping its topic and approximate length."""

        task: str = dspy.InputField()
        quality: str = dspy.InputField()
        output: str = dspy.InputField()
        worse_output: str = dspy.OutputField()

    class ParaphraseOutput(dspy.Signature):
        """Rewrite the output of a text-generation task with different wording but exactly the same
        content and the same quality on the named quality."""

        task: str = dspy.InputField()
        quality: str = dspy.InputField()
        output: str = dspy.InputField()
        same_quality_output: str = dspy.OutputField()

    degrade, para = dspy.Predict(DegradeOutput), dspy.Predict(ParaphraseOutput)
    results = []
    with dspy.context(lm=lm, adapter=dspy.ChatAdapter(use_json_adapter_fallback=False)):
        for out in outputs:
            pair: list[str | None] = []
            for predictor, field_name in ((degrade, "worse_output"), (para, "same_quality_output")):
                try:
                    pair.append(str(getattr(predictor(task=task, quality=target, output=out), field_name)))
                except JudgeServerError:
                    raise  # a failing server is the user's to fix, not a rewrite to skip
                except Exception:  # an unparseable rewrite is skipped, not guessed
                    pair.append(None)
            results.append((pair[0], pair[1]))
    return results
