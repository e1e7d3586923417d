"""Trajectory benchmarks, measured side by side in one run.

1. DTW: one 128-step trajectory against 50 references of 128 steps, this project's symmetric2 DTW (the
   numba kernel when installed, and the numpy fallback) against dtw-python (the GPL test oracle, only
   imported here and in tests). Prints the time per call, the ratio and the largest difference.
2. End to end: 100 machine continuations of 128 tokens scored against a 50-reference bank with the default
   causal LM on CPU (LM scoring, trajectories, DTW to every reference, summary, likelihood). Prints seconds.

    python benchmarks/trajectory.py [--lm FOLDER] [--threads N]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "stories"))


def bench_dtw(repeats: int) -> None:
    from dtw import dtw as dtw_python

    from pytest_nlgeval.trajectory import dtw as D

    rng = np.random.default_rng(0)
    # Diversity-like series: start at 1 and drift down with noise.
    a = np.clip(1 - np.cumsum(rng.random(128)) / 400 + rng.normal(0, 0.01, 128), 0, 1)
    refs = [np.clip(1 - np.cumsum(rng.random(128)) / 300, 0, 1) for _ in range(50)]
    started = time.perf_counter()
    ours = D.dtw_distances(a, refs)               # includes numba compilation on the first call
    first = time.perf_counter() - started

    def timed(fn) -> float:
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    t_ours = timed(lambda: D.dtw_distances(a, refs))
    t_numpy = timed(lambda: D._numpy_many(a, refs))
    t_oracle = timed(lambda: [dtw_python(a, r, step_pattern="symmetric2", distance_only=True).normalizedDistance
                              for r in refs])
    oracle = np.array([dtw_python(a, r, step_pattern="symmetric2", distance_only=True).normalizedDistance
                       for r in refs])
    print(f"DTW, 1 x 128 steps vs 50 references x 128 steps (best of {repeats}):")
    print(f"  backend {D.backend()}: {t_ours * 1e3:.2f} ms (first call incl. compilation {first:.2f} s)")
    print(f"  numpy row-scan fallback: {t_numpy * 1e3:.2f} ms")
    print(f"  dtw-python: {t_oracle * 1e3:.2f} ms")
    print(f"  speed-up vs dtw-python: {D.backend()} {t_oracle / t_ours:.1f}x, numpy {t_oracle / t_numpy:.1f}x")
    print(f"  max |difference| vs dtw-python: {D.backend()} {np.max(np.abs(ours - oracle)):.2e}, "
          f"numpy {np.max(np.abs(D._numpy_many(a, refs) - oracle)):.2e}")


def bench_end_to_end(lm_ref: str | None, threads: int | None) -> None:
    from nlgeval_runtime.causal_lm import load_causal_lm
    from story_generator import StoryGenerator

    from pytest_nlgeval.trajectory.bank import ReferenceBank
    from pytest_nlgeval.trajectory.scoring import score_continuations

    rows = [json.loads(line) for line in (ROOT / "examples/stories/human_continuations.jsonl").open()]
    refs = rows[:50]
    t = time.perf_counter()
    lm = load_causal_lm(lm_ref, device="cpu", threads=threads)
    t_load = time.perf_counter() - t
    t = time.perf_counter()
    bank = ReferenceBank.fit([r["prompt"] for r in refs], [r["continuation"] for r in refs], lm, horizon=128)
    t_bank = time.perf_counter() - t
    gen = StoryGenerator.from_file(ROOT / "examples/stories/corpus.txt")
    prompts = [rows[i % len(rows)]["prompt"] for i in range(100)]
    outputs = [gen.generate(p, n_words=160, strategy="sample" if i % 4 else "greedy", seed=i)
               for i, p in enumerate(prompts)]
    t = time.perf_counter()
    scored = score_continuations(prompts, outputs, bank, lm)
    t_score = time.perf_counter() - t
    tokens = [s.trajectory.length for s in scored]
    print(f"End to end on CPU ({lm.provider}, threads {threads or 'default'}), LM {lm.model_ref}:")
    print(f"  load LM {t_load:.2f} s; fit a bank of {bank.n_references} references at horizon 128: {t_bank:.2f} s")
    print(f"  score {len(scored)} continuations ({min(tokens)}-{max(tokens)} tokens, horizon 128) against "
          f"{bank.n_references} references: {t_score:.2f} s ({t_score / len(scored) * 1e3:.1f} ms each)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lm", default=None, help="causal-LM folder (default: the shipped default LM)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    bench_dtw(args.repeats)
    bench_end_to_end(args.lm, args.threads)


if __name__ == "__main__":
    main()
