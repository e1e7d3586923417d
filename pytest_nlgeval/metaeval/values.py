"""Metric values for meta-evaluation: a metric of the bank, a Boolean-QA evaluator, or scores precomputed
in the records, one value per record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pytest_nlgeval.metaeval.records import PRECOMPUTED, MetaEvalError, Record, _rwhere


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


def _scores(record: Record) -> Any:
    return record.predict_scores


def _precomputed(records: Sequence[Record], key: str | None) -> MetricValues:
    import numpy as np

    label = PRECOMPUTED if key is None else f"{PRECOMPUTED}.{key}"
    first: Any = records[0].predict_scores
    for r in records:
        p: Any = r.predict_scores
        if p is None:
            raise MetaEvalError(f"{_rwhere(r)}: missing field {PRECOMPUTED!r}, needed by --metric {label}")
        if key is not None and (not isinstance(p, Mapping) or key not in p):
            raise MetaEvalError(f"{_rwhere(r)}: field '{PRECOMPUTED}' has no entry {key!r}")
        if key is None and isinstance(p, Mapping) != isinstance(first, Mapping):
            raise MetaEvalError(
                f"{_rwhere(r)}: field {PRECOMPUTED!r} is a {'number' if isinstance(first, Mapping) else 'object'} "
                f"here but a{'n object' if isinstance(first, Mapping) else ' number'} in record 0; "
                "use one form throughout"
            )
    values: Any
    if key is not None:
        values = np.array([_scores(r)[key] for r in records], dtype=float)
    elif isinstance(first, Mapping):
        dims = set(first)
        for r in records:
            missing = dims - set(_scores(r))
            if missing:
                raise MetaEvalError(f"{_rwhere(r)}: field '{PRECOMPUTED}' lacks {sorted(missing)} (record 0 has them)")
        values = {d: np.array([_scores(r)[d] for r in records], dtype=float) for d in sorted(dims)}
    else:
        values = np.array([r.predict_scores for r in records], dtype=float)
    return MetricValues(label, "precomputed:" + label, True, values)


def evaluator_values(
    records: Sequence[Record],
    model: str | None,
    dimensions: Sequence[str],
    *,
    task: str = "summarization",
    source_windows: str = "auto",
    label: str | None = None,
    multi_ref: str = "first",
    evaluator_options: Mapping[str, Any] | None = None,
) -> MetricValues:
    """The scores of a Boolean-QA evaluator on every record, one array per human dimension.

    Each human dimension is matched with the evaluator's dimension of the same name in ``task`` (the
    human ``coherence`` rating against the model's coherence score, and so on), scored with the UniEval
    inputs of UniEval's public code, maszhongming/UniEval: the record's ``source`` is the document; dimensions that read
    a reference (relevance) use the first one, as UniEval's SummEval protocol has one reference per
    document (``multi_ref="mean"`` scores every reference and averages, at that many times the cost); for dialogue,
    ``source`` is the dialogue history and ``context`` the fact (the UniEval data layout).
    ``model`` is a model folder, a Hugging Face id, or None for the embedded default.
    """
    import numpy as np

    from pytest_nlgeval.core.dimensions import DimensionError, DimensionRegistry
    from pytest_nlgeval.core.evaluator import Evaluator
    from pytest_nlgeval.metrics import MetricInputError
    from pytest_nlgeval.metrics.unieval import UniEvalDimension

    registry = DimensionRegistry()
    for d in dimensions:
        try:
            registry.get(d, task)
        except DimensionError as exc:
            raise MetaEvalError(
                f"human dimension {d!r} has no evaluator dimension of that name: {exc}; "
                "choose the rated dimensions to compare with --dimension"
            ) from None
    options = dict(evaluator_options or {})
    evaluator_class = options.pop("evaluator_class", Evaluator)  # e.g. the Ray engine's RayEvaluator
    evaluator = evaluator_class(model, source_windows=source_windows, **options)
    values: dict[str, Any] = {}
    outputs = [r.output for r in records]
    for d in dimensions if task == "rag" else ():
        values[d] = np.asarray(_rag_values(evaluator, records, d), dtype=float)
    for d in dimensions if task != "rag" else ():
        metric = UniEvalDimension(task, d, evaluator=evaluator, multi_ref=multi_ref)
        for r in records:
            if metric.needs_references and not r.references:
                raise MetaEvalError(f"{_rwhere(r)}: {task}/{d} needs the record's 'reference' or 'references'")
            if metric.needs_input and r.source is None:
                raise MetaEvalError(f"{_rwhere(r)}: {task}/{d} needs the record's 'source'")
            if metric.needs_context and r.context is None:
                raise MetaEvalError(f"{_rwhere(r)}: {task}/{d} needs the record's 'context' (the fact)")
        try:
            scored = metric.score_batch(
                outputs,
                [r.source for r in records],
                [list(r.references) if r.references else None for r in records],
                contexts=[r.context for r in records],
            )
        except MetricInputError as exc:
            raise MetaEvalError(f"{task}/{d}: {exc} (output i is record i)") from None
        values[d] = np.asarray(scored, dtype=float)
    name = label or f"{model or 'default'} ({'windows' if source_windows == 'auto' else 'no windows'})"
    signature = (
        f"evaluator:{evaluator.model_ref}|task:{task}|windows:{source_windows}|refs:{multi_ref}|"
        f"fingerprint:{evaluator.fingerprint_id}"
    )
    evaluator.close()
    return MetricValues(name, signature, True, values)


#: what each rag dimension reads from a record, besides the answer (``system_output``)
_RAG_NEEDS = {
    "faithfulness": ("contexts",),
    "answer_relevance": ("question",),
    "context_relevance": ("question", "contexts"),
    "context_recall": ("contexts", "reference"),
}


def _rag_values(evaluator, records: Sequence[Record], dimension: str) -> list[float]:
    """Scores of a rag dimension: the record's ``question``, ``contexts`` (the retrieved passages) and first
    reference are the dimension's inputs."""
    needs = _RAG_NEEDS.get(dimension, ("question", "contexts", "reference"))
    for r in records:
        for need in needs:
            have = r.references if need == "reference" else getattr(r, need)
            if not have:
                raise MetaEvalError(
                    f"{_rwhere(r)}: rag/{dimension} needs the record's {need!r}"
                    + (" (a list of retrieved passages)" if need == "contexts" else "")
                )
    inputs: dict[str, Any] = {}
    if "question" in needs:
        inputs["questions"] = [r.question for r in records]
    if "contexts" in needs:
        inputs["contexts"] = [list(r.contexts or ()) for r in records]
    if "reference" in needs:
        inputs["references"] = [(r.references or ("",))[0] for r in records]
    return evaluator.score_batch([r.output for r in records], dimension, task="rag", **inputs)


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
        futures = [
            pool.submit(_score_chunk, spec.name, dict(spec.options), *(col[a:b] for col in columns)) for a, b in bounds
        ]
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
            raise MetaEvalError(
                f"{_rwhere(r)}: metric {spec.name!r} needs the input text, but the record has no 'source' field"
            )
        if getattr(metric, "needs_context", False) and r.context is None:
            raise MetaEvalError(f"{_rwhere(r)}: metric {spec.name!r} needs the 'context' field (fact/knowledge)")
    columns = (
        [r.output for r in records],
        [r.source for r in records],
        [list(r.references) if r.references else None for r in records],
        [r.context for r in records],
    )
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
        raise MetaEvalError(
            f"{_rwhere(records[int(bad[0])])}: metric {spec.name!r} gave a non-finite value ({arr[bad[0]]})"
        )
    return MetricValues(spec.label, metric.signature, metric.higher_is_better, arr)
