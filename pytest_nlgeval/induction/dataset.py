"""Labelled datasets: outputs of a text generator with human labels, read from JSONL or CSV.

One row holds the generated ``output``, optionally the ``input`` it answers (question, document,
dialogue history) and ``references``, and one or more human label columns. A label column is Likert
(integers on a short scale such as 1-5), binary (0/1, true/false, yes/no) or numeric (anything else).

Example::

    >>> from pytest_nlgeval.induction.dataset import load_dataset
    >>> data = load_dataset("examples/induced_metric/answers.jsonl", target="helpfulness")  # doctest: +SKIP
    >>> len(data), data.label_kind("helpfulness")                                          # doctest: +SKIP
    (120, 'likert')

Every problem in the file is reported as a :class:`DatasetError` that names the file, the line and the
column, and says how to fix it.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from pytest_nlgeval.errors import NLGEvalError

__all__ = ["DatasetError", "LabelledExample", "LabelledDataset", "load_dataset", "LABEL_KINDS"]

LABEL_KINDS = ("likert", "binary", "numeric")
_BINARY_WORDS = {"true": 1.0, "false": 0.0, "yes": 1.0, "no": 0.0}
# Columns with these names are never taken as labels when label columns are inferred.
_RESERVED = {"id", "uid", "split", "system", "model", "task"}


class DatasetError(NLGEvalError, ValueError):
    """A labelled dataset cannot be used as given; the message names the file, line and column."""


@dataclass(frozen=True)
class LabelledExample:
    """One labelled output. ``line`` is the line of the file it came from (1-based), for messages."""

    output: str
    input: str | None
    references: tuple[str, ...] | None
    labels: dict[str, float]
    line: int


@dataclass
class LabelledDataset:
    """Labelled outputs plus where they came from.

    Attributes:
        examples: the rows, in file order.
        label_kinds: label column -> ``"likert"`` | ``"binary"`` | ``"numeric"``.
        source: the file name (or ``"<memory>"``).
        sha256: hex digest of the file's bytes (of the canonical JSON of the rows for in-memory data).
    """

    examples: list[LabelledExample]
    label_kinds: dict[str, str]
    source: str = "<memory>"
    sha256: str = ""
    _indices: list[int] | None = field(default=None, repr=False)

    def __len__(self) -> int:
        return len(self.examples)

    @property
    def label_columns(self) -> list[str]:
        return list(self.label_kinds)

    @property
    def outputs(self) -> list[str]:
        return [e.output for e in self.examples]

    @property
    def inputs(self) -> list[str | None]:
        return [e.input for e in self.examples]

    @property
    def references(self) -> list[list[str] | None]:
        return [list(e.references) if e.references is not None else None for e in self.examples]

    @property
    def has_inputs(self) -> bool:
        return bool(self.examples) and all(e.input is not None for e in self.examples)

    @property
    def has_references(self) -> bool:
        return bool(self.examples) and all(e.references for e in self.examples)

    def label_kind(self, column: str) -> str:
        self._check_column(column)
        return self.label_kinds[column]

    def labels(self, column: str):
        """The labels of ``column`` as a float numpy array, in row order."""
        import numpy as np

        self._check_column(column)
        return np.array([e.labels[column] for e in self.examples], dtype=float)

    def subset(self, indices: Sequence[int]) -> "LabelledDataset":
        """The rows at ``indices`` (same source and hash, so provenance still names the file)."""
        return LabelledDataset([self.examples[i] for i in indices], dict(self.label_kinds), self.source, self.sha256)

    def split(self, test_fraction: float = 0.3, seed: int = 0) -> tuple["LabelledDataset", "LabelledDataset"]:
        """Random train/held-out split (a seeded permutation; both parts keep file order)."""
        import numpy as np

        if not 0.0 < test_fraction < 1.0:
            raise ValueError(f"test_fraction must be between 0 and 1 (exclusive), got {test_fraction}")
        n = len(self)
        n_test = int(round(n * test_fraction))
        if n_test < 3 or n - n_test < 3:
            raise DatasetError(
                f"{self.source}: {n} rows are too few for a held-out split of {test_fraction:.0%} "
                "(each part needs at least 3 rows); label more outputs"
            )
        order = np.random.default_rng(seed).permutation(n)
        test_idx = sorted(int(i) for i in order[:n_test])
        train_idx = sorted(int(i) for i in order[n_test:])
        return self.subset(train_idx), self.subset(test_idx)

    def _check_column(self, column: str) -> None:
        if column not in self.label_kinds:
            raise DatasetError(
                f"{self.source}: no label column {column!r}; label columns are: "
                f"{', '.join(self.label_kinds) or '(none)'}"
            )


# -- reading ---------------------------------------------------------------------------------------------


def load_dataset(
    path: str | Path,
    *,
    target: str | None = None,
    labels: Sequence[str] | None = None,
    label_kinds: dict[str, str] | None = None,
    output_column: str = "output",
    input_column: str = "input",
    references_column: str = "references",
) -> LabelledDataset:
    """Read a labelled dataset from ``.jsonl`` or ``.csv``.

    ``path`` is the file: JSONL holds one object per line, CSV a header row, and its ``references`` may hold
    one string or a JSON list of strings. ``target`` is the label column induction predicts; it must exist in
    every row. ``labels`` names the label columns (default: ``target`` plus every other column whose values
    are numbers or true/false/yes/no in every row). ``label_kinds`` forces the kind of a column
    (``{"score": "numeric"}``); otherwise it is inferred. ``output_column``, ``input_column`` and
    ``references_column`` are the names of the text columns.

    A problem raises :class:`DatasetError` naming the file, line and column of the first one found.

        dataset = load_dataset("labels.jsonl", target="helpful")
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"labelled dataset {str(path)!r} does not exist; pass a .jsonl or .csv file")
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    suffix = "".join(path.suffixes[-1:]).lower()
    if suffix == ".jsonl":
        records = list(_read_jsonl(path, raw))
    elif suffix == ".csv":
        records = list(_read_csv(path, raw))
    else:
        raise DatasetError(f"{path}: unknown file type {suffix!r}; use .jsonl (one JSON object per line) or .csv")
    return build_dataset(
        records,
        source=str(path),
        sha256=digest,
        target=target,
        labels=labels,
        label_kinds=label_kinds,
        output_column=output_column,
        input_column=input_column,
        references_column=references_column,
    )


