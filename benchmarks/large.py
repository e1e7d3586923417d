"""UniEval at its released size: exporting and scoring a random-weight t5-v1_1-large, measured in one run.

The released UniEval checkpoints are t5-v1_1-large (783M parameters, 3.1 GB in fp32). This script builds that
architecture with random weights offline (config only, as ``scoring.py --arch large`` does), then:

1. **Exports** it with ``nlgeval export`` twice, each in a child process of its own: fp32, and ``--int8``
   (static int8, calibrated at export). For each export it prints the wall time, the peak resident memory
   (the kernel's high-water mark of the largest export process, from ``wait4``), the peak of the whole export
   process tree sampled every 0.2 s with the stage it was reached in (the exporter's progress messages), the
   folder size and the parity figures the export recorded in ``nlgeval.json``.
2. **Scores** ``--inputs`` news inputs of about 400 tokens with UniEval's PyTorch path (Hugging Face forward,
   batch 8, fp32) and with the runtime on each exported graph, in alternating rounds, and prints inputs/s, the
   ratio to the reference and max |diff| to it (``--skip-scoring`` leaves this out).

    python benchmarks/large.py --workdir /tmp/large                 # both exports, then scoring 16 inputs
    python benchmarks/large.py --workdir /tmp/large --skip-scoring  # exports only
    python benchmarks/large.py --workdir /tmp/large --exports int8 --int8-args="--no-fp32"
    python benchmarks/large.py --workdir /tmp/large --score-only     # scoring again, with the kept folders

The checkpoint is built once and kept in ``--workdir``; exports always run again (they are what is measured).
A full run took 13 minutes on 2 cores shared with other jobs. Each export peaks below 5 GB (the figures it
prints); scoring holds the PyTorch model and both graphs at once (about 3.1 + 2.8 + 1.9 GB of weights).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import (  # noqa: E402
    ARCHS,
    DATA,
    alternating_rounds,
    build_checkpoint,
    build_inputs,
    load_articles,
)

GB = 1e9
SAMPLE_SECONDS = 0.2


def _rss_bytes(pid: int) -> int:
    """Resident memory of ``pid`` and all its descendants (0 once it is gone)."""
    total = 0
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as fh:
                total += sum(_rss_bytes(int(child)) for child in fh.read().split())
    except (OSError, ValueError):
        pass
    return total


# Linux carries a process's memory high-water mark across exec: a child spawned straight from this script
# (which may hold a PyTorch model and several graphs by then) would report at least this script's own peak
# as its ru_maxrss. A small launcher spawns the measured command instead and reports the command's peak,
# read by wait4 in the launcher, through a file.
_LAUNCHER = """
import os, subprocess, sys
child = subprocess.Popen(sys.argv[2:])
_, status, usage = os.wait4(child.pid, 0)
with open(sys.argv[1], "w") as fh:
    fh.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def measured_run(command: list[str], log, env: dict | None = None) -> dict:
    """Run ``command`` in a child process: wall time, peak memory (``wait4`` in a small launcher), sampled peak
    per stage (the child's ``[...]`` progress lines on stderr). Exits naming the command when it fails."""
    started = time.monotonic()
    peak_file = Path(tempfile.mkstemp(prefix="nlgeval-peak-")[1])
    launched = [sys.executable, "-c", _LAUNCHER, str(peak_file), *command]
    child = subprocess.Popen(launched, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    stage = {"name": "starting"}
    stages: dict[str, int] = {}
    lines: list[str] = []

    def read_stderr():
        for line in child.stderr:
            lines.append(line.rstrip())
            if line.startswith("[") and "]" in line:
                stage["name"] = line.split("]", 1)[1].strip()
                log("  " + line.rstrip())

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    while True:
        rss = _rss_bytes(child.pid)
        stages[stage["name"]] = max(stages.get(stage["name"], 0), rss)
        if child.poll() is not None:
            break
        time.sleep(SAMPLE_SECONDS)
    text = peak_file.read_text().strip()
    peak_file.unlink()
    peak = int(text) * 1024 if text else 0
    seconds = time.monotonic() - started
    reader.join(timeout=5)
    stdout = child.stdout.read()
    if child.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed (exit {child.returncode}):\n" + "\n".join(lines[-30:]) + stdout)
    return {"seconds": seconds, "peak": peak, "stages": stages}


def folder_figures(out: Path) -> dict:
    """Size, parity figures and variants of an exported model folder."""
    manifest = json.loads((out / "nlgeval.json").read_text())
    size = sum(p.stat().st_size for p in out.iterdir() if p.is_file())
    return {
        "size": size,
        "parity": manifest["export"].get("parity", {}),
        "variants": manifest["variants"],
    }


def measured_export(checkpoint: Path, out: Path, extra: list[str], log) -> dict:
    """``nlgeval export CHECKPOINT OUT EXTRA...`` in a child process: time, peak memory, peak per stage."""
    import shutil

    shutil.rmtree(out, ignore_errors=True)
    command = [sys.executable, "-m", "pytest_nlgeval.cli", "export", str(checkpoint), str(out), *extra]
    log(f"$ nlgeval export {checkpoint.name} {out.name} {' '.join(extra)}".rstrip())
    return {**measured_run(command, log), **folder_figures(out)}


def _build_only(ckpt: Path, data: Path, arch: str) -> None:
    articles = load_articles(data, 64)
    build_checkpoint(arch, articles, ckpt)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", type=Path, default=None, help="keep the checkpoint and the exports here")
    parser.add_argument("--exports", default="fp32,int8", help="which exports to measure (fp32, int8 or both)")
    parser.add_argument("--int8-args", default="", help="extra arguments for the int8 export, e.g. --no-fp32")
    parser.add_argument("--skip-scoring", action="store_true")
    parser.add_argument(
        "--score-only",
        action="store_true",
        help="score with the folders a previous run left in --workdir, without exporting again",
    )
    parser.add_argument("--inputs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--limit-gb", type=float, default=10.0, help="the peak every export must stay within")
    parser.add_argument(
        "--arch",
        choices=sorted(ARCHS),
        default="large",
        help="large (default, UniEval's size); smaller ones check the script quickly",
    )
    parser.add_argument("--build-only", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        _build_only(args.build_only, args.data, args.arch)
        return 0

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    work = args.workdir or Path(tempfile.mkdtemp(prefix="nlgeval-large-"))
    work.mkdir(parents=True, exist_ok=True)
    ckpt = work / f"t5-v1_1-{args.arch}-random"
    if not (ckpt / "config.json").is_file():
        log(f"building the random-weight t5-v1_1-{args.arch} in {ckpt}")
        subprocess.run(
            [sys.executable, __file__, "--build-only", str(ckpt), "--data", str(args.data), "--arch", args.arch],
            check=True,
        )

    exports = [e for e in args.exports.split(",") if e]
    unknown = set(exports) - {"fp32", "int8"}
    if unknown:
        parser.error(f"--exports takes fp32 and/or int8, not {sorted(unknown)}")
    if args.score_only:
        folders = {name: work / f"{args.arch}-{name}" for name in exports}
        missing = [str(f) for f in folders.values() if not (f / "nlgeval.json").is_file()]
        if missing:
            parser.error(f"--score-only needs the exported folders of a previous run: {', '.join(missing)}")
        score(ckpt, folders, args)
        return 0
    results = {}
    for name in exports:
        extra = ["--int8", *shlex.split(args.int8_args)] if name == "int8" else []
        results[name] = measured_export(ckpt, work / f"{args.arch}-{name}", extra, log)

    import onnxruntime
    import torch

    print(
        f"t5-v1_1-{args.arch} (random weights), {os.cpu_count()} CPUs visible, torch {torch.__version__}, "
        f"onnxruntime {onnxruntime.__version__}"
    )
    over = []
    for name, r in results.items():
        flags = "--int8 " + args.int8_args if name == "int8" else ""
        print(
            f"\nexport {name} (nlgeval export {flags.strip()}): {r['seconds']:.0f} s, peak RSS {r['peak'] / GB:.2f} GB "
            f"(limit {args.limit_gb:g} GB), folder {r['size'] / GB:.2f} GB, variants {sorted(r['variants'])}"
        )
        for stage, rss in r["stages"].items():
            print(f"  {stage:<58} sampled peak {rss / GB:6.2f} GB")
        for precision, fig in r["parity"].items():
            diff = fig.get("max_abs_diff")
            print(
                f"  parity {precision}: max |diff| to PyTorch {diff:.2e} on {fig['n']} inputs"
                if diff is not None
                else f"  parity {precision}: {fig.get('note')}"
            )
        if r["peak"] > args.limit_gb * GB:
            over.append(name)
    if not args.skip_scoring:
        score(ckpt, {name: work / f"{args.arch}-{name}" for name in results}, args)
    if over:
        print(f"\nOVER THE LIMIT: {', '.join(over)} peaked above {args.limit_gb:g} GB")
        return 1
    return 0


def score(ckpt: Path, folders: dict[str, Path], args) -> None:
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_runtime import load_boolqa
    from nlgeval_training.export import t5_reference_scores

    torch.set_num_threads(args.threads)
    articles = load_articles(args.data, max(args.inputs, 64))
    tokenizer = AutoTokenizer.from_pretrained(str(ckpt))
    texts = build_inputs(articles, args.inputs, tokenizer)
    n_tok = [len(tokenizer(t).input_ids) for t in texts]
    yes, no = tokenizer("Yes").input_ids[0], tokenizer("No").input_ids[0]
    model = T5ForConditionalGeneration.from_pretrained(str(ckpt)).eval()

    paths = {"pytorch-reference": None}
    for name, folder in folders.items():
        paths[f"onnx-{name}"] = load_boolqa(folder, device="cpu", precision=name, threads=args.threads)

    def run(name):
        if paths[name] is None:
            return t5_reference_scores(model, tokenizer, texts, max_length=1024, yes_id=yes, no_id=no, batch_size=8)
        return paths[name].score(texts).scores

    timings, scores = alternating_rounds(list(paths), run, args.rounds)
    ref = scores["pytorch-reference"]
    ref_rate = len(texts) / statistics.median(timings["pytorch-reference"])
    print(
        f"\nscoring {len(texts)} inputs, tokens per input mean {np.mean(n_tok):.0f} (min {min(n_tok)}, "
        f"max {max(n_tok)}), {args.threads} threads, median of {args.rounds} alternating round(s) after a warm-up"
    )
    print(f"{'path':<24}{'inputs/s':>10}{'s/input':>9}{'ratio':>9}{'max|diff|':>12}")
    for name in paths:
        rate = len(texts) / statistics.median(timings[name])
        diff = float(np.abs(scores[name] - ref).max())
        print(f"{name:<24}{rate:>10.2f}{1 / rate:>9.2f}{rate / ref_rate:>8.2f}x{diff:>12.2e}")


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
