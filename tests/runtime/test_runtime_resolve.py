"""Model resolution: folders, Hugging Face ids (through a local stand-in for the hub), the cache, offline."""

from __future__ import annotations

import shutil

import pytest

from nlgeval_runtime import exporters, resolve
from nlgeval_runtime.errors import ModelNotFoundError
from nlgeval_runtime.resolve import cached_model_path, resolve_model

pytestmark = pytest.mark.xdist_group("tiny-t5")


class LocalHub:
    """Serves repositories from local folders through huggingface_hub's two functions the resolver calls."""

    def __init__(self, repos):
        self.repos = repos
        self.downloads = []

    def list_repo_files(self, repo_id, revision="main"):
        if repo_id not in self.repos:
            raise OSError(f"404: {repo_id}")
        return sorted(p.name for p in self.repos[repo_id].iterdir())

    def snapshot_download(self, repo_id, revision="main", local_dir=None, allow_patterns=None):
        self.downloads.append(repo_id)
        src = self.repos[repo_id]
        if local_dir is None:
            return str(src)
        shutil.copytree(src, local_dir, dirs_exist_ok=True)
        return local_dir


@pytest.fixture()
def hub(monkeypatch, tiny_t5_checkpoint, tiny_t5_model):
    import huggingface_hub

    fake = LocalHub({"acme/tiny-t5": tiny_t5_checkpoint, "acme/tiny-exported": tiny_t5_model})
    monkeypatch.setattr(huggingface_hub, "list_repo_files", fake.list_repo_files)
    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake.snapshot_download)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("NLGEVAL_OFFLINE", raising=False)
    return fake


def test_exported_folder_is_used_as_is(tiny_t5_model):
    assert resolve_model(tiny_t5_model) == tiny_t5_model


def test_hub_checkpoint_is_exported_once_then_resolves_offline(hub, tmp_path, monkeypatch):
    path = resolve_model("acme/tiny-t5", cache_dir=tmp_path)
    assert path == cached_model_path("acme/tiny-t5", "main", tmp_path)
    assert (path / "nlgeval.json").is_file() and (path / "model.onnx").is_file()
    assert hub.downloads == ["acme/tiny-t5"]
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert resolve_model("acme/tiny-t5", cache_dir=tmp_path) == path
    assert hub.downloads == ["acme/tiny-t5"], "a cached model must not be downloaded again"


def test_hub_repository_with_exported_folder_is_used_as_is(hub, tmp_path, tiny_t5_model):
    path = resolve_model("acme/tiny-exported@v1", cache_dir=tmp_path)
    assert path.name == "v1"
    assert (path / "nlgeval.json").read_bytes() == (tiny_t5_model / "nlgeval.json").read_bytes()
    assert not list(tmp_path.rglob(".cache"))


def test_unknown_hub_id_is_a_clear_error(hub, tmp_path):
    with pytest.raises(ModelNotFoundError, match="cannot reach Hugging Face model 'acme/missing'"):
        resolve_model("acme/missing", cache_dir=tmp_path)


def test_offline_with_nothing_cached_names_the_prepare_command(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelNotFoundError, match="nlgeval prepare MingZhong/unieval-sum"):
        resolve_model("MingZhong/unieval-sum", cache_dir=tmp_path)


class FakeEntryPoint:
    """What importlib.metadata lists for a registered exporter: a name, a target, and load()."""

    def __init__(self, name, value, target=None, error=None):
        self.name, self.value, self.target, self.error = name, value, target, error

    def load(self):
        if self.error is not None:
            raise self.error
        return self.target


def test_missing_training_extra_is_named(hub, tmp_path, monkeypatch):
    monkeypatch.setattr(exporters, "_entry_points", lambda: ())
    with pytest.raises(ModelNotFoundError, match=r"pytest-nlgeval\[train\]") as info:
        resolve_model("acme/tiny-t5", cache_dir=tmp_path)
    assert "nlgeval prepare" in str(info.value)
    assert hub.downloads == []  # refused before the checkpoint was downloaded


def test_an_unreachable_hub_is_one_named_error_without_a_chained_traceback(hub, tmp_path):
    with pytest.raises(
        ModelNotFoundError, match=r"cannot reach Hugging Face model 'acme/missing'.*HF_HUB_OFFLINE"
    ) as info:
        resolve_model("acme/missing", cache_dir=tmp_path)
    assert info.value.__cause__ is None and info.value.__suppress_context__


