"""Reading human judgement files: ratings (numbers or judgement lists), stories, pairwise votes, clear errors."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from pytest_nlgeval.trajectory.humandata import HumanDataError, mean_rating, read_pairwise, read_ratings, split_story


def _write(path, rows, compress=False):
    text = "".join(json.dumps(r) + "\n" for r in rows)
    if compress:
        with gzip.open(path, "wt", encoding="utf-8") as handle:
            handle.write(text)
    else:
        path.write_text(text)
    return path


def test_split_story_takes_the_first_sentence_as_prompt():
    assert split_story("[MALE] went out . he saw a dog . it barked .") == (
        "[MALE] went out .",
        "he saw a dog . it barked .",
    )
    assert split_story('She said "stop!" Then she left.') == ('She said "stop!"', "Then she left.")
    with pytest.raises(ValueError, match="no sentence after the first"):
        split_story("only one sentence .")


def test_mean_rating_averages_judgement_lists():
    assert mean_rating(4) == 4.0 and mean_rating([0, 1, 1, 0, 1, 1, 1]) == pytest.approx(5 / 7)
    for bad in ([], "3", True, [1, "a"], float("nan")):
        with pytest.raises(ValueError):
            mean_rating(bad)


def test_read_ratings_from_stories_with_judgements(tmp_path):
    path = _write(
        tmp_path / "r.jsonl.gz",
        [
            {"id": "1", "story": "tom ran . he fell . he cried .", "judgements": [1, 0, 1, 1]},
            {"id": "2", "story": "tom  ran . he won .", "judgements": [0, 0, 0, 1]},
            {"id": "3", "story": "ann sang . people left .", "judgements": [1, 1, 1, 1]},
        ],
        compress=True,
    )
    data = read_ratings(path, rating_field="judgements", story_field="story")
    assert data.prompts == ["tom ran .", "tom ran .", "ann sang ."]
    assert data.continuations[0] == "he fell . he cried ."
    np.testing.assert_allclose(data.ratings, [0.75, 0.25, 1.0])
    assert data.clusters.tolist() == ["tom ran .", "tom ran .", "ann sang ."]  # grouped by prompt text
    by_id = read_ratings(path, rating_field="judgements", story_field="story", prompt_id_field="id")
    assert by_id.clusters.tolist() == ["1", "2", "3"]


def test_read_ratings_errors_name_the_line_and_the_fix(tmp_path):
    good = {"prompt": "p", "continuation": "c", "rating": 3}
    with pytest.raises(HumanDataError, match=r":2 has no 'rating' field.*--rating"):
        read_ratings(_write(tmp_path / "a.jsonl", [good, {"prompt": "p", "continuation": "c"}, good]))
    with pytest.raises(HumanDataError, match=r":1 has no 'continuation' field.*--continuation-field"):
        read_ratings(_write(tmp_path / "b.jsonl", [{"prompt": "p", "text": "c", "rating": 1}] * 3))
    with pytest.raises(HumanDataError, match=r":3: 'rating': a rating must be"):
        read_ratings(_write(tmp_path / "c.jsonl", [good, good, dict(good, rating="high")]))
    with pytest.raises(HumanDataError, match="at least 3"):
        read_ratings(_write(tmp_path / "d.jsonl", [good]))
    (tmp_path / "e.jsonl").write_text('{"prompt": "p",\n')
    with pytest.raises(HumanDataError, match=r"e.jsonl:1: not valid JSON"):
        read_ratings(tmp_path / "e.jsonl")
    with pytest.raises(HumanDataError, match="does not exist"):
        read_ratings(tmp_path / "missing.jsonl")
    with pytest.raises(HumanDataError, match=r":1: .*--story-field"):
        read_ratings(
            _write(tmp_path / "f.jsonl", [{"story": "one sentence only .", "rating": 1}] * 3), story_field="story"
        )


def test_read_pairwise_accepts_vote_lists_and_counts(tmp_path):
    path = _write(
        tmp_path / "p.jsonl",
        [
            {"prompt": "p1", "continuation_a": "x", "continuation_b": "y", "votes": ["a", "B", "a"]},
            {"prompt": "p1", "continuation_a": "x", "continuation_b": "z", "votes": {"a": 1, "b": 1}},
            {"prompt": "p2", "continuation_a": "u", "continuation_b": "v", "votes": {"b": 2}},
        ],
    )
    data = read_pairwise(path)
    assert data.votes_a.tolist() == [2, 1, 0] and data.votes_b.tolist() == [1, 1, 2]
    assert data.clusters.tolist() == ["p1", "p1", "p2"] and len(data) == 3
    bad = _write(
        tmp_path / "q.jsonl",
        [{"prompt": "p", "continuation_a": "x", "continuation_b": "y", "votes": ["a", "maybe"]}] * 2,
    )
    with pytest.raises(HumanDataError, match=r"q.jsonl:1: 'votes' must be a list of \"a\"/\"b\" votes"):
        read_pairwise(bad)
    with pytest.raises(HumanDataError, match=r"has no 'continuation_b' field.*--b-field"):
        read_pairwise(_write(tmp_path / "r.jsonl", [{"prompt": "p", "continuation_a": "x", "votes": ["a"]}] * 2))
