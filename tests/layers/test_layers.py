"""The import layers of the three distributions, read from the source without importing anything.

Data flows one way: pytest_nlgeval -> nlgeval_training (the ``train`` extra) -> nlgeval_runtime, and the
plugin uses the runtime directly. The runtime is installed alone (no torch, no pytest), so it may name
neither of the others; training runs without the plugin, so it may not name pytest_nlgeval; only training
imports torch. Imports inside functions count as much as those at module level: a lazy import is still a
dependency, it only fails later and further from its cause. docs/architecture.md draws the layers.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from paths import REPO as ROOT

PACKAGES = {
    "pytest_nlgeval": ROOT / "pytest_nlgeval",
    "nlgeval_runtime": ROOT / "runtime" / "nlgeval_runtime",
    "nlgeval_training": ROOT / "training" / "nlgeval_training",
}
# package -> the top-level packages it must never import
FORBIDDEN = {
    "nlgeval_runtime": ("nlgeval_training", "pytest_nlgeval", "pytest", "_pytest", "torch"),
    "nlgeval_training": ("pytest_nlgeval", "pytest", "_pytest"),
    "pytest_nlgeval": ("torch",),
}


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module, as precise as the source tree allows
    line: int
    type_only: bool  # under ``if TYPE_CHECKING:``: never executed


def module_files() -> dict[str, Path]:
    """Every module of the three packages by dotted name (a package is its ``__init__``)."""
    modules = {}
    for package, folder in PACKAGES.items():
        for path in sorted(folder.rglob("*.py")):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name ``from ... import`` refers to; relative imports count from the module's package."""
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes under ``if TYPE_CHECKING:`` (or ``typing.TYPE_CHECKING``)."""
    hidden = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else None
            if name == "TYPE_CHECKING":
                hidden.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return hidden


def imports_of(module: str, path: Path, known: set[str]) -> list[Import]:
    """The imports of one module, each resolved to the most precise known module it loads."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    hidden = _type_checking_nodes(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, path, node)
            # ``from pkg import name`` loads the submodule pkg.name when there is one, else pkg itself
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]
        else:
            continue
        for target in targets:
            found.append(Import(module, target, node.lineno, id(node) in hidden))
    return found


def all_imports() -> list[Import]:
    files = module_files()
    known = set(files)
    return [imp for module, path in files.items() for imp in imports_of(module, path, known)]


def _top(name: str) -> str:
    return name.partition(".")[0]


def import_graph() -> dict[str, set[str]]:
    """module -> the project modules it imports at run time (type-only imports are never executed)."""
    files = module_files()
    known = set(files)
    graph: dict[str, set[str]] = {m: set() for m in files}
    for imp in all_imports():
        if imp.type_only or imp.target == imp.source:
            continue
        target = imp.target
        while target and target not in known:  # ``import a.b.c`` of an attribute path: its module
            target = target.rpartition(".")[0]
        if target and target != imp.source:
            graph[imp.source].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted, sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph[node]):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def test_every_package_is_found():
    files = module_files()
    for package in PACKAGES:
        assert package in files, f"{PACKAGES[package]} has no __init__.py; update PACKAGES in {__file__}"
    assert "nlgeval_runtime.resolve" in files and "pytest_nlgeval.core.evaluator" in files


def layer_violations(package: str) -> list[str]:
    return [
        f"{imp.source}:{imp.line} imports {imp.target}"
        for imp in all_imports()
        if _top(imp.source) == package and _top(imp.target) in FORBIDDEN[package]
    ]


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_lower_layer_never_imports_a_higher_one(package):
    bad = layer_violations(package)
    assert not bad, (
        f"{package} must not import {' or '.join(FORBIDDEN[package])} (see docs/architecture.md); "
        "move the code up a layer or inject it (an argument, an entry point):\n  " + "\n  ".join(bad)
    )


def test_no_import_circles():
    """Modules that import each other, even lazily, are one module cut in two: neither can change alone."""
    found = circles(import_graph())
    assert not found, (
        "import circles (break each by moving what both need into a module that imports neither):\n  "
        + "\n  ".join(" <-> ".join(c) for c in found)
    )


