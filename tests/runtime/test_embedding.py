"""nlgeval_runtime.embedding on the sentence encoder the embedded model ships (embedded/embed)."""

from __future__ import annotations

import numpy as np
import pytest

from nlgeval_runtime.embedding import load_embedder
from nlgeval_runtime.errors import ModelFormatError
from nlgeval_runtime.resolve import embedded_model_path


@pytest.fixture(scope="module")
def embedder():
    return load_embedder(embedded_model_path() / "embed", device="cpu", threads=1)


def test_vectors_are_unit_length_and_in_input_order(embedder):
    texts = ["Can I return a kettle?", "Kettles can be returned within 30 days.", "The ferry is cancelled."] * 2
    vectors = embedder.embed(texts)
    assert vectors.shape == (6, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert np.allclose(vectors[:3], vectors[3:], atol=1e-6)  # batching and order do not change a vector
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_long_text_is_cut_to_the_maximum_length(embedder):
    vector = embedder.embed(["word " * 2000])
    assert vector.shape == (1, 384)


def test_a_boolqa_folder_is_not_a_sentence_encoder():
    with pytest.raises(ModelFormatError, match="not a sentence encoder"):
        load_embedder(embedded_model_path(), device="cpu")


def test_a_manifest_that_names_a_key_twice_is_a_format_error(tmp_path):
    """JSON readers keep the last of two equal keys: a dimension declared twice must not be read silently."""
    import shutil

    from nlgeval_runtime.modelfolder import ModelFolder

    folder = tmp_path / "embed"
    shutil.copytree(embedded_model_path() / "embed", folder)
    text = (folder / "nlgeval.json").read_text(encoding="utf-8")
    doubled = text.replace('"kind": "embedding",', '"kind": "embedding",\n  "kind": "embedding",', 1)
    assert doubled != text
    (folder / "nlgeval.json").write_text(doubled, encoding="utf-8")
    with pytest.raises(ModelFormatError, match="names 'kind' twice"):
        ModelFolder.open(folder)
