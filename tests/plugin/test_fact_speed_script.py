"""benchmarks/fact_speed.py's profile runs on the realistic pairs and says what each step of a fact check read."""

import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def test_the_profile_prints_each_step_and_the_forms(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    import fact_speed

    assert fact_speed.main(["--sets", "pairs", "--profile"]) == 0
    out = capsys.readouterr().out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    assert {"fluency", "consistency", "faithfulness"} <= set(rows)
    read = next(line for line in out.splitlines() if line.startswith("consistency: read per check"))
    assert "step 1" in read and "text graph" in read  # the best-sharing unit and each claim's form
    assert len(fact_speed.long_cases()) == 6 and all(len(s.split()) > 500 for _, s in fact_speed.long_cases())
    ((output, _),) = fact_speed.runaway_cases(2_000)
    assert len(output) == 2_000
    sys.modules.pop("fact_speed", None)
