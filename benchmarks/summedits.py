"""Summarization consistency on SummEdits: summaries of meeting transcripts, sales calls and emails, and paper
abstracts, each either faithful or carrying one verified edit that makes it inconsistent (Laban et al., 2023).

Reads the kit's subset (``nli/summedits_subset.jsonl.gz``, the file to choose on, and its held-out tenth
``nli/summedits_subset_heldout.jsonl.gz``; rows ``{"premise": document, "hypothesis": summary, "label": 1
consistent / 0 not}``), scores every summary as ``summarization consistency`` against its document, and prints for
each file the balanced accuracy at the documented threshold and at the threshold of best balanced accuracy on the
choosing file, and the AUC (a consistent summary scoring above an inconsistent one). SummEdits' own reading: a
summary is flagged when its score is at most the threshold.

    python benchmarks/summedits.py --data $NLGEVAL_DATA [--limit 400]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path


def rows(path: Path, limit: int | None = None) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        out = [json.loads(line) for line in f if line.strip()]
    return out[:limit] if limit else out


def balanced_accuracy(scores: list[float], labels: list[int], threshold: float) -> float:
    """The mean of the two recalls: consistent summaries above the threshold, inconsistent ones at or below it."""
    good = [s > threshold for s, y in zip(scores, labels) if y == 1]
    bad = [s <= threshold for s, y in zip(scores, labels) if y == 0]
    return (sum(good) / max(1, len(good)) + sum(bad) / max(1, len(bad))) / 2


def auc(scores: list[float], labels: list[int]) -> float:
    good = [s for s, y in zip(scores, labels) if y == 1]
    bad = [s for s, y in zip(scores, labels) if y == 0]
    if not good or not bad:
        return float("nan")
    return sum((g > b) + 0.5 * (g == b) for g in good for b in bad) / (len(good) * len(bad))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit"))
    parser.add_argument("--model", default="default")
    parser.add_argument("--limit", type=int, default=None, help="score at most this many rows of each file")
    args = parser.parse_args(argv)

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.core.thresholds import recommended_threshold

    folder = Path(args.data) / "nli"
    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False)
    documented = recommended_threshold("consistency", "summarization")
    scored = {}
    for name in ("summedits_subset", "summedits_subset_heldout"):
        data = rows(folder / f"{name}.jsonl.gz", args.limit)
        started = time.perf_counter()
        scores = evaluator.evaluate(
            [r["hypothesis"] for r in data], "consistency", sources=[r["premise"] for r in data]
        ).values
        print(f"{name}: {len(data)} summaries in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        scored[name] = ([float(s) for s in scores], [int(r["label"]) for r in data])
    grid = [round(0.05 * k, 2) for k in range(1, 20)]
    choose_scores, choose_labels = scored["summedits_subset"]
    chosen = max(grid, key=lambda t: balanced_accuracy(choose_scores, choose_labels, t))
    header = f"BAcc at {documented} (documented) | BAcc at {chosen} (best on the choosing file)"
    print(f"| file | rows | consistent | AUC | {header} |")
    print("|---|---|---|---|---|---|")
    for name, (scores, labels) in scored.items():
        print(
            f"| {name} | {len(labels)} | {sum(labels)} | {auc(scores, labels):.3f} | "
            f"{balanced_accuracy(scores, labels, documented):.3f} | {balanced_accuracy(scores, labels, chosen):.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
