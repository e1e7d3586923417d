"""The dimension catalogue: which question the Boolean-QA evaluator is asked, about which texts.

A :class:`Dimension` says how one quality dimension is scored (UniEval, Zhong et al. 2022; the
question strings, fields, units and aggregations are those of the public UniEval code, listed in
UniEval's public code, maszhongming/UniEval). The input text of one evaluator call is::

    'question: ' + question + ' </s> ' + field1 + ': ' + output [+ ' </s> ' + field2 + ': ' + x ...]

Per-sentence dimensions (``unit="sentence"``) ask the question once per sentence of the output and
aggregate the sentence scores with the mean (consistency, fluency) or the sum (dialogue engagingness,
range [0, inf)). ``overall`` is the mean of all built-in dimensions of a task (none for ``fact``).

Custom zero-shot dimensions are a question plus fields::

    registry.add(Dimension(task="summarization", name="politeness",
                           question="Is this a polite summary?", fields=("summary",)))
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from pytest_nlgeval.errors import NLGEvalError

__all__ = [
    "ARGUMENTS",
    "DEFAULT_TASK",
    "Dimension",
    "DimensionError",
    "DimensionNotServedError",
    "DimensionRegistry",
    "InputError",
    "OVERALL",
    "UNITS",
    "builtin_dimensions",
    "prepare_fields",
    "prepare_inputs",
    "released_checkpoint",
]

DEFAULT_TASK = "summarization"
OVERALL = "overall"

#: The keyword arguments of ``assert_dimension`` that feed a field after the output. ``context`` is the
#: dialogue history in the dialogue task and the retrieved passages (a list) in the rag task.
ARGUMENTS = ("source", "reference", "context", "fact", "question")
#: What a unit of a dimension is: the whole output, each sentence of the output, each retrieved context
#: (``context=``), each sentence of the reference (``reference=``), or each claim of the output (its sentences
#: and clauses, contentless units skipped: :mod:`nlgeval_runtime.claims`), which a model folder may declare
#: for a fact dimension.
UNITS = ("whole", "sentence", "context", "reference_sentence", "claim", "passage")
#: a ``passage`` unit: up to this many consecutive sentences, each passage starting at the last sentence of the one
#: before, so that every transition is read once inside a passage. A whole-text reading of a long summary is not
#: length-fair (the answer falls with the length of a good summary: fluency 0.86 at 30 words, 0.23 at 130); a
#: sentence-by-sentence one lost the SummEval development correlation (fluency 0.253 to 0.164, coherence by pairs
#: 0.319 to 0.248); three sentences keep it (0.254 and 0.301) and fall 0.03 (fluency) from 30 to 200 words
PASSAGE_SENTENCES = 3

#: How the scores of a dimension's units combine: UniEval's ``mean`` and ``sum`` (engagingness); ``min``, the
#: weakest unit; ``mean_min``, the mean of those two, so that one unsupported claim among many pulls a fact score
#: down by at least half its shortfall while the other claims still count.
AGGREGATIONS = ("mean", "sum", "min", "mean_min")

# Which argument fills a field when a custom dimension does not say (field label -> argument).
_FIELD_ARGUMENT = {
    "document": "source",
    "source": "source",
    "article": "source",
    "reference": "reference",
    "dialogue history": "context",
    "history": "context",
    "context": "context",
    "fact": "fact",
    "knowledge": "fact",
    "question": "question",
    "passages": "context",
}


class DimensionError(NLGEvalError, ValueError):
    """An unknown task or dimension, or an invalid dimension definition."""


class DimensionNotServedError(DimensionError):
    """A dimension that the model cannot judge: its folder refuses it, or does not declare it (see
    docs/model-folder.md). Raised instead of returning a score that does not react to the text."""


#: The released UniEval checkpoint (Zhong et al., 2022) that answers each task's questions.
RELEASED = {
    "summarization": "MingZhong/unieval-sum",
    "data2text": "MingZhong/unieval-sum",
    "dialogue": "MingZhong/unieval-dialog",
    "fact": "MingZhong/unieval-fact",
    "rag": "MingZhong/unieval-fact",
}


def released_checkpoint(task: str) -> str:
    """The released checkpoint to use for ``task`` (UniEval's summarization model for a custom task)."""
    return RELEASED.get(task, RELEASED["summarization"])


class InputError(NLGEvalError, ValueError):
    """An output or an input field that cannot be scored (missing, empty, not a string)."""


def hide_user_errors(excinfo) -> bool:
    """``__tracebackhide__`` for pytest: a user error shows the test line, not the plugin's internals."""
    return excinfo.errisinstance((InputError, DimensionError))


@dataclass(frozen=True)
class Dimension:
    """How one dimension is scored.

    ``fields`` are the labels of the input fields; the first one holds the output (or one sentence of
    it), the others are filled from ``arguments`` (names among ``source``, ``reference``, ``context``,
    ``fact``; derived from the labels when omitted: ``document`` -> ``source``, ``dialogue history``
    -> ``context``, ``fact`` -> ``fact``, ``reference`` -> ``reference``).

        >>> d = Dimension(task="summarization", name="conciseness",
        ...               question="Is this a concise summary of the document?",
        ...               fields=("summary", "document"))
        >>> d.arguments
        ('source',)
    """

    task: str
    name: str
    question: str
    fields: tuple[str, ...]
    #: None: derived from the fields by __post_init__, which always leaves a tuple here
    arguments: tuple[str, ...] = None  # type: ignore[assignment]
    unit: str = "whole"  # one of UNITS
    aggregation: str = "mean"  # how unit scores combine: one of AGGREGATIONS
    description: str = ""
    builtin: bool = field(default=False, compare=False)
    #: the argument split into source windows when an input is too long (pytest_nlgeval.core.windows), or None
    window: str | None = None
    #: how the scores of a unit's windows combine: "max" (supported somewhere) or "mean"
    window_aggregation: str = "max"

    def __post_init__(self) -> None:
        where = f"dimension {self.name!r} (task {self.task!r})"
        for attr in ("task", "name", "question"):
            value = getattr(self, attr)
            if not isinstance(value, str) or not value.strip():
                raise DimensionError(f"{where}: `{attr}` must be a non-empty string, got {value!r}")
        if self.name == OVERALL:
            raise DimensionError(f"{where}: 'overall' is reserved (the mean of a task's dimensions)")
        fields = tuple(self.fields) if not isinstance(self.fields, str) else (self.fields,)
        if not fields or not all(isinstance(f, str) and f.strip() for f in fields):
            raise DimensionError(f"{where}: `fields` must be non-empty labels such as ('summary', 'document')")
        object.__setattr__(self, "fields", fields)
        if self.arguments is None:
            derived = []
            for label in fields[1:]:
                if label.lower() not in _FIELD_ARGUMENT:
                    raise DimensionError(
                        f"{where}: cannot tell which argument fills field {label!r}; pass "
                        f"arguments=(...) with one of {', '.join(ARGUMENTS)} per field after the first"
                    )
                derived.append(_FIELD_ARGUMENT[label.lower()])
            object.__setattr__(self, "arguments", tuple(derived))
        else:
            arguments = tuple(self.arguments)
            if len(arguments) != len(fields) - 1:
                raise DimensionError(
                    f"{where}: {len(fields) - 1} field(s) after the output but {len(arguments)} argument(s)"
                )
            bad = [a for a in arguments if a not in ARGUMENTS]
            if bad:
                raise DimensionError(f"{where}: unknown argument(s) {bad}; use {', '.join(ARGUMENTS)}")
            object.__setattr__(self, "arguments", arguments)
        if self.unit not in UNITS:
            raise DimensionError(f"{where}: unit must be one of {', '.join(UNITS)}, got {self.unit!r}")
        if self.aggregation not in AGGREGATIONS:
            raise DimensionError(
                f"{where}: aggregation must be one of {', '.join(AGGREGATIONS)}, got {self.aggregation!r}"
            )
        if self.window is not None and self.window not in self.arguments:
            raise DimensionError(f"{where}: window={self.window!r} is not one of its arguments {self.arguments}")
        if self.window_aggregation not in ("max", "mean"):
            raise DimensionError(
                f"{where}: window_aggregation must be 'max' or 'mean', got {self.window_aggregation!r}"
            )

    @property
    def key(self) -> str:
        """``task/name``, as model folders name the dimensions they serve."""
        return f"{self.task}/{self.name}"

    @property
    def output_field(self) -> str:
        return self.fields[0]

    def input_text(self, unit_text: str, values: Mapping[str, str]) -> str:
        """The evaluator input for one unit (the whole output or one sentence of it)."""
        parts = [f"question: {self.question}", f"{self.fields[0]}: {unit_text}"]
        for label, argument in zip(self.fields[1:], self.arguments):
            parts.append(f"{label}: {values[argument]}")
        return " </s> ".join(parts)


def _builtin(
    task, name, question, fields, unit="whole", aggregation="mean", description="", window=None, arguments=None
):
    return Dimension(
        task=task,
        name=name,
        question=question,
        fields=fields,
        unit=unit,
        arguments=arguments,
        aggregation=aggregation,
        description=description,
        builtin=True,
        window=window,
    )


def builtin_dimensions() -> list[Dimension]:
    """The UniEval catalogue (UniEval's public code, maszhongming/UniEval), in the order of the reference code."""
    return [
        _builtin(
            "summarization",
            "coherence",
            "Is this a coherent summary to the document?",
            ("summary", "document"),
            description="the summary is well structured and organised",
        ),
        _builtin(
            "summarization",
            "consistency",
            "Is this claim consistent with the document?",
            ("claim", "document"),
            unit="sentence",
            window="source",
            description="every sentence of the summary is supported by the document",
        ),
        _builtin(
            "summarization",
            "fluency",
            "Is this a fluent paragraph?",
            ("paragraph",),
            unit="sentence",
            description="each sentence is well formed",
        ),
        _builtin(
            "summarization",
            "relevance",
            "Is this summary relevant to the reference?",
            ("summary", "reference"),
            description="the summary keeps the important content",
        ),
        _builtin(
            "dialogue",
            "naturalness",
            "Is this a natural response in the dialogue?",
            ("response",),
            description="a person would plausibly say this",
        ),
        _builtin(
            "dialogue",
            "coherence",
            "Is this a coherent response given the dialogue history?",
            ("response", "dialogue history"),
            description="the response follows from the history",
        ),
        _builtin(
            "dialogue",
            "engagingness",
            "Is this an engaging and informative response according to the dialogue history and fact?",
            ("response", "dialogue history", "fact"),
            unit="sentence",
            aggregation="sum",
            description="sum over sentences, range [0, inf)",
        ),
        _builtin(
            "dialogue",
            "groundedness",
            "Is this response consistent with knowledge in the fact?",
            ("response", "fact"),
            window="fact",
            description="the response agrees with the knowledge given",
        ),
        _builtin(
            "dialogue",
            "understandability",
            "Is this an understandable response in the dialogue?",
            ("response",),
            description="the response is easy to understand",
        ),
        _builtin(
            "data2text",
            "naturalness",
            "Is this a fluent utterance?",
            ("utterance",),
            description="the text reads naturally",
        ),
        _builtin(
            "data2text",
            "informativeness",
            "Is this sentence informative according to the reference?",
            ("sentence", "reference"),
            description="the text carries the reference's information",
        ),
        _builtin(
            "fact",
            "consistency",
            "Is this claim consistent with the document?",
            ("claim", "document"),
            unit="sentence",
            window="source",
            description="every sentence is supported by the document",
        ),
        # Retrieval-augmented answers (the RAG triad of question, contexts and answer, plus the reference for
        # recall). Faithfulness and recall ask UniEval's consistency question of each sentence against the
        # retrieved passages; the two relevance dimensions ask a relevance question.
        _builtin(
            "rag",
            "faithfulness",
            "Is this claim consistent with the document?",
            ("claim", "document"),
            unit="sentence",
            window="context",
            arguments=("context",),
            description="every sentence of the answer is supported by the retrieved contexts",
        ),
        _builtin(
            "rag",
            "answer_relevance",
            "Is this answer relevant to the question?",
            ("answer", "question"),
            description="the answer addresses the question",
        ),
        _builtin(
            "rag",
            "context_relevance",
            "Is this document relevant to the question?",
            ("document", "question"),
            unit="context",
            description="mean over the retrieved contexts: each is relevant to the question",
        ),
        _builtin(
            "rag",
            "context_recall",
            "Is this claim consistent with the document?",
            ("claim", "document"),
            unit="reference_sentence",
            window="context",
            arguments=("context",),
            description="every sentence of the reference answer is supported by the retrieved contexts",
        ),
    ]


# Tasks whose catalogue has no overall score (the reference code computes none for fact checking).
_NO_OVERALL = frozenset({"fact", "rag"})


class DimensionRegistry:
    """The dimensions known to a session: the built-in catalogue plus registered custom ones.

    >>> registry = DimensionRegistry()
    >>> registry.get("fluency").question
    'Is this a fluent paragraph?'
    >>> registry.get("coherence", task="dialogue").fields
    ('response', 'dialogue history')
    """

    def __init__(self, dimensions: Iterable[Dimension] | None = None) -> None:
        self._dims: dict[tuple[str, str], Dimension] = {}
        for dim in builtin_dimensions() if dimensions is None else dimensions:
            self._dims[(dim.task, dim.name)] = dim

    def add(self, dimension: Dimension, *, replace: bool = False) -> Dimension:
        """Register a (custom) dimension; re-adding an identical one is a no-op."""
        if not isinstance(dimension, Dimension):
            raise DimensionError(f"registry.add expects a Dimension, got {type(dimension).__name__}")
        key = (dimension.task, dimension.name)
        existing = self._dims.get(key)
        if existing is not None and existing != dimension and not replace:
            raise DimensionError(
                f"dimension {dimension.name!r} of task {dimension.task!r} is already defined "
                f"(question {existing.question!r}); pass replace=True to redefine it"
            )
        self._dims[key] = dimension
        return dimension

    def tasks(self) -> list[str]:
        return sorted({task for task, _ in self._dims})

    def names(self, task: str) -> list[str]:
        """Dimension names of ``task``, ``overall`` last where the task has one."""
        names = [name for t, name in self._dims if t == task]
        if task not in _NO_OVERALL and any(self._dims[(task, n)].builtin for n in names):
            names.append(OVERALL)
        return names

    def overall_members(self, task: str) -> list[Dimension]:
        """The dimensions averaged by ``overall``: the task's built-in ones."""
        __tracebackhide__ = hide_user_errors
        if task in _NO_OVERALL:
            raise DimensionError(f"task {task!r} has no 'overall' score; assert its dimensions one by one")
        return [d for (t, _), d in self._dims.items() if t == task and d.builtin]

    def get(self, name: str, task: str | None = None) -> Dimension:
        """The dimension ``name`` of ``task`` (default summarization); raises DimensionError listing valid names."""
        __tracebackhide__ = hide_user_errors
        task = task or DEFAULT_TASK
        if not isinstance(name, str):
            raise DimensionError(f"dimension must be a name (str), got {type(name).__name__}")
        if task not in self.tasks():
            raise DimensionError(f"unknown task {task!r}; valid tasks: {', '.join(self.tasks())}")
        dim = self._dims.get((task, name))
        if dim is None:
            if name == OVERALL and task not in _NO_OVERALL:
                raise DimensionError("'overall' is not a single dimension; use DimensionRegistry.overall_members")
            elsewhere = [t for t in self.tasks() if (t, name) in self._dims]
            hint = f" ('{name}' exists for task {', '.join(map(repr, elsewhere))}: pass task=...)" if elsewhere else ""
            raise DimensionError(
                f"unknown dimension {name!r} for task {task!r}; valid: {', '.join(self.names(task))}{hint}. "
                "Custom dimensions are registered with the pytest_nlgeval_register_dimensions hook"
            )
        return dim

    def __contains__(self, key: tuple[str, str]) -> bool:
        return key in self._dims

    def __iter__(self):
        return iter(list(self._dims.values()))


_HAS_WORD = re.compile(r"[^\W_]")


def _check_text(value, what: str) -> str:
    __tracebackhide__ = hide_user_errors
    if not isinstance(value, str):
        raise InputError(f"{what} must be a str, got {type(value).__name__}: {value!r:.80}")
    if not value.strip():
        raise InputError(f"{what} is empty; an empty text cannot be scored (generate something or skip the case)")
    if not _HAS_WORD.search(value):
        raise InputError(
            f"{what} has no letters or digits (only punctuation, symbols or invisible characters such as zero-width "
            f"spaces: {value[:40]!r}); it says nothing that could be scored (generate something or skip the case)"
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        # a lone surrogate (half of a UTF-16 pair): no tokenizer, cache or report can hold it
        raise InputError(
            f"{what} holds a lone surrogate {value[exc.start]!r} at character {exc.start}, which is not valid "
            "Unicode text; decode the generator's output with errors='replace' (or fix the bytes) before scoring"
        ) from None
    return value


def _dialogue_history(value, what: str) -> str:
    """Dialogue history per the reference convention: one turn a line, joined by '\\n', ending with '\\n\\n'.

    The history is a list of turns or one string whose lines are the turns. Both forms are read the same way:
    every text is split at its line breaks ('\\n', '\\r\\n', '\\r' and the other breaks of
    :meth:`str.splitlines`), each line is stripped and blank lines are dropped, so ``"hi !\\r\\n\\n  you ?  \\n"``
    and ``["hi !", "you ?"]`` are the same history and get the same scores.

        >>> _dialogue_history(" hi ! \\r\\n\\n you ? \\n", "`context=`") == _dialogue_history(["hi !", "you ?"], "x")
        True
    """
    __tracebackhide__ = hide_user_errors
    if isinstance(value, (list, tuple)):
        if not value:
            raise InputError(f"{what} is an empty list of turns")
        texts = [_check_text(t, f"{what} turn {i}") for i, t in enumerate(value)]
    else:
        texts = [_check_text(value, what)]
    # a checked text is not blank, so it has a line that is not blank either
    turns = [line.strip() for text in texts for line in text.splitlines() if line.strip()]
    return "\n".join(turns) + "\n\n"


def _fact(value, what: str) -> str:
    """Fact / knowledge per the reference convention: ends with a single '\\n'."""
    __tracebackhide__ = hide_user_errors
    if isinstance(value, (list, tuple)):
        items = [_check_text(t, f"{what} item {i}").strip() for i, t in enumerate(value)]
        if not items:
            raise InputError(f"{what} is an empty list")
        value = "\n".join(items)
    return _check_text(value, what).rstrip("\n") + "\n"


def prepare_inputs(
    dimension: Dimension, output, values: Mapping[str, object], *, split=None, label: str = "output"
) -> tuple[list[str], list[str]]:
    """Units and evaluator input texts of one output for one dimension.

    ``values`` maps argument names (``source``, ``reference``, ``context``, ``fact``) to texts; a
    dimension's missing argument raises :class:`InputError` naming it. ``split`` splits sentences
    (default: :func:`nlgeval_runtime.sentences.split_sentences`). Returns ``(units, texts)``: the
    output itself or its sentences, and one input text per unit.
    """
    __tracebackhide__ = hide_user_errors
    text = _check_text(output, label)
    prepared = prepare_fields(dimension, values, label=label)
    if dimension.unit in ("sentence", "reference_sentence"):
        if split is None:
            from nlgeval_runtime.sentences import split_sentences

            split = split_sentences
        if dimension.unit == "reference_sentence":
            text = _check_text(_needed(dimension, values, "reference", label), _what("reference", label))
        units = split(text) or [text.strip()]
    elif dimension.unit == "claim":
        from nlgeval_runtime.claims import split_claims

        units = split_claims(text, split)[0]  # may be empty: an output that asserts nothing
    elif dimension.unit == "passage":
        if split is None:
            from nlgeval_runtime.sentences import split_sentences

            split = split_sentences
        units = sentence_passages(split(text) or [text.strip()])
    elif dimension.unit == "context":
        units = _passages(_needed(dimension, values, "context", label), _what("context", label))
    else:
        units = [text]
    return units, [dimension.input_text(unit, prepared) for unit in units]


def sentence_passages(sentences: list[str], size: int = PASSAGE_SENTENCES) -> list[str]:
    """Consecutive sentences in passages of up to ``size``, each starting at the last sentence of the one before.

    >>> sentence_passages(["A.", "B.", "C.", "D.", "E."])
    ['A. B. C.', 'C. D. E.']
    >>> sentence_passages(["A.", "B.", "C.", "D."], size=2)
    ['A. B.', 'B. C.', 'C. D.']
    """
    if len(sentences) <= size:
        return [" ".join(sentences)]
    out, start = [], 0
    while True:
        out.append(" ".join(sentences[start : start + size]))
        if start + size >= len(sentences):
            return out
        start += size - 1


def passage_sentences(passages: list[str], split) -> list[str]:
    """The sentences of an output read as :func:`sentence_passages` (the shared sentences once)."""
    out: list[str] = []
    for k, passage in enumerate(passages):
        sentences = split(passage) or [passage]
        out.extend(sentences if k == 0 else sentences[1:])
    return out


def _what(argument: str, label: str) -> str:
    return f"`{argument}=`" if label == "output" else f"`{argument}` of {label}"


def _needed(dimension: Dimension, values: Mapping[str, object], argument: str, label: str):
    """The argument whose text a dimension's units come from (contexts, the reference), or InputError."""
    __tracebackhide__ = hide_user_errors
    value = values.get(argument)
    if value is None:
        what = "the retrieved contexts" if argument == "context" else "the reference answer"
        how = (
            f"pass {argument}=..."
            if label == "output"
            else f"pass {argument}s=[...] (one per output) or {argument}=... (shared by all)"
        )
        raise InputError(f"dimension {dimension.name!r} (task {dimension.task!r}) scores {what}: {how}")
    return value


def _passages(value, what: str) -> list[str]:
    """Retrieved contexts: a list of passages (a single string is one passage)."""
    __tracebackhide__ = hide_user_errors
    if isinstance(value, str):
        return [_check_text(value, what).strip()]
    if not isinstance(value, (list, tuple)):
        raise InputError(f"{what} must be a list of retrieved passages (strings), got {type(value).__name__}")
    items = [_check_text(t, f"{what} item {i}").strip() for i, t in enumerate(value)]
    if not items:
        raise InputError(f"{what} is an empty list: there is no retrieved context to score")
    return items


def prepare_fields(dimension: Dimension, values: Mapping[str, object], *, label: str = "output") -> dict[str, str]:
    """The texts of a dimension's fields after the output, checked and in the reference conventions
    (dialogue history ends with a blank line, a dialogue fact with a line break)."""
    __tracebackhide__ = hide_user_errors
    prepared: dict[str, str] = {}
    for argument in dimension.arguments:
        value = values.get(argument)
        what = f"`{argument}=`" if label == "output" else f"`{argument}` of {label}"
        if value is None:
            how = (
                f"pass {argument}=..."
                if label == "output"
                else f"pass {argument}s=[...] (one per output) or {argument}=... (shared by all)"
            )
            raise InputError(
                f"dimension {dimension.name!r} (task {dimension.task!r}) needs {what}: the "
                f"{dimension.fields[1 + dimension.arguments.index(argument)]!r} field of its question; {how}"
            )
        if argument == "context" and dimension.task == "dialogue":
            prepared[argument] = _dialogue_history(value, what)
        elif argument == "context" and dimension.task == "rag":
            prepared[argument] = "\n".join(_passages(value, what))
        elif argument == "fact" and dimension.task == "dialogue":
            prepared[argument] = _fact(value, what)
        else:
            prepared[argument] = _check_text(value, what)
    return prepared
