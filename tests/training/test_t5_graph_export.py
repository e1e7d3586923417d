"""The T5 scoring graph the exporter writes: fused attention, position-bias table, folded cross-attention,
static int8; every variant scores what the PyTorch reference scores."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nlgeval_runtime import load_boolqa
from nlgeval_training.folder_writer import parity_texts

pytestmark = pytest.mark.xdist_group("tiny-t5")


def _ops(path):
    import onnx

    return [n.op_type for n in onnx.load(str(path)).graph.node]


def _hf_model(checkpoint):
    from transformers import T5ForConditionalGeneration

    return T5ForConditionalGeneration.from_pretrained(str(checkpoint), attn_implementation="eager").eval()


def test_default_export_is_the_fused_graph_with_static_int8(tiny_t5_model):
    manifest = json.loads((tiny_t5_model / "nlgeval.json").read_text())
    assert manifest["export"]["graph"] == "fused"
    assert manifest["quantization"] == {"int8": "static"}
    ops = _ops(tiny_t5_model / "model.onnx")
    assert ops.count("MultiHeadAttention") == 2  # one per encoder layer of the tiny model
    int8_ops = _ops(tiny_t5_model / "model.int8.onnx")
    assert "QuantizeLinear" in int8_ops and "DynamicQuantizeLinear" not in int8_ops


def test_position_bias_table_equals_hugging_face_bias(tiny_t5_checkpoint):
    import torch

    from nlgeval_training.t5_graph import T5ScoringGraph

    model = _hf_model(tiny_t5_checkpoint)
    graph = T5ScoringGraph(model, yes_id=4, no_id=5, max_length=48)
    attention = model.encoder.block[0].layer[0].SelfAttention
    with torch.no_grad():
        for length in (1, 2, 9, 48):
            assert torch.equal(graph.encoder.position_bias(length), attention.compute_bias(length, length))


@pytest.mark.parametrize("graph", ["plain", "traced"])
def test_other_graph_shapes_score_the_same(tiny_t5_model, tiny_t5_checkpoint, tmp_path, graph):
    from nlgeval_training.export import export_t5

    other = tmp_path / graph
    manifest = export_t5(tiny_t5_checkpoint, other, max_length=48, graph=graph)
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] <= 1e-5
    assert ("MultiHeadAttention" in _ops(other / "model.onnx")) is False
    texts = parity_texts(12)
    fused = load_boolqa(tiny_t5_model, device="cpu", precision="fp32").score(texts).scores
    np.testing.assert_allclose(load_boolqa(other, device="cpu", precision="fp32").score(texts).scores, fused, atol=1e-6)


def test_static_int8_scores_are_batched_and_identical_alone(tiny_t5_model):
    """Fixed activation scales: a score does not depend on its batch neighbours, so int8 batches again."""
    texts = parity_texts(12)
    scorer = load_boolqa(tiny_t5_model, device="cpu", precision="int8", batch_tokens=100_000, max_batch_size=64)
    assert scorer.batch_invariant and scorer.max_batch_size == 64
    together = scorer.score(texts).scores
    alone = np.array([scorer.score([t]).scores[0] for t in texts])
    assert np.array_equal(together, alone)
    fp32 = load_boolqa(tiny_t5_model, device="cpu", precision="fp32").score(texts).scores
    assert 0 < np.abs(together - fp32).max() < 0.1


def test_unknown_graph_or_int8_method_is_refused(tiny_t5_checkpoint, tmp_path):
    from nlgeval_training.export import export_t5

    with pytest.raises(ValueError, match="graph must be one of"):
        export_t5(tiny_t5_checkpoint, tmp_path / "a", graph="flash")
    with pytest.raises(ValueError, match="int8_method must be one of"):
        export_t5(tiny_t5_checkpoint, tmp_path / "b", int8=True, int8_method="smooth")


def test_calibration_texts_are_deterministic_and_cover_the_questions():
    from nlgeval_training.static_int8 import pseudo_calibration_texts

    texts = pseudo_calibration_texts(48)
    assert texts == pseudo_calibration_texts(48) and len(set(texts)) > 40
    assert not set(texts) & set(parity_texts(48)), "calibration and parity inputs must differ"
    for question in (
        "fluent paragraph",
        "consistent with the document",
        "coherent summary",
        "relevant",
        "natural response",
        "dialogue history",
    ):
        assert any(question in t for t in texts)
