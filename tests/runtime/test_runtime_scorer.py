"""The runtime Boolean-QA scorer against the PyTorch reference, and its error paths."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from nlgeval_runtime import load_boolqa
from nlgeval_runtime.boolqa import BoolQAScorer, planned_fingerprint
from nlgeval_runtime.errors import ModelFormatError, ModelIntegrityError, ProviderError
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.session import create_session
from nlgeval_runtime.tokenize import plan_batches

pytestmark = pytest.mark.xdist_group("tiny-t5")

FLUENT = "question: Is this a fluent paragraph? </s> paragraph: The cat sat on the mat."


def reference_scores(checkpoint, texts, max_length):
    """UniEval's computation in PyTorch, written out independently of the exporter."""
    import torch
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    tok = AutoTokenizer.from_pretrained(str(checkpoint))
    model = T5ForConditionalGeneration.from_pretrained(str(checkpoint)).eval()
    yes, no = tok("Yes").input_ids[0], tok("No").input_ids[0]
    out = []
    with torch.no_grad():
        for i in range(0, len(texts), 8):
            enc = tok(texts[i : i + 8], max_length=max_length, truncation=True, padding=True, return_tensors="pt")
            labels = torch.full((enc.input_ids.shape[0], 1), tok.convert_tokens_to_ids("\u2581No"))
            logits = model(input_ids=enc.input_ids, attention_mask=enc.attention_mask, labels=labels).logits
            probs = torch.softmax(logits[:, 0, :].double(), dim=-1)
            out.append((probs[:, yes] / (probs[:, yes] + probs[:, no])).numpy())
    return np.concatenate(out)


def texts_with_padding():
    words = "the company said profits rose sharply in the third quarter as demand grew".split()
    return [f"question: Is this a fluent paragraph? </s> paragraph: {' '.join(words[: 2 + i])}." for i in range(10)] + [
        "question: Is this claim consistent with the document? </s> claim: Profits rose. </s> document: "
        + " ".join(words * 2)
    ]


def test_fp32_matches_pytorch_reference_with_padding(tiny_t5_checkpoint, tiny_t5_model):
    texts = texts_with_padding()
    scorer = load_boolqa(tiny_t5_model, device="cpu", precision="fp32", batch_tokens=10_000, max_batch_size=4)
    got = scorer.score(texts).scores
    want = reference_scores(tiny_t5_checkpoint, texts, scorer.max_length)
    assert np.abs(got - want).max() <= 1e-5
    assert got.std() > 0.01, "scores of different texts should differ; the tiny model is degenerate"


def test_export_records_parity_and_int8_drift(tiny_t5_model):
    manifest = json.loads((tiny_t5_model / "nlgeval.json").read_text())
    parity = manifest["export"]["parity"]
    assert parity["fp32"]["max_abs_diff"] <= 1e-5
    assert parity["int8"]["n"] == parity["fp32"]["n"] > 0
    assert 0 <= parity["int8"]["max_abs_diff"] < 0.2
    int8 = load_boolqa(tiny_t5_model, device="cpu", precision="int8").score([FLUENT]).scores
    fp32 = load_boolqa(tiny_t5_model, device="cpu", precision="fp32").score([FLUENT]).scores
    assert abs(int8[0] - fp32[0]) < 0.2 and int8[0] != fp32[0]


def test_scores_do_not_depend_on_batching(tiny_t5_model):
    texts = texts_with_padding()
    one = load_boolqa(tiny_t5_model, device="cpu", batch_tokens=1, max_batch_size=1).score(texts).scores
    many = load_boolqa(tiny_t5_model, device="cpu", batch_tokens=100_000, max_batch_size=64).score(texts).scores
    np.testing.assert_allclose(one, many, atol=1e-6)


def test_truncation_cuts_the_tail_and_is_reported(tiny_t5_model):
    scorer = load_boolqa(tiny_t5_model, device="cpu")
    head = "question: Is this claim consistent with the document? </s> claim: Profits rose. </s> document:"
    long_text = head + " the cat sat on the mat" * 40
    res = scorer.score([FLUENT, long_text])
    assert res.truncated.tolist() == [False, True]
    assert res.n_tokens[1] > scorer.max_length
    encoded = scorer.encoder.encode([long_text])
    ids = encoded.ids[0]
    assert ids.size == scorer.max_length
    assert ids[-1] == 1, "EOS must survive truncation"
    head_ids = scorer.encoder.encode([head]).ids[0][:-1]
    assert ids[: head_ids.size].tolist() == head_ids.tolist(), "the head (question, claim) must be kept"


