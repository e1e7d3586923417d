"""The evaluator: dimension specs in, scores out, through the scorers the model folder declares.

An :class:`Evaluator` holds its configuration (model, device, precision, batch size, cache), plans each output's
units for each dimension, hands those of many outputs to the dimension's scorers in one batch (the way of scoring
the model folder declares, then each refinement it asks for: :mod:`pytest_nlgeval.core.scorers`) and aggregates
their readings into :class:`~pytest_nlgeval.core.score.Score` objects. Sessions, the fingerprint and the cache
are its :class:`~pytest_nlgeval.core.models.ModelSessions` half: a warm re-run of an unchanged suite builds none.

    >>> ev = Evaluator("models/unieval-sum", device="cpu")
    >>> ev.score("The cat sat on the mat.", "fluency") > 0.5
    True
    >>> ev.score_batch(["A summary.", "Another one."], "consistency", sources=[doc1, doc2])
    [0.91, 0.42]
"""

from __future__ import annotations

import os
from typing import Any, Callable, Sequence

from pytest_nlgeval.core.bounds import BOUNDED_UNITS, TAIL_CHARS, bounded_text, whole_text_chars
from pytest_nlgeval.core.cache import DEFAULT_CACHE_DIR
from pytest_nlgeval.core.dimensions import (
    DEFAULT_TASK,
    OVERALL,
    Dimension,
    DimensionError,
    DimensionRegistry,
    InputError,
    hide_user_errors,
    prepare_inputs,
)
from pytest_nlgeval.core.models import ModelSessions
from pytest_nlgeval.core.score import Score, ScoreList, proofs
from pytest_nlgeval.core.scorers.answers import checked_answer
from pytest_nlgeval.core.scorers.base import Planned
from pytest_nlgeval.core.scorers.boolqa import WHOLE_SOURCE_TOKENS
from pytest_nlgeval.core.scorers.registry import ScorerRegistry, default_scorers
from pytest_nlgeval.core.scorers.similarity import EVASIVE_CAP

__all__ = ["DEFAULT_CACHE_DIR", "EVASIVE_CAP", "Evaluator", "WHOLE_SOURCE_TOKENS"]


