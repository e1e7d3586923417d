"""``check_dimension``, ``assert_dimension``, ``assert_dimensions``, ``assert_judged`` and ``assert_score``: the
assertions of the DSL.

    from pytest_nlgeval import assert_dimension, assert_dimensions, assert_judged, assert_score, check_dimension

    check_dimension(summary, "consistency", source=article)               # > the recommended threshold, 0.2
    check_dimension(reply, "groundedness", task="dialogue", fact=knowledge, above=0.2)
    assert assert_dimension(summary, "fluency") > 0.8                     # the same check as an assert statement
    assert assert_dimensions(summaries, "fluency").fraction(above=0.8) >= 0.9
    assert assert_score(len(answer.split()), "answer_words") <= 120       # a number of your own, recorded
    assert assert_judged(answer, "The answer names the refund deadline.", input=question) >= 4   # an LLM judge

A comparison of a score asserts by itself (``assert_dimension(...) > 0.2`` raises when it fails), so the bare
form works too; linters flag a comparison whose result is unused (flake8-bugbear and ruff B015), which
``check_dimension(...)`` and ``assert ... > t`` are not. The recommended thresholds are
:data:`pytest_nlgeval.core.thresholds.THRESHOLDS` (``recommended_threshold(dimension, task)``), measured for the
embedded default model.

The task comes from ``task=``, else from the test's ``@pytest.mark.nlgeval(task=...)``, else
``summarization``; the evaluator from ``evaluator=``, else the session's (the marker's ``model=`` picks
another model for one test).
"""

from __future__ import annotations

from typing import Sequence

from pytest_nlgeval.core import run as _run
from pytest_nlgeval.core.dimensions import DEFAULT_TASK, hide_user_errors
from pytest_nlgeval.core.score import Score, ScoreList

__all__ = ["assert_dimension", "assert_dimensions", "assert_judged", "assert_score", "check_dimension"]


def _resolve(task: str | None, evaluator):
    """The run, looked up once here: the task, the evaluator and the recorder handed down as arguments."""
    run = _run.active()
    recorder = run.recorder
    marker = recorder.marker if recorder is not None else {}
    if evaluator is None:
        evaluator = run.evaluator(marker.get("model"))
    return task or marker.get("task") or DEFAULT_TASK, evaluator, recorder


def assert_dimension(
    output: str,
    dimension: str,
    *,
    source: str | None = None,
    reference: str | None = None,
    context: str | Sequence[str] | None = None,
    fact: str | Sequence[str] | None = None,
    task: str | None = None,
    evaluator=None,
    question: str | None = None,
    contexts: Sequence[str] | None = None,
) -> Score:
    """Score ``output`` on ``dimension``; compare the result with a threshold to assert.

    ``source`` is the document (summarization ``coherence``/``consistency``, ``fact``), ``reference`` a
    reference text (``relevance``, data2text ``informativeness``), ``context`` the dialogue history (a
    string or a list of turns), ``fact`` the knowledge of a dialogue turn. ``dimension="overall"`` is the
    mean of the task's dimensions. The rag task takes ``question`` and ``contexts`` (the retrieved passages),
    and ``reference`` for ``context_recall``.

    The score is the dimension's unit scores combined as the model folder declares (``score.details`` holds
    ``unit`` and ``aggregation``): ``mean`` (UniEval's average over sentences or the whole text), ``sum``
    (engagingness), ``min`` (the weakest unit) or ``mean_min``, (average + weakest) / 2. The embedded model
    reads summarization consistency, fact consistency and rag faithfulness claim by claim with ``mean_min``.
    A claim that an explicit check proves wrong (a number, date, name, role or negation the source contradicts)
    also bounds the score: it is at most that claim's.

        assert assert_dimension(summary, "consistency", source=article) > 0.2
        assert assert_dimension(answer, "faithfulness", task="rag", question=q, contexts=passages) > 0.2
    """
    __tracebackhide__ = hide_user_errors
    task, evaluator, recorder = _resolve(task, evaluator)
    extra = {k: v for k, v in (("question", question), ("contexts", contexts)) if v is not None}
    return evaluator.score(
        output,
        dimension,
        source=source,
        reference=reference,
        context=context,
        fact=fact,
        task=task,
        recorder=recorder,
        **extra,
    )


