"""The causal-LM scorer (ONNX Runtime) against a direct PyTorch computation on a tiny GPT-2 built here."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from nlgeval_runtime.causal_lm import load_causal_lm
from nlgeval_runtime.errors import ModelFormatError, ModelIntegrityError
from pytest_nlgeval.trajectory.scoring import compute_trajectories
from pytest_nlgeval.trajectory.signals import coherence_trajectory

PAIRS = [
    ("Once upon a time a small fox", "lived at the edge of a dark forest."),
    ("  The committee met on Tuesday.  ", "  Members agreed to delay the vote.  "),
    ("", "Prices rose 3.5% in 2023."),
    ("Do you like football?", "Yes!"),
]


def torch_logprobs(model, tok, prompt: str, continuation: str, keep_prompt: int | None = None) -> np.ndarray:
    import torch

    bos = tok.token_to_id("<|endoftext|>")
    p = tok.encode(prompt.strip(), add_special_tokens=False).ids if prompt.strip() else []
    if keep_prompt is not None:
        p = p[len(p) - keep_prompt :] if keep_prompt else []
    c = tok.encode(continuation.strip(), add_special_tokens=False).ids
    ids = torch.tensor([[bos] + p + c])
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0, :-1]
    lp = torch.log_softmax(logits.double(), -1)[torch.arange(ids.shape[1] - 1), ids[0, 1:]]
    return lp.numpy()[-len(c) :]


@pytest.fixture(scope="module")
def lm(tiny_causal_lm):
    folder, _, _ = tiny_causal_lm
    return load_causal_lm(folder, device="cpu", threads=1)


def test_manifest_records_kind_and_parity(tiny_causal_lm):
    folder, _, _ = tiny_causal_lm
    manifest = json.loads((folder / "nlgeval.json").read_text())
    assert manifest["kind"] == "causal-lm" and manifest["output"] == "token_logprobs"
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] < 1e-4
    assert manifest["input"]["bos_token_id"] == manifest["input"]["pad_token_id"]


def test_logprobs_match_pytorch_and_coherence_is_their_cumulative_mean(tiny_causal_lm, lm):
    _, model, tok = tiny_causal_lm
    res = lm.score([c for _, c in PAIRS], [p for p, _ in PAIRS])
    for (prompt, cont), ids, lp in zip(PAIRS, res.token_ids, res.logprobs):
        want = torch_logprobs(model, tok, prompt, cont)
        assert ids.tolist() == tok.encode(cont.strip(), add_special_tokens=False).ids
        np.testing.assert_allclose(lp, want, atol=2e-5)
        np.testing.assert_allclose(coherence_trajectory(lp), np.cumsum(want) / np.arange(1, want.size + 1), atol=2e-5)
    trajectories = compute_trajectories([p for p, _ in PAIRS], [c for _, c in PAIRS], lm, horizon=5)
    assert [t.length for t in trajectories] == [min(5, len(i)) for i in res.token_ids]
    np.testing.assert_allclose(trajectories[0].coherence, coherence_trajectory(res.logprobs[0][:5]))


def test_batched_equals_one_by_one(lm):
    together = lm.score([c for _, c in PAIRS], [p for p, _ in PAIRS]).logprobs
    for (prompt, cont), lp in zip(PAIRS, together):
        np.testing.assert_allclose(lm.score([cont], [prompt]).logprobs[0], lp, atol=1e-5)


def test_long_prompt_loses_its_beginning(tiny_causal_lm, lm):
    _, model, tok = tiny_causal_lm
    prompt = " ".join(["the fox walked to the river"] * 20)
    cont = "and watched the fishermen."
    res = lm.score([cont], [prompt])
    assert res.prompt_truncated.tolist() == [True]
    n_cont = len(res.token_ids[0])
    keep = lm.max_length - 1 - n_cont
    np.testing.assert_allclose(res.logprobs[0], torch_logprobs(model, tok, prompt, cont, keep_prompt=keep), atol=2e-5)


def test_max_tokens_and_lengths(lm):
    res = lm.score(["Once upon a time a small fox lived at the edge of a dark forest."], max_tokens=3)
    assert res.token_ids[0].size == 3 and res.logprobs[0].size == 3 and res.n_tokens[0] > 3


def test_bad_inputs_are_named(lm):
    with pytest.raises(ValueError, match="continuation 1 is empty"):
        lm.score(["fine", "   "])
    with pytest.raises(ValueError, match="one prompt each"):
        lm.score(["a", "b"], ["p"])
    with pytest.raises(ValueError, match="max_tokens"):
        lm.score(["a"], max_tokens=0)


def test_wrong_kind_and_tampered_files_are_refused(tiny_causal_lm, tmp_path):
    folder, _, _ = tiny_causal_lm
    other = tmp_path / "boolqa"
    shutil.copytree(folder, other)
    manifest = json.loads((other / "nlgeval.json").read_text())
    manifest["kind"] = "boolqa"
    manifest["input"].update(separator="</s>", separator_token="</s>")
    (other / "nlgeval.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match="not a causal LM"):
        load_causal_lm(other, device="cpu")
    tampered = tmp_path / "tampered"
    shutil.copytree(folder, tampered)
    with open(tampered / "model.onnx", "ab") as handle:
        handle.write(b"\0")
    with pytest.raises(ModelIntegrityError, match="model.onnx"):
        load_causal_lm(tampered, device="cpu")


def test_export_from_a_hugging_face_checkpoint_folder(tiny_causal_lm, lm, tmp_path):
    from transformers import PreTrainedTokenizerFast

    from nlgeval_training.export_causal import export_causal_lm

    _, model, tok = tiny_causal_lm
    checkpoint = tmp_path / "ckpt"
    model.save_pretrained(checkpoint)
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>").save_pretrained(
        checkpoint
    )
    folder = export_causal_lm(str(checkpoint), tmp_path / "exported")
    manifest = json.loads((folder / "nlgeval.json").read_text())
    assert manifest["source"]["checkpoint"] == str(checkpoint) and manifest["input"]["max_length"] == 64
    again = load_causal_lm(folder, device="cpu", threads=1)
    cont, prompt = PAIRS[0][1], PAIRS[0][0]
    np.testing.assert_allclose(
        again.score([cont], [prompt]).logprobs[0], lm.score([cont], [prompt]).logprobs[0], atol=1e-6
    )


def test_other_architectures_export_with_parity(tiny_causal_lm, tmp_path):
    """Not only GPT-2: a Llama-style model (rotary positions, grouped-query attention) exports too."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from nlgeval_training.export_causal import export_causal_lm

    _, _, tok = tiny_causal_lm
    bos = tok.token_to_id("<|endoftext|>")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=tok.get_vocab_size(),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=64,
        bos_token_id=bos,
        eos_token_id=bos,
        pad_token_id=bos,
        attn_implementation="eager",
    )
    model = LlamaForCausalLM(config).eval()
    folder = export_causal_lm(model, tmp_path / "llama", tokenizer=tok)
    manifest = json.loads((folder / "nlgeval.json").read_text())
    assert manifest["architecture"] == "llama" and manifest["export"]["parity"]["fp32"]["max_abs_diff"] < 1e-4
    scorer = load_causal_lm(folder, device="cpu", threads=1)
    np.testing.assert_allclose(
        scorer.score([PAIRS[0][1]], [PAIRS[0][0]]).logprobs[0], torch_logprobs(model, tok, *PAIRS[0]), atol=2e-5
    )
