"""The one reader of JSON Lines files (and of files holding one JSON list) for every package.

Every command and library function that takes a file of rows reads it here, so they all accept the same
things (UTF-8 text, gzip-compressed or not, told apart by the file's first bytes; blank lines skipped) and
fail the same way: an error that names the file, the line and what to change. Each caller passes the error
class of its own domain (``error=``), so ``except DatasetError`` and the like keep working.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from pathlib import Path
from typing import Iterator

from nlgeval_runtime.errors import NLGEvalRuntimeError

__all__ = ["JSONLinesError", "iter_rows", "read_rows", "rows_from_text"]

_GZIP_MAGIC = b"\x1f\x8b"


class JSONLinesError(NLGEvalRuntimeError, ValueError):
    """A file of rows that cannot be read: missing, not UTF-8, not JSON, or a row that is not an object."""


def _open_text(path: Path, error: type[Exception]):
    if not path.is_file():
        raise error(f"{path} does not exist; pass a JSON Lines file (one JSON object per line, .gz allowed)")
    with path.open("rb") as raw:
        gzipped = raw.read(2) == _GZIP_MAGIC
    handle = gzip.open(path, "rb") if gzipped else path.open("rb")
    return io.TextIOWrapper(handle, encoding="utf-8")


def _row(line: str, where: str, error: type[Exception]) -> dict:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise error(
            f"{where}: not valid JSON ({exc.msg} at column {exc.colno}); each line must be one JSON object"
        ) from None
    except RecursionError:
        raise error(f"{where}: JSON nested too deeply to read; each line must be one flat JSON object") from None
    if not isinstance(row, dict):
        raise error(f"{where}: a JSON {type(row).__name__}, not an object; each line must be one JSON object")
    return row


def iter_rows(
    path: str | os.PathLike, *, error: type[Exception] = JSONLinesError, limit: int | None = None
) -> Iterator[tuple[int, dict]]:
    """``(line number, object)`` for every non-empty line of a JSON Lines file, streamed (training corpora);
    ``limit`` stops after that many lines of the file."""
    file = Path(path)
    try:
        with _open_text(file, error) as text:
            for number, line in enumerate(text, start=1):
                if limit is not None and number > limit:
                    return
                if line.strip():
                    yield number, _row(line, f"{file}:{number}", error)
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise error(
            f"{file}: cannot be read as UTF-8 JSON Lines ({exc}); save it as UTF-8 text, optionally gzip-compressed"
        ) from None


def rows_from_text(
    text: str, origin: str, *, error: type[Exception] = JSONLinesError, allow_list: bool = True
) -> list[tuple[int, dict]]:
    """The rows of text already read: JSON Lines, or (``allow_list``) one JSON list of objects, whose rows
    are numbered by their line in the file."""
    if allow_list and text.lstrip().startswith("["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise error(f"{origin}:{exc.lineno}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        except RecursionError:
            raise error(f"{origin}: JSON nested too deeply to read") from None
        if not isinstance(data, list):
            raise error(f"{origin}: expected a JSON list of objects or JSON Lines")
        rows = []
        for i, row in enumerate(data):
            if not isinstance(row, dict):
                raise error(f"{origin}: row {i} is a JSON {type(row).__name__}, not an object")
            rows.append((i + 1, row))
        return rows
    return [
        (n, _row(line, f"{origin}:{n}", error)) for n, line in enumerate(text.splitlines(), start=1) if line.strip()
    ]


def read_rows(
    path: str | os.PathLike, *, error: type[Exception] = JSONLinesError, allow_list: bool = True
) -> list[tuple[int, dict]]:
    """Every row of a JSON Lines file, or (``allow_list``) of a file holding one JSON list, gzip or not."""
    file = Path(path)
    try:
        with _open_text(file, error) as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError, EOFError) as exc:
        raise error(
            f"{file}: cannot be read as UTF-8 JSON ({exc}); save it as UTF-8 text, optionally gzip-compressed"
        ) from None
    return rows_from_text(text, str(file), error=error, allow_list=allow_list)
