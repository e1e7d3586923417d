"""Scoring a mixed-length suite: the reference path in input order vs the runtime's length-sorted batches.

A test suite asks for per-sentence fluency (a sentence: ~30-60 tokens) next to consistency and coherence
of full documents (up to UniEval's 1,024-token limit). This benchmark builds 200 such UniEval-style
inputs, from 30 to 1,000 tokens, in the order a suite produces them (case by case), from the news
articles of the data kit (docs/data.md), and scores them with a random-weight t5-v1_1 (``--arch base`` by default):

- the reference path, as UniEval runs it: Hugging Face forward, inputs in their order, batches of 8
  padded to the longest input of the batch, fp32;
- the runtime (``load_boolqa(...).score``): inputs sorted by length into token-budget batches
  (``batch_tokens``), fp32 and static int8 graphs exported by the project's exporter.

Each path scores the whole suite once after a short warm-up; the table gives inputs/s, the ratio to the
reference, the max |diff| of the scores, and the padded tokens each path computed.

    python benchmarks/mixed_lengths.py                        # t5-v1_1-base, 200 inputs
    python benchmarks/mixed_lengths.py --arch tiny --inputs 40  # a quick check of the script itself
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import ARCHS, DATA, build_checkpoint, load_articles  # noqa: E402

QUESTIONS = {
    "fluency": "question: Is this a fluent paragraph? </s> paragraph: {sentence}",
    "consistency": "question: Is this claim consistent with the document? </s> claim: {sentence} </s> document: {doc}",
    "coherence": "question: Is this a coherent summary to the document? </s> summary: {summary} </s> document: {doc}",
    "relevance": (
        "question: Is this summary relevant to the reference? </s> summary: {summary} </s> reference: {reference}"
    ),
}


def _cut(tokenizer, text: str, tokens: int) -> str:
    """The longest prefix of ``text`` (at a token boundary) with at most ``tokens`` tokens."""
    offsets = tokenizer(text, add_special_tokens=False, return_offsets_mapping=True).offset_mapping
    if len(offsets) <= tokens:
        return text
    return text[: offsets[tokens - 1][1]]


def build_suite(articles: list[str], n: int, tokenizer, *, seed: int = 0) -> list[str]:
    """``n`` inputs in suite order: per case, fluency and consistency per summary sentence, then coherence
    and relevance of the whole summary; documents cut to lengths spread over 150..950 tokens."""
    rng = random.Random(seed)
    texts: list[str] = []
    case = 0
    while len(texts) < n:
        doc = articles[case % len(articles)] + " " + articles[(case + 7) % len(articles)]
        reference = articles[(case + 3) % len(articles)].split(". ")[0]
        sentences = [s.strip() + "." for s in doc.split(". ")[:3] if s.strip()]
        summary = " ".join(sentences)
        head = len(tokenizer(QUESTIONS["consistency"].format(sentence=sentences[0], doc="")).input_ids)
        doc = _cut(tokenizer, doc, rng.randint(150, 1000 - head - 10))
        for sentence in sentences:
            texts.append(QUESTIONS["fluency"].format(sentence=sentence))
            texts.append(QUESTIONS["consistency"].format(sentence=sentence, doc=doc))
        texts.append(QUESTIONS["coherence"].format(summary=summary, doc=doc))
        texts.append(QUESTIONS["relevance"].format(summary=summary, reference=reference))
        case += 1
    return texts[:n]


def padded_tokens_reference(lengths: np.ndarray, batch: int = 8) -> int:
    return int(sum(len(lengths[i : i + batch]) * lengths[i : i + batch].max() for i in range(0, len(lengths), batch)))


def padded_tokens_runtime(lengths: np.ndarray, batch_tokens: int, max_batch_size: int) -> tuple[int, int]:
    from nlgeval_runtime.tokenize import plan_batches

    batches = plan_batches(lengths, batch_tokens=batch_tokens, max_batch_size=max_batch_size)
    return int(sum(len(b) * lengths[b].max() for b in batches)), len(batches)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=sorted(ARCHS), default="base")
    parser.add_argument("--inputs", type=int, default=200)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--batch-tokens", type=int, default=16384, help="the runtime's padded-token budget per batch")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the checkpoint and exports here")
    parser.add_argument("--no-int8", action="store_true", help="skip the int8 path")
    args = parser.parse_args()

    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_runtime import load_boolqa
    from nlgeval_training.export import export_t5, t5_reference_scores

    torch.set_num_threads(args.threads)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nlgeval-bench-"))
    articles = load_articles(args.data, 400)
    ckpt, folder = work / f"t5-v1_1-{args.arch}-random", work / f"t5-v1_1-{args.arch}-onnx"
    t0 = time.perf_counter()
    if not (ckpt / "config.json").is_file():
        build_checkpoint(args.arch, articles[:64], ckpt)
    if not (folder / "nlgeval.json").is_file():
        export_t5(
            ckpt,
            folder,
            int8=True,
            source_id=f"random t5-v1_1-{args.arch}",
            progress=lambda m: print(f"  export: {m}", file=sys.stderr, flush=True),
        )
    print(f"setup (build + export): {time.perf_counter() - t0:.1f}s", file=sys.stderr)

    tokenizer = AutoTokenizer.from_pretrained(str(ckpt))
    model = T5ForConditionalGeneration.from_pretrained(str(ckpt)).eval()
    yes, no = tokenizer("Yes").input_ids[0], tokenizer("No").input_ids[0]
    texts = build_suite(articles[64:], args.inputs, tokenizer)
    lengths = np.array([len(tokenizer(t, max_length=1024, truncation=True).input_ids) for t in texts])

    def reference(batch):
        return t5_reference_scores(model, tokenizer, batch, max_length=1024, yes_id=yes, no_id=no, batch_size=8)

    paths = {"pytorch-reference (input order, batch 8)": reference}
    precisions = ["fp32"] if args.no_int8 else ["fp32", "int8"]
    scorers = {}
    for precision in precisions:
        scorer = load_boolqa(
            folder, device="cpu", precision=precision, threads=args.threads, batch_tokens=args.batch_tokens
        )
        scorers[precision] = scorer
        paths[f"onnx-{precision} (length-sorted batches)"] = lambda batch, s=scorer: s.score(batch).scores

    warm = [texts[int(np.argmax(lengths))], texts[int(np.argmin(lengths))]]
    scores, seconds = {}, {}
    for name, run in paths.items():
        run(warm)  # session start-up, allocator and thread pool warm-up
        start = time.perf_counter()
        scores[name] = np.asarray(run(texts), dtype=np.float64)
        seconds[name] = time.perf_counter() - start
        print(f"  {name}: {seconds[name]:.1f}s", file=sys.stderr, flush=True)

    ref_name = next(iter(paths))
    ref_rate = len(texts) / seconds[ref_name]
    ref_padded = padded_tokens_reference(lengths)
    run_padded, n_batches = padded_tokens_runtime(lengths, args.batch_tokens, scorers["fp32"].max_batch_size)
    print(
        f"\nt5-v1_1-{args.arch} (random weights), {len(texts)} UniEval-style inputs in suite order, tokens per "
        f"input {lengths.min()}..{lengths.max()} (mean {lengths.mean():.0f}, {lengths.sum()} in all), "
        f"{args.threads} threads, one timed pass per path"
    )
    print(
        f"padded tokens computed: reference {ref_padded} ({len(texts) // 8 + bool(len(texts) % 8)} batches of 8 "
        f"in input order), runtime {run_padded} ({n_batches} length-sorted batches, budget {args.batch_tokens})"
    )
    print(f"{'path':<44}{'inputs/s':>10}{'ratio':>9}{'max|diff|':>12}")
    for name in paths:
        rate = len(texts) / seconds[name]
        diff = float(np.abs(scores[name] - scores[ref_name]).max())
        print(f"{name:<44}{rate:>10.2f}{rate / ref_rate:>8.2f}x{diff:>12.2e}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
