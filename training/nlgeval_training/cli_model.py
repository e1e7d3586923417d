"""``nlgeval-train`` subcommands that work on trained models: evaluate, export, declare, card."""

from __future__ import annotations

import json
from pathlib import Path

from nlgeval_training.errors import UsageError


def _load_json(path: str, what: str):
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"{what} file {path!r} does not exist")
    return json.loads(p.read_text(encoding="utf-8"))


def cmd_evaluate(args) -> int:
    from nlgeval_training.evaluation import evaluate_folder, format_table

    fraction = None if args.all else args.fraction
    report = evaluate_folder(
        None if args.model in ("default", "embedded") else args.model,
        args.data,
        fraction=fraction,
        per_dimension=args.per_dimension or None,
        precision=args.precision,
        threads=args.threads,
    )
    print(f"model: {report['model']} ({report['precision']}, fingerprint {report['fingerprint_id']})")
    print(f"held-out records: {report['n']} ({report['truncated']} truncated), scored in {report['seconds']} s")
    print(format_table(report["metrics"]))
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(report, indent=1), encoding="utf-8")
    if args.min_accuracy is not None and report["metrics"]["mean"]["accuracy"] < args.min_accuracy:
        print(f"mean accuracy {report['metrics']['mean']['accuracy']:.3f} is below --min-accuracy {args.min_accuracy}")
        return 1
    return 0


def register_evaluate(sub) -> None:
    from nlgeval_runtime.session import PRECISIONS

    p = sub.add_parser("evaluate", help="held-out accuracy and AUC per dimension of a model folder (ONNX runtime)")
    p.add_argument("model", help="model folder, or 'default' for the embedded model")
    p.add_argument("--data", nargs="+", required=True, help="Boolean-QA record files (e.g. from `pseudo`)")
    p.add_argument("--fraction", type=float, default=0.1, help="held-out fraction of groups (as in training)")
    p.add_argument("--all", action="store_true", help="score every record, not only the held-out groups")
    p.add_argument("--per-dimension", type=int, default=500, help="records per dimension at most (0: all)")
    p.add_argument("--precision", default="auto", choices=PRECISIONS)
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--json", help="also write the report to this file (input of `card`)")
    p.add_argument("--min-accuracy", type=float, default=None, help="exit 1 if the mean accuracy is lower")
    p.set_defaults(func=cmd_evaluate)


def cmd_export(args) -> int:
    checkpoint = Path(args.checkpoint)
    if not checkpoint.is_dir():
        raise UsageError(f"checkpoint folder {args.checkpoint!r} does not exist")
    from nlgeval_training.model import CLASSIFIER_FILE

    if (checkpoint / CLASSIFIER_FILE).is_file() or (checkpoint / "head.pt").is_file():
        from nlgeval_training.encoder_classifier import export_encoder_classifier

        method = {} if args.int8_method is None else {"int8_method": args.int8_method}
        manifest = export_encoder_classifier(
            checkpoint,
            args.out,
            int8=args.int8,
            fp16=args.fp16,
            keep_fp32=not args.no_fp32,
            max_length=args.max_length,
            progress=lambda m: print(m, flush=True),
            **method,
        )
    else:
        from nlgeval_training.export import export_model

        if args.int8_method == "compressed":
            raise UsageError("--int8-method compressed is for encoder classifiers; T5 takes static or dynamic")
        method = {} if args.int8_method is None else {"int8_method": args.int8_method}
        manifest = export_model(
            checkpoint,
            args.out,
            int8=args.int8,
            fp16=args.fp16,
            keep_fp32=not args.no_fp32,
            max_length=args.max_length,
            progress=lambda m: print(m, flush=True),
            **method,
        )
    for precision, fig in manifest.get("export", {}).get("parity", {}).items():
        print(f"parity {precision}: max |diff| {fig.get('max_abs_diff')} on {fig.get('n')} inputs")
    print(f"wrote {args.out} ({', '.join(manifest['variants'].values())})")
    return 0


