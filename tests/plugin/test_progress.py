"""Progress of long runs (pytest_nlgeval.core.progress): a line per tenth in a log, nothing for short or quiet
runs, and the evaluator's long batches draw it without changing a score."""

from __future__ import annotations

import io

from pytest_nlgeval.core.progress import MIN_ITEMS, progress


def test_a_log_gets_about_ten_updates_and_short_or_quiet_runs_none():
    log = io.StringIO()
    with progress(1000, "scoring", unit="row", stream=log) as bar:
        for _ in range(250):
            bar.update(4)
    written = log.getvalue()
    updates = written.count("\r")
    assert 10 <= updates <= 13, updates
    assert "scoring: 100%" in written and "1000/1000" in written and "#" in written  # plain characters
    for total, enabled in ((MIN_ITEMS - 1, True), (1000, False)):
        quiet = io.StringIO()
        with progress(total, "scoring", stream=quiet, enabled=enabled) as bar:
            bar.update(total)
        assert quiet.getvalue() == ""


def test_a_long_batch_draws_its_progress_and_scores_as_one_call(tmp_path):
    from pytest_nlgeval.core.evaluator import Evaluator

    outputs = [f"The council approved bridge number {k}. Work starts in May." for k in range(80)]
    stream = io.StringIO()
    drawn = Evaluator(cache=False, progress=stream).score_batch(outputs, "fluency")
    plain = Evaluator(cache=False).score_batch(outputs, "fluency")
    assert drawn == plain
    assert "nlgeval summarization/fluency" in stream.getvalue() and "80/80" in stream.getvalue()


def test_one_output_that_costs_many_model_inputs_draws_them_and_scores_the_same(monkeypatch):
    from pytest_nlgeval.core import models
    from pytest_nlgeval.core.evaluator import Evaluator

    source = "The shop on Mill Street sells tea, coffee and cake. It opens at eight and closes at six."
    output = " ".join(f"The shop sells tea number {k} at its counter." for k in range(40))
    plain = Evaluator(cache=False).score(output, "consistency", source=source)
    monkeypatch.setattr(models, "LONG_CALL_INPUTS", 32)  # one output's 40 claims in one call
    stream = io.StringIO()
    drawn = Evaluator(cache=False, progress=stream).score(output, "consistency", source=source)
    assert float(drawn) == float(plain)
    assert "nlgeval model inputs" in stream.getvalue() and "40/40" in stream.getvalue()


BATCH_SUITE = """
from pytest_nlgeval import assert_dimensions

def test_many():
    outputs = [f"The council approved bridge number {k}. Work starts in May." for k in range(40)]
    assert assert_dimensions(outputs, "fluency").mean() > 0.1
"""


def test_the_plugin_shows_a_long_batch_unless_quiet(pytester):
    pytester.makepyfile(test_batch=BATCH_SUITE)
    shown = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--nlgeval-no-cache")
    shown.assert_outcomes(passed=1)
    assert "nlgeval summarization/fluency" in shown.stderr.str() and "40/40" in shown.stderr.str()
    quiet = pytester.runpytest_subprocess("-q", "-p", "no:cacheprovider", "--nlgeval-no-cache")
    quiet.assert_outcomes(passed=1)
    assert "nlgeval summarization/fluency" not in quiet.stderr.str() + quiet.stdout.str()
