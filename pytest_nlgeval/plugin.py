"""The pytest plugin (entry point ``pytest11: nlgeval``).

Options (each has an ini key of the same name with ``_`` for ``-``, e.g. ``nlgeval_model``)::

    --nlgeval-model PATH_OR_ID   model folder or Hugging Face id (env NLGEVAL_MODEL; default: embedded)
    --nlgeval-device auto|cpu|cuda
    --nlgeval-precision auto|fp32|fp16|int8
    --nlgeval-batch-size N       most inputs per ONNX call
    --nlgeval-source-windows auto|off
                                 auto: a document longer than the model's maximum is scored in overlapping
                                 sentence windows (consistency, groundedness); off: its tail is cut (UniEval)
    --nlgeval-fact-checker PATH  a claim-support folder (MiniCheck, HHEM-2.1-Open) that reads the claims of the
                                 fact dimensions (docs/checkers.md); the other dimensions keep the model's
    --nlgeval-cache-dir DIR      score cache folder (default .nlgeval-cache under the rootdir)
    --nlgeval-no-cache           score everything, read and write no cache
    --nlgeval-json PATH          write the results file (docs/results-schema.md)
    --nlgeval-trajectory-lm REF  causal LM of assert_trajectory: gguf:PATH (llm extra), a causal-LM folder, or
                                 default (default: the LM the bank was fitted with)
    --nlgeval-judge-lm ID        LLM of assert_judged (dspy.LM id, e.g. openai/MODEL; env NLGEVAL_JUDGE_LM)
    --nlgeval-judge-api-base URL its OpenAI-compatible server (env NLGEVAL_JUDGE_API_BASE); further judge
                                 settings: --nlgeval-judge-{temperature,samples,max-tokens,timeout,logprobs,
                                 on-parse-failure} (docs/judges.md)

Fixture ``nlgeval`` (session): the :class:`~pytest_nlgeval.core.evaluator.Evaluator`; fixture ``judged``
(session): the criterion judge (:class:`~pytest_nlgeval.judges.criterion.CriterionJudge`). Marker
``@pytest.mark.nlgeval(task=..., model=..., tolerance=...)``: the default task and model of a test's
assertions, and the tolerance recorded with its checks for the baseline comparison.

Importing this module costs nothing beyond pytest: the evaluator, the runtime and the model are loaded
on the first assertion.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from pytest_nlgeval import hookspecs

RESULTS_SCHEMA = "pytest-nlgeval/results"
RESULTS_VERSION = 1
MARKER_KEYS = ("task", "model", "tolerance", "refused")
_WORKEROUTPUT_KEY = "nlgeval"

results_key = pytest.StashKey[dict]()
_state_key = pytest.StashKey["NLGEvalSession"]()

_OPTIONS = [
    # (name, ini type, help)
    (
        "model",
        "string",
        "model folder or Hugging Face id of the evaluator (env NLGEVAL_MODEL; default: the embedded model)",
    ),
    ("device", "string", "device of the evaluator: auto, cpu or cuda (default auto)"),
    ("precision", "string", "precision of the evaluator graph: auto, fp32, fp16 or int8 (default auto)"),
    ("batch_size", "string", "most inputs per ONNX Runtime call"),
    (
        "source_windows",
        "string",
        "auto: score a document longer than the model's maximum in overlapping sentence "
        "windows (consistency, groundedness); off: cut its tail as UniEval does "
        "(default auto)",
    ),
    (
        "max_windows",
        "string",
        "most source windows one claim may be scored against (a longer source is an error "
        "naming the cap; default: no cap)",
    ),
    (
        "fact_checker",
        "string",
        "claim-support folder (nlgeval export of MiniCheck or HHEM-2.1-Open, docs/checkers.md) that reads the "
        "claims of the fact dimensions; every other dimension keeps the model's (default: none)",
    ),
    ("cache_dir", "string", "folder of the score cache (default .nlgeval-cache under the rootdir)"),
    ("no_cache", "bool", "read and write no score cache"),
    ("json", "string", "write the results of the session (checks, scores, evaluators) to this JSON file"),
    (
        "trajectory_lm",
        "string",
        "causal LM of assert_trajectory: gguf:PATH (a GGUF file; pytest-nlgeval[llm]), a "
        "causal-LM folder, or default; it must be the LM the bank was fitted with (default: "
        "the LM the bank names)",
    ),
    (
        "judge_lm",
        "string",
        "LLM of assert_judged, a dspy.LM / LiteLLM model id such as openai/MODEL (env NLGEVAL_JUDGE_LM)",
    ),
    (
        "judge_api_base",
        "string",
        "base URL of the judge's OpenAI-compatible server, e.g. http://127.0.0.1:8080/v1 (env NLGEVAL_JUDGE_API_BASE)",
    ),
    ("judge_temperature", "string", "sampling temperature of the judge (default 0; env NLGEVAL_JUDGE_TEMPERATURE)"),
    (
        "judge_samples",
        "string",
        "answers per judgment, averaged; more than 1 needs a temperature above 0 "
        "(default 1; env NLGEVAL_JUDGE_SAMPLES)",
    ),
    ("judge_max_tokens", "string", "most tokens of one judge answer (default 256; env NLGEVAL_JUDGE_MAX_TOKENS)"),
    (
        "judge_timeout",
        "string",
        "seconds one judge request may take, sent once (default 60; env NLGEVAL_JUDGE_TIMEOUT)",
    ),
    (
        "judge_logprobs",
        "string",
        "on: weight the score by the log-probabilities of the scale's tokens where the "
        "server returns them; off: use the written score (default on; env "
        "NLGEVAL_JUDGE_LOGPROBS)",
    ),
    (
        "judge_on_parse_failure",
        "string",
        "error: a judge answer with no score (asked twice) fails the test; skip: "
        "it skips the test (default error; env NLGEVAL_JUDGE_ON_PARSE_FAILURE)",
    ),
    (
        "judge_read",
        "string",
        "form: the judge writes 'Score: N' and a reason; scale: the score is read from the first two "
        "tokens' distribution over the scale; completion: from the one token after 'Score: ' on the "
        "server's completions endpoint (llama.cpp, vLLM), for base models that never fill the form "
        "(default form; env NLGEVAL_JUDGE_READ)",
    ),
]
#: options that an environment variable sets when the command line does not (before the ini file)
_ENV = {
    "model": "NLGEVAL_MODEL",
    **{name: "NLGEVAL_" + name.upper() for name, _, _ in _OPTIONS if name.startswith("judge_")},
}


def pytest_addhooks(pluginmanager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser) -> None:
    group = parser.getgroup("nlgeval", "quality tests of generated text (pytest-nlgeval)")
    for name, kind, help_text in _OPTIONS:
        flag = "--nlgeval-" + name.replace("_", "-")
        if kind == "bool":
            group.addoption(flag, action="store_true", default=None, dest=f"nlgeval_{name}", help=help_text)
        else:
            group.addoption(
                flag,
                action="store",
                default=None,
                dest=f"nlgeval_{name}",
                metavar=name.upper().replace("_", "-"),
                help=help_text,
            )
        parser.addini(f"nlgeval_{name}", help=help_text, type=kind, default=False if kind == "bool" else None)


def _option(config, name: str) -> tuple[Any, str]:
    """The value of an option and where it came from: ``"cli"``, ``"env"``, ``"ini"`` or ``"default"``."""
    value = config.getoption(f"nlgeval_{name}")
    if value is not None:
        return value, "cli"
    env = _ENV.get(name)
    if env and os.environ.get(env):
        return os.environ[env], "env"
    value = config.getini(f"nlgeval_{name}")
    return (value, "ini") if value not in ("", None) else (None, "default")


def _path(config, value: str, source: str) -> str:
    """Command-line paths are relative to the invocation directory, ini paths to the rootdir."""
    if os.path.isabs(value):
        return value
    base = config.rootpath if source == "ini" else config.invocation_params.dir
    return os.path.join(str(base), value)


def _options(config) -> dict[str, Any]:
    sourced = {name: _option(config, name) for name, _, _ in _OPTIONS}
    options = {name: value for name, (value, _) in sourced.items()}
    for name in ("batch_size", "max_windows"):
        if options[name] is None:
            continue
        try:
            options[name] = int(options[name])
            if options[name] < 1:
                raise ValueError
        except ValueError:
            raise pytest.UsageError(
                f"--nlgeval-{name.replace('_', '-')} / nlgeval_{name} must be a positive integer, got {options[name]!r}"
            ) from None
    for name in ("device", "precision", "source_windows"):
        if options[name] is None:
            continue
        # the runtime's choices, imported only when an option is set: a suite that never scores loads no runtime
        from nlgeval_runtime.session import DEVICES, PRECISIONS

        allowed = {"device": DEVICES, "precision": PRECISIONS, "source_windows": ("auto", "off")}[name]
        if options[name] not in allowed:
            raise pytest.UsageError(
                f"--nlgeval-{name.replace('_', '-')} / nlgeval_{name} must be one of {', '.join(allowed)}, "
                f"got {options[name]!r}"
            )
    if options["cache_dir"] is None:
        options["cache_dir"] = os.path.join(str(config.rootpath), ".nlgeval-cache")
    else:
        options["cache_dir"] = _path(config, options["cache_dir"], sourced["cache_dir"][1])
    if options["json"] is not None:
        from pytest_nlgeval.util.files import output_problem

        options["json"] = _path(config, options["json"], sourced["json"][1])
        problem = output_problem(options["json"])  # said now, not in a traceback after the tests ran
        if problem is not None:
            raise pytest.UsageError(f"--nlgeval-json / nlgeval_json: {problem}")
    if options["fact_checker"] is not None:
        options["fact_checker"] = _fact_checker(_path(config, options["fact_checker"], sourced["fact_checker"][1]))
    lm = options["trajectory_lm"]
    if lm is not None and (lm.startswith("gguf:") or lm.lower().endswith(".gguf")):
        # a GGUF file is a path like the others: command line to the invocation directory, ini to the rootdir
        bare = lm[len("gguf:") :] if lm.startswith("gguf:") else lm
        if not bare:
            raise pytest.UsageError(
                "--nlgeval-trajectory-lm / nlgeval_trajectory_lm: gguf: needs a file path, "
                "e.g. gguf:models/gemma-3-270m-q4_k_m.gguf"
            )
        options["trajectory_lm"] = "gguf:" + _path(config, bare, sourced["trajectory_lm"][1])
    options["cache"] = not options.pop("no_cache")
    if any(options[name] is not None for name in options if name.startswith("judge_")):
        from pytest_nlgeval.errors import NLGEvalError
        from pytest_nlgeval.judges.criterion import judge_options

        try:
            judge_options(options)
        except NLGEvalError as exc:
            raise pytest.UsageError(str(exc)) from None
    return options


def _fact_checker(path: str) -> str:
    """``path`` when it is a claim-support folder; a usage error naming it and what to do otherwise."""
    from nlgeval_runtime.errors import ModelFormatError
    from nlgeval_runtime.modelfolder import ModelFolder

    try:
        kind = ModelFolder.open(path).kind
    except ModelFormatError as exc:
        raise pytest.UsageError(f"--nlgeval-fact-checker / nlgeval_fact_checker: {exc}") from None
    if kind != "claim-support":
        raise pytest.UsageError(
            f"--nlgeval-fact-checker / nlgeval_fact_checker: {path!r} holds a {kind!r} model, not a fact checker; "
            "export one with `nlgeval export lytang/MiniCheck-Flan-T5-Large OUT` (docs/checkers.md)"
        )
    return path


def pytest_configure(config) -> None:
    config.addinivalue_line(
        "markers",
        "nlgeval(task=None, model=None, tolerance=None, refused='error'): default task and model of the nlgeval "
        "assertions in this test; tolerance recorded with its checks for baseline comparison; refused='skip' "
        "skips the test when the model cannot judge a dimension it asks for",
    )
    session = NLGEvalSession(config, _options(config))
    config.stash[_state_key] = session
    config.pluginmanager.register(session, "nlgeval-session")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistController(session), "nlgeval-xdist")


def pytest_unconfigure(config) -> None:
    """The mirror of :func:`pytest_configure`: unregister what it registered, then close the session."""
    for name in ("nlgeval-xdist", "nlgeval-session"):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin, name)
    session = config.stash.get(_state_key, None)
    if session is not None:
        session.close()


def get_results(config) -> dict | None:
    """The merged results of the session (controller only), once the session has finished."""
    return config.stash.get(results_key, None)


def _marker_options(item) -> dict[str, Any]:
    marker = item.get_closest_marker("nlgeval")
    if marker is None:
        return {}
    options = dict(marker.kwargs)
    if marker.args:
        if len(marker.args) > 1 or "task" in options:
            raise pytest.UsageError(f"{item.nodeid}: @pytest.mark.nlgeval takes one positional argument (the task)")
        options["task"] = marker.args[0]
    unknown = sorted(set(options) - set(MARKER_KEYS))
    if unknown:
        raise pytest.UsageError(
            f"{item.nodeid}: @pytest.mark.nlgeval got unknown argument(s) {unknown}; it takes {', '.join(MARKER_KEYS)}"
        )
    tolerance = options.get("tolerance")
    if tolerance is not None and (
        isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or tolerance < 0
    ):
        raise pytest.UsageError(f"{item.nodeid}: nlgeval(tolerance=...) must be a number >= 0, got {tolerance!r}")
    if options.get("refused", "error") not in ("error", "skip"):
        raise pytest.UsageError(
            f"{item.nodeid}: nlgeval(refused=...) must be 'error' or 'skip', got {options['refused']!r}"
        )
    return options


@pytest.fixture(scope="session")
def nlgeval(request):
    """The session's evaluator (:class:`pytest_nlgeval.core.evaluator.Evaluator`); its model loads on first use.

    def test_many(nlgeval):
        scores = nlgeval.score_batch(outputs, "fluency")
    """
    return request.config.stash[_state_key].run.evaluator()


@pytest.fixture(scope="session")
def judged(request):
    """The session's criterion judge (:class:`pytest_nlgeval.judges.criterion.CriterionJudge`, configured by
    ``--nlgeval-judge-lm`` and friends); calling it is ``assert_judged`` without the import.

        def test_answer(judged, bot):
            assert judged(bot("Where is my parcel?"), "The reply asks for the order number.") >= 4
    """
    from pytest_nlgeval.judges.session import run_judge

    return run_judge(request.config.stash[_state_key].run)


def pytest_assertrepr_compare(config, op, left, right):
    """Explain a failed ``assert score == x`` (threshold comparisons raise their own message)."""
    from_score = None
    for side in (left, right):
        if type(side).__name__ == "Score" and type(side).__module__ == "pytest_nlgeval.core.score":
            from_score = side
            break
    if from_score is None:
        return None
    other = right if from_score is left else left
    lines = [f"{from_score.label} = {float(from_score):.4f} {op} {other!r}"]
    lines += ["  " + line for line in from_score.explanation()]
    return lines


class _UncapturedStream:
    """Standard error as the terminal shows it, while pytest captures a test's output: each write suspends the
    capture (as live logging does), so a progress line reaches the terminal or the CI log."""

    def __init__(self, config) -> None:
        self.config = config

    def _capture(self):
        import contextlib

        capman = self.config.pluginmanager.getplugin("capturemanager")
        return capman.global_and_fixture_disabled() if capman is not None else contextlib.nullcontext()

    def write(self, text: str) -> int:
        import sys

        with self._capture():
            sys.stderr.write(text)
            sys.stderr.flush()
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        import sys

        with self._capture():
            return sys.stderr.isatty()


class NLGEvalSession:
    """Per-session state: the check recorder, the run, the results."""

    def __init__(self, config, options: dict[str, Any]) -> None:
        from pytest_nlgeval.core import checks, run

        self.config = config
        self.options = options
        self.is_worker = hasattr(config, "workerinput")
        if (config.getoption("verbose", 0) or 0) >= 0 and not self.is_worker:
            # a long batch draws its status line on the terminal, around pytest's output capture
            options = {**options, "progress": _UncapturedStream(config)}
        self.recorder = checks.CheckRecorder(on_record=self._on_record)
        self.run = run.Run(
            options,
            register_dimensions=self._register_dimensions,
            recorder=self.recorder,
            register_scorers=self._register_scorers,
        )
        self.worker_data: list[dict] = []
        #: workers that went down without their results: ``{"worker", "error", "rebuilt"}`` each
        self.workers_lost: list[dict] = []
        self._sent = 0  # on a worker: the checks already attached to a test report
        self.write_error: str | None = None  # the results file could not be written
        self.results_path: str | None = None
        #: pytest's verdict on each test that ran (TEST_OUTCOMES), read from its reports on the controller
        self.test_outcomes: dict[str, str] = {}
        # The state stays here, in config.stash; the assertions of the DSL (assert_dimension, ...) find it
        # through pytest_nlgeval.core.run, where this run is the current one while the session runs.
        run.install(self.run)

    def _register_dimensions(self, registry) -> None:
        self.config.hook.pytest_nlgeval_register_dimensions(registry=registry)

    def _register_scorers(self, scorers) -> None:
        self.config.hook.pytest_nlgeval_register_scorers(scorers=scorers)

    def _on_record(self, check) -> None:
        self.config.hook.pytest_nlgeval_check_recorded(check=check)

    def close(self) -> None:
        from pytest_nlgeval.core import run

        run.uninstall(self.run)
        self.run.close()

    # -- tests ---------------------------------------------------------------------------------------------
    def pytest_collection_modifyitems(self, items) -> None:
        for item in items:
            _marker_options(item)  # a wrong marker is a usage error before anything runs

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.recorder.start_test(
            item.nodeid, item, _marker_options(item), xfail=item.get_closest_marker("xfail") is not None
        )
        try:
            yield
        finally:
            self.recorder.end_test()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        """``@pytest.mark.nlgeval(refused="skip")``: a dimension the model cannot judge skips the test,
        with the reason and the checkpoint that can, instead of failing it."""
        outcome = yield
        excinfo = outcome.excinfo
        if excinfo is None:
            return
        if (
            type(excinfo[1]).__name__ == "JudgedParseError"
            and (self.options.get("judge_on_parse_failure") or "error") == "skip"
        ):
            outcome.force_exception(pytest.skip.Exception(str(excinfo[1]), _use_item_location=True))
            return
        if _marker_options(item).get("refused") != "skip":
            return
        from pytest_nlgeval.core.dimensions import DimensionNotServedError

        if isinstance(excinfo[1], DimensionNotServedError):
            outcome.force_exception(pytest.skip.Exception(str(excinfo[1]), _use_item_location=True))

    def pytest_runtest_logreport(self, report) -> None:
        """Note pytest's verdict on the test (with xdist, the controller sees every worker's reports)."""
        outcome = test_outcome(report)
        if outcome is not None:
            self.test_outcomes[report.nodeid] = outcome

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        """On an xdist worker, each test report also carries the checks recorded since the last one (an
        attribute the report's serialisation keeps, not a property written to JUnit XML): a worker that
        crashes never sends its results, and the controller rebuilds its checks from these."""
        outcome = yield
        if not self.is_worker or len(self.recorder.checks) <= self._sent:
            return
        import json

        fresh = self.recorder.checks[self._sent :]
        self._sent = len(self.recorder.checks)
        used = {c.evaluator for c in fresh if c.evaluator is not None}
        evaluators = {k: v for k, v in self.recorder.evaluators.items() if k in used}
        outcome.get_result().nlgeval_checks = json.dumps(
            {"checks": [c.to_dict() for c in fresh], "evaluators": evaluators}
        )

    # -- results -------------------------------------------------------------------------------------------
    def local_data(self) -> dict[str, Any]:
        stats = {"scored": 0, "cached": 0, "sessions": 0}
        for evaluator in self.run.evaluators:
            for key in stats:
                stats[key] += evaluator.stats[key]
        data = {
            "checks": [c.to_dict() for c in self.recorder.checks],
            "evaluators": dict(self.recorder.evaluators),
            "scoring": stats,
        }
        from pytest_nlgeval.judges.session import judge_report

        judges = judge_report(self.run)
        if judges is not None:
            data["judges"] = judges
        return data

    def pytest_sessionfinish(self, session, exitstatus) -> None:
        data = self.local_data()
        if self.is_worker:
            import json

            self.config.workeroutput[_WORKEROUTPUT_KEY] = json.dumps(data)
            return
        results = build_results([data, *self.worker_data], self.test_outcomes)
        if self.workers_lost:
            results["workers_lost"] = list(self.workers_lost)
        self.config.hook.pytest_nlgeval_results_ready(config=self.config, results=results)
        self.config.stash[results_key] = results
        path = self.options.get("json")
        if path:
            try:
                write_results(results, path)
                self.results_path = path
            except OSError as exc:  # the disk filled up, or the folder went away during the run
                self.write_error = f"--nlgeval-json: cannot write {path!r}: {exc.strerror or exc}"
                if session.exitstatus == pytest.ExitCode.OK:
                    session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter, exitstatus, config) -> None:
        results = config.stash.get(results_key, None)
        if self.write_error is not None:
            terminalreporter.write_line(f"nlgeval: {self.write_error}", red=True, bold=True)
        for lost in self.workers_lost:
            terminalreporter.write_line(
                f"nlgeval: xdist worker {lost['worker']} went down without its results ({lost['error']}); "
                f"{lost['rebuilt']} of its checks were rebuilt from its test reports, and the checks of the test "
                "it was running when it went down are missing",
                yellow=True,
            )
        if not results or not (results["checks"] or results.get("judges")):
            return
        write_summary(terminalreporter, results, self.results_path)


class _XdistController:
    """Collects the workers' checks on the controller (registered only when pytest-xdist is active)."""

    def __init__(self, session: NLGEvalSession) -> None:
        self.session = session
        #: per worker, the checks its test reports carried (used only when it goes down without its results)
        self.reported: dict[str, list[dict]] = {}

    def pytest_runtest_logreport(self, report) -> None:
        raw = getattr(report, "nlgeval_checks", None)
        node = getattr(report, "node", None)
        if raw and node is not None:
            import json

            self.reported.setdefault(_worker_id(node), []).append(json.loads(raw))

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error) -> None:
        import json

        parts = self.reported.pop(_worker_id(node), [])
        raw = getattr(node, "workeroutput", {}).get(_WORKEROUTPUT_KEY)
        if raw:
            self.session.worker_data.append(json.loads(raw))
            return
        # a crashed worker: its checks as its test reports carried them
        checks = [c for part in parts for c in part["checks"]]
        evaluators = {k: v for part in parts for k, v in part["evaluators"].items()}
        self.session.worker_data.append({"checks": checks, "evaluators": evaluators})
        self.session.workers_lost.append(
            {
                "worker": _worker_id(node),
                "error": " ".join(str(error or "no results").split())[:200],
                "rebuilt": len(checks),
            }
        )