def test_encoder_answers_repeated_texts_from_memory(tiny_t5_model):
    encoder = load_boolqa(tiny_t5_model, device="cpu").encoder
    long_text = "question: Is this claim consistent with the document? </s> claim: Hi. </s> document:" + " the cat" * 40
    first = encoder.encode([FLUENT, long_text, FLUENT])
    again = encoder.encode([long_text])
    assert again.ids[0] is first.ids[1] and again.truncated.tolist() == [True] and again.n_tokens[0] > 48
    assert first.truncated.tolist() == [False, True, False] and first.ids[0] is first.ids[2]
    with pytest.raises(ValueError):
        first.ids[0][0] = 5  # shared rows are read-only
    encoder.MEMO_SIZE = 2
    encoder.encode([f"{FLUENT} {i}" for i in range(5)])
    assert len(encoder._memo) == 2


def test_literal_separator_becomes_eos(tiny_t5_model):
    scorer = load_boolqa(tiny_t5_model, device="cpu")
    ids = scorer.encoder.encode(["a </s> b"]).ids[0].tolist()
    assert ids.count(1) == 2  # the literal separator and the appended EOS
    assert ids[-1] == 1


def test_planned_fingerprint_equals_session_fingerprint(tiny_t5_model):
    scorer = load_boolqa(tiny_t5_model, device="cpu")
    planned = planned_fingerprint(ModelFolder.open(tiny_t5_model), str(tiny_t5_model), device="cpu")
    assert planned == scorer.fingerprint
    int8 = load_boolqa(tiny_t5_model, device="cpu", precision="int8")
    assert int8.fingerprint_id != scorer.fingerprint_id
    assert int8.fingerprint["files"].keys() == {"model.int8.onnx", "tokenizer.json"}


def test_plan_batches_respects_token_budget():
    lengths = np.array([5, 100, 7, 50, 50, 3, 200])
    batches = plan_batches(lengths, batch_tokens=200, max_batch_size=3)
    assert sorted(np.concatenate(batches).tolist()) == list(range(7))
    for b in batches:
        assert len(b) == 1 or len(b) * lengths[b].max() <= 200
        assert len(b) <= 3
    assert [int(lengths[b[0]]) for b in batches] == sorted((int(lengths[b[0]]) for b in batches), reverse=True)


def test_plan_batches_keeps_short_inputs_apart_from_long_ones():
    # a suite: per-sentence inputs (30-40 tokens) next to documents (900-1000 tokens)
    lengths = np.array([30, 950, 35, 1000, 40, 900, 32, 980] * 4)
    batches = plan_batches(lengths, batch_tokens=16384, max_batch_size=64)
    assert sorted(np.concatenate(batches).tolist()) == list(range(len(lengths)))
    assert all(lengths[b].max() < 100 or lengths[b].min() >= 900 for b in batches), "a short input padded to a long one"
    assert len(batches) <= 3
    padded = sum(len(b) * lengths[b].max() for b in batches)
    assert padded < 1.1 * lengths.sum()


def test_plan_batches_shares_calls_between_equal_lengths():
    batches = plan_batches(np.full(100, 50), batch_tokens=1000, max_batch_size=64)
    assert [len(b) for b in batches] == [20] * 5


@pytest.fixture()
def model_copy(tiny_t5_model, tmp_path):
    dst = tmp_path / "copy"
    shutil.copytree(tiny_t5_model, dst)
    return dst


def test_tampered_graph_is_refused(model_copy):
    graph = model_copy / "model.onnx"
    data = bytearray(graph.read_bytes())
    data[len(data) // 2] ^= 0xFF
    graph.write_bytes(bytes(data))
    with pytest.raises(ModelIntegrityError, match=r"model\.onnx.*does not match its sha256"):
        load_boolqa(model_copy, device="cpu", precision="fp32")


def test_truncated_tokenizer_is_refused(model_copy):
    tok = model_copy / "tokenizer.json"
    tok.write_bytes(tok.read_bytes()[:100])
    with pytest.raises(ModelIntegrityError, match="tokenizer.json"):
        load_boolqa(model_copy, device="cpu")


def test_missing_file_is_refused(model_copy):
    (model_copy / "model.int8.onnx").unlink()
    with pytest.raises(ModelIntegrityError, match="missing"):
        load_boolqa(model_copy, device="cpu", precision="int8")


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda m: m.pop("files"), "'files'"),
        (lambda m: m.update(format_version=99), "format_version"),
        (lambda m: m.update(kind="image"), "'kind'"),
        (lambda m: m["input"].pop("separator_token"), "separator_token"),
        (lambda m: m["variants"].update(bf16="model.onnx"), "unknown precision"),
    ],
)
def test_invalid_manifest_is_a_clear_error(model_copy, edit, message):
    path = model_copy / "nlgeval.json"
    manifest = json.loads(path.read_text())
    edit(manifest)
    path.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match=message):
        load_boolqa(model_copy, device="cpu")


