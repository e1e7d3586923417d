"""A dialogue history given as one string (turns on lines, with blank lines, surrounding spaces, '\\r\\n') or as
a list of turns is the same history: every dialogue dimension scores it the same through Evaluator.evaluate,
assert_dimension, ``nlgeval score`` and the meta-evaluation values (the embedded default model)."""

from __future__ import annotations

import json

import pytest

from pytest_nlgeval.core.dimensions import DimensionRegistry, _dialogue_history

DIMENSIONS = ("naturalness", "coherence", "engagingness", "groundedness", "understandability")

TURNS = [
    [
        "hi ! do you follow football ?",
        "a little . i know the big stories , like the 222 - 0 game .",
        "georgia tech won that one , right ?",
    ],
    [
        "have you read any of the harry potter books ?",
        "all of them . the first one came out in 1997 .",
    ],
    [
        "do you like jazz ?",
        "yes , miles davis is my favourite .",
        "kind of blue is the best selling jazz record .",
        "i did not know that !",
    ],
]
FACTS = [
    "the highest score ever in a football game occurred in 1916 when georgia tech defeated cumberland 222 - 0\n",
    "the first harry potter book was published in 1997 by bloomsbury\n",
    "kind of blue by miles davis is the best selling jazz record of all time\n",
]
REPLIES = [
    "yes , they beat cumberland 222 - 0 in 1916 . hard to imagine watching that .",
    "i loved them too . bloomsbury published the first one . which is your favourite ?",
    "it is a great record . have you heard his later albums ?",
]


def _plain(turns):
    """The turns on lines, as the Topical-Chat files hold a history (' \\n ' between turns, a blank line last)."""
    return " \n ".join(turns) + " \n\n"


def _messy(turns):
    """The same turns with Windows line breaks, blank lines and surrounding spaces."""
    return "\r\n\r\n  " + "  \r\n \n\t".join(turns) + "   \r\n\n \n"


FORMS = {"plain string": _plain, "messy string": _messy, "tuple": tuple}


@pytest.fixture(scope="module")
def evaluator():
    from pytest_nlgeval.core.evaluator import Evaluator

    ev = Evaluator(cache=False)
    yield ev
    ev.close()


def test_both_forms_make_the_same_history_field():
    for turns in TURNS:
        expected = "\n".join(turns) + "\n\n"
        assert _dialogue_history(turns, "`context=`") == expected
        for name, form in FORMS.items():
            assert _dialogue_history(form(turns), "`context=`") == expected, name
    # a turn given with line breaks of its own is read as its lines
    assert _dialogue_history(["a\r\nb", " c "], "x") == _dialogue_history("a\nb\nc", "x") == "a\nb\nc\n\n"


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_evaluate_scores_both_forms_the_same(evaluator, dimension):
    expected = [float(s) for s in evaluator.evaluate(REPLIES, dimension, task="dialogue", contexts=TURNS, facts=FACTS)]
    for name, form in FORMS.items():
        got = evaluator.evaluate(REPLIES, dimension, task="dialogue", contexts=[form(t) for t in TURNS], facts=FACTS)
        assert [float(s) for s in got] == pytest.approx(expected, abs=1e-9), name


@pytest.mark.parametrize("dimension", DIMENSIONS)
def test_assert_dimension_scores_both_forms_the_same(evaluator, recorder, dimension):
    from pytest_nlgeval import assert_dimension

    for reply, turns, fact in zip(REPLIES, TURNS, FACTS):
        expected = float(
            assert_dimension(reply, dimension, task="dialogue", context=turns, fact=fact, evaluator=evaluator)
        )
        for name, form in FORMS.items():
            got = assert_dimension(
                reply, dimension, task="dialogue", context=form(turns), fact=fact, evaluator=evaluator
            )
            assert float(got) == pytest.approx(expected, abs=1e-9), name


def _rows(form):
    return [
        {"system_output": r, "source": form(t), "context": f, "scores": {d: float(k) for d in DIMENSIONS}}
        for k, (r, t, f) in enumerate(zip(REPLIES, TURNS, FACTS))
    ]


@pytest.mark.parametrize("form", [_plain, _messy], ids=["plain string", "messy string"])
def test_meta_eval_values_match_the_evaluator_on_a_list_of_turns(evaluator, tmp_path, form):
    from pytest_nlgeval.metaeval.records import load_records
    from pytest_nlgeval.metaeval.values import evaluator_values

    path = tmp_path / "rated.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows(form)))
    values = evaluator_values(load_records(path), None, DIMENSIONS, task="dialogue", evaluator_options={"cache": False})
    for dimension in DIMENSIONS:
        expected = evaluator.score_batch(REPLIES, dimension, task="dialogue", contexts=TURNS, facts=FACTS)
        got = [float(v) for v in values.for_dimension(dimension)]
        assert got == pytest.approx(expected, abs=1e-9), dimension


def test_score_command_matches_the_evaluator_on_a_list_of_turns(evaluator, tmp_path, capsys):
    from pytest_nlgeval import cli

    data = tmp_path / "rows.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in _rows(_messy)))
    out = tmp_path / "scored.jsonl"
    argv = ["score", str(data), "--task", "dialogue", "--output-field", "system_output"]
    argv += ["--context-field", "source", "--fact-field", "context", "--no-cache", "-o", str(out)]
    for dimension in DIMENSIONS:
        argv += ["-d", dimension]
    assert cli.main(argv) == 0
    capsys.readouterr()
    scored = [json.loads(line)["nlgeval"] for line in out.read_text().splitlines()]
    for dimension in DIMENSIONS:
        expected = evaluator.score_batch(REPLIES, dimension, task="dialogue", contexts=TURNS, facts=FACTS)
        assert [row[dimension] for row in scored] == pytest.approx(expected, abs=1e-9), dimension


def test_every_dialogue_dimension_is_covered():
    registry = DimensionRegistry()
    assert set(DIMENSIONS) == {d.name for d in registry if d.task == "dialogue" and d.builtin}