def build_dataset(
    records: Iterable[tuple[int, dict]],
    *,
    source: str = "<memory>",
    sha256: str | None = None,
    target: str | None = None,
    labels: Sequence[str] | None = None,
    label_kinds: dict[str, str] | None = None,
    output_column: str = "output",
    input_column: str = "input",
    references_column: str = "references",
) -> LabelledDataset:
    """Validate ``(line, row_dict)`` records into a :class:`LabelledDataset` (see :func:`load_dataset`).

    >>> data = build_dataset(enumerate([{"output": "a", "score": 1}, {"output": "b", "score": 0}], 1))
    >>> data.label_kind("score")
    'binary'
    """
    records = list(records)
    if not records:
        raise DatasetError(f"{source}: no rows; a labelled dataset needs at least one labelled output")
    first_line, first = records[0]
    columns = list(first)
    if output_column not in first:
        raise DatasetError(
            f"{source}, line {first_line}: no column {output_column!r} (columns: {', '.join(columns)}); "
            f"name the generated text column {output_column!r} or pass output_column=..."
        )
    text_columns = {output_column, input_column, references_column}
    if labels is None:
        chosen = [
            c
            for c in columns
            if c not in text_columns
            and c.lower() not in _RESERVED
            and all(_as_number(r.get(c)) is not None for _, r in records)
        ]
        if target is not None and target not in chosen:
            chosen.insert(0, target)
    else:
        chosen = list(labels)
        if target is not None and target not in chosen:
            chosen.insert(0, target)
    if not chosen:
        raise DatasetError(
            f"{source}: no label column found (a column whose every value is a number or true/false); "
            f"columns are: {', '.join(columns)}; pass target=... naming the human label column"
        )
    for column in chosen:
        if column not in first and all(column not in r for _, r in records):
            raise DatasetError(f"{source}: no label column {column!r}; columns are: {', '.join(columns)}")
    has_input = any(r.get(input_column) not in (None, "") for _, r in records)
    has_refs = any(r.get(references_column) not in (None, "", []) for _, r in records)

    examples: list[LabelledExample] = []
    for line, row in records:
        output = row.get(output_column)
        if not isinstance(output, str) or not output.strip():
            raise DatasetError(
                f"{source}, line {line}, column {output_column!r}: "
                f"{'missing' if output in (None, '') else 'not a text: ' + repr(output)[:60]}; "
                "every row needs the generated text as a non-empty string"
            )
        inp = row.get(input_column) if has_input else None
        if has_input and (not isinstance(inp, str) or not inp.strip()):
            raise DatasetError(
                f"{source}, line {line}, column {input_column!r}: missing or not a text while other rows "
                "have one; give every row its input, or drop the column"
            )
        refs = _references(row.get(references_column), source, line, references_column) if has_refs else None
        if has_refs and not refs:
            raise DatasetError(
                f"{source}, line {line}, column {references_column!r}: no reference while other rows have "
                "them; give every row at least one reference, or drop the column"
            )
        values: dict[str, float] = {}
        for column in chosen:
            value = _as_number(row.get(column))
            if value is None:
                shown = "missing" if row.get(column) in (None, "") else f"not a number: {row.get(column)!r}"
                raise DatasetError(
                    f"{source}, line {line}, column {column!r}: label {shown}; labels are numbers "
                    "(Likert 1-5, 0/1, true/false or any real value); fix the value or remove the row"
                )
            values[column] = value
        examples.append(LabelledExample(output=output, input=inp, references=refs, labels=values, line=line))

    kinds: dict[str, str] = {}
    for column in chosen:
        observed = [e.labels[column] for e in examples]
        forced = (label_kinds or {}).get(column)
        if forced is not None:
            if forced not in LABEL_KINDS:
                raise DatasetError(f"label kind {forced!r} for column {column!r}: use one of {LABEL_KINDS}")
            _check_forced(forced, column, observed, examples, source)
            kinds[column] = forced
        else:
            kinds[column] = infer_label_kind(observed)
        if len(set(observed)) < 2:
            raise DatasetError(
                f"{source}, column {column!r}: every row has the same label ({observed[0]:g}); "
                "a metric cannot be fitted to a constant, label outputs of different quality"
            )
    if sha256 is None:
        canon = json.dumps([[e.output, e.input, e.references, e.labels] for e in examples], sort_keys=True)
        sha256 = hashlib.sha256(canon.encode("utf-8")).hexdigest()
    return LabelledDataset(examples, kinds, source, sha256)


