"""Fixtures shared by the project's tests: tiny models built here, never downloaded."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def tiny_t5_checkpoint(tmp_path_factory) -> Path:
    """A random tiny T5 checkpoint folder (config.json, weights, tokenizer) of the t5-v1_1 family."""
    from tinymodels import build_tiny_t5_checkpoint

    return build_tiny_t5_checkpoint(tmp_path_factory.mktemp("tiny-t5-ckpt"))


@pytest.fixture(scope="session")
def tiny_t5_model(tiny_t5_checkpoint, tmp_path_factory) -> Path:
    """The tiny T5 exported to a model folder (fp32 + int8), max length 48 tokens."""
    from tinymodels import build_tiny_t5_model

    return build_tiny_t5_model(tiny_t5_checkpoint, tmp_path_factory.mktemp("tiny-t5-model") / "model")
