"""Perplexity through the runtime's causal-LM scorer, checked against the PyTorch model it was exported from."""

from __future__ import annotations

import math

import pytest

from pytest_nlgeval.metrics import MetricInputError, MetricUnavailableError, get_metric


def _torch_ppl(model, tok, text, prompt=""):
    import torch

    bos = tok.token_to_id("<|endoftext|>")
    p = tok.encode(prompt.strip(), add_special_tokens=False).ids if prompt.strip() else []
    c = tok.encode(text.strip(), add_special_tokens=False).ids
    ids = torch.tensor([[bos] + p + c])
    with torch.no_grad():
        logp = torch.log_softmax(model(ids).logits[0, :-1].double(), -1)
    lp = logp[torch.arange(ids.shape[1] - 1), ids[0, 1:]][len(p) :]
    return math.exp(-float(lp.mean()))


def test_perplexity_matches_pytorch(tiny_causal_lm):
    folder, model, tok = tiny_causal_lm
    m = get_metric("perplexity", model=str(folder), device="cpu")
    assert m.higher_is_better is False and not m.needs_input
    texts = ["The committee met on Tuesday.", "Every morning the fox walked to the river."]
    got = m.score_batch(texts)
    assert got == pytest.approx([_torch_ppl(model, tok, t) for t in texts], rel=1e-3)
    assert all(v > 1.0 for v in got)
    assert m.signature.startswith(f"perplexity|model:{folder}|cond:no|max_tokens:all|lm:")


def test_conditional_perplexity_scores_only_the_output(tiny_causal_lm):
    folder, model, tok = tiny_causal_lm
    m = get_metric("perplexity", model=str(folder), device="cpu", condition_on_input=True)
    assert m.needs_input
    prompt, text = "Once upon a time", "a small fox lived at the edge of a dark forest."
    assert m.score(text, input=prompt) == pytest.approx(_torch_ppl(model, tok, text, prompt), rel=1e-3)
    fb = m.score_with_feedback(text, input=prompt)
    assert "least expected token" in fb.feedback


def test_perplexity_errors(tiny_causal_lm, tmp_path):
    folder, _, _ = tiny_causal_lm
    with pytest.raises(MetricInputError, match="empty"):
        get_metric("perplexity", model=str(folder), device="cpu").score("   ")
    with pytest.raises(MetricUnavailableError, match="no usable causal LM.*model=FOLDER"):
        get_metric("perplexity", model=str(tmp_path / "nothing-here"), device="cpu").score("text")
