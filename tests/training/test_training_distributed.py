"""Data-parallel training: two CPU processes (gloo) started by torchrun train one model together."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from training_fixtures import build_tiny_encoder, dialogues, documents


def test_torchrun_two_process_gloo_smoke(tmp_path):
    from nlgeval_training.pseudo import dialogue as dlg
    from nlgeval_training.pseudo import summarization as summ
    from nlgeval_training.pseudo.build import write_records

    encoder = build_tiny_encoder(tmp_path / "encoder")
    data = tmp_path / "pseudo.jsonl.gz"
    write_records(summ.fluency(documents(), seed=0, units_per_document=3) + dlg.naturalness(dialogues(), seed=0), data)
    config = tmp_path / "ddp.yaml"
    config.write_text(f"""
train:
  output_dir: {tmp_path / 'out'}
  train_data: ["{data}"]
  encoder: "{encoder}"
  stages: [["summarization/fluency"], ["dialogue/naturalness"]]
  examples_per_dimension: 8
  batch_size: 2
  max_length: 32
  eval_per_dimension: 4
  eval_fraction: 0.25
  checkpoint_every: 1
  progress: false
  threads: 1
""")
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = str(sock.getsockname()[1])
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--master_addr",
        "127.0.0.1",
        "--master_port",
        port,
        "-m",
        "nlgeval_training.cli",
        "train",
        "--config",
        str(config),
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = [json.loads(line) for line in (tmp_path / "out" / "train.log.jsonl").read_text().splitlines()]
    start = next(e for e in log if e["event"] == "start")
    assert start["world_size"] == 2
    evals = [e for e in log if e["event"] == "eval"]
    assert [e["stage"] for e in evals] == [1, 2]
    # Each process takes every second batch: 8 examples / batch 2 = 4 batches -> 2 steps per process.
    assert evals[0]["steps"] == 2
    assert (tmp_path / "out" / "final" / "head.pt").is_file()
