"""``nlgeval meta-eval``: correlate metrics, or a Boolean-QA evaluator, with human judgments.

    nlgeval meta-eval summeval.json --metric rouge2:multi_ref=mean --metric bleu --level summary
    nlgeval meta-eval topicalchat.json --metric predict_scores --level sample --format markdown
    nlgeval meta-eval summeval_dev.jsonl.gz --model default --metric rouge2:multi_ref=mean \\
        --metric embedding_cosine:against=input --wide

Pearson, Spearman and Kendall per human dimension, with bootstrap intervals over documents; see
:mod:`pytest_nlgeval.metaeval` for the protocol. ``--model`` adds the evaluator's rows: each human
dimension against the evaluator's dimension of the same name, once with source windows and once
without (``--source-windows both``, the default).
"""

from __future__ import annotations

from pytest_nlgeval.scale.options import add_engine_arguments


def register(subparsers) -> None:
    from nlgeval_runtime.session import DEVICES, PRECISIONS

    p = subparsers.add_parser(
        "meta-eval",
        help="correlate metrics or an evaluator with human scores (Pearson, Spearman, Kendall)",
        description=(
            "Correlate metrics with the human scores of a UniEval-style JSON list of records "
            "{doc_id, system_id, source, reference|references, system_output, context, scores: {dim: value}} "
            "(.json, .jsonl, optionally .gz). A metric is a name of the metric bank, optionally with options "
            "(rouge2:multi_ref=mean), or predict_scores for scores stored in the records. --model adds a "
            "Boolean-QA evaluator (model folder, Hugging Face id, or 'default' for the embedded model)."
        ),
    )
    p.add_argument("data", help="JSON list (or .jsonl, optionally .gz) of rated records")
    p.add_argument(
        "--metric",
        "-m",
        action="append",
        dest="metrics",
        default=None,
        metavar="NAME[:OPT=VAL,...]",
        help="metric to evaluate (repeatable; several names may follow one --metric)",
        nargs="+",
    )
    p.add_argument(
        "--model",
        action="append",
        dest="models",
        default=None,
        metavar="PATH_OR_ID",
        help="evaluator to meta-evaluate: a model folder, a Hugging Face id, or 'default' (repeatable)",
    )
    p.add_argument(
        "--task",
        default="summarization",
        help="the evaluator's task whose dimensions match the human ones (default summarization)",
    )
    p.add_argument(
        "--source-windows",
        choices=("both", "auto", "off"),
        default="both",
        help="evaluator rows with source windows (auto), without (off), or both (default)",
    )
    p.add_argument(
        "--multi-ref",
        choices=("first", "mean", "max"),
        default="first",
        help="evaluator dimensions that read a reference (relevance): the first reference, as "
        "UniEval's protocol (default), or the mean/max over all references",
    )
    p.add_argument("--device", default="auto", choices=DEVICES, help="evaluator device")
    p.add_argument("--precision", default="auto", choices=PRECISIONS, help="evaluator precision")
    p.add_argument("--cache-dir", default=None, help="evaluator score cache folder (default .nlgeval-cache)")
    p.add_argument(
        "--level",
        choices=("sample", "summary", "system"),
        default="summary",
        help="sample: all outputs pooled; summary: per document, averaged; system: per-system means",
    )
    p.add_argument(
        "--dimension",
        "-d",
        action="append",
        dest="dimensions",
        metavar="DIM",
        help="human dimension to correlate with (repeatable; default: all in the first record)",
    )
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.add_argument(
        "--wide",
        action="store_true",
        help="one Spearman and one Kendall table, a row per metric and a column per dimension, "
        "with the average (table or markdown format)",
    )
    p.add_argument(
        "--bootstrap",
        type=int,
        default=1000,
        metavar="N",
        help="bootstrap replicates over documents (0 = no intervals; default 1000)",
    )
    p.add_argument("--confidence", type=float, default=0.95, help="interval coverage (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=1,
        help="processes that score each metric (CPU-bound metrics such as chrF and TER; default 1)",
    )
    p.add_argument("--output", "-o", help="also write the result here (format from --format)")
    add_engine_arguments(p)
    p.set_defaults(func=_run)


def _run(args) -> int:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.metaeval.protocol import _dimensions, meta_evaluate
    from pytest_nlgeval.metaeval.records import MetaEvalError, load_records
    from pytest_nlgeval.metaeval.values import evaluator_values
    from pytest_nlgeval.scale.options import evaluator_factory

    metrics: list = [m for group in (args.metrics or []) for m in group]
    if not metrics and not args.models:
        raise UsageError(
            "meta-eval: name what to evaluate with --metric NAME (see `nlgeval metrics list`) and/or --model PATH_OR_ID"
        )
    if args.wide and args.format == "json":
        raise UsageError("meta-eval: --wide lays out a table; use --format table or markdown with it")
    modes = ("auto", "off") if args.source_windows == "both" else (args.source_windows,)
    try:
        records = load_records(args.data)
        evaluated: list = []
        if args.models:
            dims = _dimensions(records, args.dimensions)
            options = {"device": args.device, "precision": args.precision, "cache_dir": args.cache_dir}
            if args.engine != "local":
                evaluator_class, engine_options = evaluator_factory(args)
                options.update(engine_options, evaluator_class=evaluator_class)
            for model in args.models:
                ref = None if model == "default" else model
                for mode in modes:
                    label = f"{model} ({'windows' if mode == 'auto' else 'no windows'})"
                    evaluated.append(
                        evaluator_values(
                            records,
                            ref,
                            dims,
                            task=args.task,
                            source_windows=mode,
                            label=label,
                            multi_ref=args.multi_ref,
                            evaluator_options=options,
                        )
                    )
        result = meta_evaluate(
            records,
            evaluated + metrics,
            args.level,
            dimensions=args.dimensions,
            n_bootstrap=args.bootstrap,
            confidence=args.confidence,
            seed=args.seed,
            source=args.data,
            jobs=args.jobs,
        )
    except MetaEvalError as exc:
        raise UsageError(str(exc)) from None
    if args.wide:
        text = result.to_wide(markdown=args.format == "markdown")
    else:
        text = {"table": result.to_table, "json": result.to_json, "markdown": result.to_markdown}[args.format]()
    print(text)
    if args.output:
        from pathlib import Path

        Path(args.output).write_text(text + "\n", encoding="utf-8")
    return 0
