"""Optimum's export engine: its two graphs (encoder; decoder without past) composed into the runtime's one
Boolean-QA graph score what UniEval's PyTorch computation scores.

Optimum itself needs transformers<4.58 and is not installed with the development stack, so the two graphs
are written here the way Optimum writes them for ``text2text-generation`` (same input and output names and
shapes), from the tiny checkpoint; ``benchmarks/export_engines.py`` runs the real Optimum."""

from __future__ import annotations

import importlib.util
import json

import numpy as np
import pytest

from nlgeval_runtime import load_boolqa
from nlgeval_training.folder_writer import parity_texts

pytestmark = pytest.mark.xdist_group("tiny-t5")


def _optimum_shaped_graphs(checkpoint, raw):
    """encoder_model.onnx and decoder_model.onnx with Optimum's interface for a T5 without past."""
    import warnings

    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    model = T5ForConditionalGeneration.from_pretrained(str(checkpoint), attn_implementation="eager").eval()
    tok = AutoTokenizer.from_pretrained(str(checkpoint))

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model  # a submodule: its weights become the graph's initializers

    class Encoder(Wrapper):
        def forward(self, input_ids, attention_mask):
            return self.model.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

    class Decoder(Wrapper):
        def forward(self, encoder_attention_mask, input_ids, encoder_hidden_states):
            return self.model(
                encoder_outputs=(encoder_hidden_states,),
                attention_mask=encoder_attention_mask,
                decoder_input_ids=input_ids,
            ).logits

    sample = tok(["a short one", "a somewhat longer input text here"], padding=True, return_tensors="pt")
    raw.mkdir(parents=True)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hidden = model.encoder(input_ids=sample.input_ids, attention_mask=sample.attention_mask).last_hidden_state
        torch.onnx.export(
            Encoder(),
            (sample.input_ids, sample.attention_mask),
            str(raw / "encoder_model.onnx"),
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={k: {0: "batch_size", 1: "encoder_sequence_length"} for k in ("input_ids", "attention_mask")},
            opset_version=17,
            dynamo=False,
        )
        start = torch.zeros((2, 1), dtype=torch.long)
        torch.onnx.export(
            Decoder(),
            (sample.attention_mask, start, hidden),
            str(raw / "decoder_model.onnx"),
            input_names=["encoder_attention_mask", "input_ids", "encoder_hidden_states"],
            output_names=["logits"],
            dynamic_axes={
                "encoder_attention_mask": {0: "batch_size", 1: "encoder_sequence_length"},
                "input_ids": {0: "batch_size", 1: "decoder_sequence_length"},
                "encoder_hidden_states": {0: "batch_size", 1: "encoder_sequence_length"},
                "logits": {0: "batch_size", 1: "decoder_sequence_length"},
            },
            opset_version=17,
            dynamo=False,
        )
    return model, tok


@pytest.mark.parametrize("inline_limit", [None, 0], ids=["inline", "past-the-inline-limit"])
def test_optimum_graphs_composed_into_a_folder_score_what_pytorch_scores(
    tiny_t5_checkpoint, tmp_path, monkeypatch, inline_limit
):
    from nlgeval_training import optimum_engine
    from nlgeval_training.optimum_engine import folder_from_optimum
    from nlgeval_training.t5_trace import t5_reference_scores

    if inline_limit is not None:  # as for t5-v1_1-large, whose two graphs together pass protobuf's 2 GB
        monkeypatch.setattr(optimum_engine, "INLINE_LIMIT", inline_limit)
    raw, out = tmp_path / "raw", tmp_path / "folder"
    model, tok = _optimum_shaped_graphs(tiny_t5_checkpoint, raw)
    manifest = folder_from_optimum(tiny_t5_checkpoint, raw, out, max_length=48)
    assert manifest["variants"] == {"fp32": "model.onnx"} and manifest["export"]["graph"] == "optimum"
    assert manifest["external_data"] == ({} if inline_limit is None else {"model.onnx": ["model.onnx.data"]})
    assert sorted(p.name for p in raw.iterdir()) == ["decoder_model.onnx", "encoder_model.onnx"]  # no leftovers
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] < 1e-5
    assert json.loads((out / "nlgeval.json").read_text())["files"]["model.onnx"]

    texts = parity_texts(6)
    yes, no = tok("Yes").input_ids[0], tok("No").input_ids[0]
    reference = t5_reference_scores(model, tok, texts, max_length=48, yes_id=yes, no_id=no)
    scores = load_boolqa(out, device="cpu", precision="fp32").score(texts).scores
    np.testing.assert_allclose(scores, reference, atol=1e-5)
    assert np.ptp(reference) > 1e-3  # the inputs are told apart: the comparison can fail


def test_compose_refuses_graphs_that_are_not_optimums(tiny_t5_model, tmp_path):
    import shutil

    from nlgeval_training.optimum_engine import compose_boolqa

    shutil.copy(tiny_t5_model / "model.onnx", tmp_path / "encoder_model.onnx")
    shutil.copy(tiny_t5_model / "model.onnx", tmp_path / "decoder_model.onnx")
    with pytest.raises(ValueError, match=r"encoder_model\.onnx: not an Optimum T5 encoder"):
        compose_boolqa(
            tmp_path / "encoder_model.onnx",
            tmp_path / "decoder_model.onnx",
            tmp_path / "out.onnx",
            yes_id=4,
            no_id=5,
            start_id=0,
        )


@pytest.mark.skipif(importlib.util.find_spec("optimum") is not None, reason="Optimum is installed here")
def test_raw_export_without_optimum_names_what_to_install(tiny_t5_checkpoint, tmp_path, capsys):
    from nlgeval_training.optimum_engine import main

    assert main(["raw", str(tiny_t5_checkpoint), str(tmp_path / "raw")]) == 2
    err = capsys.readouterr().err
    assert "optimum-onnx[onnxruntime]" in err and "transformers<4.58" in err
