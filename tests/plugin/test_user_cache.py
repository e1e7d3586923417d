"""An ``Evaluator()`` made outside pytest keeps its score cache in the user's cache folder, never in the current
folder; a pytest run keeps its own under the rootdir."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from pytest_nlgeval.core.cache import CACHE_FILE, user_cache_dir

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG_CACHE_HOME is the Linux rule")


def test_the_user_cache_folder_follows_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert user_cache_dir() == tmp_path / "xdg" / "pytest-nlgeval" / "scores"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert user_cache_dir() == tmp_path / "home" / ".cache" / "pytest-nlgeval" / "scores"


def test_an_evaluator_outside_pytest_caches_in_the_user_cache_folder(tmp_path, monkeypatch):
    from pytest_nlgeval.core.evaluator import Evaluator

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    first = Evaluator()
    score = float(first.score("The bridge reopens next week.", "fluency"))
    assert first.stats["scored"] == 1
    assert (tmp_path / "xdg" / "pytest-nlgeval" / "scores" / CACHE_FILE).is_file()
    assert list(Path(work).iterdir()) == []  # nothing written where the user happens to be
    again = Evaluator()
    assert float(again.score("The bridge reopens next week.", "fluency")) == score
    assert again.stats == {**again.stats, "scored": 0, "cached": 1}
