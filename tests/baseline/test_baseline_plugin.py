"""Baselines inside real pytest runs (pytester): record, compare, refuse, update safely, under xdist.

The suite below is scored by the tiny random T5 model: its scores are deterministic, so an unchanged
suite reproduces its baseline exactly, and drops are injected by editing the baseline file's scores.
"""

from __future__ import annotations

import json
from glob import escape as lit  # fnmatch patterns: "[0]" in a node id is literal

import pytest

# In-process pytester runs unload the modules they imported, and numpy (the comparison's bootstrap) cannot be
# loaded twice in one process: load it once, before any pytester snapshot.
import numpy  # noqa: F401,E402

pytestmark = pytest.mark.xdist_group("tiny-t5")

SUITE = '''
import pytest
from pytest_nlgeval import assert_dimension

DOC = "Officials said the bridge would reopen next week after repairs. Traffic will be diverted."
OUTPUTS = [
    "The bridge reopens next week.", "Repairs are nearly done.", "Traffic is diverted for now.",
    "Officials announced the reopening.", "The old bridge needed work.", "Drivers should expect delays.",
    "The city paid for the repairs.", "Next week the bridge opens again.",
]

@pytest.mark.parametrize("i", range(8))
def test_fluency(i):
    assert_dimension(OUTPUTS[i], "fluency") > 0.0

@pytest.mark.parametrize("i", range(8))
def test_coherence(i):
    assert_dimension(OUTPUTS[i], "coherence", source=DOC) > 0.0
'''

FLU = "test_suite.py::test_fluency[{}]::fluency::0"
COH = "test_suite.py::test_coherence[{}]::coherence::0"


def run(pytester, model, *args):
    # "--opt=value": a separate path argument would take part in pytest's rootdir detection.
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        f"--nlgeval-model={model}",
        "--nlgeval-precision",
        "fp32",
        "--nlgeval-baseline",
        "base.json",
        *args,
    )


@pytest.fixture
def recorded(pytester, tiny_t5_model):
    pytester.makeini("[pytest]\n")  # the rootdir, which node ids (and so check keys) are relative to
    pytester.makepyfile(test_suite=SUITE)
    result = run(pytester, tiny_t5_model, "--nlgeval-baseline-update")
    result.assert_outcomes(passed=16)
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*= nlgeval baseline updated =*", "*base.json: 16 added, 0 changed, 0 unchanged"])
    return pytester


def _edit(pytester, change):
    path = pytester.path / "base.json"
    data = json.loads(path.read_text())
    change(data["checks"])
    path.write_text(json.dumps(data, indent=2, sort_keys=True))
    return data


def test_unchanged_suite_never_regresses_over_20_seeds(recorded, tiny_t5_model):
    data = json.loads((recorded.path / "base.json").read_text())
    assert sorted(data["checks"]) == sorted([FLU.format(i) for i in range(8)] + [COH.format(i) for i in range(8)])
    fid = data["checks"][FLU.format(0)]["evaluator"]
    assert data["evaluators"][fid]["precision"] == "fp32"
    for seed in range(20):
        extra = ["--nlgeval-json", "results.json"] if seed == 0 else []
        result = run(recorded, tiny_t5_model, "--nlgeval-baseline-seed", str(seed), *extra)
        assert result.ret == 0, result.stdout.str()
        result.stdout.fnmatch_lines(
            [f"*passed: no regression (16 compared, 16 unchanged, 0 improved)*seed {seed}, 95% percentile interval"]
        )
    results = json.loads((recorded.path / "results.json").read_text())
    assert results["baseline"]["status"] == "passed" and results["baseline"]["counts"]["unchanged"] == 16
    assert results["baseline"]["path"].endswith("base.json")


def test_one_case_drop_fails_the_run_although_every_threshold_passed(recorded, tiny_t5_model):
    data = _edit(recorded, lambda checks: checks[FLU.format(3)].update(score=checks[FLU.format(3)]["score"] + 0.3))
    old = data["checks"][FLU.format(3)]["score"]
    result = run(recorded, tiny_t5_model)
    result.assert_outcomes(passed=16)
    assert result.ret == 1
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if "nlgeval baseline: " in line and line.startswith("="))
    assert lines[start + 1].startswith(
        f"REGRESSION   {FLU.format(3)}: {old:.4f} -> {old - 0.3:.4f} (-0.3000, tolerance 0.0500)"
    )
    result.stdout.fnmatch_lines(["*FAILED: 1 regression (1 check, 0 suites)*"])