def infer_label_kind(values: Sequence[float]) -> str:
    """``binary`` for values in {0, 1}; ``likert`` for integers spanning at most 11 points; else ``numeric``.

    >>> infer_label_kind([1, 3, 5, 2]), infer_label_kind([0, 1, 1]), infer_label_kind([0.2, 71.5])
    ('likert', 'binary', 'numeric')
    """
    distinct = set(values)
    if distinct <= {0.0, 1.0}:
        return "binary"
    if all(float(v).is_integer() for v in distinct) and max(distinct) - min(distinct) <= 10:
        return "likert"
    return "numeric"


def _check_forced(kind: str, column: str, observed: list[float], examples, source: str) -> None:
    for value, ex in zip(observed, examples):
        if kind == "binary" and value not in (0.0, 1.0):
            raise DatasetError(f"{source}, line {ex.line}, column {column!r}: {value:g} is not a binary label (0 or 1)")
        if kind == "likert" and not float(value).is_integer():
            raise DatasetError(
                f"{source}, line {ex.line}, column {column!r}: {value:g} is not a Likert level (an integer)"
            )


def _as_number(value) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _BINARY_WORDS:
            return _BINARY_WORDS[text]
        try:
            number = float(text)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _references(value, source: str, line: int, column: str) -> tuple[str, ...] | None:
    if value in (None, "", []):
        return None
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise DatasetError(
                    f"{source}, line {line}, column {column!r}: looks like a JSON list but does not parse "
                    f"({exc.msg}); write one reference as plain text or a valid JSON list of strings"
                ) from None
        else:
            return (value,)
    if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise DatasetError(
        f"{source}, line {line}, column {column!r}: references must be a string or a list of strings, "
        f"got {type(value).__name__}"
    )


def _read_jsonl(path: Path, raw: bytes):
    from nlgeval_runtime.jsonlines import rows_from_text

    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    return rows_from_text(text, str(path), error=DatasetError, allow_list=False)


def _read_csv(path: Path, raw: bytes):
    import io

    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DatasetError(f"{path}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    if not reader.fieldnames:
        raise DatasetError(f"{path}: empty CSV; the first line must be a header naming the columns")
    row_start = 2
    for row in reader:
        if None in row:
            raise DatasetError(
                f"{path}, line {row_start}: more fields than the header has columns; quote fields that contain commas"
            )
        yield row_start, {k: v for k, v in row.items()}
        row_start = reader.line_num + 1
