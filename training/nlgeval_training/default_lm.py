"""Train the small offline default causal LM that the trajectory checks use when no LM is given.

A tiny GPT-2 (4 layers, width 192, 8,192-token byte-level BPE, 256 positions, about 3.4M parameters) trained
from scratch on the English text of the data kit: CNN/DailyMail and BBC news articles, SciTLDR abstracts and
Topical-Chat conversations (turns joined by line breaks). Documents are split into training and held-out
sets by a hash of their id, so the held-out perplexity is measured on documents the model never saw.

It is a measuring instrument, not a writer: coherence trajectories only need a model whose next-token
log-probabilities rank fluent, on-topic text above shuffled or repetitive text. Large models (``nlgeval
export gpt2 ...``) give better coherence signals and are a drop-in replacement.

Train and export (one torch thread, a wall-clock budget; figures go to ``training_report.json`` and the
folder's ``CARD.md``)::

    python -m nlgeval_training.default_lm train --data /path/to/data --out runtime/nlgeval_runtime/default_lm \\
        --minutes 38 --threads 1

Print the card's figures again from the exported folder with ONNX Runtime (held-out perplexity is
recomputed, not copied)::

    python -m nlgeval_training.default_lm report runtime/nlgeval_runtime/default_lm --data /path/to/data
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Iterator

from nlgeval_training.data import read_jsonl

__all__ = ["corpus_documents", "train_tokenizer", "train_default_lm", "heldout_perplexity", "main"]

BOS = "<|endoftext|>"
#: Share of documents (by id hash) kept out of training for perplexity and for example reference banks.
HELDOUT_PERCENT = 3

# (file, how to turn a row into text, corpus label)
_SOURCES = (
    ("cnndm.jsonl.gz", lambda r: r.get("article", ""), "cnndm"),
    ("bbc_news_summary.jsonl.gz", lambda r: r.get("article", ""), "bbc"),
    ("scitldr.jsonl.gz", lambda r: r.get("article", ""), "scitldr"),
    ("topicalchat.jsonl.gz", lambda r: "\n".join(t.get("text", "") for t in r.get("turns", [])), "topicalchat"),
)


def is_heldout(doc_id: str) -> bool:
    """True for the documents kept out of training (a stable hash of the id, about 3% of them)."""
    return int(hashlib.sha256(doc_id.encode("utf-8")).hexdigest()[:8], 16) % 100 < HELDOUT_PERCENT


def corpus_documents(data_dir: str | Path, split: str = "train") -> Iterator[tuple[str, str, str]]:
    """Yield ``(corpus, id, text)`` of the kit's documents of ``split`` (``"train"`` or ``"heldout"``)."""
    data = Path(data_dir)
    for name, to_text, label in _SOURCES:
        path = data / name
        if not path.is_file():
            continue
        for lineno, row in enumerate(read_jsonl(path), start=1):
            doc_id = f"{label}:{row.get('id', lineno)}"
            if is_heldout(doc_id) != (split == "heldout"):
                continue
            text = to_text(row).replace("\r", "").strip()
            if len(text) >= 200:
                yield label, doc_id, text


