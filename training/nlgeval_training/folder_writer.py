"""Writing model folders (docs/model-folder.md): what every exporter of this package shares.

Saving graphs (with external data past the protobuf limit), the int8 and fp16 variants, the parity
figures measured through the runtime, and the manifest that hashes every file. The T5 exporter
(:mod:`nlgeval_training.export`) and the encoder-classifier exporter
(:mod:`nlgeval_training.encoder_classifier`) both build on it, so neither imports the other for it.

    >>> quantize_int8("out/model.onnx", "out/model.int8.onnx")     # doctest: +SKIP
    >>> finalize_model_folder("out", {"kind": "boolqa", ...})       # doctest: +SKIP
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from nlgeval_runtime.hashing import sha256_file
from nlgeval_runtime.modelfolder import FORMAT, FORMAT_VERSION, MANIFEST

OPSET = 17
# ONNX protobufs cannot exceed 2 GB; beyond this size the weights go to an external data file.
EXTERNAL_DATA_THRESHOLD = 1_800_000_000

_PARITY_SENTENCES = [
    "The company reported a sharp rise in quarterly profits, driven by strong demand for its cloud services.",
    "Officials said the bridge would reopen next week after repairs.",
    "Is it raining?",
    "Scientists have discovered a new species of frog in the rainforests of Peru, the third this year, "
    "and they warn that its habitat is shrinking quickly because of illegal logging and mining.",
    "He said that he would not run for office again.",
    "Prices of wheat and maize fell for a third consecutive month as harvests in the southern hemisphere "
    "came in larger than expected, easing fears of a global shortage that had pushed up food costs.",
]


def parity_texts(n: int = 12) -> list[str]:
    """Realistic Boolean-QA inputs of mixed length (so batches carry padding) for parity checks."""
    questions = [
        ("Is this a fluent paragraph?", ["paragraph"]),
        ("Is this claim consistent with the document?", ["claim", "document"]),
        ("Is this a coherent summary to the document?", ["summary", "document"]),
        ("Is this summary relevant to the reference?", ["summary", "reference"]),
    ]
    texts = []
    for i in range(n):
        question, fields = questions[i % len(questions)]
        parts = [f"question: {question}"]
        for j, name in enumerate(fields):
            k = (i + j * 3) % len(_PARITY_SENTENCES)
            body = _PARITY_SENTENCES[k] if j == 0 else " ".join(_PARITY_SENTENCES[: 1 + (i % 5)] * (1 + i % 3))
            parts.append(f"{name}: {body}")
        texts.append(" </s> ".join(parts))
    return texts


def finalize_model_folder(folder: str | Path, manifest: dict[str, Any]) -> dict[str, Any]:
    """Write the Triton configuration (``config.pbtxt``), hash every file of ``folder`` into
    ``manifest["files"]`` and write ``nlgeval.json``."""
    from nlgeval_training.triton import CONFIG_FILE, triton_config

    folder = Path(folder)
    # The config is written from the graph's inputs and outputs and the manifest's variants; it is hashed with
    # the other files, like them a part of the folder.
    (folder / CONFIG_FILE).write_text(triton_config(folder, manifest=manifest), encoding="utf-8")
    files = {}
    mode = _file_mode()
    for path in sorted(folder.iterdir()):
        if path.is_file() and path.name != MANIFEST and not path.name.startswith("."):
            files[path.name] = sha256_file(path)
            # Some writers (ONNX external data) create 0600 files: give every file of the folder the mode a
            # plain write gets, so that a server or a CI cache under another user can read all of them.
            os.chmod(path, mode)
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, **manifest, "files": files}
    tmp = folder / (MANIFEST + ".tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    os.chmod(tmp, mode)
    os.replace(tmp, folder / MANIFEST)
    return manifest


def _file_mode() -> int:
    """0o666 less the process umask: the mode of a file written with ``open(path, "w")``."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def save_onnx(model_proto: Any, path: Path) -> list[str]:
    """Save an ONNX model, with external data when it would exceed the protobuf limit.

    Returns the names of the external data files (empty when the graph is self-contained).
    """
    import onnx

    fits = _proto_size_known(model_proto) and model_proto.ByteSize() <= EXTERNAL_DATA_THRESHOLD
    if not fits:
        data_name = path.name + ".data"
        onnx.save_model(
            model_proto,
            str(path),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=data_name,
            size_threshold=1024,
        )
        return [data_name]
    onnx.save_model(model_proto, str(path))
    return []


_COPY_CHUNK = 64 << 20


def gather_onnx(src: str | Path, dst: str | Path) -> list[str]:
    """Write the graph ``src`` as ``dst`` the way :func:`save_onnx` would, without loading its weights.

    ``torch.onnx.export`` writes a graph past 2 GB with every weight in a file of its own beside it. Here
    those bytes are copied, a chunk at a time, into the one data file ``dst.name + ".data"`` (weights that
    ``src`` holds inline and that are at least 1 KiB go there too), and only the graph structure is held in
    memory. A ``src`` without external data is small and is saved through :func:`save_onnx`.
    Returns the names of ``dst``'s external data files (empty when self-contained).
    """
    import onnx
    from onnx.external_data_helper import ExternalDataInfo, uses_external_data

    src, dst = Path(src), Path(dst)
    model = onnx.load(str(src), load_external_data=False)
    tensors = _graph_tensors(model.graph)
    if not any(uses_external_data(t) for t in tensors):
        return save_onnx(model, dst)
    data_name = dst.name + ".data"
    with open(dst.parent / data_name, "wb") as data:
        for tensor in tensors:
            offset = data.tell()
            if uses_external_data(tensor):
                info = ExternalDataInfo(tensor)
                source = (src.parent / info.location).resolve()
                if src.parent.resolve() not in source.parents:
                    raise ValueError(f"{src}: tensor {tensor.name!r} points outside its folder ({info.location!r})")
                with open(source, "rb") as fh:
                    fh.seek(info.offset or 0)
                    left = info.length if info.length is not None else source.stat().st_size - (info.offset or 0)
                    while left > 0:
                        chunk = fh.read(min(left, _COPY_CHUNK))
                        if not chunk:
                            raise ValueError(f"{source}: external data of {tensor.name!r} ends early")
                        data.write(chunk)
                        left -= len(chunk)
            elif tensor.HasField("raw_data") and len(tensor.raw_data) >= 1024:
                data.write(tensor.raw_data)
                tensor.ClearField("raw_data")
            else:
                continue
            del tensor.external_data[:]
            for key, value in (("location", data_name), ("offset", offset), ("length", data.tell() - offset)):
                entry = tensor.external_data.add()
                entry.key, entry.value = key, str(value)
            tensor.data_location = onnx.TensorProto.EXTERNAL
    onnx.save_model(model, str(dst))
    return [data_name]


