"""nlgeval-runtime: ONNX Runtime scoring for pytest-nlgeval (no torch).

Example::

    from nlgeval_runtime import load_boolqa
    scorer = load_boolqa("MingZhong/unieval-sum", device="auto")
    scorer.score(["question: Is this a fluent paragraph? </s> paragraph: The cat sat."]).scores
"""

from __future__ import annotations

from nlgeval_runtime._version import __version__

__all__ = [
    "__version__",
    "load_boolqa",
    "BoolQAScorer",
    "BoolQAResult",
    "ModelFolder",
    "resolve_model",
    "planned_fingerprint",
    "fingerprint_id",
    "load_causal_lm",
    "CausalLMScorer",
    "CausalLMResult",
    "load_claim_checker",
    "ClaimChecker",
]

_LAZY = {
    "load_boolqa": "nlgeval_runtime.boolqa",
    "BoolQAScorer": "nlgeval_runtime.boolqa",
    "BoolQAResult": "nlgeval_runtime.boolqa",
    "planned_fingerprint": "nlgeval_runtime.fingerprint",
    "fingerprint_id": "nlgeval_runtime.fingerprint",
    "ModelFolder": "nlgeval_runtime.modelfolder",
    "resolve_model": "nlgeval_runtime.resolve",
    "load_causal_lm": "nlgeval_runtime.causal_lm",
    "CausalLMScorer": "nlgeval_runtime.causal_lm",
    "CausalLMResult": "nlgeval_runtime.causal_lm",
    "load_claim_checker": "nlgeval_runtime.claim_support",
    "ClaimChecker": "nlgeval_runtime.claim_support",
}


def __getattr__(name: str):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'nlgeval_runtime' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
