"""The provider a session will get, planned without creating one: one function, used by both callers."""

from __future__ import annotations

import pytest

from nlgeval_runtime import fingerprint, session
from nlgeval_runtime.session import CPU, planned_provider


def _cuda_listed(answer):
    def listed():
        if answer is None:
            raise AssertionError("onnxruntime was asked although the plan was certain without it")
        return answer

    return listed


def test_fingerprint_and_session_share_one_plan():
    assert fingerprint.planned_provider is session.planned_provider


@pytest.mark.parametrize(
    "device, cpu_wheel, listed, expected",
    [
        ("cpu", False, None, CPU),  # never asks onnxruntime
        ("auto", True, None, CPU),  # the CPU wheel never lists CUDA: metadata is enough
        ("auto", False, False, CPU),  # a GPU build without CUDA listed falls back to the CPU
        ("auto", False, True, None),  # CUDA listed: only a real session can tell
        ("cuda", True, False, None),  # the session will refuse with the clear error
        ("cuda", False, True, None),
    ],
)
def test_plan(monkeypatch, device, cpu_wheel, listed, expected):
    monkeypatch.setattr(session, "_only_cpu_build_installed", lambda: cpu_wheel)
    monkeypatch.setattr(session, "cuda_listed", _cuda_listed(listed))
    assert planned_provider(device) == expected


def test_verify_for_reads_the_planned_graph_only(tiny_t5_model, monkeypatch):
    from nlgeval_runtime.modelfolder import ModelFolder

    folder = ModelFolder.open(tiny_t5_model)
    checked = []
    monkeypatch.setattr(ModelFolder, "verify", lambda self, names: checked.extend(names))
    session.verify_for(folder, "cpu", "fp32")
    assert checked == list(folder.files_for("fp32"))
