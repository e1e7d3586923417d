"""Pseudo-data generation speed: records per second per dimension on one core (target >= 2,000).

    python benchmarks/pseudo_data.py --data $NLGEVAL_DATA [--docs 1000] [--dialogues 1000]

Corpora are loaded (and sentence-split) once before timing; each generator call is timed as a whole,
including its BM25 index and deduplication. The printed ratio is records/s divided by the target.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

TARGET = 2000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit"))
    parser.add_argument("--docs", type=int, default=None, help="documents per corpus at most")
    parser.add_argument("--dialogues", type=int, default=None)
    args = parser.parse_args()
    data = Path(args.data)

    from nlgeval_training.data import load_dialogues, load_documents
    from nlgeval_training.pseudo import dialogue as dlg
    from nlgeval_training.pseudo import summarization as summ

    t = time.perf_counter()
    docs = load_documents(data / "cnndm.jsonl.gz", limit=args.docs) + load_documents(
        data / "bbc_news_summary.jsonl.gz", limit=args.docs
    )
    dialogues = load_dialogues(data / "topicalchat.jsonl.gz", limit=args.dialogues)
    antonyms = summ.load_antonyms(data / "antonyms_wordnet.jsonl.gz")
    print(
        f"loaded {len(docs)} documents, {len(dialogues)} dialogues in {time.perf_counter() - t:.1f} s (not timed below)"
    )
    jobs = {
        "summarization/coherence": lambda: summ.coherence(docs, 0),
        "summarization/consistency": lambda: summ.consistency(docs, antonyms, 0),
        "summarization/fluency": lambda: summ.fluency(docs, 0),
        "summarization/relevance": lambda: summ.relevance(docs, 0),
        "dialogue/naturalness": lambda: dlg.naturalness(dialogues, 0),
        "dialogue/coherence": lambda: dlg.coherence(dialogues, 0),
        "dialogue/engagingness": lambda: dlg.engagingness(dialogues, 0),
        "dialogue/groundedness": lambda: dlg.groundedness(dialogues, 0),
    }
    print(f"{'dimension':28s} {'records':>8s} {'seconds':>8s} {'records/s':>10s} {'x target':>9s}")
    for name, job in jobs.items():
        t = time.process_time()  # CPU time of this process: one core, unaffected by other load
        records = job()
        dt = time.process_time() - t
        rate = len(records) / dt if dt > 0 else float("inf")
        print(f"{name:28s} {len(records):8d} {dt:8.2f} {rate:10.0f} {rate / TARGET:9.2f}")


if __name__ == "__main__":
    main()
