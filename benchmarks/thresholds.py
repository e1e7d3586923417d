"""Each dimension's recommended threshold: its false-alarm rate on good outputs and catch rate on damaged ones.

Good outputs and their damaged copies come from development text only: the liveness probes of
``nlgeval probe`` built from SummEval development articles and references and held-out Topical-Chat
dialogues (``benchmarks/liveness_dev.py``), the packaged probe texts (data-to-text and rag), and for the fact
dimensions the realistic cases of tests/data (``benchmarks/realistic_facts.py``). For each dimension and each
threshold t on a grid of 0.05:

- false alarms: the share of good outputs scoring t or less (a correct output failing ``score > t`` in CI);
  (for the fact dimensions the good outputs are the packaged probe texts and the realistic cases' correct
  outputs: development references are not all faithful to their articles);
- caught: the share of damaged outputs scoring t or less (a broken output failing CI; a claim capped at 0.2
  by an explicit check fails ``> 0.2``).

The threshold printed as chosen is the highest t whose false-alarm rate stays at most ``--max-false-alarms``
(default 10%): the strictest gate that passes nine good outputs in ten. With ``--domains`` (the scored file of
``benchmarks/domain_claims.py --json``: good and one-edit damaged summaries and answers in six domains) the
fact dimensions' rule holds on every one of those domains too, and their rates at the chosen and the documented
threshold are printed per domain. The table in pytest_nlgeval/core/thresholds.py records what this printed.

    python benchmarks/thresholds.py --data ../data-kit [--model default] [--domains scored.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

GRID = [round(0.05 * k, 2) for k in range(1, 20)]
FACT_DIMENSIONS = ("summarization/consistency", "fact/consistency", "rag/faithfulness")


def choose(good: list[float], bad: list[float], max_false_alarms: float) -> tuple[float, float, float]:
    """(threshold, false-alarm rate, catch rate) of the strictest grid threshold within the false-alarm budget."""
    best = (GRID[0], 0.0, 0.0)
    for t in GRID:
        fa, caught = rates_at(good, bad, t)
        if fa <= max_false_alarms:
            best = (t, fa, caught)
    return best


def rates_at(good: list[float], bad: list[float], t: float) -> tuple[float, float]:
    return sum(1 for g in good if g <= t) / len(good), sum(1 for b in bad if b <= t) / len(bad)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default=os.environ.get("NLGEVAL_DATA", "data-kit"))
    parser.add_argument("--model", default="default")
    parser.add_argument("--max-false-alarms", type=float, default=0.10)
    parser.add_argument("--dimension", action="append", help="only these task/dimension keys")
    parser.add_argument("--grid", action="store_true", help="also print both rates at every grid threshold")
    parser.add_argument("--domains", help="benchmarks/domain_claims.py --json output: the rule on every domain too")
    args = parser.parse_args(argv)
    domains = _domain_scores(args.domains) if args.domains else {}

    from liveness_dev import build_texts
    from realistic_facts import DATA, FILES, score_cases

    from pytest_nlgeval.core.dimensions import DimensionNotServedError
    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.core.thresholds import THRESHOLDS
    from pytest_nlgeval.metaeval.liveness import _score, build_pairs, load_texts

    data = Path(args.data)
    texts = build_texts(str(data / "human" / "summeval_dev.jsonl.gz"), str(data / "topicalchat.jsonl.gz"))
    texts["rag"] = load_texts()["rag"]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(texts, handle)
    pairs = build_pairs(texts)
    # Development references are not all faithful to their articles (CNN/DM highlights add facts the article
    # does not state), so the fact dimensions' good outputs are the packaged probe texts, written to be
    # supported, and the realistic cases
    packaged = build_pairs()
    for key in FACT_DIMENSIONS:
        if key in packaged:
            pairs[key] = packaged[key]
    evaluator = Evaluator(None if args.model == "default" else args.model, cache=False)
    realistic = [r for name in FILES for r in score_cases(evaluator, DATA / name)]
    from_cases = {
        "summarization/consistency": "consistency",
        "rag/faithfulness": "rag faithfulness",
        "dialogue/groundedness": "dialogue groundedness",
    }
    print(
        "| dimension | good | damaged | chosen threshold | false alarms | caught | documented | false alarms | caught |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for key in sorted(set(pairs) | set(from_cases)):
        if args.dimension and key not in args.dimension:
            continue
        task, name = key.split("/")
        good: list[float] = []
        bad: list[float] = []
        try:
            if key in pairs:
                good += _score(evaluator, [p.good for p in pairs[key]], name, task)
                bad += _score(evaluator, [p.bad for p in pairs[key]], name, task)
        except DimensionNotServedError:
            continue
        if key in from_cases:
            mine = [r for r in realistic if r["dimension"] == from_cases[key]]
            good += [r["score"] for r in mine if r["correct"]]
            bad += [r["score"] for r in mine if not r["correct"]]
        if not good or not bad:
            continue
        t, fa, caught = choose(good, bad, args.max_false_alarms)
        mine_by_domain = domains.get(key, {})
        if mine_by_domain:  # the strictest threshold that keeps the rule on the pool and on every domain
            ok = [
                g
                for g in GRID
                if g <= t and all(rates_at(dg, db, g)[0] <= args.max_false_alarms for dg, db in mine_by_domain.values())
            ]
            t = max(ok) if ok else GRID[0]
            fa, caught = rates_at(good, bad, t)
        documented = THRESHOLDS.get(key)
        doc = "-"
        if documented is not None:
            dfa, dcaught = rates_at(good, bad, documented.value)
            doc = f"{documented.value} | {dfa:.0%} | {dcaught:.0%}"
        else:
            doc = "- | - | -"
        print(f"| {key} | {len(good)} | {len(bad)} | {t} | {fa:.0%} | {caught:.0%} | {doc} |", flush=True)
        for domain, (dg, db) in sorted(mine_by_domain.items()):
            at = [t] + ([documented.value] if documented is not None and documented.value != t else [])
            rates = ", ".join(f"at {v}: {rates_at(dg, db, v)[0]:.0%} / {rates_at(dg, db, v)[1]:.0%}" for v in at)
            print(f"|   {domain} ({len(dg)} good / {len(db)} damaged) | | | | {rates} | | | | |")
        if args.grid:
            for g in GRID:
                gfa, gcaught = rates_at(good, bad, g)
                print(f"|   at {g} | | | | {gfa:.0%} | {gcaught:.0%} | | | |")
    budget = f"{args.max_false_alarms:.0%}"
    print(f"\nmodel {args.model}, evaluator {evaluator.fingerprint_id}; chosen: false alarms <= {budget}")
    return 0


def _domain_scores(path: str) -> dict[str, dict[str, tuple[list[float], list[float]]]]:
    """``{task/dimension: {domain: (good scores, damaged scores)}}`` from a domain_claims.py ``--json`` file."""
    tasks = {"summarization": "summarization/consistency", "rag": "rag/faithfulness"}
    out: dict[str, dict[str, tuple[list[float], list[float]]]] = {}
    for row in json.loads(Path(path).read_text(encoding="utf-8")):
        key = tasks.get(row["task"])
        if key is None:
            continue
        good, bad = out.setdefault(key, {}).setdefault(row["domain"], ([], []))
        (good if str(row["good"]) == "True" else bad).append(float(row["score"]))
    return out


if __name__ == "__main__":
    raise SystemExit(main())
