"""The README's install path: the two wheels (`make wheels`) into a bare virtual environment, then a two-test
suite of a user's project runs offline with the embedded model."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

SUITE = '''
from pytest_nlgeval import assert_dimension

DOC = "The museum reopens on 3 June after a renovation that cost 12 million euros."


def test_faithful():
    assert_dimension("The museum reopens on 3 June.", "consistency", source=DOC) > 0.7


def test_wrong_date_is_caught():
    assert_dimension("The museum reopens on 3 July.", "consistency", source=DOC) < 0.5
'''


@pytest.mark.slow
def test_wheels_install_into_a_bare_venv_and_run_a_suite_offline(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "-w",
            str(dist),
            str(ROOT / "runtime"),
            str(ROOT),
        ],
        check=True,
        cwd=tmp_path,
    )
    wheels = sorted(str(p) for p in dist.glob("*.whl"))
    assert [Path(w).name.split("-")[0] for w in wheels] == ["nlgeval_runtime", "pytest_nlgeval"]
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *wheels], check=True, cwd=tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_app.py").write_text(SUITE, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(HF_HUB_OFFLINE="1", NLGEVAL_CACHE_DIR=str(tmp_path / "cache"))
    run = subprocess.run(
        [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_app.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout
    # the bare environment has no torch: the plugin and the runtime never need it
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    assert probe.returncode != 0
