"""The meta-evaluation protocol: every metric against every human dimension at one level, as one table.

:func:`meta_evaluate` checks that the records carry what the level needs (``doc_id`` for summary level,
``system_id`` for system level), computes each metric's values (:mod:`~pytest_nlgeval.metaeval.values`),
correlates them with each human dimension (:mod:`~pytest_nlgeval.metaeval.statistics`) and returns a
:class:`MetaEvalResult` that prints as a table, Markdown or JSON.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from pytest_nlgeval.metaeval.records import MetaEvalError, Record, _rwhere, parse_records
from pytest_nlgeval.metaeval.statistics import COEFFICIENTS, LEVELS, Correlation, correlate
from pytest_nlgeval.metaeval.values import MetricSpec, MetricValues, compute_metric_values


@dataclass
class MetaEvalResult:
    """Correlations of every metric with every human dimension, plus how they were computed."""

    level: str
    rows: list[Correlation]
    signatures: dict[str, str]
    n_records: int
    n_bootstrap: int
    confidence: float
    seed: int
    source: str | None = None

    def get(self, metric: str, dimension: str) -> Correlation:
        for r in self.rows:
            if r.metric == metric and r.dimension == dimension:
                return r
        raise KeyError(f"no row for metric {metric!r} and dimension {dimension!r}")

    def to_dict(self) -> dict:
        return {
            "level": self.level,
            "n_records": self.n_records,
            "source": self.source,
            "bootstrap": {
                "n": self.n_bootstrap,
                "confidence": self.confidence,
                "seed": self.seed,
                "resample": "documents",
                "interval": "percentile",
            },
            "signatures": self.signatures,
            "rows": [r.to_dict() for r in self.rows],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def _cells(self, r: Correlation) -> list[str]:
        cells = [r.metric, r.dimension, str(r.n) + (f" (-{r.skipped})" if r.skipped else "")]
        for c in COEFFICIENTS:
            v = r.value(c)
            s = "n/a" if math.isnan(v) else f"{v:.3f}"
            if c in r.intervals and not math.isnan(r.intervals[c][0]):
                lo, hi = r.intervals[c]
                s += f" [{lo:.3f}, {hi:.3f}]"
            cells.append(s)
        return cells

    def _header(self) -> list[str]:
        unit = {"sample": "samples", "summary": "docs", "system": "systems"}[self.level]
        return ["metric", "dimension", unit, *COEFFICIENTS]

    def _footer(self) -> str:
        ci = (
            (
                f"{self.confidence:.0%} bootstrap intervals over documents "
                f"({self.n_bootstrap} replicates, seed {self.seed})"
            )
            if self.n_bootstrap
            else "no bootstrap"
        )
        skip = "; (-k): documents skipped for constant scores" if self.level == "summary" else ""
        return f"{self.level}-level correlations on {self.n_records} records; {ci}{skip}"

    def to_table(self) -> str:
        header = self._header()
        body = [self._cells(r) for r in self.rows]
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)) for row in body]
        lines += ["", self._footer()]
        lines += [f"  {name}: {sig}" for name, sig in self.signatures.items()]
        return "\n".join(lines)

    def to_markdown(self) -> str:
        header = self._header()
        lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
        lines += ["| " + " | ".join(self._cells(r)) + " |" for r in self.rows]
        lines += ["", self._footer() + ".", ""]
        lines += [f"- `{name}`: `{sig}`" for name, sig in self.signatures.items()]
        return "\n".join(lines)

    def to_wide(self, coefficients: Sequence[str] = ("spearman", "kendall"), markdown: bool = False) -> str:
        """One table per coefficient: a row per metric, a column per dimension, and their average.

        A cell is the coefficient with its bootstrap interval; ``avg`` is the plain mean over dimensions.
        """
        metrics = list(dict.fromkeys(r.metric for r in self.rows))
        dims = list(dict.fromkeys(r.dimension for r in self.rows))
        blocks = []
        for c in coefficients:
            if c not in COEFFICIENTS:
                raise MetaEvalError(f"unknown coefficient {c!r}; choose from {', '.join(COEFFICIENTS)}")
            header = [f"{c} ({self.level} level)", *dims, "avg"]
            body = []
            for m in metrics:
                cells, values = [m], []
                for d in dims:
                    r = self.get(m, d)
                    v = r.value(c)
                    values.append(v)
                    cell = "n/a" if math.isnan(v) else f"{v:.3f}"
                    if c in r.intervals and not math.isnan(r.intervals[c][0]):
                        cell += f" [{r.intervals[c][0]:.2f}, {r.intervals[c][1]:.2f}]"
                    cells.append(cell)
                finite = [v for v in values if not math.isnan(v)]
                cells.append(f"{sum(finite) / len(finite):.3f}" if finite else "n/a")
                body.append(cells)
            if markdown:
                lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
                lines += ["| " + " | ".join(row) + " |" for row in body]
            else:
                widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
                lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)), "  ".join("-" * w for w in widths)]
                lines += ["  ".join(x.ljust(w) for x, w in zip(row, widths)) for row in body]
            blocks.append("\n".join(lines))
        footer = self._footer() + ("." if markdown else "")
        sigs = [(f"- `{n}`: `{sig}`" if markdown else f"  {n}: {sig}") for n, sig in self.signatures.items()]
        return "\n\n".join(blocks) + "\n\n" + footer + "\n" + "\n".join(sigs)


def _dimensions(records: Sequence[Record], requested: Sequence[str] | None) -> list[str]:
    dims = list(requested) if requested else list(records[0].scores)
    for r in records:
        for d in dims:
            if d not in r.scores:
                hint = "" if requested else " (the dimensions of record 0 are used unless --dimension is given)"
                raise MetaEvalError(f"{_rwhere(r)}: field 'scores' has no {d!r} entry{hint}")
    return dims


def meta_evaluate(
    records: Sequence[Record] | Sequence[Mapping],
    metrics: Sequence[str | MetricSpec],
    level: str = "summary",
    *,
    dimensions: Sequence[str] | None = None,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    source: str | None = None,
    jobs: int = 1,
) -> MetaEvalResult:
    """Correlate each metric with each human dimension of ``records`` at ``level``.

    ``records`` are :class:`Record` objects or raw dicts (validated here). ``metrics`` are names of the
    metric bank (``"rouge2"``), names with options (``"rouge2:multi_ref=mean"``), or ``"predict_scores"``
    (``"predict_scores.coherence"``) for scores precomputed in the records, or :class:`MetricValues`
    already computed (:func:`evaluator_values`). ``jobs`` processes score each metric (see
    :func:`compute_metric_values`).
    """
    if level not in LEVELS:
        raise MetaEvalError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    if not metrics:
        raise MetaEvalError("no metric given; name at least one (see `nlgeval metrics list`)")
    if n_bootstrap < 0:
        raise MetaEvalError(f"n_bootstrap must be >= 0, got {n_bootstrap}")
    if jobs < 1:
        raise MetaEvalError(f"jobs must be >= 1, got {jobs}")
    recs: list[Any] = list(records)
    if recs and not isinstance(recs[0], Record):
        recs = parse_records(recs)
    if not recs:
        raise MetaEvalError("no records to meta-evaluate")
    if level == "summary":
        missing = [r for r in recs if r.doc_id is None]
        if missing:
            raise MetaEvalError(f"{_rwhere(missing[0])}: summary-level correlation needs field 'doc_id'")
    if level == "system":
        missing = [r for r in recs if r.system_id is None]
        if missing:
            raise MetaEvalError(f"{_rwhere(missing[0])}: system-level correlation needs field 'system_id'")
    dims = _dimensions(recs, dimensions)
    doc_ids = [r.doc_id for r in recs] if all(r.doc_id is not None for r in recs) else None
    system_ids = [r.system_id for r in recs] if level == "system" else None
    import numpy as np

    rows: list[Correlation] = []
    signatures: dict[str, str] = {}
    for spec in metrics:
        mv = spec if isinstance(spec, MetricValues) else compute_metric_values(recs, spec, jobs=jobs)
        signatures[mv.label] = mv.signature
        for d in dims:
            human = np.array([r.scores[d] for r in recs], dtype=float)
            rows.append(
                correlate(
                    mv.for_dimension(d),
                    human,
                    level,
                    doc_ids,
                    system_ids,
                    n_bootstrap=n_bootstrap,
                    confidence=confidence,
                    seed=seed,
                    metric=mv.label,
                    dimension=d,
                )
            )
    return MetaEvalResult(level, rows, signatures, len(recs), n_bootstrap, confidence, seed, source)