def test_whole_dimension_drop_is_a_suite_regression(recorded, tiny_t5_model):
    def lift(checks):
        for i in range(8):
            checks[COH.format(i)]["score"] += 0.03  # below the 0.05 check tolerance, above the 0.02 suite one

    _edit(recorded, lift)
    result = run(recorded, tiny_t5_model, "--nlgeval-json", "results.json", "--nlgeval-baseline-markdown", "summary.md")
    result.assert_outcomes(passed=16)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "REGRESSION   summarization/coherence (suite, 8 cases): mean * -> *, change -0.0300, "
            "95% interval ?-0.0300, -0.0300?, tolerance 0.0200",
            "*FAILED: 1 regression (0 checks, 1 suite)*",
        ]
    )
    baseline = json.loads((recorded.path / "results.json").read_text())["baseline"]
    assert baseline["status"] == "regression" and baseline["counts"]["suite_regressions"] == 1
    assert "| `summarization/coherence` | 8 |" in (recorded.path / "summary.md").read_text()


def test_improvements_new_and_removed_checks(recorded, tiny_t5_model):
    _edit(
        recorded,
        lambda checks: [checks[FLU.format(i)].update(score=checks[FLU.format(i)]["score"] - 0.2) for i in range(8)],
    )
    recorded.makepyfile(
        test_more='''
        from pytest_nlgeval import assert_dimension
        def test_new():
            assert_dimension("A brand new check.", "fluency") > 0.0
    '''
    )
    result = run(recorded, tiny_t5_model, "-k", "not coherence or coherence and not 7")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "improved     summarization/fluency (suite, 8 cases)*",
            f"improved     {lit(FLU.format(0))}: *",
            "new          test_more.py::test_new::fluency::0: * (no baseline entry; passes)",
            f"removed      {lit(COH.format(7))}: was * (did not run; entry kept)",
            "*passed: no regression (15 compared, 7 unchanged, 9 improved, 1 new, 1 removed)*",
        ]
    )
    strict = run(recorded, tiny_t5_model, "--nlgeval-baseline-new-checks", "fail")
    assert strict.ret == 1
    strict.stdout.fnmatch_lines(["NEW (fails)  test_more.py::test_new::fluency::0: * has no baseline entry"])


def test_update_records_only_what_ran(recorded, tiny_t5_model):
    before = json.loads((recorded.path / "base.json").read_text())
    _edit(recorded, lambda checks: [checks[k].update(score=0.123) for k in checks])
    result = run(recorded, tiny_t5_model, "--nlgeval-baseline-update", "-k", "fluency")
    assert result.ret == 0
    result.stdout.fnmatch_lines(["*base.json: 0 added, 8 changed, 0 unchanged, 8 kept (did not run)"])
    after = json.loads((recorded.path / "base.json").read_text())
    assert len(after["checks"]) == 16
    assert all(after["checks"][FLU.format(i)] == before["checks"][FLU.format(i)] for i in range(8))
    assert all(after["checks"][COH.format(i)]["score"] == 0.123 for i in range(8))


def test_interrupted_session_does_not_update(recorded, tiny_t5_model):
    before = (recorded.path / "base.json").read_text()
    recorded.makepyfile(
        test_zstop='''
        import pytest
        from pytest_nlgeval import assert_dimension
        def test_stop():
            assert_dimension("Stop here.", "fluency") > 0.0
            pytest.exit("stopping the session")
    '''
    )
    result = run(recorded, tiny_t5_model, "--nlgeval-baseline-update")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*base.json not updated: the session was interrupted"])
    assert (recorded.path / "base.json").read_text() == before


