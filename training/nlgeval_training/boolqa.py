"""Boolean-QA records: the evaluator's input format and the questions of each dimension.

The strings follow the UniEval scorer exactly (UniEval's public code, maszhongming/UniEval):
``'question: ' + Q + ' </s> ' + field1 + ': ' + output [+ ' </s> ' + field2 + ': ' + x ...]``.
A record is a plain dict ``{"input": str, "label": 0|1, "task": str, "dimension": str, "group": str}``;
``label`` 1 means the answer "Yes". ``group`` names the source item (document, dialogue) so held-out
splits never share a source with training data.

    >>> text = boolqa_input(
    ...     "dialogue", "groundedness", output="Paris is in France.", fact="Paris is the capital of France.\\n"
    ... )
    >>> text.split(" </s> ")  # doctest: +NORMALIZE_WHITESPACE
    ['question: Is this response consistent with knowledge in the fact?', 'response: Paris is in France.',
     'fact: Paris is the capital of France.\\n']
"""

from __future__ import annotations

from typing import Any

SEPARATOR = "</s>"

#: (task, dimension) -> (question, [(field name, keyword of boolqa_input), ...]); the first field is the output.
DIMENSIONS: dict[tuple[str, str], tuple[str, list[tuple[str, str]]]] = {
    ("summarization", "coherence"): (
        "Is this a coherent summary to the document?",
        [("summary", "output"), ("document", "source")],
    ),
    ("summarization", "consistency"): (
        "Is this claim consistent with the document?",
        [("claim", "output"), ("document", "source")],
    ),
    ("summarization", "fluency"): ("Is this a fluent paragraph?", [("paragraph", "output")]),
    ("summarization", "relevance"): (
        "Is this summary relevant to the reference?",
        [("summary", "output"), ("reference", "reference")],
    ),
    ("dialogue", "naturalness"): ("Is this a natural response in the dialogue?", [("response", "output")]),
    ("dialogue", "coherence"): (
        "Is this a coherent response given the dialogue history?",
        [("response", "output"), ("dialogue history", "context")],
    ),
    ("dialogue", "engagingness"): (
        "Is this an engaging and informative response according to the dialogue history and fact?",
        [("response", "output"), ("dialogue history", "context"), ("fact", "fact")],
    ),
    ("dialogue", "groundedness"): (
        "Is this response consistent with knowledge in the fact?",
        [("response", "output"), ("fact", "fact")],
    ),
    ("dialogue", "understandability"): (
        "Is this an understandable response in the dialogue?",
        [("response", "output")],
    ),
    ("data2text", "naturalness"): ("Is this a fluent utterance?", [("utterance", "output")]),
}

#: The paper's training curricula (Zhong et al., 2022, section 3.3).
CURRICULA = {
    "summarization": ["coherence", "fluency", "consistency", "relevance"],
    "dialogue": ["coherence", "naturalness", "groundedness", "engagingness"],
}


def boolqa_input(task: str, dimension: str, **fields: str) -> str:
    """The evaluator input text of ``dimension`` of ``task`` built from ``fields``.

    ``fields`` are keyword arguments named ``output``, ``source``, ``reference``, ``context``, ``fact``
    as the dimension needs them (see :data:`DIMENSIONS`). Dialogue callers pass the history already
    joined with ``"\\n"`` and ending in ``"\\n\\n"``, and the fact ending in ``"\\n"``.
    """
    try:
        question, spec = DIMENSIONS[(task, dimension)]
    except KeyError:
        known = ", ".join(f"{t}/{d}" for t, d in DIMENSIONS)
        raise ValueError(f"unknown dimension {task}/{dimension}; known: {known}") from None
    parts = [f"question: {question}"]
    for name, keyword in spec:
        if keyword not in fields:
            raise ValueError(f"{task}/{dimension} needs the field {keyword!r} ({name}:), got {sorted(fields)}")
        parts.append(f"{name}: {fields[keyword]}")
    return f" {SEPARATOR} ".join(parts)


def make_record(task: str, dimension: str, label: int, group: str, **fields: str) -> dict[str, Any]:
    """A Boolean-QA training record (see the module docstring)."""
    return {
        "input": boolqa_input(task, dimension, **fields),
        "label": int(label),
        "task": task,
        "dimension": dimension,
        "group": group,
    }


def question_input(question: str, **named_fields: str) -> str:
    """Free-form Boolean-QA input for intermediate tasks: ``question: Q </s> name: text ...``.

    Field names with spaces are passed through a dict: ``question_input(Q, **{"dialogue history": h})``.
    """
    parts = [f"question: {question}"] + [f"{name}: {text}" for name, text in named_fields.items()]
    return f" {SEPARATOR} ".join(parts)
