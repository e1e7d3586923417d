"""``nlgeval-train``: build pseudo and intermediate data, train, evaluate, export, write the card.

    nlgeval-train pseudo --config training/configs/embedded.toml
    nlgeval-train train --config training/configs/embedded.toml
    nlgeval-train evaluate MODEL_FOLDER --data pseudo.jsonl.gz
    nlgeval-train export CHECKPOINT OUT_FOLDER
    nlgeval-train card MODEL_FOLDER --history history.json

Every subcommand returns 0 on success, 2 on bad input (with a message naming it), 1 on other failures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nlgeval_training.errors import UsageError


def _parse_value(text: str):
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


# -- pseudo -----------------------------------------------------------------------------------------------
def _pseudo_options(args) -> dict:
    from nlgeval_training.config import load_config, resolve

    opts: dict = {
        "summarization": args.summarization or [],
        "dialogue": args.dialogue or [],
        "antonyms": args.antonyms,
        "dimensions": args.dimensions,
        "seed": args.seed,
        "limit": args.limit,
        "options": {},
        "out": args.out,
    }
    if args.config:
        base = Path(args.config).resolve().parent
        table = load_config(args.config).get("pseudo", {})
        for key in ("summarization", "dialogue"):
            if key in table and not opts[key]:
                opts[key] = [resolve(base, p) for p in table[key]]
        if table.get("antonyms") and not opts["antonyms"]:
            opts["antonyms"] = resolve(base, table["antonyms"])
        for key in ("dimensions", "limit", "out"):
            if table.get(key) is not None and opts[key] is None:
                opts[key] = resolve(base, table[key]) if key == "out" else table[key]
        if "seed" in table and args.seed is None:
            opts["seed"] = table["seed"]
        opts["options"] = table.get("options", {})
    if opts["seed"] is None:
        opts["seed"] = 0
    if not opts["out"]:
        raise UsageError("pseudo: say where to write the records with --out FILE.jsonl.gz (or out = ... in [pseudo])")
    return opts


def cmd_pseudo(args) -> int:
    from nlgeval_training.pseudo.build import build_pseudo_data, write_records

    opts = _pseudo_options(args)
    out = opts.pop("out")
    records = build_pseudo_data(progress=True, **opts)
    n = write_records(records, out)
    counts: dict[str, int] = {}
    for rec in records:
        key = f"{rec['task']}/{rec['dimension']}"
        counts[key] = counts.get(key, 0) + 1
    stats = {
        "data_sources": [Path(p).name for p in opts["summarization"] + opts["dialogue"]]
        + ([Path(opts["antonyms"]).name] if opts["antonyms"] else []),
        "records_per_dimension": counts,
        "seed": opts["seed"],
    }
    Path(str(out) + ".stats.json").write_text(json.dumps(stats, indent=1), encoding="utf-8")
    print(f"wrote {n} records to {out} (statistics: {out}.stats.json)")
    return 0


# -- intermediate -----------------------------------------------------------------------------------------
def cmd_intermediate(args) -> int:
    from nlgeval_training.intermediate import build_intermediate_data
    from nlgeval_training.pseudo.build import write_records

    sources = {}
    for item in args.source:
        if "=" not in item:
            raise UsageError(f"--source {item!r}: write TASK=FILE, e.g. nli=nli_snli.jsonl.gz")
        task, path = item.split("=", 1)
        sources[task] = path
    records = build_intermediate_data(sources, seed=args.seed, limit=args.limit, progress=True)
    n = write_records(records, args.out)
    print(f"wrote {n} records to {args.out}")
    return 0


def _claim_source(item: str, flag: str, formats: tuple[str, ...]) -> tuple[str, str, str]:
    parts = item.split("=", 1)
    if len(parts) != 2 or ":" not in parts[0]:
        raise UsageError(f"{flag} {item!r}: write NAME:FORMAT=FILE, e.g. mnli:binary=nli/mnli_binary.jsonl.gz")
    name, fmt = parts[0].split(":", 1)
    if fmt not in formats:
        raise UsageError(f"{flag} {item!r}: format {fmt!r} is not one of {formats}")
    return name, fmt, parts[1]


def _generated_pairs(args, sources: list[tuple[str, str, str]]) -> list[dict]:
    from nlgeval_training.claim_data import generated_pairs
    from nlgeval_training.claim_rules import KINDS

    kinds = [k.strip() for k in args.generate.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise UsageError(f"--generate {args.generate!r}: unknown kind(s) {unknown}; choose from {', '.join(KINDS)}")
    passages = []
    for item in args.passages:
        field, _, path = item.partition("=")
        if not field or not path:
            raise UsageError(f"--passages {item!r}: write FIELD=FILE, e.g. article=cnndm.jsonl.gz")
        passages.append((field, path))
    pairs = generated_pairs(sources, passages, kinds, args.generate_per_kind, seed=args.seed)
    print(f"generated {len(pairs)} rule-made pairs ({', '.join(kinds)})")
    return pairs


def cmd_claim_data(args) -> int:
    from nlgeval_training.claim_data import FORMATS, build_claim_data
    from nlgeval_training.pseudo.build import write_records

    sources = [_claim_source(item, "--source", FORMATS) for item in args.source]
    held_files = [_claim_source(item, "--held-out-file", FORMATS) for item in args.held_out_file]
    generated = None
    if args.generate:
        generated = _generated_pairs(args, sources)
    hold = set(args.hold_out_from) if args.hold_out_from else None
    train, held = build_claim_data(
        sources,
        held_out=args.held_out,
        hold_out_from=hold,
        held_out_files=held_files,
        generated=generated,
        seed=args.seed,
    )
    n = write_records(train, args.out)
    write_records(held, args.held_out_out)
    counts: dict[str, list[int]] = {}
    for rec in train:
        counts.setdefault(rec["dimension"], [0, 0])[rec["label"]] += 1
    for name, (no, yes) in sorted(counts.items()):
        print(f"{name}: {no + yes} records ({yes} supported)")
    print(f"wrote {n} records to {args.out} and {len(held)} held-out pairs to {args.held_out_out}")
    return 0


def register_claim_data(sub) -> None:
    p = sub.add_parser(
        "claim-data", help="human-labelled entailment pairs as claim-support records, with a held-out part"
    )
    p.add_argument(
        "--source",
        action="append",
        default=[],
        required=True,
        help="NAME:FORMAT=FILE, FORMAT binary (label 1 entailed / 0 not) or snli (entailment/neutral/contradiction)",
    )
    p.add_argument(
        "--held-out-file",
        action="append",
        default=[],
        help="NAME:FORMAT=FILE, a set's own held-out part, never trained on; its premises are held out everywhere",
    )
    p.add_argument(
        "--generate",
        default="",
        help="rule-made pair kinds from the sources' premises, comma-separated: swap,negation,quantity,state,span",
    )
    p.add_argument("--generate-per-kind", type=int, default=4000, help="at most this many pairs per kind (balanced)")
    p.add_argument("--passages", action="append", default=[], help="FIELD=FILE: more passages for --generate")
    p.add_argument("--held-out", type=float, default=0.1, help="share of each set's premises held out (default 0.1)")
    p.add_argument("--hold-out-from", nargs="*", help="the sets to hold out from (default: all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True, help="training records (.jsonl.gz)")
    p.add_argument("--held-out-out", required=True, help="held-out pairs (.jsonl.gz): set, premise, hypothesis, label")
    p.set_defaults(func=cmd_claim_data)


def cmd_swap_graph(args) -> int:
    from nlgeval_training.swap_graph import swap_graph

    training = []
    for path in args.training or []:
        try:
            training.append(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, json.JSONDecodeError) as exc:
            raise UsageError(f"--training {path!r}: cannot read it as JSON ({exc})") from None
    manifest = swap_graph(args.folder, args.export, training=training or None)
    print(f"{args.folder}: graph {', '.join(manifest['variants'].values())} from {args.export}")
    return 0


def register_swap_graph(sub) -> None:
    p = sub.add_parser("swap-graph", help="put a new export's graph into a model folder, keeping its dimensions")
    p.add_argument("folder", help="the model folder (e.g. runtime/nlgeval_runtime/embedded)")
    p.add_argument("export", help="the folder `nlgeval-train export` wrote")
    p.add_argument("--training", action="append", help="training.json of the run (repeatable), for the card")
    p.set_defaults(func=cmd_swap_graph)


# -- train ------------------------------------------------------------------------------------------------
def cmd_train(args) -> int:
    from nlgeval_training.config import load_config, resolve
    from nlgeval_training.trainer import TrainConfig, train

    table: dict = {}
    base = Path.cwd()
    if args.config:
        base = Path(args.config).resolve().parent
        table = dict(load_config(args.config).get("train", {}))
    for item in args.set or []:
        if "=" not in item:
            raise UsageError(f"--set {item!r}: write KEY=VALUE, e.g. --set batch_size=8")
        key, value = item.split("=", 1)
        table[key] = _parse_value(value)
    for key in ("train_data", "eval_data"):
        if key in table:
            table[key] = [resolve(base, p) for p in table[key]]
    # Paths in a config file are relative to the file; a path on the command line to the working directory.
    for key in ("output_dir", "init_checkpoint", "log_file"):
        if table.get(key):
            table[key] = resolve(base, table[key])
    if args.output_dir:
        table["output_dir"] = str(Path(args.output_dir).resolve())
    if "output_dir" not in table:
        raise UsageError("train: set output_dir in [train] or pass --output-dir")
    if table.get("encoder") not in (None, "minilm"):
        table["encoder"] = resolve(base, table["encoder"])
    try:
        config = TrainConfig.from_dict(table)
    except (TypeError, ValueError) as exc:
        raise UsageError(f"train: {exc}") from None
    history = train(config, resume=not args.no_resume)
    for entry in history:
        mean = entry["metrics"].get("mean", {})
        print(f"stage {entry['stage']} {entry['name']}: mean accuracy {mean.get('accuracy')} AUC {mean.get('auc')}")
    print(f"final checkpoint: {Path(config.output_dir) / 'final'}")
    return 0


def register_pseudo(sub) -> None:
    p = sub.add_parser("pseudo", help="build pseudo Boolean-QA data for the evaluation dimensions")
    p.add_argument("--config", help="TOML/YAML file with a [pseudo] table")
    p.add_argument("--summarization", nargs="*", help="article+summary JSONL(.gz) files")
    p.add_argument("--dialogue", nargs="*", help="Topical-Chat style JSONL(.gz) files")
    p.add_argument("--antonyms", help="WordNet antonym JSONL(.gz) (for consistency)")
    p.add_argument("--dimensions", nargs="*", help="task/dimension names (default: all eight)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--limit", type=int, default=None, help="records per dimension at most")
    p.add_argument("--out", help="output .jsonl.gz")
    p.set_defaults(func=cmd_pseudo)


def register_intermediate(sub) -> None:
    p = sub.add_parser("intermediate", help="convert NLI/paraphrase/opening-sentence/CoLA/BoolQ to Boolean QA")
    p.add_argument(
        "--source",
        action="append",
        default=[],
        required=True,
        help="TASK=FILE with TASK in nli, paraphrase, opening, cola, boolq (repeatable)",
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=int, default=None, help="records per task at most")
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_intermediate)


def register_train(sub) -> None:
    p = sub.add_parser("train", help="train from a config (continual with replay, or multitask)")
    p.add_argument("--config", help="TOML/YAML file with a [train] table")
    p.add_argument("--output-dir")
    p.add_argument("--set", action="append", help="override a [train] key: KEY=VALUE (JSON value)")
    p.add_argument("--no-resume", action="store_true", help="ignore an existing checkpoint in output_dir")
    p.set_defaults(func=cmd_train)


def cmd_default_lm(args) -> int:
    import json

    from nlgeval_training.data import DataError, excluded_prompts, split_stories
    from nlgeval_training.pseudo.build import write_records

    try:
        if args.lm_command == "train":
            from nlgeval_training.lm_trainer import train_default_lm

            report = train_default_lm(
                args.data,
                args.out,
                steps=args.steps,
                threads=args.threads,
                seed=args.seed,
                batch_size=args.batch_size,
                lr=args.lr,
                stories=args.stories,
                exclude_prompts=args.exclude_prompts,
                story_share=args.story_share,
                bank_out=args.bank_out,
                log=lambda m: print(m, flush=True),
            )
            print(json.dumps(report, indent=2, sort_keys=True))
        elif args.lm_command == "split-stories":
            exclude = excluded_prompts(args.exclude_prompts) if args.exclude_prompts else set()
            train, unseen = split_stories(args.stories, exclude)
            write_records(unseen, args.output)
            print(
                f"{args.output}: {len(unseen)} stories never trained on ({len(train)} trained on, "
                f"{len(exclude)} excluded prompts)"
            )
        elif args.lm_command == "card":
            from nlgeval_training.card import write_lm_card

            folder = Path(args.folder)
            report_file = folder / "training_report.json"
            if not report_file.is_file():
                raise UsageError(
                    f"{report_file} does not exist; the card is written from the report of "
                    "`nlgeval-train default-lm train`"
                )
            write_lm_card(folder, json.loads(report_file.read_text()))
            print((folder / "CARD.md").read_text())
        else:
            from nlgeval_training.lm_trainer import lm_report

            print(json.dumps(lm_report(args.folder, args.data, args.stories), indent=2, sort_keys=True))
    except DataError as exc:
        raise UsageError(str(exc)) from None
    return 0


def register_default_lm(sub) -> None:
    p = sub.add_parser(
        "default-lm", help="train, report on and card the small default causal LM of the trajectory checks"
    )
    lm = p.add_subparsers(dest="lm_command", required=True, metavar="ACTION")
    tr = lm.add_parser("train", help="train and export the default causal LM")
    tr.add_argument("--data", required=True, help="folder with the data kit's .jsonl.gz files (docs/data.md)")
    tr.add_argument("--out", required=True, help="model folder to write")
    tr.add_argument("--steps", type=int, default=4000, help="optimiser steps (default 4000)")
    tr.add_argument("--threads", type=int, default=2)
    tr.add_argument("--seed", type=int, default=0)
    tr.add_argument("--batch-size", type=int, default=8, help="sequences per step (default 8)")
    tr.add_argument("--lr", type=float, default=2e-3)
    tr.add_argument("--stories", default=None, help="human stories to learn from too (prompt/continuation rows)")
    tr.add_argument(
        "--exclude-prompts",
        default=None,
        help="rated texts whose prompts (or first sentences) must never be trained on",
    )
    tr.add_argument("--story-share", type=float, default=0.125, help="share of each batch drawn from stories")
    tr.add_argument("--bank-out", default=None, help="write the stories never trained on here (a bank to fit)")
    sp = lm.add_parser("split-stories", help="write the stories a training run with --stories never sees")
    sp.add_argument("stories", help="human stories (prompt/continuation rows)")
    sp.add_argument("--exclude-prompts", default=None, help="as for train")
    sp.add_argument("-o", "--output", required=True, help="where to write the unseen stories (a bank to fit)")
    cd = lm.add_parser("card", help="rewrite CARD.md of an exported folder from its training_report.json")
    cd.add_argument("folder")
    rp = lm.add_parser("report", help="print the figures of an exported folder (recomputes perplexity)")
    rp.add_argument("folder")
    rp.add_argument("--data", required=True)
    rp.add_argument("--stories", default=None, help="also the perplexity of these stories (prompt/continuation rows)")
    p.set_defaults(func=cmd_default_lm)


def build_parser() -> argparse.ArgumentParser:
    """``nlgeval-train``: every subcommand adds its parser through a ``register(sub)`` function that sets
    ``func`` (``args -> exit code``), as the subcommands of ``nlgeval`` do."""
    from nlgeval_training import cli_model

    parser = argparse.ArgumentParser(prog="nlgeval-train", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for register in (
        register_pseudo,
        register_intermediate,
        register_claim_data,
        register_swap_graph,
        register_train,
        cli_model.register_evaluate,
        cli_model.register_export,
        cli_model.register_declare,
        cli_model.register_calibrate_relevance,
        cli_model.register_card,
        register_default_lm,
    ):
        register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from nlgeval_training.t5_trace import ExportProcessError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except UsageError as exc:
        print(f"nlgeval-train: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, FileNotFoundError, ExportProcessError) as exc:
        print(f"nlgeval-train {args.command}: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
