"""Meta-evaluation: how well a metric agrees with human judgments.

Protocol (the UniEval tables; REFERENCE.md section 2):

* correlations are Pearson, Spearman and Kendall's tau-b (scipy.stats);
* ``sample`` level pools every (output, human score) pair (Topical-Chat, QAGS, data-to-text);
* ``summary`` level computes the correlation across the system outputs of each document separately,
  skips documents where the metric or the human scores are constant (the correlation is undefined),
  and averages over the remaining documents (SummEval);
* ``system`` level correlates the per-system means of metric and human scores.

95% intervals are percentile bootstrap intervals over documents (Efron & Tibshirani, 1993): a replicate
draws documents with replacement and keeps all outputs of a drawn document, so the interval reflects
the uncertainty of having sampled these documents. At summary level a replicate averages the drawn
documents' correlations; at sample and system level the statistic is recomputed on the replicate. The
generator is seeded, so the same data and seed give the same interval.

Input: a JSON list (or JSON Lines) of records in the UniEval layout::

    {"doc_id": "d1", "system_id": "M8", "source": "...", "reference": "..." | "references": [...],
     "system_output": "...", "context": "...", "scores": {"coherence": 3.7, ...},
     "predict_scores": 0.61 | {"coherence": 0.61, ...}}   # optional precomputed metric

Example::

    >>> from pytest_nlgeval.metaeval import load_records, meta_evaluate
    >>> records = load_records("summeval.json")                     # doctest: +SKIP
    >>> result = meta_evaluate(records, ["rouge2"], level="summary")  # doctest: +SKIP
    >>> print(result.to_markdown())                                  # doctest: +SKIP
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

LEVELS = ("sample", "summary", "system")
COEFFICIENTS = ("pearson", "spearman", "kendall")
PRECOMPUTED = "predict_scores"


class MetaEvalError(ValueError):
    """Bad meta-evaluation input: names the record index and the field, and says how to fix it."""


# ---------------------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Record:
    """One rated system output."""

    index: int
    doc_id: str | None
    system_id: str | None
    output: str
    source: str | None
    references: tuple[str, ...] | None
    context: str | None
    scores: Mapping[str, float]
    predict_scores: float | Mapping[str, float] | None = None


def _where(i: int, rec: Mapping | None = None) -> str:
    ids = ""
    if isinstance(rec, Mapping):
        bits = [f"{k}={rec[k]!r}" for k in ("doc_id", "system_id") if k in rec]
        ids = f" ({', '.join(bits)})" if bits else ""
    return f"record {i}{ids}"


def _rwhere(r: "Record") -> str:
    bits = [f"{k}={v!r}" for k, v in (("doc_id", r.doc_id), ("system_id", r.system_id)) if v is not None]
    return f"record {r.index}" + (f" ({', '.join(bits)})" if bits else "")


def _number(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MetaEvalError(f"{what} must be a number, got {type(value).__name__} {value!r:.60}")
    v = float(value)
    if not math.isfinite(v):
        raise MetaEvalError(f"{what} is {v}; human and metric scores must be finite numbers")
    return v


def _optional_text(rec: Mapping, key: str, where: str) -> str | None:
    if key not in rec or rec[key] is None:
        return None
    value = rec[key]
    if isinstance(value, list) and key == "context":
        if not all(isinstance(v, str) for v in value):
            raise MetaEvalError(f"{where}: field {key!r} must be a string or a list of strings")
        return "\n".join(value)
    if not isinstance(value, str):
        raise MetaEvalError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    return value


def parse_records(data: Any, origin: str = "data") -> list[Record]:
    """Validate raw records (a list of dicts) and return :class:`Record` objects.

    Every error names the record index, the field and the fix.
    """
    if not isinstance(data, list):
        raise MetaEvalError(f"{origin}: expected a JSON list of records, got {type(data).__name__}")
    if not data:
        raise MetaEvalError(f"{origin}: the list of records is empty")
    records = []
    for i, rec in enumerate(data):
        where = f"{origin}: {_where(i, rec)}"
        if not isinstance(rec, Mapping):
            raise MetaEvalError(f"{where}: expected an object, got {type(rec).__name__}")
        if "system_output" not in rec:
            raise MetaEvalError(f"{where}: missing field 'system_output' (the generated text that was rated)")
        output = rec["system_output"]
        if not isinstance(output, str):
            raise MetaEvalError(f"{where}: field 'system_output' must be a string, got {type(output).__name__}")
        scores = rec.get("scores")
        if not isinstance(scores, Mapping) or not scores:
            raise MetaEvalError(
                f"{where}: field 'scores' must be a non-empty object of human scores, e.g. {{\"coherence\": 3.7}}"
            )
        human = {str(k): _number(v, f"{where}: field 'scores.{k}'") for k, v in scores.items()}
        refs = None
        if rec.get("references") is not None:
            r = rec["references"]
            if isinstance(r, str):
                r = [r]
            if not isinstance(r, list) or not all(isinstance(x, str) for x in r):
                raise MetaEvalError(f"{where}: field 'references' must be a list of strings")
            refs = tuple(r)
        elif rec.get("reference") is not None:
            r = rec["reference"]
            if isinstance(r, list) and all(isinstance(x, str) for x in r):
                refs = tuple(r)
            elif isinstance(r, str):
                refs = (r,)
            else:
                raise MetaEvalError(f"{where}: field 'reference' must be a string (or use 'references': [...])")
        pred = rec.get(PRECOMPUTED)
        if pred is not None:
            if isinstance(pred, Mapping):
                pred = {str(k): _number(v, f"{where}: field '{PRECOMPUTED}.{k}'") for k, v in pred.items()}
            else:
                pred = _number(pred, f"{where}: field '{PRECOMPUTED}'")
        doc_id = rec.get("doc_id")
        system_id = rec.get("system_id")
        records.append(Record(
            index=i,
            doc_id=None if doc_id is None else str(doc_id),
            system_id=None if system_id is None else str(system_id),
            output=output,
            source=_optional_text(rec, "source", where),
            references=refs,
            context=_optional_text(rec, "context", where),
            scores=human,
            predict_scores=pred,
        ))
    return records


def load_records(path: str | Path) -> list[Record]:
    """Read records from a JSON list (``.json``) or JSON Lines (``.jsonl``) file, either gzip-compressed
    (``.gz``)."""
    p = Path(path)
    if not p.is_file():
        raise MetaEvalError(f"{path}: no such file")
    suffixes = p.suffixes[-2:] if p.suffix == ".gz" else p.suffixes[-1:]
    try:
        if p.suffix == ".gz":
            import gzip

            with gzip.open(p, "rt", encoding="utf-8") as handle:
                text = handle.read()
        else:
            text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MetaEvalError(f"{path}: cannot read it ({exc}); give a UTF-8 .json/.jsonl file, optionally .gz") from None
    try:
        if suffixes[0] == ".jsonl":
            data = []
            for n, line in enumerate(text.splitlines(), 1):
                if line.strip():
                    try:
                        data.append(json.loads(line))
                    except json.JSONDecodeError as exc:
                        raise MetaEvalError(f"{path}: line {n} is not valid JSON ({exc.msg})") from None
        else:
            data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MetaEvalError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
    return parse_records(data, origin=str(path))


# ---------------------------------------------------------------------------------------------------
# metric values
# ---------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MetricSpec:
    """A metric name with constructor options: ``rouge2`` or ``rouge2:multi_ref=mean,use_stemmer=true``."""

    name: str
    options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def label(self) -> str:
        if not self.options:
            return self.name
        return self.name + ":" + ",".join(f"{k}={v}" for k, v in self.options.items())

    @classmethod
    def parse(cls, text: str) -> "MetricSpec":
        name, _, opts = text.partition(":")
        if not name:
            raise MetaEvalError(f"metric {text!r}: empty name; write NAME or NAME:option=value,...")
        options: dict[str, Any] = {}
        for part in filter(None, (p.strip() for p in opts.split(","))):
            key, eq, value = part.partition("=")
            if not eq or not key:
                raise MetaEvalError(f"metric {text!r}: option {part!r} is not key=value")
            options[key.strip()] = _literal(value.strip())
        return cls(name, options)


def _literal(value: str):
    low = value.lower()
    if low in ("true", "yes"):
        return True
    if low in ("false", "no"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


@dataclass
class MetricValues:
    """Metric values for every record: one array, or one per dimension (``predict_scores`` dicts)."""

    label: str
    signature: str
    higher_is_better: bool
    values: Any  # np.ndarray, or dict dimension -> np.ndarray

    def for_dimension(self, dimension: str):
        if isinstance(self.values, dict):
            if dimension not in self.values:
                raise MetaEvalError(f"{self.label}: the records' predict_scores have no {dimension!r} entry")
            return self.values[dimension]
        return self.values


def _precomputed(records: Sequence[Record], key: str | None) -> MetricValues:
    import numpy as np

    label = PRECOMPUTED if key is None else f"{PRECOMPUTED}.{key}"
    first = records[0].predict_scores
    for r in records:
        p = r.predict_scores
        if p is None:
            raise MetaEvalError(f"{_rwhere(r)}: missing field {PRECOMPUTED!r}, needed by --metric {label}")
        if key is not None and (not isinstance(p, Mapping) or key not in p):
            raise MetaEvalError(f"{_rwhere(r)}: field '{PRECOMPUTED}' has no entry {key!r}")
        if key is None and isinstance(p, Mapping) != isinstance(first, Mapping):
            raise MetaEvalError(
                f"{_rwhere(r)}: field {PRECOMPUTED!r} is a {'number' if isinstance(first, Mapping) else 'object'} "
                f"here but a{'n object' if isinstance(first, Mapping) else ' number'} in record 0; use one form throughout"
            )
    if key is not None:
        values = np.array([r.predict_scores[key] for r in records], dtype=float)
    elif isinstance(first, Mapping):
        dims = set(first)
        for r in records:
            missing = dims - set(r.predict_scores)
            if missing:
                raise MetaEvalError(f"{_rwhere(r)}: field '{PRECOMPUTED}' lacks {sorted(missing)} (record 0 has them)")
        values = {d: np.array([r.predict_scores[d] for r in records], dtype=float) for d in sorted(dims)}
    else:
        values = np.array([r.predict_scores for r in records], dtype=float)
    return MetricValues(label, "precomputed:" + label, True, values)


def evaluator_values(records: Sequence[Record], model: str | None, dimensions: Sequence[str], *,
                     task: str = "summarization", source_windows: str = "auto", label: str | None = None,
                     multi_ref: str = "first", evaluator_options: Mapping[str, Any] | None = None) -> MetricValues:
    """The scores of a Boolean-QA evaluator on every record, one array per human dimension.

    Each human dimension is matched with the evaluator's dimension of the same name in ``task`` (the
    human ``coherence`` rating against the model's coherence score, and so on), scored with the UniEval
    inputs of REFERENCE.md section 1: the record's ``source`` is the document; dimensions that read a
    reference (relevance) use the first one, as UniEval's SummEval protocol has one reference per
    document (``multi_ref="mean"`` scores every reference and averages, at that many times the cost); for dialogue, ``source`` is the dialogue history and
    ``context`` the fact (the UniEval data layout).
    ``model`` is a model folder, a Hugging Face id, or None for the embedded default.
    """
    import numpy as np

    from pytest_nlgeval.dimensions import DimensionError, DimensionRegistry
    from pytest_nlgeval.evaluator import Evaluator
    from pytest_nlgeval.metrics import MetricInputError
    from pytest_nlgeval.metrics.unieval import UniEvalDimension

    registry = DimensionRegistry()
    for d in dimensions:
        try:
            registry.get(d, task)
        except DimensionError as exc:
            raise MetaEvalError(f"human dimension {d!r} has no evaluator dimension of that name: {exc}; "
                                "choose the rated dimensions to compare with --dimension") from None
    evaluator = Evaluator(model, source_windows=source_windows, **dict(evaluator_options or {}))
    values: dict[str, Any] = {}
    outputs = [r.output for r in records]
    for d in dimensions:
        metric = UniEvalDimension(task, d, evaluator=evaluator, multi_ref=multi_ref)
        for r in records:
            if metric.needs_references and not r.references:
                raise MetaEvalError(f"{_rwhere(r)}: {task}/{d} needs the record's 'reference' or 'references'")
            if metric.needs_input and r.source is None:
                raise MetaEvalError(f"{_rwhere(r)}: {task}/{d} needs the record's 'source'")
            if metric.needs_context and r.context is None:
                raise MetaEvalError(f"{_rwhere(r)}: {task}/{d} needs the record's 'context' (the fact)")
        try:
            scored = metric.score_batch(outputs, [r.source for r in records],
                                        [list(r.references) if r.references else None for r in records],
                                        contexts=[r.context for r in records])
        except MetricInputError as exc:
            raise MetaEvalError(f"{task}/{d}: {exc} (output i is record i)") from None
        values[d] = np.asarray(scored, dtype=float)
    name = label or f"{model or 'default'} ({'windows' if source_windows == 'auto' else 'no windows'})"
    signature = (f"evaluator:{evaluator.model_ref}|task:{task}|windows:{source_windows}|refs:{multi_ref}|"
                 f"fingerprint:{evaluator.fingerprint_id}")
    evaluator.close()
    return MetricValues(name, signature, True, values)


def _score_chunk(name: str, options: dict, outputs, inputs, references, contexts) -> list[float]:
    """Worker of :func:`compute_metric_values` with ``jobs > 1``: builds its own metric object."""
    from pytest_nlgeval.metrics import get_metric

    return get_metric(name, **options).score_batch(outputs, inputs, references, contexts=contexts)


def _parallel_scores(spec: "MetricSpec", records: Sequence[Record], columns, jobs: int) -> list[float]:
    """Split the records into ``jobs`` contiguous chunks on document boundaries (outputs of one document
    share references, which the lexical metrics exploit) and score them in worker processes."""
    from concurrent.futures import ProcessPoolExecutor

    n = len(records)
    bounds, start = [], 0
    for k in range(1, jobs + 1):
        end = max(start, round(n * k / jobs))
        while 0 < end < n and records[end].doc_id is not None and records[end].doc_id == records[end - 1].doc_id:
            end += 1
        if end > start:
            bounds.append((start, end))
        start = end
    with ProcessPoolExecutor(max_workers=len(bounds)) as pool:
        futures = [pool.submit(_score_chunk, spec.name, dict(spec.options), *(col[a:b] for col in columns))
                   for a, b in bounds]
        return [v for f in futures for v in f.result()]


def compute_metric_values(records: Sequence[Record], spec: MetricSpec | str, jobs: int = 1) -> MetricValues:
    """Score every record's output with one metric of the bank (or read ``predict_scores``).

    ``jobs > 1`` scores chunks of documents in that many processes (for CPU-bound metrics such as
    chrF or TER; model-based metrics would load their model once per process).
    """
    import numpy as np

    from pytest_nlgeval.metrics import MetricInputError, get_metric

    if isinstance(spec, str):
        spec = MetricSpec.parse(spec)
    if spec.name == PRECOMPUTED or spec.name.startswith(PRECOMPUTED + "."):
        if spec.options:
            raise MetaEvalError(f"{spec.label}: precomputed scores take no options")
        key = spec.name[len(PRECOMPUTED) + 1 :] or None
        return _precomputed(records, key)
    try:
        metric = get_metric(spec.name, **dict(spec.options))
    except (KeyError, TypeError, ValueError) as exc:
        raise MetaEvalError(f"--metric {spec.label}: {exc}") from None
    # check the fields each metric needs before scoring, so the error names the record and field
    for r in records:
        if metric.needs_references and not r.references:
            raise MetaEvalError(
                f"{_rwhere(r)}: metric {spec.name!r} needs references, but the record has no "
                "'reference' or 'references' field"
            )
        if metric.needs_input and r.source is None:
            raise MetaEvalError(f"{_rwhere(r)}: metric {spec.name!r} needs the input text, but the record has no 'source' field")
        if getattr(metric, "needs_context", False) and r.context is None:
            raise MetaEvalError(f"{_rwhere(r)}: metric {spec.name!r} needs the 'context' field (fact/knowledge)")
    columns = ([r.output for r in records], [r.source for r in records],
               [list(r.references) if r.references else None for r in records], [r.context for r in records])
    try:
        if jobs > 1 and len(records) > 1:
            values = _parallel_scores(spec, records, columns, jobs)
        else:
            values = metric.score_batch(*columns[:3], contexts=columns[3])
    except MetricInputError as exc:
        raise MetaEvalError(f"--metric {spec.label}: {exc} (output i is record i)") from None
    arr = np.asarray(values, dtype=float)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise MetaEvalError(f"{_rwhere(records[int(bad[0])])}: metric {spec.name!r} gave a non-finite value ({arr[bad[0]]})")
    return MetricValues(spec.label, metric.signature, metric.higher_is_better, arr)


# ---------------------------------------------------------------------------------------------------
# correlations
# ---------------------------------------------------------------------------------------------------
def _corr3(x, y) -> tuple[float, float, float]:
    """Pearson, Spearman, Kendall tau-b (scipy); NaN when either side is constant or n < 2."""
    import numpy as np
    from scipy import stats

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return (math.nan, math.nan, math.nan)
    return (
        float(stats.pearsonr(x, y)[0]),
        float(stats.spearmanr(x, y)[0]),
        float(stats.kendalltau(x, y)[0]),
    )


def _pearson_np(x, y) -> float:
    import numpy as np

    xc = x - x.mean()
    yc = y - y.mean()
    denom = math.sqrt(float(xc @ xc) * float(yc @ yc))
    return max(-1.0, min(1.0, float(xc @ yc) / denom)) if denom > 0 else math.nan


def _kendall_b_np(x, y) -> float:
    """Kendall's tau-b by the O(n^2) pair definition (the same statistic scipy computes in O(n log n))."""
    import numpy as np

    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    iu = np.triu_indices(len(x), 1)
    sx, sy = sx[iu], sy[iu]
    n0 = sx.size
    denom = math.sqrt(float(np.count_nonzero(sx)) * float(np.count_nonzero(sy)))
    return float((sx * sy).sum()) / denom if denom > 0 and n0 else math.nan


