"""Plugin benchmarks, measured side by side in one run.

1. A 200-check suite run twice with the score cache: cold (empty cache) vs warm (unchanged suite). The
   warm run must create no ONNX session (read from the results file) and be >= 20x faster.
2. The list API (one batched call for 200 outputs) vs 200 single assertions on the same inputs, with
   the session already created and no cache: >= 3x faster.
3. Import overhead of the plugin in a suite that never uses it (``python -X importtime``): < 30 ms.

Usage::

    python benchmarks/plugin.py                    # the embedded default model, else a tiny random T5
    python benchmarks/plugin.py --model DIR        # any model folder
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CITIES = ["Leeds", "Porto", "Osaka", "Denver", "Lagos", "Quito", "Hanoi", "Perth", "Graz", "Tunis"]
SUBJECTS = ["council", "hospital", "university", "rail operator", "water board"]
ACTIONS = [
    "approved a budget of {n} million",
    "delayed a project worth {n} million",
    "hired {n} new staff",
    "closed {n} offices",
    "reported {n} complaints",
]


def make_cases(n: int) -> list[tuple[str, str]]:
    """``n`` distinct (summary, document) pairs of plain news-like sentences."""
    cases = []
    for i in range(n):
        city, subject = CITIES[i % len(CITIES)], SUBJECTS[(i // len(CITIES)) % len(SUBJECTS)]
        action = ACTIONS[(i // 3) % len(ACTIONS)].format(n=10 + i)
        doc = (
            f"The {subject} of {city} {action} on Monday. Officials said the decision followed a review "
            f"that lasted {i % 7 + 2} months. Residents will be consulted before the end of the year."
        )
        summary = f"The {city} {subject} {action}. A review took {i % 7 + 2} months."
        cases.append((summary, doc))
    return cases


SUITE = '''
import json, pathlib
import pytest
from pytest_nlgeval import assert_dimension

CASES = json.loads((pathlib.Path(__file__).parent / "cases.json").read_text())

@pytest.mark.parametrize("i", range(len(CASES)))
def test_case(i):
    summary, document = CASES[i]
    assert_dimension(summary, "consistency", source=document) >= 0.0
    assert_dimension(summary, "fluency") >= 0.0
'''


def resolve_model(arg: str | None, workdir: Path) -> str:
    if arg:
        return arg
    embedded = ROOT / "runtime" / "nlgeval_runtime" / "embedded"
    if (embedded / "nlgeval.json").is_file():
        return str(embedded)
    print("no embedded model in this checkout: building a tiny random T5 model (test fixture) ...", flush=True)
    sys.path.insert(0, str(ROOT / "tests"))
    from tinymodels import build_tiny_t5_checkpoint, build_tiny_t5_model

    checkpoint = build_tiny_t5_checkpoint(workdir / "tiny-ckpt")
    return str(build_tiny_t5_model(checkpoint, workdir / "tiny-model"))


_DURATION = re.compile(r"passed in ([0-9.]+)s")


def run_suite(suite_dir: Path, model: str, json_name: str) -> tuple[float, float, dict]:
    """(process wall seconds, pytest session seconds, results) of one run of the suite."""
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        f"--nlgeval-model={model}",
        "--nlgeval-device=cpu",
        "--nlgeval-json",
        json_name,
        str(suite_dir),
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=suite_dir, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"suite run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    match = _DURATION.search(proc.stdout)
    session = float(match.group(1)) if match else float("nan")
    return wall, session, json.loads((suite_dir / json_name).read_text())


def bench_cache(model: str, workdir: Path, n_tests: int) -> None:
    suite = workdir / "suite"
    suite.mkdir()
    (suite / "pytest.ini").write_text("[pytest]\n")
    (suite / "cases.json").write_text(json.dumps(make_cases(n_tests)))
    (suite / "test_suite.py").write_text(SUITE)
    cold_wall, cold_session, cold = run_suite(suite, model, "cold.json")
    warm_wall, warm_session, warm = run_suite(suite, model, "warm.json")
    empty = workdir / "empty"
    empty.mkdir()
    (empty / "pytest.ini").write_text("[pytest]\n")
    (empty / "test_empty.py").write_text("def test_nothing():\n    pass\n")
    startup = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(empty)],
        cwd=empty,
        capture_output=True,
        check=True,
    )
    startup = time.perf_counter() - startup
    checks = cold["summary"]["checks"]
    assert [c["score"] for c in cold["checks"]] == [c["score"] for c in warm["checks"]], "warm scores differ"
    print(f"[cache] {checks}-check suite, model {model}")
    print(
        f"[cache] cold: {cold_wall:.2f} s wall ({cold_session:.2f} s in session), "
        f"{cold['scoring']['scored']} inputs scored, {cold['scoring']['sessions']} ONNX session(s)"
    )
    print(
        f"[cache] warm: {warm_wall:.2f} s wall ({warm_session:.2f} s in session), "
        f"{warm['scoring']['scored']} inputs scored, {warm['scoring']['cached']} from cache, "
        f"{warm['scoring']['sessions']} ONNX session(s)"
    )
    print(
        f"[cache] for scale: a one-test suite that uses no nlgeval takes {startup:.2f} s wall "
        f"(interpreter and pytest start-up)"
    )
    print(
        f"[cache] speed-up warm vs cold: {cold_wall / warm_wall:.1f}x wall, "
        f"{cold_session / warm_session:.1f}x in session (target >= 20x; ONNX sessions on the warm run: "
        f"{warm['scoring']['sessions']}, target 0)"
    )


def bench_batch(model: str, n: int, repeats: int) -> None:
    from pytest_nlgeval.core.evaluator import Evaluator

    cases = make_cases(n)
    outputs = [c[0] for c in cases]
    sources = [c[1] for c in cases]
    evaluator = Evaluator(model, device="cpu", cache=False)
    evaluator.score(outputs[0], "consistency", source=sources[0])  # build the session outside the timing
    singles, batches = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        one_by_one = [float(evaluator.score(o, "consistency", source=s)) for o, s in zip(outputs, sources)]
        singles.append(time.perf_counter() - start)
        start = time.perf_counter()
        batched = evaluator.score_batch(outputs, "consistency", sources=sources)
        batches.append(time.perf_counter() - start)
    diff = max(abs(a - b) for a, b in zip(one_by_one, batched))
    single, batch = min(singles), min(batches)
    print(
        f"[batch] {n} outputs, dimension consistency (2 sentences each, with source), best of {repeats}: "
        f"200 single assertions {single:.3f} s, one batched call {batch:.3f} s, "
        f"speed-up {single / batch:.1f}x (target >= 3x); max |single - batched| = {diff:.2e}"
    )


def _entry_point_plugins() -> list[str]:
    """The modules pytest loads from this distribution's ``pytest11`` entry points."""
    from importlib import metadata

    return sorted(
        ep.value
        for ep in metadata.entry_points(group="pytest11")
        if ep.dist is not None and ep.dist.name == "pytest-nlgeval"
    )


