"""The metric protocol: a small object configured in its constructor, with a pure ``score`` method.

Modelled on sacrebleu's metric objects and scikit-learn's estimator conventions: every option is a
constructor argument, ``score`` has no side effects, and :attr:`Metric.signature` states exactly how a
number was computed (metric, options, library and version), so two scores are only compared when their
signatures match.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> m = get_metric("distinct_2")
    >>> m.score("the cat sat on the mat")
    1.0
    >>> m.signature
    'distinct_2|n:2|tok:lower-word-punct|impl:pytest-nlgeval'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence, Union

from pytest_nlgeval.errors import NLGEvalError

References = Union[str, Sequence[str], None]


class MetricInputError(NLGEvalError, ValueError):
    """Bad input to a metric (missing references, mismatched batch lengths, non-string text)."""


class MetricUnavailableError(NLGEvalError, RuntimeError):
    """A metric's model or data is not installed or configured (WordNet, encoder weights, a causal LM);
    the message names what is missing and how to provide it."""


@dataclass(frozen=True)
class MetricResult:
    """A score with optional feedback text that says why (used by optimisers such as GEPA).

    >>> MetricResult(0.5, "half of the reference bigrams are covered").value
    0.5
    """

    value: float
    feedback: str | None = None

    def __float__(self) -> float:
        return float(self.value)


def _check_text(text: object, what: str, metric: str) -> str:
    if not isinstance(text, str):
        raise MetricInputError(
            f"metric {metric!r}: {what} must be a string, got {type(text).__name__}; "
            "pass the generated text itself (convert with str() if needed)"
        )
    return text


def normalize_references(references: References, metric: str, what: str = "references") -> list[str] | None:
    """Return references as a list of strings (``None`` stays ``None``).

    A single string is one reference; a list or tuple holds several references of one output.
    """
    if references is None:
        return None
    if isinstance(references, str):
        return [references]
    if isinstance(references, (list, tuple)):
        refs = list(references)
        for i, ref in enumerate(refs):
            _check_text(ref, f"{what}[{i}]", metric)
        return refs
    raise MetricInputError(
        f"metric {metric!r}: {what} must be a string or a list of strings, got {type(references).__name__}"
    )


class Metric:
    """Base class of every metric in the bank.

    Subclasses set the class attributes, take their options in ``__init__`` and implement
    :meth:`_score` (one output) and, where batching pays off (embeddings, neural scorers),
    :meth:`_score_many`. The public methods validate input once, here, so every metric reports
    bad input the same way.

    Attributes:
        name: registry name (``"rouge2"``).
        higher_is_better: whether a larger value means better text.
        needs_references: ``score`` raises :class:`MetricInputError` without references.
        needs_input: ``score`` raises :class:`MetricInputError` without the input/source text.
    """

    name: str = "metric"
    higher_is_better: bool = True
    needs_references: bool = False
    needs_input: bool = False
    #: extension: the metric also reads ``context`` (a dialogue's fact/knowledge); others ignore it
    uses_context: bool = False
    needs_context: bool = False

    # -- to implement ---------------------------------------------------------------------------
    def _score(self, output: str, input: str | None, references: list[str] | None) -> float:
        raise NotImplementedError

    def _score_many(
        self, outputs: list[str], inputs: list[str | None], references: list[list[str] | None]
    ) -> list[float]:
        return [self._score(o, i, r) for o, i, r in zip(outputs, inputs, references)]

    def _score_many_with_context(
        self,
        outputs: list[str],
        inputs: list[str | None],
        references: list[list[str] | None],
        contexts: list[str | None],
    ) -> list[float]:
        """Metrics with ``uses_context = True`` override this instead of :meth:`_score_many`."""
        return self._score_many(outputs, inputs, references)

    def _run(self, outputs, inputs, references, contexts) -> list[float]:
        from pytest_nlgeval.util.extras import named_extras

        # A metric imports its library on first use: a missing one names the extra to install.
        with named_extras(f"metric {self.name!r}"):
            if self.uses_context:
                return self._score_many_with_context(outputs, inputs, references, contexts)
            return self._score_many(outputs, inputs, references)

    def _options(self) -> dict[str, object]:
        """Options that change the number, in signature order."""
        return {}

    def _versions(self) -> dict[str, str]:
        """Libraries (name -> version) whose code computes the number."""
        return {"impl": "pytest-nlgeval"}

    def _feedback(self, output: str, input: str | None, references: list[str] | None, value: float) -> str | None:
        return None

    def check_options(self) -> None:
        """Check that the options name things that exist (a model folder), without loading anything heavy.

        Raises :class:`MetricUnavailableError` naming the option; the default has nothing to check. An
        induced-metric artifact calls it for every bank component when it loads.
        """

    # -- public API -----------------------------------------------------------------------------
    @property
    def signature(self) -> str:
        """``name|option:value|...|library:version``: exactly how the number was computed."""
        from pytest_nlgeval.util.extras import named_extras

        parts = [self.name]
        with named_extras(f"metric {self.name!r}"):
            parts += [f"{k}:{_fmt(v)}" for k, v in self._options().items()]
            versions = self._versions()
        parts += [f"{k}:{v}" for k, v in versions.items()]
        return "|".join(parts)

    def score(
        self, output: str, input: str | None = None, references: References = None, *, context: str | None = None
    ) -> float:
        """Score one output.

        ``output`` is the generated text; ``input`` the source/input text (document, question, dialogue
        history), if the metric uses it; ``references`` one reference string or a list of references for
        this output; ``context`` extra grounding text (a dialogue's fact), read only by metrics with
        ``uses_context``.
        """
        out, inp, refs, ctx = self._validate_one(output, input, references, context, index=None)
        return float(self._run([out], [inp], [refs], [ctx])[0])

    def score_batch(
        self,
        outputs: Sequence[str],
        inputs: Sequence[str | None] | None = None,
        references: Sequence[References] | None = None,
        *,
        contexts: Sequence[str | None] | None = None,
    ) -> list[float]:
        """Score many outputs; returns one float per output, in order.

        ``references[i]`` is the reference (or list of references) of ``outputs[i]``.
        """
        if isinstance(outputs, str):
            raise MetricInputError(
                f"metric {self.name!r}: score_batch takes a list of outputs, got one string; use score()"
            )
        outputs = list(outputs)
        n = len(outputs)
        inputs_l = self._batch_column(inputs, n, "inputs")
        refs_l = self._batch_column(references, n, "references")
        ctx_l = self._batch_column(contexts, n, "contexts")
        outs, inps, refss, ctxs = [], [], [], []
        for i in range(n):
            o, inp, r, c = self._validate_one(outputs[i], inputs_l[i], refs_l[i], ctx_l[i], index=i)
            outs.append(o)
            inps.append(inp)
            refss.append(r)
            ctxs.append(c)
        if not outs:
            return []
        values = [float(v) for v in self._run(outs, inps, refss, ctxs)]
        if len(values) != n:  # a metric bug, not a user error: never hand back misaligned scores
            raise RuntimeError(f"metric {self.name!r} returned {len(values)} scores for {n} outputs")
        return values

    def score_with_feedback(
        self, output: str, input: str | None = None, references: References = None, *, context: str | None = None
    ) -> MetricResult:
        """Score one output and say why, when the metric can (otherwise ``feedback`` is ``None``)."""
        out, inp, refs, ctx = self._validate_one(output, input, references, context, index=None)
        value = float(self._run([out], [inp], [refs], [ctx])[0])
        return MetricResult(value, self._feedback(out, inp, refs, value))

    def score_corpus(
        self,
        outputs: Sequence[str],
        inputs: Sequence[str | None] | None = None,
        references: Sequence[References] | None = None,
    ) -> float:
        """One number for a whole collection; the mean of :meth:`score_batch` unless the metric's
        standard defines a corpus statistic (BLEU, chrF and TER pool their counts)."""
        values = self.score_batch(outputs, inputs, references)
        if not values:
            raise MetricInputError(f"metric {self.name!r}: score_corpus needs at least one output")
        return sum(values) / len(values)

    def __repr__(self) -> str:
        return f"<Metric {self.signature}>"

    # -- helpers --------------------------------------------------------------------------------
    def _batch_column(self, column, n: int, what: str) -> list:
        if column is None:
            return [None] * n
        if isinstance(column, str):
            raise MetricInputError(
                f"metric {self.name!r}: {what} must be a list with one entry per output, got one string"
            )
        column = list(column)
        if len(column) != n:
            raise MetricInputError(
                f"metric {self.name!r}: got {n} outputs but {len(column)} {what}; pass one entry per output"
            )
        return column

    def _validate_one(self, output, input, references, context, index):
        where = "" if index is None else f"[{index}]"
        out = _check_text(output, f"output{where}", self.name)
        inp = None if input is None else _check_text(input, f"input{where}", self.name)
        ctx = None if context is None else _check_text(context, f"context{where}", self.name)
        refs = normalize_references(references, self.name, f"references{where}")
        if self.needs_references and not refs:
            raise MetricInputError(
                f"metric {self.name!r} needs at least one reference"
                f"{(' for output ' + str(index)) if index is not None else ''}; "
                "pass references=... (a string or a list of strings)"
            )
        if self.needs_input and inp is None:
            raise MetricInputError(
                f"metric {self.name!r} needs the input/source text"
                f"{(' for output ' + str(index)) if index is not None else ''}; "
                "pass input=..."
            )
        if self.needs_context and ctx is None:
            raise MetricInputError(
                f"metric {self.name!r} needs the context (fact/knowledge)"
                f"{(' for output ' + str(index)) if index is not None else ''}; "
                "pass context=..."
            )
        return out, inp, refs, ctx


def _fmt(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt(v) for v in value)
    return str(value)


def package_version(dist: str) -> str:
    """Installed version of a distribution (``"unknown"`` if its metadata is missing)."""
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "unknown"


def iter_chunks(items: Sequence, size: int) -> Iterable[Sequence]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
