"""The development table of the summarization and data-to-text dimensions, beside the usual baselines.

SummEval dev (summary level: per document, then averaged, SummEval's protocol): coherence, fluency and
relevance of the embedded evaluator (coherence and relevance read with the document; relevance with the first
reference, UniEval's protocol), and consistency unless ``--skip-consistency`` (its own table, with QAGS, is
``benchmarks/facts_dev.py``). SFRES and SFHOT dev (sample level): naturalness, and informativeness read with the
reference and the meaning representation. Beside them, on the same rows: ROUGE-2 (SummEval: the mean over the
11 references), METEOR, BLEU (data-to-text) and unigram precision against the source. Spearman with 95%
bootstrap intervals (1,000 replicates over documents or samples). Also, for each dimension, the share of the
outputs that readers rated well (4 or more of 5 on SummEval, 5 or more of 6 on SF) that score at least 0.7
(a fixed bar; the recommended thresholds are in pytest_nlgeval/core/thresholds.py).

    python benchmarks/dev_table.py --data $NLGEVAL_DATA/human [--skip-consistency]

Human scores are only correlated here.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


def _cell(c) -> str:
    lo, hi = c.intervals["spearman"]
    return f"{c.spearman:.3f} [{lo:.2f}, {hi:.2f}]"


def _table(title: str, rows: list[dict], signals: dict, dimensions: tuple, level: str, good_at: float) -> list[str]:
    from pytest_nlgeval.metaeval.statistics import correlate

    docs = [str(r["doc_id"]) for r in rows]
    lines = [f"{title}: {len(rows)} rows, {level} level; Spearman [95% bootstrap interval]", ""]
    lines.append("| signal | " + " | ".join(dimensions) + " | rated well >= 0.7 |")
    lines.append("|---|" + "---|" * (len(dimensions) + 1))
    diagonal = {}
    for name, values in signals.items():
        cells = []
        for dim in dimensions:
            human = [r["scores"][dim] for r in rows]
            c = correlate(values, human, level, doc_ids=docs, n_bootstrap=1000, seed=0)
            cells.append(_cell(c))
            if name == dim:
                diagonal[dim] = c.spearman
        good = "-"
        if name in dimensions:
            rated = [v for v, r in zip(values, rows) if r["scores"][name] >= good_at]
            good = f"{sum(1 for v in rated if v >= 0.7)}/{len(rated)}"
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {good} |")
    if diagonal:
        same = ", ".join(f"{d} {v:.3f}" for d, v in diagonal.items())
        lines += ["", f"each dimension against its own rating: {same}"]
        if len(diagonal) == len(dimensions):
            lines.append(f"average: {sum(diagonal.values()) / len(diagonal):.3f}")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit") + "/human")
    parser.add_argument("--model", default="default")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--skip-consistency", action="store_true", help="SummEval without consistency (8 minutes)")
    args = parser.parse_args(argv)

    from facts_dev import read_rows, unigram_precision
    from scoring import require_data

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.metrics import get_metric

    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False, threads=args.threads)
    rouge_refs, rouge, meteor, bleu = (
        get_metric("rouge2", multi_ref="mean"),
        get_metric("rouge2"),
        get_metric("meteor"),
        get_metric("bleu"),
    )
    started = time.perf_counter()

    rows = read_rows(require_data(Path(args.data) / "summeval_dev.jsonl.gz"))
    outputs = [r["system_output"] for r in rows]
    sources = [r["source"] for r in rows]
    first = [r["references"][0] for r in rows]
    dims = ("coherence", "consistency", "fluency", "relevance")
    signals: dict[str, list[float]] = {}
    for dim in dims:
        if dim == "consistency" and args.skip_consistency:
            continue
        inputs = {"references": first} if dim == "relevance" else {}
        signals[dim] = evaluator.score_batch(outputs, dim, task="summarization", sources=sources, **inputs)
    signals["rouge2 (references)"] = [rouge_refs.score(o, references=r["references"]) for o, r in zip(outputs, rows)]
    signals["meteor (first reference)"] = [meteor.score(o, references=[f]) for o, f in zip(outputs, first)]
    signals["unigram precision (source)"] = [unigram_precision(o, s) for o, s in zip(outputs, sources)]
    shown = tuple(d for d in dims if d in signals)
    print("\n".join(_table("SummEval dev", rows, signals, shown, "summary", 4.0)), "\n")

    for name, file in (("SFRES dev", "sfres_dev.jsonl.gz"), ("SFHOT dev", "sfhot_dev.jsonl.gz")):
        rows = read_rows(require_data(Path(args.data) / file))
        outputs = [r["system_output"] for r in rows]
        refs = [r["reference"] for r in rows]
        mrs = [r["source"] for r in rows]
        signals = {
            "naturalness": evaluator.score_batch(outputs, "naturalness", task="data2text"),
            "informativeness": evaluator.score_batch(
                outputs, "informativeness", task="data2text", references=refs, sources=mrs
            ),
            "bleu (reference)": [bleu.score(o, references=[r]) for o, r in zip(outputs, refs)],
            "rouge2 (reference)": [rouge.score(o, references=[r]) for o, r in zip(outputs, refs)],
            "meteor (reference)": [meteor.score(o, references=[r]) for o, r in zip(outputs, refs)],
        }
        print("\n".join(_table(name, rows, signals, ("naturalness", "informativeness"), "sample", 5.0)), "\n")
    print(f"wall time {time.perf_counter() - started:.0f} s on {args.threads} threads")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