def _worker_id(node) -> str:
    gateway = getattr(node, "gateway", None)
    return str(getattr(gateway, "id", None) or id(node))


def test_outcome(report) -> str | None:
    """pytest's verdict on a test from one of its reports, as its summary line counts it: ``xfailed``,
    ``xpassed``, ``xpassed-strict`` (an xfail(strict=True) test that passed: pytest reports it failed),
    ``passed``, ``failed``, ``skipped`` or ``error`` (its setup failed); None for a report that does not decide
    it (teardown, a passed setup)."""
    if report.when != "call" and (report.when != "setup" or report.passed):
        return None
    if hasattr(report, "wasxfail"):
        return "xfailed" if report.skipped else "xpassed"
    if report.failed and isinstance(report.longrepr, str) and report.longrepr.startswith("[XPASS(strict)]"):
        return "xpassed-strict"
    if report.when == "setup" and report.failed:
        return "error"
    return str(report.outcome)


def count_tests(test_outcomes: dict[str, str]) -> dict[str, int]:
    """pytest's summary line over the tests that ran: ``failed`` includes the strict xpasses."""
    counts = {"passed": 0, "failed": 0, "xfailed": 0, "xpassed": 0, "skipped": 0, "error": 0}
    for outcome in test_outcomes.values():
        key = "failed" if outcome == "xpassed-strict" else outcome
        if key in counts:
            counts[key] += 1
    return counts


