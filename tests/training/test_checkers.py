"""Fact checkers exported to claim-support folders: tiny random models of each architecture, exported in fp32 and
int8, scored through the runtime's checker and compared with the authors' reading computed in PyTorch."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tiny_checkers import BUILDERS, LONG_DOCUMENT, PAIRS, authors_reading

pytestmark = pytest.mark.xdist_group("tiny-checkers")


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def exported(request, tmp_path_factory):
    from nlgeval_training.checkers import export_checker

    name = request.param
    root = tmp_path_factory.mktemp(name)
    checkpoint = BUILDERS[name](root / "ckpt")
    manifest = export_checker(checkpoint, root / "folder", checker=name, int8=True, pairs=PAIRS[:3])
    return name, checkpoint, root / "folder", manifest


def test_the_folder_reads_as_the_authors_read(exported):
    from nlgeval_runtime.claim_support import load_claim_checker

    name, checkpoint, folder, manifest = exported
    reference = np.array(authors_reading(name, checkpoint, PAIRS))
    assert reference.std() > 1e-3, "the tiny model's scores must spread for the comparison to mean something"
    fp32 = load_claim_checker(folder, device="cpu", precision="fp32")
    got = np.array([s.score for s in fp32.support([d for d, _ in PAIRS], [c for _, c in PAIRS])])
    assert np.abs(got - reference).max() <= 1e-4, (name, got, reference)
    int8 = load_claim_checker(folder, device="cpu", precision="int8")
    got8 = np.array([s.score for s in int8.support([d for d, _ in PAIRS], [c for _, c in PAIRS])])
    assert np.abs(got8 - reference).max() <= 0.1, (name, got8, reference)  # dynamic int8: a sanity bound
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] <= 1e-4
    assert manifest["kind"] == "claim-support" and manifest["reading"]["checker"] == name


def test_chunks_follow_the_authors(exported):
    from nlgeval_runtime.claim_support import load_claim_checker

    name, _, folder, manifest = exported
    checker = load_claim_checker(folder, device="cpu", precision="fp32")
    chunks = checker.chunks(LONG_DOCUMENT)
    reading = manifest["reading"]
    if name == "hhem-2.1-open":
        assert chunks == [LONG_DOCUMENT] and reading["chunk"] is None and reading["max_length"] is None
        assert reading["template"].startswith("<pad> Determine if the hypothesis is true given the premise?")
        return
    assert len(chunks) > 1, "the long document spans several chunks"
    size = reading["chunk"]["size"]
    assert size == (500 if name == "minicheck-flan-t5-large" else 400)
    assert reading["chunk"]["count"] == ("words" if name == "minicheck-flan-t5-large" else "tokens")
    support = checker.support([LONG_DOCUMENT], ["A frog was found in Peru."])[0]
    assert support.score == max(support.chunk_scores) and len(support.chunk_scores) == len(chunks)
    if name == "minicheck-flan-t5-large":
        assert reading["template"] == "predict: {document}</s>{claim}"
    else:
        assert reading["template"] == "{document}" + reading["eos_token"] + "{claim}"


def test_manifest_is_validated(tmp_path, exported):
    from nlgeval_runtime.errors import ModelFormatError
    from nlgeval_runtime.modelfolder import ModelFolder

    _, _, folder, _ = exported
    manifest = json.loads((folder / "nlgeval.json").read_text())
    manifest["reading"]["template"] = "no placeholders"
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "nlgeval.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match="reading.template"):
        ModelFolder.open(bad)


def test_nlgeval_export_recognises_a_checker_and_prints_its_parity(tmp_path, capsys):
    from tiny_checkers import build_flan_t5

    from pytest_nlgeval.cli import main

    checkpoint = build_flan_t5(tmp_path / "MiniCheck-Flan-T5-Large")  # recognised by its name, as a Hub snapshot is
    out = tmp_path / "out"
    assert main(["export", str(checkpoint), str(out), "--int8"]) == 0
    printed = capsys.readouterr().out
    assert "fp32: max |diff| to the authors' reading in PyTorch" in printed and "(minicheck-flan-t5-large)" in printed
    manifest = json.loads((out / "nlgeval.json").read_text())
    assert manifest["kind"] == "claim-support" and set(manifest["variants"]) == {"fp32", "int8"}
    assert main(["export", str(checkpoint), str(tmp_path / "again"), "--max-length", "64"]) == 2
    assert "--max-length does not apply to minicheck-flan-t5-large" in capsys.readouterr().err


def test_an_hhem_checkpoint_is_recognised_by_its_config(tmp_path):
    from tiny_checkers import build_hhem

    from nlgeval_training.checkers import detect_checker

    assert detect_checker(build_hhem(tmp_path / "h")) == "hhem-2.1-open"
    assert detect_checker(tmp_path, "lytang/MiniCheck-DeBERTa-v3-Large") == "minicheck-deberta-v3-large"
    assert detect_checker(tmp_path, "MingZhong/unieval-sum") is None


def test_hhem_refuses_a_premise_past_its_limit_naming_it(exported):
    from nlgeval_runtime.claim_support import load_claim_checker
    from nlgeval_runtime.errors import ScoringError

    name, _, folder, manifest = exported
    if name != "hhem-2.1-open":
        pytest.skip("only HHEM reads a premise whole")
    checker = load_claim_checker(folder, device="cpu", precision="fp32")
    with pytest.raises(ScoringError, match="more than the 8192 it is run on here"):
        checker.support(["The cat sat on the mat. " * 2000], ["A cat sat."])