def _fast_corr3(x, y) -> tuple[float, float, float]:
    """The statistics of :func:`_corr3` without scipy's per-call overhead, for bootstrap replicates
    (tests check they equal scipy's, ties included)."""
    import numpy as np
    from scipy.stats import kendalltau, rankdata

    if len(x) < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return (math.nan, math.nan, math.nan)
    p = _pearson_np(x, y)
    s = _pearson_np(rankdata(x), rankdata(y))
    k = _kendall_b_np(x, y) if len(x) <= 64 else float(kendalltau(x, y)[0])
    return (p, s, k)


@dataclass
class Correlation:
    """Correlations of one metric with one human dimension at one level.

    ``n`` counts what was correlated (samples, documents used, or systems); ``skipped`` counts
    documents left out at summary level because metric or human scores were constant there.
    ``intervals`` maps each coefficient to its (low, high) bootstrap interval.
    """

    metric: str
    dimension: str
    level: str
    n: int
    skipped: int
    pearson: float
    spearman: float
    kendall: float
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)

    def value(self, coefficient: str) -> float:
        return getattr(self, coefficient)

    def to_dict(self) -> dict:
        def clean(v):
            return None if isinstance(v, float) and math.isnan(v) else v

        return {
            "metric": self.metric, "dimension": self.dimension, "level": self.level, "n": self.n,
            "skipped": self.skipped,
            **{c: clean(getattr(self, c)) for c in COEFFICIENTS},
            "intervals": {c: [clean(lo), clean(hi)] for c, (lo, hi) in self.intervals.items()},
        }


