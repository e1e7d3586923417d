"""The one JSON Lines reader: what every command and loader accepts, and how it fails."""

from __future__ import annotations

import gzip

import pytest

from nlgeval_runtime.jsonlines import JSONLinesError, iter_rows, read_rows, rows_from_text


class DomainError(Exception):
    pass


def test_rows_come_with_their_line_numbers_blank_lines_skipped(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n\n  \n{"a": 2}\n', encoding="utf-8")
    assert list(iter_rows(path)) == [(1, {"a": 1}), (4, {"a": 2})]
    assert read_rows(path) == [(1, {"a": 1}), (4, {"a": 2})]
    assert list(iter_rows(path, limit=1)) == [(1, {"a": 1})]


def test_gzip_is_told_by_its_bytes_not_its_name(tmp_path):
    path = tmp_path / "named-plain.jsonl"  # gzip inside, whatever the name says
    path.write_bytes(gzip.compress('{"text": "caf\u00e9"}\n'.encode("utf-8")))
    assert read_rows(path) == [(1, {"text": "caf\u00e9"})]
    assert list(iter_rows(path)) == [(1, {"text": "caf\u00e9"})]


def test_a_json_list_file_is_read_when_allowed(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text('[{"a": 1},\n {"a": 2}]', encoding="utf-8")
    assert read_rows(path) == [(1, {"a": 1}), (2, {"a": 2})]
    with pytest.raises(JSONLinesError, match=r"rows.json:1: not valid JSON"):
        read_rows(path, allow_list=False)  # each line must then be an object by itself


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"a": 1}\n{"a": \n', r"bad.jsonl:2: not valid JSON \(Expecting value at column 7\); each line must be one"),
        ('{"a": 1}\n[1, 2]\n', r"bad.jsonl:2: a JSON list, not an object"),
        ("[{\"a\": 1}, 3]", r"bad.jsonl: row 1 is a JSON int, not an object"),
    ],
)
def test_bad_rows_name_the_file_the_line_and_the_fix(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JSONLinesError, match=message):
        read_rows(path)


def test_each_caller_gets_its_own_error_class(tmp_path):
    with pytest.raises(DomainError, match="missing.jsonl does not exist; pass a JSON Lines file"):
        read_rows(tmp_path / "missing.jsonl", error=DomainError)
    with pytest.raises(DomainError, match="missing.jsonl does not exist"):
        list(iter_rows(tmp_path / "missing.jsonl", error=DomainError))
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes('{"a": "caf\u00e9"}\n'.encode("latin-1"))
    for read in (read_rows, lambda p, error: list(iter_rows(p, error=error))):
        with pytest.raises(DomainError, match="latin.jsonl: cannot be read as UTF-8"):
            read(latin, error=DomainError)
    with pytest.raises(DomainError, match=r"memo:1: not valid JSON"):
        rows_from_text("{oops}", "memo", error=DomainError)
    assert issubclass(JSONLinesError, ValueError)
