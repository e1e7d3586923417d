"""HHEM-2.1-Open keeps its foundation and prompt as class attributes of ``HHEMv2Config`` (configuration_hhem_v2.py),
not as config.json keys: ``nlgeval export`` reads them there, without ``--foundation``."""

from __future__ import annotations

import json

import pytest

from nlgeval_training.checkers import HHEM_FOUNDATION, HHEM_PROMPT, hhem_config_attribute, hhem_foundation


def test_the_foundation_is_read_from_the_configuration_class_without_running_it(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "HHEMv2"}))
    (tmp_path / "configuration_hhem_v2.py").write_text(
        "import sys\nsys.exit('never run')\n\n"
        "class HHEMv2Config:\n"
        '    model_type = "HHEMv2"\n'
        '    foundation = "google/flan-t5-base"\n'
        "    prompt: str = 'Premise: {text1} Hypothesis: {text2}'\n"
    )
    assert hhem_foundation(tmp_path) == "google/flan-t5-base"
    assert hhem_config_attribute(tmp_path, "prompt") == "Premise: {text1} Hypothesis: {text2}"
    assert hhem_config_attribute(tmp_path, "missing") is None


def test_a_config_json_key_comes_first_and_a_bare_checkpoint_gets_the_published_foundation(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "HHEMv2", "foundation": "/local/flan"}))
    assert hhem_foundation(tmp_path) == "/local/flan"
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "config.json").write_text(json.dumps({"model_type": "HHEMv2"}))
    assert hhem_foundation(bare) == HHEM_FOUNDATION == "google/flan-t5-base"
    (bare / "configuration_hhem_v2.py").write_text("class HHEMv2Config(:\n")  # not Python: the default
    assert hhem_foundation(bare) == HHEM_FOUNDATION
    assert "{text1}" in HHEM_PROMPT


def test_nlgeval_export_reads_the_hhem_foundation_without_a_flag(tmp_path, capsys):
    pytest.importorskip("torch")
    from tiny_checkers import build_hhem

    from pytest_nlgeval.cli import main

    checkpoint = build_hhem(tmp_path / "h")
    assert "foundation" not in json.loads((checkpoint / "config.json").read_text())
    out = tmp_path / "out"
    assert main(["export", str(checkpoint), str(out)]) == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "(hhem-2.1-open)" in printed
    assert json.loads((out / "nlgeval.json").read_text())["kind"] == "claim-support"
