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

    python -m nlgeval_training.default_lm train --data /path/to/data --out runtime/nlgeval_runtime/default_lm \\
        --steps 4000 --stories human_stories.jsonl.gz --exclude-prompts rated_stories.jsonl.gz \\
        --bank-out runs/bank_stories.jsonl.gz

The same unseen half, without training (for fitting a bank that the shipped LM never saw)::

    python -m nlgeval_training.default_lm split-stories human_stories.jsonl.gz \\
        --exclude-prompts rated_stories.jsonl.gz -o runs/bank_stories.jsonl.gz

Print the card's figures again from the exported folder with ONNX Runtime (held-out perplexity is
recomputed, not copied)::

    python -m nlgeval_training.default_lm report runtime/nlgeval_runtime/default_lm --data /path/to/data \\
        [--stories runs/bank_stories.jsonl.gz]
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import re
import sys
import time
from pathlib import Path
from typing import Iterator

from nlgeval_training.data import DataError, read_jsonl
from nlgeval_training.pseudo.build import write_records

__all__ = ["corpus_documents", "split_stories", "train_tokenizer", "train_default_lm",
           "heldout_perplexity", "word_perplexity", "main"]

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


# The sentence end of pytest_nlgeval.trajectory.humandata.split_story (training may not import the plugin), so
# that a rated story's prompt here is the prompt `nlgeval trajectory meta-eval` reads from it.
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*\s+")


def _normalise(text: str) -> str:
    return " ".join(str(text).split())


def _first_sentence(story: str) -> str:
    text = _normalise(story)
    match = _SENTENCE_END.search(text + " ")
    return text[: match.end()].strip() if match else text


def excluded_prompts(path: str | Path, story_field: str = "story", prompt_field: str = "prompt") -> set[str]:
    """The prompts of a file of rated texts: its ``prompt`` field, or else the first sentence of ``story``."""
    prompts = set()
    for n, row in enumerate(read_jsonl(path), start=1):
        if row.get(prompt_field):
            prompts.add(_normalise(row[prompt_field]))
        elif row.get(story_field):
            prompts.add(_first_sentence(row[story_field]))
        else:
            raise DataError(f"{path} row {n}: neither {prompt_field!r} nor {story_field!r}; "
                             "--exclude-prompts reads rated texts with a prompt or a story field")
    return prompts


def split_stories(path: str | Path, exclude: set[str] = frozenset()) -> tuple[list[dict], list[dict]]:
    """``(train, unseen)`` halves of a file of human stories (``{"prompt", "continuation"}`` rows).

    A story is trained on when the sha256 of its normalised prompt is even and the prompt is not in
    ``exclude``; every story of one prompt goes to the same half. The unseen half keeps the rows as read.
    """
    train, unseen = [], []
    for n, row in enumerate(read_jsonl(path), start=1):
        if not isinstance(row.get("prompt"), str) or not isinstance(row.get("continuation"), str):
            raise DataError(f"{path} row {n}: a story row needs string fields 'prompt' and 'continuation'")
        prompt = _normalise(row["prompt"])
        even = int(hashlib.sha256(prompt.encode("utf-8")).hexdigest()[:8], 16) % 2 == 0
        (train if even and prompt not in exclude else unseen).append(row)
    return train, unseen


def story_text(row: dict) -> str:
    return _normalise(row["prompt"] + " " + row["continuation"])


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
    if count == 0:
        raise DataError("no held-out text to measure perplexity on (every text is shorter than two tokens, "
                        "or none was given)")
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


