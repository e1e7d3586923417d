"""Scoring on Ray (`--engine ray`) on a local two-CPU cluster: results identical to the local path, the
same cache semantics (only misses are scored), the model folder shipped once, the command lines."""

import json

import pytest

pytest.importorskip("ray", reason="the ray extra is not installed (pip install \"pytest-nlgeval[ray]\")")
pytest.importorskip("ray.data", reason="Ray Data is not installed (pip install \"ray[data]\")")

from nlgeval_runtime.modelfolder import ModelFolder  # noqa: E402

from pytest_nlgeval.cli import main  # noqa: E402
from pytest_nlgeval.core.evaluator import Evaluator  # noqa: E402
from pytest_nlgeval.scale.ray_engine import RayEvaluator, RayScoringError  # noqa: E402

DOC = (
    "The bridge reopened on Monday after three weeks of repairs. Traffic was light in the morning. "
    "Officials said the repairs cost less than planned. "
)
OUTPUTS = [f"Summary {i}: " + " ".join(["The bridge reopened."] * (1 + i % 4)) for i in range(23)]
SOURCES = [DOC * (1 + i % 3) for i in range(23)]


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    import ray

    models = tmp_path_factory.mktemp("ray-models")
    if ray.is_initialized():  # pragma: no cover - another module left one running
        ray.shutdown()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        logging_level="WARNING",
        runtime_env={"env_vars": {"NLGEVAL_RAY_MODEL_DIR": str(models), "OMP_NUM_THREADS": "1"}},
    )
    yield models
    ray.shutdown()


def local_scores(model, precision, dimension, cache=False, cache_dir=None):
    ev = Evaluator(model, device="cpu", precision=precision, cache=cache, cache_dir=cache_dir, threads=1)
    values = ev.score_batch(OUTPUTS, dimension, sources=SOURCES)
    return values, ev


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_ray_scores_are_identical_to_the_local_path(ray_cluster, tiny_t5_model, precision):
    expected, _ = local_scores(tiny_t5_model, precision, "consistency")
    ev = RayEvaluator(tiny_t5_model, precision=precision, workers=2, cache=False, threads=1, progress=False)
    got = ev.score_batch(OUTPUTS, "consistency", sources=SOURCES)
    run = ev.scorer.last_run
    ev.close()
    assert got == expected  # bit for bit: the same batches, the same padding, one session per actor
    assert run["inputs"] == sum(run["per_worker"].values()) and 1 <= len(run["per_worker"]) <= 2
    assert ev.stats["sessions"] == 2
    if not ModelFolder.open(tiny_t5_model).batch_invariant(precision):
        assert run["batches"] == run["inputs"]  # a dynamically quantised graph runs one input per batch, as locally


def test_only_cache_misses_go_to_ray(ray_cluster, tiny_t5_model, tmp_path):
    cache = tmp_path / "cache"
    half = OUTPUTS[:11]
    local = Evaluator(tiny_t5_model, device="cpu", precision="fp32", cache_dir=cache, threads=1)
    local.score_batch(half, "fluency")
    local.close()
    ev = RayEvaluator(tiny_t5_model, precision="fp32", workers=2, cache_dir=cache, threads=1, progress=False)
    got = ev.score_batch(OUTPUTS, "fluency")
    misses = ev.stats["scored"]
    assert ev.stats["cached"] > 0 and misses > 0 and ev.scorer.last_run["inputs"] == misses
    ev.close()
    again = RayEvaluator(tiny_t5_model, precision="fp32", workers=2, cache_dir=cache, threads=1, progress=False)
    assert again.score_batch(OUTPUTS, "fluency") == got
    assert again.stats["scored"] == 0 and not again.session_created  # a warm cache starts no Ray job
    again.close()
    expected, _ = local_scores(tiny_t5_model, "fp32", "fluency")
    assert got == expected
    # the folder was written once on this (single-node) cluster, under the name of its content
    assert len([p for p in ray_cluster.glob("nlgeval-ray-models/*") if not p.name.startswith(".")]) >= 1