def test_other_evaluator_is_refused_unless_allowed(recorded, tiny_t5_model):
    result = recorded.runpytest(
        "-p",
        "no:cacheprovider",
        f"--nlgeval-model={tiny_t5_model}",
        "--nlgeval-precision",
        "int8",
        "--nlgeval-baseline",
        "base.json",
    )
    result.assert_outcomes(passed=16)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*= nlgeval baseline: FAILED =*",
            "refusing to compare scores made by different evaluators (16 checks)*differs in *precision: fp32 -> int8*",
        ]
    )
    allowed = recorded.runpytest(
        "-p",
        "no:cacheprovider",
        f"--nlgeval-model={tiny_t5_model}",
        "--nlgeval-precision",
        "int8",
        "--nlgeval-baseline",
        "base.json",
        "--nlgeval-baseline-allow-evaluator-change",
        "--nlgeval-json",
        "results.json",
    )
    out = allowed.stdout.str()
    assert "evaluator changed (16 checks)" in out and "precision: fp32 -> int8" in out
    allowed.stdout.fnmatch_lines(
        [
            "cross-evaluator drift summarization/coherence: * (mean |difference| over 8 cases "
            "with unchanged inputs); tolerances widened by it"
        ]
    )
    change = json.loads((recorded.path / "results.json").read_text())["baseline"]["evaluator_change"]
    assert set(change["drift"]) == {"summarization/coherence", "summarization/fluency"}
    assert all(d["cases"] == 8 for d in change["drift"].values())
    # Same texts, fp32 -> int8 of the same weights: within the widened tolerances.
    assert allowed.ret == 0 and "passed: no regression (16 compared, 16 unchanged, 0 improved)" in out


def test_corrupted_or_missing_baseline_is_an_error_never_a_pass(recorded, tiny_t5_model):
    path = recorded.path / "base.json"
    text = path.read_text()
    path.write_text(text[: len(text) // 3])
    result = run(recorded, tiny_t5_model)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    line = text[: len(text) // 3].count("\n") + 1
    result.stderr.fnmatch_lines([f"*invalid baseline file *base.json, line {line}: not valid JSON*cannot compare*"])
    assert "passed" not in result.stdout.str() and "collected" not in result.stdout.str()  # nothing ran

    lines = text.splitlines(keepends=True)
    number = next(i for i, line in enumerate(lines) if '"score"' in line)
    lines[number] = lines[number].split(":")[0] + ': "high",\n'
    path.write_text("".join(lines))
    result = run(recorded, tiny_t5_model)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*base.json, line {number + 1}: entry * score must be a finite number, got 'high'*"])
    update = run(recorded, tiny_t5_model, "--nlgeval-baseline-update")
    assert update.ret == pytest.ExitCode.USAGE_ERROR and "refusing to overwrite it" in update.stderr.str()

    path.unlink()
    result = run(recorded, tiny_t5_model)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*base.json does not exist; record one with *--nlgeval-baseline-update*"])


def test_xdist_only_the_controller_writes(pytester, tiny_t5_model):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_suite=SUITE)
    # Log every baseline write with the role of the process that made it (xdist workers have workerinput).
    pytester.makeconftest('''
        import importlib
        import os

        # through sys.modules, as the plugin imports it: an earlier in-process run may have left a stale
        # `store` attribute on the package after pytester took the module out of sys.modules
        store = importlib.import_module("pytest_nlgeval.baseline.store")

        _real = store.write_baseline
        _role = []

        def _logged(baseline, path):
            with open(os.path.join(os.path.dirname(path), "writes.log"), "a") as fh:
                fh.write(_role[-1] + "\\n")
            _real(baseline, path)

        def pytest_configure(config):
            _role.append(config.workerinput["workerid"] if hasattr(config, "workerinput") else "controller")
            store.write_baseline = _logged

        def pytest_unconfigure(config):
            store.write_baseline = _real
    ''')
    result = run(pytester, tiny_t5_model, "-n", "2", "--nlgeval-baseline-update")
    result.assert_outcomes(passed=16)
    assert (pytester.path / "writes.log").read_text() == "controller\n"
    assert len(json.loads((pytester.path / "base.json").read_text())["checks"]) == 16
    _edit(pytester, lambda checks: checks[COH.format(5)].update(score=checks[COH.format(5)]["score"] + 0.2))
    result = run(pytester, tiny_t5_model, "-n", "2")
    result.assert_outcomes(passed=16)
    assert result.ret == 1
    result.stdout.fnmatch_lines([f"REGRESSION   {lit(COH.format(5))}: *"])
    assert (pytester.path / "writes.log").read_text() == "controller\n"


def test_no_results_from_the_core_is_not_a_silent_pass(recorded, tiny_t5_model):
    # Simulate a core that never delivers its results (its session object is gone before the session ends).
    recorded.makeconftest('''
        import pytest

        @pytest.hookimpl(trylast=True)
        def pytest_configure(config):
            config.pluginmanager.unregister(name="nlgeval-session")
    ''')
    recorded.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = run(recorded, tiny_t5_model, "test_plain.py")
    result.assert_outcomes(passed=1)
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*no nlgeval results reached the baseline comparison*"])


METRIC_SUITE = '''
import pytest
from pytest_nlgeval import assert_score

@pytest.mark.parametrize("i", range(6))
def test_len(i):
    assert assert_score(float(i + 1), "length") > 0
'''


def test_keys_do_not_depend_on_how_pytest_was_invoked(pytester, monkeypatch):
    # The project and its baseline in a sibling folder; pytest runs from the project.
    proj = pytester.mkdir("proj")
    (proj / "pytest.ini").write_text("[pytest]\n")
    (proj / "test_a.py").write_text(METRIC_SUITE)
    pytester.mkdir("bl")
    monkeypatch.chdir(proj)
    # "--opt=value": the rootdir is the project, keys are test_a.py::...
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--nlgeval-baseline=../bl/b.json", "--nlgeval-baseline-update"
    )
    assert result.ret == 0, result.stdout.str()
    data = json.loads((pytester.path / "bl" / "b.json").read_text())
    assert data["root"] == "../proj"
    assert sorted(data["checks"])[0] == "test_a.py::test_len[0]::length::0"
    # "--opt value": the existing path takes part in rootdir detection, pytest's node ids become proj/test_a.py::...
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--nlgeval-baseline", "../bl/b.json", "--nlgeval-json=../r.json"
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["rootdir: " + lit(str(pytester.path)), "*passed: no regression (6 compared, 6 unchanged, 0 improved)*"]
    )
    results = json.loads((pytester.path / "r.json").read_text())
    assert results["checks"][0]["key"] == "proj/test_a.py::test_len[0]::length::0"  # pytest's own node id
    assert results["baseline"]["counts"]["unchanged"] == 6
    # Recording that way keeps the keys too.
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "--nlgeval-baseline", "../bl/b.json", "--nlgeval-baseline-update"
    )
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*b.json: 0 added, 0 changed, 6 unchanged"])
    assert json.loads((pytester.path / "bl" / "b.json").read_text()) == data


