"""How large a score change must be before the baseline comparison calls it a regression (or an improvement).

Tolerances are absolute, in the unit of the score. Two kinds:

* the **check tolerance**: one check (one case) may move this much either way;
* the **suite tolerance**: the mean change over all cases of one dimension may move this much. It is smaller
  because a mean over many cases is less noisy than one case, and the paired bootstrap guards it against
  noise (docs/baselines.md).

Built-in defaults (design choices, not measurements; override them per project):

=============== ===== ===== ====================================================================
kind            check suite why
=============== ===== ===== ====================================================================
dimension       0.05  0.02  UniEval scores are probabilities in [0, 1]: 5 points per case, 2 on the mean
engagingness    0.15  0.06  a sum over the response's sentences (UniEval's public code, maszhongming/UniEval):
                            about three sentences
metric          0.25  0.10  induced metrics predict human labels, typically on a 1-5 scale (4 points wide)
trajectory      0.05  0.02  normalised trajectory summaries
aggregate       0.05  0.02  fractions of cases above a threshold, in [0, 1]
judged          0.50  0.20  LLM judges answer on their criterion's scale, 1-5 by default (4 points wide):
                            half a point per case, a fifth of a point on the mean
=============== ===== ===== ====================================================================

Overrides, most specific first: the test's ``@pytest.mark.nlgeval(tolerance=...)`` (check tolerance of that
test's checks); then entries ``SELECTOR = VALUE`` of the ini keys ``nlgeval_baseline_tolerances`` /
``nlgeval_baseline_suite_tolerances`` (or ``nlgeval compare --tolerance`` / ``--suite-tolerance``), where
SELECTOR is ``task/name`` (``summarization/consistency``), ``kind:name`` (``metric:helpfulness``), ``name``
(``fluency``), ``kind:*`` (``metric:*``) or ``*``. Example::

    t = Tolerances.from_specs(["fluency = 0.1", "metric:* = 0.5"], ["* = 0.01"])
    t.for_check("dimension", "summarization", "fluency")   # 0.1
    t.for_suite("dimension", "summarization", "fluency")   # 0.01
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from pytest_nlgeval.baseline.errors import BaselineError

__all__ = ["DEFAULT_CHECK_TOLERANCES", "DEFAULT_SUITE_TOLERANCES", "Tolerances", "parse_tolerance_specs"]

DEFAULT_CHECK_TOLERANCES: Mapping[str, float] = {
    "dimension:*": 0.05,
    "dimension:engagingness": 0.15,
    "metric:*": 0.25,
    "trajectory:*": 0.05,
    "aggregate:*": 0.05,
    "judged:*": 0.5,
    "*": 0.05,
}
DEFAULT_SUITE_TOLERANCES: Mapping[str, float] = {
    "dimension:*": 0.02,
    "dimension:engagingness": 0.06,
    "metric:*": 0.10,
    "trajectory:*": 0.02,
    "aggregate:*": 0.02,
    "judged:*": 0.2,
    "*": 0.02,
}


def parse_tolerance_specs(specs: Iterable[str], source: str = "tolerance") -> dict[str, float]:
    """Parse ``"SELECTOR = VALUE"`` lines (ini linelist or command-line values) into a mapping.

    >>> parse_tolerance_specs(["fluency = 0.1", "metric:* = 0.5"])
    {'fluency': 0.1, 'metric:*': 0.5}
    """
    parsed: dict[str, float] = {}
    for spec in specs:
        spec = spec.strip()
        if not spec or spec.startswith("#"):
            continue
        selector, sep, value = spec.partition("=")
        selector = selector.strip()
        try:
            number = float(value)
        except ValueError:
            number = math.nan
        if not sep or not selector or not math.isfinite(number) or number < 0:
            raise BaselineError(
                f"invalid {source} entry {spec!r}: write SELECTOR = VALUE with a non-negative number, e.g. "
                "'fluency = 0.1', 'summarization/consistency = 0.03', 'metric:* = 0.5' or '* = 0.05'"
            )
        parsed[selector] = number
    return parsed


@dataclass(frozen=True)
class Tolerances:
    """Resolves the check and suite tolerance of a (kind, task, name); see the module docstring."""

    check: Mapping[str, float] = field(default_factory=dict)
    suite: Mapping[str, float] = field(default_factory=dict)

    @classmethod
    def from_specs(cls, check_specs: Iterable[str] = (), suite_specs: Iterable[str] = ()) -> "Tolerances":
        return cls(
            parse_tolerance_specs(check_specs, "check tolerance"), parse_tolerance_specs(suite_specs, "suite tolerance")
        )

    def for_check(self, kind: str, task: str | None, name: str, marker: float | None = None) -> float:
        """The tolerance of one check; a marker's tolerance wins over everything else."""
        if marker is not None:
            return float(marker)
        return _resolve(self.check, DEFAULT_CHECK_TOLERANCES, kind, task, name)

    def for_suite(self, kind: str, task: str | None, name: str) -> float:
        return _resolve(self.suite, DEFAULT_SUITE_TOLERANCES, kind, task, name)

    def to_dict(self) -> dict[str, dict[str, float]]:
        return {"check": dict(self.check), "suite": dict(self.suite)}


def _resolve(user: Mapping[str, float], defaults: Mapping[str, float], kind: str, task: str | None, name: str) -> float:
    selectors = ([f"{task}/{name}"] if task else []) + [f"{kind}:{name}", name, f"{kind}:*", "*"]
    for table in (user, defaults):
        for selector in selectors:
            if selector in table:
                return float(table[selector])
    return float(defaults["*"])
