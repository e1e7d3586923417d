"""The embedded default model that ships with the runtime: resolvable, intact, small, and it discriminates."""

from __future__ import annotations

import json

from nlgeval_runtime import load_boolqa
from nlgeval_runtime.modelfolder import ModelFolder
from nlgeval_runtime.resolve import embedded_model_path

GROUNDED = "question: Is this response consistent with knowledge in the fact? </s> response: {r} </s> fact: {f}\n"
FACT = "The Eiffel Tower is a wrought-iron lattice tower in Paris, France. It was completed in 1889."


def test_embedded_folder_is_complete_and_under_the_size_limit():
    folder = ModelFolder.open(embedded_model_path())
    folder.verify()
    assert folder.manifest["architecture"] == "encoder-classifier"
    assert folder.manifest["input"]["separator_token"] == "[SEP]"
    size = sum(p.stat().st_size for p in embedded_model_path().iterdir() if p.is_file())
    assert size < 40_000_000
    card = (embedded_model_path() / "CARD.md").read_text(encoding="utf-8")
    held_out = folder.manifest["card"]["held_out"]["metrics"]
    for dim in (
        "summarization/coherence",
        "summarization/consistency",
        "summarization/fluency",
        "summarization/relevance",
        "dialogue/naturalness",
        "dialogue/coherence",
        "dialogue/engagingness",
        "dialogue/groundedness",
    ):
        assert f"| {dim} | {held_out[dim]['accuracy']:.3f} |" in card


def test_default_model_resolves_and_prefers_grounded_responses():
    scorer = load_boolqa(None)
    assert scorer.folder.path == embedded_model_path()
    result = scorer.score(
        [
            GROUNDED.format(r="The Eiffel Tower is in Paris and was completed in 1889.", f=FACT),
            GROUNDED.format(r="Sharks are fish with a skeleton made of cartilage.", f=FACT),
        ]
    )
    assert result.scores[0] > result.scores[1]
    assert ((result.scores > 0) & (result.scores < 1)).all()
    assert json.loads((embedded_model_path() / "nlgeval.json").read_text())["files"] == scorer.folder.manifest["files"]
