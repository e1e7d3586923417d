"""Generated judges with DSPy's DummyLM and a rule-following fake model: generators, parse failures, cache."""

import math

import pytest
from induction_fakes import AXES, RuleLM, dummy_judge_answers, synthetic_rows

import dspy
from pytest_nlgeval.induction.dataset import build_dataset
from pytest_nlgeval.induction.judge_generation import (
    criterion_judges,
    example_judge,
    generate_judges,
    high_low_examples,
    judge_card,
    propose_axes,
    rubric_judges,
)
from pytest_nlgeval.induction.judges import JudgeSpec, run_judge
from pytest_nlgeval.llm.cache import cached_lm, request_key


@pytest.fixture
def data():
    return build_dataset(synthetic_rows(30), target="label")


@pytest.fixture
def cache(tmp_path):
    return tmp_path / "llm-cache"


SPEC = JudgeSpec(
    kind="criterion",
    name="judge_clear",
    task="Answer questions",
    target="helpfulness",
    criterion="Clarity: the answer is easy to follow",
)


def test_judge_scores_and_rationales(cache):
    lm = cached_lm(dspy.utils.DummyLM(dummy_judge_answers([4, 1])), cache)
    run = run_judge(SPEC, lm, ["first", "second"], ["q1", "q2"])
    assert run.values == [4.0, 1.0]
    assert [r.rationale for r in run.results] == ["because 4", "because 1"]
    assert run.failures == 0 and lm.usage.calls == 2


def test_unparseable_output_is_retried_once_then_counted_never_scored(cache):
    answers = dummy_judge_answers(["seven", "eight", 3, "nine", 2])
    lm = cached_lm(dspy.utils.DummyLM(answers), cache)
    run = run_judge(SPEC, lm, ["a", "b", "c"], ["q", "q", "q"])
    # a: "seven" -> retry "eight" -> no score; b: 3; c: "nine" -> retry 2
    assert math.isnan(run.values[0]) and run.values[1:] == [3.0, 2.0]
    assert run.failures == 1 and run.retries == 2
    assert "seven" not in str(run.values) and "eight" in run.results[0].error
    assert lm.usage.calls == 5


def test_second_run_makes_no_llm_call(cache):
    first = cached_lm(dspy.utils.DummyLM(dummy_judge_answers([5, 2, 3])), cache)
    run_judge(SPEC, first, ["x", "y", "z"], ["q", "q", "q"])
    # an LM with no answers left would raise if it were called
    second = cached_lm(dspy.utils.DummyLM([]), cache)
    again = run_judge(SPEC, second, ["x", "y", "z"], ["q", "q", "q"])
    assert again.values == [5.0, 2.0, 3.0]
    assert second.usage.calls == 0 and second.usage.cache_hits == 3
    assert "3 LLM calls (3 from cache)" in second.usage.summary()


def test_cache_key_covers_model_parameters_and_prompt_but_not_the_api_key():
    ident = {"model": "openai/m", "model_type": "chat", "params": {"temperature": 0.0}}
    msgs = [{"role": "user", "content": "hi"}]
    base = request_key(ident, {}, None, msgs)
    assert request_key(ident, {"temperature": 0.7}, None, msgs) != base
    assert request_key({**ident, "model": "openai/other"}, {}, None, msgs) != base
    assert request_key(ident, {}, None, [{"role": "user", "content": "hi!"}]) != base
    assert request_key(ident, {"api_key": "secret"}, None, msgs) == base
    assert request_key(ident, {"rollout_id": 1}, None, msgs) != base


def test_propose_axes_shows_five_high_and_five_low_examples(data, cache):
    lm = cached_lm(dspy.utils.DummyLM([{"axes": str(AXES)}]), cache)
    axes = propose_axes(data, task="Answer questions", target="label", lm=lm, n_axes=4)
    assert axes == AXES
    prompt = lm.inner.history[-1]["messages"][-1]["content"]
    high, low = prompt.split("[[ ## low_scored ## ]]")
    assert high.count("(label = 5)") == 5 and low.count("(label = 1)") == 5
    hi_idx, lo_idx = high_low_examples([1, 5, 3, 5, 1, 2], n=2)
    assert sorted(hi_idx) == [1, 3] and sorted(lo_idx) == [0, 4]


