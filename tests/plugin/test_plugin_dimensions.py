"""The dimension catalogue, input texts and the errors of bad inputs (no model needed)."""

from __future__ import annotations

import pytest

from pytest_nlgeval.core.dimensions import (
    Dimension,
    DimensionError,
    DimensionRegistry,
    InputError,
    builtin_dimensions,
    prepare_inputs,
)

# (task, dimension) -> (question, fields, unit, aggregation), transcribed from the UniEval reference code.
CATALOGUE = {
    ("summarization", "coherence"): (
        "Is this a coherent summary to the document?",
        ("summary", "document"),
        "whole",
        "mean",
    ),
    ("summarization", "consistency"): (
        "Is this claim consistent with the document?",
        ("claim", "document"),
        "sentence",
        "mean",
    ),
    ("summarization", "fluency"): ("Is this a fluent paragraph?", ("paragraph",), "sentence", "mean"),
    ("summarization", "relevance"): (
        "Is this summary relevant to the reference?",
        ("summary", "reference"),
        "whole",
        "mean",
    ),
    ("dialogue", "naturalness"): ("Is this a natural response in the dialogue?", ("response",), "whole", "mean"),
    ("dialogue", "coherence"): (
        "Is this a coherent response given the dialogue history?",
        ("response", "dialogue history"),
        "whole",
        "mean",
    ),
    ("dialogue", "engagingness"): (
        "Is this an engaging and informative response according to the dialogue history and fact?",
        ("response", "dialogue history", "fact"),
        "sentence",
        "sum",
    ),
    ("dialogue", "groundedness"): (
        "Is this response consistent with knowledge in the fact?",
        ("response", "fact"),
        "whole",
        "mean",
    ),
    ("dialogue", "understandability"): (
        "Is this an understandable response in the dialogue?",
        ("response",),
        "whole",
        "mean",
    ),
    ("data2text", "naturalness"): ("Is this a fluent utterance?", ("utterance",), "whole", "mean"),
    ("data2text", "informativeness"): (
        "Is this sentence informative according to the reference?",
        ("sentence", "reference"),
        "whole",
        "mean",
    ),
    ("fact", "consistency"): ("Is this claim consistent with the document?", ("claim", "document"), "sentence", "mean"),
}
# The rag task is this project's own (not UniEval's): consistency questions for faithfulness and recall, relevance
# questions for the answer and each retrieved context.
RAG = {
    ("rag", "faithfulness"): ("Is this claim consistent with the document?", ("claim", "document"), "sentence", "mean"),
    ("rag", "answer_relevance"): ("Is this answer relevant to the question?", ("answer", "question"), "whole", "mean"),
    ("rag", "context_relevance"): (
        "Is this document relevant to the question?",
        ("document", "question"),
        "context",
        "mean",
    ),
    ("rag", "context_recall"): (
        "Is this claim consistent with the document?",
        ("claim", "document"),
        "reference_sentence",
        "mean",
    ),
}


def test_catalogue_matches_the_reference_exactly():
    got = {(d.task, d.name): (d.question, d.fields, d.unit, d.aggregation) for d in builtin_dimensions()}
    assert got == {**CATALOGUE, **RAG}


def test_input_text_format_whole_and_per_sentence():
    reg = DimensionRegistry()
    units, texts = prepare_inputs(reg.get("coherence"), "A short summary. Second one.", {"source": "The doc."})
    assert units == ["A short summary. Second one."]
    assert texts == [
        "question: Is this a coherent summary to the document? </s> summary: A short summary. "
        "Second one. </s> document: The doc."
    ]
    units, texts = prepare_inputs(reg.get("consistency"), "Dr. Lee came. He left.", {"source": "Doc."})
    assert units == ["Dr. Lee came.", "He left."]
    assert texts[1] == "question: Is this claim consistent with the document? </s> claim: He left. </s> document: Doc."
    _, texts = prepare_inputs(reg.get("informativeness", "data2text"), "The Eagle is cheap.", {"reference": "Ref."})
    assert texts == [
        "question: Is this sentence informative according to the reference? </s> sentence: "
        "The Eagle is cheap. </s> reference: Ref."
    ]


def test_dialogue_conventions_history_and_fact():
    reg = DimensionRegistry()
    dim = reg.get("engagingness", "dialogue")
    units, texts = prepare_inputs(
        dim, "I do too. It is fun.", {"context": ["hi , you ?", "i like it"], "fact": "the sky is blue"}
    )
    assert units == ["I do too.", "It is fun."]
    assert texts[0] == (
        "question: Is this an engaging and informative response according to the dialogue history "
        "and fact? </s> response: I do too. </s> dialogue history: hi , you ?\ni like it\n\n"
        " </s> fact: the sky is blue\n"
    )
    # a history given as one string gets the same ending, never a doubled one
    _, texts2 = prepare_inputs(
        dim, "I do too. It is fun.", {"context": "hi , you ?\ni like it\n\n", "fact": "the sky is blue\n"}
    )
    assert texts2 == texts


def test_overall_members_and_fact_has_no_overall():
    reg = DimensionRegistry()
    assert [d.name for d in reg.overall_members("summarization")] == [
        "coherence",
        "consistency",
        "fluency",
        "relevance",
    ]
    assert "overall" in reg.names("dialogue")
    with pytest.raises(DimensionError, match="no 'overall'"):
        reg.overall_members("fact")
    assert "overall" not in reg.names("fact")


