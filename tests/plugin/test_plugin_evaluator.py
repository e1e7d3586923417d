"""The Evaluator on a tiny model: fingerprint without a session, cache, batching, aggregation."""

from __future__ import annotations

import pytest

from pytest_nlgeval.core.dimensions import InputError
from pytest_nlgeval.core.evaluator import Evaluator

DOC = "Officials said the bridge would reopen next week after repairs. The cat sat on the mat."
OUTS = ["The bridge will reopen. Repairs are done.", "The cat sat on the mat.", "It is raining today."]


# comparisons made here land in a recorder of the test's own, not in the session running these tests
pytestmark = pytest.mark.usefixtures("recorder")


def test_fingerprint_is_known_before_any_session(tiny_t5_model, tmp_path):
    ev = Evaluator(tiny_t5_model, device="cpu", cache_dir=tmp_path)
    planned = ev.fingerprint_id
    assert not ev.session_created
    assert ev.fingerprint["precision"] == "fp32" and ev.fingerprint["provider"] == "CPUExecutionProvider"
    # the session agrees with the plan; the evaluator adds its own settings (source windows) to the runtime's
    assert {**ev.scorer.fingerprint, "source_windows": "auto"} == ev.fingerprint
    assert ev.fingerprint_id == planned
    assert Evaluator(tiny_t5_model, device="cpu", precision="int8", cache=False).fingerprint_id != planned


def test_cache_serves_a_new_evaluator_without_a_session(tiny_t5_model, tmp_path):
    cold = Evaluator(tiny_t5_model, device="cpu", cache_dir=tmp_path)
    first = cold.score_batch(OUTS, "consistency", source=DOC)
    assert cold.stats["scored"] == 4 and cold.stats["sessions"] == 1  # 2 + 1 + 1 sentences
    warm = Evaluator(tiny_t5_model, device="cpu", cache_dir=tmp_path)
    assert warm.score_batch(OUTS, "consistency", source=DOC) == first
    assert warm.stats == {"scored": 0, "cached": 4, "sessions": 0, "calls": 1}
    assert not warm.session_created


def test_batched_equals_single_and_duplicates_are_scored_once(tiny_t5_model):
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    many = ev.score_batch(OUTS + OUTS, "fluency")
    assert many[:3] == many[3:]
    assert ev.stats["scored"] == 4  # 4 distinct sentences, each sent to the model once
    singles = [float(ev.score(o, "fluency")) for o in OUTS]
    assert singles == pytest.approx(many[:3], abs=1e-6)


def test_aggregations(tiny_t5_model):
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    fluency = ev.score(OUTS[0], "fluency")
    units = [u["score"] for u in fluency.details["units"]]
    assert len(units) == 2 and float(fluency) == pytest.approx(sum(units) / 2)
    engaging = ev.score("I like it. It is fun.", "engagingness", task="dialogue", context="hi", fact="fun")
    assert float(engaging) == pytest.approx(sum(u["score"] for u in engaging.details["units"]))
    overall = ev.score(OUTS[0], "overall", source=DOC, reference="The bridge reopens.")
    components = overall.details["components"]
    assert list(components) == ["coherence", "consistency", "fluency", "relevance"]
    assert components["fluency"] == pytest.approx(float(fluency))
    assert float(overall) == pytest.approx(sum(components.values()) / 4)


def test_list_argument_errors(tiny_t5_model):
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    with pytest.raises(InputError, match="either sources=.* or source=.*not both"):
        ev.score_batch(OUTS, "consistency", sources=[DOC] * 3, source=DOC)
    with pytest.raises(InputError, match="outputs must be a list of strings, got str"):
        ev.score_batch("one output", "fluency")
    with pytest.raises(InputError, match="outputs is an empty list"):
        ev.score_batch([], "fluency")
    with pytest.raises(InputError, match=r"outputs\[1\] is empty"):
        ev.score_batch(["fine.", " "], "fluency")
    with pytest.raises(InputError, match="sources= must be a list with one entry per output"):
        ev.score_batch(OUTS, "consistency", sources=DOC)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"device": "tpu"}, "device 'tpu' is not one of auto, cpu, cuda"),
        ({"precision": "bf16"}, "precision 'bf16' is not one of"),
        ({"batch_size": 0}, "batch_size must be a positive integer"),
    ],
)
def test_bad_configuration(kwargs, message):
    with pytest.raises(Exception, match=message):
        Evaluator("unused", **kwargs)


def test_provider_only_a_session_can_tell_is_remembered_in_the_cache(tiny_t5_model, tmp_path, monkeypatch):
    # With device "auto" and CUDA listed by onnxruntime, only a session tells which provider runs
    # (planned_fingerprint returns None). The first run records the session's fingerprint for the request;
    # a warm run reads it back and needs no session.
    import nlgeval_runtime.fingerprint as fingerprint

    monkeypatch.setattr(fingerprint, "planned_fingerprint", lambda *args, **kwargs: None)
    cold = Evaluator(tiny_t5_model, device="auto", cache_dir=tmp_path)
    first = cold.score_batch(OUTS, "fluency")
    assert cold.stats["sessions"] == 1
    warm = Evaluator(tiny_t5_model, device="auto", cache_dir=tmp_path)
    assert warm.fingerprint_id == cold.fingerprint_id and not warm.session_created
    assert warm.score_batch(OUTS, "fluency") == first and warm.stats["sessions"] == 0
    # without a cache there is nowhere to remember it: the fingerprint needs a session
    bare = Evaluator(tiny_t5_model, device="auto", cache=False)
    assert bare.fingerprint_id == cold.fingerprint_id and bare.session_created


def test_a_warm_evaluator_imports_no_onnxruntime(tiny_t5_model, tmp_path):
    import subprocess
    import sys

    Evaluator(tiny_t5_model, device="auto", cache_dir=tmp_path).score_batch(OUTS, "fluency")
    code = (
        f"import sys; from pytest_nlgeval import Evaluator; "
        f"ev = Evaluator({str(tiny_t5_model)!r}, device='auto', cache_dir={str(tmp_path)!r}); "
        f"ev.score_batch({OUTS!r}, 'fluency'); "
        f"print(ev.stats['sessions'], sorted(m for m in ('onnxruntime', 'numpy', 'tokenizers') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["0", "[]"]


def test_truncated_inputs_are_flagged_in_details_and_messages(tiny_t5_model):
    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)  # the tiny model keeps 48 tokens
    long_doc = " ".join(["The company reported a sharp rise in quarterly profits."] * 20)
    score = ev.score("Profits rose.", "coherence", source=long_doc)
    assert score.details["truncated"] is True
    with pytest.raises(AssertionError, match="longer than the model's maximum length; its tail was cut"):
        score > 0.999
    assert ev.score("Profits rose.", "fluency").details["truncated"] is False