def test_not_json_manifest(model_copy):
    (model_copy / "nlgeval.json").write_text("{not json")
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        ModelFolder.open(model_copy)


def test_folder_without_manifest_names_the_export_command(tmp_path):
    with pytest.raises(ModelFormatError, match="nlgeval export"):
        ModelFolder.open(tmp_path)


def test_missing_variant_names_the_fix(model_copy):
    path = model_copy / "nlgeval.json"
    manifest = json.loads(path.read_text())
    del manifest["variants"]["int8"]
    path.write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match="no int8 graph.*--int8"):
        load_boolqa(model_copy, device="cpu", precision="int8")


@pytest.mark.parametrize(
    "device, precision, message",
    [
        ("cpu", "fp16", "CUDA only"),
        ("cuda", "int8", "CPU only"),
        ("tpu", "auto", "device 'tpu'"),
        ("cpu", "bf16", "precision 'bf16'"),
    ],
)
def test_bad_device_or_precision(tiny_t5_model, device, precision, message):
    with pytest.raises(ProviderError, match=message):
        load_boolqa(tiny_t5_model, device=device, precision=precision)


def test_cuda_without_cuda_provider_is_refused(tiny_t5_model):
    import onnxruntime as ort

    if "CUDAExecutionProvider" in ort.get_available_providers():
        pytest.skip("this onnxruntime build has CUDA; the refusal path is for CPU builds")
    with pytest.raises(ProviderError, match="no CUDA provider"):
        load_boolqa(tiny_t5_model, device="cuda")


def test_auto_on_cpu_machine_really_runs_on_cpu(tiny_t5_model):
    scorer = load_boolqa(tiny_t5_model, device="auto")
    assert scorer.provider == scorer.session.inner.get_providers()[0]
    assert scorer.precision == "fp32"


def test_non_string_input_and_empty_batch(tiny_t5_model):
    scorer = load_boolqa(tiny_t5_model, device="cpu")
    with pytest.raises(TypeError, match=r"texts\[1\] is int"):
        scorer.score([FLUENT, 3])
    assert scorer.score([]).scores.shape == (0,)


def test_threads_setting(tiny_t5_model):
    with pytest.raises(ProviderError, match="threads"):
        load_boolqa(tiny_t5_model, device="cpu", threads=0)
    scorer = load_boolqa(tiny_t5_model, device="cpu", threads=1)
    assert scorer.score([FLUENT]).scores.shape == (1,)


def test_session_for_wrong_kind_is_refused(model_copy):
    path = model_copy / "nlgeval.json"
    manifest = json.loads(path.read_text())
    manifest["kind"] = "causal-lm"
    path.write_text(json.dumps(manifest))
    folder = ModelFolder.open(model_copy)
    with pytest.raises(ModelFormatError, match="not a Boolean-QA evaluator"):
        BoolQAScorer(folder, create_session(folder, device="cpu"))


def test_dynamic_int8_scores_do_not_depend_on_batch_neighbours(tiny_t5_checkpoint, tiny_t5_model, tmp_path):
    """Dynamic quantisation scales activations per run: the runtime must not mix inputs in one int8 run."""
    from nlgeval_training.export import export_t5

    texts = texts_with_padding()
    dynamic = tmp_path / "dynamic"
    export_t5(tiny_t5_checkpoint, dynamic, int8=True, int8_method="dynamic", max_length=48)
    scorer = load_boolqa(dynamic, device="cpu", precision="int8", max_batch_size=64)
    assert not scorer.batch_invariant and scorer.max_batch_size == 1
    together = scorer.score(texts).scores
    alone = np.array([scorer.score([t]).scores[0] for t in texts])
    assert np.array_equal(together, alone)
    assert load_boolqa(tiny_t5_model, device="cpu", precision="fp32").batch_invariant
