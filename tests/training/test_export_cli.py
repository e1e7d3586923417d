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


def test_export_of_a_hub_id_offline_fails_at_once_naming_the_model(tmp_path, capsys, monkeypatch):
    import time

    import huggingface_hub

    def no_download(*args, **kwargs):
        raise AssertionError("nothing may be downloaded offline")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", no_download)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    started = time.monotonic()
    assert main(["export", "MingZhong/unieval-sum", str(tmp_path / "out")]) == 2
    assert time.monotonic() - started < 5
    err = capsys.readouterr().err
    assert "'MingZhong/unieval-sum' is not a local folder and downloads are off (HF_HUB_OFFLINE" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_export_download_failure_is_a_named_error_without_a_chained_traceback(tmp_path, capsys, monkeypatch):
    import huggingface_hub

    def unreachable(*args, **kwargs):
        raise OSError("Connection refused")

    monkeypatch.setattr(huggingface_hub, "snapshot_download", unreachable)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("NLGEVAL_OFFLINE", raising=False)
    assert main(["export", "org/missing-model", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "could not download 'org/missing-model' from the Hugging Face Hub (OSError: Connection refused)" in err


def test_every_file_of_a_written_folder_has_the_same_readable_mode(tmp_path, monkeypatch):
    """ONNX writes external data as 0600; the folder writer gives every file the mode of a plain write."""
    import os
    import stat

    import nlgeval_training.triton as triton
    from nlgeval_training.folder_writer import _file_mode, finalize_model_folder

    monkeypatch.setattr(triton, "triton_config", lambda folder, manifest=None: "")  # no graph in this folder
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / "tokenizer.json").write_text("{}")
    (folder / "model.onnx.data").write_bytes(b"\0" * 8)
    os.chmod(folder / "model.onnx.data", 0o600)
    finalize_model_folder(folder, {"kind": "boolqa"})
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in folder.iterdir()}
    assert set(modes.values()) == {_file_mode()} and _file_mode() & 0o044, modes
