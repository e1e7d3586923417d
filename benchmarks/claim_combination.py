"""Combinations of a claim's signals and aggregations of an output's claims, compared on the six-domain outputs.

Reads what ``python benchmarks/domain_claims.py --json scored.json`` wrote (each claim's head support, lexical
support and failed explicit checks) and, without scoring again, recombines each claim's score as
``sigmoid(b + w_head * logit(head) + w_lexical * lexical)`` (capped at 0.2 when an explicit check fails) and each
output's score by an aggregation: ``mean``, ``mean_min`` ((average + weakest) / 2), ``min`` (the weakest claim),
``share`` (the share of claims at 0.5 or more) or ``softmin:T`` (a soft minimum, -T log mean exp(-s / T)); a claim
proven wrong by an explicit check bounds the output in every aggregation. For each, on the nine tenths (the held-out
tenth of benchmarks/domain_claims.py stays out), it prints the threshold that keeps false alarms at or under 10% in
every domain, the damaged outputs caught there, and the AUC of good above damaged on outputs of 8 or more claims.

    python benchmarks/claim_combination.py scored.json --weights -2,1,3 --weights 0,1,0 --aggregation mean_min min
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from domain_claims import auc, choose, held_out, rates  # noqa: E402

NOT_PROOF = ("support", "form")


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def claim_score(signal: dict, b: float, wh: float, wl: float, cap: float = 0.2) -> tuple[float, bool]:
    z = b + wh * _logit(signal["head"]) + wl * float(signal["lexical"])
    score = 1 / (1 + math.exp(-max(-50.0, min(50.0, z))))
    failed = signal.get("mismatches") or []
    proven = any(m.get("kind") not in NOT_PROOF for m in failed)
    return (min(score, cap) if failed else score), proven


def aggregate(scores: list[tuple[float, bool]], how: str) -> float:
    if not scores:
        return 1.0
    values = [s for s, _ in scores]
    mean, low = sum(values) / len(values), min(values)
    if how == "mean":
        out = mean
    elif how == "min":
        out = low
    elif how == "share":
        out = sum(v >= 0.5 for v in values) / len(values)
    elif how.startswith("softmin:"):
        t = float(how.split(":")[1])
        out = -t * math.log(sum(math.exp(-v / t) for v in values) / len(values))
    else:
        out = (mean + low) / 2
    proven = [s for s, p in scores if p]
    return min(out, min(proven)) if proven else out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scored")
    parser.add_argument("--weights", action="append", default=[], help="b,w_head,w_lexical (repeatable)")
    parser.add_argument("--aggregation", nargs="+", default=["mean", "mean_min", "min", "softmin:0.1", "share"])
    parser.add_argument("--task", default="summarization", choices=["summarization", "rag"])
    args = parser.parse_args(argv)
    rows = [r for r in json.loads(Path(args.scored).read_text()) if r["task"] == args.task and "score" in r]
    train = [r for r in rows if not held_out(r)]
    weights = [tuple(float(x) for x in w.split(",")) for w in args.weights] or [(-2.0, 1.0, 3.0)]
    print(f"{args.task}: {len(train)} outputs of the nine tenths")
    print("| b, w_head, w_lexical | aggregation | threshold | false alarms | caught | AUC 8+ claims | AUC all |")
    print("|---|---|---|---|---|---|---|")
    for b, wh, wl in weights:
        for how in args.aggregation:
            scored = []
            for r in train:
                signals = [s for s in r["signals"] if s and "head" in s]
                scored.append({**r, "score": aggregate([claim_score(s, b, wh, wl) for s in signals], how)})
            t = choose(scored)
            fa, caught, _, _ = rates(scored, t)
            long = [r for r in scored if r["claims"] >= 8]
            a8 = auc([r["score"] for r in long if r["good"]], [r["score"] for r in long if not r["good"]])
            a = auc([r["score"] for r in scored if r["good"]], [r["score"] for r in scored if not r["good"]])
            print(f"| {b:g}, {wh:g}, {wl:g} | {how} | {t} | {fa:.1%} | {caught:.1%} | {a8:.3f} | {a:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
