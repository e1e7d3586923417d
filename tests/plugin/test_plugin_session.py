"""Session-level behaviour: score cache across runs, xdist merging, damaged cache, options, laziness."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

# In-process pytester runs unload the modules they imported, and C extensions (numpy, onnxruntime,
# tokenizers) cannot be loaded twice in one process: load them once, before any pytester snapshot.
import nlgeval_runtime.boolqa  # noqa: F401,E402
import onnxruntime  # noqa: F401,E402

SUITE = '''
    import pytest
    from pytest_nlgeval import assert_dimension, assert_dimensions

    DOC = "Officials said the bridge would reopen next week after repairs. Traffic will be diverted."
    OUTS = ["The bridge reopens next week.", "Repairs are finished. Traffic flows.", "The bridge stays shut."]

    @pytest.mark.parametrize("i", range(3))
    def test_case(i):
        assert_dimension(OUTS[i], "consistency", source=DOC) > 0.0
        assert_dimension(OUTS[i], "fluency") > 0.0

    def test_batch():
        assert_dimensions(OUTS, "coherence", source=DOC).mean() > 0.0

    def test_dialogue():
        assert_dimension("Next week.", "overall", task="dialogue",
                         context=["is the bridge open?"], fact="the bridge reopens next week") > 0.0
'''


@pytest.fixture(autouse=True)
def _own_rootdir(pytester):
    pytester.makefile(".ini", pytest="[pytest]\n")  # node ids relative to the test folder


def _results(pytester, name="results.json"):
    return json.loads((pytester.path / name).read_text())


def test_second_run_is_served_by_the_cache_without_a_session(pytester, tiny_t5_model):
    pytester.makepyfile(test_suite=SUITE)
    args = ["-p", "no:cacheprovider", f"--nlgeval-model={tiny_t5_model}", "--nlgeval-json", "results.json"]
    pytester.runpytest(*args).assert_outcomes(passed=5)
    cold = _results(pytester)
    assert cold["scoring"]["sessions"] == 1 and cold["scoring"]["scored"] > 0
    pytester.runpytest(*args).assert_outcomes(passed=5)
    warm = _results(pytester)
    assert warm["scoring"] == {"scored": 0, "cached": cold["scoring"]["scored"], "sessions": 0}
    assert [c["score"] for c in warm["checks"]] == [c["score"] for c in cold["checks"]]
    assert warm["evaluators"] == cold["evaluators"]
    assert (pytester.path / ".nlgeval-cache" / "scores.sqlite3").is_file()
    # bypassing the cache scores everything again
    pytester.runpytest(*args, "--nlgeval-no-cache").assert_outcomes(passed=5)
    assert _results(pytester)["scoring"]["sessions"] == 1
    # a different precision is a different evaluator: nothing is reused across fingerprints
    pytester.runpytest(*args, "--nlgeval-precision", "int8").assert_outcomes(passed=5)
    int8 = _results(pytester)
    assert int8["scoring"]["cached"] == 0 and set(int8["evaluators"]) != set(cold["evaluators"])
    assert next(iter(int8["evaluators"].values()))["precision"] == "int8"


def test_damaged_cache_is_set_aside_and_rebuilt(pytester, tiny_t5_model):
    pytester.makepyfile(test_suite=SUITE)
    cache_dir = pytester.path / "scache"
    args = [
        "-p",
        "no:cacheprovider",
        f"--nlgeval-model={tiny_t5_model}",
        "--nlgeval-json",
        "results.json",
        f"--nlgeval-cache-dir={cache_dir}",
        "-W",
        "default",
    ]
    pytester.runpytest(*args).assert_outcomes(passed=5)
    cold = _results(pytester)
    (cache_dir / "scores.sqlite3").write_bytes(b"\x00garbage" * 4096)
    result = pytester.runpytest(*args)
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*CacheWarning: the nlgeval score cache * is damaged*moved it to*"])
    again = _results(pytester)
    assert again["scoring"]["cached"] == 0 and again["scoring"]["scored"] == cold["scoring"]["scored"]
    assert [c["score"] for c in again["checks"]] == [c["score"] for c in cold["checks"]]
    assert len(list(cache_dir.glob("scores.sqlite3.corrupt-*"))) == 1
    pytester.runpytest(*args).assert_outcomes(passed=5)
    assert _results(pytester)["scoring"]["sessions"] == 0  # the rebuilt cache serves the next run


def test_xdist_workers_merge_into_one_results_file_and_share_the_cache(pytester, tiny_t5_model):
    pytester.makepyfile(test_suite=SUITE)
    model = f"--nlgeval-model={tiny_t5_model}"
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", model, "-n", "2", "--nlgeval-json", "xdist.json")
    result.assert_outcomes(passed=5)
    result.stdout.fnmatch_lines(["*= nlgeval =*", "summarization*dimension*consistency*3*3*0*"])
    pytester.runpytest(
        "-p", "no:cacheprovider", model, "--nlgeval-no-cache", "--nlgeval-json", "single.json"
    ).assert_outcomes(passed=5)
    single, merged = _results(pytester, "single.json"), _results(pytester, "xdist.json")
    tests = {"passed": 5, "failed": 0, "xfailed": 0, "xpassed": 0, "skipped": 0, "error": 0}
    assert (
        merged["summary"]
        == single["summary"]
        == {
            "checks": 8,
            "passed": 8,
            "failed": 0,
            "xfailed": 0,
            "xpassed": 0,
            "tests": tests,
        }
    )
    assert sorted(c["key"] for c in merged["checks"]) == sorted(c["key"] for c in single["checks"])
    scores = {c["key"]: c["score"] for c in single["checks"]}
    assert all(c["score"] == pytest.approx(scores[c["key"]], abs=1e-6) for c in merged["checks"])
    assert merged["scoring"]["sessions"] == 2  # one model per worker
    assert merged["evaluators"] == single["evaluators"]
    assert not list(pytester.path.glob(".nlgeval-results-*"))  # the atomic write left no temp file
    assert (pytester.path / "xdist.json").stat().st_mode & 0o044  # readable like any file, not 0600
    # both workers wrote into one cache: a later run finds every score there
    pytester.runpytest("-p", "no:cacheprovider", model, "--nlgeval-json", "warm.json").assert_outcomes(passed=5)
    warm = _results(pytester, "warm.json")
    assert warm["scoring"]["sessions"] == 0 and warm["scoring"]["scored"] == 0


def test_ini_keys_and_env_var(pytester, tiny_t5_model, monkeypatch):
    pytester.makefile(
        ".ini", pytest="[pytest]\nnlgeval_json = from-ini.json\nnlgeval_no_cache = true\nnlgeval_device = cpu\n"
    )
    pytester.makepyfile(test_suite=SUITE)
    monkeypatch.setenv("NLGEVAL_MODEL", str(tiny_t5_model))
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=5)
    data = _results(pytester, "from-ini.json")
    assert data["scoring"]["sessions"] == 1 and not (pytester.path / ".nlgeval-cache").exists()


@pytest.mark.parametrize(
    "option, message",
    [
        ("--nlgeval-device=tpu", "--nlgeval-device / nlgeval_device must be one of auto, cpu, cuda, got 'tpu'"),
        ("--nlgeval-precision=bf16", "must be one of auto, fp32, fp16, int8, got 'bf16'"),
        ("--nlgeval-batch-size=0", "must be a positive integer, got 0"),
    ],
)
def test_bad_options_are_usage_errors(pytester, option, message):
    pytester.makepyfile("def test_x(): pass")
    result = pytester.runpytest("-p", "no:cacheprovider", option)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{message}*"])


def test_missing_model_is_a_clear_error(pytester, tmp_path):
    pytester.makepyfile('''
        from pytest_nlgeval import assert_dimension
        def test_x():
            assert_dimension("Text.", "fluency") > 0.5
    ''')
    result = pytester.runpytest("-p", "no:cacheprovider", f"--nlgeval-model={tmp_path / 'nope'}")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*ModelNotFoundError*nope*"])


def test_a_suite_that_never_uses_nlgeval_loads_nothing(tmp_path):
    (tmp_path / "test_plain.py").write_text(
        textwrap.dedent('''
        import sys

        def test_plain():
            assert 1 + 1 == 2

        def test_nothing_heavy_was_imported():
            heavy = [m for m in ("onnxruntime", "numpy", "tokenizers", "nlgeval_runtime",
                                 "pytest_nlgeval.core.evaluator", "torch", "sqlite3") if m in sys.modules]
            assert heavy == []
            assert "pytest_nlgeval.plugin" in sys.modules  # the plugin itself is active
    ''')
    )
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-p",
            "no:anyio",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 passed" in proc.stdout and "nlgeval" not in proc.stdout


def test_importing_the_package_is_lazy():
    code = (
        "import sys, pytest_nlgeval, pytest_nlgeval.plugin; "
        "print(sorted(m for m in ('onnxruntime', 'numpy', 'tokenizers', 'sqlite3', 'pytest_nlgeval.core.score') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_unconfigure_unregisters_what_configure_registered(pytester):
    config = pytester.parseconfigure("-p", "no:cacheprovider")
    assert config.pluginmanager.get_plugin("nlgeval-session") is not None
    config._ensure_unconfigure()
    assert config.pluginmanager.get_plugin("nlgeval-session") is None
    assert config.pluginmanager.get_plugin("nlgeval-xdist") is None