class Evaluator(ModelSessions):
    """Scores outputs on dimensions with one Boolean-QA model.

    ``model``: a model folder, a Hugging Face id, or None for the embedded default. ``device``:
    ``auto``/``cpu``/``cuda``; ``precision``: ``auto``/``fp32``/``fp16``/``int8``. ``batch_size``: the
    most inputs per ONNX call. ``cache``: True (``cache_dir``, default the user's cache folder,
    :func:`~pytest_nlgeval.core.cache.user_cache_dir`: ``~/.cache/pytest-nlgeval/scores`` on Linux; a pytest run
    uses ``.nlgeval-cache`` under its rootdir), False (no cache), or a
    :class:`~pytest_nlgeval.core.cache.ScoreCache`. ``registry``: the
    dimensions this evaluator knows (default: the built-in catalogue). ``source_windows``: ``auto``
    scores a long document in overlapping sentence windows where the dimension allows it
    (:mod:`pytest_nlgeval.core.windows`), ``off`` cuts the input's tail as UniEval does; the setting is part of
    the fingerprint, so scores of the two modes are never mixed. ``default_task``: the task of a call
    that names none, a name or a function that gives one (a pytest run passes the running test's).
    ``recorder``: where comparisons of the scores it makes are recorded when a call hands in none: a
    :class:`~pytest_nlgeval.core.checks.CheckRecorder`, a function that gives the current one (a run passes
    its own, so the ``nlgeval`` fixture's scores are recorded), or None (the default: nowhere).
    ``progress``: where a batch of many outputs (:data:`~pytest_nlgeval.core.progress.MIN_ITEMS` or more) draws
    its progress (:mod:`pytest_nlgeval.core.progress`): a stream, or None (the default: nowhere).
    ``scorers``: the ways of scoring by the names the model folder declares
    (:class:`~pytest_nlgeval.core.scorers.registry.ScorerRegistry`; default: the built-in ones).
    ``fact_checker``: a claim-support folder (``nlgeval export`` of MiniCheck or HHEM-2.1-Open, docs/checkers.md)
    that reads the claims of the fact dimensions instead of the folder's own head; None: the folder's.

    The evaluator knows nothing of pytest: the task, the inputs and where a comparison is recorded
    (``recorder=`` here or of :meth:`score`/:meth:`evaluate`) come in as arguments. It plans each output's units,
    hands those of many outputs to each dimension's scorers in one batch (:mod:`pytest_nlgeval.core.scorers`) and
    aggregates their readings; it is also what the scorers reach the models and the cache through.
    """

    def __init__(
        self,
        model: str | os.PathLike | None = None,
        *,
        device: str = "auto",
        precision: str = "auto",
        batch_size: int | None = None,
        cache: Any = True,
        cache_dir: str | os.PathLike | None = None,
        threads: int | None = None,
        registry: DimensionRegistry | None = None,
        model_cache_dir: str | os.PathLike | None = None,
        source_windows: str = "auto",
        default_task: str | Callable[[], str] = DEFAULT_TASK,
        max_windows: int | None = None,
        recorder: Any = None,
        progress: Any = None,
        scorers: ScorerRegistry | None = None,
        fact_checker: str | os.PathLike | None = None,
    ) -> None:
        from nlgeval_runtime.session import check_options

        from pytest_nlgeval.core.windows import check_mode

        check_options(device, precision)
        self.source_windows = check_mode(source_windows)
        if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) < 1):
            raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
        if max_windows is not None and (isinstance(max_windows, bool) or int(max_windows) < 1):
            raise ValueError(f"max_windows must be a positive integer, got {max_windows!r}")
        #: the most source windows one unit may be scored against (None: no cap; :mod:`.scorers.boolqa`)
        self.max_windows = None if max_windows is None else int(max_windows)
        self.model = None if model is None else os.fspath(model)
        self.device = device
        self.precision = precision
        self.batch_size = None if batch_size is None else int(batch_size)
        self.threads = threads
        self.model_cache_dir = model_cache_dir
        self.registry = registry if registry is not None else DimensionRegistry()
        self.scorers = scorers if scorers is not None else default_scorers()
        self.fact_checker = None if fact_checker is None else os.fspath(fact_checker)
        self.default_task = default_task
        self.recorder = recorder
        self.progress = progress
        if cache is True:
            from pytest_nlgeval.core.cache import ScoreCache, user_cache_dir

            cache = ScoreCache.in_folder(cache_dir or user_cache_dir())
        self.cache = cache or None
        self._scorer = None
        self._graph_scorers: dict = {}  # sub-folder name -> its scorer (see :meth:`_graph_scorer`)
        self._folder = None
        self._fingerprint: dict | None = None
        self._fingerprint_id: str | None = None
        self._planner = None
        self._resources: dict[tuple, Any] = {}  # what scorers keep for the evaluator's length (see :meth:`resource`)
        #: texts sent to the model / answered by the cache, and ONNX sessions created, by this evaluator
        self.stats = {"scored": 0, "cached": 0, "sessions": 0, "calls": 0}

    def __repr__(self) -> str:
        return (
            f"Evaluator(model={self.model or 'default'!r}, device={self.device!r}, "
            f"precision={self.precision!r}, source_windows={self.source_windows!r}, "
            f"cache={'on' if self.cache else 'off'}"
            + (f", fact_checker={self.fact_checker!r})" if self.fact_checker else ")")
        )

    # -- dimensions --------------------------------------------------------------------------------------
    def dimension(self, name: str, task: str | None = None) -> Dimension:
        return self.registry.get(name, task)

    def evaluate(
        self,
        outputs: Sequence[str],
        dimension: str,
        *,
        sources=None,
        references=None,
        contexts=None,
        facts=None,
        task: str | None = None,
        source=None,
        reference=None,
        context=None,
        fact=None,
        questions=None,
        question=None,
        recorder=None,
    ) -> ScoreList:
        """Score many outputs on one dimension in one batched call; returns a :class:`ScoreList`.

        Per-case inputs are lists (``sources=[...]``); one shared input is a single value (``source=...``).
        In the rag task ``contexts=[[...], ...]`` holds each output's retrieved passages and ``context=[...]``
        passages shared by all.
        ``recorder``: where comparisons of the scores are recorded (None: the evaluator's own, see
        :class:`Evaluator`).
        """
        __tracebackhide__ = hide_user_errors
        task = self._task(task)
        if isinstance(outputs, str) or not isinstance(outputs, Sequence):
            raise InputError(
                f"outputs must be a list of strings, got {type(outputs).__name__}; "
                "use assert_dimension / Evaluator.score for a single output"
            )
        if len(outputs) == 0:
            raise InputError("outputs is an empty list: there is nothing to score")
        per_case = per_case_values(
            len(outputs),
            sources=(sources, source),
            references=(references, reference),
            contexts=(contexts, context),
            facts=(facts, fact),
            questions=(questions, question),
        )
        labels = [f"outputs[{i}]" for i in range(len(outputs))]
        recorder = self._recorder(recorder)
        from pytest_nlgeval.core.progress import MIN_ITEMS, progress

        if self.progress is None or len(outputs) < MIN_ITEMS:
            return self._evaluate(outputs, dimension, task, per_case, labels, recorder)
        # a long batch in parts of PROGRESS_PART outputs, with a status line (scores do not depend on batching)
        scores: list[Score] = []
        with progress(len(outputs), f"nlgeval {task}/{dimension}", unit="output", stream=self.progress) as bar:
            for start in range(0, len(outputs), PROGRESS_PART):
                end = start + PROGRESS_PART
                part = self._evaluate(
                    outputs[start:end], dimension, task, per_case[start:end], labels[start:end], recorder
                )
                scores.extend(part)
                bar.update(len(part))
        return ScoreList(scores, name=dimension, task=task, labels=list(outputs))

    def _recorder(self, recorder):
        """The recorder a call handed in, else the evaluator's own (a recorder, or a function that gives one)."""
        if recorder is not None:
            return recorder
        return self.recorder() if callable(self.recorder) else self.recorder

    def _task(self, task: str | None) -> str:
        """``task``, else the default task (a name, or a function that names it)."""
        if task:
            return task
        default = self.default_task() if callable(self.default_task) else self.default_task
        return default or DEFAULT_TASK

    def _evaluate(
        self, outputs, dimension: str, task: str, per_case: list[dict], labels: list[str], recorder=None
    ) -> ScoreList:
        """Plan every output's units of every member dimension, hand each dimension's to its scorers in one
        batch, and aggregate the readings into one :class:`Score` per output."""
        __tracebackhide__ = hide_user_errors
        members = [self._as_served(dim) for dim in self._members(dimension, task)]
        batches: dict[str, list[Planned]] = {dim.name: [] for dim in members}
        unread: dict[tuple[int, str], int] = {}  # (case, dimension) -> claims before the cap
        head = whole_text_chars(self.folder.max_length)
        cut: dict[int, str] = {}  # case -> how much of a long output the bounded dimensions read
        for i, output in enumerate(outputs):  # every input is checked before any model runs
            for dim in members:
                # an output read whole or by its sentences is bounded before it is tokenized and split
                # (pytest_nlgeval.core.bounds): a 10 MB dump costs about what a long article costs
                read = output
                if dim.unit in BOUNDED_UNITS and isinstance(output, str):
                    read = bounded_text(output, head)
                    if len(read) < len(output):
                        cut[i] = f"the first {head:,} and the last {TAIL_CHARS:,} of {len(output):,} characters"
                units, texts = prepare_inputs(dim, read, per_case[i], label=labels[i])
                if dim.unit == "claim" and len(units) > MAX_CLAIMS:
                    # a runaway output (a 200,000-character dump) costs bounded time; the score says so
                    unread[(i, dim.name)] = len(units)
                    units, texts = units[:MAX_CLAIMS], texts[:MAX_CLAIMS]
                batches[dim.name].append(Planned(i, units, texts, per_case[i]))
        for dim in members:
            spec = self._served(dim)
            for scorer in self.scorers.chain(spec):
                # a part's answer is checked before it is aggregated: one reading per unit, each in [0, 1]
                answer = checked_answer(
                    scorer, dim, batches[dim.name], scorer.score(dim, spec, batches[dim.name], self)
                )
                for planned, readings in zip(batches[dim.name], answer):
                    planned.readings = readings
        by_case: list[dict[str, tuple]] = [dict() for _ in outputs]
        for dim in members:
            for planned in batches[dim.name]:
                by_case[planned.case][dim.name] = (dim, planned.units, planned.readings)
            partner = self._served(dim).get("in_context_of")
            if partner:
                self._in_context(dim, partner, outputs, task, per_case, labels, by_case)
        fingerprint, fid = self.fingerprint, self.fingerprint_id
        scores = []
        for i, output in enumerate(outputs):
            inputs = {"output": output, **{k: v for k, v in per_case[i].items() if v is not None}}
            score = _make_score(dimension, task, by_case[i], inputs, fid, fingerprint, recorder)
            for (case, name), total in unread.items():
                if case == i:
                    score.details["claims_read"] = f"the first {MAX_CLAIMS} of {total} claims ({name})"
            if i in cut:
                score.details["text_read"] = cut[i]
            scores.append(score)
        return ScoreList(scores, name=dimension, task=task, labels=list(outputs))

    def _in_context(self, dim, partner: str, outputs, task: str, per_case, labels, by_case) -> None:
        """``dim``'s scores as the geometric mean of the model's answer and the output's score on ``partner``
        (a dimension of the same task): "a natural response *in the dialogue*" asks that the reply reads
        naturally and that it answers this dialogue. Updates ``by_case`` in place; the partner's scores are
        not recorded as checks."""
        import dataclasses
        import math

        needed = self.registry.get(partner, task).arguments
        # an output given without the partner's inputs (a reply without its history) keeps the model's answer
        cases = [i for i in range(len(outputs)) if all(per_case[i].get(a) is not None for a in needed)]
        if not cases:
            return
        others = self._evaluate(
            [outputs[i] for i in cases], partner, task, [per_case[i] for i in cases], [labels[i] for i in cases], None
        )
        for i, other in zip(cases, others):
            d, units, readings = by_case[i][dim.name]
            fitted = [dataclasses.replace(r, score=math.sqrt(max(0.0, r.score) * float(other))) for r in readings]
            by_case[i][dim.name] = (d, units, fitted)

    def score(
        self,
        output: str,
        dimension: str,
        *,
        source=None,
        reference=None,
        context=None,
        fact=None,
        task: str | None = None,
        question=None,
        contexts=None,
        recorder=None,
    ) -> Score:
        """Score one output; compare the returned :class:`Score` with a threshold to assert.

        ``question`` and ``contexts`` (the retrieved passages, a list) are the inputs of the rag task.

        ``recorder``: where the comparison is recorded (``assert_dimension`` hands in its run's); None, the
        default, means the evaluator's own (see :class:`Evaluator`).
        """
        __tracebackhide__ = hide_user_errors
        if contexts is not None:
            if context is not None:
                raise InputError("pass the retrieved passages once: contexts=[...] (or context=...), not both")
            if isinstance(contexts, str):
                raise InputError("contexts= is a list of retrieved passages; wrap a single passage: contexts=[text]")
            context = contexts
        values = {"source": source, "reference": reference, "context": context, "fact": fact, "question": question}
        per_case = [{k: v for k, v in values.items() if v is not None}]
        return self._evaluate([output], dimension, self._task(task), per_case, ["output"], self._recorder(recorder))[0]

    @staticmethod
    def samples(fn, *args, n: int = 5, **kwargs):
        """``fn(*args, **kwargs)`` called ``n`` times: :func:`pytest_nlgeval.core.sampling.samples`, offered on the
        ``nlgeval`` fixture (``nlgeval.samples(app, question, n=5)``)."""
        from pytest_nlgeval.core.sampling import samples

        return samples(fn, *args, n=n, **kwargs)

    def score_batch(self, outputs: Sequence[str], dimension: str, **inputs) -> list[float]:
        """Plain numbers for many outputs (one batched call); same arguments as :meth:`evaluate`."""
        __tracebackhide__ = hide_user_errors
        return [float(s) for s in self.evaluate(outputs, dimension, **inputs)]

    def _members(self, dimension: str, task: str) -> list[Dimension]:
        __tracebackhide__ = hide_user_errors
        if dimension == OVERALL:
            if task not in self.registry.tasks():
                raise DimensionError(f"unknown task {task!r}; valid tasks: {', '.join(self.registry.tasks())}")
            members = self.registry.overall_members(task)
        else:
            members = [self.registry.get(dimension, task)]
        for dim in members:
            self._served(dim)
        return members

    def _as_served(self, dim: Dimension) -> Dimension:
        """``dim`` as the model reads it: with only the fields its declaration names (``fields``), e.g.
        a coherence question asked about the summary alone, and its ``unit`` (``whole`` or ``sentence``);
        unchanged without such a declaration."""
        spec = self._served(dim)
        fields, unit, aggregation = spec.get("fields"), spec.get("unit"), spec.get("aggregation")
        whole = self.scorers.reads_whole(spec) and dim.window is not None
        if (
            (not fields or tuple(fields) == dim.fields)
            and (not unit or unit == dim.unit)
            and (not aggregation or aggregation == dim.aggregation)
            and not whole
        ):
            return dim
        import dataclasses

        changes: dict = {}
        if whole:
            changes["window"] = None  # e.g. a sentence encoder reads its texts whole (cut at its maximum length)
        if aggregation and aggregation != dim.aggregation:
            changes["aggregation"] = aggregation  # e.g. the weakest claim weighs in a fact score
        if unit and unit != dim.unit:
            changes["unit"] = unit  # e.g. fluency judged over the whole text, where repetition shows
        if fields and tuple(fields) != dim.fields:
            arguments = tuple(a for f, a in zip(dim.fields[1:], dim.arguments) if f in fields[1:])
            changes.update(
                fields=tuple(fields), arguments=arguments, window=dim.window if dim.window in arguments else None
            )
        return dataclasses.replace(dim, **changes)

    as_served = _as_served

    def _served(self, dim: Dimension) -> dict:
        """How the model answers ``dim`` (its ``dimensions.serves`` entry, its claims read by the fact checker when
        the evaluator has one; ``{}`` for a folder without a declaration); raises :class:`DimensionNotServedError`
        for a dimension the model cannot judge."""
        __tracebackhide__ = hide_user_errors
        declared = self.folder.dimensions
        spec = {} if declared is None else declared["serves"].get(dim.key)
        if spec is not None:
            if self.fact_checker is None:
                return spec
            from pytest_nlgeval.core.scorers.checker import with_checker

            return with_checker(spec, self.fact_checker, dim.key)
        assert declared is not None, "a folder without a declaration serves every dimension"
        from pytest_nlgeval.core.dimensions import DimensionNotServedError, released_checkpoint

        refused = declared.get("refuses", {}).get(dim.key)
        use = (refused or {}).get("use") or released_checkpoint(dim.task)
        model = "the embedded default model" if self.model is None else f"model {self.model!r}"
        if refused is not None:
            why = refused["reason"]
        elif not dim.builtin:
            if declared.get("zero_shot"):
                return {}
            why = (
                "it answers only the questions it was trained on, not custom zero-shot questions "
                f"(it serves: {', '.join(sorted(declared['serves']))})"
            )
        else:
            why = f"its model folder does not declare {dim.key} among the dimensions it serves"
        raise DimensionNotServedError(
            f"{model} cannot judge {dim.key}: {why}. Score it with a checkpoint that can, e.g. "
            f"--nlgeval-model {use} (or Evaluator(model={use!r})); `nlgeval probe MODEL` checks that a "
            "model's dimensions react to damaged text."
        )

    served = _served

    def close(self) -> None:
        """Release the model sessions and close the cache's connection (a shared cache reopens on next use)."""
        if self.cache is not None:
            self.cache.close()
        self._scorer = None
        self._graph_scorers.clear()
        self._resources.clear()


