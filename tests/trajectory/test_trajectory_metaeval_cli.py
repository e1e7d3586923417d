"""`nlgeval trajectory meta-eval` end to end on a tiny GPT-2: ratings and pairwise tables, cache, clear errors."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from pytest_nlgeval import cli
from pytest_nlgeval.trajectory.metaeval import DEFAULT_FIELDS

STORIES = [
    ("the fox woke up early .", "it walked to the river and watched the fishermen . one of them dropped a fish ."),
    ("ann baked a cake for her mother .", "she added lemon and sugar . her mother loved it and asked for more ."),
    ("the team lost the final game .", "the players were sad for a week . then they started training again ."),
    ("tom found a lost puppy .", "he put up posters in town . the owner called him and came to get it ."),
    ("it rained all weekend .", "we stayed inside and played cards . by sunday evening the sky was clear ."),
    ("my phone fell in the lake .", "i tried to dry it in rice . after two days it worked again ."),
]
LOOP = "the the the the the the the the the the the the the the the the"


def _gz(path, rows):
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture(scope="module")
def setup(tiny_causal_lm, tmp_path_factory):
    folder, _, _ = tiny_causal_lm
    work = tmp_path_factory.mktemp("metaeval")
    human = _gz(work / "human.jsonl.gz", [{"prompt": p, "continuation": c} for p, c in STORIES])
    bank = work / "bank.npz"
    assert (
        cli.main(
            [
                "trajectory",
                "fit-bank",
                str(human),
                "-o",
                str(bank),
                "--lm",
                str(folder),
                "--horizon",
                "32",
                "--device",
                "cpu",
                "--threads",
                "1",
                "--no-cache",
            ]
        )
        == 0
    )
    ratings = []
    for k, (prompt, cont) in enumerate(STORIES):
        words = cont.split()
        for text, votes in ((cont, [1, 1, 1, 0]), (" ".join(words[:5] * 3), [1, 0, 0, 0]), (LOOP, [0, 0, 0, 0])):
            ratings.append({"id": f"{k}-{len(ratings)}", "story": f"{prompt} {text}", "judgements": votes})
    ratings_path = _gz(work / "ratings.jsonl.gz", ratings)
    pairs = []
    for k, (prompt, cont) in enumerate(STORIES):
        pairs.append({"prompt": prompt, "continuation_a": cont, "continuation_b": LOOP, "votes": ["a", "a", "a"]})
        pairs.append({"prompt": prompt, "continuation_a": LOOP, "continuation_b": cont, "votes": {"a": 1, "b": 2}})
        pairs.append({"prompt": prompt, "continuation_a": cont, "continuation_b": LOOP, "votes": ["a", "b"]})
    pairs_path = work / "pairs.jsonl"
    pairs_path.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    return {"bank": bank, "ratings": ratings_path, "pairs": pairs_path, "work": work}


def _run(capsys, *argv):
    capsys.readouterr()
    code = cli.main(["trajectory", "meta-eval", *map(str, argv), "--device", "cpu", "--threads", "1", "--no-cache"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_ratings_table_has_every_field_and_uses_the_cache(setup, capsys):
    cache = setup["work"] / "cache" / "scores.json"
    args = [
        setup["ratings"],
        "--bank",
        setup["bank"],
        "--story-field",
        "story",
        "--rating",
        "judgements",
        "--resamples",
        "300",
        "--format",
        "json",
        "--cache",
        cache,
    ]
    code, out, err = _run(capsys, *args)
    assert code == 0 and cache.is_file() and "reusing" not in err
    table = json.loads(out)
    assert table["kind"] == "ratings" and table["resamples"] == 300 and table["baseline"] == "diversity_end"
    assert table["info"]["texts"] == 18 and table["info"]["prompts"] == 6 and table["info"]["dropped_texts"] == 0
    rows = {r["field"]: r for r in table["rows"]}
    assert list(rows) == list(DEFAULT_FIELDS)
    # repetition goes with low judgements, and the diversity fields see it
    assert rows["diversity_dtw"]["value"] > 0.5 and rows["diversity_end"]["value"] > 0.5
    for row in table["rows"]:  # a percentile interval need not contain the point estimate; it is ordered
        if row["value"] is not None:
            assert -1.0 <= row["low"] <= row["high"] <= 1.0
    assert rows["diversity_end"]["difference"] is None
    assert set(rows["qtext"]["difference"]) == {"value", "low", "high", "undefined", "resolved"}
    again_code, again, again_err = _run(capsys, *args)
    assert again_code == 0 and "reusing the scores" in again_err and json.loads(again) == table
    code, md, _ = _run(
        capsys,
        *args[:-4],
        "--resamples",
        "100",
        "--format",
        "markdown",
        "--cache",
        cache,
        "--fields",
        "diversity_dtw,likelihood",
        "--baseline",
        "length",
    )
    lines = md.splitlines()
    assert code == 0 and lines[0] == ("| field | group | Spearman | 95% interval | minus length | 95% interval |")
    assert [ln.split(" | ")[0] for ln in lines[2:5]] == ["| diversity_dtw", "| likelihood", "| length"]
    assert "100 prompt-cluster bootstrap replicates" in md


def test_pairwise_table_counts_ties_and_unanimous_votes(setup, capsys):
    code, out, _ = _run(
        capsys,
        setup["pairs"],
        "--bank",
        setup["bank"],
        "--fields",
        "diversity_dtw,length",
        "--resamples",
        "200",
        "--format",
        "json",
    )
    assert code == 0
    table = json.loads(out)
    assert table["kind"] == "pairwise"
    info = table["info"]
    assert info["pairs"] == 18 and info["vote_ties"] == 6 and info["unanimous"] == 6 and info["prompts"] == 6
    rows = {r["field"]: r for r in table["rows"]}
    assert rows["diversity_dtw"]["value"] == 1.0 and rows["diversity_dtw"]["unanimous"]["value"] == 1.0
    assert rows["diversity_dtw"]["score_ties"] == 0
    code, text, _ = _run(
        capsys, setup["pairs"], "--bank", setup["bank"], "--fields", "diversity_dtw", "--resamples", "50"
    )
    assert code == 0 and "agreement" in text and "unanimous: 6" in text and "vote ties: 6" in text


def test_bad_input_gives_a_clear_error(setup, capsys):
    code, _, err = _run(capsys, setup["ratings"], "--story-field", "story", "--rating", "judgements")
    assert code == 2 and "pass --bank BANK.npz" in err
    code, _, err = _run(
        capsys,
        setup["ratings"],
        "--bank",
        setup["bank"],
        "--story-field",
        "story",
        "--rating",
        "judgements",
        "--fields",
        "diversity_dtw,nonsense",
    )
    assert code == 2 and "unknown field(s) ['nonsense']" in err
    code, _, err = _run(capsys, setup["ratings"], "--bank", setup["bank"], "--story-field", "story")
    assert code == 2 and "has no 'rating' field" in err and "--rating" in err
    code, _, err = _run(
        capsys,
        setup["ratings"],
        "--bank",
        setup["bank"],
        "--story-field",
        "story",
        "--rating",
        "judgements",
        "--confidence",
        "95",
    )
    assert code == 2 and "--confidence must be between 0 and 1" in err
    code, _, err = _run(capsys, setup["work"] / "missing.jsonl", "--bank", setup["bank"])
    assert code == 2 and "missing.jsonl does not exist" in err


def test_rows_without_a_matched_human_are_dropped_and_reported(setup, capsys, tmp_path):
    rows = [{"prompt": p, "continuation": c, "rating": float(i % 3)} for i, (p, c) in enumerate(STORIES)]
    rows.append({"prompt": "a prompt the bank has never seen .", "continuation": LOOP, "rating": 0.0})
    path = tmp_path / "rated.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, _ = _run(capsys, path, "--bank", setup["bank"], "--resamples", "50", "--format", "json")
    table = json.loads(out)
    assert code == 0 and table["info"]["texts"] == 6 and table["info"]["dropped_texts"] == 1
    assert "summary_mean (1)" in table["info"]["without_values"]
    code, out, _ = _run(
        capsys,
        path,
        "--bank",
        setup["bank"],
        "--resamples",
        "50",
        "--format",
        "json",
        "--fields",
        "diversity_dtw,likelihood",
    )
    assert code == 0 and json.loads(out)["info"]["texts"] == 7  # those fields need no matched human
    assert np.isfinite(json.loads(out)["rows"][0]["value"])
