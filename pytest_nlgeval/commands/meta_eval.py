"""``nlgeval meta-eval``: correlate metrics with human judgments.

    nlgeval meta-eval summeval.json --metric rouge2:multi_ref=mean --metric bleu --level summary
    nlgeval meta-eval topicalchat.json --metric predict_scores --level sample --format markdown

Pearson, Spearman and Kendall per human dimension, with bootstrap intervals over documents; see
:mod:`pytest_nlgeval.metaeval` for the protocol.
"""
from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "meta-eval",
        help="correlate metrics with human scores (Pearson, Spearman, Kendall)",
        description=(
            "Correlate metrics with the human scores of a UniEval-style JSON list of records "
            "{doc_id, system_id, source, reference|references, system_output, context, scores: {dim: value}}. "
            "A metric is a name of the metric bank, optionally with options (rouge2:multi_ref=mean), "
            "or predict_scores for scores stored in the records."
        ),
    )
    p.add_argument("data", help="JSON list (or .jsonl) of rated records")
    p.add_argument("--metric", "-m", action="append", dest="metrics", required=True, metavar="NAME[:OPT=VAL,...]",
                   help="metric to evaluate (repeatable; several names may follow one --metric)", nargs="+")
    p.add_argument("--level", choices=("sample", "summary", "system"), default="summary",
                   help="sample: all outputs pooled; summary: per document, averaged; system: per-system means")
    p.add_argument("--dimension", "-d", action="append", dest="dimensions", metavar="DIM",
                   help="human dimension to correlate with (repeatable; default: all in the first record)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap replicates over documents (0 = no intervals; default 1000)")
    p.add_argument("--confidence", type=float, default=0.95, help="interval coverage (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--jobs", "-j", type=int, default=1,
                   help="processes that score each metric (CPU-bound metrics such as chrF and TER; default 1)")
    p.add_argument("--output", "-o", help="also write the result here (format from --format)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    from pytest_nlgeval.cli import UsageError
    from pytest_nlgeval.metaeval import MetaEvalError, load_records, meta_evaluate

    metrics = [m for group in args.metrics for m in group]
    try:
        records = load_records(args.data)
        result = meta_evaluate(records, metrics, args.level, dimensions=args.dimensions,
                               n_bootstrap=args.bootstrap, confidence=args.confidence, seed=args.seed,
                               source=args.data, jobs=args.jobs)
    except MetaEvalError as exc:
        raise UsageError(str(exc)) from None
    text = {"table": result.to_table, "json": result.to_json, "markdown": result.to_markdown}[args.format]()
    print(text)
    if args.output:
        from pathlib import Path

        Path(args.output).write_text(text + "\n", encoding="utf-8")
    return 0
