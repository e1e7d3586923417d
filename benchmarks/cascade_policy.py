"""How a fact dimension's reading policy (the ``cascade`` of its declaration) trades model work for agreement.

Every policy is run through the real evaluator on the development table (SummEval, QAGS-CNN, QAGS-XSum dev, as
:mod:`facts_dev`) and the realistic cases (:mod:`realistic_facts`), with the model's answers remembered across
policies (``--memo``, a pickle of input text -> answer), so that the first policy pays for the model calls
and the others only for the Python around them. For each policy it prints the Spearman correlations with
their 95% intervals, the realistic cases' false alarms and catches at the documented thresholds, and the
model tokens a check would read (the cost the cascade saves), per set.

    python benchmarks/cascade_policy.py --data $NLGEVAL_DATA/human --memo runs/cascade-memo.pkl \\
        '{"first": 1, "stop": 1.01}' '{"first": 1, "stop": 0.9}' '{"first": 1, "stop": 0.8, "whole": 0.3}'

A policy is the JSON of a ``cascade`` block (with ``top_units`` too, optionally), or ``none`` (every candidate
read in one step). The first
policy should read everything (``{"first": 1, "stop": 1.01}``) so that the memo holds every answer.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

FACT_DIMENSIONS = ("summarization/consistency", "fact/consistency", "rag/faithfulness")


class Memo:
    """The Boolean-QA scorer's answers remembered by input text; counts the tokens a policy asks for."""

    def __init__(self, path: Path | None):
        self.path = path
        self.answers: dict[str, tuple[float, bool, int]] = {}
        if path is not None and path.is_file():
            self.answers = pickle.loads(path.read_bytes())
        self.asked_tokens = 0
        self.fresh = 0

    def install(self) -> None:
        import numpy as np
        from nlgeval_runtime import boolqa

        original = boolqa.BoolQAScorer.score
        memo = self

        def score(scorer, texts, *, progress=None):
            texts = list(texts)
            missing = [t for t in dict.fromkeys(texts) if t not in memo.answers]
            if missing:
                result = original(scorer, missing)
                for t, s, c, n in zip(missing, result.scores, result.truncated, result.n_tokens):
                    memo.answers[t] = (float(s), bool(c), int(n))
                memo.fresh += len(missing)
            rows = [memo.answers[t] for t in texts]
            memo.asked_tokens += sum(min(n, scorer.max_length) for _, _, n in rows)
            return boolqa.BoolQAResult(
                np.array([r[0] for r in rows], dtype=np.float64),
                np.array([r[1] for r in rows], dtype=bool),
                np.array([r[2] for r in rows], dtype=np.int64),
            )

        boolqa.BoolQAScorer.score = score

    def save(self) -> None:
        if self.path is not None and self.fresh:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_bytes(pickle.dumps(self.answers))
            tmp.replace(self.path)


def set_policy(evaluator, policy) -> None:
    """The fact dimensions' ``cascade`` (None: none), and their ``top_units`` where the policy names it."""
    serves = evaluator.folder.dimensions["serves"]
    policy = dict(policy or {})
    top = policy.pop("top_units", None)
    for key in FACT_DIMENSIONS:
        if key in serves:
            if not policy:
                serves[key].pop("cascade", None)
            else:
                serves[key]["cascade"] = policy
            if top is not None:
                serves[key]["top_units"] = int(top)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("policies", nargs="+", help="JSON of a cascade block, or 'none'")
    parser.add_argument("--data", required=True, help="the folder of the human dev splits")
    parser.add_argument("--memo", type=Path, help="remember the model's answers here across runs")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--no-realistic", action="store_true", help="the development table only")
    args = parser.parse_args(argv)

    import facts_dev
    import realistic_facts

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.core.thresholds import recommended_threshold

    memo = Memo(args.memo)
    memo.install()
    evaluator = Evaluator(cache=False, threads=args.threads)
    sets = [(name, facts_dev.read_rows(Path(args.data) / f), level) for name, f, level in facts_dev.SETS]
    bars = {
        "consistency": recommended_threshold("consistency", "summarization"),
        "rag faithfulness": recommended_threshold("faithfulness", "rag"),
    }
    print(
        "| policy | "
        + " | ".join(f"{n} | tokens/check" for n, _, _ in sets)
        + " | realistic consistency FA, caught | rag faithfulness FA, caught | s |"
    )
    print("|---|" + "---|---|" * len(sets) + "---|---|---|")
    for text in args.policies:
        policy = None if text == "none" else json.loads(text)
        set_policy(evaluator, policy)
        started = time.perf_counter()
        cells = []
        for name, rows, level in sets:
            asked = memo.asked_tokens
            values, _ = facts_dev.score_set(evaluator, rows)
            human = [r["scores"]["consistency"] for r in rows]
            docs = [r["doc_id"] for r in rows] if level == "summary" else None
            cells.append(facts_dev.cell(facts_dev.correlation(values, human, level, docs)))
            cells.append(f"{(memo.asked_tokens - asked) / len(rows):.0f}")
            memo.save()
        if not args.no_realistic:
            rows = [
                r
                for f in realistic_facts.FILES
                for r in realistic_facts.score_cases(evaluator, realistic_facts.DATA / f)
                if r["dimension"] in bars
            ]
            for dimension, bar in bars.items():
                mine = [r for r in rows if r["dimension"] == dimension]
                fa, caught, n_good, n_bad = realistic_facts.rates(mine, bar)
                cells.append(f"{round(fa * n_good)}/{n_good}, {round(caught * n_bad)}/{n_bad}")
            memo.save()
        cells.append(f"{time.perf_counter() - started:.0f}")
        print(f"| {text} | " + " | ".join(cells) + " |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
