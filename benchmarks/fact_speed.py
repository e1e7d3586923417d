"""Time per check of the fact dimensions against fluency, side by side in one run, with a profile of where it goes.

Three sets of outputs, each scored with no cache, one ``score`` call per output (single) and one ``evaluate``
call for all (batched), for fluency, summarization consistency and rag faithfulness (the source as the one
retrieved passage); rounds alternate between the dimensions so that machine load hits them alike, and the
median round is reported with the ratio to fluency:

- ``pairs``: the correct and damaged summaries of tests/data/fact_pairs.json (67 outputs, sources of 50-80 words);
- ``summeval``: the first 48 rows of the SummEval development split (CNN/DailyMail articles of 200-900 words
  with a machine summary each; needs ``--data``);
- ``long``: the six 119-153-word summaries of 535-580-word articles in tests/data/fact_pairs_hard.json;
- ``runaway`` (only when named): one 200,000-character output, the correct and damaged summaries of the first
  long article over and over, against that article (the evaluator reads its first 200 claims; the score says so).

``--profile`` scores each set once per dimension with the model calls, the tokenizer and the window planning
timed, and prints where a check's time goes: claims, model inputs by kind (the aligned source units a claim is
read against, the whole-source windows, the claims' form), tokens, ONNX calls and their batch shapes.

    python benchmarks/fact_speed.py --data $NLGEVAL_DATA/human [--sets pairs,summeval,long] [--rounds 3]
    python benchmarks/fact_speed.py --data $NLGEVAL_DATA/human --profile
    python benchmarks/fact_speed.py --data $NLGEVAL_DATA/human --model FOLDER --device cuda   # on a GPU
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PAIRS = HERE / "tests" / "data" / "fact_pairs.json"
HARD = HERE / "tests" / "data" / "fact_pairs_hard.json"
DIMENSIONS = ("fluency", "consistency", "faithfulness")


def pair_cases() -> list[tuple[str, str]]:
    data = json.loads(PAIRS.read_text(encoding="utf-8"))
    out = []
    for case in data["sources"]:
        for text in case["correct"] + [d["text"] for d in case["damaged"]]:
            out.append((text, case["source"]))
    return out


def summeval_cases(data: Path, n: int = 48) -> list[tuple[str, str]]:
    path = Path(data) / "summeval_dev.jsonl.gz"
    if not path.is_file():
        raise SystemExit(f"--data {data}: no summeval_dev.jsonl.gz there (pass the folder of the human dev splits)")
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()][:n]
    return [(r["system_output"], r["source"]) for r in rows]


def long_cases() -> list[tuple[str, str]]:
    """Each long article with its long faithful summary (the first correct output of over 100 words)."""
    data = json.loads(HARD.read_text(encoding="utf-8"))
    out = []
    for case in data["sources"]:
        summary = next((c for c in case["correct"] if len(c.split()) > 100), None)
        if summary is not None and len(case["source"].split()) > 500:
            out.append((summary, case["source"]))
    return out


def runaway_cases(size: int = 200_000) -> list[tuple[str, str]]:
    case = json.loads(HARD.read_text(encoding="utf-8"))["sources"][0]
    texts = case["correct"] + [d["text"] for d in case["damaged"]]
    out, k = [], 0
    while sum(len(t) + 1 for t in out) < size:
        out.append(texts[k % len(texts)])
        k += 1
    return [(" ".join(out)[:size], case["source"])]


INPUTS: dict[str, float] = {}  # model inputs per check in the last run of each dimension
INPUTS_BY_MODE: dict[tuple[str, bool], float] = {}  # ... and of each way of calling (single, batched)


def run(evaluator, dimension: str, items, batched: bool) -> float:
    before = evaluator.stats["scored"]
    started = time.perf_counter()
    if dimension == "fluency":
        if batched:
            evaluator.evaluate([t for t, _ in items], "fluency")
        else:
            for text, _ in items:
                evaluator.score(text, "fluency")
    elif dimension == "faithfulness":
        if batched:
            evaluator.evaluate([t for t, _ in items], "faithfulness", contexts=[[s] for _, s in items], task="rag")
        else:
            for text, source in items:
                evaluator.score(text, "faithfulness", contexts=[source], task="rag")
    else:
        if batched:
            evaluator.evaluate([t for t, _ in items], dimension, sources=[s for _, s in items])
        else:
            for text, source in items:
                evaluator.score(text, dimension, source=source)
    INPUTS[dimension] = INPUTS_BY_MODE[(dimension, batched)] = (evaluator.stats["scored"] - before) / len(items)
    return (time.perf_counter() - started) * 1000 / len(items)


def timing(evaluator, name: str, items, rounds: int) -> None:
    for dim in DIMENSIONS:  # warm-up: sessions created, tokenizers loaded
        run(evaluator, dim, pair_cases()[:2], batched=True)
    times = {(d, b): [] for d in DIMENSIONS for b in (False, True)}
    for _ in range(rounds):
        for batched in (False, True):
            for dim in DIMENSIONS:
                times[(dim, batched)].append(run(evaluator, dim, items, batched))
    words = statistics.median(len(s.split()) for _, s in items), statistics.median(len(t.split()) for t, _ in items)
    print(f"\n{name}: {len(items)} outputs (median {words[1]:.0f} words) of sources of median {words[0]:.0f} words")
    print(
        "| dimension | single ms/check | ratio to fluency | batched ms/check | ratio to fluency "
        "| inputs/check single, batched |"
    )
    print("|---|---|---|---|---|---|")
    base_single = statistics.median(times[("fluency", False)])
    base_batch = statistics.median(times[("fluency", True)])
    for dim in DIMENSIONS:
        single = statistics.median(times[(dim, False)])
        batch = statistics.median(times[(dim, True)])
        print(
            f"| {dim} | {single:.1f} | {single / base_single:.1f}x | {batch:.1f} | {batch / base_batch:.1f}x "
            f"| {INPUTS_BY_MODE[(dim, False)]:.1f}, {INPUTS_BY_MODE[(dim, True)]:.1f} |"
        )
    print("(a batched call scores each distinct model input once; with no cache, single calls score it again)")


class Profile:
    """Times the model calls, the tokenizer, the window planning and the fact checks of one evaluator."""

    def __init__(self):
        self.seconds: Counter = Counter()
        self.calls: Counter = Counter()
        self.shapes: Counter = Counter()
        self.tokens = 0
        self.kinds: Counter = Counter()
        self.steps: dict = defaultdict(lambda: [0, 0])  # label -> [inputs, tokens before padding]
        self._patched: list = []

    def patch(self, owner, name: str, label: str) -> None:
        original = getattr(owner, name)
        profile = self

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                profile.seconds[label] += time.perf_counter() - started
                profile.calls[label] += 1

        setattr(owner, name, timed)
        self._patched.append((owner, name, original))

    def install(self) -> None:
        from nlgeval_runtime import factcheck, session, tokenize

        from pytest_nlgeval.core import windows
        from pytest_nlgeval.core.scorers import boolqa

        original_run = session.Session.run
        profile = self

        def run(self_, feeds):
            ids = feeds["input_ids"]
            profile.shapes[tuple(ids.shape)] += 1
            profile.tokens += int(ids.size)
            started = time.perf_counter()
            try:
                return original_run(self_, feeds)
            finally:
                profile.seconds["onnx run"] += time.perf_counter() - started
                profile.calls["onnx run"] += 1

        session.Session.run = run
        self._patched.append((session.Session, "run", original_run))
        self.patch(tokenize.TextEncoder, "encode", "tokenize")
        self.patch(boolqa, "alignment_units", "align units")
        self.patch(windows.WindowPlanner, "plan", "plan windows")
        self.patch(factcheck.FactChecks, "judge", "fact checks")

        from pytest_nlgeval.core import models as sessions

        original_score_texts = sessions.ModelSessions.score_texts
        original_cascade = boolqa._cascade
        step = {"now": "model"}

        def score_texts(self_, texts, graph=None):
            out = original_score_texts(self_, texts, graph)
            label = step["now"] if graph is None else f"{graph} graph"
            profile.steps[label][0] += len(out)
            profile.steps[label][1] += sum(min(n, 256) for _, _, n in out)
            return out

        def cascade(spec, windows_, models, graph, *rest):
            class Stepped:  # the cascade's model calls, one per step, labelled by step
                calls = 0

                def score_texts(self_, texts, graph=None):
                    step["now"] = f"step {Stepped.calls + 1}"
                    Stepped.calls += 1
                    try:
                        return models.score_texts(texts, graph)
                    finally:
                        step["now"] = "model"

            return original_cascade(spec, windows_, Stepped(), graph, *rest)

        sessions.ModelSessions.score_texts = score_texts
        boolqa._cascade = cascade
        self._patched.append((sessions.ModelSessions, "score_texts", original_score_texts))
        self._patched.append((boolqa, "_cascade", original_cascade))

        original_windows = boolqa._windows

        def counted(dim, spec, batch, texts, models, capped):
            out = original_windows(dim, spec, batch, texts, models, capped)
            for unit_windows, window_texts in out or []:
                for w in unit_windows or []:
                    kind = "aligned unit" if w.rank is not None else "whole-source window"
                    profile.kinds[kind] += 1
            return out

        boolqa._windows = counted
        self._patched.append((boolqa, "_windows", original_windows))

    def remove(self) -> None:
        for owner, name, original in reversed(self._patched):
            setattr(owner, name, original)
        self._patched.clear()


def profile(evaluator, name: str, items) -> None:
    print(f"\nprofile, {name}: {len(items)} outputs, batched, no cache")
    print(
        "| dimension | ms/check | onnx run | tokenize | align units | plan windows | fact checks | rest "
        "| inputs/check | tokens/check | onnx calls | candidate units/check |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    shapes_of: dict[str, Counter] = {}
    for dim in DIMENSIONS:
        run(evaluator, dim, pair_cases()[:2], batched=True)
        prof = Profile()
        prof.install()
        try:
            total = run(evaluator, dim, items, batched=True) * len(items) / 1000
        finally:
            prof.remove()
        per = {k: 1000 * v / len(items) for k, v in prof.seconds.items()}
        timed = sum(prof.seconds[k] for k in ("onnx run", "tokenize", "align units", "plan windows", "fact checks"))
        # the planner's and the checks' time includes their own tokenizer calls; "rest" is what none of them took
        rest = 1000 * (total - timed) / len(items)
        kinds = sum(prof.kinds.values()) / len(items)
        print(
            f"| {dim} | {1000 * total / len(items):.1f} | {per.get('onnx run', 0):.1f} | {per.get('tokenize', 0):.1f} "
            f"| {per.get('align units', 0):.1f} | {per.get('plan windows', 0):.1f} | {per.get('fact checks', 0):.1f} "
            f"| {rest:.1f} | {INPUTS[dim]:.1f} | {prof.tokens / len(items):.0f} | {prof.calls['onnx run']} "
            f"| {kinds:.1f} |"
        )
        shapes_of[dim] = (prof.shapes, prof.kinds, dict(prof.steps))
    print(
        "\n(tokens/check: padded, as the model computes them; the times of the planner and of the checks include "
        "their own tokenizer calls)"
    )
    for dim, (shapes, kinds, steps) in shapes_of.items():
        if kinds:
            print(f"{dim}: candidates per check: " + ", ".join(f"{k} {v / len(items):.1f}" for k, v in kinds.items()))
        if steps:
            print(
                f"{dim}: read per check (inputs, tokens before padding): "
                + ", ".join(f"{k} {v[0] / len(items):.1f}, {v[1] / len(items):.0f}" for k, v in sorted(steps.items()))
            )
        common = ", ".join(f"{b}x{t} ({n})" for (b, t), n in shapes.most_common(8))
        print(f"{dim}: batch shapes (batch x tokens, calls), most common: {common}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--model", default="default", help="a model folder (default: the embedded model)")
    parser.add_argument(
        "--device",
        default="auto",
        help="auto, cpu or cuda (the folder needs an fp16 or fp32 "
        "graph for cuda; the embedded model ships its CPU graph only)",
    )
    parser.add_argument("--data", help="the folder of the human dev splits (for the summeval set)")
    parser.add_argument(
        "--sets",
        default=None,
        help="comma-separated: pairs, summeval, long, runaway (default: the first three; summeval only with --data)",
    )
    parser.add_argument("--profile", action="store_true", help="print where a check's time goes instead")
    args = parser.parse_args(argv)

    from pytest_nlgeval.core.evaluator import Evaluator

    names = args.sets.split(",") if args.sets else ["pairs", *(["summeval"] if args.data else []), "long"]
    loaders = {
        "pairs": pair_cases,
        "summeval": lambda: summeval_cases(args.data),
        "long": long_cases,
        "runaway": runaway_cases,
    }
    unknown = [n for n in names if n not in loaders]
    if unknown:
        parser.error(f"--sets: unknown {unknown}; choose from {', '.join(loaders)}")
    if "summeval" in names and not args.data:
        parser.error("--sets summeval needs --data (the folder of the human dev splits)")
    evaluator = Evaluator(
        None if args.model == "default" else args.model, cache=False, threads=args.threads, device=args.device
    )
    print(
        f"device {args.device}, {args.threads} threads, no cache"
        + ("" if args.profile else f", median of {args.rounds} alternating rounds")
    )
    for name in names:
        items = loaders[name]()
        if args.profile:
            profile(evaluator, name, items)
        else:
            timing(evaluator, name, items, args.rounds)
    print(f"\nthe claim head ran on {evaluator.scorer.provider} ({evaluator.scorer.precision})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