def test_circle_finder_sees_lazy_and_relative_imports(tmp_path, monkeypatch):
    """The checks above are only as good as the parser: a lazy relative import must make a circle."""
    pkg = tmp_path / "pytest_nlgeval"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from pytest_nlgeval.b import f\n")
    (pkg / "b.py").write_text("def f():\n    from . import a\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import x\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", {"pytest_nlgeval": pkg})
    graph = import_graph()
    assert circles(graph) == [["pytest_nlgeval.a", "pytest_nlgeval.b"]]
    assert graph["pytest_nlgeval.c"] == set()


def test_layer_check_sees_lazy_and_type_only_imports(tmp_path, monkeypatch):
    pkg = tmp_path / "nlgeval_runtime"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "lazy.py").write_text("def f():\n    from nlgeval_training.export import export_model\n")
    (pkg / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pytest_nlgeval\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGES", {"nlgeval_runtime": pkg})
    assert layer_violations("nlgeval_runtime") == [
        "nlgeval_runtime.lazy:2 imports nlgeval_training.export",
        "nlgeval_runtime.typed:3 imports pytest_nlgeval",
    ]


# The floors of pytest_nlgeval, lowest first: a module imports only modules of its own floor or below.
# The face (the package root's __init__, plugin, cli, assertions) may import anything; nothing below imports
# it. The root's other two modules are at the bottom: the errors every layer raises and the hook
# specifications (an interface, importing nothing of the project). core never imports an LLM or a judge;
# llm imports no feature package.
ROOT_MODULES = ("errors", "hookspecs", "plugin", "cli", "assertions")
FLOORS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("pytest_nlgeval.errors", "pytest_nlgeval.hookspecs", "pytest_nlgeval.util")),
    ("core", ("pytest_nlgeval.core",)),
    ("llm", ("pytest_nlgeval.llm",)),
    (
        "features",
        (
            "pytest_nlgeval.judges",
            "pytest_nlgeval.induction",
            "pytest_nlgeval.trajectory",
            "pytest_nlgeval.metrics",
            "pytest_nlgeval.metaeval",
            "pytest_nlgeval.baseline",
            "pytest_nlgeval.report",
            "pytest_nlgeval.scale",
        ),
    ),
    ("commands", ("pytest_nlgeval.commands",)),
    (
        "face",
        (
            "pytest_nlgeval",
            "pytest_nlgeval.plugin",
            "pytest_nlgeval.cli",
            "pytest_nlgeval.assertions",
        ),
    ),
]


def floor_of(module: str) -> int | None:
    """The floor of a pytest_nlgeval module (the longest prefix that names one); None outside the package."""
    best, level = -1, None
    for number, (_, prefixes) in enumerate(FLOORS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best:
                best, level = len(prefix), number
    return level


def test_every_module_of_the_package_has_a_floor():
    lost = [m for m in module_files() if _top(m) == "pytest_nlgeval" and floor_of(m) is None]
    assert not lost
    # the root holds the face and the two base modules; every other module lives in the package whose
    # concept it is
    root = [m.split(".")[1] for m in module_files() if m.count(".") == 1 and _top(m) == "pytest_nlgeval"]
    packages = {m.split(".")[1] for m in module_files() if m.count(".") >= 2 and _top(m) == "pytest_nlgeval"}
    assert sorted(set(root) - packages) == sorted(ROOT_MODULES)


def test_no_arrow_runs_up_a_floor():
    graph = import_graph()
    up = [
        f"{source} ({FLOORS[floor_of(source)][0]}) imports {target} ({FLOORS[floor_of(target)][0]})"
        for source, targets in graph.items()
        if _top(source) == "pytest_nlgeval"
        for target in targets
        if _top(target) == "pytest_nlgeval" and floor_of(target) > floor_of(source)  # type: ignore[operator]
    ]
    assert not up, "imports that run up a floor (move the code up, or inject it):\n  " + "\n  ".join(sorted(up))
