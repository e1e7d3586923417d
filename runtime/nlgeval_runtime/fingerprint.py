"""Evaluator fingerprints, computable without creating an ONNX Runtime session.

A fingerprint says what makes two scores comparable: the exact model files (their sha256 from the
manifest), the execution provider, the precision and the runtime version. Scorers compute it from their
session; a score cache needs it *before* any session exists, so that a warm run builds none. This module
imports neither numpy nor onnxruntime where the answer is certain without them.

    >>> folder = ModelFolder.open("models/unieval-sum")
    >>> fp = planned_fingerprint(folder, "models/unieval-sum", device="cpu")
    >>> fingerprint_id(fp)
    '3f2a9c01d2e4b5a6'
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from nlgeval_runtime._version import __version__
from nlgeval_runtime.modelfolder import ModelFolder

__all__ = ["fingerprint_id", "fingerprint_of", "planned_fingerprint", "planned_provider"]

# onnxruntime builds published under other names than the CPU wheel ``onnxruntime``; any of them may list
# an accelerator provider, so with one of them installed only onnxruntime itself can answer.
_ACCELERATED_BUILDS = ("onnxruntime-gpu", "onnxruntime-directml", "onnxruntime-openvino", "onnxruntime-rocm",
                       "onnxruntime-qnn", "onnxruntime-training", "ort-nightly-gpu")


def fingerprint_of(folder: ModelFolder, model_ref: str, provider: str, precision: str) -> dict[str, Any]:
    """What makes two scores comparable: the exact files, the provider, the precision, the runtime."""
    return {
        "model": model_ref,
        "kind": folder.kind,
        "architecture": folder.architecture,
        "files": folder.files_for(precision),
        "provider": provider,
        "precision": precision,
        "runtime_version": __version__,
    }


def fingerprint_id(fingerprint: dict[str, Any]) -> str:
    """Short stable id: the first 16 hex digits of the sha256 of the canonical JSON."""
    canonical = json.dumps(fingerprint, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


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
    """The provider a session would get, when that is certain without creating one; else None."""
    from nlgeval_runtime import session

    if device == "cpu":
        return session.CPU
    if device == "auto" and _only_cpu_build_installed():
        return session.CPU
    return session.planned_provider(device)


def planned_fingerprint(folder: ModelFolder, model_ref: str, *, device: str = "auto",
                        precision: str = "auto") -> dict[str, Any] | None:
    """The fingerprint an evaluator will have, computed without creating a session.

    Returns None when that cannot be known without one (device ``auto`` with CUDA listed). Uses the
    hashes recorded in the manifest; they are verified when a session is actually created.
    """
    from nlgeval_runtime.session import check_options, choose_precision

    check_options(device, precision)
    provider = planned_provider(device)
    if provider is None:
        return None
    chosen = choose_precision(folder, device, precision, on_cuda=provider.startswith("CUDA"))
    folder.graph_for(chosen)  # raises the clear error for a missing variant now
    return fingerprint_of(folder, model_ref, provider, chosen)
