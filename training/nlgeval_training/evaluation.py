"""Held-out evaluation of an exported model folder through the runtime (ONNX Runtime, no torch).

The figures of a model card come from here: the runtime scores the held-out split of a record file (the
groups that :func:`~nlgeval_training.pseudo.common.split_records` holds out) and this module reports
accuracy and AUC per dimension.

    >>> report = evaluate_folder("runtime/nlgeval_runtime/embedded", ["pseudo.jsonl.gz"])   # doctest: +SKIP
    >>> report["metrics"]["mean"]["accuracy"]                                               # doctest: +SKIP
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any


def select_held_out(
    records: list[dict], fraction: float | None, per_dimension: int | None, seed: int = 0
) -> list[dict]:
    """The held-out records (``fraction=None``: all), at most ``per_dimension`` per dimension, label-balanced."""
    from nlgeval_training.pseudo.common import balanced_subset, split_records

    held = records if fraction is None else split_records(records, fraction)[1]
    if per_dimension is None:
        return held
    return balanced_subset(held, per_dimension, random.Random(seed), lambda r: (r["task"], r["dimension"]))


def evaluate_folder(
    model: str | Path | None,
    data: list[str | Path],
    *,
    fraction: float | None = 0.1,
    per_dimension: int | None = 500,
    precision: str = "auto",
    threads: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Score the held-out records of ``data`` with the model folder (``None``: the embedded default)."""
    from nlgeval_runtime import load_boolqa

    from nlgeval_training.metrics import per_dimension as metrics_per_dimension
    from nlgeval_training.pseudo.build import read_records

    records = [r for path in data for r in read_records(path)]
    chosen = select_held_out(records, fraction, per_dimension, seed)
    if not chosen:
        raise ValueError(f"no held-out records in {[str(p) for p in data]} (fraction={fraction})")
    scorer = load_boolqa(None if model is None else str(model), precision=precision, threads=threads)
    start = time.time()
    result = scorer.score([r["input"] for r in chosen])
    elapsed = time.time() - start
    return {
        "model": str(scorer.folder.path),
        "precision": scorer.precision,
        "fingerprint_id": scorer.fingerprint_id,
        "data": [str(p) for p in data],
        "held_out_fraction": fraction,
        "per_dimension_cap": per_dimension,
        "n": len(chosen),
        "truncated": int(result.truncated.sum()),
        "seconds": round(elapsed, 1),
        "metrics": metrics_per_dimension(chosen, result.scores.tolist()),
    }


def format_table(metrics: dict[str, dict[str, Any]]) -> str:
    """A Markdown table of accuracy and AUC per dimension (the ``mean`` row last)."""
    lines = ["| dimension | accuracy | AUC | n |", "|---|---|---|---|"]
    for key in [k for k in metrics if k != "mean"] + (["mean"] if "mean" in metrics else []):
        m = metrics[key]
        auc = "-" if m.get("auc") is None else f"{m['auc']:.3f}"
        name = "**mean over dimensions**" if key == "mean" else key
        lines.append(f"| {name} | {m['accuracy']:.3f} | {auc} | {m['n']} |")
    return "\n".join(lines)
