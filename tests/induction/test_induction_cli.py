"""`nlgeval induce` end to end offline, its errors, and the package's optional-dependency behaviour."""

import json
import subprocess
import sys

from induction_fakes import synthetic_rows

from pytest_nlgeval.cli import main


def write_data(path):
    path.write_text("\n".join(json.dumps(r) for _, r in synthetic_rows(45)) + "\n", encoding="utf-8")
    return path


def test_induce_command_writes_artifact_and_report_card(tmp_path, capsys):
    data = write_data(tmp_path / "labels.jsonl")
    out = tmp_path / "metric.json"
    code = main(
        [
            "induce",
            str(data),
            "--task",
            "Answer questions",
            "--target",
            "label",
            "-o",
            str(out),
            "--metrics",
            "length,distinct_1",
            "--keep",
            "2",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "no --lm given" in captured.err and "regressing 2 candidates" in captured.err  # progress display
    assert "held-out Kendall tau" in captured.out and "sensitivity" in captured.out
    artifact = json.loads(out.read_text())
    assert artifact["provenance"]["dataset"]["rows"] == 45
    assert "Induced metric" in (tmp_path / "metric.html").read_text()


def test_induce_command_reports_bad_input_without_a_traceback(tmp_path, capsys):
    data = write_data(tmp_path / "labels.jsonl")
    code = main(["induce", str(data), "--task", "t", "--target", "stars", "-o", str(tmp_path / "m.json")])
    err = capsys.readouterr().err
    assert code == 2 and "no label column 'stars'" in err and "Traceback" not in err


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_importing_the_package_imports_nothing_heavy():
    res = _run(
        "import sys, pytest_nlgeval.induction as ind; ind.load_dataset; "
        "heavy = [m for m in ('numpy', 'sklearn', 'scipy', 'dspy', 'litellm') if m in sys.modules]; "
        "print(heavy)"
    )
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "[]"


def test_without_dspy_bank_induction_works_and_judges_say_how_to_install(tmp_path):
    data = write_data(tmp_path / "labels.jsonl")
    code = f"""
import sys
sys.modules['dspy'] = None  # as if DSPy were not installed
from pytest_nlgeval.induction import load_dataset, induce
from pytest_nlgeval.llm.cache import JudgesUnavailable, make_lm
m = induce(load_dataset({str(data)!r}, target='label'), task='t', target='label', metrics=['length'],
           robustness=False, n_boot=20)
print('induced', len(m.components))
try:
    make_lm('openai/x')
except JudgesUnavailable as exc:
    print('error:', exc)
"""
    res = _run(code)
    assert res.returncode == 0, res.stderr
    assert "induced 1" in res.stdout
    assert 'pip install "pytest-nlgeval[judges]"' in res.stdout


def test_induce_command_with_an_lm_shows_llm_usage(tmp_path, capsys, monkeypatch):
    from induction_fakes import RuleLM

    from pytest_nlgeval.llm import cache as llmcache

    made = {}

    def fake_make_lm(model, **kw):
        made.update(model=model, **kw)
        return llmcache.cached_lm(RuleLM(), tmp_path / "cache")

    monkeypatch.setattr(llmcache, "make_lm", fake_make_lm)
    data = write_data(tmp_path / "labels.jsonl")
    code = main(
        [
            "induce",
            str(data),
            "--task",
            "Answer questions",
            "--target",
            "label",
            "-o",
            str(tmp_path / "m.json"),
            "--lm",
            "openai/some-model",
            "--api-base",
            "http://localhost:9/v1",
            "--n-criteria",
            "2",
            "--n-rubrics",
            "0",
            "--no-example-judge",
            "--threads",
            "1",
            "--no-robustness",
        ]
    )
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert made["model"] == "openai/some-model" and made["api_base"] == "http://localhost:9/v1"
    assert "judge LM: openai/some-model" in captured.err and "[1/2] judging" in captured.err
    assert "LLM: " in captured.out and "calls" in captured.out
    assert "generated judges only" in json.loads((tmp_path / "m.json").read_text())["provenance"]["mode"]
