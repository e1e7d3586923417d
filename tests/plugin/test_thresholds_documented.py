"""One recommended threshold per dimension, the same in the code, the README and the examples; a well-formed
short summary clears the fluency threshold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_nlgeval.core.thresholds import THRESHOLDS, recommended_threshold

ROOT = Path(__file__).resolve().parents[2]
TASK_OF_FOLDER = {"summarization": "summarization", "dialogue": "dialogue", "data2text": "data2text"}
ASSERTION = re.compile(
    r"assert_dimensions?\(.*?\"(?P<dim>\w+)\"(?P<rest>.*?)\)(?:\.(?:mean|min)\(\))?\s*>\s*(?P<value>[0-9.]+)"
)


def test_the_readme_table_is_the_code_table():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    for key, t in THRESHOLDS.items():
        row = f"| {key} | {t.value} | {t.false_alarms:.0%} | {t.caught:.0%} | {t.good} / {t.damaged} |"
        assert row in readme, f"README lacks the row {row!r}"


@pytest.mark.parametrize("folder", sorted(TASK_OF_FOLDER))
def test_every_example_asserts_the_recommended_threshold(folder):
    checked = 0
    for path in (ROOT / "examples" / folder).glob("test_*.py"):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = ASSERTION.search(line)
            if not m or float(m["value"]) >= 0.999:  # >= 0.999: a demonstration of the failure message
                continue
            task = re.search(r'task="(\w+)"', m["rest"])
            key = f"{task[1] if task else TASK_OF_FOLDER[folder]}/{m['dim']}"
            if key not in THRESHOLDS:
                continue  # overall: a mean of dimensions, no threshold of its own
            assert float(m["value"]) == THRESHOLDS[key].value, f"{path.name}:{number}: {key} > {m['value']}"
            checked += 1
    assert checked, f"no assertion found in examples/{folder}"


def test_a_well_formed_short_summary_clears_the_fluency_threshold():
    from pytest_nlgeval.core.evaluator import Evaluator

    summaries = [
        "The city council approved a new bridge over the river on Tuesday. Construction will start in May.",
        "Acme recalled 12,000 space heaters after reports of overheating. Owners should contact the company.",
        "Storm Henrike killed two people in the Ardel valley. More than 3,400 homes were evacuated.",
        "The museum will reopen on 1 March after a two-year renovation that cost 14 million pounds.",
    ]
    scores = Evaluator(cache=False).evaluate(summaries, "fluency")
    assert min(float(s) for s in scores) > recommended_threshold("fluency"), [float(s) for s in scores]
