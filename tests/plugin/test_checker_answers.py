"""A fact checker's answer is checked: a graph that gives logits (7.5, -2.0) where a probability belongs is a named
error naming the checker, never a claim read as supported."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from tiny_checkers import build_flan_t5  # noqa: E402

pytestmark = pytest.mark.usefixtures("recorder")


@pytest.fixture(scope="module")
def checker_folder(tmp_path_factory):
    from nlgeval_training.checkers import export_checker

    root = tmp_path_factory.mktemp("checker-answers")
    checkpoint = build_flan_t5(root / "ckpt")
    export_checker(checkpoint, root / "minicheck-ft5", checker="minicheck-flan-t5-large", int8=False)
    return root / "minicheck-ft5"


class Logits:
    """An ONNX session stand-in that answers ``value`` for every input."""

    def __init__(self, inner, value: float) -> None:
        self.inner, self.value = inner, value

    def run(self, outputs, feeds):
        return [np.full((feeds["input_ids"].shape[0],), self.value, dtype=np.float32)]

    def get_inputs(self):
        return self.inner.get_inputs()


@pytest.mark.parametrize("value", [7.5, -2.0, 1.5])
def test_a_checker_that_answers_a_logit_is_a_named_error(checker_folder, value):
    from nlgeval_runtime.claim_support import load_claim_checker
    from nlgeval_runtime.errors import ScoringError

    checker = load_claim_checker(checker_folder, device="cpu", precision="fp32")
    checker.session.inner = Logits(checker.session.inner, value)
    with pytest.raises(ScoringError, match=rf"minicheck-flan-t5-large .* answered {value:g} .*not a probability"):
        checker.support(["The cat sat on the mat."], ["A cat sat."])


def test_a_logit_never_passes_a_fact_gate(checker_folder):
    from nlgeval_runtime.errors import ScoringError

    from pytest_nlgeval.core.evaluator import Evaluator

    ev = Evaluator(cache=False, device="cpu", fact_checker=checker_folder)
    ev.score("A cat sat.", "consistency", source="The cat sat on the mat.")  # loads the checker
    (checker,) = [r for key, r in ev._resources.items() if key[0] == "claim-support"]
    checker.session.inner = Logits(checker.session.inner, 7.5)
    with pytest.raises(ScoringError, match="not a probability"):
        ev.score("The dog ran away.", "consistency", source="The cat sat on the mat.")


def test_a_probability_within_rounding_of_the_bounds_is_clipped(checker_folder):
    from nlgeval_runtime.claim_support import load_claim_checker

    checker = load_claim_checker(checker_folder, device="cpu", precision="fp32")
    checker.session.inner = Logits(checker.session.inner, 1.0000001)
    (support,) = checker.support(["The cat sat on the mat."], ["A cat sat."])
    assert support.score == 1.0
