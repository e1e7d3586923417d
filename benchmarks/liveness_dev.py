"""Liveness on development text: the probes of ``nlgeval probe`` built from rated development data.

The packaged probe texts are short and clean. This script builds the same kinds of pairs from harder
text: the articles and reference summaries of a SummEval-style development file (tokenised news, rare
names) and the Topical-Chat conversations whose id falls in the training code's held-out split (never
trained on), and prints the liveness table of each model. Data-to-text utterances come from the packaged
texts (there is no development data-to-text file).

    python benchmarks/liveness_dev.py --summeval summeval_dev.jsonl.gz --topicalchat topicalchat.jsonl.gz \
        --model default --model /tmp/other-model
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import tempfile
import time


def _read(path: str) -> list[dict]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def _held_out(group: str, fraction: float = 0.1) -> bool:
    # the training code's group split (nlgeval_training.pseudo.common.is_held_out), restated so that this
    # script runs without the training package
    return int.from_bytes(hashlib.sha1(group.encode("utf-8")).digest()[:8], "big") / 2**64 < fraction


def _words(text: str) -> set[str]:
    import re

    return {w.lower() for w in re.findall(r"[A-Za-z]{4,}", text)}


def build_texts(summeval: str, topicalchat: str, max_dialogues: int = 60) -> dict:
    from nlgeval_runtime.sentences import split_sentences

    from pytest_nlgeval.metaeval.liveness import load_texts

    documents, seen = [], set()
    for rec in _read(summeval):
        if rec["doc_id"] in seen:
            continue
        seen.add(rec["doc_id"])
        summary = split_sentences(rec["reference"])
        if len(summary) >= 2:
            others = [r for r in rec.get("references", [])[1:] if r.strip()]
            documents.append(
                {
                    "id": rec["doc_id"],
                    "document": rec["source"],
                    "summary": summary[:4],
                    **({"references": others[:1]} if others else {}),
                }
            )
    dialogues = []
    for conv in _read(topicalchat):
        if not _held_out(conv["id"]):
            continue
        turns = conv["turns"]
        for t in range(3, len(turns)):
            knowledge = turns[t].get("knowledge") or []
            if knowledge and len(turns[t]["text"].split()) >= 8:
                fact = " ".join(split_sentences(knowledge[0])[:3])
                if len(_words(fact) & _words(turns[t]["text"])) < 2:
                    continue  # the reply does not visibly use its knowledge: no groundedness probe

                dialogues.append(
                    {
                        "id": conv["id"],
                        "history": [u["text"] for u in turns[t - 3 : t]],
                        "fact": fact,
                        "reply": turns[t]["text"],
                    }
                )
                break
        if len(dialogues) >= max_dialogues:
            break
    return {"documents": documents, "dialogues": dialogues, "utterances": load_texts()["utterances"]}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--summeval", required=True)
    parser.add_argument("--topicalchat", required=True)
    parser.add_argument("--model", action="append", default=None)
    parser.add_argument("--dimension", action="append", default=None, help="only these task/dimension keys")
    args = parser.parse_args(argv)

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.metaeval.liveness import build_pairs, probe

    texts = build_texts(args.summeval, args.topicalchat)
    print(
        f"development probe texts: {len(texts['documents'])} documents, {len(texts['dialogues'])} held-out "
        f"dialogues, {len(texts['utterances'])} utterances"
    )
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(texts, handle)
    pairs = build_pairs(texts)
    for model in args.model or ["default"]:
        evaluator = Evaluator(None if model == "default" else model, cache=False)
        start = time.perf_counter()
        report = probe(evaluator, pairs, args.dimension)
        print(f"\n{model} ({time.perf_counter() - start:.0f} s)")
        print(report.table())
        evaluator.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
