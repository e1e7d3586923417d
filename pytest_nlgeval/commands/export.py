"""``nlgeval export`` and ``nlgeval prepare``: turn a checkpoint into a model folder the runtime serves.

A fact checker (MiniCheck's RoBERTa, DeBERTa-v3 and Flan-T5 models, Vectara's HHEM-2.1-Open) becomes a claim-support
folder that ``--nlgeval-fact-checker`` points the fact dimensions at (docs/checkers.md)::

    nlgeval export lytang/MiniCheck-Flan-T5-Large models/minicheck-ft5 --int8
"""

from __future__ import annotations

import sys
import time


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "export",
        help="export a Hugging Face checkpoint (id or folder) to an ONNX model folder",
        description="Export a Boolean-QA checkpoint (e.g. MingZhong/unieval-sum) to OUT: "
        "model.onnx, tokenizer.json and nlgeval.json with parity figures.",
    )
    p.add_argument("model", metavar="MODEL_ID_OR_PATH")
    p.add_argument("out", metavar="OUT_DIR")
    p.add_argument(
        "--int8",
        action="store_true",
        help="also write an int8 graph (CPU; T5: static, activation scales calibrated at export)",
    )
    p.add_argument("--fp16", action="store_true", help="also write a mixed-precision fp16 graph (CUDA)")
    p.add_argument(
        "--no-fp32",
        action="store_true",
        help="ship only the --int8/--fp16 graph(s): a smaller folder (fp32 parity is still measured)",
    )
    p.add_argument("--max-length", type=int, default=None, help="max input tokens (default 1024, as UniEval)")
    p.add_argument(
        "--checker",
        default=None,
        choices=("minicheck-roberta-large", "minicheck-deberta-v3-large", "minicheck-flan-t5-large", "hhem-2.1-open"),
        help="export a fact checker as its authors read it (default: recognised from the id, the folder name or "
        "an HHEM config.json); the folder serves --nlgeval-fact-checker",
    )
    p.add_argument(
        "--foundation",
        default=None,
        metavar="ID_OR_PATH",
        help="HHEM-2.1-Open: its flan-t5-base foundation (configuration and tokenizer; default: the one its "
        "configuration names, the HHEMv2Config class attribute in configuration_hhem_v2.py, google/flan-t5-base)",
    )
    p.set_defaults(func=run_export)

    q = subparsers.add_parser(
        "prepare",
        help="download/export a model into the user cache so it resolves offline",
        description="Resolve MODEL (Hugging Face id or checkpoint folder) into the cache "
        "(downloading and exporting it once); later runs find it offline.",
    )
    q.add_argument("model", metavar="MODEL_ID_OR_PATH")
    q.add_argument("--cache-dir", default=None)
    q.set_defaults(func=run_prepare)


def _progress(started: float):
    def say(message: str) -> None:
        print(f"[{time.monotonic() - started:6.1f}s] {message}", file=sys.stderr, flush=True)

    return say


def run_export(args) -> int:
    from pathlib import Path

    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.util.extras import require

    export_model = require("nlgeval_training.export", "exporting a model (nlgeval export)").export_model
    from nlgeval_training.t5_trace import ExportProcessError

    if args.no_fp32 and not (args.int8 or args.fp16):
        raise UsageError("--no-fp32 needs --int8 or --fp16: without them the folder would have no graph")
    started = time.monotonic()
    say = _progress(started)
    local = Path(args.model)
    checkpoint = str(local) if local.exists() else _download(args.model, say)
    detect = require("nlgeval_training.checkers", "exporting a model (nlgeval export)").detect_checker
    checker = getattr(args, "checker", None) or detect(checkpoint, args.model)
    if checker is not None:
        return _export_checker(args, checkpoint, checker, started, say)
    try:
        manifest = export_model(
            checkpoint,
            args.out,
            int8=args.int8,
            fp16=args.fp16,
            keep_fp32=not args.no_fp32,
            max_length=args.max_length,
            source_id=args.model,
            progress=say,
        )
    except (ValueError, OSError, ExportProcessError) as exc:
        raise UsageError(str(exc)) from exc
    _print_parity(manifest)
    print(f"wrote {args.out} in {time.monotonic() - started:.1f}s")
    return 0


def _export_checker(args, checkpoint: str, checker: str, started: float, say) -> int:
    """A fact checker's claim-support folder (nlgeval_training.checkers), its parity printed as for any export."""
    from pathlib import Path

    from pytest_nlgeval.errors import UsageError
    from nlgeval_training.checkers import export_checker, hhem_foundation

    if args.max_length is not None:
        raise UsageError(f"--max-length does not apply to {checker}: a fact checker reads the length its authors set")
    foundation = getattr(args, "foundation", None)
    if checker == "hhem-2.1-open":
        foundation = foundation or hhem_foundation(checkpoint)
        if not Path(foundation).is_dir():
            foundation = _download(foundation, say)
    try:
        manifest = export_checker(
            checkpoint,
            args.out,
            checker=checker,
            int8=args.int8,
            fp16=args.fp16,
            keep_fp32=not args.no_fp32,
            source_id=args.model,
            foundation=foundation,
            progress=say,
        )
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from exc
    _print_parity(manifest, "the authors' reading in PyTorch", "(document, claim) pairs")
    print(f"wrote {args.out} ({checker}) in {time.monotonic() - started:.1f}s")
    return 0


def _print_parity(manifest: dict, reference: str = "PyTorch", what: str = "inputs") -> None:
    for precision, fig in manifest["export"].get("parity", {}).items():
        diff = fig.get("max_abs_diff")
        print(
            f"{precision}: max |diff| to {reference} = {diff if diff is None else f'{diff:.2e}'} on {fig['n']} {what}"
            + (f" ({fig['note']})" if fig.get("note") else "")
            + (" (graph not shipped: --no-fp32)" if fig.get("shipped") is False else "")
        )


def _download(model_id: str, say) -> str:
    """The checkpoint folder of a Hub id: offline (HF_HUB_OFFLINE / NLGEVAL_OFFLINE) and failed downloads are
    usage errors that name the model at once, not a retry loop ending in a chained httpx traceback."""
    from pytest_nlgeval.errors import UsageError
    from nlgeval_runtime.resolve import is_offline

    if is_offline():
        raise UsageError(
            f"{model_id!r} is not a local folder and downloads are off (HF_HUB_OFFLINE or "
            "NLGEVAL_OFFLINE is set): give the path of a downloaded checkpoint, or unset the variable"
        )
    from huggingface_hub import snapshot_download

    say(f"downloading {model_id}")
    try:
        return snapshot_download(model_id, allow_patterns=["*.json", "*.safetensors", "*.bin", "*.model", "*.txt"])
    except Exception as exc:  # huggingface_hub's and httpx's errors: no network, unknown repo, no access
        detail = " ".join(str(exc).split())[:300]
        raise UsageError(
            f"could not download {model_id!r} from the Hugging Face Hub ({type(exc).__name__}: "
            f"{detail}); check the id and the network, or give the path of a local checkpoint"
        ) from None


def run_prepare(args) -> int:
    from pytest_nlgeval.errors import UsageError
    from nlgeval_runtime.errors import NLGEvalRuntimeError
    from nlgeval_runtime.resolve import resolve_model

    try:
        path = resolve_model(args.model, cache_dir=args.cache_dir)
    except NLGEvalRuntimeError as exc:
        raise UsageError(str(exc)) from exc
    print(path)
    return 0
