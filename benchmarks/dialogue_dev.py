"""The dialogue dimensions on the Topical-Chat development half (USR ratings, turn level).

Each of the five dimensions of the evaluator against the human rating of the same name, Spearman with a 95%
bootstrap interval over replies (1,000 replicates), beside ROUGE-2 and unigram precision of the reply
against the fact, and the average of naturalness, coherence, engagingness and groundedness (UniEval's
summary figure for Topical-Chat). Also the share of the best-rated replies (human overall >= 4 of 5) that
score above the documented default threshold of 0.7, where a dimension's scale is [0, 1].

    python benchmarks/dialogue_dev.py --data $NLGEVAL_DATA/human [--model default]

The file's ``source`` is the dialogue history (turns separated by line breaks), ``context`` the fact and
``system_output`` the reply. Human scores are only correlated here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

DIMENSIONS = ("naturalness", "coherence", "engagingness", "groundedness", "understandability")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit") + "/human")
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    from facts_dev import unigram_precision
    from scoring import require_data

    from pytest_nlgeval.core.dimensions import DimensionNotServedError
    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.metaeval.statistics import correlate
    from pytest_nlgeval.metrics import get_metric

    path = require_data(Path(args.data) / "topicalchat_dev.jsonl.gz")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False, threads=args.threads)
    replies = [r["system_output"] for r in rows]
    histories = [[t.strip() for t in r["source"].split("\n") if t.strip()] for r in rows]
    facts = [r["context"] for r in rows]
    values = {}
    for name in DIMENSIONS:
        try:
            values[name] = evaluator.score_batch(replies, name, task="dialogue", contexts=histories, facts=facts)
        except DimensionNotServedError:
            values[name] = None
    rouge = get_metric("rouge2")
    values["rouge2 (fact)"] = [rouge.score(a, references=[f]) for a, f in zip(replies, facts)]
    values["unigram precision (fact)"] = [unigram_precision(a, f) for a, f in zip(replies, facts)]
    best = [i for i, r in enumerate(rows) if r["scores"]["overall"] >= 4]
    print(f"Topical-Chat dev: {len(rows)} replies, turn level; Spearman [95% bootstrap interval]; model {args.model}\n")
    print("| signal | " + " | ".join(DIMENSIONS) + " | row mean (nat, coh, eng, gro) | best-rated >= 0.7 |")
    print("|---|" + "---|" * (len(DIMENSIONS) + 2))
    diagonal = {}
    for name, scores in values.items():
        if scores is None:
            print(f"| {name} | refused |")
            continue
        cells, rhos = [], {}
        for dim in DIMENSIONS:
            c = correlate(scores, [r["scores"][dim] for r in rows], "sample", n_bootstrap=1000, seed=0)
            lo, hi = c.intervals["spearman"]
            rhos[dim] = c.spearman
            cells.append(f"{c.spearman:.3f} [{lo:.2f}, {hi:.2f}]")
        average = sum(rhos[d] for d in DIMENSIONS[:4]) / 4
        if name in DIMENSIONS:
            diagonal[name] = rhos[name]
        above = (
            f"{sum(1 for i in best if scores[i] >= 0.7)}/{len(best)}"
            if name in DIMENSIONS and name != "engagingness"
            else "-"
        )
        print(f"| {name} | " + " | ".join(cells) + f" | {average:.3f} | {above} |")
    if all(d in diagonal for d in DIMENSIONS[:4]):
        same = ", ".join(f"{d} {diagonal[d]:.3f}" for d in DIMENSIONS if d in diagonal)
        print(f"\neach dimension against its own rating: {same}")
        average = sum(diagonal[d] for d in DIMENSIONS[:4]) / 4
        print(f"average of naturalness, coherence, engagingness, groundedness: {average:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
