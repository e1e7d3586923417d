"""Each UniEval dimension (Zhong et al., 2022) as a metric of the bank.

A thin adapter over :class:`pytest_nlgeval.core.evaluator.Evaluator`, which builds the Boolean-QA input texts
of UniEval's public code, maszhongming/UniEval (``'question: ' + Q + ' </s> ' + field + ': ' + text ...``), splits
sentences for the per-sentence dimensions, caches scores by evaluator fingerprint and runs the ONNX model in
batches. The metric protocol's arguments map onto the dimension's fields:

=================  =============================================================================
protocol argument  dimension argument
=================  =============================================================================
``output``         the output field (summary / claim / paragraph / response / utterance / sentence)
``input``          ``document`` (summarization, fact) or ``dialogue history`` (every dialogue dimension)
``references``     ``reference`` (summarization relevance, data2text informativeness)
``context``        ``fact`` (dialogue engagingness and groundedness; the UniEval data's "context")
=================  =============================================================================

UniEval scores one reference; with several, ``multi_ref="mean"`` (default) averages the scores over
references, ``"max"`` takes the best and ``"first"`` uses the first only.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> m = get_metric("unieval_summarization_fluency", model="models/unieval-sum")  # doctest: +SKIP
    >>> m.score("The cat sat on the mat.")  # doctest: +SKIP
    0.93
"""

from __future__ import annotations

from pytest_nlgeval.metrics.base import Metric, MetricInputError


def _dimension(task: str, dimension: str):
    from pytest_nlgeval.core.dimensions import DimensionRegistry

    return DimensionRegistry().get(dimension, task)


class UniEvalDimension(Metric):
    """One UniEval dimension of one task, scored by the ONNX Boolean-QA evaluator.

    ``task`` is ``summarization``, ``dialogue``, ``data2text`` or ``fact``; ``dimension`` a dimension of that
    task (UniEval's public code, maszhongming/UniEval). ``model`` is a model folder, a Hugging Face id, or
    ``None`` for the runtime's embedded default. ``device``, ``precision``, ``batch_size``, ``cache`` and
    ``cache_dir`` are passed to the :class:`Evaluator`; ``evaluator`` is an existing :class:`Evaluator` to
    share (its model settings win). ``multi_ref`` says how several references combine: ``"mean"``, ``"max"``
    or ``"first"`` (anything else raises :class:`ValueError`). ``source_windows`` is ``"auto"`` (long
    documents in overlapping sentence windows) or ``"off"`` (the tail is cut, as UniEval does); see
    :mod:`pytest_nlgeval.core.windows`.
    """

    def __init__(
        self,
        task: str,
        dimension: str,
        model: str | None = None,
        device: str = "auto",
        precision: str = "auto",
        batch_size: int | None = None,
        cache: bool = True,
        cache_dir: str | None = None,
        evaluator=None,
        multi_ref: str = "mean",
        source_windows: str = "auto",
    ):
        if multi_ref not in ("mean", "max", "first"):
            raise ValueError(f"multi_ref must be 'mean', 'max' or 'first', got {multi_ref!r}")
        self.task = task
        self.dimension = dimension
        self.multi_ref = multi_ref
        self._spec = _dimension(task, dimension)  # light: the catalogue only, raises for unknown names
        self.name = f"unieval_{task}_{dimension}"
        # engagingness is a sum over sentences (range [0, inf)); every dimension: higher is better
        args = self._spec.arguments
        self.needs_input = "source" in args or "context" in args
        # Where the protocol's input goes. In the dialogue task it is the dialogue history, handed to every
        # dimension as assert_dimension(context=...) hands it: the model may judge a reply in its dialogue even
        # where the question has no history field (naturalness and understandability are read together with
        # the reply's coherence with the history; see Evaluator._in_context). Elsewhere it is the document,
        # handed to the dimensions that read it.
        self._input_argument = "context" if task == "dialogue" or "context" in args else "source"
        self._passes_input = task == "dialogue" or self._input_argument in args
        self.needs_references = "reference" in args
        self.uses_context = self.needs_context = "fact" in args
        self._evaluator = evaluator
        self._evaluator_kwargs = dict(
            model=model,
            device=device,
            precision=precision,
            batch_size=batch_size,
            cache=cache,
            cache_dir=cache_dir,
            source_windows=source_windows,
        )

    @property
    def evaluator(self):
        """The :class:`Evaluator` (created on first use; the ONNX session only when a text is scored)."""
        if self._evaluator is None:
            from pytest_nlgeval.core.evaluator import Evaluator

            kw = dict(self._evaluator_kwargs)
            model = kw.pop("model")
            self._evaluator = Evaluator(model, **kw)
        return self._evaluator

    def _score_many_with_context(self, outputs, inputs, references, contexts):
        args = self._spec.arguments
        rows: list[int] = []  # which output each evaluator row belongs to
        cols = {"sources": [], "contexts": [], "references": [], "facts": []}
        outs = []
        for i, out in enumerate(outputs):
            refs = references[i] if "reference" in args else [None]
            if self.multi_ref == "first":
                refs = refs[:1]
            for ref in refs:
                rows.append(i)
                outs.append(out)
                # the protocol's input is the document (summarization, fact) or the dialogue history
                given = inputs[i] if self._passes_input else None
                cols["sources"].append(given if self._input_argument == "source" else None)
                cols["contexts"].append(given if self._input_argument == "context" else None)
                cols["references"].append(ref)
                cols["facts"].append(contexts[i] if "fact" in args else None)
        kwargs = {k: v for k, v in cols.items() if any(x is not None for x in v)}
        from pytest_nlgeval.core.dimensions import InputError

        try:
            values = self.evaluator.score_batch(outs, self.dimension, task=self.task, **kwargs)
        except InputError as exc:
            raise MetricInputError(f"metric {self.name!r}: {exc}") from exc
        grouped: list[list[float]] = [[] for _ in outputs]
        for i, v in zip(rows, values):
            grouped[i].append(v)
        if self.multi_ref == "max":
            return [max(g) for g in grouped]
        return [sum(g) / len(g) for g in grouped]

    def _score_many(self, outputs, inputs, references):
        return self._score_many_with_context(outputs, inputs, references, [None] * len(outputs))

    def _score(self, output, input, references):
        return self._score_many([output], [input], [references])[0]

    def _feedback(self, output, input, references, value):
        d = self._spec
        unit = "per sentence, " + d.aggregation if d.unit == "sentence" else "whole text"
        return f"UniEval {self.task}/{self.dimension} = {value:.3f} (question: {d.question!r}; {unit})."

    def _options(self):
        opts = {"task": self.task, "dim": self.dimension}
        if self._spec.window:
            opts["windows"] = (
                self._evaluator.source_windows
                if self._evaluator is not None
                else self._evaluator_kwargs["source_windows"]
            )
        if self.needs_references:
            opts["refs"] = self.multi_ref
        return opts

    def _versions(self):
        # the evaluator fingerprint (model files' sha256, provider, precision, runtime) identifies the scorer
        return {"evaluator": self.evaluator.fingerprint_id}