def test_the_score_command_on_ray_matches_the_local_command(ray_cluster, tiny_t5_model, tmp_path, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text("\n".join(json.dumps({"output": o, "source": s}) for o, s in zip(OUTPUTS, SOURCES)) + "\n")
    common = [
        str(data),
        "-d",
        "consistency",
        "-d",
        "fluency",
        "--model",
        str(tiny_t5_model),
        "--device",
        "cpu",
        "--precision",
        "fp32",
        "--no-cache",
    ]
    assert main(["score", *common, "-o", str(tmp_path / "local.jsonl")]) == 0
    capsys.readouterr()
    assert main(["score", *common, "-o", str(tmp_path / "ray.jsonl"), "--engine", "ray", "--ray-workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "Ray: " in err and "inputs scored" in err  # the progress line
    local = [json.loads(line)["nlgeval"] for line in (tmp_path / "local.jsonl").read_text().splitlines()]
    remote = [json.loads(line)["nlgeval"] for line in (tmp_path / "ray.jsonl").read_text().splitlines()]
    assert remote == local


def test_meta_eval_on_ray_matches_local(ray_cluster, tiny_t5_model, tmp_path, capsys):
    from test_metaeval import _rated_summaries

    path = tmp_path / "rated.json"
    path.write_text(json.dumps(_rated_summaries()))
    common = [
        "meta-eval",
        str(path),
        "--model",
        str(tiny_t5_model),
        "--device",
        "cpu",
        "--precision",
        "fp32",
        "--bootstrap",
        "20",
        "--format",
        "json",
        "--source-windows",
        "off",
    ]
    assert main([*common, "--cache-dir", str(tmp_path / "c1")]) == 0
    local = capsys.readouterr().out
    assert main([*common, "--cache-dir", str(tmp_path / "c2"), "--engine", "ray", "--ray-workers", "2"]) == 0
    remote = capsys.readouterr().out
    assert json.loads(local)  # the text is compared: a NaN correlation is equal only as text
    assert remote == local


def test_device_auto_must_be_plannable(ray_cluster, tiny_t5_model, monkeypatch):
    import nlgeval_runtime.fingerprint as fp

    monkeypatch.setattr(fp, "planned_provider", lambda device: None)  # as on a driver whose onnxruntime lists CUDA
    ev = RayEvaluator(tiny_t5_model, device="auto", cache=False, progress=False)
    with pytest.raises(RayScoringError, match="--device cpu or --device cuda"):
        ev.score_batch(["A text."], "fluency")


def test_every_served_dimension_of_the_embedded_model_scores_the_same_on_ray(ray_cluster):
    """The sub-folder models (text/) and the sentence encoder (embed/) run on the cluster too, with the
    scores of the local path: the first probe pair of every served dimension, both sides."""
    from pytest_nlgeval.metaeval.liveness import _PLURAL, build_pairs
    from pytest_nlgeval.scale.ray_engine import RayBoolQAScorer, RayEmbedder

    local = Evaluator(cache=False, threads=1, device="cpu")
    ray_ev = RayEvaluator(workers=1, cache=False, threads=1, progress=False)
    served = sorted(local.folder.dimensions["serves"])
    pairs = build_pairs()
    assert set(served) <= set(pairs), f"no probe pairs for {set(served) - set(pairs)}"
    try:
        for key in served:
            task, name = key.split("/")
            cases = [side for pair in pairs[key][:1] for side in (pair.good, pair.bad)]
            inputs = {}
            for argument, plural in _PLURAL.items():
                values = [c.get(argument) for c in cases]
                if any(v is not None for v in values):
                    inputs[plural] = values
            outputs = [c["output"] for c in cases]
            expected = local.score_batch(outputs, name, task=task, recorder=None, **inputs)
            got = ray_ev.score_batch(outputs, name, task=task, recorder=None, **inputs)
            assert got == pytest.approx(expected, abs=1e-9), key
        assert ray_ev.fingerprint_id == local.fingerprint_id
        routed = list(ray_ev._graph_scorers.values())
        assert any(isinstance(s, RayBoolQAScorer) for s in routed), "text/ did not run on Ray"
        assert any(isinstance(s, RayEmbedder) for s in routed), "embed/ did not run on Ray"
        assert not ray_ev.session_created or isinstance(ray_ev.scorer, RayBoolQAScorer)
    finally:
        ray_ev.close()
        local.close()
