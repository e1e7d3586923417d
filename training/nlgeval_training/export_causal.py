"""Export a Hugging Face causal language model to a ``causal-lm`` model folder (docs/model-folder.md).

The exported graph maps ``(input_ids int64 [batch, seq], attention_mask int64 [batch, seq])`` to
``token_logprobs float32 [batch, seq - 1]``: position ``i`` holds ``log p(input_ids[:, i + 1] | input_ids[:, :i + 1])``.
Gathering the log-probability of the actual next token inside the graph keeps the output at one number
per position instead of a ``batch x seq x vocab`` logits tensor, which is what the trajectory checks need
(coherence is a cumulative mean of these numbers). Inputs are right-padded; a causal model never lets a
real position attend to the padding after it, so padded rows give the same numbers as unpadded ones.

The runtime (``nlgeval_runtime.causal_lm``) prepends the manifest's ``bos_token_id`` and tokenises the
prompt and the continuation separately without special tokens, so the folder's ``tokenizer.json`` must
encode plain text (special tokens of a post-processor are ignored because the runtime encodes with
``add_special_tokens=False``).

    >>> from nlgeval_training.export_causal import export_causal_lm
    >>> export_causal_lm("gpt2", "models/gpt2")            # doctest: +SKIP
    PosixPath('models/gpt2')

Parity with PyTorch is measured on a handful of texts right after the export and written into
``nlgeval.json`` (``export.parity.fp32.max_abs_diff`` over the real, unpadded positions).
"""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path
from typing import Any, Sequence

__all__ = ["export_causal_lm", "PARITY_TEXTS", "ExportError"]

#: Texts used for the parity check when the caller gives none: prose, dialogue, numbers, a short one.
PARITY_TEXTS = (
    ("The committee met on Tuesday to discuss the budget.", "Members agreed to delay the vote until March."),
    ("Do you like football?", "Yes, I watch every game with my brother on Sundays."),
    ("Prices rose 3.5% in 2023,", "the fastest pace in a decade, official figures showed."),
    ("", "Hello."),
)


class ExportError(RuntimeError):
    """The checkpoint cannot be exported (no fast tokenizer, no BOS token, parity failure, ...)."""


def _load(model: Any, tokenizer: Any, revision: str | None):
    """Return (torch model, tokenizers.Tokenizer, checkpoint id, bos id, eos id)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    checkpoint = None
    if isinstance(model, (str, os.PathLike)):
        checkpoint = str(model)
        hf_tok = tokenizer if tokenizer is not None else AutoTokenizer.from_pretrained(checkpoint, revision=revision)
        # Eager attention traces to plain matmuls; SDPA/flash kernels do not all export.
        model = AutoModelForCausalLM.from_pretrained(checkpoint, revision=revision, attn_implementation="eager")
    else:
        hf_tok = tokenizer
        checkpoint = getattr(getattr(model, "config", None), "_name_or_path", None) or "in-memory model"
    if hf_tok is None:
        raise ExportError("export_causal_lm needs a tokenizer when the model is passed as an object")
    from tokenizers import Tokenizer

    backend: Any
    if isinstance(hf_tok, Tokenizer):
        backend = hf_tok
        bos = eos = None
    else:
        backend = getattr(hf_tok, "backend_tokenizer", None)
        if backend is None:
            raise ExportError(
                f"the tokenizer of {checkpoint!r} is not a fast tokenizer, so it has no tokenizer.json; "
                "convert it with transformers' `AutoTokenizer.from_pretrained(..., use_fast=True)` first"
            )
        bos, eos = hf_tok.bos_token_id, hf_tok.eos_token_id
    config = model.config
    bos = bos if bos is not None else getattr(config, "bos_token_id", None)
    eos = eos if eos is not None else getattr(config, "eos_token_id", None)
    if bos is None:
        bos = eos  # GPT-2 style models use one <|endoftext|> token for both
    if bos is None:
        raise ExportError(f"{checkpoint!r} defines neither a BOS nor an EOS token; pass bos_token_id=")
    return model, backend, checkpoint, int(bos), (int(eos) if eos is not None else None)


def _wrapper(model):
    import torch

    class NextTokenLogprobs(torch.nn.Module):
        def __init__(self, lm):
            super().__init__()
            self.lm = lm

        def forward(self, input_ids, attention_mask):
            logits = self.lm(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).logits
            logprobs = torch.log_softmax(logits[:, :-1, :].float(), dim=-1)
            return logprobs.gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)

    return NextTokenLogprobs(model).eval()


def _batch(backend, bos: int, pairs: Sequence[tuple[str, str]], pad: int, limit: int | None = None):
    """Padded ids and mask of the parity pairs, each cut to the model's ``limit`` positions."""
    import numpy as np

    rows = []
    for prompt, continuation in pairs:
        ids = [bos]
        if prompt.strip():
            ids += backend.encode(prompt.strip(), add_special_tokens=False).ids
        ids += backend.encode(continuation.strip(), add_special_tokens=False).ids
        rows.append(ids[:limit] if limit else ids)
    width = max(len(r) for r in rows)
    input_ids = np.full((len(rows), width), pad, dtype=np.int64)
    mask = np.zeros((len(rows), width), dtype=np.int64)
    for i, r in enumerate(rows):
        input_ids[i, : len(r)] = r
        mask[i, : len(r)] = 1
    return input_ids, mask


