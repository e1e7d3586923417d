"""The scale-out options without a cluster: what they refuse, what they say when Ray is missing, and that
neither the plugin nor the command line imports Ray or llama.cpp until asked to."""

import json
import subprocess
import sys

from pytest_nlgeval.cli import main


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_the_plugin_and_the_command_line_stay_light():
    res = _run(
        "import sys, pytest_nlgeval.plugin, pytest_nlgeval.cli as cli; cli.build_parser(); "
        "print([m for m in ('ray', 'llama_cpp', 'dspy', 'litellm', 'tritonclient') if m in sys.modules])"
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_ray_options_need_the_ray_engine(tmp_path, capsys):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"output": "A text."}) + "\n")
    assert main(["score", str(data), "-d", "fluency", "--ray-workers", "2"]) == 2
    assert "need --engine ray" in capsys.readouterr().err


def test_without_ray_the_engine_says_how_to_install_it(tmp_path):
    data = tmp_path / "rows.jsonl"
    data.write_text(json.dumps({"output": "A text."}) + "\n")
    res = _run(f"""
import sys
sys.modules['ray'] = None  # as if Ray were not installed
from pytest_nlgeval.cli import main
sys.exit(main(['score', {str(data)!r}, '-d', 'fluency', '--engine', 'ray']))
""")
    assert res.returncode == 2, res.stderr
    assert 'pip install "pytest-nlgeval[ray]"' in res.stderr and "Traceback" not in res.stderr
