"""assert_trajectory, the fit-bank/score commands and the report section, on a tiny GPT-2 built here."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pytest_nlgeval import cli
from pytest_nlgeval.core import checks
from pytest_nlgeval.core.score import Score
from pytest_nlgeval.trajectory.assertions import assert_trajectory, load_bank
from pytest_nlgeval.trajectory.bank import BankMismatchError

HUMAN = [
    (
        "Once upon a time a small fox",
        "lived at the edge of a dark forest near the river, and every morning it walked down to watch.",
    ),
    (
        "The committee met on Tuesday",
        "to discuss the budget for the new school year, and members agreed to delay the vote until March.",
    ),
    (
        "Prices rose 3.5% in 2023,",
        "the fastest pace in a decade, official figures showed on Friday as shoppers cut back on food.",
    ),
    (
        "Do you like football?",
        "Yes, I watch every game with my brother on Sundays, and we argue about the referee every time.",
    ),
    (
        "Every morning the fox walked",
        "to the river and watched the fishermen at work, hoping one of them would drop a fish.",
    ),
]
LOOP = "the the the the the the the the the the the the the the the the the the the the"


@pytest.fixture(scope="module")
def bank_path(tiny_causal_lm, tmp_path_factory):
    folder, _, _ = tiny_causal_lm
    work = tmp_path_factory.mktemp("trajectory")
    human = work / "human.jsonl"
    human.write_text("".join(json.dumps({"prompt": p, "continuation": c}) + "\n" for p, c in HUMAN))
    out = work / "bank.npz"
    code = cli.main(
        [
            "trajectory",
            "fit-bank",
            str(human),
            "-o",
            str(out),
            "--lm",
            str(folder),
            "--horizon",
            "24",
            "--device",
            "cpu",
            "--threads",
            "1",
            "--no-cache",
        ]
    )
    assert code == 0 and out.is_file()
    return out


def test_fields_are_trajectory_scores_that_assert_and_record(bank_path, recorder):
    prompt, cont = HUMAN[0]
    result = assert_trajectory(cont, prompt=prompt, bank=bank_path)
    assert isinstance(result.diversity_dtw, Score) and result.diversity_dtw.kind == "trajectory"
    assert float(result.diversity_dtw) <= 0.0 and float(result.coherence_dtw) <= 0.0
    assert result.diversity_dtw > -1.0
    with pytest.raises(AssertionError, match="coherence_end = .*expected > 0"):
        result.coherence_end > 0.0  # log-probabilities are negative
    recorded = recorder.checks
    assert [c.name for c in recorded] == ["diversity_dtw", "coherence_end"]
    assert [c.passed for c in recorded] == [True, False]
    details = recorded[0].details
    assert len(details["trajectory"]["diversity"]) == result.trajectory.length
    assert set(details["band"]["diversity"]) == {"low", "median", "high"}
    assert details["inputs"]["prompt"] == prompt
    # the human continuation of this prompt is in the bank: summary comparison and paired DTW exist
    assert float(result.summary_mean) == pytest.approx(result.as_dict()["summary_mean"])
    assert result.diversity_dtw_paired.value == pytest.approx(0.0, abs=1e-12)  # identical text, same diversity
    # the paper's fixed baselines are fields too, normalised on the bank
    bank = load_bank(bank_path)
    tr = result.trajectory
    assert result.qtext.value == pytest.approx(bank.qtext.score_endpoints(tr.coherence_end, tr.diversity_end))
    assert 0.0 <= result.qtext.value <= 100.0
    assert (result.pca_1.value, result.pca_2.value) == pytest.approx(tuple(bank.pca.transform(tr.features())[:2]))


def test_degenerate_continuation_fails_and_names_the_token(bank_path, recorder):
    result = assert_trajectory(LOOP, prompt="A new prompt", bank=bank_path)
    with pytest.raises(AssertionError, match=r"leaves the human envelope at token \d+ of \d+"):
        result.assert_not_degenerate()
    assert recorder.checks[-1].name == "diversity_band_margin" and not recorder.checks[-1].passed
    good = assert_trajectory(HUMAN[1][1], prompt=HUMAN[1][0], bank=bank_path)
    assert good.assert_not_degenerate() is True
    assert good.diversity_dtw.value > result.diversity_dtw.value
    # the default envelope is named with its coverage; a pointwise percentile is named as such
    assert recorder.checks[-2].details["coverage"] == 0.95
    with pytest.raises(AssertionError, match=r"5th percentile of human continuations"):
        result.assert_not_degenerate(percentile=5)
    assert recorder.checks[-1].details["percentile"] == 5.0 and recorder.checks[-1].details["coverage"] is None
    with pytest.raises(ValueError, match=r"percentile must be in \[0, 100\], got 150"):
        result.assert_not_degenerate(percentile=150)
    with pytest.raises(ValueError, match=r"coverage must be in \(0, 1\], got 95"):
        result.assert_not_degenerate(coverage=95)


def test_summary_without_matched_human_is_a_clear_error(bank_path):
    result = assert_trajectory(HUMAN[0][1], prompt="A prompt the bank has never seen", bank=bank_path)
    with pytest.raises(LookupError, match="no.*same prompt|has none for prompt"):
        result.summary_mean
    assert result.likelihood.value == pytest.approx(result.likelihood_mean.value + result.likelihood_var.value)


def test_mismatched_lm_and_horizon_are_refused(bank_path):
    bank = load_bank(bank_path)
    other = dataclasses.replace(bank, lm=dict(bank.lm, model_id="0" * 16))
    with pytest.raises(BankMismatchError, match="refit the bank"):
        assert_trajectory(HUMAN[0][1], prompt=HUMAN[0][0], bank=other)
    with pytest.raises(ValueError, match="horizon 24"):
        assert_trajectory(HUMAN[0][1], prompt=HUMAN[0][0], bank=bank_path, horizon=128)
    with pytest.raises(ValueError, match="non-empty"):
        assert_trajectory("  ", prompt="x", bank=bank_path)


def test_score_command_writes_one_line_per_output(bank_path, tmp_path, capsys):
    outputs = tmp_path / "outputs.jsonl"
    outputs.write_text(
        json.dumps({"id": "a", "prompt": HUMAN[0][0], "continuation": HUMAN[0][1]})
        + "\n"
        + json.dumps({"id": "b", "prompt": "unseen", "continuation": LOOP})
        + "\n"
    )
    scores = tmp_path / "scores.jsonl"
    assert (
        cli.main(
            [
                "trajectory",
                "score",
                str(outputs),
                "--bank",
                str(bank_path),
                "--no-cache",
                "-o",
                str(scores),
                "--device",
                "cpu",
            ]
        )
        == 0
    )
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b"]
    assert rows[0]["summary_mean"] is not None and rows[1]["summary_mean"] is None
    assert rows[0]["diversity_dtw"] > rows[1]["diversity_dtw"]
    assert all(0.0 <= r["qtext"] <= 100.0 and r["pca_1"] is not None and r["pca_2"] is not None for r in rows)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"prompt": "p"}\n')
    assert cli.main(["trajectory", "score", str(bad), "--bank", str(bank_path)]) == 2
    assert "no 'continuation' field" in capsys.readouterr().err
    assert cli.main(["trajectory", "score", str(outputs), "--bank", str(tmp_path / "missing.npz")]) == 2


def test_report_section_plots_machine_against_band(bank_path, recorder):
    from pytest_nlgeval.report.sections import normalise_sections
    from pytest_nlgeval.trajectory.plugin import pytest_nlgeval_report_sections

    result = assert_trajectory(LOOP, prompt="A new prompt", bank=bank_path)
    with pytest.raises(AssertionError):
        result.assert_not_degenerate()
    results = {"checks": [c.to_dict() for c in recorder.checks]}
    sections = normalise_sections([pytest_nlgeval_report_sections(results)])
    assert len(sections) == 1 and sections[0].replaces == "nlgeval-trajectories"
    html = str(sections[0].html)
    assert html.count("<svg") == 2 and "leaves envelope at token" in html and "diversity_band_margin" in html
    assert "<title>envelope</title>" in html  # the bound the check used, dotted
    assert pytest_nlgeval_report_sections({"checks": []}) == []

    def section_for(**kwargs):
        rec = checks.CheckRecorder()
        other = assert_trajectory(LOOP, prompt="A new prompt", bank=bank_path)
        other.recorder = rec
        with pytest.raises(AssertionError):
            other.assert_not_degenerate(**kwargs)
        return str(
            normalise_sections([pytest_nlgeval_report_sections({"checks": [c.to_dict() for c in rec.checks]})])[0].html
        )

    pointwise = section_for(percentile=5)  # marked on the band's lower edge, no envelope drawn
    assert "leaves band at token" in pointwise and "<title>envelope</title>" not in pointwise
    other_level = section_for(percentile=1)  # a level whose curve is not stored: no marker at all
    assert " at token " not in other_level and "<title>envelope</title>" not in other_level


def test_meta_eval_command_correlates_scores_with_ratings(bank_path, tmp_path, capsys):
    outputs = tmp_path / "rated.jsonl"
    lines = []
    for k, (prompt, cont) in enumerate(HUMAN):
        words = cont.split()
        variants = [(cont, 5), (" ".join(words[: len(words) // 2] * 2), 3), (LOOP, 1)]
        for text, rating in variants:
            lines.append(json.dumps({"prompt_id": f"p{k}", "prompt": prompt, "continuation": text, "quality": rating}))
    outputs.write_text("\n".join(lines) + "\n")
    scores = tmp_path / "scores.jsonl"
    assert (
        cli.main(["trajectory", "score", str(outputs), "--bank", str(bank_path), "--no-cache", "-o", str(scores)]) == 0
    )
    rows = [json.loads(line) for line in scores.read_text().splitlines()]
    assert rows[0]["quality"] == 5 and rows[0]["prompt_id"] == "p0" and len(rows[0]["summary_components"]) == 4
    assert rows[0]["prompt"] == HUMAN[0][0]  # kept: it groups the rows by prompt when there is no prompt id
    capsys.readouterr()
    code = cli.main(
        [
            "trajectory",
            "meta-eval",
            str(scores),
            "--rating",
            "quality",
            "--prompt-id",
            "prompt_id",
            "--fields",
            "diversity_dtw,summary_mean,summary_mean_refit,qtext",
            "--baseline",
            "diversity_end",
            "--resamples",
            "200",
            "--seed",
            "1",
            "--format",
            "json",
        ]
    )
    table = json.loads(capsys.readouterr().out)
    assert code == 0 and table["info"]["texts"] == 15 and table["info"]["prompts"] == 5
    assert table["resamples"] == 200 and table["seed"] == 1
    rows = {r["field"]: r for r in table["rows"]}
    assert list(rows) == ["diversity_dtw", "summary_mean", "summary_mean_refit", "qtext", "diversity_end"]
    assert rows["diversity_dtw"]["value"] > 0.5  # repetition (low diversity) goes with low ratings here
    assert rows["diversity_dtw"]["low"] <= rows["diversity_dtw"]["value"] <= rows["diversity_dtw"]["high"]
    assert rows["diversity_end"]["difference"] is None and rows["qtext"]["difference"] is not None
    assert cli.main(["trajectory", "meta-eval", str(scores), "--rating", "missing", "--prompt-id", "prompt_id"]) == 2
    assert "no 'missing' field" in capsys.readouterr().err


def test_report_section_survives_foreign_details():
    from pytest_nlgeval.trajectory.plugin import pytest_nlgeval_report_sections

    checks = [
        {
            "kind": "trajectory",
            "nodeid": "t::a",
            "name": "x",
            "score": None,
            "passed": False,
            "details": {"trajectory": "not a mapping", "band": [1, 2]},
        },
        {
            "kind": "trajectory",
            "nodeid": "t::b",
            "name": "y",
            "score": "?",
            "passed": True,
            "details": {"trajectory": {"diversity": [1.0, "a"]}, "inputs": None},
        },
    ]
    (section,) = pytest_nlgeval_report_sections({"checks": checks})
    html = str(section["html"])
    assert "<svg" not in html and html.count("n/a") == 2
