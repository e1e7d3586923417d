"""Results dicts (docs/results-schema.md) built in memory for the baseline tests."""

from __future__ import annotations

import copy

FINGERPRINT = {
    "model": "tiny-t5",
    "files": {"model.onnx": "a" * 64, "tokenizer.json": "b" * 64},
    "provider": "CPUExecutionProvider",
    "precision": "fp32",
    "runtime_version": "0.1.0",
}


def make_results(
    suites: dict[tuple[str, str], list[float]],
    *,
    evaluator: str = "fp32aaaa",
    fingerprint: dict | None = None,
    operator: str = ">",
    texts: dict | None = None,
    tolerance: float | None = None,
    kind: str = "dimension",
) -> dict:
    """One check per score: ``suites[(task, name)][i]`` is case ``i`` of that dimension.

    The case's input text is ``texts[(task, name)][i]`` when given, else a text that depends only on the
    case, so two calls with the same layout have the same inputs.
    """
    checks = []
    for (task, name), scores in suites.items():
        for i, score in enumerate(scores):
            nodeid = f"tests/test_app.py::test_{name}[case{i}]"
            text = (texts or {}).get((task, name), [None] * len(scores))[i] or f"output number {i}."
            check = {
                "key": f"{nodeid}::{name}::0",
                "nodeid": nodeid,
                "kind": kind,
                "name": name,
                "task": task,
                "index": 0,
                "score": score,
                "operator": operator,
                "threshold": 0.1 if operator[0] == ">" else 0.9,
                "passed": True,
                "evaluator": evaluator,
                "details": {"inputs": {"output": text}},
            }
            if tolerance is not None:
                check["tolerance"] = tolerance
            checks.append(check)
    return {
        "schema": "pytest-nlgeval/results",
        "version": 1,
        "created": "2026-12-02T11:00:00+00:00",
        "environment": {"python": "3.11", "platform": "test", "packages": {}},
        "evaluators": {evaluator: copy.deepcopy(fingerprint or FINGERPRINT)},
        "checks": checks,
        "summary": {"checks": len(checks), "passed": len(checks), "failed": 0},
    }


def base_scores(n: int = 20, seed: int = 0) -> list[float]:
    """n scores spread over [0.3, 0.9], reproducible."""
    import random

    rng = random.Random(seed)
    return [round(0.3 + 0.6 * rng.random(), 4) for _ in range(n)]
