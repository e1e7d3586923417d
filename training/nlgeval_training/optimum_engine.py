"""A second export engine for T5 Boolean-QA checkpoints: Hugging Face Optimum's ONNX exporter.

Optimum (``optimum-onnx``) exports a T5 checkpoint as two graphs, ``encoder_model.onnx`` (input_ids,
attention_mask -> last_hidden_state) and ``decoder_model.onnx`` (decoder input_ids, encoder_attention_mask,
encoder_hidden_states -> logits over the vocabulary), and quantises each with ONNX Runtime's dynamic int8
(``ORTQuantizer``). The runtime of this project reads one graph that takes ``input_ids`` and ``attention_mask``
and gives ``p_yes``, UniEval's ``P(Yes) / (P(Yes) + P(No))`` at the first decoder step (Zhong et al., 2022;
maszhongming/UniEval). :func:`compose_boolqa` joins Optimum's two graphs into that one: the decoder is fed the
start token, and its logits are reduced to ``sigmoid(logit_Yes - logit_No)``, which equals UniEval's ratio.

The work is split in two because ``optimum-onnx`` 0.1 requires ``transformers<4.58`` and may live in an
environment of its own: :func:`optimum_raw_export` needs Optimum only (it can run as ``python -m
nlgeval_training.optimum_engine CHECKPOINT RAW_DIR [--int8]`` under any interpreter that has it);
:func:`folder_from_optimum` needs ONNX and the training package only, and writes a model folder like
``nlgeval export`` does (tokenizer, manifest, parity with PyTorch). ``benchmarks/export_engines.py`` measures
both engines side by side (docs/scale.md).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

ENCODER = "encoder_model.onnx"
DECODER = "decoder_model.onnx"
INLINE_LIMIT = 1_500_000_000  # bytes of weights a composed graph may hold inline (protobuf's limit is 2 GB)
EXTRA_HINT = 'pip install "nlgeval-training[optimum]" (optimum-onnx[onnxruntime]; it requires transformers<4.58)'


class OptimumMissing(ImportError):
    """Optimum's exporter cannot be imported."""


def _optimum():
    try:
        from optimum.exporters.onnx import main_export
    except ImportError as exc:
        raise OptimumMissing(
            f"the Optimum export engine needs optimum-onnx ({exc}); install it with {EXTRA_HINT}"
        ) from None
    return main_export


def optimum_raw_export(
    checkpoint: str | Path, raw_dir: str | Path, *, int8: bool = False, progress: Callable[[str], None] | None = None
) -> dict[str, list[str]]:
    """Optimum's own export of ``checkpoint`` into ``raw_dir`` (task ``text2text-generation``, no past key
    values: Boolean QA reads one decoder step), and with ``int8`` its dynamic int8 of both graphs into
    ``raw_dir/int8``. Returns the graph files written per precision."""
    main_export = _optimum()
    say = progress or (lambda _msg: None)
    raw = Path(raw_dir)
    say("exporting with Optimum (text2text-generation)")
    main_export(str(checkpoint), str(raw), task="text2text-generation", device="cpu")
    written = {"fp32": [ENCODER, DECODER]}
    if int8:
        from optimum.onnxruntime import ORTQuantizer
        from optimum.onnxruntime.configuration import AutoQuantizationConfig

        # Optimum's documented CPU recipe: dynamic (activation scales per run), per-tensor weights.
        config = AutoQuantizationConfig.avx2(is_static=False, per_channel=False)
        for name in (ENCODER, DECODER):
            say(f"quantising {name} with ORTQuantizer (dynamic int8)")
            quantizer = ORTQuantizer.from_pretrained(str(raw), file_name=name)
            quantizer.quantize(save_dir=str(raw / "int8"), quantization_config=config)
        written["int8"] = sorted(p.name for p in (raw / "int8").glob("*.onnx"))
    return written


