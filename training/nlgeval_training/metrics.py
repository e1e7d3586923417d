"""Held-out metrics of a Boolean-QA evaluator: accuracy at 0.5 and ROC AUC (Mann-Whitney U / (n_pos n_neg)).

>>> roc_auc([0.9, 0.8, 0.3, 0.1], [1, 1, 0, 0])
1.0
>>> accuracy([0.9, 0.4], [1, 1])
0.5
"""

from __future__ import annotations

from typing import Any

from collections import defaultdict


def accuracy(scores: list[float], labels: list[int], threshold: float = 0.5) -> float:
    if not scores:
        raise ValueError("accuracy of an empty set is undefined")
    return sum((s >= threshold) == bool(y) for s, y in zip(scores, labels)) / len(scores)


def roc_auc(scores: list[float], labels: list[int]) -> float | None:
    """Probability that a random positive outscores a random negative (ties count 1/2); None if one class."""
    pairs = sorted(zip(scores, labels))
    n_pos = sum(1 for _, y in pairs if y)
    n_neg = len(pairs) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    # Average ranks over ties, then the rank-sum form of the Mann-Whitney statistic.
    rank_sum, i = 0.0, 0
    while i < len(pairs):
        j = i
        while j < len(pairs) and pairs[j][0] == pairs[i][0]:
            j += 1
        avg_rank = (i + 1 + j) / 2
        rank_sum += avg_rank * sum(1 for k in range(i, j) if pairs[k][1])
        i = j
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


def per_dimension(records: list[dict], scores: list[float]) -> dict[str, dict[str, float]]:
    """``{"task/dimension": {"accuracy", "auc", "n"}}`` plus ``"mean"`` (unweighted over dimensions)."""
    groups: dict[str, tuple[list, list]] = defaultdict(lambda: ([], []))
    for rec, s in zip(records, scores):
        key = f"{rec['task']}/{rec['dimension']}"
        groups[key][0].append(float(s))
        groups[key][1].append(int(rec["label"]))
    out: dict[str, dict[str, Any]] = {}
    for key in sorted(groups):
        values, y = groups[key]
        auc = roc_auc(values, y)
        out[key] = {
            "accuracy": round(accuracy(values, y), 4),
            "auc": None if auc is None else round(auc, 4),
            "n": len(values),
        }
    if out:
        aucs = [v["auc"] for v in out.values() if v["auc"] is not None]
        out["mean"] = {
            "accuracy": round(sum(v["accuracy"] for v in out.values()) / len(out), 4),
            "auc": round(sum(aucs) / len(aucs), 4) if aucs else None,
            "n": sum(v["n"] for v in out.values()),
        }
    return out
