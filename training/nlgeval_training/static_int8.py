"""Static int8 graphs: weights per channel, activation scales calibrated once at export.

Dynamic quantisation (``folder_writer.quantize_int8``) measures each activation's range at run time over
the whole input tensor, so a score depends on the other inputs of its batch and the runtime has to score
such graphs one input at a time. Here every quantised activation gets a fixed scale and zero point,
calibrated once on pseudo inputs when the model is exported: each row of a batch is then quantised,
multiplied (in exact integer arithmetic) and dequantised on its own, so a score is the same alone and in
any batch, and the runtime batches these graphs like float ones (manifest ``quantization: static``).

Only MatMuls with a constant weight are quantised (``MatMulConstBOnly``): attention scores, softmax and
normalisation stay in fp32. Activations are uint8 and weights int8 per output channel (ONNX Runtime's
fast x86 path, U8S8), in the QDQ format that ONNX Runtime fuses into integer kernels.

    >>> feeds = calibration_feeds(tokenizer_json, pseudo_calibration_texts(), max_length=1024)  # doctest: +SKIP
    >>> quantize_static_int8("model.onnx", "model.int8.onnx", feeds, nodes=encoder_matmuls)        # doctest: +SKIP
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from nlgeval_training.folder_writer import EXTERNAL_DATA_THRESHOLD

FORMATS = ("qdq", "qoperator")
CALIBRATIONS = ("auto", "streamed", "onnxruntime")

# Sentences for calibration inputs, kept apart from the parity sentences (folder_writer) so that the drift
# recorded at export is measured on inputs the scales were not fitted to.
_CALIBRATION_SENTENCES = [
    "The city council voted on Tuesday to expand the bus network to the northern suburbs.",
    "Heavy rain forced the organisers to postpone the final match until the weekend.",
    "The museum will display the recovered paintings for the first time since the theft in 1994.",
    "Analysts expect the central bank to keep interest rates unchanged at its next meeting.",
    "A spokesman for the airline said that the delays were caused by a fault in the booking system.",
    "Doctors at the hospital treated more than two hundred patients with heat exhaustion last month.",
    "The new law requires companies with more than fifty employees to publish their pay gaps.",
    "Volunteers planted ten thousand trees along the river to reduce the risk of flooding.",
    "The striker scored twice in the second half, securing the club's place in the cup final.",
    "Residents complained that the construction work had gone on for far longer than promised.",
    "The report found that the number of students learning a second language has fallen sharply.",
    "Engineers are testing a battery that could charge an electric car in under ten minutes.",
]
_TURNS = [
    "Did you watch the game last night?",
    "Yes, it was great, the last goal was amazing.",
    "I have never been to Lisbon, is it nice?",
    "It is lovely in spring, the food is wonderful.",
    "What do you do for a living?",
    "I teach history at a secondary school.",
]


def _disfluent(sentence: str, rng: random.Random) -> str:
    """A pseudo-data negative: a span of words deleted, repeated or shuffled."""
    words = sentence.split()
    i = rng.randrange(len(words))
    j = min(len(words), i + 1 + rng.randrange(4))
    kind = rng.randrange(3)
    if kind == 0:
        words = words[:i] + words[j:]
    elif kind == 1:
        words = words[:j] + words[i:j] + words[j:]
    else:
        span = words[i:j]
        rng.shuffle(span)
        words = words[:i] + span + words[j:]
    return " ".join(words)


def pseudo_calibration_texts(n: int = 48, *, seed: int = 0) -> list[str]:
    """UniEval-style Boolean-QA inputs of mixed length, positives and pseudo negatives, every question kind."""
    rng = random.Random(seed)
    pool = _CALIBRATION_SENTENCES
    texts = []
    for i in range(n):
        doc_sentences = rng.sample(pool, k=1 + rng.randrange(len(pool)))
        document = " ".join(doc_sentences * (1 + rng.randrange(4)))
        claim = rng.choice(doc_sentences)
        if rng.random() < 0.5:
            claim = _disfluent(rng.choice(pool), rng)
        history = "\n".join(rng.sample(_TURNS, k=2 + rng.randrange(3))) + "\n\n"
        kind = i % 6
        if kind == 0:
            texts.append(f"question: Is this a fluent paragraph? </s> paragraph: {claim}")
        elif kind == 1:
            texts.append(
                f"question: Is this claim consistent with the document? </s> claim: {claim} </s> document: {document}"
            )
        elif kind == 2:
            texts.append(
                f"question: Is this a coherent summary to the document? </s> summary: "
                f"{' '.join(doc_sentences[:2])} </s> document: {document}"
            )
        elif kind == 3:
            texts.append(
                f"question: Is this summary relevant to the reference? </s> summary: {claim} </s> "
                f"reference: {rng.choice(pool)}"
            )
        elif kind == 4:
            texts.append(f"question: Is this a natural response in the dialogue? </s> response: {rng.choice(_TURNS)}")
        else:
            texts.append(
                f"question: Is this a coherent response given the dialogue history? </s> response: "
                f"{rng.choice(_TURNS)} </s> dialogue history: {history}"
            )
    return texts


def calibration_feeds(
    tokenizer_path: str | Path,
    texts: Sequence[str],
    *,
    max_length: int,
    separator: str = "</s>",
    separator_token: str = "</s>",
) -> list[dict[str, np.ndarray]]:
    """One unpadded feed per text, tokenised exactly as the runtime tokenises (tail truncation, EOS kept)."""
    from nlgeval_runtime.tokenize import TextEncoder

    encoder = TextEncoder(tokenizer_path, separator=separator, separator_token=separator_token, max_length=max_length)
    feeds = []
    for row in encoder.encode(list(texts)).ids:
        ids = row.reshape(1, -1).astype(np.int64)
        feeds.append({"input_ids": ids, "attention_mask": np.ones_like(ids)})
    return feeds


class _Feeds:
    """ONNX Runtime's CalibrationDataReader protocol over a list of feeds."""

    def __init__(self, feeds: Iterable[dict[str, np.ndarray]]):
        self._feeds = list(feeds)
        self._next = iter(self._feeds)

    def get_next(self):
        return next(self._next, None)

    def rewind(self) -> None:
        self._next = iter(self._feeds)


