"""The induced metric as a GEPA-compatible DSPy metric, a TRL-style reward, and a pytest assertion."""

import inspect

import pytest
from induction_fakes import RuleLM, synthetic_rows

import dspy
from pytest_nlgeval.induction import as_dspy_metric, as_reward_fn, assert_metric, induce
from pytest_nlgeval.induction.artifact import JudgeParseError
from pytest_nlgeval.induction.assertions import assert_metrics
from pytest_nlgeval.induction.dataset import build_dataset
from pytest_nlgeval.core.score import Score

# comparisons made here land in a recorder of the test's own, not in the session running these tests
pytestmark = pytest.mark.usefixtures("recorder")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGEVAL_LLM_CACHE", str(tmp_path / "llm-cache"))


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    lm = RuleLM()
    from pytest_nlgeval.llm.cache import cached_lm

    metric = induce(
        build_dataset(synthetic_rows(40), target="label"),
        task="Answer questions",
        target="label",
        lm=cached_lm(lm, cache),
        n_criteria=1,
        n_rubrics=0,
        example_judge=False,
        n_boot=50,
        robustness=False,
    )
    path = metric.save(tmp_path_factory.mktemp("m") / "helpful.json")
    return metric, path


def test_dspy_metric_signature_and_prediction(judged):
    metric, path = judged
    fn = as_dspy_metric(metric, output_field="answer", input_field="question")
    assert list(inspect.signature(fn).parameters) == ["gold", "pred", "trace", "pred_name", "pred_trace"]
    gold = dspy.Example(question="q?", answer="unused").with_inputs("question")
    good = fn(gold, dspy.Prediction(answer="answer with quality 5: fine."))
    bad = fn(gold, dspy.Prediction(answer="answer with quality 1: no."), None, "predict", None)
    assert isinstance(good, dspy.Prediction) and 0.0 <= bad.score < good.score <= 1.0
    assert "quality 1" in bad.feedback  # the judge's rationale reaches the optimiser
    # DSPy's Evaluate can sum these predictions
    program = dspy.Predict("question -> answer")
    with dspy.context(lm=dspy.utils.DummyLM([{"answer": "answer with quality 4: ok."}] * 2)):
        result = dspy.Evaluate(devset=[gold, gold], metric=fn, num_threads=1)(program)
    assert 0 < float(result.score) <= 100
    with pytest.raises(KeyError, match="output_field"):
        as_dspy_metric(path, output_field="text", lm=RuleLM())(gold, dspy.Prediction(answer="x"))


def test_dspy_metric_on_unparseable_output(judged):
    metric, _ = judged
    fn = as_dspy_metric(metric, output_field="answer", input_field=None)
    gold = dspy.Example(question="q").with_inputs("question")
    with pytest.raises(JudgeParseError):
        fn(gold, dspy.Prediction(answer="UNPARSEABLE"))
    fixed = as_dspy_metric(metric, output_field="answer", input_field=None, failure_score=0.0)
    assert fixed(gold, dspy.Prediction(answer="UNPARSEABLE")).score == 0.0


def test_reward_fn_takes_strings_or_chat_messages(judged):
    _, path = judged
    reward = as_reward_fn(path, lm=RuleLM())
    assert list(inspect.signature(reward).parameters) == ["completions", "prompts", "kw"]
    plain = reward(["quality 5 answer", "quality 1 answer"], prompts=["q1", "q2"])
    chat = reward(
        [
            [{"role": "assistant", "content": "quality 5 answer"}],
            [{"role": "assistant", "content": "quality 1 answer"}],
        ],
        prompts=[[{"role": "user", "content": "q1"}], [{"role": "user", "content": "q2"}]],
    )
    assert plain == chat and all(isinstance(v, float) for v in plain) and plain[0] > plain[1]
    raw = as_reward_fn(path, normalize=False, lm=RuleLM())(["quality 5 answer"])
    assert 1.0 <= raw[0] <= 6.0
    with pytest.raises(ValueError, match="2 completions, 1 prompts"):
        reward(["a", "b"], prompts=["q"])
    with pytest.raises(JudgeParseError, match="failure_score"):
        reward(["UNPARSEABLE"])
    assert as_reward_fn(path, failure_score=-1.0, lm=RuleLM())(["UNPARSEABLE"]) == [-1.0]


def test_assert_metric_returns_a_recorded_metric_score(judged):
    metric, path = judged
    score = assert_metric("answer with quality 5: great.", str(path), input="q?", lm=RuleLM())
    assert isinstance(score, Score) and score.kind == "metric" and score.name == "label"
    assert score >= 3.5
    card = score.details["metric_card"]
    assert card["components"] and card["heldout"]["n"] == 12 and score.details["rationales"]
    # the metric's composition is the check's "evaluator": a re-induced metric is never compared silently
    assert score.evaluator_id == metric.fingerprint_id and score.evaluator_fingerprint["kind"] == "induced-metric"
    changed = type(metric).from_dict({**metric.to_dict(), "pls": {**metric.to_dict()["pls"], "intercept": 0.0}})
    assert changed.fingerprint_id != metric.fingerprint_id
    low = assert_metric("answer with quality 1: meh.", metric, input="q?")
    with pytest.raises(AssertionError) as err:
        assert low >= 3.5
    assert "component contributions" in str(err.value) and "judge_quality" in str(err.value)
    many = assert_metrics(["quality 5 a", "quality 4 b"], path, inputs=["q", "q"], lm=RuleLM())
    assert many.mean() > 3.0
    with pytest.raises(FileNotFoundError, match="nlgeval induce"):
        assert_metric("x", "metrics/missing.json")
    with pytest.raises(JudgeParseError):
        assert_metric("UNPARSEABLE", metric)