def test_a_baseline_whose_keys_match_nothing_fails(pytester):
    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_a=METRIC_SUITE)
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-baseline=b.json", "--nlgeval-baseline-update")
    assert result.ret == 0, result.stdout.str()
    # A baseline without a recorded root (an older file) whose keys were made under another rootdir: the folder
    # the two sides differ by at the front is found, and the comparison runs.
    data = json.loads((pytester.path / "b.json").read_text())
    del data["root"]
    prefixed = {"proj/" + key: {**entry, "nodeid": "proj/" + entry["nodeid"]} for key, entry in data["checks"].items()}
    (pytester.path / "b.json").write_text(json.dumps({**data, "checks": prefixed}, indent=2, sort_keys=True))
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-baseline=b.json")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(["*passed: no regression (6 compared, 6 unchanged, 0 improved)*"])
    # A baseline of other tests: refused, naming the test files on each side, without blaming the rootdir.
    other = {
        key.replace("test_a.py", "test_old.py"): {
            **entry,
            "nodeid": entry["nodeid"].replace("test_a.py", "test_old.py"),
        }
        for key, entry in data["checks"].items()
    }
    (pytester.path / "b.json").write_text(json.dumps({**data, "checks": other}, indent=2, sort_keys=True))
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-baseline=b.json")
    result.assert_outcomes(passed=6)
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*= nlgeval baseline: FAILED =*",
            "refusing to compare: only 0 of the 6 checks of this run have an entry in the baseline * (6 entries). "
            "This run's test files (test_a.py) are not the baseline's (test_old.py), matched as they are, relative "
            "to the folder the baseline records as its root, and with a leading folder added or dropped. If the "
            "tests were renamed or moved, re-record the baseline with --nlgeval-baseline-update; otherwise pass "
            "the baseline of this suite",
        ]
    )
    assert "rootdir" not in result.stdout.str().split("nlgeval baseline: FAILED", 1)[1]
    # Running none of the recorded checks compares nothing either.
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-baseline=b.json", "test_plain.py")
    assert result.ret == 1
    result.stdout.fnmatch_lines(["*no nlgeval check ran, so none of the 6 entries*"])


