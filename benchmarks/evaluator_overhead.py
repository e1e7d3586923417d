"""Where the time of the embedded-model path goes: 200 single assertions vs one batched call.

Both sides score the same 200 (summary, document) pairs on consistency (two claim sentences each, so 400
evaluator inputs) with a fresh score cache, so each input is tokenised, looked up, scored and written
once. The time is split into:

- model: ONNX Runtime ``session.run`` (the model's own compute),
- tokenisation: the runtime's ``TextEncoder.encode``,
- cache: reads and writes of the SQLite score cache (``get_many`` / ``put_many`` / metadata),
- python: everything else (input preparation, sentence splitting, batching, padding, Score objects).

The session is created before timing. Each side runs ``--repeats`` times (a new cache each time) and
the fastest run is shown.

    python benchmarks/evaluator_overhead.py                 # the embedded default model
    python benchmarks/evaluator_overhead.py --model DIR     # any model folder
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from plugin import make_cases, resolve_model  # noqa: E402

PARTS = ("model", "tokenisation", "cache", "python")


class Clock:
    """Accumulates the seconds spent inside wrapped callables, by part."""

    def __init__(self):
        self.seconds = dict.fromkeys(PARTS, 0.0)
        self.calls = dict.fromkeys(PARTS, 0)

    def wrap(self, owner, name, part):
        inner = getattr(owner, name)

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                self.seconds[part] += time.perf_counter() - start
                self.calls[part] += 1

        setattr(owner, name, timed)


@contextmanager
def instrumented(evaluator):
    clock = Clock()
    scorer = evaluator.scorer
    clock.wrap(scorer.session, "run", "model")
    clock.wrap(scorer.encoder, "encode", "tokenisation")
    if evaluator.cache is not None:
        for name in ("get_many", "put_many", "get_meta", "put_meta"):
            clock.wrap(evaluator.cache, name, "cache")
    try:
        yield clock
    finally:
        for owner in (scorer.session, scorer.encoder, evaluator.cache):
            if owner is not None:
                for name in ("run", "encode", "get_many", "put_many", "get_meta", "put_meta"):
                    owner.__dict__.pop(name, None)


def measure(model: str, cases, mode: str, tmp: Path, threads: int | None):
    from pytest_nlgeval import Evaluator

    outputs, sources = [c[0] for c in cases], [c[1] for c in cases]
    evaluator = Evaluator(model, device="cpu", cache_dir=tmp, threads=threads)
    evaluator.scorer  # the session is built outside the timing
    with instrumented(evaluator) as clock:
        start = time.perf_counter()
        if mode == "single":
            scores = [float(evaluator.score(o, "consistency", source=s)) for o, s in zip(outputs, sources)]
        else:
            scores = evaluator.score_batch(outputs, "consistency", sources=sources)
        total = time.perf_counter() - start
    evaluator.close()
    clock.seconds["python"] = total - sum(v for k, v in clock.seconds.items() if k != "python")
    return total, clock, scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="model folder (default: the embedded model, else a tiny random T5)")
    parser.add_argument("--cases", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nlgeval-bench-") as tmp_name:
        tmp = Path(tmp_name)
        model = resolve_model(args.model, tmp)
        cases = make_cases(args.cases)
        best = {}
        for _ in range(args.repeats):
            for mode in ("single", "batched"):
                run_dir = tmp / f"cache-{mode}-{time.perf_counter_ns()}"
                result = measure(model, cases, mode, run_dir, args.threads)
                if mode not in best or result[0] < best[mode][0]:
                    best[mode] = result
        diff = max(abs(a - b) for a, b in zip(best["single"][2], best["batched"][2]))
        print(
            f"model {model}; {args.cases} outputs on consistency (with source), fresh score cache, "
            f"fastest of {args.repeats}"
        )
        print(f"{'':<22}{'total s':>9}" + "".join(f"{p:>14}" for p in PARTS) + f"{'calls':>8}")
        for mode in ("single", "batched"):
            total, clock, _ = best[mode]
            label = f"{args.cases} single assertions" if mode == "single" else "one batched call"
            parts = "".join(f"{clock.seconds[p]:>8.3f} ({clock.seconds[p] / total:>3.0%})" for p in PARTS)
            print(f"{label:<22}{total:>9.3f}{parts}{clock.calls['model']:>8}")
        single, batched = best["single"][0], best["batched"][0]
        print(
            f"speed-up of the batched call: {single / batched:.2f}x; non-model time per assertion: "
            f"{(single - best['single'][1].seconds['model']) / args.cases * 1000:.2f} ms single, "
            f"{(batched - best['batched'][1].seconds['model']) / args.cases * 1000:.2f} ms batched; "
            f"max |single - batched| = {diff:.2e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