def register_export(sub) -> None:
    p = sub.add_parser("export", help="export a checkpoint to an ONNX model folder")
    p.add_argument("checkpoint")
    p.add_argument("out")
    p.add_argument("--int8", action="store_true", help="add an int8 graph (CPU)")
    p.add_argument(
        "--int8-method",
        choices=["static", "dynamic", "compressed"],
        default=None,
        help="static: activation scales calibrated at export, batch-invariant (T5 default); dynamic: "
        "scales per run, scored one input at a time; compressed: int8 embeddings and fp16-stored "
        "weights computed in fp32 (encoder-classifier default)",
    )
    p.add_argument("--fp16", action="store_true", help="add an fp16 graph (CUDA)")
    p.add_argument("--no-fp32", action="store_true", help="ship only the quantised graph(s) (smaller folder)")
    p.add_argument("--max-length", type=int, default=None)
    p.set_defaults(func=cmd_export)


def cmd_card(args) -> int:
    from nlgeval_training.card import write_card

    evaluation = _load_json(args.evaluation, "evaluation")
    training = [_load_json(path, "training") for path in args.training or []] or None
    if training and args.pseudo_stats:
        training[-1].update(_load_json(args.pseudo_stats, "pseudo-data statistics"))  # the pseudo-data phase comes last
    comparison = {}
    for item in args.comparison or []:
        mode, _, path = item.partition("=")
        if not path:
            raise UsageError(f"--comparison {item!r}: write MODE=HISTORY.json")
        comparison[mode] = _load_json(path, "comparison history")
    human = None
    if args.human:
        try:
            human = {"table": Path(args.human).read_text(encoding="utf-8").strip(), "command": args.human_command}
        except OSError as exc:
            raise UsageError(f"--human {args.human!r}: cannot read it ({exc.strerror or exc})") from None
    probe = _load_json(args.probe, "probe report") if args.probe else None
    text_evaluation = _load_json(args.text_evaluation, "text evaluation") if args.text_evaluation else None
    manifest = write_card(
        args.model,
        evaluation,
        training,
        comparison or None,
        args.command,
        args.title,
        human=human,
        probe=probe,
        probe_command=args.probe_command,
        text_evaluation=text_evaluation,
    )
    print(
        f"wrote {Path(args.model) / 'CARD.md'}; mean held-out accuracy "
        f"{manifest['card']['held_out']['metrics']['mean']['accuracy']}"
    )
    return 0


def register_card(sub) -> None:
    p = sub.add_parser("card", help="write CARD.md and the card figures of nlgeval.json")
    p.add_argument("model", help="model folder")
    p.add_argument("--evaluation", required=True, help="JSON written by `evaluate --json`")
    p.add_argument(
        "--training",
        action="append",
        help="training.json of the run that produced the checkpoint (repeat for several phases, in order)",
    )
    p.add_argument("--pseudo-stats", help="JSON with data_sources and records_per_dimension")
    p.add_argument("--comparison", action="append", help="MODE=history.json of a comparison run (repeatable)")
    p.add_argument("--command", help="the evaluate command line, printed on the card")
    p.add_argument(
        "--human",
        metavar="TABLE.md",
        help="agreement with human ratings: the markdown written by `nlgeval meta-eval --wide --format "
        "markdown --output TABLE.md`",
    )
    p.add_argument("--human-command", help="the meta-eval command line, printed with the table")
    p.add_argument("--probe", metavar="PROBE.json", help="liveness report written by `nlgeval probe --json`")
    p.add_argument("--probe-command", help="the probe command line, printed with the table")
    p.add_argument(
        "--text-evaluation",
        metavar="EVAL.json",
        help="`evaluate --json` of the text/ sub-folder model on its own pseudo data",
    )
    p.add_argument("--title", default="Boolean-QA evaluator")
    p.set_defaults(func=cmd_card)


