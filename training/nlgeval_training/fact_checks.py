"""Fit how a fact dimension combines its signals, on pseudo-labelled claims (never on human scores).

A claim's score combines the Boolean-QA head's support and the claim's lexical support in the source;
explicit checks of numbers, dates, names, negation and form (the fluency head, which rejects word salad) cap
it (:mod:`nlgeval_runtime.factcheck`). The weights come from a logistic regression on claims built from
article/highlight pairs, FactCC-style (Kryscinski et al., EMNLP 2020):

- supported: a highlight sentence of the article (one claim);
- unsupported: the highlight with an antonym, a number, an entity or a negation changed (the training
  package's consistency corruptions), the highlight of another article, the highlight with its last third
  replaced by words of another article's highlight (an invented detail), and the highlight's words shuffled.

The explicit checks are not fitted: a claim they flag is capped whatever the weights, so the regression is
fitted on the claims they let through, where the weights decide. Its log-odds are then spread so that the
median supported claim scores 0.9 (the order of claims and the 0.5 boundary are unchanged), which puts a
supported claim above the documented threshold of 0.7. The fitted ``checks`` block is written into
a model folder's declaration (and the declaration file it was built from) for every fact dimension.

    nlgeval fact-checks runtime/nlgeval_runtime/embedded --data cnndm.jsonl.gz --articles 60 \
        --declaration training/configs/embedded-dimensions.json

(The command belongs to the plugin's ``nlgeval``, since scoring claims needs its evaluator; this module takes
the evaluator as an argument and imports nothing of the plugin.)
"""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

#: the dimensions whose declaration carries the fitted combination
FACT_DIMENSIONS = ("summarization/consistency", "fact/consistency", "rag/faithfulness")


def pseudo_claims(documents: list[dict], articles: int, seed: int, antonyms: dict | None = None) -> list[dict]:
    """``{"claim", "source", "label", "kind"}`` rows: each chosen article's single-claim highlights and their
    corruptions, in a seeded order."""
    from nlgeval_training.pseudo.summarization import entities, perturb_claim

    from nlgeval_runtime.claims import split_claims

    rng = random.Random(seed)
    chosen = [d for d in documents if d.get("highlights") and d.get("article")]
    rng.shuffle(chosen)
    chosen = chosen[:articles]
    pool = entities([d["article"] for d in chosen])
    rows: list[dict] = []
    for k, doc in enumerate(chosen):
        source = doc["article"]
        other = chosen[(k + 1 + rng.randrange(len(chosen) - 1)) % len(chosen)] if len(chosen) > 1 else None
        for highlight in [h.strip() for h in doc["highlights"].split("\n") if h.strip()]:
            claim = highlight if highlight.endswith((".", "!", "?")) else highlight + "."
            if len(split_claims(claim)[0]) != 1:
                continue  # a label for a whole sentence is not a label for each of its clauses
            rows.append({"claim": claim, "source": source, "label": 1, "kind": "highlight"})
            bad = perturb_claim(claim, rng, antonyms or {}, pool)
            if bad is not None:
                rows.append({"claim": bad[0], "source": source, "label": 0, "kind": bad[1]})
            words = claim.rstrip(".!?").split()
            if len(words) >= 5:
                shuffled = words[:]
                while shuffled == words:
                    rng.shuffle(shuffled)
                rows.append({"claim": " ".join(shuffled) + ".", "source": source, "label": 0, "kind": "salad"})
            if other is not None:
                foreign = [h.strip() for h in other["highlights"].split("\n") if h.strip()]
                foreign = [h for h in foreign if h not in doc["highlights"] and h not in source]
                if foreign:
                    text = rng.choice(foreign)
                    text = text if text.endswith((".", "!", "?")) else text + "."
                    rows.append({"claim": text, "source": source, "label": 0, "kind": "other article"})
                    # an invented detail (XSum's commonest error): the claim's tail replaced by words the
                    # article never says, the rest kept
                    donor = text.rstrip(".!?").split()
                    keep = max(3, len(words) - max(3, len(words) // 3))
                    if len(words) > keep and len(donor) >= 3:
                        tail = donor[-min(len(donor), len(words) - keep) :]
                        invented = " ".join(words[:keep] + tail) + "."
                        new_words = {w.lower().strip(",;") for w in tail} - set(source.lower().split())
                        if invented != claim and new_words:  # it must say something the article does not
                            rows.append({"claim": invented, "source": source, "label": 0, "kind": "invented detail"})
    return rows


def claim_signals(evaluator, rows: list[dict], batch: int = 32) -> list[dict]:
    """Each row's claim signals (head, lexical, form, mismatches) as the evaluator computes them."""
    out: list[dict] = []
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        scores = evaluator.evaluate([r["claim"] for r in chunk], "consistency", sources=[r["source"] for r in chunk])
        for row, score in zip(chunk, scores):
            units = score.units
            signal = (units[0].get("window") or {}).get("claim") if len(units) == 1 else None
            out.append({**row, "signals": signal})
    return out


def fit_logistic(x: list[list[float]], y: list[int], l2: float = 0.1, iterations: int = 50) -> list[float]:
    """Intercept and weights of an L2-regularised logistic regression with the two classes weighted equally
    (Newton's method; the intercept is not penalised). Deterministic: no random start."""
    import numpy as np

    X = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=float)])
    t = np.asarray(y, dtype=float)
    positives = max(1.0, float(t.sum()))
    negatives = max(1.0, float(len(t) - t.sum()))
    weight = np.where(t == 1, len(t) / (2 * positives), len(t) / (2 * negatives))
    w = np.zeros(X.shape[1])
    penalty = np.eye(X.shape[1]) * l2
    penalty[0, 0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w, -50, 50)))
        gradient = X.T @ (weight * (p - t)) + penalty @ w
        hessian = (X * (weight * p * (1 - p))[:, None]).T @ X + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.max(np.abs(step)) < 1e-8:
            break
    return [float(v) for v in w]