def build_results(parts: list[dict[str, Any]], test_outcomes: dict[str, str] | None = None) -> dict[str, Any]:
    """Merge per-process check data into the results dict of docs/results-schema.md; ``test_outcomes`` (pytest's
    verdict per node id) gives each check its ``outcome``."""
    import datetime
    import platform
    import sys

    from pytest_nlgeval.core.checks import check_outcome, count_outcomes, outcome_of

    checks: list[dict] = []
    evaluators: dict[str, dict] = {}
    scoring = {"scored": 0, "cached": 0, "sessions": 0}
    judges: dict[str, int] | None = None
    for part in parts:
        checks.extend(part["checks"])
        evaluators.update(part["evaluators"])
        for key in scoring:
            scoring[key] += part.get("scoring", {}).get(key, 0)
        if part.get("judges"):
            judges = judges or {}
            for key, value in part["judges"].items():
                judges[key] = judges.get(key, 0) + int(value)
    # Workers finish in any order; a stable sort by test keeps each test's checks in their own order.
    checks.sort(key=lambda c: c["nodeid"])
    for check in checks:
        # A failed check inside a test pytest reports xfailed is expected; a passed one inside an XPASS test is
        # counted as pytest counts the test (a failure under strict=True).
        test = (test_outcomes or {}).get(check["nodeid"])
        check["outcome"] = check_outcome(check["passed"], test) if test is not None else outcome_of(check)
    summary: dict[str, Any] = dict(count_outcomes(checks))
    if test_outcomes is not None:
        summary["tests"] = count_tests(test_outcomes)  # pytest's own line, over all the tests that ran
        # a comparison that passed inside a test that failed on something else (a plain assert after it, such as
        # the gate `assert not score.proven_wrong_claims`): the check passed, its test did not
        failing = {c["nodeid"] for c in checks if c["outcome"] != "passed"}
        elsewhere = sum(
            1
            for c in checks
            if c["outcome"] == "passed" and c["nodeid"] not in failing and test_outcomes.get(c["nodeid"]) == "failed"
        )
        if elsewhere:
            summary["passed_in_failed_tests"] = elsewhere
    results = {
        "schema": RESULTS_SCHEMA,
        "version": RESULTS_VERSION,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "packages": _package_versions(),
            "argv": sys.argv[1:],
        },
        "evaluators": evaluators,
        "checks": checks,
        "summary": summary,
        "scoring": scoring,
    }
    if judges is not None:
        results["judges"] = judges
    return results


