"""Weightings of the fact dimensions' claim signals, compared on the development table without scoring again.

Reads the claims and signals that ``python benchmarks/facts_dev.py --features claims.json`` writes (each
claim's head support, lexical support and failed explicit checks) and prints, for each weighting
``b,w_head,w_lexical``, the Spearman correlation of the recombined consistency with the human scores on
SummEval (summary level), QAGS-CNN and QAGS-XSum dev (sample level). A claim that failed a check is capped at
0.2; an output's score is (average + weakest claim) / 2, as the dimension computes it.

    python benchmarks/fact_weights.py claims.json --weights -3.6561,1.716,4.3968 --weights -2,1,3
"""

from __future__ import annotations

import argparse
import json
import math


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def row_score(claims: list[dict], b: float, w_head: float, w_lexical: float, cap: float = 0.2) -> float:
    values = []
    for claim in claims:
        if claim.get("head") is None:
            continue
        z = b + w_head * _logit(claim["head"]) + w_lexical * claim["lexical"]
        value = 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))
        values.append(min(value, cap) if claim.get("mismatches") else value)
    return 1.0 if not values else (sum(values) / len(values) + min(values)) / 2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("features", help="the file facts_dev.py --features wrote")
    parser.add_argument("--weights", action="append", required=True, help="b,w_head,w_lexical (repeatable)")
    args = parser.parse_args(argv)

    from pytest_nlgeval.metaeval.statistics import correlate

    data = json.loads(open(args.features, encoding="utf-8").read())
    sets = [name for name in ("SummEval dev", "QAGS-CNN dev", "QAGS-XSum dev") if name in data]
    print("| weights (b, w_head, w_lexical) | " + " | ".join(sets) + " |")
    print("|---|" + "---|" * len(sets))
    for spec in args.weights:
        b, w_head, w_lexical = (float(x) for x in spec.split(","))
        cells = []
        for name in sets:
            rows = data[name]
            summary = name.startswith("SummEval")
            values = [row_score(r["claims"], b, w_head, w_lexical) for r in rows]
            c = correlate(
                values,
                [r["human"] for r in rows],
                "summary" if summary else "sample",
                doc_ids=[r["doc_id"] for r in rows] if summary else None,
                n_bootstrap=1000,
                seed=0,
            )
            lo, hi = c.intervals["spearman"]
            cells.append(f"{c.spearman:.3f} [{lo:.2f}, {hi:.2f}]")
        print(f"| {spec} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
