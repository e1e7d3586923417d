"""Run state: the plugin's state lives in config.stash, the assertions find it through pytest_nlgeval.core.run,
scores are plain values that carry the recorder they were handed, and no other module keeps run state in a
global."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from pytest_nlgeval.core import run as run_module
from pytest_nlgeval.core.cache import CACHE_FILE
from pytest_nlgeval.core.checks import CheckRecorder
from pytest_nlgeval.core.run import Run
from pytest_nlgeval.core.evaluator import Evaluator
from pytest_nlgeval.core.score import Score
from paths import REPO as ROOT

PACKAGES = {
    "pytest_nlgeval": ROOT / "pytest_nlgeval",
    "nlgeval_runtime": ROOT / "runtime" / "nlgeval_runtime",
    "nlgeval_training": ROOT / "training" / "nlgeval_training",
}

# Module-level names that functions change, each with the reason it is not run state. The stack of installed
# runs is the one piece of run state; the others are memos of things no run can change (the same file, model or
# class whichever run asks) or registrations that, like pluggy's, belong to the process.
ALLOWED = {
    "pytest_nlgeval.core.run._runs": "the installed runs, documented in their module",
    "pytest_nlgeval.induction.assertions._LOADED": "memo: an artifact file loaded once per path and mtime",
    "pytest_nlgeval.induction.judges._SIGS": "memo: the DSPy signature classes, built once",
    "pytest_nlgeval.llm.cache._CLASS": "memo: the caching LM class, built once dspy is imported",
    "pytest_nlgeval.llm.secrets._warned": "process state: a key in clear text is warned about once per server",
    "nlgeval_runtime.claim_support._punkt": "memo: NLTK's English Punkt tokenizer, looked up once",
    "pytest_nlgeval.metrics.registry._EXTRA": "process registry: metrics added by register_metric",
    "pytest_nlgeval.metrics.registry._ENTRY_POINTS_LOADED": "process registry: entry points read once",
    "pytest_nlgeval.trajectory.gguf_lm._BACKEND_READY": "process state: llama.cpp's backend initialised once",
    "pytest_nlgeval.trajectory.gguf_lm._HASHES": "memo: a GGUF file's sha256 per path, size and mtime",
    "pytest_nlgeval.trajectory.dtw._NUMBA_KERNEL": "memo: the compiled DTW kernel",
    "pytest_nlgeval.trajectory.dtw._NUMBA_TRIED": "memo: whether numba was tried",
}

_MUTATORS = {
    "append",
    "extend",
    "insert",
    "pop",
    "popitem",
    "remove",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
    "__setitem__",
    "__delitem__",
}


def _module_names(tree: ast.Module) -> set[str]:
    names = set()
    for node in tree.body:
        targets = (
            node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        )
        names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


def _changed_in_functions(tree: ast.Module, names: set[str]) -> set[str]:
    """Module-level names a function rebinds (``global``) or mutates (a method that changes a container, an
    item or attribute assignment, ``del name[...]``)."""
    changed = set()
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Global):
                changed.update(n for n in node.names if n in names)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in names
                and node.func.attr in _MUTATORS
            ):
                changed.add(node.func.value.id)
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for target in targets:
                    if (
                        isinstance(target, (ast.Subscript, ast.Attribute))
                        and isinstance(target.value, ast.Name)
                        and target.value.id in names
                    ):
                        changed.add(target.value.id)
    return changed


def module_state(packages: dict[str, Path]) -> dict[str, str]:
    """``module.name`` -> file:line of every module-level name that a function changes."""
    found = {}
    for package, folder in packages.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            module = ".".join([package, *parts])
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            lines = {}
            for node in tree.body:
                targets = (
                    node.targets
                    if isinstance(node, ast.Assign)
                    else [node.target]
                    if isinstance(node, ast.AnnAssign)
                    else []
                )
                lines.update({t.id: node.lineno for t in targets if isinstance(t, ast.Name)})
            for name in _changed_in_functions(tree, _module_names(tree)):
                found[f"{module}.{name}"] = f"{path.relative_to(folder.parent)}:{lines[name]}"
    return found


def test_no_module_level_run_state_but_the_current_run_slot():
    found = module_state(PACKAGES)
    unexplained = {name: where for name, where in found.items() if name not in ALLOWED}
    assert not unexplained, (
        "module-level state that functions change (run state belongs in the Run, kept in "
        "config.stash; a memo of something no run can change goes into ALLOWED with its reason):\n  "
        + "\n  ".join(f"{where} {name}" for name, where in sorted(unexplained.items()))
    )
    stale = sorted(set(ALLOWED) - set(found))
    assert not stale, f"ALLOWED names that no longer exist or no longer change; remove them: {stale}"


def test_the_state_scan_sees_globals_mutations_and_item_assignments(tmp_path):
    pkg = tmp_path / "pytest_nlgeval"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text(
        "_stack = []\n_current = None\n_table = {}\n_box = object()\nLIMIT = 3\nNAMES = ('x',)\n"
        "def push(x):\n    _stack.append(x)\n"
        "def set_current(x):\n    global _current\n    _current = x\n"
        "class C:\n    def put(self, k):\n        _table[k] = 1\n"
        "def read():\n    return LIMIT, NAMES, _box\n"
    )
    assert set(module_state({"pytest_nlgeval": pkg})) == {
        "pytest_nlgeval.a._stack",
        "pytest_nlgeval.a._current",
        "pytest_nlgeval.a._table",
    }


# -- the session's run --------------------------------------------------------------------------------------
def test_the_session_state_lives_in_config_stash(pytester):
    pytester.makepyfile(
        test_state='''
        from pytest_nlgeval import plugin
        from pytest_nlgeval.core import run

        def test_the_current_run_is_the_stashed_one(request):
            session = request.config.stash[plugin._state_key]
            assert run.active() is session.run is run.installed()[-1]
            assert session.run.recorder is session.recorder
    '''
    )
    outer = run_module.installed()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
    assert run_module.installed() == outer  # the inner session took its run out when it ended


# -- scores are values that carry their recorder --------------------------------------------------------------
def test_a_score_records_with_the_recorder_it_was_handed_and_reads_no_global(recorder):
    mine = CheckRecorder()
    Score(0.8, name="fluency", recorder=mine) > 0.5
    Score(0.8, name="coherence") > 0.5  # made by hand without a recorder: recorded nowhere
    assert [c.name for c in mine.checks] == ["fluency"]
    assert recorder.checks == []  # the run's recorder (lent by the fixture) saw neither


def test_the_dsl_hands_the_run_recorder_to_its_scores(tiny_t5_model, recorder):
    from pytest_nlgeval import assert_dimension
    from pytest_nlgeval.core.evaluator import Evaluator

    ev = Evaluator(tiny_t5_model, device="cpu", cache=False)
    score = assert_dimension("The cat sat on the mat.", "fluency", evaluator=ev)
    assert score.recorder is recorder
    assert ev.score("The cat sat on the mat.", "fluency").recorder is None  # the evaluator alone: a value


def test_aggregates_record_with_the_recorder_of_their_scores():
    from pytest_nlgeval.core.score import ScoreList

    rec = CheckRecorder()
    scores = ScoreList([Score(v, name="fluency", recorder=rec) for v in (0.9, 0.7)], name="fluency")
    scores.mean() > 0.5
    assert [c.name for c in rec.checks] == ["mean(fluency)"]


def test_sorting_scores_is_comparing_them():
    """What the documentation of pytest_nlgeval.core.score says about sorted(), max() and min()."""
    rec = CheckRecorder()
    rec.start_test("t.py::test_order")
    low, high = Score(0.3, name="fluency", recorder=rec), Score(0.9, name="fluency", recorder=rec)
    with pytest.raises(AssertionError, match=r"fluency = 0.3000, expected > 0.9"):
        max([high, low])  # asks low > high
    assert [(c.score, c.operator, c.threshold, c.passed) for c in rec.checks] == [(0.3, ">", 0.9, False)]
    assert max([low, high]) is high  # asks high > low: holds, and is recorded as a check
    assert len(rec.checks) == 2 and rec.checks[-1].passed
    with pytest.raises(AssertionError, match=r"fluency = 0.9000, expected < 0.3"):
        sorted([low, high])  # asks high < low
    assert min([high, low]) is low  # asks low < high: holds
    with pytest.raises(AssertionError, match=r"fluency = 0.9000, expected < 0.3"):
        min([low, high])  # asks high < low
    recorded = len(rec.checks)
    # Ordering the numbers records nothing and gives the scores back
    assert max([high, low], key=float) is high and min([high, low], key=float) is low
    assert sorted([high, low], key=float) == [low, high]
    assert len(rec.checks) == recorded


# -- the evaluator takes its run as arguments --------------------------------------------------------------------
def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.update(f"{node.module}.{a.name}" for a in node.names)
    return found


@pytest.mark.parametrize("module", ["evaluator", "score"])
def test_evaluator_and_score_know_nothing_of_pytest_or_the_run(module):
    path = ROOT / "pytest_nlgeval" / "core" / f"{module}.py"
    imported = _imports(path)
    assert not {i for i in imported if i.split(".")[0] in ("pytest", "_pytest")}
    assert not {
        i
        for i in imported
        if i.startswith(("pytest_nlgeval.core.run", "pytest_nlgeval.core.checks", "pytest_nlgeval.plugin"))
    }
    assert "marker" not in path.read_text(encoding="utf-8")


def test_the_evaluator_default_task_is_an_argument(tiny_t5_model):
    tasks = iter(["dialogue"])
    for default in ("dialogue", lambda: next(tasks)):
        ev = Evaluator(tiny_t5_model, device="cpu", cache=False, default_task=default)
        score = ev.score("Hi there.", "understandability", recorder=None)  # a dialogue-only dimension
        assert score.task == "dialogue" and score.recorder is None
    with pytest.raises(Exception, match="understandability"):
        Evaluator(tiny_t5_model, device="cpu", cache=False).score("Hi there.", "understandability")


# -- the run owns the cache --------------------------------------------------------------------------------
def test_the_run_owns_one_cache_for_all_its_evaluators(tmp_path):
    run = Run({"cache_dir": str(tmp_path), "model": "model-a"})
    first, second = run.evaluator(), run.evaluator("model-b")
    assert first is not second and first.cache is second.cache is run.cache
    assert run.cache.path == tmp_path / CACHE_FILE
    assert Evaluator("model-a", cache_dir=tmp_path).cache.path == run.cache.path  # one name, one place
    run.close()
    assert not first.session_created
    assert Run({"cache": False, "model": "model-a"}).evaluator().cache is None


# Where the current run may be looked up: the assertions of the DSL, which hand it down as arguments, and the
# plugin, which installs its session's run. Everything below them takes what it needs as arguments.
RUN_READERS = {
    "pytest_nlgeval.assertions",
    "pytest_nlgeval.plugin",
    "pytest_nlgeval.induction.assertions",
    "pytest_nlgeval.trajectory.assertions",
}


def _package_modules(folder: Path, package: str) -> dict[str, Path]:
    modules = {}
    for path in sorted(folder.rglob("*.py")):
        parts = list(path.relative_to(folder).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        modules[".".join([package, *parts])] = path
    return modules


def test_only_the_dsl_edge_and_the_plugin_know_the_current_run():
    readers = {
        module
        for module, path in _package_modules(PACKAGES["pytest_nlgeval"], "pytest_nlgeval").items()
        if any(i == "pytest_nlgeval.core.run" or i.startswith("pytest_nlgeval.core.run.") for i in _imports(path))
        and module != "pytest_nlgeval.core.run"
    }
    assert readers <= RUN_READERS, f"modules that look up the current run outside the DSL edge: {readers - RUN_READERS}"


def test_the_core_imports_form_no_circle():
    """Every import between core modules, type-only and function-level ones included, points one way."""
    modules = _package_modules(PACKAGES["pytest_nlgeval"] / "core", "pytest_nlgeval.core")
    del modules["pytest_nlgeval.core"]  # the package's docstring

    def target(name):
        return next((t for t in modules if name == t or name.startswith(t + ".")), None)

    edges = {m: {target(i) for i in _imports(p)} - {None, m} for m, p in modules.items()}
    assert edges["pytest_nlgeval.core.evaluator"] >= {"pytest_nlgeval.core.score", "pytest_nlgeval.core.dimensions"}
    seen, stack = set(), []

    def visit(node):
        if node in stack:
            raise AssertionError("import circle: " + " -> ".join(stack[stack.index(node) :] + [node]))
        if node in seen:
            return
        stack.append(node)
        for nxt in edges[node]:
            visit(nxt)
        stack.pop()
        seen.add(node)

    for module in modules:
        visit(module)


def test_the_run_keeps_its_resources_and_closes_them_with_it():
    class Session:
        closed = 0

        def close(self):
            self.closed += 1

    run, made = Run({"cache": False}), []
    first = run.resource(("trajectory-lm", "x"), lambda: made.append(1) or Session())
    assert run.resource(("trajectory-lm", "x"), lambda: made.append(1) or Session()) is first and made == [1]
    plain = run.resource(("trajectory-bank", "b"), lambda: {"no": "close"})  # kept, nothing to close
    run.close()
    assert first.closed == 1 and plain == {"no": "close"}
    assert run.resource(("trajectory-lm", "x"), Session) is not first  # a closed run starts afresh