def train_default_lm(data_dir: str | Path, out_dir: str | Path, *, steps: int = 4000, threads: int = 2,
                     seed: int = 0, vocab_size: int = 8192, n_embd: int = 192, n_layer: int = 4, n_head: int = 4,
                     block: int = 256, batch_size: int = 8, lr: float = 2e-3, stories: str | Path | None = None,
                     exclude_prompts: str | Path | None = None, story_share: float = 0.125,
                     bank_out: str | Path | None = None, log=print) -> dict:
    """Train the default LM for ``steps`` optimiser steps and export it to ``out_dir``; returns the report.

    With ``stories``, a ``story_share`` of each batch's sequences are drawn from the trained half of the
    stories (:func:`split_stories`); the unseen half is written to ``bank_out`` and its perplexity reported.
    """
    import numpy as np
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    from nlgeval_training.export_causal import export_causal_lm

    if steps < 1:
        raise SystemExit(f"--steps must be at least 1 (got {steps})")
    if not 0.0 <= story_share < 1.0:
        raise SystemExit(f"--story-share must be in [0, 1) (got {story_share})")
    if stories is None and (bank_out is not None or exclude_prompts is not None):
        raise SystemExit("--bank-out and --exclude-prompts apply to --stories; pass the human stories with --stories")
    started = time.time()
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    random.seed(seed)
    story_train: list[dict] = []
    story_unseen: list[dict] = []
    if stories is not None:
        exclude = excluded_prompts(exclude_prompts) if exclude_prompts is not None else set()
        story_train, story_unseen = split_stories(stories, exclude)
        log(f"stories: {len(story_train)} trained on, {len(story_unseen)} unseen "
            f"({len(exclude)} excluded prompts)")
        if bank_out is not None:
            write_records(story_unseen, bank_out)
    train_docs = list(corpus_documents(data_dir, "train"))
    heldout_docs = list(corpus_documents(data_dir, "heldout"))
    if not train_docs:
        raise DataError(f"no training documents found under {data_dir}; pass --data pointing at the data kit")
    if not heldout_docs:
        # checked before training: perplexity is measured on these after the last step
        raise DataError(f"no held-out documents under {data_dir} (3% of documents by id hash are held out); "
                        "the data kit is too small to measure perplexity")
    texts = [t for _, _, t in train_docs]
    story_texts = [story_text(r) for r in story_train]
    log(f"documents: {len(train_docs)} train, {len(heldout_docs)} held out")
    tok = train_tokenizer(texts + story_texts, vocab_size)
    stream = _token_stream(tok, texts)
    data = _blocks(stream, block)
    story_data = _blocks(_token_stream(tok, story_texts), block) if story_texts else None
    n_story = int(round(batch_size * story_share)) if story_data is not None and len(story_data) else 0
    log(f"tokenizer: {tok.get_vocab_size()} tokens; training tokens: {len(stream)} in {len(data)} blocks of {block}"
        + (f"; story blocks: {len(story_data)} ({n_story} of {batch_size} per batch)" if n_story else ""))

    bos = tok.token_to_id(BOS)
    config = GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=block, n_embd=n_embd, n_layer=n_layer,
                        n_head=n_head, bos_token_id=bos, eos_token_id=bos, pad_token_id=bos,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True)
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
    report = {
        "parameters": n_params, "steps": steps, "batch_size": batch_size, "block": block,
        "tokens_seen": steps * batch_size * block, "train_tokens": int(len(stream)),
        "train_documents": len(train_docs), "heldout_documents": len(heldout_docs),
        "train_seconds": round(train_seconds, 1), "torch_threads": threads,
        "final_train_loss": float(np.mean(losses[-100:])),
        "heldout_perplexity_torch": round(ppl, 3), "heldout_tokens": n_tokens,
        "config": {"vocab_size": config.vocab_size, "n_embd": n_embd, "n_layer": n_layer, "n_head": n_head,
                   "n_positions": block}, "seed": seed, "lr": lr,
    }
    if story_train:
        report["stories"] = {"file": Path(stories).name,
                             "exclude_prompts": Path(exclude_prompts).name if exclude_prompts else None,
                             "trained": len(story_train), "unseen": len(story_unseen),
                             "story_share": story_share, "sequences_per_batch": n_story,
                             "train_tokens": int(len(story_data) * block),
                             "unseen_perplexity_torch": None, "unseen_tokens": 0}
        if story_unseen:
            story_ppl, story_tokens = heldout_perplexity(logprob_fn, tok, [story_text(r) for r in story_unseen],
                                                         block)
            log(f"unseen-story perplexity {story_ppl:.2f} on {story_tokens} tokens")
            report["stories"].update(unseen_perplexity_torch=round(story_ppl, 3), unseen_tokens=story_tokens)
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
    stories = report.get("stories")
    kit_rows = report["batch_size"] - (stories["sequences_per_batch"] if stories else 0)
    epochs = report["steps"] * kit_rows * report["block"] / report["train_tokens"]
    data_row = (f"{report['train_documents']:,} documents ({report['train_tokens']:,} tokens): CNN/DailyMail and BBC "
                "news articles, SciTLDR abstracts, Topical-Chat conversations")
    story_rows = ""
    story_args = ""
    if stories:
        data_row += (f"; plus {stories['trained']:,} human short stories ({stories['train_tokens']:,} tokens in packed "
                     f"blocks, {stories['sequences_per_batch']} of {report['batch_size']} sequences per batch)")
        if stories.get("unseen_perplexity_torch") is not None:
            story_rows = (f"| unseen-story perplexity | {stories['unseen_perplexity_torch']:.2f} (PyTorch) on "
                          f"{stories['unseen_tokens']:,} tokens of the {stories['unseen']:,} stories never trained "
                          "on (the other half by prompt hash, and every prompt of the rated stories) |\n")
        story_args = f" \\\n        --stories DATA_DIR/human/{stories.get('file', 'STORIES')}"
        if stories.get("exclude_prompts", "RATED"):
            story_args += f" --exclude-prompts DATA_DIR/human/{stories.get('exclude_prompts', 'RATED')}"
        story_args += f" \\\n        --story-share {stories['story_share']} --bank-out BANK_STORIES.jsonl.gz"
    card = f"""# Default causal LM of pytest-nlgeval

A tiny GPT-2 trained from scratch, offline, so that trajectory checks (coherence) work without a download.
It is a measuring instrument for next-token predictability, not a text generator, and a weak one: it was
trained for a fixed number of steps on the CPU, so it saw {epochs:.2f} epochs of the kit's text and its
perplexity is high. For better coherence signals export a larger model
(`nlgeval_training.export_causal.export_causal_lm("gpt2", DIR)`) and fit banks with it (`--lm DIR`).

| | |
|---|---|
| architecture | GPT-2, {cfg['n_layer']} layers, width {cfg['n_embd']}, {cfg['n_head']} heads, {cfg['n_positions']} positions, tied embeddings |
| tokenizer | byte-level BPE, {cfg['vocab_size']} tokens, trained on the same training documents; BOS = `<|endoftext|>` |
| parameters | {report['parameters']:,} |
| training data | {data_row} |
| training | {report['steps']:,} steps x {report['batch_size']} x {report['block']} tokens ({report['tokens_seen']:,} tokens seen, {epochs:.2f} epochs of the kit's text), AdamW lr {report['lr']} with warm-up and a cosine schedule; {report['torch_threads']} torch thread(s), seed {report['seed']} |
| training time | {report['train_seconds'] / 60:.1f} minutes of training ({report['total_seconds'] / 60:.1f} minutes with tokenizer, evaluation and export) |
| held-out perplexity | {report['heldout_perplexity_torch']:.2f} (PyTorch) on {report['heldout_tokens']:,} tokens of {report['heldout_documents']} held-out documents (3% of documents by id hash) |
{story_rows}| ONNX parity | max abs diff of token log-probs vs PyTorch {report['parity_max_abs_diff']:.2g} |

Reproduce the figures from this folder (ONNX Runtime, recomputes the held-out perplexity):

    python -m nlgeval_training.default_lm report runtime/nlgeval_runtime/default_lm --data DATA_DIR

Retrain (about {report['total_seconds'] / 60:.0f} minutes with {report['torch_threads']} thread(s); bounded by the step count, not the wall clock):

    python -m nlgeval_training.default_lm train --data DATA_DIR --out runtime/nlgeval_runtime/default_lm \\
        --steps {report['steps']} --batch-size {report['batch_size']} --lr {report['lr']} --seed {report['seed']}{story_args}

Licences of the text: see the data kit's SOURCES.md (news text: research use).
"""
    (out / "CARD.md").write_text(card, encoding="utf-8")