def constant_weight_matmuls(model_path: str | Path, prefix: str = "") -> list[str]:
    """Names of the MatMul nodes whose second input is an initializer, optionally under a name prefix."""
    import onnx

    model = onnx.load(str(model_path), load_external_data=False)
    weights = {init.name for init in model.graph.initializer}
    return [
        node.name
        for node in model.graph.node
        if node.op_type == "MatMul" and node.name.startswith(prefix) and node.input[1] in weights
    ]


def quantize_static_int8(
    src: str | Path,
    dst: str | Path,
    feeds: Sequence[dict[str, np.ndarray]],
    *,
    nodes: Sequence[str] | None = None,
    quant_format: str = "qdq",
    calibration: str = "auto",
) -> list[str]:
    """``src`` (fp32) -> ``dst``: static int8 MatMuls calibrated (min/max) on ``feeds``.

    ``nodes``: the MatMul nodes to quantise (default: every MatMul with a constant weight).
    ``calibration``: ``"streamed"`` measures the activation ranges with :func:`calibrate_min_max` (one ONNX
    Runtime session over the graph on disk, never a copy of its weights in Python) and hands them to ONNX
    Runtime's ``quantize_static`` as a calibration cache; ``"onnxruntime"`` lets ``quantize_static`` calibrate
    itself (it holds the graph twice more while it does); ``"auto"`` (default) is ``"streamed"`` where the
    installed ONNX Runtime takes a calibration cache. Both give the same ranges, hence the same graph.
    Returns the external data file names of ``dst`` (empty when self-contained).
    """
    import inspect

    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType, quantize_static

    if quant_format not in FORMATS:
        raise ValueError(f"quant_format must be one of {FORMATS}, not {quant_format!r}")
    if calibration not in CALIBRATIONS:
        raise ValueError(f"calibration must be one of {CALIBRATIONS}, not {calibration!r}")
    if not feeds:
        raise ValueError("static quantisation needs at least one calibration input")
    takes_cache = "calibration_cache_path" in inspect.signature(quantize_static).parameters
    if calibration == "streamed" and not takes_cache:
        raise ValueError(
            "calibration='streamed' needs an ONNX Runtime whose quantize_static takes "
            "calibration_cache_path; upgrade onnxruntime or use calibration='onnxruntime'"
        )
    src, dst = Path(src), Path(dst)
    large = sum(p.stat().st_size for p in src.parent.glob(src.name + "*")) > EXTERNAL_DATA_THRESHOLD
    options = dict(
        quant_format=QuantFormat.QDQ if quant_format == "qdq" else QuantFormat.QOperator,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        reduce_range=False,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        nodes_to_quantize=list(nodes) if nodes is not None else None,
        use_external_data_format=large,
        calibrate_method=CalibrationMethod.MinMax,
        extra_options={"MatMulConstBOnly": True, "WeightSymmetric": True},
    )
    if calibration == "onnxruntime" or not takes_cache:
        quantize_static(str(src), str(dst), _Feeds(feeds), **options)
    else:
        import tempfile

        from onnxruntime.quantization.calibrate import TensorsData, save_tensors_data

        ranges = calibrate_min_max(src, feeds, op_types=options["op_types_to_quantize"])
        with tempfile.TemporaryDirectory(prefix="nlgeval-calibration-") as tmp:
            cache = Path(tmp) / "ranges.json"
            save_tensors_data(TensorsData(CalibrationMethod.MinMax, ranges), cache)
            quantize_static(str(src), str(dst), None, calibration_cache_path=str(cache), **options)
    if large:
        return sorted(p.name for p in dst.parent.glob(dst.name + "*") if p.name != dst.name)
    return []


