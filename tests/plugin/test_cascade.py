"""The stepwise reading of a claim's source (``cascade`` in the declaration): a claim whose best-sharing unit
supports it stops there; one that its aligned units leave undecided reads the whole source; a wrong claim reads
every step, with the score of a full reading."""

import copy

import pytest

from pytest_nlgeval.core.evaluator import Evaluator

SOURCE = (
    "The city council of Lindau approved a new bridge on Tuesday. The bridge will cost 38 million euros. "
    "Construction starts in May and should take two years. The old bridge will stay open until then. "
    "Mayor Anna Berg said the vote was a relief for commuters."
)


@pytest.fixture(scope="module")
def evaluators():
    cascaded = Evaluator(cache=False, threads=2)
    full = Evaluator(cache=False, threads=2)
    served = full._served

    def without_cascade(dim):
        spec = served(dim)
        if "cascade" in spec:
            spec = copy.deepcopy(spec)
            del spec["cascade"]
        return spec

    full._served = without_cascade
    assert "cascade" in cascaded._served(cascaded.dimension("consistency", "summarization"))
    yield cascaded, full
    cascaded.close()
    full.close()


def _read(ev, text):
    before = ev.stats["scored"]
    score = ev.score(text, "consistency", source=SOURCE)
    return score, ev.stats["scored"] - before


def test_a_supported_claim_stops_after_its_best_sharing_unit(evaluators):
    cascaded, full = evaluators
    text = "The council of Lindau approved a new bridge on Tuesday."  # the head's support from one unit >= 0.9
    quick, quick_inputs = _read(cascaded, text)
    slow, slow_inputs = _read(full, text)
    assert quick_inputs < slow_inputs
    assert quick.details["units"][0]["window"]["candidates_read"].startswith("1 of ")
    assert float(quick) >= 0.7 and float(quick) == pytest.approx(float(slow), abs=0.05)


def test_a_wrong_claim_no_check_names_reads_every_step_and_the_whole_source(evaluators):
    cascaded, full = evaluators
    # no number, date, name or opposite word wrong ("rejected" against "approved" is a check's): the head decides
    text = "The old bridge will be demolished before construction starts."
    quick, quick_inputs = _read(cascaded, text)
    slow, slow_inputs = _read(full, text)
    spec = cascaded._served(cascaded.dimension("consistency", "summarization"))
    unread = max(0, int(spec.get("top_units", 6)) - int(spec["cascade"].get("units", 6)))
    # every candidate but the aligned units past the cascade's `units` (still the explicit checks' evidence)
    assert quick_inputs == slow_inputs - unread
    assert quick.details["units"][0]["window"]["candidates_read"] == f"{slow_inputs - 1 - unread} of {slow_inputs - 1}"
    # the stepwise reading is the full one, and the contradiction scores far below a faithful claim (0.32 against
    # 0.9 with today's head; it passes the documented 0.2: a contradiction no check names is the head's to catch)
    faithful, _ = _read(cascaded, "The council of Lindau approved a new bridge.")
    assert float(quick) <= float(slow) + 1e-9 and float(quick) < float(faithful) - 0.3


class _Scripted:
    """Models whose answers are scripted per window text; records what each model call read."""

    def __init__(self, answers):
        self.answers = answers
        self.calls: list[list[str]] = []

    def score_texts(self, texts, graph=None):
        self.calls.append(list(texts))
        return [(self.answers[t], False, 10) for t in texts]


def _unit(texts_ranks):
    from pytest_nlgeval.core.windows import Window

    windows = [Window(k, len(texts_ranks), k, k + 1, t, rank=r) for k, (t, r) in enumerate(texts_ranks)]
    return windows, [t for t, _ in texts_ranks]


def test_three_steps_read_the_whole_source_only_for_claims_their_aligned_units_leave_undecided():
    from pytest_nlgeval.core.scorers.boolqa import _cascade

    answers = {
        "a0": 0.95, "a1": 0.1, "aw": 0.2,  # supported by its best unit: stops after step 1
        "b0": 0.4, "b1": 0.85, "bw": 0.3,  # supported by another aligned unit: no whole-source reading
        "c0": 0.1, "c1": 0.2, "cw": 0.9,  # only the whole source supports it: read in full
    }  # fmt: skip
    windows = [_unit([(f"{c}0", 0), (f"{c}1", 1), (f"{c}w", None)]) for c in "abc"]
    models = _Scripted(answers)
    out = _cascade({"cascade": {"first": 1, "stop": 0.8, "whole": 0.5}}, windows, models, None)
    assert models.calls == [["a0", "b0", "c0"], ["b1", "c1"], ["cw"]]
    assert [None if r is None else r[0] for r in out] == [0.95, None, None, 0.4, 0.85, None, 0.1, 0.2, 0.9]


def test_without_a_whole_bar_the_stop_bar_decides_both_later_steps():
    from pytest_nlgeval.core.scorers.boolqa import _cascade

    answers = {"a0": 0.5, "a1": 0.7, "aw": 0.2}
    models = _Scripted(answers)
    _cascade({"cascade": {"first": 1, "stop": 0.8}}, [_unit([("a0", 0), ("a1", 1), ("aw", None)])], models, None)
    assert models.calls == [["a0"], ["a1"], ["aw"]]
    models = _Scripted(answers)
    _cascade({}, [_unit([("a0", 0), ("a1", 1), ("aw", None)])], models, None)
    assert models.calls == [["a0", "a1", "aw"]]  # no cascade: every candidate in one call


def test_a_claim_an_explicit_check_fails_stops_after_its_first_step(evaluators):
    cascaded, _ = evaluators
    spec = cascaded._served(cascaded.dimension("consistency", "summarization"))
    assert spec["cascade"].get("decided_by_checks") is True
    text = "The bridge will cost 83 million euros."  # its number is not the source's: capped whatever is read
    score, inputs = _read(cascaded, text)
    assert inputs == 2  # its best-sharing unit and its form
    assert float(score) <= 0.2 and "83 million" in " ".join(score.explanation())
    checked = copy.deepcopy(spec)
    checked["cascade"]["decided_by_checks"] = False
    cascaded._served = lambda dim, served=cascaded._served: checked if dim.name == "consistency" else served(dim)
    try:
        slow, slow_inputs = _read(cascaded, text)
    finally:
        del cascaded._served
    assert slow_inputs > inputs and float(slow) == pytest.approx(float(score), abs=1e-9)


def test_the_whole_source_step_reads_only_windows_that_hold_half_the_claims_words():
    from pytest_nlgeval.core.scorers.boolqa import _cascade
    from pytest_nlgeval.core.windows import Window, word_share

    claim = "The harbour bridge reopened on Monday after repairs."
    windows = [
        Window(0, 3, 0, 1, "The council met.", rank=0),
        Window(0, 2, 0, 4, "The harbour bridge was closed for repairs. It reopened on Monday."),
        Window(1, 2, 4, 8, "Rain is expected on Thursday. Schools stay open."),
    ]
    assert word_share(claim, windows[1].text) >= 0.5 > word_share(claim, windows[2].text)
    answers = {w.text: 0.1 for w in windows}
    models = _Scripted(answers)
    spec = {"cascade": {"first": 1, "stop": 0.8, "whole": 0.5, "whole_words": 0.5}}
    out = _cascade(spec, [(windows, [w.text for w in windows])], models, None, units=[claim])
    assert models.calls == [[windows[0].text], [windows[1].text]]  # the window about the weather is never read
    assert out[2] is None