def test_criterion_and_rubric_judges(cache):
    crit = criterion_judges(AXES[:2], task="t", target="y", uses_input=True, uses_references=False)
    assert [j.name for j in crit] == ["judge_quality", "judge_inverse"]
    assert crit[0].criterion == AXES[0] and crit[0].kind == "criterion"
    lm = cached_lm(dspy.utils.DummyLM([{f"score_{k}": f"level {k} text" for k in range(1, 6)}]), cache)
    (rub,) = rubric_judges(
        AXES[:1], task="t", target="y", lm=lm, uses_input=True, uses_references=False, taken={j.name for j in crit}
    )
    assert rub.kind == "rubric" and rub.rubric == {str(k): f"level {k} text" for k in range(1, 6)}
    judge = cached_lm(dspy.utils.DummyLM(dummy_judge_answers([2])), cache)
    run_judge(rub, judge, ["out"], ["in"])
    assert "3: level 3 text" in judge.inner.history[-1]["messages"][-1]["content"]  # the rubric is in the prompt


def test_example_judge_keeps_the_set_with_the_lowest_error(data, cache):
    lm = cached_lm(RuleLM(), cache)
    spec, selection = example_judge(data, task="t", target="label", lm=lm, n_sets=3, eval_rows=6, seed=0)
    assert len(selection.errors) == 3 and all(isinstance(e, float) for e in selection.errors)
    assert selection.chosen == selection.errors.index(min(selection.errors))
    # one example from each label quintile, on the 1-5 scale
    assert sorted(e["score"] for e in spec.examples) == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert "Example 5 (human score 5.0 of 5)" in lm.inner.prompts[-1]


def test_generate_judges_end_to_end_with_cards(data, cache):
    lm = cached_lm(RuleLM(), cache)
    specs, notes = generate_judges(
        data, task="Answer questions", target="label", lm=lm, n_criteria=2, n_rubrics=1, example_based=True
    )
    assert [s.kind for s in specs] == ["criterion", "criterion", "rubric", "examples"]
    assert notes["axes"] == AXES[:3]
    card = judge_card(specs[2], {"model": "fake/rule-lm"})
    for section in (
        "## Metric Details",
        "## Intended Use",
        "## Implementation and Cost",
        "## Known Limitations",
        "## Related Metrics",
        "## Further Reading",
        "fake/rule-lm",
        "Rubric:",
    ):
        assert section in card
    assert JudgeSpec.from_dict(specs[3].to_dict()) == specs[3]


def test_gepa_optimised_judge_keeps_the_optimised_instructions(data, cache):
    from pytest_nlgeval.induction.judge_generation import optimized_judge

    lm = cached_lm(RuleLM(), cache)
    spec = optimized_judge(
        data.subset(range(12)), task="Answer questions", target="label", lm=lm, optimizer="gepa", max_metric_calls=30
    )
    assert spec.kind == "optimized" and spec.name == "judge_gepa"
    assert spec.instructions  # copied from the compiled program, so the artifact can rebuild the judge
    run = run_judge(spec, lm, ["answer with quality 4: ok"], ["q"])
    assert run.values == [4.0]
    with pytest.raises(ValueError, match="optimizer must be"):
        optimized_judge(data, task="t", target="label", lm=lm, optimizer="sgd")


def test_make_lm_builds_a_cached_lm_without_writing_the_key(tmp_path):
    from pytest_nlgeval.llm.cache import make_lm

    lm = make_lm(
        "openai/some-model",
        api_base="http://localhost:8000/v1",
        api_key="sk-secret",
        temperature=0.3,
        cache_dir=tmp_path,
    )
    assert lm.identity["model"] == "openai/some-model"
    assert lm.identity["params"]["api_base"] == "http://localhost:8000/v1"
    assert lm.identity["params"]["temperature"] == 0.3
    assert "sk-secret" not in str(lm.identity) and lm.inner.cache is False  # DSPy's own cache is off
