"""Per-check and per-suite verdicts, the paired bootstrap, tolerances and evaluator fingerprints."""

from __future__ import annotations

import random
from dataclasses import replace

import numpy as np
import pytest

from baseline_results import FINGERPRINT, base_scores, make_results
from pytest_nlgeval.baseline.bootstrap import paired_bootstrap
from pytest_nlgeval.baseline.compare import MIN_SUITE_CASES, compare
from pytest_nlgeval.baseline.errors import BaselineError, EvaluatorMismatchError, KeyMismatchError
from pytest_nlgeval.baseline.render import render_markdown, render_text
from pytest_nlgeval.baseline.store import Baseline
from pytest_nlgeval.baseline.tolerances import Tolerances, parse_tolerance_specs

FLU, COH = ("summarization", "fluency"), ("summarization", "coherence")


def snap(suites, **kw) -> Baseline:
    return Baseline.from_results(make_results(suites, **kw))


def test_paired_bootstrap_matches_a_direct_computation():
    old = [0.5, 0.6, 0.7, 0.8, 0.4, 0.55]
    new = [0.45, 0.62, 0.6, 0.7, 0.41, 0.5]
    r = paired_bootstrap(old, new, replicates=2000, seed=3)
    diff = np.subtract(new, old)
    rng = np.random.default_rng(3)
    means = diff[rng.integers(0, len(diff), size=(256, len(diff)))].mean(axis=1)  # the first block
    assert r.statistic == pytest.approx(diff.mean())
    assert r.low < r.statistic < r.high and r.n == 6 and r.replicates == 2000 and r.seed == 3
    assert r.low >= diff.min() and r.high <= diff.max()
    full = paired_bootstrap(old, new, replicates=256, seed=3)
    assert (full.low, full.high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])))
    assert paired_bootstrap(old, new, seed=3) == r  # seeded: reproducible
    constant = paired_bootstrap([0.8, 0.7, 0.9], [0.6, 0.5, 0.7])
    assert (constant.statistic, constant.low, constant.high) == pytest.approx((-0.2, -0.2, -0.2))
    with pytest.raises(ValueError, match="paired"):
        paired_bootstrap([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="finite"):
        paired_bootstrap([0.1, float("nan")], [0.1, 0.2])


def test_unchanged_suite_has_no_regression_with_any_seed():
    scores = base_scores(30)
    base, head = snap({FLU: scores, COH: scores[::-1]}), snap({FLU: scores, COH: scores[::-1]})
    for seed in range(20):
        c = compare(base, head, seed=seed)
        assert not c.failed and c.counts()["unchanged"] == 60 and all(s.status == "unchanged" for s in c.suites)


def test_noise_within_tolerance_gives_zero_false_alarms_over_20_seeds():
    # An application whose outputs vary a little between runs: every case moves by up to +-0.04
    # (below the 0.05 check tolerance), zero mean. 20 runs, each with its own noise and bootstrap seed.
    scores = base_scores(40)
    base = snap({FLU: scores, COH: scores})
    alarms = 0
    for seed in range(20):
        rng = random.Random(100 + seed)
        noisy = {key: [s + rng.uniform(-0.04, 0.04) for s in scores] for key in (FLU, COH)}
        c = compare(base, snap(noisy), seed=seed)
        alarms += c.failed
        assert all(s.bootstrap is not None and s.bootstrap.n == 40 for s in c.suites)
    assert alarms == 0


def test_one_case_drop_is_a_check_regression_not_a_suite_one():
    scores = base_scores(20)
    dropped = list(scores)
    dropped[7] -= 0.2
    c = compare(snap({FLU: scores}), snap({FLU: dropped}))
    assert c.failed and [v.key for v in c.regressions] == ["tests/test_app.py::test_fluency[case7]::fluency::0"]
    v = c.regressions[0]
    assert v.old == scores[7] and v.new == pytest.approx(scores[7] - 0.2) and v.tolerance == 0.05
    assert c.suites[0].status == "unchanged"  # one case moves the mean by 0.01 < 0.02


def test_whole_dimension_drop_below_the_check_tolerance_is_a_suite_regression():
    scores = base_scores(20)
    c = compare(snap({FLU: scores, COH: scores}), snap({FLU: [s - 0.03 for s in scores], COH: scores}))
    assert c.failed and not c.regressions  # every case moved by 0.03 < 0.05
    (suite,) = c.suite_regressions
    assert suite.label == "summarization/fluency" and suite.n == 20
    assert suite.change == pytest.approx(-0.03) and suite.bootstrap.high < 0 and suite.tolerance == 0.02
    lines = [line for line, _ in render_text(c)]
    assert lines[0].startswith("REGRESSION   summarization/fluency (suite, 20 cases)")
    assert "FAILED: 1 regression (0 checks, 1 suite)" in lines[-1]


def test_suite_needs_both_interval_and_tolerance():
    scores = base_scores(20)
    small = compare(snap({FLU: scores}), snap({FLU: [s - 0.01 for s in scores]}))
    assert small.suites[0].bootstrap.high < 0 and small.suites[0].status == "unchanged"  # consistent but tiny
    rng = random.Random(1)
    # Mean drop beyond the tolerance but so noisy that the interval straddles zero: no suite verdict.
    wild = [s - 0.03 + rng.choice([-0.3, 0.3]) for s in scores]
    c = compare(snap({FLU: scores}), snap({FLU: wild}), tolerances=Tolerances({"*": 1.0}))
    s = c.suites[0]
    assert s.bootstrap.low < 0 < s.bootstrap.high and s.status == "unchanged"


def test_few_cases_get_no_suite_verdict():
    c = compare(snap({FLU: [0.5] * (MIN_SUITE_CASES - 1)}), snap({FLU: [0.3] * (MIN_SUITE_CASES - 1)}))
    assert c.suites[0].status == "too few cases" and c.suites[0].bootstrap is None
    assert len(c.regressions) == MIN_SUITE_CASES - 1


def test_improvements_are_reported_and_do_not_fail():
    scores = base_scores(20)
    better = [s + 0.1 for s in scores]
    c = compare(snap({FLU: scores}), snap({FLU: better}))
    assert not c.failed and len(c.improvements) == 20 and c.suites[0].status == "improvement"
    assert "improved" in render_markdown(c)


def test_lower_is_better_checks_regress_upwards():
    scores = base_scores(10)
    c = compare(snap({FLU: scores}, operator="<"), snap({FLU: [s + 0.1 for s in scores]}, operator="<"))
    assert c.failed and len(c.regressions) == 10 and c.suite_regressions
    c = compare(snap({FLU: scores}, operator="<"), snap({FLU: [s - 0.1 for s in scores]}, operator="<"))
    assert not c.failed and len(c.improvements) == 10


def test_new_and_removed_checks():
    base = snap({FLU: [0.5, 0.6, 0.7]})
    head = snap({FLU: [0.5, 0.6], COH: [0.4]})
    c = compare(base, head)
    assert [v.key for v in c.new] == ["tests/test_app.py::test_coherence[case0]::coherence::0"]
    assert [v.key for v in c.removed] == ["tests/test_app.py::test_fluency[case2]::fluency::0"]
    assert not c.failed
    text = "\n".join(line for line, _ in render_text(c))
    assert "(no baseline entry; passes)" in text and "was 0.7000 (did not run; entry kept)" in text
    strict = compare(base, head, new_checks="fail")
    assert strict.failed and "1 new check without a baseline entry" in render_markdown(strict)
    with pytest.raises(BaselineError, match="new_checks"):
        compare(base, head, new_checks="ignore")


def test_non_finite_score_is_a_regression():
    head = make_results({FLU: [0.5, 0.6]})
    head["checks"][1]["score"] = None
    c = compare(snap({FLU: [0.5, 0.6]}), Baseline.from_results(head))
    assert c.failed and c.regressions[0].reason == "score is not finite"


def test_marker_and_ini_tolerances():
    scores = base_scores(4)
    head = [s - 0.08 for s in scores]
    assert compare(snap({FLU: scores}), snap({FLU: head})).failed
    assert not compare(snap({FLU: scores}), snap({FLU: head}, tolerance=0.1)).failed  # marker on the tests
    assert not compare(
        snap({FLU: scores}), snap({FLU: head}), tolerances=Tolerances.from_specs(["fluency = 0.1"])
    ).failed
    t = Tolerances.from_specs(
        ["fluency = 0.1", "summarization/fluency = 0.2", "metric:* = 0.5", "* = 0.3"], ["* = 0.01"]
    )
    assert t.for_check("dimension", "summarization", "fluency") == 0.2
    assert t.for_check("dimension", "dialogue", "fluency") == 0.1
    assert t.for_check("metric", None, "helpful") == 0.5 and t.for_check("dimension", None, "x") == 0.3
    assert t.for_check("dimension", None, "x", marker=0.01) == 0.01 and t.for_suite("metric", None, "m") == 0.01
    d = Tolerances()
    assert d.for_check("dimension", "dialogue", "engagingness") == 0.15 and d.for_check("metric", None, "m") == 0.25
    assert d.for_suite("dimension", "summarization", "fluency") == 0.02
    for bad in (["fluency"], ["fluency = high"], ["= 0.1"], ["x = -1"], ["x = nan"]):
        with pytest.raises(BaselineError, match="SELECTOR = VALUE"):
            parse_tolerance_specs(bad)


def test_different_evaluator_is_refused_naming_what_differs():
    int8 = dict(FINGERPRINT, precision="int8", files={"model.onnx": "c" * 64, "tokenizer.json": "b" * 64})
    base = snap({FLU: [0.5, 0.6]})
    head = snap({FLU: [0.5, 0.6]}, evaluator="int8cccc", fingerprint=int8)
    with pytest.raises(EvaluatorMismatchError) as info:
        compare(base, head)
    message = str(info.value)
    assert "precision: fp32 -> int8" in message and "file model.onnx: sha256 aaaaaaaaaaaa… -> cccccccccccc…" in message
    assert "fp32aaaa" in message and "int8cccc" in message and "tokenizer.json" not in message
    assert "--nlgeval-baseline-allow-evaluator-change" in message and info.value.n_checks == 2


def test_allow_evaluator_change_widens_tolerances_by_the_measured_drift():
    int8 = dict(FINGERPRINT, precision="int8")
    scores = base_scores(20)
    rng = random.Random(5)
    shifted = [s + rng.uniform(-0.06, 0.06) for s in scores]  # the int8 evaluator's drift on the same texts
    base = snap({FLU: scores})
    head = snap({FLU: shifted}, evaluator="int8cccc", fingerprint=int8)
    c = compare(base, head, allow_evaluator_change=True)
    drift = np.mean(np.abs(np.subtract(shifted, scores)))
    assert c.evaluator_change.drift["summarization/fluency"] == (pytest.approx(drift), 20)
    assert c.evaluator_change.pairs[0][2] == ("precision: fp32 -> int8",)
    assert all(v.tolerance == pytest.approx(0.05 + drift) for v in c.checks)
    assert not c.failed  # without widening, cases moved by up to 0.06 > 0.05 would be regressions
    assert any(abs(a - b) > 0.05 for a, b in zip(scores, shifted))
    text = "\n".join(line for line, _ in render_text(c))
    assert f"cross-evaluator drift summarization/fluency: {drift:.4f}" in text and "widened" in text
    # A real drop on top of the drift is still caught, on a case whose output changed.
    texts = {FLU: [f"output number {i}." for i in range(20)]}
    texts[FLU][3] = "a different output."
    dropped = list(shifted)
    dropped[3] = scores[3] - 0.5
    c = compare(
        base, snap({FLU: dropped}, evaluator="int8cccc", fingerprint=int8, texts=texts), allow_evaluator_change=True
    )
    assert [v.key for v in c.regressions] == ["tests/test_app.py::test_fluency[case3]::fluency::0"]
    assert c.evaluator_change.drift["summarization/fluency"][1] == 19  # the changed case is not drift


def test_drift_not_measurable_without_unchanged_inputs():
    texts = {FLU: [f"new output {i}." for i in range(6)]}
    c = compare(
        snap({FLU: [0.5] * 6}),
        snap({FLU: [0.2] * 6}, evaluator="int8cccc", texts=texts, fingerprint=dict(FINGERPRINT, precision="int8")),
        allow_evaluator_change=True,
    )
    assert len(c.incomparable) == 6 and not c.suites and c.evaluator_change.unmeasured == ("summarization/fluency",)
    assert "drift cannot be measured" in c.incomparable[0].reason


def test_results_dict_round_trip_of_the_comparison():
    import json

    scores = base_scores(10)
    c = compare(snap({FLU: scores}), snap({FLU: [s - 0.1 for s in scores]}), seed=4)
    data = json.loads(json.dumps(c.to_dict(), allow_nan=False))
    assert data["status"] == "regression" and data["counts"]["regressions"] == 10
    assert data["statistics"] == {
        "method": "paired bootstrap over cases, percentile interval",
        "replicates": 2000,
        "seed": 4,
        "confidence": 0.95,
        "min_cases": MIN_SUITE_CASES,
    }
    assert data["suites"][0]["label"] == "summarization/fluency" and data["suites"][0]["high"] < 0


def test_same_model_files_under_another_path_are_the_same_evaluator():
    # A laptop and CI load the same model folder from different paths: the fingerprint ids differ (the
    # path is part of the fingerprint) but the files' sha256, provider and precision are equal.
    ci = dict(FINGERPRINT, model="/home/runner/work/app/models/tiny-t5")
    c = compare(snap({FLU: [0.5, 0.6]}), snap({FLU: [0.5, 0.6]}, evaluator="ci000000", fingerprint=ci))
    assert not c.failed and c.evaluator_change is None and c.counts()["unchanged"] == 2
    no_files = dict(ci, files={})
    with pytest.raises(EvaluatorMismatchError, match="model: tiny-t5 -> /home/runner"):
        compare(
            snap({FLU: [0.5]}, fingerprint=dict(FINGERPRINT, files={})),
            snap({FLU: [0.5]}, evaluator="ci000000", fingerprint=no_files),
        )


def test_comparing_nothing_is_refused_naming_why():
    base = snap({FLU: base_scores(6)})
    moved = Baseline.from_results(make_results({FLU: base_scores(6)})).rebased("/proj", "/")
    assert next(iter(moved.entries)).startswith("proj/tests/test_app.py::")
    with pytest.raises(
        KeyMismatchError, match=r"none of the 6 checks of this run has an entry in the baseline"
    ) as info:
        compare(base, moved)
    message = str(info.value)
    assert "'proj/' that the baseline's lack" in message and "another rootdir" in message
    assert "--nlgeval-baseline=PATH" in message and "--nlgeval-baseline-update" in message
    # The other way round (the baseline was recorded with the wider rootdir).
    with pytest.raises(KeyMismatchError, match="lack the prefix 'proj/'"):
        compare(moved, base)
    # No check ran at all: nothing was compared, which is not a pass either.
    empty = Baseline.from_results(make_results({}))
    with pytest.raises(KeyMismatchError, match="no nlgeval check ran"):
        compare(base, empty)
    # A recording into an empty baseline and a run that shares every key stay ordinary comparisons.
    assert compare(Baseline(), base).counts()["new"] == 6
    assert not compare(base, snap({FLU: base_scores(6)})).failed


def test_mostly_new_and_as_many_removed_is_refused_but_a_subset_is_not():
    base = snap({FLU: base_scores(10)})
    head = Baseline.from_results(make_results({FLU: base_scores(10)}))
    renamed = {}
    for i, (key, entry) in enumerate(sorted(head.entries.items())):
        if i >= 3:  # 7 of 10 checks moved to another file
            key = key.replace("test_app.py", "test_other.py")
            entry = replace(entry, key=key, nodeid=entry.nodeid.replace("test_app.py", "test_other.py"))
        renamed[key] = entry
    with pytest.raises(
        KeyMismatchError,
        match=r"only 3 of the 10 checks of this run have an entry .*7 are new "
        r"and 7 entries did not run",
    ):
        compare(base, Baseline(renamed, head.evaluators, "this run", "results"))
    # A -k subset (few checks, many removed) and a few added tests are normal.
    subset = snap({FLU: base_scores(10)[:2]})
    assert compare(base, subset).counts()["removed"] == 8
    more = snap({FLU: base_scores(10) + [0.5, 0.5]})
    assert compare(base, more).counts()["new"] == 2


def test_judged_checks_are_compared_on_their_own_scale():
    """An LLM-judged check (1-5 scale) is stored and compared like any other: a one-point drop of a case is a
    regression, a third of a point is not, and the suite's paired bootstrap sees a whole-suite drop."""
    base_values = [4.0, 4.5, 3.8, 4.2, 4.0, 4.6]
    judged = ("rag", "The answer names the deadline.")
    base = snap({judged: base_values}, kind="judged")
    assert {e.kind for e in base.entries.values()} == {"judged"}
    one_drop = snap({judged: [3.0] + base_values[1:]}, kind="judged")
    result = compare(base, one_drop)
    statuses = sorted(v.status for v in result.checks)
    assert statuses.count("regression") == 1 and statuses.count("unchanged") == 5
    small = snap({judged: [v - 0.3 for v in base_values]}, kind="judged")
    assert not [v for v in compare(base, small).checks if v.status == "regression"]
    suite = compare(base, small).suites[0]
    assert suite.status == "regression"  # every case 0.3 lower: beyond the suite tolerance of 0.2, interval < 0
