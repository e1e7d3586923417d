"""Claim-support records from human entailment pairs: labels read the right way round, held-out premises
never trained on."""

from __future__ import annotations

import gzip
import json

import pytest

from nlgeval_training.claim_data import QUESTION, build_claim_data, read_pairs
from nlgeval_training.data import DataError


def _write(path, rows):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    return path


def test_binary_labels_keep_their_meaning_and_snli_words_map_to_supported_or_not(tmp_path):
    binary = _write(tmp_path / "b.jsonl.gz", [{"premise": "A man sleeps.", "hypothesis": "A man rests.", "label": 1}])
    snli = _write(
        tmp_path / "s.jsonl.gz",
        [
            {"premise": "A dog runs.", "hypothesis": "An animal moves.", "label": "entailment"},
            {"premise": "A dog runs.", "hypothesis": "A cat runs.", "label": "contradiction"},
            {"premise": "A dog runs.", "hypothesis": "The dog is happy.", "label": "neutral"},
            {"premise": "A dog runs.", "hypothesis": "A dog sits.", "label": "-"},
        ],
    )
    assert read_pairs(binary, "binary") == [("A man sleeps.", "A man rests.", 1)]
    assert [label for _, _, label in read_pairs(snli, "snli")] == [1, 0, 0]


@pytest.mark.parametrize("fmt, label", [("binary", "entailment"), ("binary", 2), ("snli", 1)])
def test_a_file_read_in_the_wrong_format_is_refused_naming_the_row(tmp_path, fmt, label):
    path = _write(tmp_path / "x.jsonl.gz", [{"premise": "p", "hypothesis": "h", "label": label}])
    with pytest.raises(DataError, match="row 1"):
        read_pairs(path, fmt)


def test_held_out_premises_are_never_trained_on_and_records_ask_the_consistency_question(tmp_path):
    rows = [
        {"premise": f"Premise number {k}.", "hypothesis": f"Claim {k} {j}.", "label": (k + j) % 2}
        for k in range(200)
        for j in range(2)
    ]
    path = _write(tmp_path / "m.jsonl.gz", rows)
    train, held = build_claim_data([("mnli", "binary", path)], held_out=0.2)
    assert len(train) + len(held) == len(rows)
    held_premises = {r["premise"] for r in held}
    assert 0 < len(held_premises) < 200
    assert not {r["group"].split(":", 1)[1] for r in train} & held_premises
    assert all(r["input"].startswith(f"question: {QUESTION} </s> claim: ") for r in train)
    again, held_again = build_claim_data([("mnli", "binary", path)], held_out=0.2)
    assert held_again == held and [r["input"] for r in again] == [r["input"] for r in train]


def test_an_input_seen_with_both_labels_is_dropped(tmp_path):
    path = _write(
        tmp_path / "c.jsonl.gz",
        [
            {"premise": "It rains.", "hypothesis": "It is wet.", "label": 1},
            {"premise": "It rains.", "hypothesis": "It is wet.", "label": 0},
            {"premise": "It rains.", "hypothesis": "It is dry.", "label": 0},
        ],
    )
    train, held = build_claim_data([("x", "binary", path)], held_out=0.0)
    assert [r["label"] for r in train] == [0] and held == []


def test_a_premise_held_out_in_one_set_is_trained_on_in_none_and_shared_pairs_are_trained_once(tmp_path):
    shared = "The ferry leaves Dover at noon ."
    mnli = _write(tmp_path / "m.jsonl.gz", [{"premise": shared, "hypothesis": "The ferry leaves at noon.", "label": 1}])
    edits = _write(
        tmp_path / "e.jsonl.gz",
        [
            {"premise": "The ferry leaves Dover at noon.", "hypothesis": "The ferry leaves at dawn.", "label": 0},
            {"premise": "The bus stops at the school.", "hypothesis": "The bus stops at the school gate.", "label": 0},
            {"premise": "the bus stops at  the school.", "hypothesis": "The bus stops at the school gate.", "label": 0},
        ],
    )
    held = _write(
        tmp_path / "eh.jsonl.gz",
        [{"premise": "The ferry leaves Dover at noon.", "hypothesis": "It sails.", "label": 1}],
    )
    train, held_rows = build_claim_data(
        [("mnli", "binary", mnli), ("edits", "binary", edits)],
        hold_out_from=set(),
        held_out_files=[("edits", "binary", held)],
    )
    assert [r["input"].split("claim: ")[1].split(" </s>")[0] for r in train] == ["The bus stops at the school gate."]
    assert held_rows == [
        {"set": "edits", "premise": "The ferry leaves Dover at noon.", "hypothesis": "It sails.", "label": 1}
    ]


def test_generated_pairs_become_sets_of_their_own_held_out_by_premise(tmp_path):
    generated = [
        {"kind": "swap", "premise": f"Ana paid Ben {k} euros.", "hypothesis": f"Ben paid Ana {k} euros.", "label": 0}
        for k in range(100)
    ]
    train, held = build_claim_data([], generated=generated)
    assert {r["dimension"] for r in train} == {"gen-swap"} and {r["set"] for r in held} == {"gen-swap"}
    assert 0 < len(held) < 30 and len(train) + len(held) == 100
    assert not {r["premise"] for r in held} & {r["group"].split(":", 1)[1] for r in train}
