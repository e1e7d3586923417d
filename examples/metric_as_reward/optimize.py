"""Optimise a small DSPy program with an induced metric as its reward.

The program answers household how-to questions. Its reward is the metric induced from the (synthetic)
helpfulness labels in ../induced_metric (helpful.json): DSPy's GEPA optimiser reads the score and the
metric's feedback (which components pulled the score down, and the judges' rationales when the metric has
judges) and rewrites the program's instructions.

Run it against any OpenAI-compatible server (vLLM, llama.cpp, Ollama's OpenAI endpoint):

    python examples/metric_as_reward/optimize.py --lm openai/qwen2.5-7b-instruct --api-base http://localhost:8000/v1

``--optimizer bootstrap`` uses BootstrapFewShot instead (the metric's score must reach a threshold for a
trace to become a demonstration). The test suite runs this file offline with ``dspy.utils.DummyLM``.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import dspy

from pytest_nlgeval.induction import as_dspy_metric

HERE = Path(__file__).resolve().parent
DATA = HERE.parent / "induced_metric" / "answers.jsonl"
METRIC = HERE.parent / "induced_metric" / "helpful.json"


class AnswerQuestion(dspy.Signature):
    """Answer the household how-to question."""

    question: str = dspy.InputField()
    answer: str = dspy.OutputField()


def load_questions(path: Path = DATA) -> list[dspy.Example]:
    """One example per question, with its reference answer (the metric compares against it)."""
    seen: dict[str, dspy.Example] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["input"] not in seen:
            seen[row["input"]] = dspy.Example(question=row["input"], references=row["references"]).with_inputs(
                "question"
            )
    return list(seen.values())


def optimise(
    lm,
    *,
    optimizer: str = "gepa",
    reflection_lm=None,
    metric_path: Path = METRIC,
    n_train: int = 12,
    n_dev: int = 8,
    max_metric_calls: int = 60,
    seed: int = 0,
) -> dict:
    """Compile the answerer with the induced metric as reward; returns dev scores before and after."""
    metric = as_dspy_metric(metric_path, output_field="answer", input_field="question", references_field="references")
    examples = load_questions()
    train, dev = examples[:n_train], examples[n_train : n_train + n_dev]
    program = dspy.Predict(AnswerQuestion)
    evaluate = dspy.Evaluate(devset=dev, metric=metric, num_threads=1, display_progress=False)
    with dspy.context(lm=lm):
        before = float(evaluate(program).score)
        if optimizer == "gepa":
            opt = dspy.GEPA(
                metric=metric,
                max_metric_calls=max_metric_calls,
                reflection_lm=reflection_lm or lm,
                num_threads=1,
                seed=seed,
            )
            compiled = opt.compile(program, trainset=train, valset=dev)
        elif optimizer == "bootstrap":
            opt = dspy.BootstrapFewShot(
                metric=metric, metric_threshold=0.5, max_bootstrapped_demos=3, max_labeled_demos=0
            )
            compiled = opt.compile(program, trainset=train)
        else:
            raise ValueError(f"optimizer must be 'gepa' or 'bootstrap', got {optimizer!r}")
        after = float(evaluate(compiled).score)
    return {"before": before, "after": after, "program": compiled}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lm", required=True, help="LiteLLM model id, e.g. openai/<model>")
    parser.add_argument("--api-base", default=None, help="e.g. http://localhost:8000/v1")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY")
    parser.add_argument("--reflection-lm", default=None, help="model for GEPA's reflection (default: --lm)")
    parser.add_argument("--optimizer", choices=("gepa", "bootstrap"), default="gepa")
    parser.add_argument("--max-metric-calls", type=int, default=60)
    args = parser.parse_args(argv)
    key = os.environ.get(args.api_key_env, "none")
    lm = dspy.LM(args.lm, api_base=args.api_base, api_key=key, temperature=0.7, max_tokens=400)
    reflection = (
        dspy.LM(args.reflection_lm, api_base=args.api_base, api_key=key, temperature=1.0, max_tokens=2000)
        if args.reflection_lm
        else None
    )
    result = optimise(lm, optimizer=args.optimizer, reflection_lm=reflection, max_metric_calls=args.max_metric_calls)
    print(f"dev reward before: {result['before']:.1f}  after: {result['after']:.1f}  (mean normalised score x 100)")
    predictor = result["program"]
    print("instructions:", predictor.signature.instructions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
