"""Intermediate tasks converted to Boolean QA with the questions of UniEval (Zhong et al., 2022, sec. 3.1).

| task | source (shared data kit) | Yes |
|---|---|---|
| nli | SNLI dev/test (``premise``, ``hypothesis``, ``label``) | entailment |
| nli_claim | the same SNLI pairs | entailment |
| paraphrase | MRPC (``sentence1``, ``sentence2``, ``label``) | paraphrase |
| opening | CNN/DM, BBC articles | the real first sentence |
| cola | CoLA (``sentence``, ``label``) | acceptable |
| boolq | BoolQ / StrategyQA (``question``, ``passage``, ``answer``) | answer true |

| task | question | fields |
|---|---|---|
| nli | Is this hypothesis entailed in the premise? | hypothesis, premise |
| nli_claim | Is this claim consistent with the document? | claim, document |
| paraphrase | Is this sentence equivalent to the reference? | sentence, reference |
| opening | Is this sentence the coherent first sentence of the document? | sentence, document |
| cola | Is this a fluent and linguistically acceptable sentence? | sentence |
| boolq | the item's own question | passage |

``nli_claim`` asks the NLI pairs with the consistency question of the summarization and fact tasks, so
that sentence-level support is learned in the very format the consistency dimension is scored in (the
premise plays the document window; neutral and contradiction are both "not supported", as in SummaC's
zero-shot use of NLI, Laban et al., TACL 2022).

Opening-sentence prediction is self-supervised: the positive pairs an article's first sentence with the
rest of the article, the negative pairs another sentence of the same article with the same rest.
Label proportions are left as the sources have them (the paper does not balance these tasks).

    >>> rec = convert_cola({"sentence": "The cat sat.", "label": 1, "id": "x"})
    >>> rec["input"], rec["label"]
    ('question: Is this a fluent and linguistically acceptable sentence? </s> sentence: The cat sat.', 1)
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Callable

from nlgeval_training.boolqa import question_input
from nlgeval_training.data import DataError, load_documents, read_jsonl

TASK = "intermediate"
QUESTIONS = {
    "nli": "Is this hypothesis entailed in the premise?",
    "paraphrase": "Is this sentence equivalent to the reference?",
    "opening": "Is this sentence the coherent first sentence of the document?",
    "cola": "Is this a fluent and linguistically acceptable sentence?",
    "nli_claim": "Is this claim consistent with the document?",
}
NLI_LABELS = {"entailment": 1, "neutral": 0, "contradiction": 0, 0: 1, 1: 0, 2: 0}


def _need(obj: dict, keys: tuple[str, ...], task: str) -> None:
    missing = [k for k in keys if k not in obj]
    if missing:
        raise DataError(f"{task} record {obj.get('id', '?')!r} lacks {missing}; expected fields {list(keys)}")


def _record(dimension: str, text: str, label: int, group: str) -> dict:
    return {"input": text, "label": int(label), "task": TASK, "dimension": dimension, "group": group}


def _nli_pair(obj: dict, task: str, claim_field: str, source_field: str) -> dict | None:
    """An NLI pair asked with ``task``'s question, the hypothesis and premise under the given field names;
    items without a gold label (``-``) give ``None``."""
    _need(obj, ("premise", "hypothesis", "label"), task)
    label = NLI_LABELS.get(obj["label"])
    if label is None:
        return None
    fields = {claim_field: obj["hypothesis"].strip(), source_field: obj["premise"].strip()}
    return _record(task, question_input(QUESTIONS[task], **fields), label, f"nli:{obj['premise'][:200]}")


def convert_nli(obj: dict) -> dict | None:
    """SNLI/MNLI-style item; items without a gold label (``-``) give ``None``."""
    return _nli_pair(obj, "nli", "hypothesis", "premise")


def convert_nli_claim(obj: dict) -> dict | None:
    """An NLI pair asked as the consistency question: ``claim`` = hypothesis, ``document`` = premise."""
    return _nli_pair(obj, "nli_claim", "claim", "document")


def convert_paraphrase(obj: dict) -> dict:
    _need(obj, ("sentence1", "sentence2", "label"), "paraphrase")
    text = question_input(
        QUESTIONS["paraphrase"], sentence=obj["sentence2"].strip(), reference=obj["sentence1"].strip()
    )
    return _record("paraphrase", text, int(obj["label"]), f"mrpc:{obj.get('id', obj['sentence1'][:100])}")


def convert_cola(obj: dict) -> dict:
    _need(obj, ("sentence", "label"), "cola")
    text = question_input(QUESTIONS["cola"], sentence=obj["sentence"].strip())
    return _record("cola", text, int(obj["label"]), f"cola:{obj.get('id', obj['sentence'])}")


def convert_boolq(obj: dict) -> dict:
    """The item's own question (capitalised, with a question mark) over its passage."""
    _need(obj, ("question", "passage", "answer"), "boolq")
    q = obj["question"].strip()
    q = q[:1].upper() + q[1:]
    if not q.endswith("?"):
        q += "?"
    text = question_input(q, passage=obj["passage"].strip())
    return _record(
        "boolq", text, 1 if obj["answer"] in (True, "true", "True", 1, "yes") else 0, f"boolq:{obj.get('id', q)}"
    )


