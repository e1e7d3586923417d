"""The export paths that keep a large model's peak memory down give the same folder as before, and fail clearly.

PyTorch runs in a child process (nlgeval_training.t5_trace), weights are gathered into one data file without
being loaded, activation ranges are measured by one session over the graph on disk, and ``--no-fp32`` ships
the int8 graph alone. The figures for t5-v1_1-large come from benchmarks/large.py; here the tiny model checks
that each path computes exactly what the plain one does.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.xdist_group("tiny-t5")


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _takes_calibration_cache() -> bool:
    import inspect

    from onnxruntime.quantization import quantize_static

    return "calibration_cache_path" in inspect.signature(quantize_static).parameters


def test_streamed_calibration_writes_the_same_int8_graph_as_onnx_runtimes_calibrator(tiny_t5_model, tmp_path):
    from nlgeval_training.static_int8 import (
        calibration_feeds,
        constant_weight_matmuls,
        pseudo_calibration_texts,
        quantize_static_int8,
    )

    if not _takes_calibration_cache():
        pytest.skip("this onnxruntime's quantize_static takes no calibration cache")
    src = tmp_path / "model.onnx"
    shutil.copy(tiny_t5_model / "model.onnx", src)
    feeds = calibration_feeds(tiny_t5_model / "tokenizer.json", pseudo_calibration_texts(12), max_length=48)
    encoder = constant_weight_matmuls(src, "/encoder/")
    for calibration in ("onnxruntime", "streamed"):
        quantize_static_int8(src, tmp_path / f"{calibration}.onnx", feeds, nodes=encoder, calibration=calibration)
    assert _sha(tmp_path / "streamed.onnx") == _sha(tmp_path / "onnxruntime.onnx")
    # the augmented calibration graph written beside the source is gone again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.onnx", "onnxruntime.onnx", "streamed.onnx"]


def test_calibrated_ranges_are_the_activations_extremes(tiny_t5_model, tmp_path):
    import onnx
    import onnxruntime as ort

    from nlgeval_training.static_int8 import calibrate_min_max, calibration_feeds, pseudo_calibration_texts

    feeds = calibration_feeds(tiny_t5_model / "tokenizer.json", pseudo_calibration_texts(6), max_length=48)
    ranges = calibrate_min_max(tiny_t5_model / "model.onnx", feeds)
    model = onnx.load(str(tiny_t5_model / "model.onnx"))
    weights = {i.name for i in model.graph.initializer}
    first = next(n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in weights)
    name = first.input[0]
    assert name in ranges and all(v.shape == (1,) and v.dtype == np.float32 for v in ranges[name])
    # the same tensor read directly, as an extra output of the plain graph
    model.graph.output.append(onnx.helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    values = [session.run([name], feed)[0] for feed in feeds]
    assert ranges[name][0][0] == min(v.min() for v in values) and ranges[name][1][0] == max(v.max() for v in values)


def test_static_int8_options_are_checked(tiny_t5_model, tmp_path):
    from nlgeval_training.static_int8 import calibrate_min_max, quantize_static_int8

    feeds = [{"input_ids": np.array([[5, 1]]), "attention_mask": np.array([[1, 1]])}]
    with pytest.raises(ValueError, match="calibration must be one of .*'streamed'.*not 'fast'"):
        quantize_static_int8(tiny_t5_model / "model.onnx", tmp_path / "q.onnx", feeds, calibration="fast")
    with pytest.raises(ValueError, match="at least one calibration input"):
        quantize_static_int8(tiny_t5_model / "model.onnx", tmp_path / "q.onnx", [])
    with pytest.raises(ValueError, match="no float activation enters or leaves a node of type \\['Conv'\\]"):
        calibrate_min_max(tiny_t5_model / "model.onnx", feeds, op_types=["Conv"])


def test_gather_streams_per_tensor_weight_files_into_one_data_file(tiny_t5_model, tmp_path):
    """torch.onnx.export writes a graph past 2 GB with a file per weight; gathering gives save_onnx's layout."""
    import onnx
    import onnxruntime as ort

    from nlgeval_training.folder_writer import gather_onnx

    raw, out = tmp_path / "raw", tmp_path / "out"
    raw.mkdir()
    out.mkdir()
    onnx.save_model(
        onnx.load(str(tiny_t5_model / "model.onnx")),
        str(raw / "model.onnx"),
        save_as_external_data=True,
        all_tensors_to_one_file=False,
        size_threshold=2048,
    )
    assert len(list(raw.iterdir())) > 10  # one file per weight of at least 2 KiB
    assert gather_onnx(raw / "model.onnx", out / "model.onnx") == ["model.onnx.data"]
    assert sorted(p.name for p in out.iterdir()) == ["model.onnx", "model.onnx.data"]
    gathered = onnx.load(str(out / "model.onnx"), load_external_data=False)
    locations = {e.value for t in gathered.graph.initializer for e in t.external_data if e.key == "location"}
    assert locations == {"model.onnx.data"}
    # weights of 1-2 KiB that the source held inline went to the data file as well
    inline = [t for t in gathered.graph.initializer if t.HasField("raw_data")]
    assert all(len(t.raw_data) < 1024 for t in inline)
    ids = np.array([[5, 6, 7, 1], [5, 6, 1, 0]], dtype=np.int64)
    feed = {"input_ids": ids, "attention_mask": (ids != 0).astype(np.int64)}
    before = ort.InferenceSession(str(tiny_t5_model / "model.onnx"), providers=["CPUExecutionProvider"]).run(None, feed)
    after = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"]).run(None, feed)
    assert np.array_equal(before[0], after[0])


