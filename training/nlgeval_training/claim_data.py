"""Human-labelled claim-support pairs as Boolean QA: the training data of the fact dimensions' head.

A summary's or an answer's claim is supported by its evidence or it is not; natural-language inference data
labelled by people asks exactly that. UniEval (Zhong et al., 2022, sec. 3.1) puts entailment and paraphrase
pairs in an intermediate phase before the pseudo data and loses 0.055 SummEval consistency without them;
SummaC (Laban et al., TACL 2022) scores consistency with an NLI model alone. Here the pairs are asked in the
very format the consistency dimension is scored in::

    question: Is this claim consistent with the document? </s> claim: {hypothesis} </s> document: {premise}

with entailment as Yes and both neutral and contradiction as No (a claim that the evidence does not state is
not supported, whatever the reason).

Two input formats are read, and the caller says which, because their integer labels mean opposite things:

- ``binary``: ``{"premise", "hypothesis", "label": 1 entailed / 0 not}`` (DocNLI's binarised MultiNLI and
  FEVER-NLI, docs/data.md);
- ``snli``: ``{"premise", "hypothesis", "label": "entailment" | "neutral" | "contradiction"}``.

A fixed share of each named set's premises is held out for choosing (the same premise always lands on the
same side, so no evidence text is both trained on and measured on); :func:`build_claim_data` returns both
parts, the held-out part as plain pairs for ``benchmarks/claim_support.py``.

    >>> rec = claim_record("mnli", "A man is sleeping.", "A man sleeps.", 1)
    >>> rec["input"]
    'question: Is this claim consistent with the document? </s> claim: A man sleeps. </s> document: A man is sleeping.'
"""

from __future__ import annotations

import random
from pathlib import Path

from nlgeval_training.boolqa import question_input
from nlgeval_training.data import DataError, read_jsonl
from nlgeval_training.pseudo.common import is_held_out

TASK = "claim"
QUESTION = "Is this claim consistent with the document?"
FORMATS = ("binary", "snli")
_SNLI = {"entailment": 1, "neutral": 0, "contradiction": 0}


def claim_record(name: str, premise: str, hypothesis: str, label: int) -> dict:
    """One Boolean-QA record of set ``name``; the premise names the group (held out together)."""
    text = question_input(QUESTION, claim=hypothesis.strip(), document=premise.strip())
    return {"input": text, "label": int(label), "task": TASK, "dimension": name, "group": f"{name}:{premise[:200]}"}


def _label(obj: dict, fmt: str, where: str) -> int | None:
    label = obj.get("label")
    if fmt == "binary":
        if label in (0, 1) and not isinstance(label, bool):
            return int(label)
        raise DataError(f"{where}: label {label!r} is not 0 or 1; a three-way file is read with format 'snli'")
    if label == "-" or label is None:
        return None  # no gold label
    if label not in _SNLI:
        raise DataError(f"{where}: label {label!r} is not one of {sorted(_SNLI)}; a 0/1 file is read as 'binary'")
    return _SNLI[label]


def read_pairs(path: str | Path, fmt: str) -> list[tuple[str, str, int]]:
    """``(premise, hypothesis, label)`` of a file in format ``fmt`` (``binary`` or ``snli``)."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r}: choose one of {FORMATS}")
    out = []
    for i, obj in enumerate(read_jsonl(path)):
        where = f"{path} row {i + 1}"
        missing = [k for k in ("premise", "hypothesis", "label") if k not in obj]
        if missing:
            raise DataError(f"{where} lacks {missing}; expected premise, hypothesis and label")
        label = _label(obj, fmt, where)
        premise, hypothesis = str(obj["premise"]).strip(), str(obj["hypothesis"]).strip()
        if label is None or not premise or not hypothesis:
            continue
        out.append((premise, hypothesis, label))
    return out


def build_claim_data(
    sources: list[tuple[str, str, str | Path]],
    *,
    held_out: float = 0.1,
    hold_out_from: set[str] | None = None,
    seed: int = 0,
) -> tuple[list[dict], list[dict]]:
    """``(train records, held-out pairs)`` from ``[(name, format, file), ...]``.

    Sets named in ``hold_out_from`` (default: every set) give ``held_out`` of their premises to the held-out
    part, as ``{"set", "premise", "hypothesis", "label"}`` rows; an input seen with both labels is dropped.
    """
    hold = {name for name, _, _ in sources} if hold_out_from is None else hold_out_from
    train: list[dict] = []
    held: list[dict] = []
    for name, fmt, path in sources:
        seen: dict[tuple[str, str], set[int]] = {}
        pairs = read_pairs(path, fmt)
        for premise, hypothesis, label in pairs:
            seen.setdefault((premise, hypothesis), set()).add(label)
        done: set[tuple[str, str]] = set()
        for premise, hypothesis, label in pairs:
            key = (premise, hypothesis)
            if len(seen[key]) > 1 or key in done:
                continue
            done.add(key)
            rec = claim_record(name, premise, hypothesis, label)
            if name in hold and is_held_out(rec["group"], held_out):
                held.append({"set": name, "premise": premise, "hypothesis": hypothesis, "label": label})
            else:
                train.append(rec)
    random.Random(seed).shuffle(train)
    return train, held
