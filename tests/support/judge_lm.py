"""A tiny Llama-architecture judge LM in GGUF, trained here with the project's own tools, cached across runs.

The tests of the judges over a real llama.cpp server need a model that answers DSPy's ChatAdapter prompts
in the right shape some of the time and in the wrong shape the rest, quickly, offline. This module builds one:

* the prompts are the real ones: DSPy's ChatAdapter formats the project's judge, axes and rubric signatures
  on the synthetic labelled rows, laid out by the same chat template the GGUF carries;
* the answers are well-formed field blocks, except that about a quarter give a score that is not 1-5
  ("excellent") or stop before the score, so greedy decoding and sampling both meet unparseable answers;
* the tokenizer is :func:`nlgeval_training.lm_trainer.train_tokenizer` (byte-level BPE), the model a 2-layer
  ``LlamaForCausalLM`` (width 64) trained for a few hundred steps on the answers (loss on answer tokens only),
  and :func:`nlgeval_training.export_gguf.export_llama_gguf` writes the file.

The file is cached under ``$NLGEVAL_TEST_MODEL_CACHE`` (default: the user cache dir of pytest-nlgeval,
``test-models/``), named by a hash of this recipe, so it is built once per machine (about a minute on one
core) and rebuilt only when the recipe changes.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
from pathlib import Path

RECIPE = {
    "version": 1,
    "vocab": 1024,
    "hidden": 64,
    "layers": 2,
    "heads": 4,
    "ffn": 176,
    "context": 4096,
    "examples": 600,
    "steps": 300,
    "batch": 8,
    "block": 1024,
    "lr": 3e-3,
    "seed": 0,
    "garbage": 0.25,
}
BOS = "<|endoftext|>"


def cache_path() -> Path:
    root = os.environ.get("NLGEVAL_TEST_MODEL_CACHE")
    if not root:
        from platformdirs import user_cache_dir

        root = str(Path(user_cache_dir("pytest-nlgeval")) / "test-models")
    source = Path(__file__).read_bytes()
    digest = hashlib.sha256(source + json.dumps(RECIPE, sort_keys=True).encode()).hexdigest()[:16]
    return Path(root) / f"tiny-judge-{digest}.gguf"


def _examples(n: int, rng: random.Random) -> list[tuple[str, str]]:
    """(prompt text, answer text) pairs in the layout of the GGUF's chat template."""
    import dspy
    from induction_fakes import AXES, synthetic_rows
    from jinja2 import Template

    from nlgeval_training.export_gguf import DEFAULT_CHAT_TEMPLATE
    from pytest_nlgeval.induction.judges import signatures

    sigs = signatures()
    adapter = dspy.ChatAdapter()
    template = Template(DEFAULT_CHAT_TEMPLATE)
    rows = [r for _, r in synthetic_rows(60, seed=rng.randint(0, 10**6))]
    words = "the answer is clear short detailed helpful polite vague wrong complete specific".split()
    out = []
    for _ in range(n):
        kind = rng.choices(["judge", "axes", "rubric"], weights=[8, 1, 1])[0]
        row = rng.choice(rows)
        rationale = " ".join(rng.choice(words) for _ in range(rng.randint(3, 10)))
        if kind == "judge":
            sig = sigs["JudgeOutput"]
            inputs = {
                "task": "Answer questions",
                "criterion": rng.choice(AXES),
                "rubric": "(none)",
                "examples": "(none)",
                "input": row["input"],
                "references": "(none)",
                "output": row["output"],
            }
            outputs = {"rationale": rationale, "score": rng.randint(1, 5)}
        elif kind == "axes":
            sig = sigs["ProposeAxes"]
            inputs = {
                "task": "Answer questions",
                "target": "label",
                "high_scored": row["output"],
                "low_scored": rng.choice(rows)["output"],
                "num_axes": 3,
            }
            outputs = {"axes": rng.sample(AXES, 3)}
        else:
            sig = sigs["WriteRubric"]
            inputs = {"task": "Answer questions", "target": "label", "criterion": rng.choice(AXES)}
            outputs = {f"score_{k}": f"an output that deserves {k}" for k in range(1, 6)}
        messages = adapter.format(sig, demos=[], inputs=inputs)
        prompt = template.render(messages=messages, add_generation_prompt=True)
        answer = adapter.format_assistant_message_content(sig, outputs)
        if kind == "judge" and rng.random() < RECIPE["garbage"]:
            answer = (
                answer.replace(f"## score ## ]]\n{outputs['score']}", "## score ## ]]\nexcellent")
                if rng.random() < 0.6
                else answer.split("[[ ## score")[0].rstrip()
            )
        out.append((prompt, answer + BOS))
    return out


def train_tiny_judge(path: Path) -> Path:
    """Train the model of :data:`RECIPE` and write it to ``path`` (GGUF)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from nlgeval_training.lm_trainer import train_tokenizer
    from nlgeval_training.export_gguf import export_llama_gguf

    r = RECIPE
    rng = random.Random(r["seed"])
    torch.manual_seed(r["seed"])
    examples = _examples(r["examples"], rng)
    tok = train_tokenizer([p + a for p, a in examples], vocab_size=r["vocab"])
    bos = tok.token_to_id(BOS)
    encoded = []
    for prompt, answer in examples:
        p_ids = [bos] + tok.encode(prompt, add_special_tokens=False).ids
        a_ids = tok.encode(answer, add_special_tokens=False).ids
        ids = (p_ids + a_ids)[-r["block"] :]
        labels = ([-100] * len(p_ids) + a_ids)[-r["block"] :]
        encoded.append((ids, labels))
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=r["hidden"],
        intermediate_size=r["ffn"],
        num_hidden_layers=r["layers"],
        num_attention_heads=r["heads"],
        num_key_value_heads=r["heads"],
        max_position_embeddings=r["context"],
        bos_token_id=bos,
        eos_token_id=bos,
        pad_token_id=bos,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    opt = torch.optim.AdamW(model.parameters(), lr=r["lr"], weight_decay=0.0)
    model.train()
    for step in range(r["steps"]):
        batch = [encoded[rng.randrange(len(encoded))] for _ in range(r["batch"])]
        width = max(len(ids) for ids, _ in batch)
        ids = torch.full((len(batch), width), bos, dtype=torch.long)
        labels = torch.full((len(batch), width), -100, dtype=torch.long)
        mask = torch.zeros((len(batch), width), dtype=torch.long)
        for i, (x, y) in enumerate(batch):
            ids[i, : len(x)] = torch.tensor(x)
            labels[i, : len(y)] = torch.tensor(y)
            mask[i, : len(x)] = 1
        for group in opt.param_groups:
            group["lr"] = r["lr"] * min(1.0, (step + 1) / 30)
        loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    model.eval()
    return export_llama_gguf(model, tok, path, name="nlgeval tiny judge (tests)", bos_token=BOS)


def tiny_judge_gguf() -> Path:
    """The cached GGUF file, built first when missing (file-locked, so parallel test workers build it once)."""
    from filelock import FileLock

    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        if not path.is_file():
            train_tiny_judge(path)
    return path
