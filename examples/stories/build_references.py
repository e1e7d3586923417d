"""Build this example's data from the project's data kit (run once; the outputs are committed).

The text is Topical-Chat (knowledge-grounded conversations, Community Data License Agreement - Sharing 1.0,
which allows redistribution with the licence; see the data kit's SOURCES.md), so the example can ship it.

- ``human_continuations.jsonl``: 60 human dialogue continuations. Each comes from a conversation the
  default LM was *not* trained on (the same id-hash rule that held it out): the prompt is the first two turns,
  the continuation the turns that follow (at least 700 characters, cut at a turn end, so that it has at least
  128 tokens), turns separated by line breaks.
- ``corpus.txt``: about 120 kB of turns from training conversations, the text the toy generator
  (``story_generator.py``) learns its bigrams from.

    python examples/stories/build_references.py --data /path/to/data
    nlgeval trajectory fit-bank examples/stories/human_continuations.jsonl -o examples/stories/bank.npz
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from nlgeval_training.data import corpus_documents

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder with the data kit's .jsonl.gz files")
    parser.add_argument("--n", type=int, default=60)
    args = parser.parse_args()
    rows = []
    for corpus, doc_id, text in corpus_documents(args.data, "heldout"):
        if corpus != "topicalchat":
            continue
        turns = [t.strip() for t in text.split("\n") if t.strip()]
        if len(turns) < 8:
            continue
        prompt, rest = "\n".join(turns[:2]), []
        for turn in turns[2:]:
            rest.append(turn)
            if len("\n".join(rest)) >= 700:
                break
        continuation = "\n".join(rest)
        if len(continuation) < 700:
            continue
        rows.append({"id": doc_id, "prompt": prompt, "continuation": continuation})
        if len(rows) == args.n:
            break
    with open(HERE / "human_continuations.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    corpus_text, size = [], 0
    for corpus, _, text in corpus_documents(args.data, "train"):
        if corpus != "topicalchat":
            continue
        block = " ".join(text.split())
        corpus_text.append(block)
        size += len(block)
        if size > 120_000:
            break
    (HERE / "corpus.txt").write_text("\n".join(corpus_text) + "\n", encoding="utf-8")
    print(f"{len(rows)} human continuations, corpus of {size} characters")


if __name__ == "__main__":
    main()