def check_dimension(
    output: str,
    dimension: str,
    *,
    above: float | None = None,
    source: str | None = None,
    reference: str | None = None,
    context: str | Sequence[str] | None = None,
    fact: str | Sequence[str] | None = None,
    task: str | None = None,
    evaluator=None,
    question: str | None = None,
    contexts: Sequence[str] | None = None,
) -> Score:
    """Score ``output`` on ``dimension`` and assert that the score is above ``above``, by default the recommended
    threshold of the task's dimension (:func:`~pytest_nlgeval.core.thresholds.recommended_threshold`); returns
    the :class:`Score`. It is :func:`assert_dimension` followed by ``> above``, written as a call, which linters
    accept as a statement. The inputs are those of :func:`assert_dimension`.

        check_dimension(summary, "consistency", source=article)            # > 0.2, the recommended threshold
        check_dimension(reply, "coherence", task="dialogue", context=history, above=0.35)  # the same, written out

    The recommended thresholds were measured for the embedded default model: with another model (an
    ``evaluator=``, ``--nlgeval-model`` or the marker's ``model=``), or a fact checker reading the fact
    dimensions' claims (``--nlgeval-fact-checker``), ``above=`` is required, as it is for a dimension with no
    recommended threshold (``overall``, a custom dimension).
    """
    __tracebackhide__ = _hide_failed_check
    task, evaluator, recorder = _resolve(task, evaluator)
    if above is None:
        above = _recommended(dimension, task, evaluator)
    elif isinstance(above, bool) or not isinstance(above, (int, float)):
        raise TypeError(f"check_dimension: above= must be a number such as 0.45, got {above!r}")
    extra = {k: v for k, v in (("question", question), ("contexts", contexts)) if v is not None}
    score = evaluator.score(
        output,
        dimension,
        source=source,
        reference=reference,
        context=context,
        fact=fact,
        task=task,
        recorder=recorder,
        **extra,
    )
    score.__gt__(above)  # records the check; raises AssertionError with the explanation when it fails
    return score


def _hide_failed_check(excinfo) -> bool:
    """``__tracebackhide__`` of :func:`check_dimension`: a failed check, like a user error, shows the test's line
    and the explanation, not this module's source."""
    return hide_user_errors(excinfo) or excinfo.errisinstance(AssertionError)


def _recommended(dimension: str, task: str, evaluator) -> float:
    """The recommended threshold of ``task/dimension`` for the embedded model; a ``TypeError`` that says to pass
    ``above=`` where there is none or the evaluator runs another model."""
    from pytest_nlgeval.core.thresholds import THRESHOLDS

    key = f"{task}/{dimension}"
    if key not in THRESHOLDS:
        raise TypeError(
            f"check_dimension: {key!r} has no recommended threshold (documented: {', '.join(sorted(THRESHOLDS))}); "
            f"pass one, e.g. check_dimension(..., above=0.5)"
        )
    if getattr(evaluator, "model", None) is not None:
        raise TypeError(
            f"check_dimension: the recommended thresholds were measured for the embedded default model, and this "
            f"evaluator runs {evaluator.model!r}; pass the threshold for it, e.g. check_dimension(..., above=0.5)"
        )
    if key in _CHECKER_READS and getattr(evaluator, "fact_checker", None) is not None:
        raise TypeError(
            f"check_dimension: the recommended threshold of {key!r} was measured with the embedded model reading "
            f"the claims, and this evaluator reads them with the fact checker {evaluator.fact_checker!r}; pass the "
            "threshold for it, e.g. check_dimension(..., above=0.5)"
        )
    return THRESHOLDS[key].value


#: the dimensions whose claims a fact checker (``--nlgeval-fact-checker``) reads instead of the embedded model
_CHECKER_READS = frozenset(
    {"summarization/consistency", "fact/consistency", "rag/faithfulness", "dialogue/groundedness"}
)