def cmd_declare(args) -> int:
    """Write the ``dimensions`` declaration (docs/model-folder.md) into a model folder's manifest."""
    from nlgeval_runtime.errors import ModelFormatError
    from nlgeval_runtime.modelfolder import MANIFEST, ModelFolder

    declaration = _load_json(args.declaration, "declaration")
    declaration = {k: v for k, v in declaration.items() if not k.startswith("_")}  # "_comment" keys
    path = Path(args.model) / MANIFEST
    manifest = ModelFolder.open(args.model).manifest
    before = manifest.get("dimensions")
    manifest["dimensions"] = declaration
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    try:
        from nlgeval_runtime.modelfolder import _validate_manifest

        _validate_manifest(manifest, path)
        for sub in ModelFolder(Path(args.model), manifest).subfolders:
            ModelFolder.open(Path(args.model) / sub)
    except ModelFormatError as exc:
        tmp.unlink()
        raise UsageError(f"declare: {exc}") from None
    tmp.replace(path)
    served, refused = sorted(declaration.get("serves", {})), sorted(declaration.get("refuses", {}))
    print(
        f"{path}: serves {len(served)} dimension(s), refuses {len(refused)}"
        + ("" if before is None else " (replaced the earlier declaration)")
    )
    return 0


def register_declare(sub) -> None:
    p = sub.add_parser("declare", help="declare which dimensions a model folder serves, and how (nlgeval.json)")
    p.add_argument("model", help="model folder")
    p.add_argument("declaration", help="JSON with serves / refuses / zero_shot (docs/model-folder.md)")
    p.set_defaults(func=cmd_declare)


def cmd_calibrate_relevance(args) -> int:
    """Fit the cosine calibration of the rag relevances on pseudo-labelled BoolQ pairs and declare it."""
    from nlgeval_training.relevance import (
        RELEVANCE_DIMENSIONS,
        calibrate,
        calibrate_dialogue,
        calibrate_summaries,
        write_calibration,
    )

    targets = [Path(args.model) / "nlgeval.json"] + [Path(p) for p in args.declaration or []]
    out = {}
    try:
        if args.data:
            block, report = calibrate(args.model, args.data, n=args.questions, seed=args.seed, threads=args.threads)
            write_calibration({d: block for d in RELEVANCE_DIMENSIONS}, targets, "pseudo-labelled BoolQ question pairs")
            out["rag"] = {"calibration": block, "report": report}
        if args.dialogues:
            blocks, report = calibrate_dialogue(
                args.model, args.dialogues, n=args.questions, seed=args.seed, threads=args.threads
            )
            write_calibration(blocks, targets, "pseudo-labelled Topical-Chat pairs (never the rated replies)")
            out["dialogue"] = {"calibration": blocks, "report": report}
        if args.articles:
            blocks, report = calibrate_summaries(
                args.model, args.articles, args.paraphrases, n=args.questions, seed=args.seed, threads=args.threads
            )
            write_calibration(blocks, targets, "pseudo-labelled CNN/DM and MRPC pairs")
            out["summaries"] = {"calibration": blocks, "report": report}
    except ValueError as exc:
        raise UsageError(f"calibrate-relevance: {exc}") from None
    if not out:
        raise UsageError("calibrate-relevance: give --data (BoolQ, the rag relevances), --dialogues and/or --articles")
    print(json.dumps(out, indent=1))
    return 0


def register_calibrate_relevance(sub) -> None:
    p = sub.add_parser("calibrate-relevance", help="fit the cosine calibrations of the sentence encoder's dimensions")
    p.add_argument("model", help="model folder that declares the rag relevances with a 'similarity' scorer")
    p.add_argument("--data", help="the kit's boolqa.jsonl.gz (question, passage): the rag relevances")
    p.add_argument("--dialogues", help="the kit's topicalchat.jsonl.gz: dialogue coherence and groundedness")
    p.add_argument("--articles", help="the kit's cnndm.jsonl.gz: summarization relevance")
    p.add_argument("--paraphrases", help="with --articles, the kit's mrpc.jsonl.gz: data-to-text informativeness")
    p.add_argument("--questions", type=int, default=400)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--declaration", action="append", help="also write into this declaration JSON (repeatable)")
    p.set_defaults(func=cmd_calibrate_relevance)
