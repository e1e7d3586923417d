"""Scoring throughput on Ray: inputs per second, and per worker, against one local session.

Scores ``--inputs`` fluency inputs (sentences of the news articles of the data kit (docs/data.md), or of any JSONL with
an ``article`` field) with the embedded default evaluator (or ``--model``): once on one local ONNX Runtime session,
then on a local Ray cluster with each worker count of ``--workers`` (one actor and session per worker, one
intra-op thread each). The score cache is off, so every input is scored. Each Ray call is timed end to end:
the first ships the model folder, and every call starts its actors and opens their sessions (a Ray Data job),
which a large file amortises. The rate is the second call's. Scores are checked to be identical to the local
ones.

    python benchmarks/ray_scoring.py                       # 2000 inputs, workers 1 and 2
    python benchmarks/ray_scoring.py --inputs 20000 --workers 1 2 4 8 --ray-address auto
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scoring import require_data  # noqa: E402

DATA = Path(os.environ.get("NLGEVAL_DATA", "data-kit")) / "cnndm.jsonl.gz"  # docs/data.md


def sentences(path: Path, n: int) -> list[str]:
    require_data(path)
    opener = gzip.open if path.suffix == ".gz" else open
    out: list[str] = []
    seen: set[str] = set()
    with opener(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            for sent in re.split(r"(?<=[.!?])\s+", json.loads(line)["article"]):
                sent = " ".join(sent.split())
                if 30 <= len(sent) <= 300 and sent not in seen:
                    seen.add(sent)
                    out.append(sent)
                    if len(out) >= n:
                        return out
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=None, help="model folder (default: the embedded evaluator)")
    parser.add_argument("--inputs", type=int, default=2000)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--ray-address", default=None, help="join this cluster instead of starting a local one")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")

    import ray

    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.scale.ray_engine import RayEvaluator

    texts = sentences(args.data, args.inputs)
    print(f"{len(texts)} fluency inputs from {args.data.name}; model {args.model or 'embedded default'}")
    local = Evaluator(args.model, device="cpu", cache=False, threads=1)
    local.score_batch(texts[:8], "fluency")  # session and first run outside the timing
    started = time.perf_counter()
    expected = local.score_batch(texts, "fluency")
    local_seconds = time.perf_counter() - started
    print(
        f"{'engine':<14}{'workers':>8}{'1st call s':>12}{'2nd call s':>12}{'inputs/s':>10}{'per worker':>12}"
        "   inputs per worker (2nd call)"
    )
    rate = len(texts) / local_seconds
    print(f"{'local session':<14}{1:>8}{'':>12}{local_seconds:>12.2f}{rate:>10.1f}{rate:>12.1f}")
    ray.init(
        address=args.ray_address,
        num_cpus=None if args.ray_address else max(args.workers),
        include_dashboard=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"OMP_NUM_THREADS": "1"}},
    )
    ok = True
    for workers in args.workers:
        ev = RayEvaluator(args.model, workers=workers, threads=1, cache=False, progress=False)
        started = time.perf_counter()
        got = ev.score_batch(texts, "fluency")  # ships the folder, starts the actors, opens their sessions
        first = time.perf_counter() - started
        started = time.perf_counter()
        ev.score_batch(texts, "fluency")  # new actors and sessions again; the node already holds the folder
        second = time.perf_counter() - started
        run = ev.scorer.last_run
        ok &= got == expected
        rate = len(texts) / second
        print(
            f"{'ray':<14}{workers:>8}{first:>12.2f}{second:>12.2f}{rate:>10.1f}{rate / workers:>12.1f}"
            f"   {sorted(run['per_worker'].values())}"
        )
        ev.close()
    ray.shutdown()
    print("scores identical to the local session:", "yes" if ok else "NO")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
