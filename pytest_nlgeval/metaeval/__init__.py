"""Meta-evaluation: how well a metric agrees with human judgments.

Protocol (the UniEval tables; the meta-evaluation code of maszhongming/UniEval):

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

Modules: :mod:`~pytest_nlgeval.metaeval.records` (the human judgments), :mod:`~pytest_nlgeval.metaeval.values`
(a metric's value per record), :mod:`~pytest_nlgeval.metaeval.statistics` (coefficients, levels, bootstrap)
and :mod:`~pytest_nlgeval.metaeval.protocol` (the table of every metric against every dimension). The public
names are importable from this package. The meta-evaluation of
trajectory scores is :mod:`pytest_nlgeval.trajectory.metaeval`.
"""

from pytest_nlgeval.metaeval.protocol import MetaEvalResult, meta_evaluate
from pytest_nlgeval.metaeval.records import (
    PRECOMPUTED,
    MetaEvalError,
    Record,
    load_records,
    parse_records,
)
from pytest_nlgeval.metaeval.statistics import (
    COEFFICIENTS,
    LEVELS,
    Correlation,
    correlate,
)
from pytest_nlgeval.metaeval.values import (
    MetricSpec,
    MetricValues,
    compute_metric_values,
    evaluator_values,
)

__all__ = [
    "COEFFICIENTS",
    "LEVELS",
    "PRECOMPUTED",
    "Correlation",
    "MetaEvalError",
    "MetaEvalResult",
    "MetricSpec",
    "MetricValues",
    "Record",
    "compute_metric_values",
    "correlate",
    "evaluator_values",
    "load_records",
    "meta_evaluate",
    "parse_records",
]
