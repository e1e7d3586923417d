"""Scoring throughput: the PyTorch reference path vs ONNX Runtime fp32 and int8, measured in one run.

A random-weight T5 of the t5-v1_1 architecture (``--arch base`` by default, ``--arch large`` for the
released UniEval size) scores realistic Boolean-QA inputs of about 400 tokens built from the news articles
of the data kit (docs/data.md; or any JSONL with an ``article`` field). The reference path is UniEval's: Hugging Face
forward, batch 8, fp32, ``torch.no_grad()``. The paths run in alternating rounds so that a noisy machine
affects them alike; the median round is reported.

The ONNX paths are the exporter's defaults: the fused scoring graph (t5_graph.py) in fp32, and static int8
(scales calibrated at export, batched like fp32). ``--levers`` adds one row per speed lever, each measured in
the same rounds: the previous graph (a trace of Hugging Face's forward) and its dynamic int8 scored one
input at a time, the scoring graph without the fused attention operator, QOperator instead of QDQ int8,
the session without thread spinning, and IO binding.

    python benchmarks/scoring.py                      # t5-v1_1-base, 32 inputs, 3 rounds
    python benchmarks/scoring.py --levers             # plus one row per lever
    python benchmarks/scoring.py --arch large --inputs 16
    python benchmarks/scoring.py --device cuda         # adds fp16 on the GPU (onnxruntime-gpu)
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ARCHS = {
    # google/t5-v1_1-{base,large} (UniEval's public code, maszhongming/UniEval)
    "tiny": dict(d_model=64, d_ff=128, num_layers=2, num_decoder_layers=2, num_heads=4, d_kv=16),
    "base": dict(d_model=768, d_ff=2048, num_layers=12, num_decoder_layers=12, num_heads=12, d_kv=64),
    "large": dict(d_model=1024, d_ff=2816, num_layers=24, num_decoder_layers=24, num_heads=16, d_kv=64),
}
VOCAB = 32128
DATA = Path(os.environ.get("NLGEVAL_DATA", "data-kit")) / "cnndm.jsonl.gz"  # docs/data.md


def require_data(path: Path) -> Path:
    """``path`` when it is a file; else exit naming what to set (the data kit: docs/data.md)."""
    if not Path(path).is_file():
        raise SystemExit(
            f"{path} does not exist: point NLGEVAL_DATA at the data kit (docs/data.md), "
            "or give the file with --data where the script takes it"
        )
    return Path(path)


def load_articles(path: Path, n: int) -> list[str]:
    require_data(path)
    opener = gzip.open if path.suffix == ".gz" else open
    out = []
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            out.append(json.loads(line)["article"])
            if len(out) >= n:
                break
    return out


def build_tokenizer(articles: list[str]):
    """A Unigram tokenizer with T5's conventions (pad 0, </s> 1, unk 2, EOS appended), vocab 32128."""
    from collections import Counter

    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    counts = Counter(w for a in articles for w in a.split())
    chars = sorted({c for a in articles for c in a if not c.isspace()})
    words = [w for w, _ in counts.most_common(VOCAB - 4 - len(chars) - 2) if w not in ("Yes", "No")]
    vocab = [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), ("\u2581", -3.0), ("\u2581Yes", -5.0), ("\u2581No", -5.0)]
    vocab += [("\u2581" + w, -5.0 - i * 1e-5) for i, w in enumerate(words)] + [(c, -12.0) for c in chars]
    vocab += [(f"<extra_id_{i}>", -20.0) for i in range(VOCAB - len(vocab))]
    tok = Tokenizer(models.Unigram(vocab[:VOCAB], unk_id=2, byte_fallback=False))
    tok.add_special_tokens(["<pad>", "</s>", "<unk>"])
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return tok


def build_checkpoint(arch: str, articles: list[str], where: Path) -> Path:
    import torch
    from transformers import T5Config, T5ForConditionalGeneration, T5TokenizerFast

    tok = build_tokenizer(articles)
    T5TokenizerFast(
        tokenizer_object=tok, eos_token="</s>", pad_token="<pad>", unk_token="<unk>", extra_ids=0, model_max_length=1024
    ).save_pretrained(str(where))
    config = T5Config(
        vocab_size=VOCAB,
        feed_forward_proj="gated-gelu",
        tie_word_embeddings=False,
        decoder_start_token_id=0,
        pad_token_id=0,
        eos_token_id=1,
        dropout_rate=0.0,
        **ARCHS[arch],
    )
    torch.manual_seed(0)
    model = T5ForConditionalGeneration(config).eval()
    with torch.no_grad():  # keep random scores inside (0, 1) rather than saturated, so diffs are informative
        model.lm_head.weight.mul_(0.05)
    model.save_pretrained(str(where))
    return where