def test_a_baseline_anywhere_on_disk_is_compared(pytester, monkeypatch):
    """Absolute, relative to the current folder, relative to the rootdir from a sub-folder, and a baseline
    that was moved (or downloaded) after recording, whose recorded root no longer points at the tests."""
    proj = pytester.mkdir("proj")
    (proj / "pytest.ini").write_text("[pytest]\n")
    (proj / "tests").mkdir()
    (proj / "tests" / "test_a.py").write_text(METRIC_SUITE)
    outside = pytester.mkdir("artifacts")
    monkeypatch.chdir(proj)
    absolute = str(outside / "b.json")
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "tests", "--nlgeval-baseline", absolute, "--nlgeval-baseline-update"
    )
    assert result.ret == 0, result.stdout.str()
    compared = "*passed: no regression (6 compared, 6 unchanged, 0 improved)*"
    for args in (
        ["tests", "--nlgeval-baseline", absolute],
        ["tests", f"--nlgeval-baseline={absolute}"],
        ["tests", "--nlgeval-baseline", "../artifacts/b.json"],
    ):
        result = pytester.runpytest("-p", "no:cacheprovider", *args)
        assert result.ret == 0, (args, result.stdout.str())
        result.stdout.fnmatch_lines([compared])
    # from a sub-folder, a path relative to the rootdir
    (proj / "tests" / "b.json").write_text((outside / "b.json").read_text())
    monkeypatch.chdir(proj / "tests")
    result = pytester.runpytest("-p", "no:cacheprovider", ".", "--nlgeval-baseline=tests/b.json")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([compared])
    # moved after recording into a deeper folder: its root ("../proj") now names a folder that does not hold the
    # tests, or none at all
    moved = pytester.mkdir("downloads") / "main" / "b.json"
    moved.parent.mkdir()
    moved.write_text((outside / "b.json").read_text())
    (pytester.path / "downloads" / "proj").mkdir()  # where "../proj" now points: a folder, not the tests
    monkeypatch.chdir(proj)
    result = pytester.runpytest("-p", "no:cacheprovider", "tests", f"--nlgeval-baseline={moved}")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines([compared])
    # a file that is nowhere names where it was looked for
    result = pytester.runpytest("-p", "no:cacheprovider", "tests", "--nlgeval-baseline=nowhere/b.json")
    assert result.ret == 4
    result.stderr.fnmatch_lines([f"*baseline file {proj / 'nowhere' / 'b.json'} does not exist; record one with*"])


PAIR_SUITE = '''
import os
import time

import pytest
from pytest_nlgeval import assert_score


def _both_sessions_started():
    # Neither run records before both have read the baseline: the race of two CI jobs, made certain.
    folder = os.environ["NLGEVAL_TEST_BARRIER"]
    deadline = time.monotonic() + 120
    while not all(os.path.exists(os.path.join(folder, f"started-{k}")) for k in ("first", "second")):
        assert time.monotonic() < deadline, "the other session never started"
        time.sleep(0.05)


@pytest.mark.parametrize("i", range(3))
def test_first(i):
    _both_sessions_started()
    assert assert_score(float(i + 1), "length") > 0


@pytest.mark.parametrize("i", range(3))
def test_second(i):
    _both_sessions_started()
    assert assert_score(float(i + 10), "length") > 0
'''

PAIR_CONFTEST = '''
import os


def pytest_sessionstart(session):
    if not hasattr(session.config, "workerinput"):  # the controller, after the baseline was read
        name = os.environ["NLGEVAL_TEST_RUN"]
        open(os.path.join(os.environ["NLGEVAL_TEST_BARRIER"], f"started-{name}"), "w").close()
'''


def test_concurrent_updates_of_one_baseline_keep_both_runs_entries(pytester):
    import os
    import subprocess
    import sys

    pytester.makeini("[pytest]\n")
    pytester.makepyfile(test_pair=PAIR_SUITE)
    pytester.makeconftest(PAIR_CONFTEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
    env["NLGEVAL_TEST_BARRIER"] = str(pytester.path)
    runs = {}
    for name in ("first", "second"):
        runs[name] = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:cacheprovider",
                "-n",
                "2",
                "--nlgeval-baseline=base.json",
                "--nlgeval-baseline-update",
                "-k",
                name,
            ],
            cwd=pytester.path,
            env={**env, "NLGEVAL_TEST_RUN": name},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
    outputs = {name: run.communicate(timeout=300)[0] for name, run in runs.items()}
    for name, run in runs.items():
        assert run.returncode == 0, outputs[name]
        assert "nlgeval baseline updated" in outputs[name], outputs[name]
    checks = json.loads((pytester.path / "base.json").read_text())["checks"]
    assert sorted(checks) == sorted(
        [f"test_pair.py::test_first[{i}]::length::0" for i in range(3)]
        + [f"test_pair.py::test_second[{i}]::length::0" for i in range(3)]
    )
    assert not (pytester.path / "base.json.lock").exists()