def _groups(keys: Sequence[str]) -> tuple[list[str], "Any"]:
    import numpy as np

    uniq = list(dict.fromkeys(keys))
    pos = {k: i for i, k in enumerate(uniq)}
    return uniq, np.array([pos[k] for k in keys], dtype=int)


def _summary_per_doc(x, y, doc_index, n_docs):
    """Per-document (pearson, spearman, kendall) rows; NaN rows for skipped documents."""
    import numpy as np

    rows = np.full((n_docs, 3), np.nan)
    for d in range(n_docs):
        sel = doc_index == d
        rows[d] = _corr3(x[sel], y[sel])
    return rows


def _system_means(values, sys_index, n_sys, weights=None):
    import numpy as np

    w = np.ones_like(values) if weights is None else weights
    totals = np.bincount(sys_index, weights=values * w, minlength=n_sys)
    counts = np.bincount(sys_index, weights=w, minlength=n_sys)
    with np.errstate(invalid="ignore", divide="ignore"):
        return totals / counts, counts


def correlate(
    metric_values,
    human_values,
    level: str,
    doc_ids: Sequence[str] | None = None,
    system_ids: Sequence[str] | None = None,
    *,
    n_bootstrap: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    metric: str = "metric",
    dimension: str = "human",
) -> Correlation:
    """Correlate metric values with human values at ``level`` and bootstrap over documents.

    >>> c = correlate([1, 2, 3, 4], [1, 3, 2, 4], "sample", n_bootstrap=0)
    >>> round(c.spearman, 3), round(c.kendall, 3)
    (0.8, 0.667)
    """
    import numpy as np

    if level not in LEVELS:
        raise MetaEvalError(f"unknown level {level!r}; choose one of {', '.join(LEVELS)}")
    if not 0 < confidence < 1:
        raise MetaEvalError(f"confidence must be in (0, 1), got {confidence}")
    x = np.asarray(metric_values, dtype=float)
    y = np.asarray(human_values, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise MetaEvalError(f"metric and human values must be 1-D and equally long, got {x.shape} and {y.shape}")
    n = len(x)
    if level == "summary" and doc_ids is None:
        raise MetaEvalError("summary-level correlation needs a doc_id for every record")
    if level == "system" and system_ids is None:
        raise MetaEvalError("system-level correlation needs a system_id for every record")
    docs = list(doc_ids) if doc_ids is not None else [str(i) for i in range(n)]  # sample level: each its own cluster
    doc_names, doc_index = _groups(docs)
    n_docs = len(doc_names)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_docs, size=(n_bootstrap, n_docs)) if n_bootstrap > 0 else None
    alpha = (1 - confidence) / 2

    def interval(samples) -> dict[str, tuple[float, float]]:
        out = {}
        for k, c in enumerate(COEFFICIENTS):
            col = samples[:, k]
            col = col[np.isfinite(col)]
            out[c] = (float(np.quantile(col, alpha)), float(np.quantile(col, 1 - alpha))) if col.size else (math.nan, math.nan)
        return out

    if level == "summary":
        rows = _summary_per_doc(x, y, doc_index, n_docs)
        used = np.isfinite(rows[:, 0])
        if not used.any():
            point = (math.nan,) * 3
        else:
            point = tuple(float(v) for v in rows[used].mean(axis=0))
        result = Correlation(metric, dimension, level, int(used.sum()), int(n_docs - used.sum()), *point)
        if draws is not None:
            # a document's correlation does not depend on the other documents: resample the rows
            boot = np.full((n_bootstrap, 3), np.nan)
            for b in range(n_bootstrap):
                picked = rows[draws[b]]
                picked = picked[np.isfinite(picked[:, 0])]
                if picked.size:
                    boot[b] = picked.mean(axis=0)
            result.intervals = interval(boot)
        return result

    if level == "sample":
        result = Correlation(metric, dimension, level, n, 0, *_corr3(x, y))
        if draws is not None:
            members = [np.flatnonzero(doc_index == d) for d in range(n_docs)]
            boot = np.empty((n_bootstrap, 3))
            for b in range(n_bootstrap):
                idx = np.concatenate([members[d] for d in draws[b]])
                boot[b] = _fast_corr3(x[idx], y[idx])
            result.intervals = interval(boot)
        return result

    # system level
    sys_names, sys_index = _groups(list(system_ids))
    n_sys = len(sys_names)
    mx, _ = _system_means(x, sys_index, n_sys)
    my, _ = _system_means(y, sys_index, n_sys)
    result = Correlation(metric, dimension, level, n_sys, 0, *_corr3(mx, my))
    if draws is not None:
        boot = np.empty((n_bootstrap, 3))
        for b in range(n_bootstrap):
            # weight of a record = how often its document was drawn
            w = np.bincount(draws[b], minlength=n_docs)[doc_index].astype(float)
            bx, cnt = _system_means(x, sys_index, n_sys, w)
            by, _ = _system_means(y, sys_index, n_sys, w)
            keep = cnt > 0  # a system with no drawn document has no mean in this replicate
            boot[b] = _fast_corr3(bx[keep], by[keep])
        result.intervals = interval(boot)
    return result


