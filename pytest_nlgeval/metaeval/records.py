"""Human judgments for meta-evaluation: the records, read and validated.

A record is one rated system output in the UniEval layout (see :mod:`pytest_nlgeval.metaeval`); every
error names the record, the field and the fix.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from pytest_nlgeval.errors import NLGEvalError

PRECOMPUTED = "predict_scores"


class MetaEvalError(NLGEvalError, ValueError):
    """Bad meta-evaluation input: names the record index and the field, and says how to fix it."""


@dataclass(frozen=True)
class Record:
    """One rated system output."""

    index: int
    doc_id: str | None
    system_id: str | None
    output: str
    source: str | None
    references: tuple[str, ...] | None
    context: str | None
    scores: Mapping[str, float]
    predict_scores: float | Mapping[str, float] | None = None
    #: a retrieval-augmented answer's question and retrieved passages (the rag task)
    question: str | None = None
    contexts: tuple[str, ...] | None = None


def _where(i: int, rec: Mapping | None = None) -> str:
    ids = ""
    if isinstance(rec, Mapping):
        bits = [f"{k}={rec[k]!r}" for k in ("doc_id", "system_id") if k in rec]
        ids = f" ({', '.join(bits)})" if bits else ""
    return f"record {i}{ids}"


def _rwhere(r: "Record") -> str:
    bits = [f"{k}={v!r}" for k, v in (("doc_id", r.doc_id), ("system_id", r.system_id)) if v is not None]
    return f"record {r.index}" + (f" ({', '.join(bits)})" if bits else "")


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetaEvalError(f"{what} must be a number, got {type(value).__name__} {value!r:.60}")
    v = float(value)
    if not math.isfinite(v):
        raise MetaEvalError(f"{what} is {v}; human and metric scores must be finite numbers")
    return v


def _optional_text(rec: Mapping, key: str, where: str) -> str | None:
    if key not in rec or rec[key] is None:
        return None
    value = rec[key]
    if isinstance(value, list) and key == "context":
        if not all(isinstance(v, str) for v in value):
            raise MetaEvalError(f"{where}: field {key!r} must be a string or a list of strings")
        return "\n".join(value)
    if not isinstance(value, str):
        raise MetaEvalError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def parse_records(data: Any, origin: str = "data") -> list[Record]:
    """Validate raw records (a list of dicts) and return :class:`Record` objects.

    Every error names the record index, the field and the fix.
    """
    if not isinstance(data, list):
        raise MetaEvalError(f"{origin}: expected a JSON list of records, got {type(data).__name__}")
    if not data:
        raise MetaEvalError(f"{origin}: the list of records is empty")
    records = []
    for i, rec in enumerate(data):
        where = f"{origin}: {_where(i, rec)}"
        if not isinstance(rec, Mapping):
            raise MetaEvalError(f"{where}: expected an object, got {type(rec).__name__}")
        if "system_output" not in rec:
            raise MetaEvalError(f"{where}: missing field 'system_output' (the generated text that was rated)")
        output = rec["system_output"]
        if not isinstance(output, str):
            raise MetaEvalError(f"{where}: field 'system_output' must be a string, got {type(output).__name__}")
        scores = rec.get("scores")
        if not isinstance(scores, Mapping) or not scores:
            raise MetaEvalError(
                f"{where}: field 'scores' must be a non-empty object of human scores, e.g. {{\"coherence\": 3.7}}"
            )
        human = {str(k): _number(v, f"{where}: field 'scores.{k}'") for k, v in scores.items()}
        refs = None
        if rec.get("references") is not None:
            r = rec["references"]
            if isinstance(r, str):
                r = [r]
            if not isinstance(r, list) or not all(isinstance(x, str) for x in r):
                raise MetaEvalError(f"{where}: field 'references' must be a list of strings")
            refs = tuple(r)
        elif rec.get("reference") is not None:
            r = rec["reference"]
            if isinstance(r, list) and all(isinstance(x, str) for x in r):
                refs = tuple(r)
            elif isinstance(r, str):
                refs = (r,)
            else:
                raise MetaEvalError(f"{where}: field 'reference' must be a string (or use 'references': [...])")
        pred = rec.get(PRECOMPUTED)
        if pred is not None:
            if isinstance(pred, Mapping):
                pred = {str(k): _number(v, f"{where}: field '{PRECOMPUTED}.{k}'") for k, v in pred.items()}
            else:
                pred = _number(pred, f"{where}: field '{PRECOMPUTED}'")
        contexts = rec.get("contexts")
        if contexts is not None:
            if isinstance(contexts, str):
                contexts = [contexts]
            if (
                not isinstance(contexts, list)
                or not contexts
                or not all(isinstance(x, str) and x.strip() for x in contexts)
            ):
                raise MetaEvalError(
                    f"{where}: field 'contexts' must be a non-empty list of retrieved passages (strings)"
                )
        doc_id = rec.get("doc_id")
        system_id = rec.get("system_id")
        records.append(
            Record(
                index=i,
                doc_id=None if doc_id is None else str(doc_id),
                system_id=None if system_id is None else str(system_id),
                output=output,
                source=_optional_text(rec, "source", where),
                references=refs,
                context=_optional_text(rec, "context", where),
                scores=human,
                predict_scores=pred,
                question=_optional_text(rec, "question", where),
                contexts=None if contexts is None else tuple(contexts),
            )
        )
    return records


def load_records(path: str | Path) -> list[Record]:
    """Read records from a JSON list (``.json``) or JSON Lines (``.jsonl``) file, either gzip-compressed
    (``.gz``)."""
    from nlgeval_runtime.jsonlines import read_rows

    return parse_records([row for _, row in read_rows(path, error=MetaEvalError)], origin=str(path))
