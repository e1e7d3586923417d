"""NVIDIA Triton Inference Server configuration for an exported model folder.

Every exported folder carries a ``config.pbtxt`` for Triton's ONNX Runtime backend, written from the graph's own
inputs and outputs (``input_ids``, ``attention_mask`` -> ``p_yes``), so a fleet of CI runners can share one
server instead of each loading the model. Tokenisation stays with the client: the runtime's tokenizer and the
input conventions of ``nlgeval.json`` turn texts into the tensors Triton receives.

Lay out a model repository (``REPO/NAME/config.pbtxt``, ``REPO/NAME/1/<graph>``) and start Triton on it::

    python -m nlgeval_training.triton runs/export triton-models --name nlgeval-sum
    tritonserver --model-repository=triton-models

Dynamically quantised int8 graphs compute their activation scales over the whole batch, so a score would depend
on the requests Triton happens to batch together; their configuration leaves dynamic batching off.

A folder that routes dimensions to sub-folder models (the embedded default's ``text/`` Boolean-QA model and its
``embed/`` sentence encoder) is laid out with one Triton model per sub-folder, ``NAME.text`` and ``NAME.embed``,
so every dimension the folder serves is served; the main model's configuration names them in its
``nlgeval_subfolders`` parameter (``text=NAME.text;embed=NAME.embed``).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
from pathlib import Path
from typing import Any

__all__ = ["CONFIG_FILE", "triton_config", "write_triton_config", "write_triton_repository", "main"]

CONFIG_FILE = "config.pbtxt"
DEFAULT_MAX_BATCH_SIZE = 64

# ONNX TensorProto element types -> Triton data types
_TYPES = {
    1: "TYPE_FP32",
    2: "TYPE_UINT8",
    3: "TYPE_INT8",
    5: "TYPE_INT16",
    6: "TYPE_INT32",
    7: "TYPE_INT64",
    9: "TYPE_BOOL",
    10: "TYPE_FP16",
    11: "TYPE_FP64",
    16: "TYPE_BF16",
}


def _tensors(values, initializers: set[str]) -> list[tuple[str, str, list[int]]]:
    out = []
    for value in values:
        if value.name in initializers:
            continue
        tensor = value.type.tensor_type
        if tensor.elem_type not in _TYPES:
            raise ValueError(
                f"tensor {value.name!r} has ONNX element type {tensor.elem_type}, which Triton's "
                "ONNX backend configuration here does not map"
            )
        dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
        out.append((value.name, _TYPES[tensor.elem_type], dims))
    return out


def _tensor_block(kind: str, tensors, batched: bool) -> str:
    blocks = []
    for name, dtype, dims in tensors:
        shape = dims[1:] if batched else dims
        lines = [f'    name: "{name}"', f"    data_type: {dtype}"]
        if batched and not shape:
            # A tensor that is only the batch dimension (p_yes: [batch]) is declared [1] and reshaped to [].
            lines += ["    dims: [ 1 ]", "    reshape: { shape: [ ] }"]
        else:
            lines.append(f"    dims: [ {', '.join(str(d) for d in shape)} ]")
        blocks.append("  {\n" + "\n".join(lines) + "\n  }")
    return f"{kind} [\n" + ",\n".join(blocks) + "\n]"


def _safe_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-.") or "nlgeval"


def triton_config(
    folder: str | Path,
    *,
    precision: str | None = None,
    name: str | None = None,
    max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
    manifest: dict | None = None,
    parameters: dict[str, str] | None = None,
) -> str:
    """The ``config.pbtxt`` text serving ``folder``'s graph of ``precision`` (default: fp32, else the first
    variant the folder has) under ``name`` (default: the folder's name). ``manifest``: the folder's
    ``nlgeval.json`` content, when it is not written yet (the exporter).

    >>> print(triton_config("runs/export"))                                   # doctest: +SKIP
    name: "export"
    backend: "onnxruntime"
    ...
    """
    import onnx

    folder = Path(folder)
    if manifest is None:
        manifest = json.loads((folder / "nlgeval.json").read_text(encoding="utf-8"))
    variants = dict(manifest.get("variants") or {"fp32": "model.onnx"})
    if precision is None:
        precision = next((p for p in ("fp32", "int8", "fp16") if p in variants), next(iter(variants)))
    if precision not in variants:
        raise ValueError(f"{folder} has no {precision} graph (it has: {', '.join(sorted(variants))})")
    graph_file = variants[precision]
    graph = onnx.load(str(folder / graph_file), load_external_data=False).graph
    initializers = {init.name for init in graph.initializer}
    inputs, outputs = _tensors(graph.input, initializers), _tensors(graph.output, set())
    batched = max_batch_size > 0 and all(dims and dims[0] == -1 for _, _, dims in inputs + outputs)
    dynamic_int8 = (manifest.get("quantization") or {}).get(
        precision, "dynamic" if precision == "int8" else None
    ) == "dynamic"
    kind = {"int8": "KIND_CPU", "fp16": "KIND_GPU"}.get(precision, "KIND_AUTO")
    lines = [
        f'name: "{_safe_name(name or folder.name)}"',
        'backend: "onnxruntime"',
        f"max_batch_size: {max_batch_size if batched else 0}",
        f'default_model_filename: "{graph_file}"',
        _tensor_block("input", inputs, batched),
        _tensor_block("output", outputs, batched),
        f"instance_group [ {{ count: 1, kind: {kind} }} ]",
    ]
    if batched and not dynamic_int8:
        lines.append("dynamic_batching { max_queue_delay_microseconds: 1000 }")
    params = {"nlgeval_kind": manifest.get("kind", ""), "nlgeval_precision": precision, **(parameters or {})}
    for key, value in params.items():
        lines.append(f'parameters {{ key: "{key}" value: {{ string_value: "{value}" }} }}')
    return "\n".join(lines) + "\n"


def write_triton_config(folder: str | Path, **kwargs: Any) -> Path:
    """Write ``folder/config.pbtxt`` (see :func:`triton_config`); returns its path."""
    path = Path(folder) / CONFIG_FILE
    path.write_text(triton_config(folder, **kwargs), encoding="utf-8")
    return path


def write_triton_repository(
    folder: str | Path,
    repository: str | Path,
    *,
    name: str | None = None,
    precision: str | None = None,
    max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
) -> Path:
    """Lay out ``repository/NAME/config.pbtxt`` and ``repository/NAME/1/`` (the graph and its external data),
    and ``repository/NAME.SUB/`` for each sub-folder model the folder routes dimensions to (at the same
    precision where the sub-folder has it, else its own default)."""
    folder = Path(folder)
    name = _safe_name(name or folder.name)
    manifest = json.loads((folder / "nlgeval.json").read_text(encoding="utf-8"))
    serves = (manifest.get("dimensions") or {}).get("serves") or {}
    subfolders = sorted({spec["folder"] for spec in serves.values() if isinstance(spec, dict) and spec.get("folder")})
    routes = {sub: _safe_name(f"{name}.{sub}") for sub in subfolders}
    for sub, model in routes.items():
        if not (folder / sub / "nlgeval.json").is_file():
            raise ValueError(f"{folder} routes dimensions to the sub-folder {sub!r}, which holds no nlgeval.json")
        sub_manifest = json.loads((folder / sub / "nlgeval.json").read_text(encoding="utf-8"))
        sub_precision = precision if precision in (sub_manifest.get("variants") or {}) else None
        _lay_out(folder / sub, repository, model, sub_precision, max_batch_size, sub_manifest, None)
    extra = {"nlgeval_subfolders": ";".join(f"{sub}={model}" for sub, model in routes.items())} if routes else None
    return _lay_out(folder, repository, name, precision, max_batch_size, manifest, extra)


def _lay_out(folder: Path, repository, name: str, precision, max_batch_size: int, manifest: dict, parameters):
    text = triton_config(folder, precision=precision, name=name, max_batch_size=max_batch_size, parameters=parameters)
    found = re.search(r'default_model_filename: "([^"]+)"', text)
    assert found is not None  # triton_config always writes it
    graph_file = found.group(1)
    version = Path(repository) / name / "1"
    version.mkdir(parents=True, exist_ok=True)
    for file in [graph_file, *(manifest.get("external_data") or {}).get(graph_file, [])]:
        shutil.copy2(folder / file, version / file)
    (version.parent / CONFIG_FILE).write_text(text, encoding="utf-8")
    return version.parent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m nlgeval_training.triton",
        description="Lay out a Triton model repository for an exported model folder.",
    )
    parser.add_argument("folder", help="exported model folder (nlgeval.json, model.onnx, ...)")
    parser.add_argument("repository", help="Triton model repository to write into")
    parser.add_argument("--name", default=None, help="model name in the repository (default: the folder's name)")
    parser.add_argument(
        "--precision",
        choices=("fp32", "int8", "fp16"),
        default=None,
        help="which graph to serve (default: fp32, else the folder's first)",
    )
    parser.add_argument("--max-batch-size", type=int, default=DEFAULT_MAX_BATCH_SIZE)
    args = parser.parse_args(argv)
    out = write_triton_repository(
        args.folder, args.repository, name=args.name, precision=args.precision, max_batch_size=args.max_batch_size
    )
    print(f"wrote {out / CONFIG_FILE} and {out / '1'}/")
    for other in sorted(Path(args.repository).glob(f"{out.name}.*/{CONFIG_FILE}")):
        print(f"wrote {other} and {other.parent / '1'}/ (a sub-folder model)")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
