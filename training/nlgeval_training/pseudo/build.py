"""Build the pseudo data of several dimensions from corpus files, and write/read record files.

>>> records = build_pseudo_data(summarization=["cnndm.jsonl.gz"], antonyms="antonyms.jsonl.gz",
...                             dimensions=["summarization/fluency"], seed=0)   # doctest: +SKIP
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Iterable

from nlgeval_training.data import load_dialogues, load_documents
from nlgeval_training.pseudo import dialogue as dlg_gen
from nlgeval_training.pseudo import summarization as sum_gen

#: data2text generators draw on the summarization corpora (their sentences as utterances)
D2T_GENERATORS: dict[str, Any] = {"naturalness": sum_gen.utterance_naturalness}
ALL_DIMENSIONS = (
    [f"summarization/{d}" for d in sum_gen.GENERATORS]
    + [f"dialogue/{d}" for d in dlg_gen.GENERATORS]
    + [f"data2text/{d}" for d in D2T_GENERATORS]
)
#: what a build makes when no dimensions are named (the UniEval eight)
DEFAULT_DIMENSIONS = [f"summarization/{d}" for d in ("coherence", "consistency", "fluency", "relevance")] + [
    f"dialogue/{d}" for d in ("coherence", "naturalness", "groundedness", "engagingness")
]


def build_pseudo_data(
    summarization: Iterable[str | Path] = (),
    dialogue: Iterable[str | Path] = (),
    antonyms: str | Path | None = None,
    dimensions: Iterable[str] | None = None,
    seed: int = 0,
    limit: int | None = None,
    options: dict[str, dict[str, Any]] | None = None,
    progress: bool = False,
    document_fields: dict[str, Any] | None = None,
    dialogue_fields: dict[str, Any] | None = None,
) -> list[dict]:
    """Records of every requested ``task/dimension`` (default: all eight), each 50/50 and deduplicated.

    ``options`` maps ``"task/dimension"`` to keyword arguments of that generator (e.g.
    ``{"summarization/coherence": {"document_sentences": 4}}``); ``limit`` caps records per dimension.
    ``document_fields`` / ``dialogue_fields`` are passed to the loaders for files with other field names
    (e.g. ``{"article_field": "text", "summary_fields": ["abstract"]}``).
    """
    wanted = list(dimensions) if dimensions is not None else list(DEFAULT_DIMENSIONS)
    unknown = [d for d in wanted if d not in ALL_DIMENSIONS]
    if unknown:
        raise ValueError(f"unknown pseudo-data dimension(s) {unknown}; choose from {ALL_DIMENSIONS}")
    options = options or {}
    doc_kw = dict(document_fields or {})
    if "summary_fields" in doc_kw:
        doc_kw["summary_fields"] = tuple(doc_kw["summary_fields"])
    docs = [d for path in summarization for d in load_documents(path, **doc_kw)]
    dialogues = [d for path in dialogue for d in load_dialogues(path, **(dialogue_fields or {}))]
    antonym_table = sum_gen.load_antonyms(antonyms) if antonyms else {}
    records: list[dict] = []
    for offset, name in enumerate(wanted):
        task, dim = name.split("/")
        kwargs = dict(options.get(name, {}))
        kwargs.setdefault("limit", limit)
        if task in ("summarization", "data2text"):
            if not docs:
                raise ValueError(f"{name} needs summarization corpora (article + summary JSONL files)")
            if dim == "consistency":
                if not antonym_table:
                    raise ValueError("summarization/consistency needs an antonym list (antonyms=...jsonl.gz)")
                out = sum_gen.consistency(docs, antonym_table, seed + offset, **kwargs)
            elif task == "data2text":
                out = D2T_GENERATORS[dim](docs, seed + offset, **kwargs)
            else:
                out = sum_gen.GENERATORS[dim](docs, seed + offset, **kwargs)
        else:
            if not dialogues:
                raise ValueError(f"{name} needs dialogue corpora (Topical-Chat style JSONL files)")
            out = dlg_gen.GENERATORS[dim](dialogues, seed + offset, **kwargs)
        if progress:
            print(f"{name}: {len(out)} records", flush=True)
        records.extend(out)
    return records


def write_records(records: Iterable[dict], path: str | Path) -> int:
    """Write records as gzip JSONL (or plain JSONL if ``path`` does not end in .gz); returns the count."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if path.suffix == ".gz" else open
    n = 0
    with opener(path, "wt", encoding="utf-8") as handle:
        for rec in records:
            handle.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    return n


def read_records(path: str | Path) -> list[dict]:
    """Read Boolean-QA records, checking each has ``input`` (str) and ``label`` (0/1)."""
    from nlgeval_training.data import DataError, read_jsonl

    out = []
    for lineno, rec in enumerate(read_jsonl(path), start=1):
        if not isinstance(rec.get("input"), str) or rec.get("label") not in (0, 1):
            raise DataError(f"{path}:{lineno} is not a Boolean-QA record: it needs 'input' (text) and 'label' (0 or 1)")
        rec.setdefault("task", "custom")
        rec.setdefault("dimension", "custom")
        rec.setdefault("group", f"{path}:{lineno}")
        out.append(rec)
    return out
