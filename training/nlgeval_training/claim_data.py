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
from collections.abc import Sequence
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


def _premise_key(premise: str) -> str:
    """Case and spacing ignored: DocNLI ships FEVER's evidence both tokenised ("Palmer ( writer ) .") and not."""
    return "".join(premise.lower().split())


def build_claim_data(
    sources: Sequence[tuple[str, str, str | Path]],
    *,
    held_out: float = 0.1,
    hold_out_from: set[str] | None = None,
    held_out_files: Sequence[tuple[str, str, str | Path]] | None = None,
    generated: list[dict] | None = None,
    seed: int = 0,
) -> tuple[list[dict], list[dict]]:
    """``(train records, held-out pairs)`` from ``[(name, format, file), ...]``.

    Sets named in ``hold_out_from`` (default: every set) give ``held_out`` of their premises to the held-out
    part, as ``{"set", "premise", "hypothesis", "label"}`` rows; an input seen with both labels is dropped.
    ``held_out_files`` are sets whose held-out part comes as a file of its own (``[(name, format, file)]``,
    never trained on). ``generated`` pairs (``{"kind", "premise", "hypothesis", "label"}``, from
    :mod:`nlgeval_training.claim_rules`) become set ``gen-<kind>`` and are held out by premise like the rest.

    Held out by premise across all sets: a premise held out anywhere is trained on nowhere (some sets share
    premises, e.g. edited SNLI and MultiNLI pairs), and a pair that two sets hold is trained on once.
    """
    hold = {name for name, _, _ in sources} if hold_out_from is None else set(hold_out_from)
    sets: list[tuple[str, list[tuple[str, str, int]]]] = [(name, read_pairs(path, fmt)) for name, fmt, path in sources]
    if generated:
        by_kind: dict[str, list[tuple[str, str, int]]] = {}
        for row in generated:
            by_kind.setdefault(f"gen-{row['kind']}", []).append((row["premise"], row["hypothesis"], int(row["label"])))
        hold |= set(by_kind)
        sets.extend(sorted(by_kind.items()))
    held: list[dict] = []
    held_premises: set[str] = set()
    for name, fmt, path in held_out_files or []:
        for premise, hypothesis, label in read_pairs(path, fmt):
            held.append({"set": name, "premise": premise, "hypothesis": hypothesis, "label": label})
            held_premises.add(_premise_key(premise))
    kept: list[tuple[str, list[tuple[str, str, int]]]] = []
    for name, pairs in sets:
        labels: dict[tuple[str, str], set[int]] = {}
        for premise, hypothesis, label in pairs:
            labels.setdefault((premise, hypothesis), set()).add(label)
        done: set[tuple[str, str]] = set()
        mine = []
        for premise, hypothesis, label in pairs:
            key = (premise, hypothesis)
            if len(labels[key]) > 1 or key in done:
                continue
            done.add(key)
            mine.append((premise, hypothesis, label))
        kept.append((name, mine))
        if name in hold:
            held_premises |= {_premise_key(p) for p, _, _ in mine if is_held_out(f"{name}:{p[:200]}", held_out)}
    train: list[dict] = []
    trained: set[tuple[str, str]] = set()  # a pair two sets hold is trained on once, as the first set has it
    for name, pairs in kept:
        for premise, hypothesis, label in pairs:
            if _premise_key(premise) in held_premises:
                if name in hold and is_held_out(f"{name}:{premise[:200]}", held_out):
                    held.append({"set": name, "premise": premise, "hypothesis": hypothesis, "label": label})
                continue
            key = (_premise_key(premise), _premise_key(hypothesis))
            if key in trained:
                continue
            trained.add(key)
            train.append(claim_record(name, premise, hypothesis, label))
    random.Random(seed).shuffle(train)
    return train, held


# The data kit's targeted sets (docs/data.md), each with its own held-out file ``<name>_heldout.jsonl.gz``.
# docnli_fever comes first: it is FEVER-NLI untokenised, and a pair two sets hold is trained on as the first has it.
KIT_TARGETED = (
    "docnli_fever", "vitaminc", "begin", "faithdial_audit", "q2_dialogue", "dialfact_sample", "cad_snli",
    "breaking_nli", "scone", "med", "negation_nli", "syntactic_aug",
)  # fmt: skip


def generated_pairs(
    sources: Sequence[tuple[str, str, str | Path]],
    passages: Sequence[tuple[str, str | Path]],
    kinds: list[str],
    per_kind: int,
    seed: int = 0,
) -> list[dict]:
    """Rule-made pairs (:mod:`nlgeval_training.claim_rules`) from the premises of ``sources`` and the texts of
    ``passages`` (``[(field, file)]``; long texts cut into windows of five sentences, the first twenty only)."""
    from nlgeval_training.claim_rules import make_pairs, sentences

    texts = [p for _, fmt, path in sources for p, _, _ in read_pairs(path, fmt)]
    for field, path in passages:
        for i, obj in enumerate(read_jsonl(path)):
            if field not in obj:
                raise DataError(f"{path} row {i + 1} has no field {field!r}")
            sents = sentences(str(obj[field]))
            texts.extend(" ".join(sents[k : k + 5]) for k in range(0, min(len(sents), 20), 5))
    return list(make_pairs(list(dict.fromkeys(texts)), kinds, seed=seed, per_kind=per_kind))


def kit_claim_data(data: str | Path, per_kind: int = 4000, seed: int = 0) -> tuple[list[dict], list[dict]]:
    """``make embedded-claim``'s data from the data kit at ``data``: ``(train records, held-out pairs)``."""
    from nlgeval_training.claim_rules import KINDS

    nli = Path(data) / "nli"
    sources: list[tuple[str, str, str | Path]] = [(n, "binary", nli / f"{n}.jsonl.gz") for n in KIT_TARGETED]
    sources += [
        ("mnli", "binary", nli / "mnli_binary.jsonl.gz"),
        ("fever", "binary", nli / "fever_nli_binary.jsonl.gz"),
        ("snli", "snli", Path(data) / "nli_snli.jsonl.gz"),
    ]
    held_files: list[tuple[str, str, str | Path]] = [(n, "binary", nli / f"{n}_heldout.jsonl.gz") for n in KIT_TARGETED]
    generated = generated_pairs(sources, [("article", Path(data) / "cnndm.jsonl.gz")], list(KINDS), per_kind, seed)
    return build_claim_data(
        sources, hold_out_from={"mnli", "fever"}, held_out_files=held_files, generated=generated, seed=seed
    )