def compose_boolqa(
    encoder: str | Path, decoder: str | Path, out: str | Path, *, yes_id: int, no_id: int, start_id: int
) -> None:
    """Write one graph ``out`` (inputs input_ids, attention_mask; output p_yes [batch]) from Optimum's encoder
    and decoder graphs. ``out`` must be in the same folder as both inputs: tensors stored as external data keep
    pointing at their files (copy them into a model folder with
    :func:`~nlgeval_training.folder_writer.gather_onnx`)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    encoder, decoder, out = Path(encoder), Path(decoder), Path(out)
    if not (encoder.parent.resolve() == decoder.parent.resolve() == out.parent.resolve()):
        raise ValueError(f"{out}: the composed graph must sit beside {encoder.name} and {decoder.name}")
    enc = onnx.load(str(encoder), load_external_data=False)
    dec = onnx.load(str(decoder), load_external_data=False)
    enc_in = [i.name for i in enc.graph.input]
    dec_in = [i.name for i in dec.graph.input]
    if sorted(enc_in) != ["attention_mask", "input_ids"] or [o.name for o in enc.graph.output] != ["last_hidden_state"]:
        raise ValueError(f"{encoder}: not an Optimum T5 encoder (inputs {enc_in})")
    if sorted(dec_in) != ["encoder_attention_mask", "encoder_hidden_states", "input_ids"] or [
        o.name for o in dec.graph.output
    ] != ["logits"]:
        raise ValueError(f"{decoder}: not an Optimum T5 decoder without past key values (inputs {dec_in})")
    # Names of the two graphs are kept apart by a prefix; the graph inputs keep theirs.
    enc = onnx.compose.add_prefix(enc, "encoder/", rename_inputs=False)
    dec = onnx.compose.add_prefix(dec, "decoder/")

    def const(name: str, values, dtype=np.int64):
        return numpy_helper.from_array(np.asarray(values, dtype=dtype), name)

    glue = [
        # decoder input ids: [batch, 1] filled with the start token
        helper.make_node("Shape", ["input_ids"], ["glue/batch"], start=0, end=1),
        helper.make_node("Concat", ["glue/batch", "glue/one"], ["glue/start_shape"], axis=0),
        helper.make_node(
            "ConstantOfShape",
            ["glue/start_shape"],
            ["decoder/input_ids"],
            value=helper.make_tensor("start", TensorProto.INT64, [1], [start_id]),
        ),
        helper.make_node("Identity", ["attention_mask"], ["decoder/encoder_attention_mask"]),
        helper.make_node("Identity", ["encoder/last_hidden_state"], ["decoder/encoder_hidden_states"]),
    ]
    head = [
        helper.make_node("Gather", ["decoder/logits", "glue/yes"], ["glue/logit_yes"], axis=2),
        helper.make_node("Gather", ["decoder/logits", "glue/no"], ["glue/logit_no"], axis=2),
        helper.make_node("Sub", ["glue/logit_yes", "glue/logit_no"], ["glue/margin"]),
        helper.make_node("Sigmoid", ["glue/margin"], ["glue/p"]),
        helper.make_node("Reshape", ["glue/p", "glue/flat"], ["p_yes"]),
    ]
    initializers = [
        *enc.graph.initializer,
        *dec.graph.initializer,
        const("glue/one", [1]),
        const("glue/yes", [yes_id]),
        const("glue/no", [no_id]),
        const("glue/flat", [-1]),
    ]
    inputs = [i for i in enc.graph.input]
    output = helper.make_tensor_value_info("p_yes", TensorProto.FLOAT, ["batch"])
    graph = helper.make_graph(
        [*enc.graph.node, *glue, *dec.graph.node, *head],
        "boolqa_from_optimum",
        inputs,
        [output],
        initializer=initializers,
        value_info=[*enc.graph.value_info, *dec.graph.value_info],
    )
    opsets: dict[str, int] = {}
    for model in (enc, dec):
        for op in model.opset_import:
            opsets[op.domain] = max(opsets.get(op.domain, 0), op.version)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid(d, v) for d, v in opsets.items()])
    model.ir_version = max(enc.ir_version, dec.ir_version)
    # Optimum writes each graph of a large model inline when it stays under protobuf's 2 GB; together they may
    # not, so the weights held inline go to a data file beside the composed graph.
    inline = sum(len(t.raw_data) for t in model.graph.initializer if t.HasField("raw_data"))
    if inline > INLINE_LIMIT:
        from onnx.external_data_helper import convert_model_to_external_data

        convert_model_to_external_data(model, all_tensors_to_one_file=True, location=out.name + ".data")
    onnx.save_model(model, str(out))


def folder_from_optimum(
    checkpoint: str | Path,
    raw_dir: str | Path,
    out_dir: str | Path,
    *,
    max_length: int | None = None,
    parity_inputs: Sequence[str] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """A model folder in ``out_dir`` from an Optimum export in ``raw_dir`` (:func:`optimum_raw_export`): the
    composed fp32 graph (and int8 when ``raw_dir/int8`` holds one), the tokenizer, and the manifest with parity
    against UniEval's PyTorch computation. Returns the manifest."""
    import torch
    import transformers
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_training.export import UNIEVAL_MAX_LENGTH
    from nlgeval_training.folder_writer import finalize_model_folder, gather_onnx, measure_parity, parity_texts
    from nlgeval_training.t5_trace import t5_reference_scores

    say = progress or (lambda _msg: None)
    raw, out = Path(raw_dir), Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    max_length = int(max_length or UNIEVAL_MAX_LENGTH)
    tokenizer = AutoTokenizer.from_pretrained(str(checkpoint))
    yes_id, no_id = int(tokenizer("Yes").input_ids[0]), int(tokenizer("No").input_ids[0])
    model = T5ForConditionalGeneration.from_pretrained(str(checkpoint)).eval()
    start_id = int(model.config.decoder_start_token_id)
    texts = list(parity_inputs) if parity_inputs is not None else parity_texts()
    say("scoring the parity inputs with PyTorch")
    reference = t5_reference_scores(
        model, tokenizer, texts, max_length=max_length, yes_id=yes_id, no_id=no_id, batch_size=8
    )
    pad_id = int(model.config.pad_token_id)
    del model

    variants, external = {}, {}
    for precision, where, name in (("fp32", raw, "model.onnx"), ("int8", raw / "int8", "model.int8.onnx")):
        enc = where / (ENCODER if precision == "fp32" else "encoder_model_quantized.onnx")
        dec = where / (DECODER if precision == "fp32" else "decoder_model_quantized.onnx")
        if not (enc.is_file() and dec.is_file()):
            continue
        say(f"composing Optimum's two {precision} graphs into {name}")
        composed = where / ("boolqa." + name)
        compose_boolqa(enc, dec, composed, yes_id=yes_id, no_id=no_id, start_id=start_id)
        external[name] = gather_onnx(composed, out / name)
        for path in (composed, composed.with_name(composed.name + ".data")):
            path.unlink(missing_ok=True)
        variants[precision] = name
    if not variants:
        raise FileNotFoundError(f"{raw}: no {ENCODER} and {DECODER} from Optimum's export")
    tokenizer.backend_tokenizer.save(str(out / "tokenizer.json"))
    eos = tokenizer.eos_token or "</s>"
    try:
        from optimum.version import __version__ as optimum_version
    except ImportError:
        optimum_version = "unknown (exported in another environment)"
    manifest: dict[str, Any] = {
        "kind": "boolqa",
        "architecture": "t5",
        "input": {"separator": "</s>", "separator_token": eos, "max_length": max_length, "pad_token_id": pad_id},
        "yes_token_id": yes_id,
        "no_token_id": no_id,
        "variants": variants,
        # ORTQuantizer's dynamic int8: activation scales per run, so the runtime scores one input at a time
        "quantization": {"int8": "dynamic"} if "int8" in variants else {},
        "external_data": {k: v for k, v in external.items() if v},
        "source": {"checkpoint": str(checkpoint), "revision": None},
        "export": {
            "exporter": f"optimum {optimum_version}, composed by nlgeval_training",
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "graph": "optimum",
            "date": _dt.date.today().isoformat(),
        },
    }
    finalize_model_folder(out, manifest)
    say("measuring parity with PyTorch")
    manifest["export"]["parity"] = measure_parity(out, texts, np.asarray(reference, np.float64), variants)
    return finalize_model_folder(out, manifest)


