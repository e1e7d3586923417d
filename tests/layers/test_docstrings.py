"""One docstring style across the three packages, read from the source without importing anything.

docs/architecture.md (Conventions) sets it: a one-line summary, then prose that names the arguments in
``double backticks`` where they matter. Google-style sections (``Args:``, ``Returns:``, ``Raises:``...) and
NumPy-style ones (a ``Parameters`` line underlined with dashes) are a second style; these tests keep them out.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from paths import REPO as ROOT

FOLDERS = [ROOT / "pytest_nlgeval", ROOT / "runtime" / "nlgeval_runtime", ROOT / "training" / "nlgeval_training"]

GOOGLE_SECTION = re.compile(r"^\s*(Args|Arguments|Returns|Raises|Yields):")
NUMPY_SECTIONS = ("Parameters", "Other Parameters", "Arguments", "Returns", "Raises", "Yields")
NUMPY_UNDERLINE = re.compile(r"^\s*-{3,}\s*$")
FIX = "write it as prose naming the arguments in ``double backticks`` (docs/architecture.md, Conventions)"

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def docstrings(tree: ast.Module) -> list[tuple[int, str]]:
    """``(first line, raw text)`` of every module, class and function docstring of ``tree``."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, _DOCUMENTED) or not node.body:
            continue
        first = node.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            found.append((first.value.lineno, first.value.value))
    return found


def section_headers(text: str) -> list[tuple[int, str]]:
    """``(line offset within the docstring, rule broken)`` for each section header in ``text``."""
    lines = text.split("\n")
    found = []
    for i, line in enumerate(lines):
        google = GOOGLE_SECTION.match(line)
        if google:
            found.append((i, f"Google-style section {google.group(1) + ':'!r}"))
        elif line.strip() in NUMPY_SECTIONS and i + 1 < len(lines) and NUMPY_UNDERLINE.match(lines[i + 1]):
            found.append((i, f"NumPy-style section {line.strip()!r}"))
    return found


def violations_in(source: str, filename: str) -> list[str]:
    """``file:line: rule`` for every docstring section header in one module's ``source``."""
    tree = ast.parse(source, filename=filename)
    found = sorted((start + offset, rule) for start, text in docstrings(tree) for offset, rule in section_headers(text))
    return [f"{filename}:{line}: {rule}; {FIX}" for line, rule in found]


def module_paths(folders: list[Path]) -> list[Path]:
    return sorted(path for folder in folders for path in folder.rglob("*.py"))


def violations(folders: list[Path]) -> list[str]:
    found = []
    for path in module_paths(folders):
        name = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
        found += violations_in(path.read_text(encoding="utf-8"), name)
    return found


def test_every_package_is_read():
    paths = module_paths(FOLDERS)
    for folder in FOLDERS:
        assert (folder / "__init__.py") in paths, f"{folder} has no __init__.py; update FOLDERS in {__file__}"
    assert ROOT / "pytest_nlgeval" / "core" / "evaluator.py" in paths
    assert len(paths) > 50


def test_docstrings_have_no_google_or_numpy_sections():
    bad = violations(FOLDERS)
    assert not bad, "docstrings in a second style:\n  " + "\n  ".join(bad)


SNIPPET = '''"""A module.

Parameters
----------
x : int
"""


def google(x):
    """Do it.

    Args:
        x: the thing.

    Returns:
        the other thing.
    """
    text = """Args:
    not a docstring, never read"""
    return text


class Thing:
    """A thing.

    Raises:
        ValueError: always.
    """

    async def gen(self):
        """Yield.

        Yields:
            nothing
        """


def prose(x):
    """Do it in the house style.

    ``x`` is the thing. Returns a :class:`Thing`; raises :class:`ValueError` for a bad ``x``.
    Parameters of the call come in as keywords.

        prose(1)
    """
'''


def test_the_detector_names_file_line_and_rule():
    found = violations_in(SNIPPET, "pkg/mod.py")
    assert [v.partition(";")[0] for v in found] == [
        "pkg/mod.py:3: NumPy-style section 'Parameters'",
        "pkg/mod.py:12: Google-style section 'Args:'",
        "pkg/mod.py:15: Google-style section 'Returns:'",
        "pkg/mod.py:26: Google-style section 'Raises:'",
        "pkg/mod.py:33: Google-style section 'Yields:'",
    ]
    assert all(v.endswith(FIX) for v in found)
    lines = SNIPPET.split("\n")
    assert [lines[n - 1].strip() for n in (3, 12, 15, 26, 33)] == [
        "Parameters",
        "Args:",
        "Returns:",
        "Raises:",
        "Yields:",
    ]  # the numbers point at the headers


def test_the_package_scan_fails_on_a_google_docstring(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text('"""Fine: ``x`` is prose."""\n')
    (pkg / "mod.py").write_text('def f(x):\n    """Do it.\n\n    Arguments:\n        x: the thing.\n    """\n')
    assert violations([pkg]) == [f"{pkg / 'mod.py'}:4: Google-style section 'Arguments:'; {FIX}"]
