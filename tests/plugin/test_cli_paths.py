"""Paths the commands read and write: a folder, a binary file, a read-only target or JSON nested 100,000 deep is
a one-line error and exit status 2, never a traceback; ``--nlgeval-json`` onto such a path is a usage error
before any test runs, and a results file that cannot be written at the end fails the run with one line."""

from __future__ import annotations

import json
import os
import textwrap

import pytest

from baseline_results import make_results
from pytest_nlgeval.cli import main

READ_ONLY = "/proc/self/nlgeval-out.json"  # a folder no one may write, root included
DEEP = "[" * 100_000 + "]" * 100_000


def one_line_error(capsys, argv) -> str:
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    return err


@pytest.fixture
def results_file(tmp_path):
    path = tmp_path / "results.json"
    path.write_text(json.dumps(make_results({("summarization", "fluency"): [0.8, 0.7]})))
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "{folder}", "{results}"],
        ["compare", "{results}", "{folder}"],
        ["baseline", "validate", "{folder}"],
        ["baseline", "update", "{folder}", "-o", "{tmp}/base.json"],
        ["baseline", "update", "{results}", "-o", "{folder}"],
        ["report", "{binary}", "-o", "{tmp}/r.html"],
        ["summary", "{binary}"],
        ["compare", "{binary}", "{results}"],
        ["compare", "{deep}", "{results}"],
        ["summary", "{deep}"],
        ["summary", "{results}", "-o", "{folder}"],
        ["summary", "{results}", "-o", READ_ONLY],
        ["compare", "{results}", "{results}", "-o", "{folder}"],
        ["compare", "{results}", "{results}", "-o", READ_ONLY],
        ["score", "{deep_rows}", "-d", "fluency"],
        ["score", "{rows}", "-d", "fluency", "-o", "{folder}"],
        ["score", "{rows}", "-d", "fluency", "-o", READ_ONLY],
    ],
)
def test_a_bad_path_is_a_one_line_error(tmp_path, results_file, capsys, argv):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    binary = tmp_path / "binary.json"
    binary.write_bytes(bytes(range(256)) * 8)
    deep = tmp_path / "deep.json"
    deep.write_text(DEEP)
    rows = tmp_path / "rows.jsonl"
    rows.write_text('{"output": "The cat sat on the mat."}\n')
    deep_rows = tmp_path / "deep.jsonl"
    deep_rows.write_text('{"output": ' + DEEP + "}\n")
    names = {
        "folder": folder,
        "results": results_file,
        "binary": binary,
        "deep": deep,
        "rows": rows,
        "deep_rows": deep_rows,
        "tmp": tmp_path,
    }
    err = one_line_error(capsys, [a.format(**names) for a in argv])
    assert err.startswith(f"nlgeval {argv[0]}: error: ")


def test_nlgeval_json_onto_a_folder_or_read_only_path_is_a_usage_error(pytester):
    pytester.makepyfile(test_x="def test_x():\n    pass\n")
    (pytester.path / "out").mkdir()
    for target, said in (("out", "is a folder"), (READ_ONLY, "is read-only")):
        result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-json", target)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        result.stderr.fnmatch_lines([f"*--nlgeval-json / nlgeval_json:*{said}*"])
        assert "Traceback" not in result.stderr.str() + result.stdout.str()


def test_a_results_file_that_cannot_be_written_at_the_end_fails_with_one_line(pytester):
    # the folder of the results file is replaced by a plain file while the tests run
    pytester.makeconftest(
        textwrap.dedent(
            """
            import os, shutil
            import pytest

            @pytest.hookimpl(tryfirst=True)
            def pytest_sessionfinish(session):
                shutil.rmtree("gone")
                with open("gone", "w") as fh:
                    fh.write("now a file")
            """
        )
    )
    pytester.makepyfile(
        test_x="from pytest_nlgeval import assert_score\n\n"
        "def test_x():\n    assert assert_score(0.9, 'quality') > 0.5\n"
    )
    os.mkdir(pytester.path / "gone")
    result = pytester.runpytest("-p", "no:cacheprovider", "--nlgeval-json", "gone/results.json")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*nlgeval: --nlgeval-json: cannot write*gone/results.json*"])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
