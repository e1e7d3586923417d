"""Every model folder and checker folder error is a named error naming the file and the key: a checker folder
given as the evaluator's model, a sealed graph that is not an ONNX graph, a checker template with placeholders
other than {document} and {claim}, and manifest fields of the wrong type."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from nlgeval_runtime.errors import ModelFormatError
from nlgeval_runtime.hashing import sha256_file
from nlgeval_runtime.modelfolder import ModelFolder

EMBEDDED = Path(__file__).resolve().parents[2] / "runtime" / "nlgeval_runtime" / "embedded"
CHECKER_READING = {
    "checker": "minicheck-test",
    "template": "{document}</s>{claim}",
    "eos_token": "</s>",
    "chunk": {"size": 400, "count": "tokens"},
    "max_length": 512,
    "supported_from": 0.5,
}


def linked_folder(root: Path, name: str = "folder", change=None) -> Path:
    """The embedded folder's files (linked, the manifest copied) with ``change(manifest)`` applied."""
    folder = root / name
    folder.mkdir()
    for item in EMBEDDED.iterdir():
        if item.is_file() and item.name != "nlgeval.json":
            (folder / item.name).symlink_to(item)
    manifest = json.loads((EMBEDDED / "nlgeval.json").read_text())
    if change is not None:
        change(manifest)
    (folder / "nlgeval.json").write_text(json.dumps(manifest))
    return folder


def as_checker(manifest: dict) -> None:
    manifest.pop("dimensions", None)
    manifest["kind"] = "claim-support"
    manifest["reading"] = dict(CHECKER_READING)


def test_a_checker_folder_given_as_the_model_names_the_option_it_belongs_to(tmp_path):
    from pytest_nlgeval.core.evaluator import Evaluator

    folder = linked_folder(tmp_path, "checker", as_checker)
    ev = Evaluator(folder, cache=False, device="cpu")
    with pytest.raises(ModelFormatError, match=r"holds a fact checker \(kind claim-support\).*--nlgeval-fact-checker"):
        ev.score("The cat sat on the mat.", "fluency")


def test_a_checker_folder_given_as_the_plugins_model_is_a_named_error(pytester, tmp_path):
    folder = linked_folder(tmp_path, "checker", as_checker)
    pytester.makepyfile(
        test_x="from pytest_nlgeval import assert_dimension\n\n"
        "def test_x():\n    assert assert_dimension('The cat sat.', 'fluency') > 0.1\n"
    )
    result = pytester.runpytest("-p", "no:cacheprovider", f"--nlgeval-model={folder}", "--nlgeval-no-cache")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ModelFormatError*--nlgeval-fact-checker*"])
    assert "KeyError" not in result.stdout.str()


@pytest.mark.parametrize(
    "content, said",
    [
        (b"", "is empty"),
        (b"version https://git-lfs.github.com/spec/v1\noid sha256:abc\nsize 33486939\n", "git-lfs pointer"),
        (b"<!DOCTYPE html><html><body>Sign in</body></html>", "web page"),
        (b"\x00\x01garbage that is no protobuf" * 10, "not an ONNX graph"),
    ],
)
def test_a_sealed_graph_that_is_not_onnx_is_a_named_error(tmp_path, content, said):
    from nlgeval_runtime.boolqa import load_boolqa

    graph = tmp_path / "bad.onnx"
    graph.write_bytes(content)
    digest = sha256_file(graph)

    def seal(manifest):
        manifest["files"]["model.int8.onnx"] = digest

    folder = linked_folder(tmp_path, "sealed", seal)
    (folder / "model.int8.onnx").unlink()
    shutil.copy(graph, folder / "model.int8.onnx")
    with pytest.raises(ModelFormatError, match=said) as caught:
        load_boolqa(folder, device="cpu")
    assert "model.int8.onnx" in str(caught.value)


@pytest.mark.parametrize(
    "template",
    [
        "{document}</s>{claim}{extra}",
        "{document}</s>{0}{claim}",
        "{document.__class__}</s>{claim}",
        "{document}</s>{claim!r}",
        "{document:>10}</s>{claim}",
        "{document}</s>{claim",
        "{document} only",
    ],
)
def test_a_checker_template_holds_document_and_claim_only(tmp_path, template):
    def change(manifest):
        as_checker(manifest)
        manifest["reading"]["template"] = template

    folder = linked_folder(tmp_path, "checker", change)
    with pytest.raises(ModelFormatError, match=r"nlgeval\.json: 'reading\.template' must hold \{document\} and"):
        ModelFolder.open(folder)


def test_a_template_with_literal_braces_is_accepted(tmp_path):
    def change(manifest):
        as_checker(manifest)
        manifest["reading"]["template"] = "{{premise}} {document}\n{{hypothesis}} {claim}"

    assert ModelFolder.open(linked_folder(tmp_path, "checker", change)).kind == "claim-support"


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("quantization", "int8", r"'quantization' must be a JSON object, not the string 'int8'"),
        ("quantization", {"int8": 1}, r"'quantization' maps a precision"),
        ("input", "pad", r"'input' must be a JSON object, not the string 'pad'"),
        ("source", ["x"], r"'source' must be a JSON object, not a list"),
        ("external_data", {"model.int8.onnx": "data.bin"}, r"'external_data'\['model.int8.onnx'\] must be a list"),
        ("tokenizer", ["tokenizer.json"], r"'tokenizer' must be a non-empty string, not a list"),
        ("variants", {"int8": ["model.int8.onnx"]}, r"'variants'\['int8'\] must be an ONNX file name"),
        ("kind", ["boolqa"], r"'kind' must be one of"),
    ],
)
def test_manifest_fields_of_the_wrong_type_are_named(tmp_path, key, value, said):
    def change(manifest):
        manifest[key] = value

    folder = linked_folder(tmp_path, "main", change)
    with pytest.raises(ModelFormatError, match=said) as caught:
        ModelFolder.open(folder)
    assert "nlgeval.json" in str(caught.value)


@pytest.mark.parametrize(("key", "value"), [("quantization", "int8"), ("input", "pad")])
def test_checker_manifest_fields_of_the_wrong_type_are_named(tmp_path, key, value):
    def change(manifest):
        as_checker(manifest)
        manifest[key] = value

    with pytest.raises(ModelFormatError, match=f"'{key}' must be a JSON object"):
        ModelFolder.open(linked_folder(tmp_path, "checker", change))
