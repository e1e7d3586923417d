"""Time per check of the fact dimensions against fluency, side by side in one run.

The outputs are the correct and damaged summaries of tests/data/fact_pairs.json (67 outputs over 8 sources of
50-80 words). Each round scores all of them with no cache, one ``score`` call per output (single) and one
``evaluate`` call for all (batched), for fluency, summarization consistency and rag faithfulness; rounds
alternate between the dimensions so that machine load hits them alike, and the median round is reported with
the ratio to fluency.

    python benchmarks/fact_speed.py [--rounds 3] [--threads 2] [--model FOLDER]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "fact_pairs.json"


def cases() -> list[tuple[str, str]]:
    data = json.loads(PAIRS.read_text(encoding="utf-8"))
    out = []
    for case in data["sources"]:
        for text in case["correct"] + [d["text"] for d in case["damaged"]]:
            out.append((text, case["source"]))
    return out


INPUTS: dict[str, float] = {}  # model inputs per check in the last run of each dimension


def run(evaluator, dimension: str, items, batched: bool) -> float:
    kwargs = {"task": "rag"} if dimension == "faithfulness" else {}
    before = evaluator.stats["scored"]
    started = time.perf_counter()
    if dimension == "fluency":
        if batched:
            evaluator.evaluate([t for t, _ in items], "fluency")
        else:
            for text, _ in items:
                evaluator.score(text, "fluency")
    elif dimension == "faithfulness":
        if batched:
            evaluator.evaluate([t for t, _ in items], "faithfulness", contexts=[[s] for _, s in items], **kwargs)
        else:
            for text, source in items:
                evaluator.score(text, "faithfulness", contexts=[source], **kwargs)
    else:
        if batched:
            evaluator.evaluate([t for t, _ in items], dimension, sources=[s for _, s in items])
        else:
            for text, source in items:
                evaluator.score(text, dimension, source=source)
    INPUTS[dimension] = (evaluator.stats["scored"] - before) / len(items)
    return (time.perf_counter() - started) * 1000 / len(items)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default="default", help="a model folder (default: the embedded model)")
    args = parser.parse_args(argv)

    from pytest_nlgeval.core.evaluator import Evaluator

    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False, threads=args.threads)
    items = cases()
    dims = ("fluency", "consistency", "faithfulness")
    for dim in dims:  # warm-up: sessions created, tokenizers loaded
        run(evaluator, dim, items[:4], batched=True)
    times = {(d, b): [] for d in dims for b in (False, True)}
    for _ in range(args.rounds):
        for batched in (False, True):
            for dim in dims:
                times[(dim, batched)].append(run(evaluator, dim, items, batched))
    print(f"{len(items)} outputs, {args.threads} threads, median of {args.rounds} alternating rounds, no cache\n")
    print("| dimension | single ms/check | ratio to fluency | batched ms/check | ratio to fluency | inputs/check |")
    print("|---|---|---|---|---|---|")
    for dim in dims:
        single = statistics.median(times[(dim, False)])
        batch = statistics.median(times[(dim, True)])
        base_single = statistics.median(times[("fluency", False)])
        base_batch = statistics.median(times[("fluency", True)])
        print(
            f"| {dim} | {single:.1f} | {single / base_single:.1f}x | {batch:.1f} | {batch / base_batch:.1f}x "
            f"| {INPUTS[dim]:.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
