"""Claim support on human-labelled entailment pairs: balanced accuracy of the fact dimensions' head.

Three sets, each pair a premise (the evidence) and a hypothesis (the claim), labelled by people as entailed
or not (neutral and contradiction are both "not supported"):

- MultiNLI and FEVER-NLI: the tenth of each set's premises that ``nlgeval-train claim-data`` holds out
  (never trained on; rebuilt here from the data kit with the same split), then each targeted set's own
  held-out file (word order, minimal edits, negation, quantifiers, contrastive evidence, dialogue) and the
  held-out tenth of each rule-made kind (swap, negation, quantity, state, span);
- ANLI's adversarial dev rounds (non-commercial license: measured and chosen on, never trained on).

Two readings per pair:

- ``head``: the claim-support graph alone, P(Yes) of UniEval's consistency question with the premise as
  the document, balanced accuracy at 0.5;
- ``fact consistency``: the whole dimension a user asserts (claims split, evidence aligned, explicit
  checks), balanced accuracy at the documented threshold (``--threshold``, default the README's).

Balanced accuracy is the mean of the recall on supported and on unsupported pairs (LLM-AggreFact's
measure, Tang et al., 2024), with a 95% bootstrap interval over pairs (1,000 replicates).

    python benchmarks/claim_support.py --data ../data-kit [--model default] [--n 600] [--threshold 0.5]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

QUESTION = "Is this claim consistent with the document?"


TARGETED_NAMES = {"mnli": "MultiNLI held-out", "fever": "FEVER-NLI held-out"}


def held_out_pairs(data: Path) -> dict[str, list[dict]]:
    """Every held-out set of ``make embedded-claim``'s data (rebuilt from the kit with the same split: a tenth
    of MultiNLI's and FEVER-NLI's premises, each targeted set's own held-out file, a tenth of each rule-made
    kind), then ANLI dev (never trained on)."""
    from nlgeval_training.claim_data import kit_claim_data

    _, held = kit_claim_data(data)
    sets: dict[str, list[dict]] = {}
    for row in held:
        sets.setdefault(TARGETED_NAMES.get(row["set"], row["set"]), []).append(row)
    first = [n for n in TARGETED_NAMES.values() if n in sets]
    sets = {n: sets[n] for n in first + sorted(n for n in sets if n not in first)}
    with gzip.open(data / "nli" / "anli_dev.jsonl.gz", "rt", encoding="utf-8") as handle:
        sets["ANLI dev"] = [json.loads(line) for line in handle if line.strip()]
    return sets


def balanced_accuracy(scores: list[float], labels: list[int], threshold: float) -> float:
    recalls = []
    for wanted in (1, 0):
        mine = [s for s, y in zip(scores, labels) if y == wanted]
        if mine:
            recalls.append(sum(1 for s in mine if (s >= threshold) == (wanted == 1)) / len(mine))
    return sum(recalls) / len(recalls)


def interval(scores: list[float], labels: list[int], threshold: float, n: int = 1000) -> tuple[float, float]:
    rng = random.Random(0)
    idx = range(len(scores))
    values = []
    for _ in range(n):
        pick = [rng.choice(idx) for _ in idx]
        values.append(balanced_accuracy([scores[i] for i in pick], [labels[i] for i in pick], threshold))
    values.sort()
    return values[int(0.025 * n)], values[int(0.975 * n) - 1]


def cell(scores: list[float], labels: list[int], threshold: float) -> str:
    lo, hi = interval(scores, labels, threshold)
    return f"{balanced_accuracy(scores, labels, threshold):.3f} [{lo:.2f}, {hi:.2f}]"


def head_scores(evaluator, pairs: list[dict]) -> list[float]:
    """P(Yes) of the claim-support graph, one input per pair (the premise as the document)."""
    dim = evaluator._as_served(evaluator.registry.get("consistency", "fact"))
    graph = evaluator._served(dim).get("folder")
    texts = [f"question: {QUESTION} </s> claim: {p['hypothesis']} </s> document: {p['premise']}" for p in pairs]
    return [s for s, _, _ in evaluator.score_texts(texts, graph=graph)]


def dimension_scores(evaluator, pairs: list[dict], batch: int = 32) -> list[float]:
    out: list[float] = []
    for start in range(0, len(pairs), batch):
        chunk = pairs[start : start + batch]
        scores = evaluator.evaluate(
            [p["hypothesis"] for p in chunk], "consistency", task="fact", sources=[p["premise"] for p in chunk]
        )
        out.extend(float(s) for s in scores)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit"))
    parser.add_argument("--model", default="default")
    parser.add_argument("--n", type=int, default=600, help="pairs per set, drawn with a fixed seed (0: all)")
    parser.add_argument("--threshold", type=float, default=None, help="the dimension's threshold (default: README's)")
    parser.add_argument("--no-dimension", action="store_true", help="the head alone (faster)")
    parser.add_argument(
        "--dimension-sets",
        nargs="*",
        default=["MultiNLI held-out", "FEVER-NLI held-out", "ANLI dev"],
        help="the sets the whole dimension reads too (default: MultiNLI, FEVER-NLI, ANLI)",
    )
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.core.thresholds import recommended_threshold

    threshold = args.threshold if args.threshold is not None else recommended_threshold("consistency", "fact")
    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False, threads=args.threads)
    sets = held_out_pairs(Path(args.data))
    print(f"| set | pairs (supported) | head, balanced accuracy at 0.5 | fact consistency at {threshold} | s/pair |")
    print("|---|---|---|---|---|")
    for name, pairs in sets.items():
        if args.n and len(pairs) > args.n:
            pairs = random.Random(0).sample(pairs, args.n)
        labels = [int(p["label"]) for p in pairs]
        started = time.perf_counter()
        head = head_scores(evaluator, pairs)
        read_whole = not args.no_dimension and name in args.dimension_sets
        whole = cell(dimension_scores(evaluator, pairs), labels, threshold) if read_whole else "-"
        per_pair = (time.perf_counter() - started) / len(pairs)
        print(f"| {name} | {len(pairs)} ({sum(labels)}) | {cell(head, labels, 0.5)} | {whole} | {per_pair:.3f} |")
    print(f"\nmodel {args.model}, evaluator {evaluator.fingerprint_id}; 95% bootstrap intervals over pairs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