def _share_transposed_weights(graph_path: Path) -> int:
    """Store tied weights once: replace an initializer that is the transpose of another by a Transpose node.

    Models with tied input/output embeddings (GPT-2 and most small LMs) export the output projection as a
    constant-folded transposed copy of the embedding matrix, which doubles the largest tensor on disk.
    Returns the number of initializers removed.
    """
    import hashlib

    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(graph_path))
    graph = model.graph
    by_hash: dict[str, str] = {}
    arrays = {}
    for init in graph.initializer:
        if len(init.dims) == 2 and init.dims[0] * init.dims[1] >= 4096:
            arr = numpy_helper.to_array(init)
            arrays[init.name] = arr
            by_hash[hashlib.sha256(arr.tobytes()).hexdigest() + str(arr.shape) + str(arr.dtype)] = init.name
    removed = []
    for name, arr in arrays.items():
        t = arr.T.copy()
        source = by_hash.get(hashlib.sha256(t.tobytes()).hexdigest() + str(t.shape) + str(t.dtype))
        if source is None or source == name or source in removed:
            continue
        removed.append(name)
        graph.node.insert(
            0, helper.make_node("Transpose", [source], [name], perm=[1, 0], name=f"shared_transpose_{len(removed)}")
        )
    if removed:
        kept = [i for i in graph.initializer if i.name not in removed]
        del graph.initializer[:]
        graph.initializer.extend(kept)
        onnx.save(model, str(graph_path))
    return len(removed)


def export_causal_lm(
    model: Any,
    out_dir: str | Path,
    *,
    tokenizer: Any = None,
    revision: str | None = None,
    opset: int = 17,
    max_length: int | None = None,
    bos_token_id: int | None = None,
    parity_texts: Sequence[tuple[str, str]] = PARITY_TEXTS,
    parity_tolerance: float = 1e-3,
    extra_manifest: dict[str, Any] | None = None,
) -> Path:
    """Export ``model`` (a Hub id, a local checkpoint folder, or a ``PreTrainedModel``) to ``out_dir``.

    Writes ``model.onnx``, ``tokenizer.json`` and ``nlgeval.json`` (kind ``causal-lm``) and returns the
    folder. ``max_length`` defaults to the model's ``n_positions``/``max_position_embeddings``.
    Raises :class:`ExportError` when ONNX Runtime and PyTorch disagree by more than
    ``parity_tolerance`` on ``parity_texts`` (``(prompt, continuation)`` pairs).

        >>> export_causal_lm(my_gpt2, "out/lm", tokenizer=my_tokenizers_tokenizer)   # doctest: +SKIP
    """
    import numpy as np
    import onnxruntime as ort
    import torch
    import transformers

    from nlgeval_runtime.hashing import sha256_file

    from nlgeval_training import __version__

    lm, backend, checkpoint, bos, eos = _load(model, tokenizer, revision)
    if bos_token_id is not None:
        bos = int(bos_token_id)
    lm = lm.float().eval()
    config = lm.config
    limit = max_length or getattr(config, "n_positions", None) or getattr(config, "max_position_embeddings", None)
    if not limit:
        raise ExportError(f"cannot tell the context length of {checkpoint!r}; pass max_length=")
    pad = int(getattr(config, "pad_token_id", None) or (eos if eos is not None else bos))

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    wrapper = _wrapper(lm)
    dummy_ids, dummy_mask = _batch(
        backend, bos, [("An example prompt.", "And a continuation of it."), ("", "Short.")], pad, int(limit)
    )
    graph = out / "model.onnx"
    with torch.no_grad(), warnings.catch_warnings():
        # The tracer warns about shape-dependent Python branches in the masking code; with right padding
        # and a full-length mask they take the same branch for every shape, and parity below checks it.
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (torch.from_numpy(dummy_ids), torch.from_numpy(dummy_mask)),
            str(graph),
            input_names=["input_ids", "attention_mask"],
            output_names=["token_logprobs"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "seq"},
                "attention_mask": {0: "batch", 1: "seq"},
                "token_logprobs": {0: "batch", 1: "seq_minus_1"},
            },
            opset_version=opset,
            dynamo=False,
            do_constant_folding=True,
        )
    _share_transposed_weights(graph)
    backend.save(str(out / "tokenizer.json"))

    # Parity on the real positions only (padding positions are defined but meaningless).
    ids, mask = _batch(backend, bos, list(parity_texts), pad, int(limit))
    with torch.no_grad():
        expected = wrapper(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    got = session.run(["token_logprobs"], {"input_ids": ids, "attention_mask": mask})[0]
    real = mask[:, 1:].astype(bool)
    max_diff = float(np.max(np.abs(got[real] - expected[real])))
    if not np.isfinite(max_diff) or max_diff > parity_tolerance:
        raise ExportError(
            f"ONNX Runtime and PyTorch disagree on {checkpoint!r}: max |diff| {max_diff:.3g} "
            f"> {parity_tolerance}; the graph is not usable"
        )

    manifest: dict[str, Any] = {
        "format": "nlgeval-model",
        "format_version": 1,
        "kind": "causal-lm",
        "architecture": getattr(config, "model_type", "unknown"),
        "input": {
            "max_length": int(limit),
            "pad_token_id": pad,
            "bos_token_id": bos,
            "eos_token_id": eos,
            "add_special_tokens": False,
        },
        "output": "token_logprobs",
        "variants": {"fp32": "model.onnx"},
        "tokenizer": "tokenizer.json",
        "source": {"checkpoint": checkpoint, "revision": revision},
        "export": {
            "exporter": f"nlgeval_training {__version__}",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "opset": opset,
            "parity": {"fp32": {"max_abs_diff": max_diff, "n": int(real.sum()), "texts": len(parity_texts)}},
        },
        "parameters": int(sum(p.numel() for p in lm.parameters())),
    }
    if extra_manifest:
        manifest.update(extra_manifest)
    manifest["files"] = {name: sha256_file(out / name) for name in ("model.onnx", "tokenizer.json")}
    (out / "nlgeval.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out
