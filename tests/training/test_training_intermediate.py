"""Intermediate-task converters: the paper's questions, labels mapped to Yes/No, bad records named."""

from __future__ import annotations

import pytest

from training_fixtures import write_jsonl

from nlgeval_training.data import DataError
from nlgeval_training.intermediate import (
    build_intermediate_data,
    convert_boolq,
    convert_cola,
    convert_nli,
    convert_paraphrase,
    opening_sentence,
)


def test_nli_maps_entailment_to_yes_and_the_rest_to_no():
    base = {"premise": "A man sleeps.", "hypothesis": "A person rests."}
    yes = convert_nli({**base, "label": "entailment"})
    assert yes["input"] == (
        "question: Is this hypothesis entailed in the premise? </s> hypothesis: A person rests. "
        "</s> premise: A man sleeps."
    )
    assert yes["label"] == 1
    assert convert_nli({**base, "label": "neutral"})["label"] == 0
    assert convert_nli({**base, "label": "contradiction"})["label"] == 0
    assert convert_nli({**base, "label": "-"}) is None
    with pytest.raises(DataError, match="lacks \\['hypothesis'\\]"):
        convert_nli({"premise": "x", "label": "neutral"})


def test_paraphrase_cola_boolq():
    rec = convert_paraphrase({"sentence1": "A b.", "sentence2": "B a.", "label": 0})
    assert (
        rec["input"]
        == "question: Is this sentence equivalent to the reference? </s> sentence: B a. </s> reference: A b."
    )
    assert rec["label"] == 0
    assert convert_cola({"sentence": "Him go.", "label": 0})["input"].startswith(
        "question: Is this a fluent and linguistically acceptable sentence? </s> sentence: "
    )
    rec = convert_boolq({"question": "is the sky blue", "passage": "The sky is blue.", "answer": True})
    assert rec["input"] == "question: Is the sky blue? </s> passage: The sky is blue."
    assert rec["label"] == 1
    assert convert_boolq({"question": "Is it?", "passage": "No.", "answer": False})["label"] == 0


def test_opening_sentence_pairs_the_true_first_sentence_against_another(tmp_path):
    art = " ".join(f"Sentence number {i} of story is here." for i in range(6))
    path = write_jsonl(
        tmp_path / "news.jsonl.gz",
        [{"id": f"s{k}", "article": art.replace("story", f"story{k}"), "highlights": "A summary."} for k in range(3)],
    )
    recs = opening_sentence(path, seed=0)
    assert len(recs) == 6 and sum(r["label"] for r in recs) == 3
    for r in recs:
        sentence = r["input"].split(" </s> ")[1][len("sentence: ") :]
        assert ("number 0 " in sentence) == (r["label"] == 1)
        assert r["input"].startswith("question: Is this sentence the coherent first sentence of the document?")


def test_build_dedups_and_drops_contradictory_duplicates(tmp_path):
    rows = [
        {"sentence": "Good one.", "label": 1},
        {"sentence": "Good one.", "label": 1},
        {"sentence": "Bad one.", "label": 1},
        {"sentence": "Bad one.", "label": 0},
        {"sentence": "Other.", "label": 0},
    ]
    path = write_jsonl(tmp_path / "cola.jsonl.gz", rows)
    recs = build_intermediate_data({"cola": path}, seed=0)
    assert sorted(r["input"].split("sentence: ")[1] for r in recs) == ["Good one.", "Other."]
    with pytest.raises(ValueError, match="unknown intermediate task"):
        build_intermediate_data({"poetry": path})
