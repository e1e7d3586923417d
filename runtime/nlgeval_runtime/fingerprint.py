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

# The provider plan belongs to the sessions it predicts; it is re-exported here, where callers that
# fingerprint an evaluator look for it.
from nlgeval_runtime.session import check_options, choose_precision, planned_provider

__all__ = ["fingerprint_id", "fingerprint_of", "planned_fingerprint", "planned_provider"]


def fingerprint_of(folder: ModelFolder, model_ref: str, provider: str, precision: str) -> dict[str, Any]:
    """What makes two scores comparable: the exact files, the provider, the precision, the runtime, and
    the folder's declaration of the dimensions it answers and how (when it has one)."""
    declared = folder.dimensions_digest
    return {
        **({"dimensions": declared} if declared else {}),
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


def planned_fingerprint(
    folder: ModelFolder, model_ref: str, *, device: str = "auto", precision: str = "auto"
) -> dict[str, Any] | None:
    """The fingerprint an evaluator will have, computed without creating a session.

    Returns None when that cannot be known without one (device ``auto`` with CUDA listed). Uses the
    hashes recorded in the manifest; they are verified when a session is actually created.
    """
    check_options(device, precision)
    provider = planned_provider(device)
    if provider is None:
        return None
    chosen = choose_precision(folder, device, precision, on_cuda=provider.startswith("CUDA"))
    folder.graph_for(chosen)  # raises the clear error for a missing variant now
    return fingerprint_of(folder, model_ref, provider, chosen)
