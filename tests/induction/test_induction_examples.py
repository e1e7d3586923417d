"""The shipped examples: the induced metric artifact matches its dataset, and the reward example optimises
a DSPy program offline (DummyLM)."""

import importlib.util

import pytest

import dspy
from pytest_nlgeval.induction import InducedMetric, load_dataset
from paths import REPO

EXAMPLES = REPO / "examples"
BETTER = "Answer in two precise sentences, with the exact steps."


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("NLGEVAL_LLM_CACHE", str(tmp_path / "llm-cache"))


def load_example():
    spec = importlib.util.spec_from_file_location("reward_example", EXAMPLES / "metric_as_reward" / "optimize.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_shipped_artifact_reproduces_its_fit_on_the_example_dataset():
    data = load_dataset(EXAMPLES / "induced_metric" / "answers.jsonl", target="helpfulness")
    metric = InducedMetric.load(EXAMPLES / "induced_metric" / "helpful.json")
    assert metric.provenance["dataset"]["sha256"] == data.sha256
    assert metric.verify(data) == 0.0


class InstructionFollowingLM(dspy.utils.DummyLM):
    """Answers with the reference when the system prompt carries the better instruction, else declines."""

    def __init__(self, references: dict[str, str]):
        super().__init__([])
        self.references = references

    def __call__(self, prompt=None, *, messages=None, **kwargs):
        system = messages[0]["content"]
        question = next(q for q in self.references if q in messages[-1]["content"])
        answer = self.references[question] if BETTER in system else "Sorry, I am not sure."
        return [self._format_answer_fields({"answer": answer})]


def test_reward_example_optimises_a_program_with_gepa_offline():
    example = load_example()
    refs = {ex.question: ex.references[0] for ex in example.load_questions()}
    reflection = dspy.utils.DummyLM([{"new_instruction": BETTER}] * 20, adapter=dspy.JSONAdapter())
    result = example.optimise(
        InstructionFollowingLM(refs),
        optimizer="gepa",
        reflection_lm=reflection,
        n_train=4,
        n_dev=4,
        max_metric_calls=24,
    )
    assert result["program"].signature.instructions == BETTER
    assert result["after"] > result["before"]


def test_reward_example_with_bootstrap_few_shot():
    example = load_example()
    answers = {ex.question: {"answer": ex.references[0]} for ex in example.load_questions()}
    result = example.optimise(dspy.utils.DummyLM(answers), optimizer="bootstrap", n_train=4, n_dev=3)
    assert len(result["program"].demos) == 3  # traces whose reward passed the threshold
    assert 0.0 <= result["before"] <= 100.0
