"""Train the small offline default causal LM that the trajectory checks use when no LM is given.

A tiny GPT-2 (4 layers, width 192, 8,192-token byte-level BPE, 256 positions, about 3.4M parameters) trained
from scratch on the English text of the data kit: CNN/DailyMail and BBC news articles, SciTLDR abstracts and
Topical-Chat conversations (turns joined by line breaks). Documents are split into training and held-out
sets by a hash of their id, so the held-out perplexity is measured on documents the model never saw.

Optionally (``--stories``) it also learns from human-written short stories (prompt + continuation rows, the
format of ``nlgeval trajectory fit-bank``), so that story trajectories are measured by a model that has seen
the genre. The stories are split by a hash of their prompt: one half is trained on, the other half is never
seen and is written out (``--bank-out``) as the reference bank to fit, so that the bank's likelihoods are not
those of memorised text. Stories whose prompt appears in ``--exclude-prompts`` (a file of rated texts, whose
first sentence is the prompt) always go to the unseen half: the model never trains on the human continuation
of a prompt whose machine continuations are being judged.

It is a measuring instrument, not a writer: coherence trajectories only need a model whose next-token
log-probabilities rank fluent, on-topic text above shuffled or repetitive text. Large models (``nlgeval
export gpt2 ...``) give better coherence signals and are a drop-in replacement.

Train and export (bounded by a step count, not the wall clock, so that a rerun with the same threads gives the
same model; figures go to ``training_report.json`` and the folder's ``CARD.md``)::

    nlgeval-train default-lm train --data /path/to/data --out runtime/nlgeval_runtime/default_lm \\
        --steps 4000 --stories human_stories.jsonl.gz --exclude-prompts rated_stories.jsonl.gz \\
        --bank-out runs/bank_stories.jsonl.gz

The same unseen half, without training (for fitting a bank that the shipped LM never saw)::

    nlgeval-train default-lm split-stories human_stories.jsonl.gz \\
        --exclude-prompts rated_stories.jsonl.gz -o runs/bank_stories.jsonl.gz

Print the card's figures again from the exported folder with ONNX Runtime (held-out perplexity is
recomputed, not copied)::

    nlgeval-train default-lm report runtime/nlgeval_runtime/default_lm --data /path/to/data \\
        [--stories runs/bank_stories.jsonl.gz]
"""

from __future__ import annotations

from typing import Any

import json
import math
import random
import time
from pathlib import Path

from nlgeval_training.data import (
    DataError,
    corpus_documents,
    read_jsonl,
    excluded_prompts,
    split_stories,
    story_text,
)
from nlgeval_training.card import write_lm_card
from nlgeval_training.errors import UsageError
from nlgeval_training.pseudo.build import write_records

__all__ = ["BOS", "heldout_perplexity", "lm_report", "train_default_lm", "train_tokenizer", "word_perplexity"]

BOS = "<|endoftext|>"