def auc(scores: list[float], labels: list[int]) -> float:
    """Area under the ROC curve (the share of positive/negative pairs ranked correctly, ties half)."""
    pos = [s for s, y in zip(scores, labels) if y == 1]
    neg = [s for s, y in zip(scores, labels) if y == 0]
    if not pos or not neg:
        return float("nan")
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def fit_checks(signals: list[dict], cap: float = 0.2, form_floor: float = 0.1, l2: float = 0.1) -> tuple[dict, dict]:
    """The ``checks`` block fitted on the rows the explicit checks let through, and a report of how the
    combination, the head alone and the checks do on all rows (half of the articles held out)."""
    from nlgeval_runtime.factcheck import FEATURES, FactChecks

    usable = [r for r in signals if r["signals"] is not None]
    train = [r for r in usable if _fold(r["source"]) == 0]
    held = [r for r in usable if _fold(r["source"]) == 1]

    def fit(rows):
        free = [r for r in rows if not r["signals"]["mismatches"]]
        x = [FactChecks.features(r["signals"]["head"], r["signals"]["lexical"]) for r in free]
        w = fit_logistic(x, [r["label"] for r in free], l2=l2)
        return FactChecks(w[0], tuple(w[1:]), cap, form_floor)

    def evaluate(checks, rows):
        scores = []
        for r in rows:
            s = r["signals"]
            value = checks.combine(s["head"], s["lexical"])
            scores.append(min(value, checks.cap) if s["mismatches"] else value)
        labels = [r["label"] for r in rows]
        accuracy = sum((v > 0.5) == (y == 1) for v, y in zip(scores, labels)) / len(rows)
        return {"auc": round(auc(scores, labels), 4), "accuracy": round(accuracy, 4), "n": len(rows)}

    held_checks = fit(train)
    final = _calibrated(fit(usable), usable)
    report = {
        "held_out": {
            "combined": evaluate(held_checks, held),
            "head_alone": {"auc": round(auc([r["signals"]["head"] for r in held], [r["label"] for r in held]), 4)},
            "flagged_by_checks": {
                kind: sum(1 for r in held if r["kind"] == kind and r["signals"]["mismatches"])
                / max(1, sum(1 for r in held if r["kind"] == kind))
                for kind in sorted({r["kind"] for r in held})
            },
        },
        "rows": len(usable),
        "by_kind": {kind: sum(1 for r in usable if r["kind"] == kind) for kind in sorted({r["kind"] for r in usable})},
    }
    block = {
        "version": 1,
        "intercept": round(final.intercept, 4),
        "weights": {name: round(w, 4) for name, w in zip(FEATURES, final.weights)},
        "cap": cap,
        "form_floor": form_floor,
        "fitted_on": f"{len(usable)} pseudo-labelled claims (nlgeval fact-checks)",
    }
    return block, report


#: where the median supported pseudo-claim lands on the score scale
SUPPORTED_MEDIAN = 0.9


def _calibrated(checks, rows: list[dict]):
    """``checks`` with its log-odds scaled so that the median supported claim that passes the explicit checks
    scores :data:`SUPPORTED_MEDIAN`, and the regression's decision boundary stays at 0.5.

    A logistic regression's probabilities answer "how likely is this pseudo claim supported"; a test
    threshold needs a supported claim to score clearly high (0.7 is the documented default). Scaling the
    log-odds keeps the order of every claim and the boundary, and only spreads the scale.
    """
    from nlgeval_runtime.factcheck import FactChecks

    z = [
        checks.intercept + sum(w * x for w, x in zip(checks.weights, FactChecks.features(s["head"], s["lexical"])))
        for s in (r["signals"] for r in rows if r["label"] == 1 and not r["signals"]["mismatches"])
    ]
    scale = median_spread(z)
    return FactChecks(checks.intercept * scale, tuple(w * scale for w in checks.weights), checks.cap, checks.form_floor)


def median_spread(positive_log_odds: list[float], target: float = SUPPORTED_MEDIAN) -> float:
    """The factor that puts the median of ``positive_log_odds`` (a fitted regression's log-odds on the positive
    pseudo examples) at probability ``target``; 1 (nothing to spread) when that median is not above the
    regression's boundary. Scaling log-odds keeps every example's order and the 0.5 boundary."""
    import statistics

    middle = statistics.median(positive_log_odds) if positive_log_odds else 0.0
    return math.log(target / (1 - target)) / middle if middle > 0 else 1.0


def _fold(source: str) -> int:
    import hashlib

    return hashlib.sha1(source.encode("utf-8")).digest()[0] % 2


def write_checks(block: dict, paths: list[Path]) -> None:
    """Put ``block`` as the ``checks`` of every fact dimension of each declaration (a model folder's
    nlgeval.json, or a declaration JSON file)."""
    for path in paths:
        data = json.loads(path.read_text(encoding="utf-8"))
        serves = (data.get("dimensions") or data)["serves"]
        for name in FACT_DIMENSIONS:
            if name in serves:
                serves[name].update({"unit": "claim", "checks": block})
        indent, sort = (2, True) if "dimensions" in data else (1, False)
        path.write_text(json.dumps(data, indent=indent, sort_keys=sort) + "\n", encoding="utf-8")


def finite(block: dict) -> bool:
    values = [block["intercept"], block["cap"], *block["weights"].values()]
    return all(math.isfinite(v) for v in values)
