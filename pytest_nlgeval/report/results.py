"""Reading a results file (docs/results-schema.md) for the report, with errors that name the problem.

The report accepts what the plugin writes (``schema`` ``pytest-nlgeval/results``, ``version`` 1) and refuses
anything else with a message naming the file and the field, instead of rendering an empty or wrong page.
"""

from __future__ import annotations

import json
import os
from typing import Any, Mapping

from pytest_nlgeval.errors import NLGEvalError

__all__ = ["ReportInputError", "SCHEMA", "SUPPORTED_VERSIONS", "load_results", "validate_results"]

SCHEMA = "pytest-nlgeval/results"
SUPPORTED_VERSIONS = (1,)


class ReportInputError(NLGEvalError, ValueError):
    """The results (or baseline) input of the report is missing or malformed."""


def load_results(path: str | os.PathLike, *, what: str = "results file") -> dict[str, Any]:
    """Read and validate a results JSON file written by ``--nlgeval-json``.

    >>> results = load_results("results.json")  # doctest: +SKIP
    >>> results["summary"]["failed"]  # doctest: +SKIP
    0
    """
    path = os.fspath(path)
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise ReportInputError(
            f"{what} {path!r} does not exist; write one with `pytest --nlgeval-json {path}`"
        ) from None
    except OSError as exc:
        raise ReportInputError(f"cannot read {what} {path!r}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReportInputError(
            f"{what} {path!r} is not UTF-8 text ({exc.reason} at byte {exc.start}): is it a results file written "
            f"by `pytest --nlgeval-json`?"
        ) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(
            f"{what} {path!r} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except RecursionError:
        raise ReportInputError(f"{what} {path!r} holds JSON nested too deeply to be a results file") from None
    validate_results(data, source=path)
    return data


def validate_results(data: Any, *, source: str = "results") -> None:
    """Raise :class:`ReportInputError` unless ``data`` has the shape the report reads."""
    if not isinstance(data, Mapping):
        raise ReportInputError(f"{source}: expected a JSON object at the top level, got {type(data).__name__}")
    schema = data.get("schema")
    if schema != SCHEMA:
        raise ReportInputError(
            f"{source}: 'schema' is {schema!r}, expected {SCHEMA!r}; is this a results file written by "
            "`pytest --nlgeval-json`?"
        )
    version = data.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise ReportInputError(
            f"{source}: results version {version!r} is not supported by this pytest-nlgeval "
            f"(supported: {', '.join(map(str, SUPPORTED_VERSIONS))}); upgrade pytest-nlgeval"
        )
    checks = data.get("checks")
    if not isinstance(checks, list):
        raise ReportInputError(f"{source}: 'checks' must be a list, got {type(checks).__name__}")
    for position, check in enumerate(checks):
        if not isinstance(check, Mapping):
            raise ReportInputError(f"{source}: checks[{position}] must be an object")
        for field in ("key", "nodeid", "kind", "name"):
            if not isinstance(check.get(field), str):
                raise ReportInputError(f"{source}: checks[{position}] has no string {field!r}")
        if "passed" not in check or not isinstance(check["passed"], bool):
            raise ReportInputError(f"{source}: checks[{position}] ({check['key']}) has no boolean 'passed'")
        for field in ("score", "threshold"):
            value = check.get(field)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                raise ReportInputError(
                    f"{source}: checks[{position}] ({check['key']}) field {field!r} must be a number or null"
                )
        details = check.get("details")
        if details is not None and not isinstance(details, Mapping):
            raise ReportInputError(f"{source}: checks[{position}] ({check['key']}) 'details' must be an object")
    for field in ("summary", "environment", "evaluators"):
        if field in data and not isinstance(data[field], Mapping):
            raise ReportInputError(f"{source}: {field!r} must be an object")
    if "baseline" in data and data["baseline"] is not None and not isinstance(data["baseline"], Mapping):
        raise ReportInputError(f"{source}: 'baseline' must be an object")
