"""The validation of a model folder's dimensions declaration (``nlgeval.json``): every path stays inside the
folder and every number a scorer reads is a finite number in its range, named by its key when it is not."""

from __future__ import annotations

import copy
import json

import pytest

from nlgeval_runtime.errors import ModelFormatError
from nlgeval_runtime.modelfolder import ModelFolder

DIGEST = "0" * 64

CHECKS = {
    "cap": 0.2,
    "fitted_on": "742 pseudo-labelled claims",
    "form_floor": 0.1,
    "intercept": -6.1,
    "version": 1,
    "weights": {"head": 1.2, "lexical": 6.0},
}

MANIFEST = {
    "format": "nlgeval-model",
    "format_version": 1,
    "kind": "boolqa",
    "files": {"model.onnx": DIGEST, "tokenizer.json": DIGEST},
    "input": {"separator": " </s> ", "separator_token": "</s>", "max_length": 512, "pad_token_id": 0},
    "dimensions": {
        "serves": {
            "summarization/consistency": {
                "unit": "claim",
                "source_units": "sentences",
                "checks": CHECKS,
                "cascade": {"first": 1, "stop": 0.9},
            },
            "summarization/coherence": {
                "folder": "text",
                "discourse": {"folder": "embed", "repeat_from": 0.6, "order_floor": 0.5},
            },
        }
    },
}


def _open(tmp_path, edit=None):
    manifest = copy.deepcopy(MANIFEST)
    if edit is not None:
        edit(manifest["dimensions"]["serves"])
    folder = tmp_path / "model"
    folder.mkdir(exist_ok=True)
    (folder / "nlgeval.json").write_text(json.dumps(manifest), encoding="utf-8")
    return ModelFolder.open(folder)


def test_a_valid_declaration_opens_and_names_its_sub_folders(tmp_path):
    folder = _open(tmp_path)
    assert folder.subfolders == ["embed", "text"]  # the discourse encoder's folder is part of the model


@pytest.mark.parametrize("where", ["folder", "discourse.folder"])
@pytest.mark.parametrize("sub", ["../../outside", "/etc", "a/b", "..", ".hidden", "a\\b", ""])
def test_a_sub_folder_outside_the_model_folder_is_refused(tmp_path, where, sub):
    def edit(serves):
        spec = serves["summarization/coherence"]
        if where == "folder":
            spec["folder"] = sub
        else:
            spec["discourse"]["folder"] = sub

    with pytest.raises(ModelFormatError, match=rf"'{where}' must name a sub-folder of the model folder"):
        _open(tmp_path, edit)


@pytest.mark.parametrize(
    "key, value",
    [
        ("cap", -3),
        ("cap", 5),
        ("cap", float("nan")),
        ("cap", True),
        ("form_floor", float("nan")),
        ("form_floor", 1.5),
        ("form_floor", "0.1"),
        ("intercept", float("inf")),
        ("intercept", None),
        ("version", 0),
    ],
)
def test_fact_check_numbers_out_of_range_are_refused_naming_the_key(tmp_path, key, value):
    def edit(serves):
        serves["summarization/consistency"]["checks"][key] = value

    with pytest.raises(ModelFormatError, match=rf"'summarization/consistency': 'checks\.{key}'.* got "):
        _open(tmp_path, edit)


def test_a_non_finite_weight_is_refused_naming_it(tmp_path):
    def edit(serves):
        serves["summarization/consistency"]["checks"]["weights"]["lexical"] = float("-inf")

    with pytest.raises(ModelFormatError, match=r"'checks\.weights\.lexical' must be a finite number, got -inf"):
        _open(tmp_path, edit)


@pytest.mark.parametrize(
    "cascade, key",
    [
        ({"first": 0, "stop": 0.9}, "cascade.first"),
        ({"first": 1.5, "stop": 0.9}, "cascade.first"),
        ({"first": True, "stop": 0.9}, "cascade.first"),
        ({"first": 1, "stop": 1.2}, "cascade.stop"),
        ({"first": 1, "stop": float("nan")}, "cascade.stop"),
        ({"first": 1}, "cascade.stop"),
        ({"first": 1, "stop": 0.8, "whole": -0.1}, "cascade.whole"),
        ({"first": 1, "stop": 0.8, "whole": "0.3"}, "cascade.whole"),
        ({"first": 1, "stop": 0.8, "units": 0}, "cascade.units"),
        ({"first": 1, "stop": 0.8, "units": 2.5}, "cascade.units"),
        ({"first": 1, "stop": 0.8, "decided_by_checks": "yes"}, "cascade.decided_by_checks"),
        ({"first": 1, "stop": 0.8, "whole_words": 1.5}, "cascade.whole_words"),
    ],
)
def test_cascade_settings_are_validated_naming_the_key(tmp_path, cascade, key):
    def edit(serves):
        serves["summarization/consistency"]["cascade"] = cascade

    with pytest.raises(ModelFormatError, match=rf"'{key}' must be"):
        _open(tmp_path, edit)


def test_an_unknown_cascade_key_is_refused_naming_it(tmp_path):
    def edit(serves):
        serves["summarization/consistency"]["cascade"] = {"first": 1, "stop": 0.8, "hole": 0.3}

    with pytest.raises(ModelFormatError, match=r"'cascade' has unknown keys \['hole'\]"):
        _open(tmp_path, edit)
