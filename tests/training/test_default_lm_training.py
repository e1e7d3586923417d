"""Training the default causal LM: the story split never trains on rated prompts or on the bank half, a run is
bounded by its step count (a rerun gives the same model), and the card reports what was measured."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from nlgeval_training import data as lm_data  # noqa: E402
from nlgeval_training import lm_trainer  # noqa: E402
from nlgeval_training.cli import main as train_cli  # noqa: E402
from nlgeval_training.errors import UsageError  # noqa: E402
from nlgeval_training.data import DataError  # noqa: E402

NEWS = [
    "The city council met on Tuesday to discuss the new budget for schools and roads. Members argued for hours "
    "about the cost of repairs, and the mayor said that a decision would come next week after a public hearing.",
    "Scientists at the university reported that a new battery design lasts twice as long as older models. The "
    "team tested the cells for six months and found that they kept most of their charge after many cycles.",
    "The football club announced that its manager will stay for another season. Fans had asked for changes "
    "after a string of defeats, but the board said the squad had improved and deserved more time together.",
]


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row) + "\n")
    return path


def _stories(n: int) -> list[dict]:
    return [
        {
            "prompt": f"[MALE] went to the market on day {i} .",
            "continuation": f"he bought {i} apples . the seller smiled . he walked home happy .",
        }
        for i in range(n)
    ]


@pytest.fixture()
def kit(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    _write_jsonl(
        data / "cnndm.jsonl.gz", [{"id": str(i), "article": NEWS[i % 3] + f" Story number {i}."} for i in range(60)]
    )
    stories = _write_jsonl(tmp_path / "human.jsonl.gz", _stories(40))
    rated = _write_jsonl(
        tmp_path / "rated.jsonl",
        [
            {"id": "a", "story": "[MALE] went to the market on day 3 . he bought pears .", "judgements": [1, 0]},
            {"id": "b", "prompt": "[MALE] went to the market on day 4 .", "story": "ignored when a prompt is given ."},
        ],
    )
    return data, stories, rated


def test_split_stories_keeps_rated_prompts_and_one_half_unseen(kit):
    _, stories, rated = kit
    exclude = lm_data.excluded_prompts(rated)
    assert exclude == {"[MALE] went to the market on day 3 .", "[MALE] went to the market on day 4 ."}
    train, unseen = lm_data.split_stories(stories, exclude)
    assert len(train) + len(unseen) == 40
    train_prompts = {r["prompt"] for r in train}
    assert not train_prompts & exclude
    assert exclude <= {r["prompt"] for r in unseen}
    assert not train_prompts & {r["prompt"] for r in unseen}
    assert 8 <= len(train) <= 32  # a hash split, roughly half of 40
    assert lm_data.split_stories(stories, exclude) == (train, unseen)


def test_split_stories_command_writes_the_unseen_half(kit, tmp_path, capsys):
    _, stories, rated = kit
    out = tmp_path / "bank" / "unseen.jsonl.gz"
    train_cli(["default-lm", "split-stories", str(stories), "--exclude-prompts", str(rated), "-o", str(out)])
    _, unseen = lm_data.split_stories(stories, lm_data.excluded_prompts(rated))
    assert [json.loads(line) for line in gzip.open(out, "rt")] == unseen
    assert f"{len(unseen)} stories never trained on" in capsys.readouterr().out


def test_story_inputs_with_missing_fields_are_named(tmp_path, capsys):
    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"prompt": "a .", "continuation": "b ."}, {"prompt": "a ."}])
    with pytest.raises(DataError, match=r"bad.jsonl row 2: .*'prompt' and 'continuation'"):
        lm_data.split_stories(bad)
    rated = _write_jsonl(tmp_path / "rated.jsonl", [{"id": "x", "rating": 3}])
    with pytest.raises(DataError, match=r"rated.jsonl row 1: neither 'prompt' nor 'story'"):
        lm_data.excluded_prompts(rated)
    with pytest.raises(DataError, match="does not exist"):
        lm_data.split_stories(tmp_path / "missing.jsonl")
    # The command line prints the same message, without a traceback, and exits 2.
    code = train_cli(
        ["default-lm", "train", "--data", str(tmp_path), "--out", str(tmp_path / "out"), "--stories", str(bad)]
    )
    assert code == 2
    assert "bad.jsonl row 2" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_training_is_bounded_by_steps_and_reproducible(kit, tmp_path):
    data, stories, rated = kit
    kwargs = dict(
        steps=6,
        threads=1,
        vocab_size=300,
        n_embd=32,
        n_layer=1,
        n_head=2,
        block=32,
        batch_size=4,
        stories=stories,
        exclude_prompts=rated,
        story_share=0.25,
        log=lambda m: None,
    )
    first = lm_trainer.train_default_lm(data, tmp_path / "a", bank_out=tmp_path / "bank.jsonl.gz", **kwargs)
    second = lm_trainer.train_default_lm(data, tmp_path / "b", **kwargs)
    assert first["steps"] == second["steps"] == 6
    assert first["tokens_seen"] == 6 * 4 * 32
    assert first["stories"]["sequences_per_batch"] == 1
    assert first["heldout_perplexity_torch"] == second["heldout_perplexity_torch"]
    assert first["stories"]["unseen_perplexity_torch"] == second["stories"]["unseen_perplexity_torch"]
    assert (tmp_path / "a" / "model.onnx").read_bytes() == (tmp_path / "b" / "model.onnx").read_bytes()

    bank = [json.loads(line) for line in gzip.open(tmp_path / "bank.jsonl.gz", "rt")]
    _, unseen = lm_data.split_stories(stories, lm_data.excluded_prompts(rated))
    assert bank == unseen and first["stories"]["unseen"] == len(bank)

    card = (tmp_path / "a" / "CARD.md").read_text()
    assert "6 steps x 4 x 32 tokens" in card
    assert f"{first['stories']['unseen_perplexity_torch']:.2f}" in card
    assert "--steps 6" in card
    assert "--stories DATA_DIR/human/human.jsonl.gz --exclude-prompts DATA_DIR/human/rated.jsonl" in card

    figures = lm_trainer.lm_report(tmp_path / "a", data, tmp_path / "bank.jsonl.gz")
    assert np.isclose(figures["story_perplexity_onnx"], first["stories"]["unseen_perplexity_torch"], rtol=1e-3)
    assert np.isclose(figures["heldout_perplexity_onnx"], first["heldout_perplexity_torch"], rtol=1e-3)
    # Per word: the same total log-likelihood over fewer units (the byte-level tokens outnumber the words).
    assert figures["story_word_perplexity_onnx"] > figures["story_perplexity_onnx"]


def test_a_kit_without_held_out_documents_is_refused_before_training(tmp_path):
    data = tmp_path / "small"
    data.mkdir()
    # cnndm:1 is not among the 3% held out by id hash, so nothing would be left to measure perplexity on
    _write_jsonl(data / "cnndm.jsonl.gz", [{"id": "1", "article": NEWS[0]}])
    logged: list[str] = []
    with pytest.raises(DataError, match="no held-out documents"):
        lm_trainer.train_default_lm(
            data,
            tmp_path / "out",
            steps=2,
            vocab_size=300,
            n_embd=32,
            n_layer=1,
            n_head=2,
            block=32,
            batch_size=2,
            log=logged.append,
        )
    assert not any(m.startswith("model:") for m in logged)  # refused before a model was built
    assert not (tmp_path / "out").exists()


def test_word_perplexity_is_the_token_likelihood_per_word():
    # 6 tokens at perplexity e (total NLL 6) over 3 words: exp(6 / 3).
    assert np.isclose(lm_trainer.word_perplexity(np.e, 6, ["a b", "c"]), np.exp(2.0))


def test_bad_step_counts_and_shares_are_refused(kit, tmp_path):
    data, _, rated = kit
    with pytest.raises(UsageError, match="apply to stories"):
        lm_trainer.train_default_lm(data, tmp_path / "x", steps=1, bank_out=tmp_path / "bank.jsonl")
    with pytest.raises(UsageError, match="apply to stories"):
        lm_trainer.train_default_lm(data, tmp_path / "x", steps=1, exclude_prompts=rated)
    with pytest.raises(DataError, match="no words"):
        lm_trainer.word_perplexity(10.0, 5, ["", "  "])
    with pytest.raises(UsageError, match="steps must be at least 1"):
        lm_trainer.train_default_lm(data, tmp_path / "x", steps=0)
    with pytest.raises(UsageError, match=r"story_share must be in \[0, 1\)"):
        lm_trainer.train_default_lm(data, tmp_path / "x", steps=1, story_share=1.0)