def _package_versions() -> dict[str, str]:
    from importlib import metadata

    versions = {}
    for name in ("pytest-nlgeval", "nlgeval-runtime", "onnxruntime", "onnxruntime-gpu", "pytest", "numpy"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return versions


def write_results(results: dict[str, Any], path: str) -> None:
    """Write ``results`` as sorted JSON, atomically (a reader never sees half a file)."""
    import json

    from pytest_nlgeval.util.files import write_text_atomic

    write_text_atomic(path, json.dumps(results, indent=2, sort_keys=True, allow_nan=False) + "\n")


def write_summary(tr, results: dict[str, Any], results_path: str | None) -> None:
    """The terminal table: checks per task and dimension (or metric / trajectory field)."""
    from pytest_nlgeval.core.checks import count_outcomes

    groups: dict[tuple, list[dict]] = {}
    for check in results["checks"]:
        groups.setdefault((check["task"] or "-", check["kind"], check["name"]), []).append(check)
    tr.write_sep("=", "nlgeval")
    # passed / failed / xfailed / xpassed as pytest's summary line counts them (failed includes strict xpasses)
    header = (
        f"{'task':<15} {'kind':<10} {'name':<28} {'checks':>6} {'passed':>6} {'failed':>6} {'xfailed':>7} "
        f"{'xpassed':>7} {'mean':>8} {'min':>8}"
    )
    tr.write_line(header)
    for (task, kind, name), rows in sorted(groups.items()):
        scores = [r["score"] for r in rows if r["score"] is not None]
        counts = count_outcomes(rows)
        mean = f"{sum(scores) / len(scores):8.4f}" if scores else f"{'-':>8}"
        low = f"{min(scores):8.4f}" if scores else f"{'-':>8}"
        line = (
            f"{task[:15]:<15} {kind[:10]:<10} {name[:28]:<28} {len(rows):>6} {counts['passed']:>6} "
            f"{counts['failed']:>6} {counts['xfailed']:>7} {counts['xpassed']:>7} {mean} {low}"
        )
        tr.write_line(line, red=bool(counts["failed"]), green=not counts["failed"])
    totals = count_outcomes(results["checks"])
    said = [f"{totals[k]} {k}" for k in ("failed", "passed", "xfailed", "xpassed") if totals[k]]
    tr.write_line(
        f"checks: {', '.join(said) or 'none'} (each comparison's own result; an xfail test's checks as pytest "
        "counts it)"
    )
    elsewhere = results.get("summary", {}).get("passed_in_failed_tests", 0)
    if elsewhere:
        tr.write_line(
            f"{elsewhere} of the passed checks are in tests that failed on something else (an assert after the "
            "check, such as `assert not score.proven_wrong_claims`): pytest's own line counts those tests as failed"
        )
    for fid, fp in sorted(results["evaluators"].items()):
        if fp.get("kind") == "judge":
            criterion = " ".join(str(fp.get("criterion", "")).split())
            tr.write_line(
                f"judge {fid}: {fp.get('model')}, scale {'-'.join(map(str, fp.get('scale', [])))}, "
                f"criterion {criterion[:60]!r}"
            )
        else:
            tr.write_line(f"evaluator {fid}: {fp.get('model')} ({fp.get('provider')}, {fp.get('precision')})")
    scoring = results.get("scoring", {})
    tr.write_line(
        f"scored {scoring.get('scored', 0)} evaluator inputs, {scoring.get('cached', 0)} read from the score cache "
        "(earlier runs, or the same input met again in this run)"
    )
    judges = results.get("judges")
    if judges:
        tr.write_line(
            f"judged {judges.get('judged', 0)} outputs: {judges.get('calls', 0) + judges.get('cache_hits', 0)} "
            f"LLM calls ({judges.get('cache_hits', 0)} from cache), {judges.get('prompt_tokens', 0)} prompt + "
            f"{judges.get('completion_tokens', 0)} completion tokens; {judges.get('retries', 0)} answers "
            f"asked again, {judges.get('parse_failures', 0)} without a score (parse failures)"
        )
    if results_path:
        tr.write_line(f"results: {results_path}")