#: the claims of one output that a fact dimension reads at most (about a minute on 2 CPU cores for a long
#: article); the rest are not scored, and the score's details and explanation say so
MAX_CLAIMS = 200
#: outputs per part of a long batch that draws its progress
PROGRESS_PART = 64


def per_case_values(n: int, **pairs) -> list[dict[str, Any]]:
    """Per-case argument dicts from ``name=(list_or_None, shared_or_None)`` pairs."""
    __tracebackhide__ = hide_user_errors
    cases: list[dict[str, Any]] = [dict() for _ in range(n)]
    for plural, (many, one) in pairs.items():
        argument = plural[:-1]
        if many is not None and one is not None:
            raise InputError(f"pass either {plural}=[...] (one per output) or {argument}=... (shared), not both")
        if many is not None:
            if isinstance(many, str) or not isinstance(many, Sequence):
                raise InputError(
                    f"{plural}= must be a list with one entry per output; for one shared value use {argument}=..."
                )
            if len(many) != n:
                hint = ""
                if plural == "contexts" and all(isinstance(v, str) for v in many):
                    hint = (
                        f"; if these {len(many)} passages are retrieved contexts shared by every output, pass "
                        "context=[...] instead (contexts=[[...], ...] holds one list of passages per output)"
                    )
                raise InputError(f"{plural}= has {len(many)} entries but there are {n} outputs{hint}")
            for case, value in zip(cases, many):
                case[argument] = value
        elif one is not None:
            for case in cases:
                case[argument] = one
    return cases


