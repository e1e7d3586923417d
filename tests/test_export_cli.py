"""`nlgeval export` / `nlgeval prepare` on the command line."""
from __future__ import annotations

import json

import pytest

from pytest_nlgeval.cli import main

pytestmark = pytest.mark.xdist_group("tiny-t5")


def test_export_writes_a_loadable_folder_with_parity(tiny_t5_checkpoint, tmp_path, capsys):
    out = tmp_path / "exported"
    assert main(["export", str(tiny_t5_checkpoint), str(out), "--int8", "--max-length", "32"]) == 0
    printed = capsys.readouterr().out
    assert "fp32: max |diff| to PyTorch" in printed and "int8:" in printed
    manifest = json.loads((out / "nlgeval.json").read_text())
    assert manifest["input"]["max_length"] == 32
    assert set(manifest["variants"]) == {"fp32", "int8"}
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] <= 1e-5
    assert manifest["yes_token_id"] != manifest["no_token_id"]
    from nlgeval_runtime import load_boolqa

    assert load_boolqa(out, device="cpu").max_length == 32


def test_export_refuses_unsupported_architecture(tmp_path, capsys):
    ckpt = tmp_path / "gpt"
    ckpt.mkdir()
    (ckpt / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    assert main(["export", str(ckpt), str(tmp_path / "out")]) == 2
    assert "model type 'gpt2' is not a supported Boolean-QA evaluator" in capsys.readouterr().err


def test_prepare_offline_without_cache_names_the_command(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert main(["prepare", "MingZhong/unieval-sum", "--cache-dir", str(tmp_path)]) == 2
    assert "nlgeval prepare MingZhong/unieval-sum" in capsys.readouterr().err