def calibrate_min_max(
    graph: str | Path, feeds: Iterable[dict[str, np.ndarray]], *, op_types: Sequence[str] = ("MatMul",)
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The minimum and maximum of every float activation that enters or leaves an ``op_types`` node, over
    ``feeds`` (read one at a time), as ONNX Runtime's MinMax calibrator measures them.

    The tensors are the calibrator's (``select_tensors_to_calibrate``: node inputs and outputs with a float
    type after ONNX shape inference, weights excluded), each reduced over all its elements; NaN is ignored.
    Only the graph's structure is loaded into Python: a ``ReduceMin``/``ReduceMax`` pair per tensor is added
    to it and saved beside ``graph`` so that ONNX Runtime reads the weights from the same files on disk.
    Returns ``{tensor: (min, max)}`` with float32 arrays of shape ``(1,)``.
    """
    import onnx
    import onnxruntime as ort

    graph = Path(graph)
    model = onnx.load(str(graph), load_external_data=False)
    inferred = onnx.shape_inference.infer_shapes(model)
    types = {vi.name: vi for vi in (*inferred.graph.value_info, *inferred.graph.output, *inferred.graph.input)}
    weights = {init.name for init in model.graph.initializer}
    floats = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16}
    wanted = sorted(
        {
            name
            for node in model.graph.node
            if node.op_type in op_types
            for name in (*node.input, *node.output)
            if name in types
            and name not in weights
            and types[name].type.HasField("tensor_type")
            and types[name].type.tensor_type.elem_type in floats
        }
    )
    if not wanted:
        raise ValueError(f"{graph}: no float activation enters or leaves a node of type {list(op_types)}")
    del model.graph.output[:]
    outputs = []
    for i, name in enumerate(wanted):
        for op in ("ReduceMin", "ReduceMax"):
            out = f"nlgeval_calibration_{i}_{op}"
            model.graph.node.append(onnx.helper.make_node(op, [name], [out], keepdims=1, name=out))
            model.graph.output.append(
                onnx.helper.make_tensor_value_info(out, types[name].type.tensor_type.elem_type, None)
            )
            outputs.append(out)
    augmented = graph.parent / f".{graph.stem}.calibration.onnx"
    onnx.save_model(model, str(augmented))
    try:
        options = ort.SessionOptions()
        # As ONNX Runtime's calibrator: no graph optimisation, so the measured tensors are the graph's own.
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        options.log_severity_level = 3
        session = ort.InferenceSession(str(augmented), sess_options=options, providers=["CPUExecutionProvider"])
        low = np.full(len(wanted), np.nan, dtype=np.float32)
        high = np.full(len(wanted), np.nan, dtype=np.float32)
        seen = 0
        for feed in feeds:
            values = session.run(outputs, feed)
            low = np.fmin(low, np.array([np.min(v) for v in values[0::2]], dtype=np.float32))
            high = np.fmax(high, np.array([np.max(v) for v in values[1::2]], dtype=np.float32))
            seen += 1
        del session
    finally:
        augmented.unlink(missing_ok=True)
    if not seen:
        raise ValueError("static quantisation needs at least one calibration input")
    return {name: (low[i : i + 1].copy(), high[i : i + 1].copy()) for i, name in enumerate(wanted)}