def test_exporter_that_cannot_import_names_the_training_extra(tiny_t5_checkpoint, tmp_path, monkeypatch):
    broken = FakeEntryPoint("boolqa", "trainer_pkg:export", error=ModuleNotFoundError("No module named 'torch'"))
    monkeypatch.setattr(exporters, "_entry_points", lambda: (broken,))
    with pytest.raises(ModelNotFoundError, match=r"pytest-nlgeval\[train\]") as info:
        resolve_model(tiny_t5_checkpoint, cache_dir=tmp_path)
    assert "No module named 'torch'" in str(info.value)


def test_training_registers_an_exporter_for_every_kind():
    from nlgeval_training import exporters as training_exporters

    assert exporters.find_exporter("boolqa") is training_exporters.export_boolqa
    assert exporters.find_exporter("causal-lm") is training_exporters.export_causal_lm


def test_checkpoint_is_converted_by_the_registered_exporter(tiny_t5_checkpoint, tiny_t5_model, tmp_path, monkeypatch):
    """Any distribution can provide the conversion: the runtime calls what the entry point names."""
    calls = []

    def export(checkpoint, out_dir, *, source_id, revision):
        calls.append((checkpoint, source_id, revision))
        shutil.copytree(tiny_t5_model, out_dir, dirs_exist_ok=True)

    monkeypatch.setattr(exporters, "_entry_points", lambda: (FakeEntryPoint("boolqa", "other:export", export),))
    path = resolve_model(tiny_t5_checkpoint, cache_dir=tmp_path)
    assert calls == [(str(tiny_t5_checkpoint), None, None)]
    assert (path / "nlgeval.json").read_bytes() == (tiny_t5_model / "nlgeval.json").read_bytes()


def test_two_different_exporters_for_one_kind_are_refused(tiny_t5_checkpoint, tmp_path, monkeypatch):
    twice = (
        FakeEntryPoint("boolqa", "a:export", print),
        FakeEntryPoint("boolqa", "b:export", print),
        FakeEntryPoint("boolqa", "a:export", print),
    )
    monkeypatch.setattr(exporters, "_entry_points", lambda: twice)
    with pytest.raises(ModelNotFoundError, match=r"several exporters .* \(a:export, b:export\)"):
        resolve_model(tiny_t5_checkpoint, cache_dir=tmp_path)


def test_local_checkpoint_folder_is_exported_into_the_cache(tiny_t5_checkpoint, tmp_path):
    path = resolve_model(tiny_t5_checkpoint, cache_dir=tmp_path)
    assert (path / "nlgeval.json").is_file()
    assert str(path).startswith(str(tmp_path))


def test_embedded_default_missing_is_an_error_never_a_stand_in(monkeypatch, tmp_path):
    monkeypatch.setattr(resolve, "embedded_model_path", lambda: tmp_path / "embedded")
    with pytest.raises(ModelNotFoundError, match="embedded default model is not part of this installation"):
        resolve_model(None)


def test_not_a_model_and_not_an_id(tmp_path):
    with pytest.raises(ModelNotFoundError, match="neither an exported model folder"):
        resolve_model(tmp_path)
    with pytest.raises(ModelNotFoundError, match="not an existing folder and not a Hugging Face id"):
        resolve_model("no such thing")


def test_interrupted_export_leftover_is_replaced(hub, tmp_path):
    target = cached_model_path("acme/tiny-t5", "main", tmp_path)
    target.mkdir(parents=True)
    (target / "model.onnx").write_bytes(b"half written")
    path = resolve_model("acme/tiny-t5", cache_dir=tmp_path)
    assert (path / "nlgeval.json").is_file()
    assert (path / "model.onnx").stat().st_size > 100


def test_causal_lm_checkpoint_folder_is_exported_as_a_causal_lm(tmp_path):
    """A checkpoint folder resolved for a causal LM goes through the causal-LM exporter, cached apart."""
    from transformers import PreTrainedTokenizerFast

    from nlgeval_runtime.causal_lm import load_causal_lm
    from tiny_causal import build_model, build_tokenizer

    tok = build_tokenizer()
    ckpt = tmp_path / "gpt"
    build_model(tok).save_pretrained(str(ckpt))
    PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>", eos_token="<|endoftext|>").save_pretrained(
        str(ckpt)
    )
    lm = load_causal_lm(ckpt, device="cpu", cache_dir=tmp_path / "cache")
    assert lm.folder.kind == "causal-lm"
    assert lm.folder.path.name.endswith(".causal-lm")
    assert lm.score(["the cat sat"], prompts=["once"]).logprobs[0].size > 0