def train_tokenizer(texts: list[str], vocab_size: int = 8192):
    """A byte-level BPE tokenizer (GPT-2 style, no prefix space, no post-processor) trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=[BOS], min_frequency=2,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    return tok


def _token_stream(tok, texts: list[str]) -> list[int]:
    bos = tok.token_to_id(BOS)
    stream: list[int] = []
    for enc in tok.encode_batch(texts, add_special_tokens=False):
        stream.append(bos)
        stream.extend(enc.ids)
    return stream


def heldout_perplexity(logprob_fn, tok, texts: list[str], block: int) -> tuple[float, int]:
    """exp(mean negative log-likelihood) of ``texts`` scored in BOS-led blocks of at most ``block`` tokens.

    ``logprob_fn(list of id lists) -> list of arrays`` returns the next-token log-probabilities of each
    block (length ``len(ids) - 1``); it is PyTorch during training and ONNX Runtime in ``report``.
    """
    bos = tok.token_to_id(BOS)
    blocks: list[list[int]] = []
    for enc in tok.encode_batch(texts, add_special_tokens=False):
        ids = enc.ids
        for start in range(0, len(ids), block - 1):
            chunk = ids[start : start + block - 1]
            if len(chunk) >= 2:
                blocks.append([bos] + chunk)
    total, count = 0.0, 0
    for i in range(0, len(blocks), 16):
        for lp in logprob_fn(blocks[i : i + 16]):
            total += float(-lp.sum())
            count += len(lp)
    return math.exp(total / count), count


def _torch_logprob_fn(model):
    import numpy as np
    import torch

    def fn(batch: list[list[int]]):
        width = max(len(b) for b in batch)
        ids = torch.zeros((len(batch), width), dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, b in enumerate(batch):
            ids[i, : len(b)] = torch.tensor(b)
            mask[i, : len(b)] = 1
        with torch.no_grad():
            logits = model(input_ids=ids, attention_mask=mask).logits
            lp = torch.log_softmax(logits[:, :-1].float(), -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
        return [np.asarray(lp[i, : len(b) - 1]) for i, b in enumerate(batch)]

    return fn


def train_default_lm(data_dir: str | Path, out_dir: str | Path, *, minutes: float = 38.0, threads: int = 1,
                     seed: int = 0, vocab_size: int = 8192, n_embd: int = 192, n_layer: int = 4, n_head: int = 4,
                     block: int = 256, batch_size: int = 16, lr: float = 2e-3, max_steps: int | None = None,
                     log=print) -> dict:
    """Train the default LM within ``minutes`` of wall clock and export it to ``out_dir``; returns the report."""
    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from nlgeval_training.export_causal import export_causal_lm

    started = time.time()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    random.seed(seed)
    train_docs = list(corpus_documents(data_dir, "train"))
    heldout_docs = list(corpus_documents(data_dir, "heldout"))
    if not train_docs:
        raise SystemExit(f"no training documents found under {data_dir}; pass --data pointing at the data kit")
    texts = [t for _, _, t in train_docs]
    log(f"documents: {len(train_docs)} train, {len(heldout_docs)} held out")
    tok = train_tokenizer(texts, vocab_size)
    stream = np.asarray(_token_stream(tok, texts), dtype=np.int64)
    n_blocks = len(stream) // block
    data = torch.from_numpy(stream[: n_blocks * block].reshape(n_blocks, block))
    log(f"tokenizer: {tok.get_vocab_size()} tokens; training tokens: {len(stream)} in {n_blocks} blocks of {block}")

    bos = tok.token_to_id(BOS)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=block, n_embd=n_embd, n_layer=n_layer,
                        n_head=n_head, bos_token_id=bos, eos_token_id=bos, pad_token_id=bos,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True)
    config._attn_implementation = "eager"
    model = GPT2LMHeadModel(config)
    n_params = int(sum(p.numel() for p in model.parameters()))
    log(f"model: {n_params} parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    budget = minutes * 60.0 - (time.time() - started)
    warmup = 50
    planned = max_steps  # fixed after the first steps' timing when not given
    step, losses = 0, []
    train_started = time.time()
    model.train()
    while True:
        elapsed = time.time() - train_started
        if planned is not None and step >= planned:
            break
        # Keep ~12% of the budget for evaluation and export.
        if elapsed > budget * 0.88:
            break
        if planned is None and step == 10:
            per_step = elapsed / 10
            planned = max(20, int(budget * 0.88 / per_step))
            log(f"{per_step:.2f} s/step -> planning {planned} steps")
        total = planned or 10_000
        if step < warmup:
            scale = (step + 1) / warmup
        else:
            scale = 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))
        for group in opt.param_groups:
            group["lr"] = lr * scale
        idx = torch.randint(0, n_blocks, (batch_size,))
        batch = data[idx]
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss))
        step += 1
        if step % 50 == 0:
            log(f"step {step}/{planned} loss {np.mean(losses[-50:]):.3f} ({time.time() - started:.0f} s)")
    train_seconds = time.time() - train_started
    model.eval()
    heldout_texts = [t for _, _, t in heldout_docs]
    ppl, n_tokens = heldout_perplexity(_torch_logprob_fn(model), tok, heldout_texts, block)
    log(f"held-out perplexity {ppl:.2f} on {n_tokens} tokens")
    report = {
        "parameters": n_params, "steps": step, "batch_size": batch_size, "block": block,
        "tokens_seen": step * batch_size * block, "train_tokens": int(len(stream)),
        "train_documents": len(train_docs), "heldout_documents": len(heldout_docs),
        "train_seconds": round(train_seconds, 1), "torch_threads": threads,
        "final_train_loss": float(np.mean(losses[-50:])) if losses else None,
        "heldout_perplexity_torch": round(ppl, 3), "heldout_tokens": n_tokens,
        "config": {"vocab_size": config.vocab_size, "n_embd": n_embd, "n_layer": n_layer, "n_head": n_head,
                   "n_positions": block}, "seed": seed, "lr": lr,
    }
    out = export_causal_lm(model, out_dir, tokenizer=tok, bos_token_id=bos, max_length=block,
                           extra_manifest={"source": {"checkpoint": "nlgeval default causal LM (trained from scratch)",
                                                      "revision": None},
                                           "training": report})
    report["parity_max_abs_diff"] = json.loads((out / "nlgeval.json").read_text())["export"]["parity"]["fp32"][
        "max_abs_diff"]
    report["total_seconds"] = round(time.time() - started, 1)
    (out / "training_report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    write_card(out, report)
    return report


def write_card(out: Path, report: dict) -> None:
    """Write ``CARD.md`` from the training report (every figure in it is a measured one)."""
    cfg = report["config"]
    card = f"""# Default causal LM of pytest-nlgeval

A tiny GPT-2 trained from scratch, offline, so that trajectory checks (coherence) work without a download.
It is a measuring instrument for next-token predictability, not a text generator, and a weak one: it was
trained within a wall-clock budget on one CPU thread of a shared machine, so it saw only
{report['tokens_seen'] / report['train_tokens']:.2f} epochs of its data and its perplexity is high. For better coherence signals export a larger model
(`nlgeval_training.export_causal.export_causal_lm("gpt2", DIR)`) and fit banks with it (`--lm DIR`).