def _aggregate(dim: Dimension, unit_scores: list[float], proven: Sequence[float] = ()) -> float:
    """The units' scores combined as the dimension says; a unit an explicit check proved wrong (``proven``: its
    score, already at most the folder's cap) bounds the result, so one wrong claim among fifteen fails as it
    fails alone."""
    if not unit_scores:
        return 1.0  # only a claim unit can be empty: an output that asserts nothing contradicts nothing
    if dim.aggregation == "sum":
        return float(sum(unit_scores))
    mean = float(sum(unit_scores) / len(unit_scores))
    if dim.aggregation == "min":
        value = float(min(unit_scores))
    elif dim.aggregation == "mean_min":
        value = (mean + float(min(unit_scores))) / 2
    else:
        value = mean
    return min(value, float(min(proven))) if proven else value


def _make_score(
    name: str, task: str, parts: dict[str, tuple], inputs: dict, fid: str, fingerprint: dict, recorder=None
) -> Score:
    """One output's :class:`Score`: each dimension's readings aggregated, an overall one the mean of its parts."""
    components = {}
    details: dict[str, Any] = {
        "inputs": {k: list(v) if isinstance(v, (list, tuple)) else v for k, v in inputs.items()},
        "truncated": False,
        "source_windows": fingerprint.get("source_windows", "off"),
    }
    for dim_name, (dim, units, readings) in parts.items():
        unit_scores = [r.score for r in readings]
        supports = [r.support for r in readings]
        proven = [r.score for r in readings if proofs(r.support)]
        components[dim_name] = _aggregate(dim, unit_scores, proven)
        details["truncated"] = details["truncated"] or any(r.truncated for r in readings)
        windowed = [w for w in supports if w is not None]
        if len(parts) == 1:
            details["aggregation"] = dim.aggregation
            details["unit"] = dim.unit
            if dim.unit != "whole":
                details["units"] = [
                    {"text": u, "score": s, **({"window": supports[k]} if supports[k] else {})}
                    for k, (u, s) in enumerate(zip(units, unit_scores))
                ]
            elif windowed:
                details["window"] = supports[0]
        elif windowed:
            details.setdefault("windows", {})[dim_name] = windowed
    if len(parts) == 1:
        value = next(iter(components.values()))
        explain = None
    else:
        # overall = mean of the evaluated dimensions (UniEval), engagingness sum included as it is.
        value = sum(components.values()) / len(components)
        details["components"] = components

        def explain(score, op, threshold, components=components):
            return ["mean of: " + ", ".join(f"{k} {v:.4f}" for k, v in components.items())]

    return Score(
        value,
        name=name,
        kind="dimension",
        task=task,
        details=details,
        evaluator_id=fid,
        evaluator_fingerprint=fingerprint,
        explain=explain,
        recorder=recorder,
    )
