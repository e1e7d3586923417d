"""The shipped default causal LM: present, verified, under 20 MB, and its card agrees with its manifest."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from nlgeval_runtime.causal_lm import default_lm_path, load_causal_lm


@pytest.fixture(scope="module")
def default_lm():
    return load_causal_lm(device="cpu", threads=1)


def test_default_lm_is_small_and_documented():
    folder = default_lm_path()
    size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
    assert size < 20 * 1024 * 1024
    manifest = json.loads((folder / "nlgeval.json").read_text())
    card = (folder / "CARD.md").read_text()
    training = manifest["training"]
    assert f"{manifest['parameters']:,}" in card
    assert f"{training['heldout_perplexity_torch']:.2f}" in card
    assert re.search(rf"{training['steps']:,} steps", card)
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] < 1e-3


def test_default_lm_prefers_fluent_text_to_shuffled_text(default_lm):
    text = (
        "The government said on Monday that it would increase spending on schools and hospitals "
        "after the election, and the opposition welcomed the plan."
    )
    words = text.split()
    shuffled = " ".join(words[i] for i in np.random.default_rng(0).permutation(len(words)))
    res = default_lm.score([text, shuffled], ["Officials spoke to reporters."] * 2)
    assert res.logprobs[0].mean() > res.logprobs[1].mean()
    assert default_lm.provider == "CPUExecutionProvider" and default_lm.model_ref == "default-lm"