def bench_import(runs: int) -> None:
    plugins = _entry_point_plugins()
    with tempfile.TemporaryDirectory() as prefix:
        env = dict(os.environ, PYTHONPYCACHEPREFIX=prefix)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure with bytecode caches, as users run it
        code = "import pytest; " + "; ".join(f"import {m}" for m in plugins)
        costs = []
        per_plugin: dict[str, list[float]] = {m: [] for m in plugins}
        for i in range(runs + 1):
            proc = subprocess.run(
                [sys.executable, "-X", "importtime", "-c", code], env=env, capture_output=True, text=True, check=True
            )
            if i == 0:
                continue  # the first run writes the bytecode caches
            total, after_pytest = 0, False
            for line in proc.stderr.splitlines():
                # top-level entries (no indentation) after pytest: everything the plugins import themselves
                match = re.match(r"import time:\s+\d+ \|\s+(\d+) \| (\S.*)$", line)
                if not match:
                    continue
                if match.group(2) == "pytest":
                    after_pytest = True
                elif after_pytest:
                    total += int(match.group(1))
                    if match.group(2) in per_plugin:
                        per_plugin[match.group(2)].append(int(match.group(1)) / 1000)
            costs.append(total / 1000)
        check = subprocess.run(
            [
                sys.executable,
                "-c",
                code + "; import sys; print(sorted(m for m in "
                "('onnxruntime','numpy','tokenizers','nlgeval_runtime','torch','scipy','jinja2') "
                "if m in sys.modules))",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    print(
        f"[import] import overhead of the plugins {', '.join(plugins)} (python -X importtime, after pytest), "
        f"median of {runs}: {statistics.median(costs):.1f} ms (min {min(costs):.1f}, max {max(costs):.1f}; "
        f"target < 30 ms); heavy modules imported: {check}"
    )
    print(
        "[import] per plugin (median ms): "
        + ", ".join(f"{m} {statistics.median(v):.1f}" for m, v in per_plugin.items() if v)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="model folder (default: the embedded model, else a tiny random T5)")
    parser.add_argument("--tests", type=int, default=100, help="tests in the suite (2 checks each)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nlgeval-bench-") as tmp:
        workdir = Path(tmp)
        model = resolve_model(args.model, workdir)
        bench_import(7)
        bench_batch(model, 2 * args.tests, args.repeats)
        bench_cache(model, workdir, args.tests)
    return 0


if __name__ == "__main__":
    sys.exit(main())