def test_unknown_dimension_lists_valid_ones_and_other_tasks():
    reg = DimensionRegistry()
    with pytest.raises(DimensionError) as info:
        reg.get("groundedness")
    msg = str(info.value)
    assert "coherence, consistency, fluency, relevance, overall" in msg
    assert "'dialogue'" in msg and "task=" in msg
    with pytest.raises(
        DimensionError, match="unknown task 'summary'; valid tasks: data2text, dialogue, fact, rag, summarization"
    ):
        reg.get("fluency", "summary")


@pytest.mark.parametrize(
    "output, message",
    [
        ("", "output is empty"),
        ("   \n", "output is empty"),
        (None, "output must be a str, got NoneType"),
        (["a list"], "output must be a str, got list"),
    ],
)
def test_bad_outputs_are_clear_errors(output, message):
    with pytest.raises(InputError, match=message):
        prepare_inputs(DimensionRegistry().get("fluency"), output, {})


def test_missing_field_names_the_argument():
    reg = DimensionRegistry()
    with pytest.raises(InputError, match=r"needs `source=`: the 'document' field .* pass source=\.\.\."):
        prepare_inputs(reg.get("consistency"), "A claim.", {})
    with pytest.raises(InputError, match=r"`fact` of outputs\[2\].*facts=\[\.\.\.\]"):
        prepare_inputs(reg.get("groundedness", "dialogue"), "Hi.", {}, label="outputs[2]")
    with pytest.raises(InputError, match="`source=` is empty"):
        prepare_inputs(reg.get("consistency"), "A claim.", {"source": ""})
    with pytest.raises(InputError, match="`context=` turn 1 must be a str"):
        prepare_inputs(reg.get("coherence", "dialogue"), "Hi.", {"context": ["hi", 3]})


def test_custom_dimension_fields_map_to_arguments():
    dim = Dimension(
        task="summarization", name="conciseness", question="Is this a concise summary?", fields=("summary", "document")
    )
    assert dim.arguments == ("source",)
    _, texts = prepare_inputs(dim, "Short.", {"source": "Long document."})
    assert texts == ["question: Is this a concise summary? </s> summary: Short. </s> document: Long document."]
    reg = DimensionRegistry()
    reg.add(dim)
    assert reg.get("conciseness").question == "Is this a concise summary?"
    reg.add(dim)  # identical re-registration is fine (conftest imported twice)
    with pytest.raises(DimensionError, match="already defined"):
        reg.add(Dimension(task="summarization", name="conciseness", question="Other?", fields=("summary",)))
    with pytest.raises(DimensionError, match="already defined"):
        reg.add(Dimension(task="summarization", name="fluency", question="Is it fluent?", fields=("text",)))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(fields=("summary", "weird")), "cannot tell which argument fills field 'weird'"),
        (dict(fields=("summary", "weird"), arguments=("sauce",)), r"unknown argument\(s\) \['sauce'\]"),
        (
            dict(fields=("summary",), unit="paragraph"),
            "unit must be one of whole, sentence, context, reference_sentence",
        ),
        (dict(fields=("summary",), aggregation="max"), "aggregation must be one of mean, sum, min, mean_min"),
        (dict(fields=()), "`fields` must be non-empty"),
        (dict(fields=("summary",), question=""), "`question` must be a non-empty string"),
        (dict(fields=("summary", "document"), arguments=()), r"1 field\(s\) after the output but 0"),
    ],
)
def test_invalid_custom_dimensions(kwargs, message):
    base = dict(task="summarization", name="politeness", question="Is this polite?")
    base.update(kwargs)
    with pytest.raises(DimensionError, match=message):
        Dimension(**base)


def test_new_task_through_custom_dimension():
    reg = DimensionRegistry()
    reg.add(
        Dimension(
            task="qa",
            name="answerability",
            question="Is this answer supported by the passage?",
            fields=("answer", "passage"),
            arguments=("source",),
        )
    )
    assert "qa" in reg.tasks()
    assert reg.names("qa") == ["answerability"]  # custom-only tasks have no overall


def test_rag_units_are_sentences_contexts_and_reference_sentences():
    reg = DimensionRegistry()
    passages = ["Paris is the capital of France.", "France is in Europe."]
    units, texts = prepare_inputs(reg.get("faithfulness", "rag"), "It is Paris. It has a tower.", {"context": passages})
    assert units == ["It is Paris.", "It has a tower."]
    assert texts[0] == (
        "question: Is this claim consistent with the document? </s> claim: It is Paris. </s> "
        "document: Paris is the capital of France.\nFrance is in Europe."
    )
    units, texts = prepare_inputs(
        reg.get("context_relevance", "rag"),
        "Paris.",
        {"context": passages, "question": "What is the capital of France?"},
    )
    assert units == passages
    assert texts[1] == (
        "question: Is this document relevant to the question? </s> document: France is in Europe. "
        "</s> question: What is the capital of France?"
    )
    units, _ = prepare_inputs(
        reg.get("context_recall", "rag"),
        "Paris.",
        {"context": passages, "reference": "Paris is the capital. It is in France."},
    )
    assert units == ["Paris is the capital.", "It is in France."]
    with pytest.raises(InputError, match="context_recall.*scores the reference answer: pass reference="):
        prepare_inputs(reg.get("context_recall", "rag"), "Paris.", {"context": passages})
    with pytest.raises(InputError, match="needs `question=`"):
        prepare_inputs(reg.get("answer_relevance", "rag"), "Paris.", {})
    with pytest.raises(InputError, match="empty list"):
        prepare_inputs(reg.get("context_relevance", "rag"), "Paris.", {"context": [], "question": "Q?"})
    with pytest.raises(DimensionError, match="task 'rag' has no 'overall'"):
        reg.overall_members("rag")
