"""Export an encoder-classifier checkpoint (:mod:`nlgeval_training.model`) to a model folder.

The graph is ``(input_ids, attention_mask) -> p_yes`` like every Boolean-QA evaluator of the runtime
(docs/model-folder.md), with ``architecture: "encoder-classifier"`` and ``input.separator_token: "[SEP]"``
so the runtime turns the literal ``</s>`` of UniEval-style inputs into the encoder's separator. Parity
with PyTorch is measured through the runtime itself and written into ``nlgeval.json``.

    >>> export_encoder_classifier(  # doctest: +SKIP
    ...     "runs/embedded/final", "models/embedded", int8=True, keep_fp32=False
    ... )
"""

from __future__ import annotations

import datetime as _dt
import json
import shutil
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from nlgeval_training.folder_writer import (
    OPSET,
    convert_fp16,
    finalize_model_folder,
    measure_parity,
    parity_texts,
    quantize_int8,
    save_onnx,
)

DEFAULT_MAX_LENGTH = 256


def _clean_tokenizer(src: Path, dst: Path) -> None:
    """Copy ``tokenizer.json`` without baked-in truncation/padding (the runtime applies its own)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(src))
    tok.no_truncation()
    tok.no_padding()
    tok.save(str(dst))


def reference_scores(
    model, tokenizer_path: Path, texts: Sequence[str], max_length: int, separator_token: str
) -> np.ndarray:
    """P(Yes) of ``texts`` computed by PyTorch, tokenised the way training does it."""
    from nlgeval_training.encoding import encode, load_tokenizer
    from nlgeval_training.trainer import predict

    tok = load_tokenizer(tokenizer_path, max_length)
    ids = encode(tok, list(texts), separator_token)
    pad = tok.token_to_id("[PAD]") or 0
    return np.asarray(predict(model, ids, pad_id=pad, batch_size=4), dtype=np.float64)


def export_encoder_classifier(
    checkpoint: str | Path,
    out_dir: str | Path,
    *,
    int8: bool = False,
    fp16: bool = False,
    keep_fp32: bool = True,
    max_length: int | None = None,
    source_id: str | None = None,
    revision: str | None = None,
    opset: int = OPSET,
    parity_inputs: Sequence[str] | None = None,
    card: dict[str, Any] | None = None,
    int8_method: str = "compressed",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write ``out_dir`` (graph(s), tokenizer.json, nlgeval.json) from an encoder-classifier checkpoint.

    ``keep_fp32=False`` (with ``int8=True``) ships only the int8 graph, to keep a folder small; the fp32
    parity is still measured and recorded. ``int8_method="compressed"`` (default) stores int8 embedding
    tables and fp16 weights computed in fp32 (:mod:`nlgeval_training.compress`, far smaller drift);
    ``"static"`` quantises the MatMuls with activation scales calibrated once here
    (:mod:`nlgeval_training.static_int8`; batch-invariant, integer kernels); ``"dynamic"`` is ONNX Runtime's
    dynamic quantisation of MatMul/Gemm/Gather. ``max_length`` defaults to the training run's, else 256.
    Returns the manifest.
    """
    import torch
    import transformers

    from nlgeval_training.model import CLASSIFIER_FILE, SEPARATOR_TOKEN, EncoderClassifier, PYesWrapper

    if not keep_fp32 and not (int8 or fp16):
        raise ValueError("keep_fp32=False needs int8=True or fp16=True, otherwise the folder would have no graph")
    say = progress or (lambda _msg: None)
    checkpoint, out = Path(checkpoint), Path(out_dir)
    tok_src = checkpoint / "tokenizer.json"
    if not tok_src.is_file():
        raise FileNotFoundError(f"{checkpoint} has no tokenizer.json; it is not a checkpoint written by nlgeval-train")
    training = {}
    if (checkpoint / "training.json").is_file():
        training = json.loads((checkpoint / "training.json").read_text(encoding="utf-8"))
    max_length = int(max_length or training.get("config", {}).get("max_length") or DEFAULT_MAX_LENGTH)
    say(f"loading {checkpoint}")
    model = EncoderClassifier.load(checkpoint).eval()
    wrapper = PYesWrapper(model).eval()
    out.mkdir(parents=True, exist_ok=True)
    _clean_tokenizer(tok_src, out / "tokenizer.json")

    from nlgeval_training.encoding import encode, load_tokenizer
    from nlgeval_training.trainer import _pad

    tok = load_tokenizer(out / "tokenizer.json", max_length)
    pad_id = tok.token_to_id("[PAD]") or 0
    sample_ids, sample_mask = _pad(encode(tok, parity_texts(2), SEPARATOR_TOKEN), pad_id)
    # A padded tracing batch keeps the masking path in the graph.
    assert int(sample_mask.min()) == 0, "the tracing sample must contain padding"
    raw = out / ".raw"
    raw.mkdir(exist_ok=True)
    say("exporting the ONNX graph")
    import warnings

    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(
            wrapper,
            (sample_ids, sample_mask),
            str(raw / "model.onnx"),
            input_names=["input_ids", "attention_mask"],
            output_names=["p_yes"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "p_yes": {0: "batch"},
            },
            opset_version=opset,
            dynamo=False,
            do_constant_folding=True,
        )
    import onnx

    save_onnx(onnx.load(str(raw / "model.onnx")), out / "model.onnx")
    shutil.rmtree(raw, ignore_errors=True)
    variants = {"fp32": "model.onnx"}
    int8_note = None
    if int8:
        say(f"quantising to int8 ({int8_method})")
        if int8_method == "compressed":
            from nlgeval_training.compress import compress_graph

            compress_graph(out / "model.onnx", out / "model.int8.onnx")
            int8_note = (
                "int8 per-row embedding tables (Gather); other weights stored in fp16 and computed "
                "in fp32 (no int8 activations)"
            )
        elif int8_method == "static":
            from nlgeval_training.compress import fp16_weight_storage
            from nlgeval_training.static_int8 import calibration_feeds, pseudo_calibration_texts, quantize_static_int8

            feeds = calibration_feeds(
                out / "tokenizer.json",
                pseudo_calibration_texts(),
                max_length=max_length,
                separator_token=SEPARATOR_TOKEN,
            )
            quantize_static_int8(out / "model.onnx", out / "model.int8.onnx", feeds)
            # The embedding table (a Gather, most of the weights) is stored in fp16 and computed in fp32.
            save_onnx(fp16_weight_storage(onnx.load(str(out / "model.int8.onnx"))), out / "model.int8.onnx")
            int8_note = (
                "static int8 MatMuls (uint8 activations with scales calibrated at export, int8 weights per "
                "channel); embedding table stored in fp16"
            )
        elif int8_method == "dynamic":
            # Gather too: the 30k-word embedding table is most of the weights.
            quantize_int8(out / "model.onnx", out / "model.int8.onnx", op_types=("MatMul", "Gemm", "Gather"))
            int8_note = "dynamic int8 quantisation of MatMul/Gemm weights and activations and of Gather tables"
        else:
            raise ValueError(f"int8_method must be 'compressed', 'static' or 'dynamic', not {int8_method!r}")
        variants["int8"] = "model.int8.onnx"
    if fp16:
        say("converting to fp16")
        convert_fp16(out / "model.onnx", out / "model.fp16.onnx")
        variants["fp16"] = "model.fp16.onnx"
    manifest: dict[str, Any] = {
        "kind": "boolqa",
        "architecture": "encoder-classifier",
        "input": {
            "separator": "</s>",
            "separator_token": SEPARATOR_TOKEN,
            "max_length": max_length,
            "pad_token_id": int(pad_id),
        },
        "variants": variants,
        # The runtime batches weight-only quantised graphs freely and runs dynamic ones an input at a time.
        "quantization": ({"int8": {"compressed": "weight-only"}.get(int8_method, int8_method)} if int8 else {}),
        "source": {
            "checkpoint": source_id or str(checkpoint),
            "revision": revision,
            "encoder": training.get("config", {}).get("encoder", "unknown"),
        },
        "export": {
            "exporter": f"nlgeval_training {_version()}",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "opset": opset,
            "date": _dt.date.today().isoformat(),
        },
    }
    if int8_note:
        manifest["export"]["int8"] = int8_note
    classifier = (
        json.loads((checkpoint / CLASSIFIER_FILE).read_text()) if (checkpoint / CLASSIFIER_FILE).is_file() else {}
    )
    manifest["classifier"] = {
        "pooling": classifier.get("pooling", "mean"),
        "head": "linear yes/no",
        "score": "sigmoid(logit_yes - logit_no)",
    }
    if card:
        manifest["card"] = card
    finalize_model_folder(out, manifest)

    say("measuring parity with PyTorch")
    texts = list(parity_inputs) if parity_inputs is not None else parity_texts()
    reference = reference_scores(model, out / "tokenizer.json", texts, max_length, SEPARATOR_TOKEN)
    parity = measure_parity(out, texts, reference, variants)
    manifest["export"]["parity"] = parity
    if not keep_fp32:
        (out / "model.onnx").unlink()
        variants.pop("fp32")
        parity["fp32"]["shipped"] = False
        manifest["variants"] = variants
    return finalize_model_folder(out, manifest)


def _version() -> str:
    from nlgeval_training import __version__

    return __version__
