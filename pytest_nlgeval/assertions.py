"""``assert_dimension``, ``assert_dimensions``, ``assert_judged`` and ``assert_score``: the assertions of the DSL.

    from pytest_nlgeval import assert_dimension, assert_dimensions, assert_judged, assert_score

    assert_dimension(summary, "consistency", source=article) > 0.7
    assert_dimension(reply, "groundedness", task="dialogue", fact=knowledge) >= 0.6
    assert_dimensions(summaries, "fluency").fraction(above=0.7) >= 0.9
    assert_score(len(answer.split()), "answer_words") <= 120     # a number of your own, recorded as a check
    assert_judged(answer, "The answer names the refund deadline.", input=question) >= 4   # an LLM judge

The task comes from ``task=``, else from the test's ``@pytest.mark.nlgeval(task=...)``, else
``summarization``; the evaluator from ``evaluator=``, else the session's (the marker's ``model=`` picks
another model for one test).
"""

from __future__ import annotations

from typing import Sequence

from pytest_nlgeval.core import run as _run
from pytest_nlgeval.core.dimensions import DEFAULT_TASK, hide_user_errors
from pytest_nlgeval.core.score import Score, ScoreList

__all__ = ["assert_dimension", "assert_dimensions", "assert_judged", "assert_score"]


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

        assert_dimension(summary, "consistency", source=article) > 0.7
        assert_dimension(answer, "faithfulness", task="rag", question=q, contexts=passages) > 0.7
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

        assert_dimensions(summaries, "consistency", sources=articles).mean() > 0.8
        assert_dimensions(summaries, "fluency").fraction(above=0.7) >= 0.9
        assert_dimensions(answers, "faithfulness", task="rag", contexts=retrieved).mean() > 0.8

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
