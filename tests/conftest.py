"""Fixtures shared by the project's tests: tiny models built here, never downloaded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def _shared_dir(tmp_path_factory, name: str) -> Path:
    """A folder shared by every xdist worker of this run (the parent of the per-worker base temp)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return root / name


def _build_once(tmp_path_factory, name: str, build) -> Path:
    """Build an artefact once per test run, even with several xdist workers (file lock + marker)."""
    from filelock import FileLock

    target = _shared_dir(tmp_path_factory, name)
    with FileLock(str(target) + ".lock"):
        done = target / ".complete"
        if not done.is_file():
            target.mkdir(parents=True, exist_ok=True)
            build(target)
            done.write_text("ok")
    return target


@pytest.fixture(scope="session")
def tiny_t5_checkpoint(tmp_path_factory) -> Path:
    """A random tiny T5 checkpoint folder (config.json, weights, tokenizer) of the t5-v1_1 family."""
    from tinymodels import build_tiny_t5_checkpoint

    return _build_once(tmp_path_factory, "tiny-t5-ckpt", build_tiny_t5_checkpoint)


@pytest.fixture(scope="session")
def tiny_t5_model(tiny_t5_checkpoint, tmp_path_factory) -> Path:
    """The tiny T5 exported to a model folder (fp32 + int8), max length 48 tokens."""
    from tinymodels import build_tiny_t5_model

    root = _build_once(
        tmp_path_factory, "tiny-t5-model", lambda d: build_tiny_t5_model(tiny_t5_checkpoint, d / "model")
    )
    return root / "model"


@pytest.fixture(scope="session")
def tiny_causal_lm(tmp_path_factory):
    """A tiny random GPT-2 exported to a causal-LM model folder: (folder, torch model, tokenizer).

    The model and tokenizer are rebuilt deterministically in every worker; the export happens once.
    """
    from tiny_causal import build_model, build_tokenizer, export_tiny_causal_lm

    tok = build_tokenizer()
    model = build_model(tok)
    root = _build_once(tmp_path_factory, "tiny-causal-lm", lambda d: export_tiny_causal_lm(model, tok, d / "lm"))
    return root / "lm", model, tok


@pytest.fixture()
def recorder():
    """A check recorder of the test's own, lent to the current run for the length of the test: checks the test
    makes through the assertions land here, not in the results of the session running the tests."""
    from pytest_nlgeval.core import run
    from pytest_nlgeval.core.checks import CheckRecorder

    rec, current = CheckRecorder(), run.active()
    current.use_recorder(rec)
    yield rec
    current.drop_recorder(rec)
