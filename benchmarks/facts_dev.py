"""The development table of the fact dimensions: consistency on SummEval, QAGS-CNN and QAGS-XSum dev.

For each development set, the evaluator's consistency beside ROUGE-2 and unigram precision (the share of
the output's words found in the source) on the same rows, as Spearman correlations with 95% bootstrap
intervals (1,000 replicates over documents at summary level, over samples at sample level). SummEval is
correlated at summary level (per document, then averaged) with ROUGE-2 over its 11 references (mean over
references, SummEval's protocol); QAGS at sample level with ROUGE-2 against the article.

    python benchmarks/facts_dev.py --data ../data-kit/human [--model default] [--features claims.json]

``--features`` writes every claim's signals (head, lexical support, form, the explicit checks that failed)
beside the scores, so that combinations can be compared without scoring again. The human scores are
only correlated here, never fitted.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

SETS = (
    ("SummEval dev", "summeval_dev.jsonl.gz", "summary"),
    ("QAGS-CNN dev", "qags_cnndm_dev.jsonl.gz", "sample"),
    ("QAGS-XSum dev", "qags_xsum_dev.jsonl.gz", "sample"),
)


def read_rows(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def unigram_precision(output: str, source: str) -> float:
    """Share of the output's lower-cased word tokens that occur in the source."""
    out = re.findall(r"\w+", output.lower())
    vocabulary = set(re.findall(r"\w+", source.lower()))
    return sum(1 for w in out if w in vocabulary) / len(out) if out else 0.0


def score_set(evaluator, rows: list[dict], batch: int = 16) -> tuple[list[float], list[list[dict]]]:
    """Consistency of every row (batched), and each row's claims with their signals."""
    from tqdm import tqdm

    values: list[float] = []
    claims: list[list[dict]] = []
    with tqdm(total=len(rows), unit="row", leave=False, file=sys.stderr) as bar:
        for start in range(0, len(rows), batch):
            chunk = rows[start : start + batch]
            scores = evaluator.evaluate(
                [r["system_output"] for r in chunk], "consistency", sources=[r["source"] for r in chunk]
            )
            for score in scores:
                values.append(float(score))
                claims.append(
                    [
                        {"text": u["text"], "score": u["score"], **(u.get("window") or {}).get("claim", {})}
                        for u in score.units
                    ]
                )
            bar.update(len(chunk))
    return values, claims


PAIRS = Path(__file__).resolve().parent.parent / "tests" / "data" / "fact_pairs.json"


def score_pairs(evaluator, path: Path = PAIRS) -> list[dict]:
    """Every (correct, damaged) pair of the realistic cases, scored as summarization consistency and as rag
    faithfulness (the source as the one retrieved passage)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    rows = []
    for case in data["sources"]:
        outputs = case["correct"] + [d["text"] for d in case["damaged"]]
        consistency = evaluator.evaluate(outputs, "consistency", source=case["source"])
        faithfulness = evaluator.evaluate(outputs, "faithfulness", task="rag", context=[case["source"]])
        n = len(case["correct"])
        for k, damaged in enumerate(case["damaged"]):
            rows.append(
                {
                    "case": case["id"],
                    "kind": damaged["kind"],
                    "correct": case["correct"][damaged["of"]],
                    "damaged": damaged["text"],
                    "consistency": (float(consistency[damaged["of"]]), float(consistency[n + k])),
                    "faithfulness": (float(faithfulness[damaged["of"]]), float(faithfulness[n + k])),
                    "explanation": consistency[n + k].explanation(),
                }
            )
    return rows


def pairs_summary(rows: list[dict], margin: float = 0.2, bar: float = 0.7) -> list[str]:
    lines = []
    for dimension in ("consistency", "faithfulness"):
        caught = sum(1 for r in rows if r[dimension][0] - r[dimension][1] >= margin)
        correct = {(r["case"], r["correct"]): r[dimension][0] for r in rows}
        high = sum(1 for v in correct.values() if v >= bar)
        gaps = sorted(r[dimension][0] - r[dimension][1] for r in rows)
        lines.append(
            f"| {dimension} | {caught}/{len(rows)} | {high}/{len(correct)} | {min(correct.values()):.3f} | "
            f"{gaps[0]:+.3f} | {gaps[len(gaps) // 2]:+.3f} |"
        )
    return lines


def correlation(values, human, level, docs):
    from pytest_nlgeval.metaeval.statistics import correlate

    return correlate(values, human, level, doc_ids=docs, n_bootstrap=1000, seed=0)


def cell(c) -> str:
    lo, hi = c.intervals["spearman"]
    return f"{c.spearman:.3f} [{lo:.2f}, {hi:.2f}]"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit") + "/human")
    parser.add_argument("--model", default="default")
    parser.add_argument("--features", help="write every row's claims and signals to this JSON file")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", action="append", help="only this set (repeatable; 'none' for the pairs alone)")
    args = parser.parse_args(argv)

    from scoring import require_data

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.metrics import get_metric

    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False, threads=args.threads)
    rouge_refs = get_metric("rouge2", multi_ref="mean")
    rouge_src = get_metric("rouge2")
    dump: dict = {}
    sets = [s for s in SETS if not args.only or s[0] in args.only]
    print("| set | rows | consistency | ROUGE-2 | unigram precision | s/row |")
    print("|---|---|---|---|---|---|")
    for name, filename, level in sets:
        path = require_data(Path(args.data) / filename)
        rows = read_rows(path)
        started = time.perf_counter()
        values, claims = score_set(evaluator, rows)
        per_row = (time.perf_counter() - started) / len(rows)
        human = [r["scores"]["consistency"] for r in rows]
        docs = [r["doc_id"] for r in rows] if level == "summary" else None
        if level == "summary":
            refs = [json.loads(r["references"]) if isinstance(r["references"], str) else r["references"] for r in rows]
            rouge = [rouge_refs.score(r["system_output"], references=ref) for r, ref in zip(rows, refs)]
        else:
            rouge = [rouge_src.score(r["system_output"], references=[r["source"]]) for r in rows]
        precision = [unigram_precision(r["system_output"], r["source"]) for r in rows]
        cells = [cell(correlation(v, human, level, docs)) for v in (values, rouge, precision)]
        print(f"| {name} | {len(rows)} | {' | '.join(cells)} | {per_row:.2f} |", flush=True)
        dump[name] = [
            {"doc_id": r["doc_id"], "human": h, "score": v, "rouge2": g, "precision": p, "claims": c}
            for r, h, v, g, p, c in zip(rows, human, values, rouge, precision, claims)
        ]
    print(f"\nSpearman [95% bootstrap interval]; model {args.model}, {evaluator.fingerprint_id}")
    pairs = score_pairs(evaluator)
    print(f"\nRealistic pairs ({PAIRS.name}): damaged at least 0.2 below its correct output; correct >= 0.7\n")
    print("| dimension | caught | correct >= 0.7 | lowest correct | smallest gap | median gap |")
    print("|---|---|---|---|---|---|")
    print("\n".join(pairs_summary(pairs)))
    missed = [r for r in pairs if r["consistency"][0] - r["consistency"][1] < 0.2]
    for r in missed:
        print(f"missed ({r['kind']}): {r['consistency'][0]:.3f} -> {r['consistency'][1]:.3f}  {r['damaged']}")
    dump["pairs"] = pairs
    if args.features:
        Path(args.features).write_text(json.dumps(dump))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