def test_gather_refuses_a_weight_file_outside_the_graphs_folder(tiny_t5_model, tmp_path):
    import onnx
    from onnx.external_data_helper import set_external_data

    from nlgeval_training.folder_writer import gather_onnx

    model = onnx.load(str(tiny_t5_model / "model.onnx"))
    tensor = max(model.graph.initializer, key=lambda t: len(t.raw_data))
    set_external_data(tensor, "../elsewhere.bin", 0, 16)
    tensor.ClearField("raw_data")
    tensor.data_location = onnx.TensorProto.EXTERNAL
    (tmp_path / "raw").mkdir()
    (tmp_path / "raw" / "model.onnx").write_bytes(model.SerializeToString())
    with pytest.raises(ValueError, match=f"tensor '{tensor.name}' points outside its folder"):
        gather_onnx(tmp_path / "raw" / "model.onnx", tmp_path / "model.onnx")


def test_no_fp32_ships_the_int8_graph_alone_with_the_same_parity(tiny_t5_checkpoint, tiny_t5_model, tmp_path, capsys):
    from nlgeval_runtime import load_boolqa
    from nlgeval_training.folder_writer import parity_texts
    from pytest_nlgeval.cli import main

    out = tmp_path / "int8-only"
    assert main(["export", str(tiny_t5_checkpoint), str(out), "--int8", "--no-fp32", "--max-length", "48"]) == 0
    assert "(graph not shipped: --no-fp32)" in capsys.readouterr().out
    manifest = json.loads((out / "nlgeval.json").read_text())
    full = json.loads((tiny_t5_model / "nlgeval.json").read_text())
    assert manifest["variants"] == {"int8": "model.int8.onnx"}
    assert not (out / "model.onnx").exists() and "model.onnx" not in manifest["files"]
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == sorted(
        [*manifest["files"], "nlgeval.json"]
    )
    # both graphs were measured as in a full export; the fp32 one is recorded as not shipped
    for precision in ("fp32", "int8"):
        assert (
            manifest["export"]["parity"][precision]["max_abs_diff"]
            == full["export"]["parity"][precision]["max_abs_diff"]
        )
    assert manifest["export"]["parity"]["fp32"]["shipped"] is False
    texts = parity_texts(5)
    alone = load_boolqa(out, device="cpu").score(texts).scores
    assert np.array_equal(alone, load_boolqa(tiny_t5_model, device="cpu", precision="int8").score(texts).scores)


def test_no_fp32_without_another_graph_is_refused(tiny_t5_checkpoint, tmp_path, capsys):
    from nlgeval_training.export import export_t5
    from pytest_nlgeval.cli import main

    with pytest.raises(ValueError, match="keep_fp32=False needs int8=True or fp16=True"):
        export_t5(tiny_t5_checkpoint, tmp_path / "a", keep_fp32=False)
    assert main(["export", str(tiny_t5_checkpoint), str(tmp_path / "b"), "--no-fp32"]) == 2
    assert "--no-fp32 needs --int8 or --fp16" in capsys.readouterr().err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


def test_a_checkpoint_error_in_the_pytorch_process_reaches_the_user(tiny_t5_checkpoint, tmp_path, capsys):
    from pytest_nlgeval.cli import main

    broken = tmp_path / "no-weights"
    shutil.copytree(tiny_t5_checkpoint, broken, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    assert main(["export", str(broken), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert str(broken) in err and "Traceback" not in err


@pytest.mark.parametrize(
    "how, expected",
    [
        (
            "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
            "was killed by signal SIGKILL (SIGKILL: most likely the out-of-memory killer",
        ),
        (
            "import sys; sys.stderr.write('RuntimeError: boom\\n'); sys.exit(1)",
            "failed in its child process (exit status 1)",
        ),
    ],
)
def test_a_pytorch_process_that_dies_is_a_named_error_with_its_last_output(tmp_path, monkeypatch, how, expected):
    import subprocess

    import nlgeval_training.t5_trace as t5_trace

    real = subprocess.Popen

    def popen(args, **kwargs):
        return real([sys.executable, "-c", how], **kwargs)

    monkeypatch.setattr(t5_trace.subprocess, "Popen", popen)
    with pytest.raises(t5_trace.ExportProcessError, match="the PyTorch export of ckpt/x ") as info:
        t5_trace.trace_in_child("ckpt/x", tmp_path / "raw", graph="fused", max_length=48, opset=17, parity_inputs=["a"])
    assert expected in str(info.value)
    if "boom" in how:
        assert "RuntimeError: boom" in str(info.value)


def test_nlgeval_train_export_passes_no_fp32_to_a_t5_export(tiny_t5_checkpoint, tmp_path, monkeypatch):
    import nlgeval_training.export as export
    from nlgeval_training.cli import main

    seen = {}

    def fake_export_model(checkpoint, out, **kwargs):
        seen.update(kwargs)
        return {"export": {"parity": {}}, "variants": {"int8": "model.int8.onnx"}}

    monkeypatch.setattr(export, "export_model", fake_export_model)
    assert main(["export", str(tiny_t5_checkpoint), str(tmp_path / "out"), "--int8", "--no-fp32"]) == 0
    assert seen["keep_fp32"] is False and seen["int8"] is True
