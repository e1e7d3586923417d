"""Dialogue groundedness's opt-in claim-head check (``fact_checks.head`` in a folder's declaration): a claim that
restates the fact and that the folder's claim head reads as unsupported caps the reply and is named; a faithful
restatement is not capped. The embedded folder leaves it off (docs/validity.md gives the figures why)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nlgeval_runtime

EMBEDDED = Path(nlgeval_runtime.__file__).parent / "embedded"
FACT = "The Aeris X2 headphones must stay plugged in while the firmware update runs, which takes about ten minutes."


def _folder(tmp_path: Path, supported_from: float) -> Path:
    folder = tmp_path / f"head-{supported_from}"
    folder.mkdir()
    for item in EMBEDDED.iterdir():
        if item.name != "nlgeval.json":
            (folder / item.name).symlink_to(item)
    manifest = json.loads((EMBEDDED / "nlgeval.json").read_text())
    checks = manifest["dimensions"]["serves"]["dialogue/groundedness"]["fact_checks"]
    checks["head"] = {"dimension": "fact/consistency", "supported_from": supported_from}
    (folder / "nlgeval.json").write_text(json.dumps(manifest))
    return folder


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    from pytest_nlgeval.core.evaluator import Evaluator

    base = tmp_path_factory.mktemp("groundedness-head")
    replies = [
        "The X2 headphones must stay plugged in while the firmware update runs.",
        "You can unplug the X2 headphones while the firmware update runs.",  # contradicts it, no figure changed
    ]
    out = {}
    for supported_from in (0.0, 0.5):  # a bar no reading falls under, and the checker's usual one
        evaluator = Evaluator(_folder(base, supported_from), cache=False)
        out[supported_from] = evaluator.evaluate(replies, "groundedness", task="dialogue", fact=FACT, context=[""])
    off = Evaluator(cache=False).evaluate(replies, "groundedness", task="dialogue", fact=FACT, context=[""])
    return out, off


def test_a_contradicting_restatement_is_capped_and_named_and_a_faithful_one_passes(scored):
    out, off = scored
    faithful, contradicting = out[0.5]
    assert float(off[1]) > 0.2  # without the head, the similarity passes the contradiction
    assert float(contradicting) <= 0.2
    assert any("the claim head (fact/consistency) finds no support" in line for line in contradicting.explanation())
    assert float(faithful) > 0.2 and float(faithful) == pytest.approx(float(off[0]))


def test_a_claim_above_the_bar_is_left_as_the_similarity_reads_it(scored):
    out, off = scored
    assert [float(s) for s in out[0.0]] == pytest.approx([float(s) for s in off])
    assert not any("claim head" in line for s in out[0.0] for line in s.explanation())