def assert_dimensions(
    outputs: Sequence[str],
    dimension: str,
    *,
    sources: Sequence | None = None,
    references: Sequence | None = None,
    contexts: Sequence | None = None,
    facts: Sequence | None = None,
    source=None,
    reference=None,
    context=None,
    fact=None,
    task: str | None = None,
    evaluator=None,
    questions: Sequence | None = None,
    question=None,
) -> ScoreList:
    """Score many outputs on ``dimension`` in one batched call; assert on an aggregate.

    Per-output inputs are lists (``sources=[...]``), an input shared by all outputs a single value
    (``source=...``).

        assert assert_dimensions(summaries, "consistency", sources=articles).min() > 0.2
        assert assert_dimensions(summaries, "fluency").fraction(above=0.8) >= 0.9
        assert assert_dimensions(answers, "faithfulness", task="rag", contexts=retrieved).min() > 0.2

    In the rag task ``contexts=`` holds each output's list of retrieved passages, ``questions=`` its question.
    """
    __tracebackhide__ = hide_user_errors
    task, evaluator, recorder = _resolve(task, evaluator)
    extra = {k: v for k, v in (("questions", questions), ("question", question)) if v is not None}
    result = evaluator.evaluate(
        outputs,
        dimension,
        sources=sources,
        references=references,
        contexts=contexts,
        facts=facts,
        source=source,
        reference=reference,
        context=context,
        fact=fact,
        task=task,
        recorder=recorder,
        **extra,
    )
    describe = getattr(outputs, "describe", None)
    if describe is not None:  # repeated samples of one call (pytest_nlgeval.samples): the spread is recorded
        result.samples = describe()
    return result


def assert_score(
    value: float, name: str, *, kind: str = "metric", task: str | None = None, details: dict | None = None
) -> Score:
    """A number of your own (a metric you compute, a judge of your own) as a :class:`Score` of this run:
    its comparison with a threshold asserts and is recorded as a check, so it appears in the results file,
    the report and the baseline like any other.

        assert_score(rouge_l(summary, reference), "rougeL", details={"reference": reference}) > 0.3

    A ``Score(...)`` made by hand is a plain value and records nothing; this is the way to record one.
    """
    __tracebackhide__ = hide_user_errors
    recorder = _run.active().recorder
    return Score(value, name=name, kind=kind, task=task, details=details, recorder=recorder)


def assert_judged(
    output,
    criterion: str,
    *,
    input: str | None = None,
    context=None,
    reference: str | None = None,
    scale=(1, 5),
    lm=None,
    name: str | None = None,
):
    """Judge ``output`` on ``criterion`` with the configured LLM judge; compare the result with a threshold.

    ``criterion``: a sentence saying what a good output does, or a built-in criterion of
    :data:`pytest_nlgeval.judges.criterion.RAG_CRITERIA` (``"rag/faithfulness"``, ``"rag/answer_relevance"``,
    ``"rag/context_relevance"``, ``"rag/context_recall"``). ``input``: what the application was asked; ``context``: the
    retrieved passages (a string or a list); ``reference``: a reference answer. ``scale``: the integer scale
    ``(low, high)``. ``lm``: a ``dspy`` LM or a model id instead of the configured judge
    (``--nlgeval-judge-lm``). ``name``: the check's name (default: the criterion's first words).

    ``output`` may be a list of outputs (e.g. :func:`pytest_nlgeval.samples`); the result is then a
    :class:`~pytest_nlgeval.core.score.ScoreList` for ``.mean()`` / ``.fraction(above=...)``.

        assert_judged(answer, "The answer is polite and names the refund deadline.", input=question) >= 4
    """
    __tracebackhide__ = True
    run = _run.active()
    from pytest_nlgeval.judges.session import run_judge

    judge = run_judge(run, lm)
    recorder = run.recorder
    if isinstance(output, (list, tuple)):
        from pytest_nlgeval.core.score import ScoreList

        if not output:
            raise TypeError("assert_judged: the list of outputs is empty; there is nothing to judge")
        scores = [
            judge.score(
                o,
                criterion,
                input=input,
                context=context,
                reference=reference,
                scale=scale,
                name=name,
                recorder=recorder,
            )
            for o in output
        ]
        describe = getattr(output, "describe", None)
        return ScoreList(
            scores,
            name=scores[0].name,
            task=scores[0].task,
            labels=[str(o) for o in output],
            samples=describe() if describe is not None else None,
        )
    return judge.score(
        output, criterion, input=input, context=context, reference=reference, scale=scale, name=name, recorder=recorder
    )
