"""The T5 export side by side: ``nlgeval export`` against Hugging Face Optimum, measured in one run.

For each architecture (t5-v1_1-base and t5-v1_1-large with random weights, built offline as ``large.py``
does) this script exports the same checkpoint four times, each in child processes of its own:

- ``own fp32``: ``nlgeval export CKPT OUT`` (one fused one-step Boolean-QA graph);
- ``own int8``: ``nlgeval export CKPT OUT --int8`` (fp32 and static int8, calibrated at export);
- ``optimum fp32``: Optimum's exporter (``main_export``, task ``text2text-generation``: encoder and decoder
  graphs) run by ``--optimum-python``, then the two graphs composed into the runtime's one graph
  (``nlgeval_training.optimum_engine``);
- ``optimum int8``: the same plus Optimum's ``ORTQuantizer`` dynamic int8 of both graphs (its CPU recipe).

For each export it prints the wall time (all its processes), the peak resident memory of its largest process
(``wait4`` in a small launcher), the size of the shipped graph (with its external data), and parity with
UniEval's PyTorch computation: max |P(Yes) difference| on the scoring inputs. Then it scores ``--inputs``
news inputs of about 400 tokens with every graph through the project's runtime (``load_boolqa``) and with
PyTorch, in alternating rounds, and prints ms per input.

Optimum 2.x's ONNX exporter (``optimum-onnx`` 0.1) requires ``transformers<4.58``, so it usually lives in an
environment of its own::

    python -m venv /tmp/optenv && /tmp/optenv/bin/pip install torch==2.13.0 \\
        "optimum-onnx[onnxruntime]==0.1.0" onnxruntime==1.32.0 sentencepiece
    python benchmarks/export_engines.py --optimum-python /tmp/optenv/bin/python --workdir /tmp/engines

Transformers 5 writes a T5 checkpoint whose output head is the tied embedding without transformers 4's
rescaling (``scale_decoder_outputs: false``); transformers 4 would read the same files with the rescaling and
give logits sqrt(d_model) times smaller. The Optimum side is therefore given a copy in transformers 4's terms
(untied, ``lm_head.weight`` written out): the same function, which the parity figures confirm.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from large import folder_figures, measured_export, measured_run  # noqa: E402
from scoring import DATA, alternating_rounds, build_inputs, load_articles  # noqa: E402

GB = 1e9
ROOT = Path(__file__).resolve().parent.parent


def checkpoint_for(arch: str, work: Path, data: Path, log) -> Path:
    ckpt = work / f"t5-v1_1-{arch}-random"
    if not (ckpt / "config.json").is_file():
        log(f"building the random-weight t5-v1_1-{arch} in {ckpt}")
        subprocess.run(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "large.py"),
                "--build-only",
                str(ckpt),
                "--data",
                str(data),
                "--arch",
                arch,
            ],
            check=True,
        )
    return ckpt


def transformers4_copy(ckpt: Path, dst: Path) -> Path:
    """``ckpt`` as transformers 4 reads it: untied output head written out, no rescaling (module docs)."""
    from safetensors.numpy import load_file, save_file

    if (dst / "model.safetensors").is_file():
        return dst
    dst.mkdir(parents=True, exist_ok=True)
    for path in ckpt.iterdir():
        if path.name not in ("config.json", "model.safetensors"):
            shutil.copy2(path, dst / path.name)
    config = json.loads((ckpt / "config.json").read_text())
    if config.get("scale_decoder_outputs", False) is not False:
        raise SystemExit(f"{ckpt}: expected a checkpoint without output rescaling")
    config["tie_word_embeddings"] = False
    config.pop("scale_decoder_outputs", None)
    (dst / "config.json").write_text(json.dumps(config, indent=2))
    weights = load_file(str(ckpt / "model.safetensors"))
    weights.setdefault("lm_head.weight", weights["shared.weight"].copy())
    save_file(weights, str(dst / "model.safetensors"), metadata={"format": "pt"})
    return dst


def optimum_export(ckpt4: Path, ckpt: Path, work: Path, name: str, int8: bool, optimum_python: str, log) -> dict:
    raw, out = work / f"{name}.raw", work / name
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "training"), "HF_HUB_OFFLINE": "1"}
    step1 = [optimum_python, "-m", "nlgeval_training.optimum_engine", "raw", str(ckpt4), str(raw)]
    step1 += ["--int8"] if int8 else []
    log("$ " + " ".join(step1[2:]))
    first = measured_run(step1, log, env=env)
    step2 = [sys.executable, "-m", "nlgeval_training.optimum_engine", "folder", str(ckpt), str(raw), str(out)]
    log("$ " + " ".join(step2[2:]))
    second = measured_run(step2, log)
    shutil.rmtree(raw, ignore_errors=True)
    return {
        "seconds": first["seconds"] + second["seconds"],
        "peak": max(first["peak"], second["peak"]),
        "steps": {"Optimum export": first, "compose, parity": second},
        **folder_figures(out),
    }


def graph_bytes(folder: Path, precision: str) -> int:
    manifest = json.loads((folder / "nlgeval.json").read_text())
    graph = manifest["variants"][precision]
    files = [graph, *manifest.get("external_data", {}).get(graph, [])]
    return sum((folder / f).stat().st_size for f in files)


def run_arch(arch: str, args, log) -> None:
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    from nlgeval_runtime import load_boolqa
    from nlgeval_training.t5_trace import t5_reference_scores

    work = args.workdir / arch
    work.mkdir(parents=True, exist_ok=True)
    ckpt = checkpoint_for(arch, work, args.data, log)
    ckpt4 = transformers4_copy(ckpt, work / f"t5-v1_1-{arch}-random-tf4")
    exports = {
        "own fp32": lambda: measured_export(ckpt, work / "own-fp32", [], log),
        "own int8": lambda: measured_export(ckpt, work / "own-int8", ["--int8"], log),
        "optimum fp32": lambda: optimum_export(ckpt4, ckpt, work, "optimum-fp32", False, args.optimum_python, log),
        "optimum int8": lambda: optimum_export(ckpt4, ckpt, work, "optimum-int8", True, args.optimum_python, log),
    }
    results = {name: run() for name, run in exports.items()}
    folders = {
        "own fp32": (work / "own-fp32", "fp32"),
        "own int8": (work / "own-int8", "int8"),
        "optimum fp32": (work / "optimum-fp32", "fp32"),
        "optimum int8": (work / "optimum-int8", "int8"),
    }

    torch.set_num_threads(args.threads)
    articles = load_articles(args.data, max(args.inputs, 64))
    tokenizer = AutoTokenizer.from_pretrained(str(ckpt))
    texts = build_inputs(articles, args.inputs, tokenizer)
    n_tok = [len(tokenizer(t).input_ids) for t in texts]
    yes, no = tokenizer("Yes").input_ids[0], tokenizer("No").input_ids[0]
    model = T5ForConditionalGeneration.from_pretrained(str(ckpt)).eval()
    scorers = {
        name: load_boolqa(folder, device="cpu", precision=precision, threads=args.threads)
        for name, (folder, precision) in folders.items()
    }

    def run(name):
        if name == "pytorch":
            return t5_reference_scores(model, tokenizer, texts, max_length=1024, yes_id=yes, no_id=no, batch_size=8)
        return scorers[name].score(texts).scores

    names = ["pytorch", *folders]
    timings, scores = alternating_rounds(names, run, args.rounds)
    ref = np.asarray(scores["pytorch"], dtype=np.float64)
    ms = {name: 1000 * statistics.median(timings[name]) / len(texts) for name in names}

    print(
        f"\nt5-v1_1-{arch} (random weights), torch {torch.__version__}, {args.threads} threads; scoring "
        f"{len(texts)} inputs of {np.mean(n_tok):.0f} tokens on average (min {min(n_tok)}, max {max(n_tok)}), "
        f"median of {args.rounds} alternating round(s) after a warm-up; PyTorch {ms['pytorch']:.0f} ms/input"
    )
    print("| engine | precision | export s | peak GB | graph GB | max abs diff to PyTorch | ms/input | vs PyTorch |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (folder, precision) in folders.items():
        r = results[name]
        diff = float(np.abs(np.asarray(scores[name], dtype=np.float64) - ref).max())
        print(
            f"| {name.split()[0]} | {precision} | {r['seconds']:.0f} | {r['peak'] / GB:.2f} | "
            f"{graph_bytes(folder, precision) / GB:.2f} | {diff:.1e} | {ms[name]:.0f} | "
            f"{ms['pytorch'] / ms[name]:.2f}x |"
        )
    for name in ("optimum fp32", "optimum int8"):
        steps = ", ".join(
            f"{k} {v['seconds']:.0f} s (peak {v['peak'] / GB:.2f} GB)" for k, v in results[name]["steps"].items()
        )
        print(f"{name}: {steps}")
    sys.stdout.flush()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--archs", default="base,large", help="comma-separated: tiny, base, large")
    parser.add_argument("--optimum-python", default=sys.executable, help="an interpreter that has optimum-onnx")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/nlgeval-engines"))
    parser.add_argument("--inputs", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    check = subprocess.run(
        [args.optimum_python, "-c", "import optimum.exporters.onnx, optimum.onnxruntime"],
        capture_output=True,
        text=True,
    )
    if check.returncode != 0:
        parser.error(
            f"--optimum-python {args.optimum_python} cannot import Optimum's exporter; install "
            '"optimum-onnx[onnxruntime]" into that environment (it requires transformers<4.58): '
            + check.stderr.strip().splitlines()[-1]
        )

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    started = time.monotonic()
    for arch in [a for a in args.archs.split(",") if a]:
        run_arch(arch, args, log)
    print(f"\nwall time {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.exit(main())
