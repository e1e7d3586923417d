"""The fact dimensions on the realistic (correct, damaged) cases, by kind, and their thresholds' error rates.

Reads tests/data/fact_pairs.json (short news, product and policy texts) and tests/data/fact_pairs_hard.json
(500-600-word articles, RAG passages and support dialogues; paraphrases, aliases, several facts in one
sentence, roles, negation inside negation, evasive answers). Each output is scored as its case's task asks:
a summary as summarization consistency against its article, an answer as rag faithfulness against its
passage, a reply as dialogue groundedness against its fact (with the history).

Prints, per dimension: the false-alarm rate (correct outputs below the threshold), the catch rate (damaged
outputs below the threshold and at least 0.2 below their correct output), for the documented threshold and
its neighbours; then the rates by kind of damage and of correct output, and every miss.

    python benchmarks/realistic_facts.py [--model default] [--threshold 0.5]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
FILES = ("fact_pairs.json", "fact_pairs_hard.json")
MARGIN = 0.2


def score_cases(evaluator, path: Path) -> list[dict]:
    """One row per output: its case, task, dimension, kind, whether it is correct, its score and, for a
    damaged output, its correct output's score."""
    data = json.loads(path.read_text(encoding="utf-8"))
    rows = []
    for case in data["sources"]:
        task = case.get("task", "summary")
        outputs = case["correct"] + [d["text"] for d in case["damaged"]]
        if task == "rag":
            scores = evaluator.evaluate(outputs, "faithfulness", task="rag", context=[case["source"]])
            dimension = "rag faithfulness"
        elif task == "dialogue":
            scores = evaluator.evaluate(
                outputs, "groundedness", task="dialogue", fact=case["source"], context=case.get("history") or [""]
            )
            dimension = "dialogue groundedness"
        else:
            scores = evaluator.evaluate(outputs, "consistency", source=case["source"])
            dimension = "consistency"
        n = len(case["correct"])
        kinds = case.get("correct_kinds") or ["plain"] * n
        for k in range(n):
            rows.append(
                {"case": case["id"], "dimension": dimension, "correct": True, "kind": kinds[k], "text": outputs[k],
                 "score": float(scores[k]), "explanation": scores[k].explanation()}
            )  # fmt: skip
        for k, damaged in enumerate(case["damaged"]):
            rows.append(
                {"case": case["id"], "dimension": dimension, "correct": False, "kind": damaged["kind"],
                 "text": damaged["text"], "score": float(scores[n + k]), "of": float(scores[damaged["of"]]),
                 "explanation": scores[n + k].explanation()}
            )  # fmt: skip
    return rows


def rates(rows: list[dict], threshold: float) -> tuple[float, float, int, int]:
    """(false-alarm rate, catch rate, correct outputs, damaged outputs) at ``threshold``."""
    good = [r for r in rows if r["correct"]]
    bad = [r for r in rows if not r["correct"]]
    false_alarms = sum(1 for r in good if r["score"] <= threshold)
    caught = sum(1 for r in bad if r["score"] <= threshold and r["of"] - r["score"] >= MARGIN)
    return false_alarms / max(1, len(good)), caught / max(1, len(bad)), len(good), len(bad)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--threshold", type=float, default=None, help="default: the documented one per dimension")
    parser.add_argument("--json", help="write every scored output here")
    args = parser.parse_args(argv)

    from pytest_nlgeval.core.thresholds import recommended_threshold
    from pytest_nlgeval.core.evaluator import Evaluator

    def documented_or(name: str, task: str) -> float:
        try:
            return recommended_threshold(name, task)
        except KeyError:
            if args.threshold is None:
                raise
            return args.threshold

    documented = {
        "consistency": documented_or("consistency", "summarization"),
        "rag faithfulness": documented_or("faithfulness", "rag"),
        "dialogue groundedness": documented_or("groundedness", "dialogue"),
    }
    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False)
    rows = [r for name in FILES for r in score_cases(evaluator, DATA / name)]
    by_dimension: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_dimension[r["dimension"]].append(r)
    print("| dimension | threshold | correct | damaged | false alarms | caught (below it, 0.2 under its correct) |")
    print("|---|---|---|---|---|---|")
    for dimension, mine in by_dimension.items():
        base = args.threshold if args.threshold is not None else documented[dimension]
        for t in sorted({round(base - 0.1, 2), base, round(base + 0.1, 2)}):
            fa, caught, n_good, n_bad = rates(mine, t)
            mark = " (documented)" if t == documented[dimension] else ""
            print(f"| {dimension} | {t}{mark} | {n_good} | {n_bad} | {fa:.1%} | {caught:.1%} |")
    print("\n| dimension | kind | outputs | below the threshold |")
    print("|---|---|---|---|")
    for dimension, mine in by_dimension.items():
        t = args.threshold if args.threshold is not None else documented[dimension]
        groups: dict[tuple[bool, str], list[dict]] = defaultdict(list)
        for r in mine:
            groups[(r["correct"], r["kind"])].append(r)
        for (correct, kind), group in sorted(groups.items(), key=lambda kv: (not kv[0][0], kv[0][1])):
            below = sum(1 for r in group if r["score"] <= t)
            label = f"correct: {kind}" if correct else f"damaged: {kind}"
            print(f"| {dimension} | {label} | {len(group)} | {below} |")
    print("\nfalse alarms and misses at the documented thresholds:")
    for r in rows:
        t = args.threshold if args.threshold is not None else documented[r["dimension"]]
        if r["correct"] and r["score"] <= t:
            print(f"  FALSE ALARM {r['score']:.3f} [{r['kind']}] {r['text'][:110]!r}")
            for line in r["explanation"][1:3]:
                print(f"      {line[:150]}")
        elif not r["correct"] and not (r["score"] <= t and r["of"] - r["score"] >= MARGIN):
            print(f"  missed {r['of']:.3f} -> {r['score']:.3f} [{r['kind']}] {r['text'][:110]!r}")
    print(f"\nmodel {args.model}, evaluator {evaluator.fingerprint_id}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
