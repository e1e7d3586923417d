"""ONNX Runtime sessions: provider choice that is verified, precision, threads.

``onnxruntime-gpu`` lists ``CUDAExecutionProvider`` as available on machines without a GPU and then
silently runs on the CPU (a known behaviour of onnxruntime-gpu: read ``session.get_providers()``, never the available
list), so the provider a session really got is read back from ``session.get_providers()`` and never assumed.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nlgeval_runtime.errors import ModelFormatError, ProviderError
from nlgeval_runtime.modelfolder import PRECISIONS as STORED_PRECISIONS
from nlgeval_runtime.modelfolder import ModelFolder

DEVICES = ("auto", "cpu", "cuda")
#: the device and precision choices of every command and option (a model folder stores fp32, fp16, int8)
PRECISIONS = ("auto", *STORED_PRECISIONS)
CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
# onnxruntime builds published under other names than the CPU wheel ``onnxruntime``; any of them may list
# an accelerator provider, so with one of them installed only onnxruntime itself can answer.
_ACCELERATED_BUILDS = (
    "onnxruntime-gpu",
    "onnxruntime-directml",
    "onnxruntime-openvino",
    "onnxruntime-rocm",
    "onnxruntime-qnn",
    "onnxruntime-training",
    "ort-nightly-gpu",
)


def check_options(device: str, precision: str) -> None:
    if device not in DEVICES:
        raise ProviderError(f"device {device!r} is not one of {', '.join(DEVICES)}")
    if precision not in PRECISIONS:
        raise ProviderError(f"precision {precision!r} is not one of {', '.join(PRECISIONS)}")
    if device == "cpu" and precision == "fp16":
        raise ProviderError("precision 'fp16' runs on CUDA only; use device 'cuda' or precision 'fp32'/'int8'")
    if device == "cuda" and precision == "int8":
        raise ProviderError(
            "precision 'int8' (dynamic quantisation) runs on the CPU only; use device 'cpu' or precision 'fp16'"
        )


def cuda_listed() -> bool:
    import onnxruntime as ort

    return CUDA in ort.get_available_providers()


def choose_precision(folder: ModelFolder, device: str, precision: str, on_cuda: bool) -> str:
    """Resolve ``auto`` to the best graph the folder has for the device."""
    if precision != "auto":
        if precision == "fp16" and not on_cuda:
            raise ProviderError("precision 'fp16' needs a CUDA session; this session runs on the CPU")
        if precision == "int8" and on_cuda:
            raise ProviderError("precision 'int8' is a CPU graph; use device 'cpu' for it")
        return precision
    have = folder.variants
    order = ("fp16", "fp32") if on_cuda else ("fp32", "int8")
    for candidate in order:
        if candidate in have:
            return candidate
    raise ProviderError(
        f"model folder {str(folder.path)!r} has no graph usable on {'CUDA' if on_cuda else 'the CPU'} "
        f"(it has: {', '.join(sorted(have))})"
    )


def _only_cpu_build_installed() -> bool:
    """True when the installed onnxruntime is the CPU wheel (which never lists CUDA); read from metadata."""
    from importlib import metadata

    for name in _ACCELERATED_BUILDS:
        try:
            metadata.version(name)
            return False
        except metadata.PackageNotFoundError:
            continue
    try:
        metadata.version("onnxruntime")
        return True
    except metadata.PackageNotFoundError:
        return False


def planned_provider(device: str) -> str | None:
    """The provider a session would get, when that is certain without creating one; else None.

    Used to fingerprint an evaluator cheaply (a warm cache then never builds a session) and to verify
    only the files that session will read. The CPU wheel is recognised from its metadata, so that
    answer costs no onnxruntime import.

        >>> planned_provider("cpu")
        'CPUExecutionProvider'
    """
    if device == "cpu":
        return CPU
    if device == "auto" and _only_cpu_build_installed():
        return CPU
    if not cuda_listed():
        if device == "cuda":
            return None  # the session will fail with a clear error; let it
        return CPU
    return None  # CUDA is listed: only a real session tells whether it works


@dataclass
class Session:
    """An ONNX Runtime session together with what it really runs on."""

    inner: Any
    provider: str
    precision: str
    graph: Path

    def run(self, feeds: dict[str, Any]) -> list[Any]:
        return self.inner.run(None, feeds)

    @property
    def input_names(self) -> list[str]:
        return [i.name for i in self.inner.get_inputs()]


def create_session(
    folder: ModelFolder, *, device: str = "auto", precision: str = "auto", threads: int | None = None
) -> Session:
    """Build a session for ``folder``; the provider actually obtained is verified."""
    import onnxruntime as ort

    check_options(device, precision)
    want_cuda = device == "cuda" or (device == "auto" and CUDA in ort.get_available_providers())
    if device == "cuda" and CUDA not in ort.get_available_providers():
        raise ProviderError(
            "device 'cuda' was requested but this onnxruntime build has no CUDA provider; "
            "install the GPU build (`pip install \"nlgeval-runtime[gpu]\"` after `pip uninstall onnxruntime`) "
            "or use device 'cpu'"
        )
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads is not None:
        if threads < 1:
            raise ProviderError(f"threads must be >= 1, not {threads}")
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    options.log_severity_level = 3

    def build(providers: list[str], chosen_precision: str) -> Any:
        graph = folder.graph_for(chosen_precision)
        try:
            return graph, ort.InferenceSession(str(graph), sess_options=options, providers=providers)
        except Exception as exc:  # ONNX Runtime's own classes (InvalidProtobuf, ...) derive from Exception only
            if "onnxruntime" not in type(exc).__module__:
                raise
            raise ModelFormatError(f"{str(graph)!r} {not_a_graph(graph, exc)}") from None

    if want_cuda:
        chosen = choose_precision(folder, device, precision, on_cuda=True)
        graph, inner = build([CUDA, CPU], chosen)
        got = inner.get_providers()
        if got and got[0] == CUDA:
            return Session(inner, CUDA, chosen, graph)
        if device == "cuda":
            raise ProviderError(
                "device 'cuda' was requested but ONNX Runtime could not start its CUDA provider "
                f"(the session got {got}); check the GPU driver, CUDA and cuDNN libraries, or use device 'cpu'"
            )
        # auto: CUDA was listed but is not usable here (no GPU); fall back to the CPU graph.
        if precision == "fp16":
            raise ProviderError("precision 'fp16' needs CUDA, which is not usable on this machine")
    chosen = choose_precision(folder, device, precision, on_cuda=False)
    graph, inner = build([CPU], chosen)
    got = inner.get_providers()
    if not got or got[0] != CPU:  # pragma: no cover - ORT always has the CPU provider
        warnings.warn(f"ONNX Runtime session providers are {got}", RuntimeWarning, stacklevel=2)
    return Session(inner, CPU, chosen, graph)


def not_a_graph(path: Path, exc: Exception) -> str:
    """Why ONNX Runtime could not read the file ``path``, and what to do: what its first bytes say it is."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(512)
    except OSError as err:
        return f"cannot be read ({err})"
    text = head.lstrip().lower()
    if not head:
        return "is empty, not an ONNX graph: the download or export was cut short; download or export it again"
    if text.startswith(b"version https://git-lfs"):
        return (
            "is a git-lfs pointer, not an ONNX graph: the repository was cloned without its large files; run "
            "`git lfs pull` in it (or download the folder again)"
        )
    if text.startswith((b"<!doctype", b"<html", b"<?xml", b"<head", b"<body")):
        return (
            "is a web page (HTML), not an ONNX graph: the download saved an error or login page; download the "
            "folder again from its source"
        )
    first = " ".join(str(exc).split())[:200]
    return f"is not an ONNX graph ONNX Runtime can read ({type(exc).__name__}: {first}); export the folder again"


def verify_for(folder: ModelFolder, device: str, precision: str) -> None:
    """Verify the hashes of the files a session for (device, precision) will read, before it reads them.

    When the provider cannot be known without a session (CUDA listed), every graph's files are verified.
    """
    provider = planned_provider(device)
    if provider is None:
        names = sorted({n for p in folder.variants for n in folder.files_for(p)})
    else:
        chosen = choose_precision(folder, device, precision, on_cuda=provider.startswith("CUDA"))
        names = list(folder.files_for(chosen))
    folder.verify(names)
