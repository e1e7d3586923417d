"""``nlgeval score``: score every row of a JSONL (or JSON list) file on one or more dimensions.

    nlgeval score outputs.jsonl -d consistency -d fluency --source-field article -o scored.jsonl

Each output row is the input row plus ``"nlgeval": {"<dimension>": score, ...}``; the means per
dimension are printed at the end. Scores go through a score cache like the pytest plugin's, kept in
the user's cache folder (``~/.cache/pytest-nlgeval/scores`` on Linux) unless ``--cache-dir``/``--no-cache``.
"""

from __future__ import annotations


from pytest_nlgeval.scale.options import add_engine_arguments

_FIELDS = ("source", "reference", "context", "fact", "question")


def register(subparsers) -> None:
    from nlgeval_runtime.session import DEVICES, PRECISIONS

    p = subparsers.add_parser(
        "score",
        help="score the outputs in a JSONL file on UniEval-style dimensions",
        description="Score each row's output on the given dimensions; rows are JSON objects "
        "(one per line, or one JSON list).",
    )
    p.add_argument("data", metavar="DATA.jsonl")
    p.add_argument(
        "-d",
        "--dimension",
        action="append",
        required=True,
        help="dimension to score (repeatable), e.g. consistency, fluency, overall",
    )
    p.add_argument(
        "--task",
        default="summarization",
        help="summarization, dialogue, data2text, fact or rag (rag rows: question, context = the list of retrieved "
        "passages, or contexts, and reference for context_recall)",
    )
    p.add_argument("--output-field", default="output", help="field holding the generated text (default output)")
    for name in _FIELDS:
        p.add_argument(f"--{name}-field", default=name, help=f"field holding the {name} (default {name})")
    p.add_argument("-o", "--out", help="write the scored rows here (JSONL); default: no file, means only")
    p.add_argument("--model", default=None, help="model folder or Hugging Face id (default: embedded)")
    p.add_argument("--device", default="auto", choices=DEVICES)
    p.add_argument("--precision", default="auto", choices=PRECISIONS)
    p.add_argument("--batch-size", type=int, default=None, help="most inputs per ONNX Runtime call")
    p.add_argument(
        "--source-windows",
        default="auto",
        choices=("auto", "off"),
        help="auto: score long documents in overlapping sentence windows (consistency, groundedness); "
        "off: cut the tail as UniEval does (default auto)",
    )
    p.add_argument("--chunk", type=int, default=256, help="rows scored per batched call (progress granularity)")
    p.add_argument(
        "--cache-dir",
        default=None,
        help="score cache folder (default: the user's cache folder, ~/.cache/pytest-nlgeval/scores on Linux)",
    )
    p.add_argument("--no-cache", action="store_true", help="read and write no score cache")
    add_engine_arguments(p)
    p.set_defaults(func=run_score)


def read_rows(path: str) -> list[dict]:
    """Rows of a JSONL file or of a file holding one JSON list; errors name the line."""
    from nlgeval_runtime.jsonlines import read_rows as read_json_rows

    from pytest_nlgeval.errors import UsageError

    rows = [row for _, row in read_json_rows(path, error=UsageError)]
    if not rows:
        raise UsageError(f"{path} holds no rows")
    return rows


def run_score(args) -> int:
    import json
    import math

    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.core.dimensions import DimensionError, InputError
    from nlgeval_runtime.errors import NLGEvalRuntimeError

    from pytest_nlgeval.scale.options import evaluator_factory

    if args.chunk < 1:
        raise UsageError(f"--chunk must be >= 1, got {args.chunk}")
    if args.out:
        from pytest_nlgeval.util.files import output_problem

        problem = output_problem(args.out)  # before any scoring, not after it
        if problem is not None:
            raise UsageError(f"-o/--out: {problem}")
    rows = read_rows(args.data)
    missing = [i for i, row in enumerate(rows) if args.output_field not in row]
    if missing:
        raise UsageError(
            f"{args.data}: rows {missing[:10]} have no {args.output_field!r} field "
            "(choose the field with --output-field)"
        )
    evaluator_class, engine_options = evaluator_factory(args)
    evaluator = evaluator_class(
        args.model,
        device=args.device,
        precision=args.precision,
        batch_size=args.batch_size,
        cache=not args.no_cache,
        cache_dir=args.cache_dir,
        source_windows=args.source_windows,
        **engine_options,
    )
    from pytest_nlgeval.core.progress import progress

    evaluator.progress = None  # the command draws one bar over every chunk of every dimension
    columns = {name: getattr(args, f"{name}_field") for name in _FIELDS}
    results: dict[str, list[float]] = {}
    bar = progress(len(rows) * len(args.dimension), "nlgeval score", unit="check")
    for dimension in args.dimension:
        values: list[float] = []
        for start in range(0, len(rows), args.chunk):
            chunk = rows[start : start + args.chunk]
            inputs = {}
            for name, column in columns.items():
                if name == "context" and args.context_field == "context" and not any("context" in r for r in chunk):
                    column = "contexts"  # rag rows often name the retrieved passages so
                if any(column in row for row in chunk):
                    inputs[f"{name}s"] = [row.get(column) for row in chunk]
            try:
                values += evaluator.score_batch(
                    [row[args.output_field] for row in chunk], dimension, task=args.task, **inputs
                )
            except (DimensionError, InputError) as exc:
                raise UsageError(f"{args.data}, rows {start}-{start + len(chunk) - 1}: {exc}") from None
            except NLGEvalRuntimeError as exc:
                raise UsageError(str(exc)) from None
            bar.update(len(chunk))
        results[dimension] = values
    bar.close()
    if args.out:
        from pytest_nlgeval.util.files import write_output

        lines = []
        for i, row in enumerate(rows):
            scored = dict(row)
            scored["nlgeval"] = {**(row.get("nlgeval") or {}), **{d: results[d][i] for d in args.dimension}}
            lines.append(json.dumps(scored, ensure_ascii=False) + "\n")
        write_output(args.out, "".join(lines))
    stats = evaluator.stats
    print(
        f"{len(rows)} rows, task {args.task}, evaluator {evaluator.fingerprint_id} "
        f"({stats['scored']} inputs scored, {stats['cached']} from the cache)"
    )
    for dimension, values in results.items():
        mean = math.fsum(values) / len(values)
        print(f"  {dimension:<20} mean {mean:.4f}  min {min(values):.4f}  max {max(values):.4f}")
    if args.out:
        print(f"scored rows: {args.out}")
    return 0
