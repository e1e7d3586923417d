"""``nlgeval probe``: check that every dimension of a model reacts to the damage it names.

    nlgeval probe default                      # the embedded model
    nlgeval probe models/unieval-sum --dimension summarization/fluency --json probe.json

For each dimension, pairs of (original, damaged) texts (:mod:`pytest_nlgeval.metaeval.liveness`): the
share of pairs where the damaged text scores lower (liveness) and the standard deviation of the scores.
Exit status 1 when a dimension the model serves is below ``--min-liveness`` or ``--min-sd``; dimensions
the model folder refuses are listed as refused and never fail.
"""

from __future__ import annotations


def register(subparsers) -> None:
    from nlgeval_runtime.session import DEVICES, PRECISIONS

    from pytest_nlgeval.metaeval.liveness import MIN_LIVENESS, MIN_SD

    p = subparsers.add_parser(
        "probe",
        help="check that a model's dimensions react to damaged text (liveness)",
        description=(
            "Score pairs of original and damaged texts (word salad, repeated spans, reordered or "
            "foreign sentences, changed numbers, replies of other dialogues) on every dimension, "
            "and fail when a dimension does not rank the damaged text lower."
        ),
    )
    p.add_argument("model", help="model folder, Hugging Face id, or 'default' for the embedded model")
    p.add_argument(
        "--dimension",
        "-d",
        action="append",
        dest="dimensions",
        metavar="TASK/DIM",
        help="probe only these dimensions (repeatable; default: all)",
    )
    p.add_argument("--texts", help="probe texts in the schema of pytest_nlgeval/metaeval/probe_texts.json")
    p.add_argument(
        "--min-liveness",
        type=float,
        default=MIN_LIVENESS,
        help=f"least share of pairs ranked correctly (default {MIN_LIVENESS})",
    )
    p.add_argument(
        "--min-sd",
        type=float,
        default=MIN_SD,
        help=f"least standard deviation of a dimension's scores (default {MIN_SD})",
    )
    p.add_argument(
        "--source-windows",
        choices=("auto", "off"),
        default="auto",
        help="source windows and sentence alignment as the model folder declares (auto) or off",
    )
    p.add_argument("--device", default="auto", choices=DEVICES)
    p.add_argument("--precision", default="auto", choices=PRECISIONS)
    p.add_argument("--json", dest="json_out", help="also write the full report (with wrong examples) here")
    p.add_argument("--seed", type=int, default=0, help="seed of the damage (default 0)")
    p.set_defaults(func=_run)


def _run(args) -> int:
    import json
    from pathlib import Path

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.metaeval.liveness import ProbeTextError, build_pairs, load_texts, probe

    for name, value in (("--min-liveness", args.min_liveness), ("--min-sd", args.min_sd)):
        if not 0 <= value <= 1:
            raise UsageError(f"probe: {name} must lie in [0, 1], got {value}")
    try:
        pairs = build_pairs(load_texts(args.texts), seed=args.seed)
    except ProbeTextError as exc:
        raise UsageError(f"probe: {exc}") from None
    if args.dimensions:
        unknown = [d for d in args.dimensions if d not in pairs]
        if unknown:
            raise UsageError(f"probe: no probe pairs for {unknown}; choose among {', '.join(sorted(pairs))}")
    model = None if args.model == "default" else args.model
    evaluator = Evaluator(
        model, device=args.device, precision=args.precision, cache=False, source_windows=args.source_windows
    )
    try:
        report = probe(evaluator, pairs, args.dimensions)
    finally:
        evaluator.close()
    print(
        f"liveness of {args.model} (fingerprint {report.fingerprint}): share of (original, damaged) pairs "
        f"where the damaged text scores lower, and the sd of all scores; gate: liveness >= "
        f"{args.min_liveness}, sd >= {args.min_sd}"
    )
    print(report.table(args.min_liveness, args.min_sd))
    if args.json_out:
        Path(args.json_out).write_text(
            json.dumps(report.to_dict(args.min_liveness, args.min_sd), indent=1) + "\n", encoding="utf-8"
        )
    failed = report.failures(args.min_liveness, args.min_sd)
    if failed:
        print(f"FAILED: {', '.join(r.dimension for r in failed)} do not react to the damage they name")
        return 1
    print("passed: every served dimension reacts")
    return 0
