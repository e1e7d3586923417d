"""CUDA scoring: the PyTorch reference path vs ONNX Runtime fp16 mixed precision, measured in one run.

Run by ``benchmarks/gpu.sh`` on a machine with an NVIDIA GPU (the script installs what it needs). A
random-weight t5-v1_1 (``--arch large`` by default, the UniEval size) scores realistic ~400-token
Boolean-QA inputs built as in ``scoring.py``:

- the reference path: Hugging Face forward on CUDA, fp32, batch 8 (UniEval's settings);
- the runtime with the fp32 graph and with the mixed-precision fp16 graph (the ``wo`` projections,
  normalisation, softmax and residual additions stay in fp32; t5-v1_1 overflows in plain fp16), at batch 8
  and at the best of a few larger batch sizes.

For every path: inputs/s, the ratio to the reference, max |diff| to the reference and the number of
non-finite scores; and whether each ONNX Runtime session really runs on CUDA
(``session.get_providers()``, never the list of available providers).

    python benchmarks/gpu.py                       # t5-v1_1-large, 64 inputs
    python benchmarks/gpu.py --arch base --inputs 32
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import ARCHS, DATA, build_checkpoint, build_inputs, load_articles  # noqa: E402


def synthetic_articles(n: int) -> list[str]:
    """News-like articles of about 600 words, for machines without the data kit."""
    import random

    from nlgeval_training.static_int8 import _CALIBRATION_SENTENCES

    rng = random.Random(0)
    return [" ".join(rng.choice(_CALIBRATION_SENTENCES) for _ in range(40)) for _ in range(n)]


def raw_scores(scorer, texts):
    """The scorer's own batching, without its error on non-finite scores (they are counted here)."""
    from nlgeval_runtime.tokenize import pad, plan_batches

    encoded = scorer.encoder.encode(list(texts))
    lengths = np.array([r.size for r in encoded.ids], dtype=np.int64)
    out = np.empty(len(texts), dtype=np.float64)
    for batch in plan_batches(lengths, batch_tokens=scorer.batch_tokens, max_batch_size=scorer.max_batch_size):
        ids, mask = pad([encoded.ids[i] for i in batch], scorer.pad_id)
        out[batch] = np.asarray(scorer.session.run({"input_ids": ids, "attention_mask": mask})[0]).reshape(-1)
    return out


def reference_cuda(model, tokenizer, texts, yes, no, batch_size=8):
    import torch

    out = []
    with torch.no_grad():
        for i in range(0, len(texts), batch_size):
            enc = tokenizer(
                texts[i : i + batch_size], max_length=1024, truncation=True, padding=True, return_tensors="pt"
            ).to("cuda")
            start = torch.zeros((enc.input_ids.shape[0], 1), dtype=torch.long, device="cuda")
            logits = model(**enc, decoder_input_ids=start).logits[:, 0, :]
            p = torch.softmax(logits.double(), -1)
            out.append((p[:, yes] / (p[:, yes] + p[:, no])).cpu().numpy())
    torch.cuda.synchronize()
    return np.concatenate(out)


def timed(run, rounds):
    run()  # warm-up: CUDA kernels, cuDNN / cuBLAS workspaces, memory arena
    times, scores = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        scores = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=sorted(ARCHS), default="large")
    parser.add_argument("--inputs", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--batches", default="16,32,64", help="larger batch sizes tried for the best fp16 batch")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--workdir", type=Path, default=None)
    args = parser.parse_args()

    import onnxruntime as ort
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_runtime import load_boolqa
    from nlgeval_training.export import export_t5

    print(
        f"torch {torch.__version__}, CUDA available to torch: {torch.cuda.is_available()}"
        + (f" ({torch.cuda.get_device_name(0)})" if torch.cuda.is_available() else "")
    )
    print(f"onnxruntime {ort.__version__}, providers listed: {ort.get_available_providers()}")
    if not torch.cuda.is_available():
        print("no CUDA device: nothing measured")
        return 2
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nlgeval-gpu-"))
    articles = load_articles(args.data, max(args.inputs, 64)) if args.data.is_file() else synthetic_articles(64)
    ckpt, folder = work / f"t5-v1_1-{args.arch}-random", work / f"t5-v1_1-{args.arch}-onnx"
    t0 = time.perf_counter()
    if not (ckpt / "config.json").is_file():
        build_checkpoint(args.arch, articles, ckpt)
    if not (folder / "nlgeval.json").is_file():
        export_t5(
            ckpt,
            folder,
            fp16=True,
            source_id=f"random t5-v1_1-{args.arch}",
            progress=lambda m: print(f"  export: {m}", file=sys.stderr, flush=True),
        )
    print(f"setup (build + export): {time.perf_counter() - t0:.1f}s", flush=True)

    tokenizer = AutoTokenizer.from_pretrained(str(ckpt))
    model = T5ForConditionalGeneration.from_pretrained(str(ckpt)).eval().cuda()
    texts = build_inputs(articles, args.inputs, tokenizer)
    n_tok = [len(tokenizer(t).input_ids) for t in texts]
    yes, no = tokenizer("Yes").input_ids[0], tokenizer("No").input_ids[0]

    rows = []
    ref_seconds, ref = timed(lambda m=model: reference_cuda(m, tokenizer, texts, yes, no), args.rounds)
    rows.append(("pytorch-reference fp32 b8", ref_seconds, ref, "torch cuda"))
    del model
    torch.cuda.empty_cache()

    def onnx_row(precision, batch):
        scorer = load_boolqa(folder, device="cuda", precision=precision, batch_tokens=1 << 30, max_batch_size=batch)
        got = scorer.session.inner.get_providers()
        seconds, scores = timed(lambda: raw_scores(scorer, texts), args.rounds)
        return (f"onnx-{precision} b{batch}", seconds, scores, f"{scorer.provider} (session: {got[0]})")

    rows.append(onnx_row("fp32", 8))
    rows.append(onnx_row("fp16", 8))
    best = None
    for batch in [int(b) for b in args.batches.split(",") if b]:
        try:
            row = onnx_row("fp16", batch)
        except Exception as exc:  # e.g. out of memory at a large batch: report and keep the others
            print(f"  fp16 batch {batch}: {type(exc).__name__}: {str(exc)[:200]}", flush=True)
            continue
        if best is None or row[1] < best[1]:
            best = row
    if best is not None:
        rows.append((best[0] + " (best)", *best[1:]))

    print(
        f"\nt5-v1_1-{args.arch} (random weights), {len(texts)} inputs, tokens per input mean {np.mean(n_tok):.0f} "
        f"(min {min(n_tok)}, max {max(n_tok)}), median of {args.rounds} rounds"
    )
    print(f"{'path':<30}{'inputs/s':>10}{'ratio':>9}{'max|diff|':>12}{'non-finite':>12}  provider")
    for name, seconds, scores, provider in rows:
        finite = np.isfinite(scores)
        diff = float(np.abs(scores[finite] - ref[finite]).max()) if finite.any() else float("nan")
        rate = len(texts) / seconds
        print(
            f"{name:<30}{rate:>10.2f}{rate * ref_seconds / len(texts):>8.2f}x{diff:>12.2e}"
            f"{int((~finite).sum()):>12}  {provider}"
        )
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