def main(argv: Sequence[str] | None = None) -> int:
    """``raw CHECKPOINT RAW_DIR [--int8]`` (needs Optimum) or ``folder CHECKPOINT RAW_DIR OUT_DIR``."""
    parser = argparse.ArgumentParser(description="Optimum's export of a T5 Boolean-QA checkpoint (module docs).")
    sub = parser.add_subparsers(dest="step", required=True)
    raw = sub.add_parser("raw", help="Optimum's two graphs (and their dynamic int8 with --int8) into RAW_DIR")
    raw.add_argument("checkpoint")
    raw.add_argument("raw_dir")
    raw.add_argument("--int8", action="store_true", help="also ORTQuantizer's dynamic int8 of both graphs")
    folder = sub.add_parser("folder", help="a model folder in OUT_DIR from RAW_DIR (no Optimum needed)")
    folder.add_argument("checkpoint")
    folder.add_argument("raw_dir")
    folder.add_argument("out_dir")
    args = parser.parse_args(argv)

    def say(message: str) -> None:
        print(f"[{args.step}] {message}", file=sys.stderr, flush=True)

    if args.step == "raw":
        shutil.rmtree(args.raw_dir, ignore_errors=True)
        try:
            optimum_raw_export(args.checkpoint, args.raw_dir, int8=args.int8, progress=say)
        except OptimumMissing as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    shutil.rmtree(args.out_dir, ignore_errors=True)
    manifest = folder_from_optimum(args.checkpoint, args.raw_dir, args.out_dir, progress=say)
    for precision, fig in manifest["export"]["parity"].items():
        print(f"{precision}: max |diff| to PyTorch = {fig.get('max_abs_diff')} on {fig.get('n')} inputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