def _graph_tensors(graph: Any) -> list[Any]:
    """Every TensorProto of ``graph``: initializers and tensor attributes (subgraphs included)."""
    tensors = list(graph.initializer)
    for node in graph.node:
        for attribute in node.attribute:
            if attribute.HasField("t"):
                tensors.append(attribute.t)
            tensors.extend(attribute.tensors)
            if attribute.HasField("g"):
                tensors.extend(_graph_tensors(attribute.g))
            for subgraph in attribute.graphs:
                tensors.extend(_graph_tensors(subgraph))
    return tensors


def _proto_size_known(model_proto: Any) -> bool:
    try:
        model_proto.ByteSize()
        return True
    except Exception:  # protobuf refuses to measure messages over 2 GB
        return False


def quantize_int8(src: str | Path, dst: str | Path, *, op_types: Sequence[str] = ("MatMul", "Gemm")) -> list[str]:
    """Dynamic int8 quantisation of the weights (activations stay float); CPU inference.

    Returns the external data file names of ``dst`` (empty when self-contained).
    """
    from onnxruntime.quantization import QuantType, quantize_dynamic

    src, dst = Path(src), Path(dst)
    large = sum(p.stat().st_size for p in src.parent.glob(src.name + "*")) > EXTERNAL_DATA_THRESHOLD
    quantize_dynamic(
        str(src),
        str(dst),
        weight_type=QuantType.QInt8,
        op_types_to_quantize=list(op_types),
        use_external_data_format=large,
    )
    if large:
        return sorted(p.name for p in dst.parent.glob(dst.name + "*") if p.name != dst.name)
    return []


def convert_fp16(
    src: str | Path, dst: str | Path, *, keep_fp32_nodes: Callable[[str], bool] | None = None
) -> list[str]:
    """Mixed-precision fp16 graph for CUDA.

    t5-v1_1 feed-forward outputs overflow fp16 (Hugging Face's T5 clamps its fp16 hidden states for this reason);
    Hugging Face keeps the ``wo`` projections in fp32 for that reason, and so does this conversion
    (``keep_fp32_nodes``), together with normalisation, softmax and residual additions.
    """
    import onnx
    from onnxruntime.transformers.float16 import convert_float_to_float16

    model = onnx.load(str(src), load_external_data=True)
    blocked_nodes = [n.name for n in model.graph.node if keep_fp32_nodes and keep_fp32_nodes(n.name)]
    converted = convert_float_to_float16(
        model,
        keep_io_types=True,
        op_block_list=["Pow", "ReduceMean", "Sqrt", "Reciprocal", "Div", "Softmax", "Sigmoid", "Add", "Erf", "Tanh"],
        node_block_list=blocked_nodes,
    )
    return save_onnx(converted, Path(dst))


def measure_parity(
    folder: str | Path, texts: Sequence[str], reference: np.ndarray, variants: dict[str, str]
) -> dict[str, Any]:
    """Score ``texts`` with every variant through the runtime and compare with ``reference``."""
    from nlgeval_runtime.boolqa import BoolQAScorer
    from nlgeval_runtime.errors import ScoringError
    from nlgeval_runtime.modelfolder import ModelFolder
    from nlgeval_runtime.session import create_session
    from nlgeval_runtime.session import cuda_listed

    folder_obj = ModelFolder.open(folder)
    figures: dict[str, Any] = {}
    session = None
    for precision in variants:
        session = None  # one graph in memory at a time: the previous variant's session goes before the next loads
        if precision == "fp16" and not cuda_listed():
            figures[precision] = {"max_abs_diff": None, "n": 0, "note": "not measured: no CUDA at export time"}
            continue
        device = "cuda" if precision == "fp16" else "cpu"
        try:
            session = create_session(folder_obj, device=device, precision=precision)
        except Exception as exc:  # e.g. CUDA listed but unusable
            figures[precision] = {"max_abs_diff": None, "n": 0, "note": f"not measured: {exc}"}
            continue
        try:
            scores = BoolQAScorer(folder_obj, session, batch_tokens=4096, max_batch_size=4).score(texts).scores
        except ScoringError as exc:  # an fp16 graph that overflows: record it, the export itself is fine
            figures[precision] = {"max_abs_diff": None, "n": len(texts), "provider": session.provider, "note": str(exc)}
            continue
        diff = np.abs(scores - reference)
        figures[precision] = {
            "max_abs_diff": float(diff.max()),
            "mean_abs_diff": float(diff.mean()),
            "n": len(texts),
            "provider": session.provider,
            "non_finite": int((~np.isfinite(scores)).sum()),
        }
    return figures
