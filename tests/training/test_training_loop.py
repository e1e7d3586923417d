"""Training loop on a tiny encoder: continual stages with replay, exact resume, export with parity, CLI."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from training_fixtures import build_tiny_encoder, dialogues, documents

from nlgeval_training.trainer import TrainConfig, plan_stages, train


def _records(dim: str, n: int, label_every: int = 2):
    task, d = dim.split("/")
    return [
        {"input": f"{dim} {i}", "label": int(i % label_every == 0), "task": task, "dimension": d, "group": f"{dim}-{i}"}
        for i in range(n)
    ]


def test_plan_replays_twenty_percent_of_earlier_dimensions_and_matches_budgets(tmp_path):
    recs = (
        _records("summarization/coherence", 50)
        + _records("dialogue/coherence", 50)
        + _records("summarization/fluency", 40)
    )
    cfg = TrainConfig(
        output_dir=str(tmp_path),
        train_data=["unused"],
        seed=3,
        stages=[["summarization/coherence", "dialogue/coherence"], ["summarization/fluency"]],
    )
    stages = plan_stages(cfg, recs)
    assert [name for name, _ in stages] == ["summarization/coherence+dialogue/coherence", "summarization/fluency"]
    second = Counter(f"{r['task']}/{r['dimension']}" for r in stages[1][1])
    assert second == {"summarization/fluency": 40, "summarization/coherence": 10, "dialogue/coherence": 10}
    assert len({r["input"] for r in stages[1][1]}) == 60  # replay samples without repeats
    multi = plan_stages(TrainConfig(**{**cfg.__dict__, "mode": "multitask"}), recs)
    assert len(multi) == 1 and len(multi[0][1]) == sum(len(r) for _, r in stages)
    assert plan_stages(cfg, recs) == stages  # seeded
    with pytest.raises(ValueError, match="no training records for \\['dialogue/naturalness'\\]"):
        plan_stages(TrainConfig(**{**cfg.__dict__, "stages": [["dialogue/naturalness"]]}), recs)
    with pytest.raises(ValueError, match="mode must be one of"):
        TrainConfig(output_dir="x", train_data=["y"], mode="sequential")


@pytest.fixture(scope="module")
def tiny_setup(tmp_path_factory):
    from nlgeval_training.pseudo import dialogue as dlg
    from nlgeval_training.pseudo import summarization as summ
    from nlgeval_training.pseudo.build import write_records

    root = tmp_path_factory.mktemp("train")
    encoder = build_tiny_encoder(root / "encoder")
    recs = summ.fluency(documents(), seed=0, units_per_document=3) + dlg.naturalness(
        dialogues(), seed=0, per_dialogue=5
    )
    data = root / "pseudo.jsonl.gz"
    write_records(recs, data)
    return root, encoder, data


def _config(root: Path, encoder: Path, data: Path, out: str, **over) -> TrainConfig:
    base = dict(
        output_dir=str(root / out),
        train_data=[str(data)],
        encoder=str(encoder),
        eval_fraction=0.25,
        stages=[["summarization/fluency"], ["dialogue/naturalness"]],
        examples_per_dimension=12,
        batch_size=4,
        max_length=48,
        eval_per_dimension=8,
        checkpoint_every=2,
        progress=False,
        threads=1,
        seed=0,
        lr_encoder=1e-3,
    )
    base.update(over)
    return TrainConfig(**base)


def _weights(folder: Path) -> dict:
    from nlgeval_training.model import EncoderClassifier

    return {k: v.clone() for k, v in EncoderClassifier.load(folder).state_dict().items()}


@pytest.fixture(scope="module")
def trained(tiny_setup):
    root, encoder, data = tiny_setup
    cfg = _config(root, encoder, data, "full")
    history = train(cfg, resume=False)
    return cfg, history


def test_two_stage_continual_run_reports_every_dimension_after_every_stage(trained):
    cfg, history = trained
    out = Path(cfg.output_dir)
    assert [h["stage"] for h in history] == [1, 2]
    for entry in history:
        assert set(entry["metrics"]) == {"summarization/fluency", "dialogue/naturalness", "mean"}
        for m in entry["metrics"].values():
            assert 0.0 <= m["accuracy"] <= 1.0
    assert history[1]["examples"] == 12 + round(0.2 * 12)
    assert (out / "final" / "head.pt").is_file() and (out / "final" / "tokenizer.json").is_file()
    log = [json.loads(line) for line in (out / "train.log.jsonl").read_text().splitlines()]
    assert [e["event"] for e in log if e["event"] in ("start", "eval", "done")] == ["start", "eval", "eval", "done"]
    assert json.loads((out / "history.json").read_text()) == history


def test_resume_after_an_interruption_gives_the_same_weights(trained, tiny_setup):
    import torch

    root, encoder, data = tiny_setup
    cfg, _ = trained
    interrupted = _config(root, encoder, data, "resumed", stop_after_steps=2)
    assert train(interrupted, resume=False) == []
    state = json.loads((root / "resumed" / "last" / "state.json").read_text())
    assert (state["stage"], state["step_in_stage"], state["global_step"]) == (0, 2, 2)
    assert not (root / "resumed" / "final").exists()
    train(_config(root, encoder, data, "resumed"))
    a, b = _weights(Path(cfg.output_dir) / "final"), _weights(root / "resumed" / "final")
    assert a.keys() == b.keys()
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-6), key
    other = _config(root, encoder, data, "resumed", lr_encoder=5e-4)
    with pytest.raises(ValueError, match="different configuration"):
        train(other)


def test_static_int8_export_of_an_encoder_classifier_batches_with_the_same_scores(trained, tmp_path):
    import numpy as np
    from nlgeval_runtime import load_boolqa

    from nlgeval_training.encoder_classifier import export_encoder_classifier
    from nlgeval_training.folder_writer import parity_texts

    cfg, _ = trained
    manifest = export_encoder_classifier(
        Path(cfg.output_dir) / "final", tmp_path / "model", int8=True, int8_method="static"
    )
    assert manifest["quantization"] == {"int8": "static"}
    assert manifest["export"]["parity"]["int8"]["max_abs_diff"] < 0.1
    texts = parity_texts(12)
    scorer = load_boolqa(str(tmp_path / "model"), device="cpu", precision="int8")
    assert scorer.batch_invariant and scorer.max_batch_size > 1
    alone = [scorer.score([t]).scores[0] for t in texts]
    # fixed scales: only float rounding of the unquantised parts (pooling over padding) may differ, as in fp32
    np.testing.assert_allclose(scorer.score(texts).scores, alone, atol=1e-6)


def test_export_matches_pytorch_through_the_runtime(trained, tmp_path):
    from nlgeval_runtime import load_boolqa

    from nlgeval_training.encoder_classifier import export_encoder_classifier, reference_scores
    from nlgeval_training.model import EncoderClassifier

    cfg, _ = trained
    ckpt = Path(cfg.output_dir) / "final"
    manifest = export_encoder_classifier(ckpt, tmp_path / "model", int8=True)
    assert manifest["architecture"] == "encoder-classifier"
    assert manifest["input"]["separator_token"] == "[SEP]" and manifest["input"]["max_length"] == 48
    assert manifest["export"]["parity"]["fp32"]["max_abs_diff"] < 1e-5
    assert manifest["export"]["parity"]["int8"]["max_abs_diff"] < 0.1
    texts = [
        "question: Is this a fluent paragraph? </s> paragraph: The museum opened on Monday.",
        "question: Is this a natural response in the dialogue? </s> response: " + "very long " * 60,
    ]
    model = EncoderClassifier.load(ckpt).eval()
    expected = reference_scores(model, ckpt / "tokenizer.json", texts, 48, "[SEP]")
    scorer = load_boolqa(str(tmp_path / "model"), precision="fp32")
    result = scorer.score(texts)
    assert np.max(np.abs(result.scores - expected)) < 1e-5
    assert result.truncated.tolist() == [False, True]
    # The literal </s> must reach the model as [SEP]: scoring with a different separator changes the score.
    moved = scorer.score([texts[0].replace("</s>", "|")]).scores[0]
    assert abs(moved - result.scores[0]) > 1e-6


def test_export_refuses_a_folder_without_graphs(trained, tmp_path):
    from nlgeval_training.encoder_classifier import export_encoder_classifier

    cfg, _ = trained
    with pytest.raises(ValueError, match="no graph"):
        export_encoder_classifier(Path(cfg.output_dir) / "final", tmp_path / "m", keep_fp32=False)
    with pytest.raises(FileNotFoundError, match="no tokenizer.json"):
        export_encoder_classifier(tmp_path, tmp_path / "m")


def test_cli_trains_from_a_toml_config_and_reports_bad_input(tiny_setup, tmp_path, capsys):
    from nlgeval_training.cli import main

    root, encoder, data = tiny_setup
    config = tmp_path / "run.toml"
    config.write_text(f"""