| | |
|---|---|
| architecture | GPT-2, {cfg['n_layer']} layers, width {cfg['n_embd']}, {cfg['n_head']} heads, {cfg['n_positions']} positions, tied embeddings |
| tokenizer | byte-level BPE, {cfg['vocab_size']} tokens, trained on the same training documents; BOS = `<|endoftext|>` |
| parameters | {report['parameters']:,} |
| training data | {report['train_documents']:,} documents ({report['train_tokens']:,} tokens): CNN/DailyMail and BBC news articles, SciTLDR abstracts, Topical-Chat conversations |
| training | {report['steps']:,} steps x {report['batch_size']} x {report['block']} tokens ({report['tokens_seen']:,} tokens seen, {report['tokens_seen'] / report['train_tokens']:.2f} epochs), AdamW lr {report['lr']} with warm-up and a cosine schedule, stopped by the wall-clock budget; {report['torch_threads']} torch thread(s), seed {report['seed']} |
| training time | {report['train_seconds'] / 60:.1f} minutes of training ({report['total_seconds'] / 60:.1f} minutes with tokenizer, evaluation and export) |
| held-out perplexity | {report['heldout_perplexity_torch']:.2f} (PyTorch) on {report['heldout_tokens']:,} tokens of {report['heldout_documents']} held-out documents (3% of documents by id hash) |
| ONNX parity | max abs diff of token log-probs vs PyTorch {report['parity_max_abs_diff']:.2g} |

Reproduce the figures from this folder (ONNX Runtime, recomputes the held-out perplexity):

    python -m nlgeval_training.default_lm report runtime/nlgeval_runtime/default_lm --data DATA_DIR

Retrain (about {report['total_seconds'] / 60:.0f} minutes on one CPU thread):

    python -m nlgeval_training.default_lm train --data DATA_DIR --out runtime/nlgeval_runtime/default_lm --minutes 38 \\
        --batch-size {report['batch_size']} --lr {report['lr']} --seed {report['seed']}

(The number of steps depends on the machine's speed: training stops at the wall-clock budget.)

Licences of the text: see the data kit's SOURCES.md (news text: research use).
"""
    (out / "CARD.md").write_text(card, encoding="utf-8")


def report_folder(folder: str | Path, data_dir: str | Path) -> dict:
    """Recompute the held-out perplexity of an exported folder with ONNX Runtime and print the card figures."""
    import numpy as np
    from tokenizers import Tokenizer

    from nlgeval_runtime.causal_lm import load_causal_lm

    folder = Path(folder)
    manifest = json.loads((folder / "nlgeval.json").read_text())
    training = manifest.get("training", {})
    lm = load_causal_lm(folder, device="cpu", threads=1)
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))

    def fn(batch):
        return [np.asarray(x) for x in lm.logprobs_of_ids(batch)]

    texts = [t for _, _, t in corpus_documents(data_dir, "heldout")]
    ppl, n = heldout_perplexity(fn, tok, texts, lm.max_length)
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    figures = {"heldout_perplexity_onnx": round(ppl, 3), "heldout_tokens": n,
               "heldout_perplexity_torch": training.get("heldout_perplexity_torch"),
               "parameters": manifest.get("parameters"), "train_seconds": training.get("train_seconds"),
               "steps": training.get("steps"), "folder_bytes": size,
               "parity_max_abs_diff": manifest["export"]["parity"]["fp32"]["max_abs_diff"]}
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgeval_training.default_lm", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train and export the default causal LM")
    tr.add_argument("--data", required=True, help="folder with the data kit's .jsonl.gz files")
    tr.add_argument("--out", required=True, help="model folder to write")
    tr.add_argument("--minutes", type=float, default=38.0, help="wall-clock budget (default 38)")
    tr.add_argument("--threads", type=int, default=1)
    tr.add_argument("--max-steps", type=int, default=None, help="stop after this many steps (smoke runs)")
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--batch-size", type=int, default=16, help="sequences per step (default 16)")
    tr.add_argument("--lr", type=float, default=2e-3)
    cd = sub.add_parser("card", help="rewrite CARD.md of an exported folder from its training_report.json")
    cd.add_argument("folder")
    rp = sub.add_parser("report", help="print the figures of an exported folder (recomputes perplexity)")
    rp.add_argument("folder")
    rp.add_argument("--data", required=True)
    args = parser.parse_args(argv)
    if args.cmd == "train":
        report = train_default_lm(args.data, args.out, minutes=args.minutes, threads=args.threads,
                                  max_steps=args.max_steps, seed=args.seed, batch_size=args.batch_size, lr=args.lr,
                                  log=lambda m: print(m, flush=True))
        print(json.dumps(report, indent=2, sort_keys=True))
    elif args.cmd == "card":
        folder = Path(args.folder)
        write_card(folder, json.loads((folder / "training_report.json").read_text()))
        print((folder / "CARD.md").read_text())
    else:
        print(json.dumps(report_folder(args.folder, args.data), indent=2, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