def build_inputs(articles: list[str], n: int, tokenizer, target_tokens: int = 400) -> list[str]:
    questions = [
        ("Is this claim consistent with the document?", "claim"),
        ("Is this a coherent summary to the document?", "summary"),
    ]
    texts = []
    for i in range(n):
        doc = articles[i % len(articles)]
        first = doc.split(". ")[0][:200]
        q, field = questions[i % 2]
        words = doc.split()
        budget = target_tokens - 40 + (i % 7) * 10  # mixed lengths around the target, like a real suite
        body = " ".join(words[:budget])
        while len(tokenizer(f"question: {q} </s> {field}: {first} </s> document: {body}").input_ids) > budget + 40:
            body = " ".join(body.split()[: int(len(body.split()) * 0.9)])
        texts.append(f"question: {q} </s> {field}: {first} </s> document: {body}")
    return texts


def alternating_rounds(names: list[str], run, rounds: int) -> tuple[dict[str, list[float]], dict[str, object]]:
    """Seconds per round of ``run(name)`` for every name, after one warm-up call each (session initialisation,
    allocator); the names alternate within a round, so a noisy neighbour slows them alike. Returns the
    timings and each name's last scores."""
    timings: dict[str, list[float]] = {name: [] for name in names}
    scores = {name: run(name) for name in names}
    for _ in range(rounds):
        for name in names:
            t = time.perf_counter()
            scores[name] = run(name)
            timings[name].append(time.perf_counter() - t)
    return timings, scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--arch", choices=sorted(ARCHS), default="base")
    parser.add_argument("--inputs", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the checkpoint and exports here")
    parser.add_argument("--levers", action="store_true", help="add one row per speed lever (CPU)")
    args = parser.parse_args()

    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_runtime import load_boolqa
    from nlgeval_training.export import export_t5, t5_reference_scores

    torch.set_num_threads(args.threads)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nlgeval-bench-"))
    articles = load_articles(args.data, max(args.inputs, 64))
    ckpt, folder = work / f"t5-v1_1-{args.arch}-random", work / f"t5-v1_1-{args.arch}-onnx"
    t0 = time.perf_counter()
    if not (ckpt / "config.json").is_file():
        build_checkpoint(args.arch, articles, ckpt)
    say = lambda m: print(f"  export: {m}", file=sys.stderr, flush=True)  # noqa: E731
    if not (folder / "nlgeval.json").is_file():
        export_t5(
            ckpt,
            folder,
            int8=args.device == "cpu",
            fp16=args.device == "cuda",
            source_id=f"random t5-v1_1-{args.arch}",
            progress=say,
        )
    lever_folders = {}
    if args.levers and args.device == "cpu":
        for name, options in LEVER_EXPORTS.items():
            lever_folders[name] = work / f"t5-v1_1-{args.arch}-{name}"
            if not (lever_folders[name] / "nlgeval.json").is_file():
                export_t5(ckpt, lever_folders[name], source_id=f"random t5-v1_1-{args.arch}", progress=say, **options)
    print(f"setup (build + export): {time.perf_counter() - t0:.1f}s", file=sys.stderr)

    tokenizer = AutoTokenizer.from_pretrained(str(ckpt))
    model = T5ForConditionalGeneration.from_pretrained(str(ckpt)).eval()
    texts = build_inputs(articles, args.inputs, tokenizer)
    n_tok = [len(tokenizer(t).input_ids) for t in texts]
    yes, no = tokenizer("Yes").input_ids[0], tokenizer("No").input_ids[0]

    paths = {"pytorch-reference": None}
    if args.device == "cpu":
        paths["onnx-fp32"] = load_boolqa(folder, device="cpu", precision="fp32", threads=args.threads)
        paths["onnx-int8"] = load_boolqa(folder, device="cpu", precision="int8", threads=args.threads)
        if args.levers:
            paths.update(lever_paths(folder, lever_folders, args.threads))
    else:
        model = model.cuda()
        paths["onnx-fp32"] = load_boolqa(folder, device="cuda", precision="fp32")
        paths["onnx-fp16"] = load_boolqa(folder, device="cuda", precision="fp16")

    def run(name):
        scorer = paths[name]
        if scorer is None:
            if args.device == "cuda":
                return _reference_cuda(model, tokenizer, texts, yes, no)
            return t5_reference_scores(model, tokenizer, texts, max_length=1024, yes_id=yes, no_id=no, batch_size=8)
        return scorer.score(texts).scores

    timings, scores = alternating_rounds(list(paths), run, args.rounds)

    ref = scores["pytorch-reference"]
    ref_rate = len(texts) / statistics.median(timings["pytorch-reference"])
    print(
        f"\nt5-v1_1-{args.arch} (random weights), {len(texts)} inputs, tokens per input "
        f"mean {np.mean(n_tok):.0f} (min {min(n_tok)}, max {max(n_tok)}), device {args.device}, "
        f"{args.threads} threads, median of {args.rounds} alternating rounds"
    )
    print(f"{'path':<24}{'inputs/s':>10}{'ratio':>9}{'max|diff|':>12}")
    for name in paths:
        rate = len(texts) / statistics.median(timings[name])
        diff = float(np.abs(scores[name] - ref).max())
        print(f"{name:<24}{rate:>10.2f}{rate / ref_rate:>8.2f}x{diff:>12.2e}")
    if "onnx-int8" in paths:  # fixed activation scales: a score is the same alone as in its batch
        alone = np.array([paths["onnx-int8"].score([t]).scores[0] for t in texts[:4]])
        print(
            f"onnx-int8 ({paths['onnx-int8'].folder.quantization('int8')}), first 4 inputs scored alone vs in "
            f"their batch: max |diff| = {float(np.abs(alone - scores['onnx-int8'][:4]).max()):.2e}"
        )
    return 0


# Exports that isolate one lever each (see the module docstring).
LEVER_EXPORTS = {
    "traced": dict(graph="traced", int8=True, int8_method="dynamic"),
    "plain": dict(graph="plain"),
    "qoperator": dict(int8=True, int8_format="qoperator"),
}


def lever_paths(folder: Path, lever_folders: dict[str, Path], threads: int) -> dict:
    """One scorer per lever, named for the table."""
    import onnxruntime as ort

    from nlgeval_runtime import load_boolqa
    from nlgeval_runtime.boolqa import BoolQAScorer
    from nlgeval_runtime.modelfolder import ModelFolder
    from nlgeval_runtime.session import Session

    def session(options_edit, precision="fp32", session_class=Session):
        model_folder = ModelFolder.open(folder)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.log_severity_level = 3
        options_edit(options)
        graph = model_folder.graph_for(precision)
        inner = ort.InferenceSession(str(graph), sess_options=options, providers=["CPUExecutionProvider"])
        return BoolQAScorer(model_folder, session_class(inner, "CPUExecutionProvider", precision, graph))

    return {
        "fp32 traced HF graph": load_boolqa(lever_folders["traced"], device="cpu", precision="fp32", threads=threads),
        "int8 dynamic 1/call": load_boolqa(lever_folders["traced"], device="cpu", precision="int8", threads=threads),
        "fp32 plain attention": load_boolqa(lever_folders["plain"], device="cpu", precision="fp32", threads=threads),
        "int8 QOperator": load_boolqa(lever_folders["qoperator"], device="cpu", precision="int8", threads=threads),
        "fp32 no spinning": session(lambda o: o.add_session_config_entry("session.intra_op.allow_spinning", "0")),
        "fp32 IO binding": session(lambda o: None, session_class=_BoundSession),
    }


class _BoundSession:
    """A runtime Session whose run goes through ONNX Runtime's IO binding (inputs bound from numpy)."""

    def __init__(self, inner, provider, precision, graph):
        from nlgeval_runtime.session import Session

        self._plain = Session(inner, provider, precision, graph)
        self.inner, self.provider, self.precision, self.graph = inner, provider, precision, graph
        self.input_names = self._plain.input_names

    def run(self, feeds):
        binding = self.inner.io_binding()
        for name, array in feeds.items():
            binding.bind_cpu_input(name, array)
        binding.bind_output("p_yes")
        self.inner.run_with_iobinding(binding)
        return binding.copy_outputs_to_cpu()


def _reference_cuda(model, tokenizer, texts, yes, no):
    import torch

    out = []
    with torch.no_grad():
        for i in range(0, len(texts), 8):
            enc = tokenizer(texts[i : i + 8], max_length=1024, truncation=True, padding=True, return_tensors="pt").to(
                "cuda"
            )
            start = torch.zeros((enc.input_ids.shape[0], 1), dtype=torch.long, device="cuda")
            logits = model(**enc, decoder_input_ids=start).logits[:, 0, :]
            p = torch.softmax(logits.double(), -1)
            out.append((p[:, yes] / (p[:, yes] + p[:, no])).cpu().numpy())
    return np.concatenate(out)


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