def report_folder(folder: str | Path, data_dir: str | Path, stories: str | Path | None = None) -> dict:
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
               "heldout_word_perplexity_onnx": round(word_perplexity(ppl, n, texts), 3),
               "heldout_perplexity_torch": training.get("heldout_perplexity_torch"),
               "parameters": manifest.get("parameters"), "train_seconds": training.get("train_seconds"),
               "steps": training.get("steps"), "folder_bytes": size,
               "parity_max_abs_diff": manifest["export"]["parity"]["fp32"]["max_abs_diff"]}
    if stories is not None:
        story_texts = [story_text(row) for row in read_jsonl(stories)]
        story_ppl, story_n = heldout_perplexity(fn, tok, story_texts, lm.max_length)
        figures.update({"stories": str(stories), "story_perplexity_onnx": round(story_ppl, 3),
                        "story_tokens": story_n,
                        "story_word_perplexity_onnx": round(word_perplexity(story_ppl, story_n, story_texts), 3)})
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nlgeval_training.default_lm", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    tr = sub.add_parser("train", help="train and export the default causal LM")
    tr.add_argument("--data", required=True, help="folder with the data kit's .jsonl.gz files")
    tr.add_argument("--out", required=True, help="model folder to write")
    tr.add_argument("--steps", type=int, default=4000, help="optimiser steps (default 4000)")
    tr.add_argument("--threads", type=int, default=2)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--batch-size", type=int, default=8, help="sequences per step (default 8)")
    tr.add_argument("--lr", type=float, default=2e-3)
    tr.add_argument("--stories", default=None, help="human stories to learn from too (prompt/continuation rows)")
    tr.add_argument("--exclude-prompts", default=None,
                    help="rated texts whose prompts (or first sentences) must never be trained on")
    tr.add_argument("--story-share", type=float, default=0.125, help="share of each batch drawn from stories")
    tr.add_argument("--bank-out", default=None, help="write the stories never trained on here (a bank to fit)")
    sp = sub.add_parser("split-stories", help="write the stories a training run with --stories never sees")
    sp.add_argument("stories", help="human stories (prompt/continuation rows)")
    sp.add_argument("--exclude-prompts", default=None, help="as for train")
    sp.add_argument("-o", "--output", required=True, help="where to write the unseen stories (a bank to fit)")
    cd = sub.add_parser("card", help="rewrite CARD.md of an exported folder from its training_report.json")
    cd.add_argument("folder")
    rp = sub.add_parser("report", help="print the figures of an exported folder (recomputes perplexity)")
    rp.add_argument("folder")
    rp.add_argument("--data", required=True)
    rp.add_argument("--stories", default=None, help="also the perplexity of these stories (prompt/continuation rows)")
    args = parser.parse_args(argv)
    try:
        if args.cmd == "train":
            report = train_default_lm(args.data, args.out, steps=args.steps, threads=args.threads, seed=args.seed,
                                      batch_size=args.batch_size, lr=args.lr, stories=args.stories,
                                      exclude_prompts=args.exclude_prompts, story_share=args.story_share,
                                      bank_out=args.bank_out, log=lambda m: print(m, flush=True))
            print(json.dumps(report, indent=2, sort_keys=True))
        elif args.cmd == "split-stories":
            exclude = excluded_prompts(args.exclude_prompts) if args.exclude_prompts else set()
            train, unseen = split_stories(args.stories, exclude)
            write_records(unseen, args.output)
            print(f"{args.output}: {len(unseen)} stories never trained on ({len(train)} trained on, "
                  f"{len(exclude)} excluded prompts)")
        elif args.cmd == "card":
            folder = Path(args.folder)
            write_card(folder, json.loads((folder / "training_report.json").read_text()))
            print((folder / "CARD.md").read_text())
        else:
            print(json.dumps(report_folder(args.folder, args.data, args.stories), indent=2, sort_keys=True))
    except DataError as exc:
        parser.exit(2, f"error: {exc}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
