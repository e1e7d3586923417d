"""``nlgeval fact-checks``: fit how a model folder's fact dimensions combine their signals, and declare it.

    nlgeval fact-checks runtime/nlgeval_runtime/embedded --data cnndm.jsonl.gz \\
        --antonyms antonyms_wordnet.jsonl.gz --articles 60 --declaration training/configs/embedded-dimensions.json

Claims are built from article/highlight pairs (the highlight supported; FactCC-style corruptions of it
not), scored by the folder's own fact dimension to read each claim's head support, lexical support and form,
and a logistic regression over the claims the explicit checks let through gives the ``checks`` block that is
written into the folder's ``nlgeval.json`` (and into each ``--declaration`` file). Human scores are never
used. Needs the training package (``pip install "pytest-nlgeval[train]"``).
"""

from __future__ import annotations

import json
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "fact-checks",
        help="fit how the fact dimensions combine head, lexical support and the explicit checks",
        description=__doc__.splitlines()[0],
    )
    p.add_argument("model", help="model folder whose fact dimensions are declared with unit 'claim'")
    p.add_argument("--data", required=True, help="CNN/DM-style JSONL(.gz) with article and highlights")
    p.add_argument("--antonyms", help="WordNet antonym JSONL(.gz) for the antonym corruption")
    p.add_argument("--articles", type=int, default=60, help="articles to build claims from (default 60)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cap", type=float, default=0.2, help="the most a claim that fails an explicit check scores")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--declaration", action="append", help="also write into this declaration JSON (repeatable)")
    p.add_argument("--json", help="write the fitted block and its report here")
    p.set_defaults(func=run)


def run(args) -> int:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.util.extras import require

    require("nlgeval_training", "the fact-checks fit (pseudo-labelled claims)")
    from nlgeval_training.data import read_jsonl
    from nlgeval_training.fact_checks import claim_signals, finite, fit_checks, pseudo_claims, write_checks
    from nlgeval_training.pseudo.summarization import load_antonyms

    from pytest_nlgeval.core.evaluator import Evaluator

    if not Path(args.model, "nlgeval.json").is_file():
        raise UsageError(f"{args.model} is not a model folder (no nlgeval.json); give the folder to write into")
    documents = list(read_jsonl(args.data))
    rows = pseudo_claims(documents, args.articles, args.seed, load_antonyms(args.antonyms) if args.antonyms else {})
    if not rows:
        raise UsageError(f"{args.data} gave no claims: it needs 'article' and 'highlights' fields")
    evaluator = Evaluator(args.model, cache=False, threads=args.threads)
    print(f"scoring {len(rows)} pseudo-labelled claims against their articles with {args.model}")
    signals = claim_signals(evaluator, rows)
    block, report = fit_checks(signals, cap=args.cap)
    if not finite(block):
        raise UsageError(f"the fit did not converge ({block}); use more articles")
    write_checks(block, [Path(args.model) / "nlgeval.json"] + [Path(p) for p in args.declaration or []])
    print(json.dumps({"checks": block, "report": report}, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps({"checks": block, "report": report}, indent=1) + "\n", encoding="utf-8")
    return 0
