"""Build this example's data from the project's data kit (run once; the outputs are committed).

- ``human_continuations.jsonl``: 60 human news continuations. Each is a CNN/DailyMail or BBC article from
  the documents the default LM was *not* trained on (the same id-hash rule that held them out): the prompt
  is the article's first sentence, the continuation the text that follows (about 900 characters, cut at a
  sentence end, so that it has at least 128 tokens).
- ``corpus.txt``: about 120 kB of sentences from training documents, the text the toy story generator
  (``story_generator.py``) learns its trigrams from.

    python examples/stories/build_references.py --data /path/to/data
    nlgeval trajectory fit-bank examples/stories/human_continuations.jsonl -o examples/stories/bank.npz
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from nlgeval_runtime.sentences import split_sentences
from nlgeval_training.default_lm import corpus_documents

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="folder with the data kit's .jsonl.gz files")
    parser.add_argument("--n", type=int, default=60)
    args = parser.parse_args()
    rows = []
    for corpus, doc_id, text in corpus_documents(args.data, "heldout"):
        if corpus not in ("cnndm", "bbc"):
            continue
        sentences = split_sentences(" ".join(text.split()))
        if len(sentences) < 8:
            continue
        prompt, rest = sentences[0], []
        for s in sentences[1:]:
            rest.append(s)
            if len(" ".join(rest)) >= 900:
                break
        continuation = " ".join(rest)
        if len(prompt) < 40 or len(continuation) < 700:
            continue
        rows.append({"id": doc_id, "prompt": prompt, "continuation": continuation})
        if len(rows) == args.n:
            break
    with open(HERE / "human_continuations.jsonl", "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    corpus_text, size = [], 0
    for corpus, _, text in corpus_documents(args.data, "train"):
        if corpus not in ("cnndm", "bbc"):
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
