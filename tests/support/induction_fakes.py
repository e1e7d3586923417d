"""Offline stand-ins for the induction tests: a synthetic labelled dataset and a rule-following fake LM.

``RuleLM`` answers DSPy's ChatAdapter prompts the way a cooperative model would, by reading the prompt:
it proposes fixed axes, writes rubrics, and judges outputs by the "quality N" marker that
:func:`synthetic_rows` writes into each output. A criterion starting with "Inverse" scores 6 - N (a judge
that runs against the labels), one starting with "Noise" scores by a hash of the text, and an output
containing "UNPARSEABLE" gets an answer that is not a score at all.
"""

from __future__ import annotations

import hashlib
import random
import re

import dspy
from dspy.clients.base_lm import BaseLM

AXES = [
    "Quality: the answer addresses the question fully",
    "Inverse: the answer is terse",
    "Noise: the answer uses the letter e",
    "Quality of detail: the answer gives specifics",
]


def synthetic_rows(n: int = 60, seed: int = 0) -> list[tuple[int, dict]]:
    """(line, row) records: the output's length and its "quality N" marker follow the label N."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        q = 1 + i % 5
        words = " ".join(
            rng.choice(["alpha", "beta", "gamma", "delta", "omega"]) for _ in range(3 * q + rng.randint(0, 2))
        )
        rows.append(
            (
                i + 1,
                {
                    "input": f"question {i}?",
                    "output": f"answer {i} with quality {q}: {words}.",
                    "references": [f"reference {i} {words}"],
                    "label": q,
                },
            )
        )
    return rows


def _field(text: str, name: str) -> str | None:
    m = re.search(r"\[\[ ## " + re.escape(name) + r" ## \]\]\n(.*?)(?:\n\n\[\[ ## |\n\nRespond|\Z)", text, re.S)
    return m.group(1).strip() if m else None


def _fmt(fields: dict) -> str:
    return "\n\n".join(f"[[ ## {k} ## ]]\n{v}" for k, v in fields.items()) + "\n\n[[ ## completed ## ]]"


class RuleLM(BaseLM):
    """A deterministic fake model (see the module docstring); counts the prompts it answered."""

    def __init__(self, temperature: float = 0.0):
        super().__init__(model="fake/rule-lm", model_type="chat", temperature=temperature, max_tokens=500)
        self.prompts: list[str] = []

    def __call__(self, prompt=None, *, messages=None, **kwargs):
        last = messages[-1]["content"] if messages else str(prompt)
        self.prompts.append(last)
        return [self.answer(last, kwargs)]

    def answer(self, text: str, kwargs: dict) -> str:
        if "new_instruction" in text:  # GEPA's reflection (JSON adapter)
            return '{"new_instruction": "Judge strictly by the quality marker in the output."}'
        if "`[[ ## proposed_instruction ## ]]`" in text:  # MIPROv2's instruction proposer
            return _fmt({"proposed_instruction": "Read the quality marker and score it."})
        if "`[[ ## axes ## ]]`" in text:
            return _fmt({"axes": str(AXES)})
        if "`[[ ## score_1 ## ]]`" in text:
            return _fmt({f"score_{k}": f"an output that deserves {k}" for k in range(1, 6)})
        if "`[[ ## ranking ## ]]`" in text:
            names = [line.split(" - ")[0] for line in (_field(text, "candidates") or "").splitlines()]
            return _fmt({"ranking": str(list(reversed(names)))})
        if "`[[ ## worse_output ## ]]`" in text:
            return _fmt({"worse_output": "quality 1: bad."})
        if "`[[ ## same_quality_output ## ]]`" in text:
            return _fmt({"same_quality_output": _field(text, "output")})
        if "`[[ ## score ## ]]`" in text:
            output = _field(text, "output") or ""
            criterion = _field(text, "criterion") or ""
            if "UNPARSEABLE" in output:
                return _fmt({"rationale": "cannot say", "score": "excellent"})
            m = re.search(r"quality (\d)", output)
            q = int(m.group(1)) if m else 3
            if criterion.startswith("Inverse"):
                q = 6 - q
            elif criterion.startswith("Noise"):
                q = 1 + int(hashlib.sha256(output.encode()).hexdigest(), 16) % 5
            return _fmt({"rationale": f"the output shows quality {q}", "score": str(q)})
        raise AssertionError(f"RuleLM got a prompt it does not know: {text[:300]}")

    def forward(self, prompt=None, messages=None, **kwargs):  # pragma: no cover - __call__ is overridden
        raise NotImplementedError


def dummy_judge_answers(scores: list) -> list[dict]:
    """DummyLM answers for a judge: one ``{"rationale", "score"}`` dict per call."""
    return [{"rationale": f"because {s}", "score": str(s)} for s in scores]


__all__ = ["AXES", "RuleLM", "synthetic_rows", "dummy_judge_answers", "dspy"]