[train]
output_dir = "out"
train_data = ["{data}"]
encoder = "{encoder}"
mode = "multitask"
stages = [["summarization/fluency", "dialogue/naturalness"]]
examples_per_dimension = 4
batch_size = 4
max_length = 32
eval_per_dimension = 4
eval_fraction = 0.25
progress = false
""")
    assert main(["train", "--config", str(config)]) == 0
    assert "stage 1 multitask: mean accuracy" in capsys.readouterr().out
    assert (tmp_path / "out" / "final" / "head.pt").is_file()
    assert main(["train", "--config", str(config), "--set", "batch_sise=3"]) == 2
    assert "unknown training option(s) ['batch_sise']" in capsys.readouterr().err
    assert main(["train", "--config", str(tmp_path / "missing.toml")]) == 2


def test_evaluate_and_card_write_measured_figures_and_keep_the_folder_valid(trained, tiny_setup, tmp_path):
    from nlgeval_runtime.modelfolder import ModelFolder

    from nlgeval_training.card import write_card
    from nlgeval_training.encoder_classifier import export_encoder_classifier
    from nlgeval_training.evaluation import evaluate_folder

    cfg, history = trained
    _, _, data = tiny_setup
    folder = tmp_path / "model"
    export_encoder_classifier(Path(cfg.output_dir) / "final", folder, int8=True, keep_fp32=False)
    report = evaluate_folder(folder, [data], fraction=None, per_dimension=6)
    assert report["precision"] == "int8" and report["n"] == 12
    training = json.loads((Path(cfg.output_dir) / "final" / "training.json").read_text())
    manifest = write_card(folder, report, [training], {"continual": history}, command="nlgeval-train evaluate ...")
    card = (folder / "CARD.md").read_text()
    mean = report["metrics"]["mean"]["accuracy"]
    assert f"| **mean over dimensions** | {mean:.3f} |" in card
    assert "not a substitute for the released UniEval" in card
    assert manifest["card"]["held_out"]["metrics"]["mean"]["accuracy"] == mean
    ModelFolder.open(folder).verify()  # the card was hashed into the manifest
    assert "CARD.md" in manifest["files"] and "model.onnx" not in manifest["files"]
    assert "Agreement with human ratings" not in card
    human = {
        "table": "| spearman | coherence |\n|---|---|\n| model | 0.123 |",
        "command": "nlgeval meta-eval X --model M",
    }
    manifest = write_card(folder, report, [training], human=human)
    card = (folder / "CARD.md").read_text()
    assert "## Agreement with human ratings" in card and "| model | 0.123 |" in card
    assert "nlgeval meta-eval X --model M" in card and manifest["card"]["human"]["command"] == human["command"]
    ModelFolder.open(folder).verify()


def test_a_model_keeping_its_first_layers_trains_saves_and_loads_with_those_layers_only(tiny_setup):
    from nlgeval_training.model import EncoderClassifier

    root, encoder, data = tiny_setup
    full = EncoderClassifier.from_pretrained_encoder(encoder)
    n = len(full.encoder.encoder.layer)
    cfg = _config(root, encoder, data, "first-layer", encoder_layers=1, stages=[["summarization/fluency"]])
    train(cfg, resume=False)
    kept = EncoderClassifier.load(Path(cfg.output_dir) / "final")
    assert n > 1 and len(kept.encoder.encoder.layer) == 1 and kept.encoder.config.num_hidden_layers == 1
    first = {k: v for k, v in full.state_dict().items() if "encoder.layer.0." in k}
    assert set(first) <= set(kept.state_dict())  # the kept layer is the first one, by name
    with pytest.raises(ValueError, match=f"encoder_layers=9: the encoder has {n} layers"):
        train(_config(root, encoder, data, "too-many", encoder_layers=9), resume=False)


def test_claim_pooling_trains_exports_and_reads_the_claim_segment_beside_the_whole(tiny_setup, tmp_path):
    import torch
    from nlgeval_runtime import load_boolqa

    from nlgeval_training.encoder_classifier import export_encoder_classifier, reference_scores
    from nlgeval_training.model import EncoderClassifier

    root, encoder, data = tiny_setup
    cfg = _config(root, encoder, data, "claim-pooling", pooling="claim", stages=[["summarization/fluency"]])
    train(cfg, resume=False)
    ckpt = Path(cfg.output_dir) / "final"
    model = EncoderClassifier.load(ckpt).eval()
    assert model.pooling == "claim" and model.separator_id is not None
    assert model.head.in_features == 2 * model.encoder.config.hidden_size
    # the second half of the features is the mean of the tokens before the second separator, nothing after it
    sep = model.separator_id
    ids = torch.tensor([[2, 5, sep, 7, 8, sep, 9, 10, 11, sep]])
    mask = torch.ones_like(ids)
    hidden = model.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
    features = {}
    hook = model.head.register_forward_hook(lambda _m, args, _o: features.update(x=args[0]))
    model.logits(ids, mask)
    hook.remove()
    width = model.encoder.config.hidden_size
    assert torch.allclose(features["x"][0, width:], hidden[0, :5].mean(0), atol=1e-5)
    assert torch.allclose(features["x"][0, :width], hidden[0].mean(0), atol=1e-5)

    texts = [
        "question: Is this claim consistent with the document? </s> claim: The museum opened. </s> document: "
        "The museum opened on Monday.",
        "question: Is this claim consistent with the document? </s> claim: Monday opened the museum. </s> "
        "document: The museum opened on Monday.",
    ]
    expected = reference_scores(model, ckpt / "tokenizer.json", texts, 48, "[SEP]")
    export_encoder_classifier(ckpt, tmp_path / "model", int8=False)
    manifest = json.loads((tmp_path / "model" / "nlgeval.json").read_text())
    assert manifest["classifier"]["pooling"] == "claim"
    scores = load_boolqa(str(tmp_path / "model"), precision="fp32").score(texts).scores
    assert np.max(np.abs(scores - expected)) < 1e-5
    with pytest.raises(ValueError, match="pooling='max': choose one of mean, claim"):
        EncoderClassifier.from_pretrained_encoder(encoder, "max")
