"""``assert_metric``: an induced metric as a test threshold, with the same Score behaviour as dimensions.

Example::

    from pytest_nlgeval import assert_metric

    def test_answers_are_helpful(my_bot):
        question = "How do I descale a kettle?"
        assert_metric(my_bot(question), "metrics/helpful.json", input=question) >= 3.5

The comparison records a check of kind ``"metric"`` named after the artifact; its details carry the
metric's card (components, weights, held-out agreement, robustness) and this output's component values and
judges' rationales, so reports and baselines treat it like a dimension.
"""

from __future__ import annotations

import inspect
import math
from pathlib import Path
from typing import Any, Sequence

__all__ = ["assert_metric", "assert_metrics", "load_metric"]

_LOADED: dict[tuple[str, float, bool], object] = {}


def _resolve(path: str | Path, caller_file: str | None) -> Path:
    p = Path(path)
    if p.is_file() or p.is_absolute():
        return p
    if caller_file:
        beside = Path(caller_file).resolve().parent / p
        if beside.is_file():
            return beside
    return p


def load_metric(metric, *, lm=None, trust: bool = False, _caller_file: str | None = None):
    """An :class:`~pytest_nlgeval.induction.artifact.InducedMetric` from a path (relative to the working
    directory or to the calling test file), loaded once per file version; metrics pass through.

    The file's content hash is verified unless ``trust`` (for a hand-edited file under review)."""
    from pytest_nlgeval.induction.artifact import InducedMetric

    if isinstance(metric, InducedMetric):
        if lm is not None:
            metric.set_lm(lm)
        return metric
    if not isinstance(metric, (str, Path)):
        raise TypeError(
            f"assert_metric takes the path of an induced-metric artifact (or an InducedMetric), "
            f"got {type(metric).__name__}"
        )
    path = _resolve(metric, _caller_file)
    if not path.is_file():
        raise FileNotFoundError(
            f"induced metric {str(metric)!r} not found (looked in {Path.cwd()}"
            + (f" and beside {_caller_file}" if _caller_file else "")
            + "); create it with `nlgeval induce DATA --task ... --target COLUMN -o FILE`"
        )
    key = (str(path.resolve()), path.stat().st_mtime, bool(trust))
    loaded: Any = _LOADED.get(key)
    if loaded is None:
        loaded = InducedMetric.load(path, trust=trust)
        _LOADED[key] = loaded
    if lm is not None:
        loaded.set_lm(lm)
    return loaded


def _explainer(evaluation, metric):
    def explain(score, op, threshold) -> list[str]:
        lines = [
            f"induced metric {metric.name!r} (target {metric.target!r}, label range "
            f"{metric.label_range[0]:g}-{metric.label_range[1]:g}); component contributions:"
        ]
        for name in sorted(evaluation.contributions, key=lambda n: evaluation.contributions[n]):
            line = f"  {name}: {evaluation.contributions[name]:+.3f} (value {evaluation.components[name]:.4g})"
            if name in evaluation.rationales:
                line += f"  - {evaluation.rationales[name][:160]}"
            lines.append(line)
        out = (score.details.get("inputs") or {}).get("output")
        if out is not None:
            shown = " ".join(str(out).split())
            lines.append(f"output: {shown[:120]!r}")
        return lines

    return explain


def _run_recorder():
    """The current run's check recorder, looked up once per assertion and handed to its scores."""
    from pytest_nlgeval.core import run

    return run.active().recorder


def _make_score(metric, evaluation, output, input, references, recorder):
    from pytest_nlgeval.induction.artifact import JudgeParseError
    from pytest_nlgeval.core.score import Score

    if evaluation.errors or not math.isfinite(evaluation.value):
        raise JudgeParseError(
            f"induced metric {metric.name!r}: no score for this output, a judge's answer could not be parsed "
            "after one retry: " + "; ".join(f"{k}: {v[:160]}" for k, v in evaluation.errors.items())
        )
    details = {
        "inputs": {
            "output": output,
            **({"input": input} if input is not None else {}),
            **({"references": references} if references is not None else {}),
        },
        "artifact": str(metric.path) if metric.path else None,
        "components": evaluation.components,
        "contributions": evaluation.contributions,
        "rationales": evaluation.rationales,
        "metric_card": metric.card(),
    }
    return Score(
        evaluation.value,
        name=metric.name,
        kind="metric",
        task=None,
        details=details,
        evaluator_id=metric.fingerprint_id,
        evaluator_fingerprint=metric.fingerprint,
        explain=_explainer(evaluation, metric),
        recorder=recorder,
    )


def assert_metric(output: str, metric, *, input: str | None = None, references=None, lm=None, trust: bool = False):
    """Score ``output`` with an induced metric; compare the result with a threshold to assert.

    ``output`` is the generated text. ``metric`` is the artifact path (``"metrics/helpful.json"``, relative
    to the working directory or to the test file) or a loaded
    :class:`~pytest_nlgeval.induction.artifact.InducedMetric`. ``input`` is the input the output answers and
    ``references`` the reference output(s), each passed when the metric uses it. ``lm`` is a ``dspy`` LM for
    metrics with judge components (default: the one named in the artifact). ``trust`` loads the artifact
    although its content hash does not match (a hand edit under review); ``nlgeval metrics seal FILE``
    re-seals it for good.

    Returns a :class:`pytest_nlgeval.core.score.Score` (kind ``"metric"``) on the scale of the human labels.

        assert_metric(answer, "metrics/helpful.json", input=question) >= 3.5
    """
    __tracebackhide__ = True
    caller = inspect.stack(0)[1].filename
    induced = load_metric(metric, lm=lm, trust=trust, _caller_file=caller)
    if not isinstance(output, str):
        raise TypeError(f"assert_metric: output must be a string, got {type(output).__name__}")
    evaluation = induced.evaluate([output], [input], [references])[0]
    return _make_score(induced, evaluation, output, input, references, _run_recorder())


def assert_metrics(
    outputs: Sequence[str],
    metric,
    *,
    inputs: Sequence[str | None] | None = None,
    references: Sequence | None = None,
    lm=None,
    trust: bool = False,
):
    """Score many outputs in one batch; returns a :class:`pytest_nlgeval.core.score.ScoreList`
    (``assert_metrics(answers, "metrics/helpful.json", inputs=questions).mean() >= 3.5``)."""
    from pytest_nlgeval.core.score import ScoreList

    caller = inspect.stack(0)[1].filename
    induced = load_metric(metric, lm=lm, trust=trust, _caller_file=caller)
    outputs = list(outputs)
    n = len(outputs)
    inputs = list(inputs) if inputs is not None else [None] * n
    references = list(references) if references is not None else [None] * n
    evaluations = induced.evaluate(outputs, inputs, references)
    recorder = _run_recorder()
    scores = [
        _make_score(induced, ev, o, i, r, recorder) for ev, o, i, r in zip(evaluations, outputs, inputs, references)
    ]
    return ScoreList(scores, name=induced.name)