def opening_sentence(path: str | Path, seed: int = 0, document_sentences: int | None = 6) -> list[dict]:
    """One positive and one negative per article (see module docstring)."""
    rng = random.Random(seed)
    out = []
    for doc in load_documents(path, min_sentences=4):
        rest = doc.sentences[1:] if document_sentences is None else doc.sentences[1 : 1 + document_sentences]
        document = " ".join(rest)
        wrong = rng.choice(doc.sentences[2:])
        out.append(
            _record(
                "opening",
                question_input(QUESTIONS["opening"], sentence=doc.sentences[0], document=document),
                1,
                f"opening:{doc.id}",
            )
        )
        out.append(
            _record(
                "opening",
                question_input(QUESTIONS["opening"], sentence=wrong, document=document),
                0,
                f"opening:{doc.id}",
            )
        )
    return out


CONVERTERS: dict[str, Callable[[dict], dict | None]] = {
    "nli": convert_nli,
    "nli_claim": convert_nli_claim,
    "paraphrase": convert_paraphrase,
    "cola": convert_cola,
    "boolq": convert_boolq,
}


def build_intermediate_data(
    sources: dict[str, str | Path], seed: int = 0, limit: int | None = None, progress: bool = False
) -> list[dict]:
    """Records of every ``task -> file`` in ``sources`` (tasks: nli, nli_claim, paraphrase, opening, cola, boolq),
    deduplicated (an input seen with both labels is dropped), shuffled, at most ``limit`` per task."""
    known = set(CONVERTERS) | {"opening"}
    unknown = sorted(set(sources) - known)
    if unknown:
        raise ValueError(f"unknown intermediate task(s) {unknown}; choose from {sorted(known)}")
    rng = random.Random(seed)
    out: list[dict] = []
    for task, path in sources.items():
        if task == "opening":
            recs = opening_sentence(path, seed)
        else:
            recs = [r for r in (CONVERTERS[task](obj) for obj in read_jsonl(path)) if r is not None]
        recs = _dedup(recs)
        rng.shuffle(recs)
        if limit is not None:
            recs = recs[:limit]
        if progress:
            print(f"{task}: {len(recs)} records ({sum(r['label'] for r in recs)} yes)", flush=True)
        out.extend(recs)
    rng.shuffle(out)
    return out


def _dedup(records: list[dict]) -> list[dict]:
    labels: dict[str, set[int]] = {}
    for r in records:
        labels.setdefault(r["input"], set()).add(r["label"])
    seen: set[str] = set()
    out = []
    for r in records:
        if len(labels[r["input"]]) == 1 and r["input"] not in seen:
            seen.add(r["input"])
            out.append(r)
    return out