def train_tokenizer(texts: list[str], vocab_size: int = 8192):
    """A byte-level BPE tokenizer (GPT-2 style, no prefix space, no post-processor) trained on ``texts``."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[BOS],
        min_frequency=2,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
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
    if count == 0:
        raise DataError(
            "no held-out text to measure perplexity on (every text is shorter than two tokens, or none was given)"
        )
    return math.exp(total / count), count


def word_perplexity(ppl: float, n_tokens: int, texts: list[str]) -> float:
    """The same total log-likelihood per whitespace word: comparable between LMs with different tokenizers."""
    words = sum(len(t.split()) for t in texts)
    if words == 0:
        raise DataError("the texts have no words to measure a per-word perplexity on")
    return math.exp(math.log(ppl) * n_tokens / words)


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


def _blocks(stream: list[int], block: int):
    import numpy as np
    import torch

    arr = np.asarray(stream, dtype=np.int64)
    n = len(arr) // block
    return torch.from_numpy(arr[: n * block].reshape(n, block))


def train_default_lm(
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    steps: int = 4000,
    threads: int = 2,
    seed: int = 0,
    vocab_size: int = 8192,
    n_embd: int = 192,
    n_layer: int = 4,
    n_head: int = 4,
    block: int = 256,
    batch_size: int = 8,
    lr: float = 2e-3,
    stories: str | Path | None = None,
    exclude_prompts: str | Path | None = None,
    story_share: float = 0.125,
    bank_out: str | Path | None = None,
    log=print,
) -> dict:
    """Train the default LM for ``steps`` optimiser steps and export it to ``out_dir``; returns the report.

    With ``stories``, a ``story_share`` of each batch's sequences are drawn from the trained half of the
    stories (:func:`split_stories`); the unseen half is written to ``bank_out`` and its perplexity reported.
    """
    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from nlgeval_training.export_causal import export_causal_lm

    if steps < 1:
        raise UsageError(f"steps must be at least 1 (got {steps})")
    if not 0.0 <= story_share < 1.0:
        raise UsageError(f"story_share must be in [0, 1) (got {story_share})")
    if stories is None and (bank_out is not None or exclude_prompts is not None):
        raise UsageError(
            "bank_out and exclude_prompts apply to stories; pass the human stories with stories=... (--stories)"
        )
    started = time.time()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    random.seed(seed)
    story_train: list[dict] = []
    story_unseen: list[dict] = []
    if stories is not None:
        exclude = excluded_prompts(exclude_prompts) if exclude_prompts is not None else set()
        story_train, story_unseen = split_stories(stories, exclude)
        log(f"stories: {len(story_train)} trained on, {len(story_unseen)} unseen ({len(exclude)} excluded prompts)")
        if bank_out is not None:
            write_records(story_unseen, bank_out)
    train_docs = list(corpus_documents(data_dir, "train"))
    heldout_docs = list(corpus_documents(data_dir, "heldout"))
    if not train_docs:
        raise DataError(f"no training documents found under {data_dir}; pass --data pointing at the data kit")
    if not heldout_docs:
        # checked before training: perplexity is measured on these after the last step
        raise DataError(
            f"no held-out documents under {data_dir} (3% of documents by id hash are held out); "
            "the data kit is too small to measure perplexity"
        )
    texts = [t for _, _, t in train_docs]
    story_texts = [story_text(r) for r in story_train]
    log(f"documents: {len(train_docs)} train, {len(heldout_docs)} held out")
    tok = train_tokenizer(texts + story_texts, vocab_size)
    stream = _token_stream(tok, texts)
    data = _blocks(stream, block)
    story_data: Any = _blocks(_token_stream(tok, story_texts), block) if story_texts else None
    n_story = int(round(batch_size * story_share)) if story_data is not None and len(story_data) else 0
    log(
        f"tokenizer: {tok.get_vocab_size()} tokens; training tokens: {len(stream)} in {len(data)} blocks of {block}"
        + (f"; story blocks: {len(story_data)} ({n_story} of {batch_size} per batch)" if n_story else "")
    )

    bos = tok.token_to_id(BOS)
    config = GPT2Config(
        vocab_size=tok.get_vocab_size(),
        n_positions=block,
        n_embd=n_embd,
        n_layer=n_layer,
        n_head=n_head,
        bos_token_id=bos,
        eos_token_id=bos,
        pad_token_id=bos,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        tie_word_embeddings=True,
    )
    config._attn_implementation = "eager"
    model = GPT2LMHeadModel(config)
    n_params = int(sum(p.numel() for p in model.parameters()))
    log(f"model: {n_params} parameters")
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.95), weight_decay=0.1)
    warmup = min(100, max(1, steps // 10))
    gen = torch.Generator().manual_seed(seed)
    losses: list[float] = []
    train_started = time.time()
    model.train()
    for step in range(steps):
        # Linear warm-up, then a cosine decay to 10% of the peak rate.
        if step < warmup:
            scale = (step + 1) / warmup
        else:
            scale = 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))
        for group in opt.param_groups:
            group["lr"] = lr * scale
        batch = data[torch.randint(0, len(data), (batch_size - n_story,), generator=gen)]
        if n_story:
            batch = torch.cat([batch, story_data[torch.randint(0, len(story_data), (n_story,), generator=gen)]])
        loss = model(input_ids=batch, labels=batch).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
        if (step + 1) % 100 == 0:
            log(f"step {step + 1}/{steps} loss {np.mean(losses[-100:]):.3f} ({time.time() - started:.0f} s)")
    train_seconds = time.time() - train_started
    model.eval()
    logprob_fn = _torch_logprob_fn(model)
    ppl, n_tokens = heldout_perplexity(logprob_fn, tok, [t for _, _, t in heldout_docs], block)
    log(f"held-out perplexity {ppl:.2f} on {n_tokens} tokens")
    report: dict[str, Any] = {
        "parameters": n_params,
        "steps": steps,
        "batch_size": batch_size,
        "block": block,
        "tokens_seen": steps * batch_size * block,
        "train_tokens": int(len(stream)),
        "train_documents": len(train_docs),
        "heldout_documents": len(heldout_docs),
        "train_seconds": round(train_seconds, 1),
        "torch_threads": threads,
        "final_train_loss": float(np.mean(losses[-100:])),
        "heldout_perplexity_torch": round(ppl, 3),
        "heldout_tokens": n_tokens,
        "config": {
            "vocab_size": config.vocab_size,
            "n_embd": n_embd,
            "n_layer": n_layer,
            "n_head": n_head,
            "n_positions": block,
        },
        "seed": seed,
        "lr": lr,
    }
    if story_train:
        report["stories"] = {
            "file": Path(str(stories)).name,
            "exclude_prompts": Path(exclude_prompts).name if exclude_prompts else None,
            "trained": len(story_train),
            "unseen": len(story_unseen),
            "story_share": story_share,
            "sequences_per_batch": n_story,
            "train_tokens": int(len(story_data) * block),
            "unseen_perplexity_torch": None,
            "unseen_tokens": 0,
        }
        if story_unseen:
            story_ppl, story_tokens = heldout_perplexity(logprob_fn, tok, [story_text(r) for r in story_unseen], block)
            log(f"unseen-story perplexity {story_ppl:.2f} on {story_tokens} tokens")
            report["stories"].update(unseen_perplexity_torch=round(story_ppl, 3), unseen_tokens=story_tokens)
    out = export_causal_lm(
        model,
        out_dir,
        tokenizer=tok,
        bos_token_id=bos,
        max_length=block,
        extra_manifest={
            "source": {"checkpoint": "nlgeval default causal LM (trained from scratch)", "revision": None},
            "training": report,
        },
    )
    report["parity_max_abs_diff"] = json.loads((out / "nlgeval.json").read_text())["export"]["parity"]["fp32"][
        "max_abs_diff"
    ]
    report["total_seconds"] = round(time.time() - started, 1)
    (out / "training_report.json").write_text(json.dumps(report, indent=2, sort_keys=True) + "\n")
    write_lm_card(out, report)
    return report


def lm_report(folder: str | Path, data_dir: str | Path, stories: str | Path | None = None) -> dict:
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
    figures = {
        "heldout_perplexity_onnx": round(ppl, 3),
        "heldout_tokens": n,
        "heldout_word_perplexity_onnx": round(word_perplexity(ppl, n, texts), 3),
        "heldout_perplexity_torch": training.get("heldout_perplexity_torch"),
        "parameters": manifest.get("parameters"),
        "train_seconds": training.get("train_seconds"),
        "steps": training.get("steps"),
        "folder_bytes": size,
        "parity_max_abs_diff": manifest["export"]["parity"]["fp32"]["max_abs_diff"],
    }
    if stories is not None:
        story_texts = [story_text(row) for row in read_jsonl(stories)]
        story_ppl, story_n = heldout_perplexity(fn, tok, story_texts, lm.max_length)
        figures.update(
            {
                "stories": str(stories),
                "story_perplexity_onnx": round(story_ppl, 3),
                "story_tokens": story_n,
                "story_word_perplexity_onnx": round(word_perplexity(story_ppl, story_n, story_texts), 3),
            }
        )
    return figures
