"""``check_dimension``: the assertion written as a call, against the recommended threshold unless ``above=`` says
otherwise; and the forms the README and the examples show pass the linters' check for unused comparisons."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

# In-process pytester runs unload the modules they imported, and C extensions cannot be loaded twice in one
# process: load them once, before any pytester snapshot.
import nlgeval_runtime.boolqa  # noqa: F401,E402
import onnxruntime  # noqa: F401,E402

from pytest_nlgeval.core.thresholds import THRESHOLDS

ROOT = Path(__file__).resolve().parents[2]
ARTICLE = (
    "The city council approved a new bridge over the river on Tuesday. It will cost 38 million euros. "
    "Construction starts in May and should take two years."
)


@pytest.fixture(autouse=True)
def _own_rootdir(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")


def test_the_recommended_threshold_by_default_and_above_when_given(pytester):
    pytester.makepyfile(
        test_sum=f'''
        from pytest_nlgeval import check_dimension

        ARTICLE = {ARTICLE!r}

        def test_faithful():
            score = check_dimension("The council approved a 38 million euro bridge.", "consistency", source=ARTICLE)
            assert 0.45 < float(score) <= 1.0  # the Score comes back

        def test_wrong_figure():
            check_dimension("The council approved a 83 million euro bridge.", "consistency", source=ARTICLE)

        def test_own_threshold():
            check_dimension("The council approved a 38 million euro bridge.", "consistency", source=ARTICLE,
                            above=0.999)
        '''
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-no-cache", "--nlgeval-json", "r.json")
    result.assert_outcomes(passed=1, failed=2)
    threshold = THRESHOLDS["summarization/consistency"].value
    result.stdout.fnmatch_lines(
        [
            f"*AssertionError: consistency (summarization) = 0.*, expected > {threshold}",
            "*unsupported: `83 million euro`: the source says 38 million euros",
        ]
    )
    assert "expected > 0.999" in result.stdout.str()
    # a failed check shows the test's line and the explanation, not the plugin's own source
    assert "def check_dimension(" not in result.stdout.str() and "score.__gt__(above)" not in result.stdout.str()
    checks = json.loads((pytester.path / "r.json").read_text(encoding="utf-8"))["checks"]
    recorded = {c["nodeid"].split("::")[-1]: (c["operator"], c["threshold"], c["passed"]) for c in checks}
    assert recorded == {
        "test_faithful": (">", threshold, True),
        "test_wrong_figure": (">", threshold, False),
        "test_own_threshold": (">", 0.999, False),
    }


def test_another_model_or_dimension_needs_a_threshold(pytester, tiny_t5_model):
    pytester.makepyfile(
        test_other='''
        import pytest
        from pytest_nlgeval import check_dimension

        def test_needs_above_with_another_model():
            with pytest.raises(TypeError) as info:
                check_dimension("The bridge reopens.", "fluency")
            print("MESSAGE", info.value)

        def test_with_above():
            check_dimension("The bridge reopens.", "fluency", above=0.0)

        def test_overall_has_none():
            with pytest.raises(TypeError) as info:
                check_dimension("The bridge reopens.", "overall", above=None)
            print("MESSAGE", info.value)

        def test_above_is_a_number():
            with pytest.raises(TypeError) as info:
                check_dimension("The bridge reopens.", "fluency", above="0.5")
            print("MESSAGE", info.value)
        '''
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "-s", f"--nlgeval-model={tiny_t5_model}")
    result.assert_outcomes(passed=4)
    out = result.stdout.str()
    assert (
        "check_dimension: the recommended thresholds were measured for the embedded default model, and this "
        f"evaluator runs {str(tiny_t5_model)!r}; pass the threshold for it, e.g. check_dimension(..., above=0.5)"
    ) in out
    assert "check_dimension: 'summarization/overall' has no recommended threshold (documented: " in out
    assert "check_dimension: above= must be a number such as 0.45, got '0.5'" in out


def test_a_fact_checker_needs_a_threshold_for_the_dimensions_it_reads():
    from types import SimpleNamespace

    from pytest_nlgeval import check_dimension

    reading = SimpleNamespace(model=None, fact_checker="models/minicheck")
    with pytest.raises(TypeError) as info:
        check_dimension("The bridge reopens.", "consistency", source=ARTICLE, evaluator=reading)
    assert str(info.value) == (
        "check_dimension: the recommended threshold of 'summarization/consistency' was measured with the embedded "
        "model reading the claims, and this evaluator reads them with the fact checker 'models/minicheck'; pass "
        "the threshold for it, e.g. check_dimension(..., above=0.5)"
    )


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def _b015(code: str) -> str:
    """ruff's findings of rule B015 (a comparison whose result is unused) in ``code``."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "ruff",
            "check",
            "--no-cache",
            "--isolated",
            "--select",
            "B015",
            "--output-format",
            "concise",
            "--stdin-filename",
            "snippet.py",
            "-",
        ],
        input=code,
        capture_output=True,
        text=True,
        check=False,
    )
    if "No module named ruff" in result.stderr:
        pytest.skip("ruff is not installed (a development dependency: requirements-dev.txt)")
    return result.stdout.strip() if result.returncode else ""


def test_the_linters_accept_the_documented_forms():
    # the control: the bare form is what the linters flag
    assert "B015" in _b015('def test_x(s):\n    assert_dimension(s, "fluency") > 0.8\n')
    blocks = _python_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    blocks += _python_blocks((ROOT / "docs" / "plugin.md").read_text(encoding="utf-8"))
    assert len(blocks) >= 3
    for block in blocks:
        assert _b015(block) == "", block
    for path in sorted((ROOT / "examples").rglob("test_*.py")):
        assert _b015(path.read_text(encoding="utf-8")) == "", path
