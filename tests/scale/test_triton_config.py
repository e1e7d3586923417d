"""The Triton configuration the exporter writes into every model folder, checked against Triton's own
ModelConfig schema (the protobuf shipped in the tritonclient package) and against the graph it serves."""

import importlib.util
from pathlib import Path

import pytest

from nlgeval_runtime.modelfolder import ModelFolder


def model_config_schema():
    """Triton's ``ModelConfig`` message class, loaded from tritonclient's generated protobuf module.

    The module is loaded by path: importing ``tritonclient.grpc`` would also need grpcio, which serving a
    schema does not.
    """
    spec = importlib.util.find_spec("tritonclient")
    if spec is None:
        pytest.skip("tritonclient is not installed (make test installs it: pip install --no-deps tritonclient)")
    path = Path(list(spec.submodule_search_locations)[0]) / "grpc" / "model_config_pb2.py"
    if not path.is_file():
        pytest.skip(f"this tritonclient has no {path.name}")
    module_spec = importlib.util.spec_from_file_location("_triton_model_config_pb2", path)
    module = importlib.util.module_from_spec(module_spec)
    try:
        module_spec.loader.exec_module(module)
    except Exception as exc:  # a protobuf runtime that refuses the generated code
        pytest.skip(f"cannot load Triton's model_config_pb2 with this protobuf: {exc}")
    return module


def parse(text: str):
    from google.protobuf import text_format

    schema = model_config_schema()
    return schema, text_format.Parse(text, schema.ModelConfig())


def test_the_exported_folder_carries_a_valid_triton_config(tiny_t5_model):
    import onnx

    text = (tiny_t5_model / "config.pbtxt").read_text()
    schema, config = parse(text)
    folder = ModelFolder.open(tiny_t5_model)
    assert "config.pbtxt" in folder.manifest["files"]
    folder.verify()  # written before the files were hashed
    assert config.backend == "onnxruntime" and config.max_batch_size == 64
    assert config.default_model_filename == folder.variants["fp32"]
    graph = onnx.load(str(tiny_t5_model / config.default_model_filename), load_external_data=False).graph
    assert [i.name for i in config.input] == [i.name for i in graph.input] == ["input_ids", "attention_mask"]
    assert all(i.data_type == schema.TYPE_INT64 and list(i.dims) == [-1] for i in config.input)
    (out,) = config.output
    assert out.name == graph.output[0].name and out.data_type == schema.TYPE_FP32
    assert list(out.dims) == [1] and list(out.reshape.shape) == []  # p_yes is [batch]
    assert config.HasField("dynamic_batching")
    assert config.parameters["nlgeval_kind"].string_value == "boolqa"


def test_an_int8_graph_is_served_on_cpu_and_batched_only_if_batch_invariant(tiny_t5_model, tmp_path):
    from nlgeval_training.triton import write_triton_repository

    repo = write_triton_repository(tiny_t5_model, tmp_path / "repo", name="nlgeval sum", precision="int8")
    assert repo.name == "nlgeval-sum"
    schema, config = parse((repo / "config.pbtxt").read_text())
    # a dynamically quantised graph scores an input differently depending on its batch-mates
    invariant = ModelFolder.open(tiny_t5_model).batch_invariant("int8")
    assert config.name == "nlgeval-sum" and config.HasField("dynamic_batching") == invariant
    assert config.instance_group[0].kind == schema.ModelInstanceGroup.KIND_CPU
    assert (repo / "1" / config.default_model_filename).is_file()
    assert config.parameters["nlgeval_precision"].string_value == "int8"


def test_the_repository_command(tiny_t5_model, tmp_path, capsys):
    from nlgeval_training.triton import main

    assert main([str(tiny_t5_model), str(tmp_path / "repo")]) == 0
    assert "config.pbtxt" in capsys.readouterr().out
    _, config = parse((tmp_path / "repo" / tiny_t5_model.name / "config.pbtxt").read_text())
    assert (tmp_path / "repo" / tiny_t5_model.name / "1" / config.default_model_filename).is_file()


def test_the_repository_serves_every_sub_folder_model_of_the_embedded_folder(tmp_path, capsys):
    """The embedded default routes dimensions to text/ and embed/: each becomes a Triton model of its own,
    named in the main model's configuration, so every served dimension has a model to ask."""
    import nlgeval_runtime
    from nlgeval_training.triton import main

    embedded = Path(nlgeval_runtime.__file__).parent / "embedded"
    assert main([str(embedded), str(tmp_path / "repo"), "--name", "nlgeval", "--precision", "int8"]) == 0
    printed = capsys.readouterr().out
    _, config = parse((tmp_path / "repo" / "nlgeval" / "config.pbtxt").read_text())
    routes = dict(r.split("=") for r in config.parameters["nlgeval_subfolders"].string_value.split(";"))
    folder = ModelFolder.open(embedded)
    assert set(routes) == set(folder.subfolders) == {"text", "embed"}
    for sub, model in routes.items():
        assert f"{model}/config.pbtxt" in printed
        _, sub_config = parse((tmp_path / "repo" / model / "config.pbtxt").read_text())
        assert sub_config.name == model
        graph = tmp_path / "repo" / model / "1" / sub_config.default_model_filename
        assert graph.read_bytes() == (embedded / sub / sub_config.default_model_filename).read_bytes()
    _, embed = parse((tmp_path / "repo" / routes["embed"] / "config.pbtxt").read_text())
    assert [o.name for o in embed.output] == ["embedding"]
