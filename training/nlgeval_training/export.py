"""Export a Hugging Face Boolean-QA checkpoint to a model folder (docs/model-folder.md).

For T5 (UniEval) the graph is the whole scoring computation of UniEval's public code, maszhongming/UniEval: the encoder,
one decoder step from ``decoder_start_token_id``, and ``p_yes = sigmoid(logit_Yes - logit_No)``. Only the two
rows of the LM head that matter are multiplied (the softmax normaliser cancels), so the graph never
computes the 32k-way vocabulary projection.

Every export measures its own parity against the PyTorch reference computation (full forward, softmax
over the vocabulary, ``P(Yes) / (P(Yes) + P(No))``, as UniEval's scorer does) on sample inputs with
padding, and writes the figures into ``nlgeval.json``.

Example::

    export_model("MingZhong/unieval-sum", "models/unieval-sum", int8=True)
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

# The folder helpers moved to folder_writer; importing them here keeps nlgeval_training.export.<name> working.
from nlgeval_training.folder_writer import (
    EXTERNAL_DATA_THRESHOLD,
    OPSET,
    convert_fp16,
    finalize_model_folder,
    gather_onnx,
    measure_parity,
    parity_texts,
    quantize_int8,
    save_onnx,
)

# The PyTorch side (UniEval's reference scores, the traced module) lives in t5_trace, which runs it in a child
# process; t5_reference_scores stays importable from here.
from nlgeval_training.t5_trace import RAW_GRAPH, t5_reference_scores, trace_in_child

__all__ = [
    "export_model",
    "export_t5",
    "t5_reference_scores",
    "UNIEVAL_MAX_LENGTH",
    "EXTERNAL_DATA_THRESHOLD",
    "OPSET",
    "convert_fp16",
    "finalize_model_folder",
    "measure_parity",
    "parity_texts",
    "quantize_int8",
    "save_onnx",
]

UNIEVAL_MAX_LENGTH = 1024


def _wo_node(name: str) -> bool:
    return "DenseReluDense/wo" in name or "/wo/" in name


# -- T5 ------------------------------------------------------------------------------------------

GRAPHS = ("fused", "plain", "traced")
INT8_METHODS = ("static", "dynamic")


def export_t5(
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
    progress: Callable[[str], None] | None = None,
    graph: str = "fused",
    int8_method: str = "static",
    calibration_inputs: Sequence[str] | None = None,
    int8_format: str = "qdq",
) -> dict[str, Any]:
    """Export a T5 Boolean-QA checkpoint (UniEval) into ``out_dir``; returns the manifest.

    ``graph``: ``"fused"`` (default) is :class:`~nlgeval_training.t5_graph.T5ScoringGraph` with ONNX Runtime's
    fused MultiHeadAttention in the encoder; ``"plain"`` the same computation in standard ONNX operators only;
    ``"traced"`` a trace of Hugging Face's own forward. ``int8_method``: ``"static"`` (default; scales
    calibrated on ``calibration_inputs``, by default :func:`~nlgeval_training.static_int8.pseudo_calibration_texts`,
    batch-invariant) or ``"dynamic"`` (scored one input at a time by the runtime). ``int8_format``: ``"qdq"``
    or ``"qoperator"`` for the static graph. ``keep_fp32=False`` (with ``int8`` or ``fp16``) ships only those
    graphs; the fp32 parity is still measured and recorded.

    Memory: PyTorch runs in a child process (:mod:`nlgeval_training.t5_trace`) that exits before the weights
    are gathered into ``model.onnx.data`` (streamed, never all in memory), quantised and scored for parity, so
    the peak is the larger of the two halves rather than their sum (docs/scale.md, "UniEval on CI").
    """
    if graph not in GRAPHS:
        raise ValueError(f"graph must be one of {GRAPHS}, not {graph!r}")
    if int8_method not in INT8_METHODS:
        raise ValueError(f"int8_method must be one of {INT8_METHODS}, not {int8_method!r}")
    if not keep_fp32 and not (int8 or fp16):
        raise ValueError("keep_fp32=False needs int8=True or fp16=True, otherwise the folder would have no graph")

    say = progress or (lambda _msg: None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    max_length = int(max_length or UNIEVAL_MAX_LENGTH)
    texts = list(parity_inputs) if parity_inputs is not None else parity_texts()
    raw = out / ".raw"
    facts = trace_in_child(
        checkpoint, raw, graph=graph, max_length=max_length, opset=opset, parity_inputs=texts, progress=say
    )
    eos = facts["separator_token"]
    graph_path = out / "model.onnx"
    say("writing model.onnx")
    external = {"model.onnx": gather_onnx(raw / RAW_GRAPH, graph_path)}
    os.replace(raw / "tokenizer.json", out / "tokenizer.json")
    shutil.rmtree(raw, ignore_errors=True)
    variants = {"fp32": "model.onnx"}
    if int8 and int8_method == "static":
        from nlgeval_training.static_int8 import (
            calibration_feeds,
            constant_weight_matmuls,
            pseudo_calibration_texts,
            quantize_static_int8,
        )

        calibration = list(calibration_inputs) if calibration_inputs is not None else pseudo_calibration_texts()
        say(f"quantising to static int8 (calibrated on {len(calibration)} inputs)")
        feeds = calibration_feeds(out / "tokenizer.json", calibration, max_length=max_length, separator_token=eos)
        # The encoder is nearly all of the work; the one-token decoder stays in fp32.
        encoder = constant_weight_matmuls(graph_path, "/encoder/") if graph != "traced" else None
        external["model.int8.onnx"] = quantize_static_int8(
            graph_path, out / "model.int8.onnx", feeds, nodes=encoder or None, quant_format=int8_format
        )
        variants["int8"] = "model.int8.onnx"
    elif int8:
        say("quantising to int8")
        external["model.int8.onnx"] = quantize_int8(graph_path, out / "model.int8.onnx")
        variants["int8"] = "model.int8.onnx"
    if fp16:
        say("converting to mixed-precision fp16")
        external["model.fp16.onnx"] = convert_fp16(graph_path, out / "model.fp16.onnx", keep_fp32_nodes=_wo_node)
        variants["fp16"] = "model.fp16.onnx"

    manifest: dict[str, Any] = {
        "kind": "boolqa",
        "architecture": "t5",
        "input": {
            "separator": "</s>",
            "separator_token": eos,
            "max_length": max_length,
            "pad_token_id": facts["pad_token_id"],
        },
        "yes_token_id": facts["yes_token_id"],
        "no_token_id": facts["no_token_id"],
        "variants": variants,
        "quantization": {"int8": int8_method} if int8 else {},
        "external_data": {k: v for k, v in external.items() if v},
        "source": {"checkpoint": source_id or str(checkpoint), "revision": revision},
        "export": {
            "exporter": f"nlgeval_training {_version()}",
            "torch": facts["torch"],
            "transformers": facts["transformers"],
            "opset": opset,
            "graph": graph,
            "date": _dt.date.today().isoformat(),
        },
    }
    finalize_model_folder(out, manifest)

    say("measuring parity with PyTorch")
    reference = np.asarray(facts["reference"], dtype=np.float64)
    parity = manifest["export"]["parity"] = measure_parity(out, texts, reference, variants)
    if not keep_fp32:
        for name in [graph_path.name, *external.pop(graph_path.name, [])]:
            (out / name).unlink()
        variants.pop("fp32")
        parity["fp32"]["shipped"] = False
        manifest["variants"] = variants
        manifest["external_data"] = {k: v for k, v in external.items() if v}
    return finalize_model_folder(out, manifest)


def _version() -> str:
    from nlgeval_training import __version__

    return __version__


def export_model(checkpoint: str | Path, out_dir: str | Path, **kwargs: Any) -> dict[str, Any]:
    """Export any supported checkpoint, chosen by its ``config.json`` (T5 family or an encoder classifier)."""
    config_path = Path(checkpoint) / "config.json"
    model_type = None
    if config_path.is_file():
        model_type = json.loads(config_path.read_text(encoding="utf-8")).get("model_type")
    else:
        from transformers import AutoConfig

        model_type = AutoConfig.from_pretrained(str(checkpoint)).model_type
    if model_type in ("t5", "mt5", "umt5"):
        return export_t5(checkpoint, out_dir, **kwargs)
    nlgeval_config = Path(checkpoint) / "nlgeval_classifier.json"
    if nlgeval_config.is_file():
        from nlgeval_training.encoder_classifier import export_encoder_classifier

        return export_encoder_classifier(checkpoint, out_dir, **kwargs)
    raise ValueError(
        f"{checkpoint}: model type {model_type!r} is not a supported Boolean-QA evaluator "
        "(supported: T5-family seq2seq checkpoints such as MingZhong/unieval-sum, and encoder classifiers "
        "trained by nlgeval-train)"
    )
