"""Static int8 for the embedded evaluator: speed and drift against the graph it ships, in one run.

The embedded model ships a weight-only graph (int8 embedding table, other weights stored in fp16 and
computed in fp32). This benchmark derives a static int8 graph from that very graph, so no checkpoint is
needed: ONNX Runtime's constant folding turns the fp16-stored weights back into fp32 initializers, then
``nlgeval_training.static_int8`` quantises the MatMuls with activation scales calibrated on pseudo inputs.
It then compares the two on real SummEval summaries ($NLGEVAL_DATA/human/summeval_dev.jsonl.gz):

- drift: max and mean |diff| of the scores, decisions flipped at 0.5, Spearman between the two;
- speed: 200 single assertions and one batched call (evaluator_overhead.py's split), for both graphs.

    python benchmarks/embedded_int8.py [--pairs 200] [--threads 2]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from evaluator_overhead import PARTS, measure  # noqa: E402
from plugin import make_cases  # noqa: E402
from scoring import require_data  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EMBEDDED = ROOT / "runtime" / "nlgeval_runtime" / "embedded"
SUMMEVAL = Path(os.environ.get("NLGEVAL_DATA", "data-kit")) / "human" / "summeval_dev.jsonl.gz"  # docs/data.md


def build_static(src: Path, dst: Path) -> dict:
    """``dst``: a model folder with the static int8 graph derived from ``src``'s shipped graph."""
    import onnxruntime as ort

    from nlgeval_runtime.modelfolder import ModelFolder
    from nlgeval_training.folder_writer import finalize_model_folder
    from nlgeval_training.static_int8 import calibration_feeds, pseudo_calibration_texts, quantize_static_int8

    folder = ModelFolder.open(src)
    precision = "int8" if "int8" in folder.variants else "fp32"
    dst.mkdir(parents=True, exist_ok=True)
    shutil.copy(folder.tokenizer_path, dst / "tokenizer.json")
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC  # constant folding only
    folded = dst.parent / "folded.onnx"
    options.optimized_model_filepath = str(folded)
    ort.InferenceSession(str(folder.graph_for(precision)), sess_options=options, providers=["CPUExecutionProvider"])
    conventions = folder.input_conventions
    feeds = calibration_feeds(
        dst / "tokenizer.json",
        pseudo_calibration_texts(),
        max_length=conventions["max_length"],
        separator=conventions["separator"],
        separator_token=conventions["separator_token"],
    )
    quantize_static_int8(folded, dst / "model.int8.onnx", feeds)
    manifest = {k: v for k, v in folder.manifest.items() if k not in ("files", "format", "format_version", "card")}
    manifest["variants"] = {"int8": "model.int8.onnx"}
    manifest["quantization"] = {"int8": "static"}
    return finalize_model_folder(dst, manifest)


def summeval_pairs(n: int) -> tuple[list[str], list[str]]:
    outputs, sources = [], []
    require_data(SUMMEVAL)
    with gzip.open(SUMMEVAL, "rt", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            outputs.append(row["system_output"])
            sources.append(row["source"])
            if len(outputs) >= n:
                break
    return outputs, sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=EMBEDDED)
    parser.add_argument("--pairs", type=int, default=200, help="SummEval (summary, document) pairs for the drift")
    parser.add_argument("--cases", type=int, default=200, help="assertions for the speed comparison")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from pytest_nlgeval import Evaluator
    from scipy.stats import spearmanr

    with tempfile.TemporaryDirectory(prefix="nlgeval-bench-") as tmp_name:
        tmp = Path(tmp_name)
        static = tmp / "static"
        build_static(args.model, static)
        models = {"shipped": str(args.model), "static int8": str(static)}

        outputs, sources = summeval_pairs(args.pairs)
        scores = {}
        for name, model in models.items():
            ev = Evaluator(model, device="cpu", precision="int8", cache=False, threads=args.threads)
            scores[name] = {
                dim: np.array(ev.score_batch(outputs, dim, sources=sources))
                for dim in ("coherence", "consistency", "fluency")
            }
            ev.close()
        print(f"model {args.model}: shipped graph vs static int8 derived from it; {len(outputs)} SummEval summaries")
        print(f"{'dimension':<14}{'max|diff|':>11}{'mean|diff|':>12}{'flips@0.5':>11}{'spearman':>10}")
        for dim in scores["shipped"]:
            a, b = scores["shipped"][dim], scores["static int8"][dim]
            flips = int(((a >= 0.5) != (b >= 0.5)).sum())
            print(
                f"{dim:<14}{np.abs(a - b).max():>11.4f}{np.abs(a - b).mean():>12.4f}{flips:>11}"
                f"{spearmanr(a, b).statistic:>10.4f}"
            )

        cases = make_cases(args.cases)
        print(f"\nspeed, {args.cases} outputs on consistency, fresh score cache, {args.threads} threads")
        print(f"{'':<36}{'total s':>9}" + "".join(f"{p:>14}" for p in PARTS))
        totals = {}
        for name, model in models.items():
            for mode in ("single", "batched"):
                total, clock, _ = measure(
                    model, cases, mode, tmp / f"cache-{name}-{mode}".replace(" ", "-"), args.threads
                )
                totals[name, mode] = total
                label = f"{name}: " + (f"{args.cases} single assertions" if mode == "single" else "one batched call")
                print(
                    f"{label:<36}{total:>9.3f}"
                    + "".join(f"{clock.seconds[p]:>8.3f} ({clock.seconds[p] / total:>3.0%})" for p in PARTS)
                )
        for mode in ("single", "batched"):
            print(f"static int8 vs shipped, {mode}: {totals['shipped', mode] / totals['static int8', mode]:.2f}x")
        print(
            f"static int8 batched vs shipped single: "
            f"{totals['shipped', 'single'] / totals['static int8', 'batched']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