# ---------------------------------------------------------------------------------------------------
# the whole table
# ---------------------------------------------------------------------------------------------------
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
            "level": self.level, "n_records": self.n_records, "source": self.source,
            "bootstrap": {"n": self.n_bootstrap, "confidence": self.confidence, "seed": self.seed,
                          "resample": "documents", "interval": "percentile"},
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
        ci = (f"{self.confidence:.0%} bootstrap intervals over documents ({self.n_bootstrap} replicates, seed {self.seed})"
              if self.n_bootstrap else "no bootstrap")
        skip = "; (-k): documents skipped for constant scores" if self.level == "summary" else ""
        return f"{self.level}-level correlations on {self.n_records} records; {ci}{skip}"

    def to_table(self) -> str:
        header = self._header()
        body = [self._cells(r) for r in self.rows]
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(len(header))]
        lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
                 "  ".join("-" * w for w in widths)]
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
                lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths)),
                         "  ".join("-" * w for w in widths)]
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
    recs = list(records)
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
            rows.append(correlate(mv.for_dimension(d), human, level, doc_ids, system_ids,
                                  n_bootstrap=n_bootstrap, confidence=confidence, seed=seed,
                                  metric=mv.label, dimension=d))
    return MetaEvalResult(level, rows, signatures, len(recs), n_bootstrap, confidence, seed, source)
