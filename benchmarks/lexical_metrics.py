"""Lexical metrics on a SummEval-shaped workload: 100 documents x 16 systems x 11 references.

The texts are real news: each "document" is a CNN/DailyMail article of the data kit, its 16 "system
outputs" are extractive 3-sentence selections from its first ten sentences, and its 11 references are the
highlights of 11 articles (SummEval's references are about as long). Every metric scores all 1,600 outputs
against their 11 references with ``score_batch``, as ``nlgeval meta-eval`` does. ROUGE is also run through
rouge-score's own ``RougeScorer.score`` pair by pair (``impl="rouge-score"``), in the same run, to show
the speed-up of the fast path (identical numbers, checked here and in the tests).

TER's shift search is slow on 50-60-word texts: it is timed on ``--ter-docs`` documents and the time for
all documents is printed as a projection, marked as such.

    python benchmarks/lexical_metrics.py                  # 100 docs
    python benchmarks/lexical_metrics.py --docs 20 --ter-docs 1
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import require_data  # noqa: E402

DATA = Path(os.environ.get("NLGEVAL_DATA", "data-kit")) / "cnndm.jsonl.gz"  # docs/data.md
FAST = ["rouge1", "rouge2", "rougeL", "bleu", "chrf", "chrf_pp"]


def workload(path: Path, docs: int, systems: int = 16, n_refs: int = 11, seed: int = 0):
    require_data(path)
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh]
    rng = random.Random(seed)
    outputs, references = [], []
    for d in range(docs):
        sents = re.split(r"(?<=[.!?])\s+", rows[d]["article"].strip())[:10]
        refs = [rows[(d + k) % len(rows)]["highlights"].replace("\n", " ") for k in range(n_refs)]
        for _ in range(systems):
            outputs.append(" ".join(rng.sample(sents, min(3, len(sents)))))
            references.append(refs)
    return outputs, references


def timed(fn):
    t = time.perf_counter()
    value = fn()
    return time.perf_counter() - t, value


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--docs", type=int, default=100)
    ap.add_argument("--ter-docs", type=int, default=2)
    args = ap.parse_args(argv)

    from pytest_nlgeval.metrics import get_metric

    outs, refs = workload(args.data, args.docs)
    words = sum(len(o.split()) for o in outs) / len(outs)
    ref_words = sum(len(r.split()) for rs in refs for r in rs) / (len(refs) * len(refs[0]))
    print(f"{len(outs)} outputs ({words:.0f} words on average) x {len(refs[0])} references ({ref_words:.0f} words)")
    secs, _ = timed(lambda: [get_metric(n).score("warm up", references=["warm up"]) for n in FAST])
    print(f"  imports and first calls (rouge-score imports nltk): {secs:.2f} s, not counted below")
    total = 0.0
    for name in FAST:
        metric = get_metric(name)
        secs, _ = timed(lambda: metric.score_batch(outs, references=refs))
        total += secs
        print(f"  {name:10s} {secs:7.2f} s")
    print(f"  {'total':10s} {total:7.2f} s   (rouge1/2/L, BLEU, chrF, chrF++), one process")

    # the same work through meta-evaluation's scoring with two worker processes (one per core)
    from pytest_nlgeval.metaeval import Record, compute_metric_values

    records = [
        Record(i, str(i // 16), str(i % 16), o, None, tuple(r), None, {"x": 0.0})
        for i, (o, r) in enumerate(zip(outs, refs))
    ]
    par_total = 0.0
    for name in FAST:
        secs, _ = timed(lambda: compute_metric_values(records, name, jobs=2))
        par_total += secs
    print(f"  {'total':10s} {par_total:7.2f} s   same metrics, 2 processes (jobs=2) -> {total / par_total:.2f}x")

    for name in ("rouge2", "rougeL"):
        fast = get_metric(name)
        slow = get_metric(name, impl="rouge-score")
        f_secs, f_vals = timed(lambda: fast.score_batch(outs, references=refs))
        s_secs, s_vals = timed(lambda: slow.score_batch(outs, references=refs))
        same = max(abs(a - b) for a, b in zip(f_vals, s_vals))
        print(
            f"  {name}: rouge-score pair by pair {s_secs:.2f} s vs fast path {f_secs:.2f} s "
            f"-> {s_secs / f_secs:.1f}x (max |diff| {same:.1e})"
        )

    n_ter = args.ter_docs * 16
    ter = get_metric("ter")
    secs, _ = timed(lambda: ter.score_batch(outs[:n_ter], references=refs[:n_ter]))
    print(
        f"  ter        {secs:7.2f} s on {n_ter} outputs -> projected {secs * len(outs) / n_ter:.0f} s for {len(outs)}"
        " (projection, not measured)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
