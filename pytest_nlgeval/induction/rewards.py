"""An induced metric as a reward: a GEPA-compatible DSPy metric, and a TRL-style reward function.

Example::

    >>> from pytest_nlgeval.induction import as_dspy_metric, as_reward_fn           # doctest: +SKIP
    >>> metric = as_dspy_metric("metrics/helpful.json", output_field="answer", input_field="question")  # doctest: +SKIP
    >>> dspy.GEPA(metric=metric, auto="light", reflection_lm=lm).compile(program, trainset=train)   # doctest: +SKIP
    >>> reward = as_reward_fn("metrics/helpful.json")                                 # doctest: +SKIP
    >>> reward(["Use vinegar."], prompts=["How do I descale a kettle?"])               # doctest: +SKIP
    [0.61]

Scores are normalised to [0, 1] with the label range stored in the artifact (``normalize=False`` keeps the
label scale). An output whose judge answer cannot be parsed has no score: by default that raises
:class:`~pytest_nlgeval.induction.artifact.JudgeParseError`; pass ``failure_score=`` to give such outputs a
fixed reward explicitly.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

__all__ = ["as_dspy_metric", "as_reward_fn"]


def _metric(metric, lm=None):
    from pytest_nlgeval.induction.artifact import InducedMetric

    if isinstance(metric, (str, Path)):
        return InducedMetric.load(metric, lm=lm)
    if not isinstance(metric, InducedMetric):
        raise TypeError(f"expected an InducedMetric or the path of its artifact, got {type(metric).__name__}")
    if lm is not None:
        metric.set_lm(lm)
    return metric


def _scale(metric, normalize: bool) -> Callable[[float], float]:
    lo, hi = metric.label_range
    if not normalize or hi <= lo:
        return float
    return lambda v: min(1.0, max(0.0, (float(v) - lo) / (hi - lo)))


def _field(obj, name: str | None):
    if name is None or obj is None:
        return None
    try:
        value = obj[name]
    except (KeyError, TypeError, AttributeError):
        value = getattr(obj, name, None)
    return value


def as_dspy_metric(
    metric,
    *,
    output_field: str | None = None,
    input_field: str | None = "input",
    references_field: str | None = None,
    normalize: bool = True,
    failure_score: float | None = None,
    lm=None,
):
    """A DSPy metric ``metric(gold, pred, trace=None, pred_name=None, pred_trace=None) -> dspy.Prediction``.

    The returned ``Prediction`` has ``score`` (a float; DSPy's ``Evaluate`` and optimisers sum and compare it)
    and ``feedback``: the judges' rationales and the components that pulled the score down, which GEPA's
    reflection reads.

    ``metric`` is an :class:`~pytest_nlgeval.induction.artifact.InducedMetric` or the path of its artifact.
    ``output_field`` is the field of ``pred`` holding the generated text (default: ``pred``'s only field),
    ``input_field`` the field of ``gold`` holding the input (``None``: no input is passed) and
    ``references_field`` the field of ``gold`` holding the reference(s), if the metric uses them.
    ``normalize`` maps the score onto [0, 1] by the artifact's label range. ``failure_score`` is the score of
    an output whose judge answer could not be parsed (default: raise). ``lm`` is the ``dspy`` LM for the
    metric's judges (default: the model named in the artifact).

        gepa_metric = as_dspy_metric("metrics/helpful.json", output_field="answer", input_field="question")
    """
    from pytest_nlgeval.induction.artifact import JudgeParseError
    from pytest_nlgeval.llm.cache import require_dspy

    dspy = require_dspy()
    induced = _metric(metric, lm)
    scale = _scale(induced, normalize)

    def text_of(pred) -> str:
        if output_field is not None:
            value = _field(pred, output_field)
            if value is None:
                raise KeyError(
                    f"prediction has no field {output_field!r}; pass output_field=... naming the program's output"
                )
            return str(value)
        keys = [k for k in (pred.keys() if hasattr(pred, "keys") else []) if k not in ("reasoning", "rationale")]
        if len(keys) != 1:
            raise KeyError(f"prediction has fields {keys}; pass output_field=... naming the generated text")
        return str(pred[keys[0]])

    def induced_metric(gold, pred, trace=None, pred_name=None, pred_trace=None):
        output = text_of(pred)
        inp = _field(gold, input_field)
        refs = _field(gold, references_field)
        ev = induced.evaluate([output], [None if inp is None else str(inp)], [refs])[0]
        if ev.errors or not math.isfinite(ev.value):
            if failure_score is None:
                raise JudgeParseError(f"induced metric {induced.name!r}: no score for this output: {ev.errors}")
            return dspy.Prediction(
                score=float(failure_score),
                feedback="The judge's answer could not be parsed, so this output has no score.",
            )
        score = scale(ev.value)
        feedback = (
            f"{induced.target} scored {ev.value:.2f} on the human label scale "
            f"({induced.label_range[0]:g}-{induced.label_range[1]:g}).\n"
            "Weakest parts of the score:\n" + ev.feedback()
        )
        return dspy.Prediction(score=score, feedback=feedback)

    induced_metric.__name__ = f"induced_{induced.name}"
    return induced_metric


def _completion_text(item: Any) -> str:
    """TRL passes plain strings, or for conversational data a list of ``{"role", "content"}`` messages."""
    if isinstance(item, str):
        return item
    if isinstance(item, dict) and "content" in item:
        return str(item["content"])
    if isinstance(item, (list, tuple)) and item:
        assistant = [m for m in item if isinstance(m, dict) and m.get("role") == "assistant"]
        candidates: list[Any] = assistant or [m for m in item if isinstance(m, dict)]
        last = candidates[-1] if candidates else None
        if last is not None and "content" in last:
            return str(last["content"])
    raise TypeError(f"cannot read a completion from {type(item).__name__}; pass strings or lists of chat messages")


def _prompt_text(item: Any) -> str | None:
    if item is None:
        return None
    if isinstance(item, str):
        return item
    if isinstance(item, (list, tuple)):
        users = [m for m in item if isinstance(m, dict) and m.get("role") == "user"]
        if users:
            return str(users[-1].get("content", ""))
    return _completion_text(item)


def as_reward_fn(
    metric, *, normalize: bool = True, references_key: str = "references", failure_score: float | None = None, lm=None
):
    """A TRL-style reward function ``reward(completions, prompts=None, **kw) -> list[float]``.

    ``completions`` (and ``prompts``) are strings or chat message lists, as TRL's GRPO trainer passes them;
    extra dataset columns arrive as keyword lists, and ``kw[references_key]`` (if present) gives references.
    The prompt is passed to the metric as the input. Scores are batched in one call of the metric; ``lm``
    serves the metric's judges (default: the model named in the artifact).
    """
    from pytest_nlgeval.induction.artifact import JudgeParseError

    induced = _metric(metric, lm)
    scale = _scale(induced, normalize)

    def reward(completions, prompts=None, **kw) -> list[float]:
        outputs = [_completion_text(c) for c in completions]
        n = len(outputs)
        inputs = [_prompt_text(p) for p in prompts] if prompts is not None else [None] * n
        refs = kw.get(references_key)
        refs = list(refs) if refs is not None else [None] * n
        if len(inputs) != n or len(refs) != n:
            raise ValueError(f"got {n} completions, {len(inputs)} prompts and {len(refs)} references")
        values = induced.score_batch(outputs, inputs, refs)
        out = []
        for i, v in enumerate(values):
            if not math.isfinite(v):
                if failure_score is None:
                    raise JudgeParseError(
                        f"induced metric {induced.name!r}: completion {i} has no score "
                        "(a judge answer could not be parsed); pass failure_score=... to reward "
                        "such completions with a fixed value"
                    )
                out.append(float(failure_score))
            else:
                out.append(scale(v))
        return out

    reward.__name__ = f"induced_{induced.name}"
    return reward
