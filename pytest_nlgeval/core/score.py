"""Scores whose comparison with a threshold is the assertion.

``assert_dimension(...) > 0.7`` returns ``True`` when the comparison holds and raises ``AssertionError``
with a readable message when it does not; either way the comparison is recorded as a check (see
:mod:`pytest_nlgeval.core.checks`) by the recorder the score carries: the one the assertion that made it
was given (a pytest session's inside a test, none outside pytest); a score made by hand records nothing
unless it is given a ``recorder=``. A :class:`Score` is float-like (``float(score)``, formatting, arithmetic
gives plain floats); equality compares the number and records nothing.

Other engines build their own scores with the same constructor::

    Score(3.8, name="helpfulness", kind="metric", details={"artifact": "metrics/helpful.json"})

Ordering scores compares them, and a comparison between two scores is an assertion like any other, the
second score being the threshold. So inside a test ``sorted(scores)``, ``max(scores)`` and ``min(scores)``
record a check for each comparison they make and raise ``AssertionError`` at the first one that does not
hold (``max([a, b])`` asks ``b > a``): on scores in no particular order they fail. Order the numbers
instead: ``sorted(scores, key=float)``, ``max(scores, key=float)`` (which returns the :class:`Score`) or
``ScoreList.values``; these record nothing.
"""

from __future__ import annotations

from pytest_nlgeval.util.numbers import format_threshold

import math
import numbers
import operator as _op
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

__all__ = ["ClaimVerdict", "Score", "ScoreList", "explanation_lines"]

_OPERATORS: dict[str, Callable[[float, float], bool]] = {">": _op.gt, ">=": _op.ge, "<": _op.lt, "<=": _op.le}
_MAX_TEXT = 120


#: how the unit scores were combined, as the failure message says it (``mean_min`` has a line of its own)
_AGGREGATION_WORDS = {"mean": "mean", "sum": "sum", "min": "the weakest"}


#: failed checks that are a model's reading, not a conflict found in the evidence: a checker's "no support" and the
#: fluency head's "does not read as a statement"; they cap their claim but do not prove it wrong
_NOT_PROOF = frozenset({"support", "form"})
#: a claim's score from which it counts as supported (its combination is a probability of support)
SUPPORTED_FROM = 0.5


@dataclass(frozen=True, repr=False)
class ClaimVerdict:
    """How one claim of an output was judged: its ``text`` and ``score``; ``supported`` (no explicit check
    failed and the score is at least :data:`SUPPORTED_FROM`); ``proven_wrong`` (an explicit check found a
    conflicting number, date, name, role or negation in the claim's evidence); ``reasons``, the failed checks'
    messages ("`$1,500`: the source says $1,000"); ``evidence``, the source text that decided, when known."""

    text: str
    score: float
    supported: bool
    proven_wrong: bool
    reasons: tuple[str, ...] = ()
    evidence: str | None = None

    def __repr__(self) -> str:  # short, for a failed ``assert not score.proven_wrong_claims``
        state = "proven wrong" if self.proven_wrong else "supported" if self.supported else "unsupported"
        why = f" ({'; '.join(self.reasons)})" if self.reasons else ""
        return f"<{state} claim {self.score:.4f}: {_clip(self.text, 80)!r}{why}>"


def _clip(text: str, limit: int = _MAX_TEXT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _threshold(value: Any, op: str) -> float:
    if isinstance(value, Score):
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise TypeError(f"a score is compared with a number (score {op} 0.7), got {value!r}")
    return float(value)


def proofs(support: Mapping[str, Any] | None) -> list[dict]:
    """The failed explicit checks of a unit's ``support`` (its reading's details, a unit's ``window``) that prove
    its claim wrong: a number, date, name, role or negation its evidence states otherwise; such a claim bounds the
    output's score whatever the other claims say."""
    verdict = (support or {}).get("claim") or {}
    return [m for m in verdict.get("mismatches") or [] if isinstance(m, dict) and m.get("kind") not in _NOT_PROOF]


def _proven(unit: Mapping[str, Any]) -> bool:
    return bool(proofs(unit.get("window")))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def explanation_lines(details: Mapping[str, Any], *, per_unit: bool = True) -> list[str]:
    """The lines of a dimension score's failure message read from its ``details``: the per-unit scores (unless
    ``per_unit`` is False, for a page that tabulates them), the weakest unit, the span the source does not
    support and what it says instead, explicit-check findings and the deciding source window. The HTML report
    reads the same lines from the results file, so the page and the terminal explain a failure alike."""
    lines: list[str] = []
    units = [u for u in details.get("units") or [] if isinstance(u, Mapping) and _is_number(u.get("score"))]
    noun = {
        "context": "retrieved context",
        "reference_sentence": "reference sentence",
        "claim": "claim",
        "passage": "passage",
    }.get(str(details.get("unit")), "sentence")
    window: Mapping[str, Any] | None
    if details.get("unit") == "claim" and not units:
        lines.append("the output makes no claim to check (only replies such as 'Yes.' or preambles): score 1")
    if len(units) > 1 or (units and details.get("aggregation") == "sum"):
        weakest = min(range(len(units)), key=lambda i: units[i]["score"])
        proven = [u for u in units if _proven(u)]
        if proven:
            lines.append(
                f"{len(proven)} {noun}(s) proven wrong by an explicit check: the score is at most the lowest "
                "of their scores, whatever the other claims say"
            )
        if per_unit:
            if details.get("aggregation") == "mean_min":
                lines.append(
                    f"per-{noun} scores ({len(units)}; (average + weakest) / 2 unless a proven claim is lower):"
                )
            else:
                how = _AGGREGATION_WORDS.get(str(details.get("aggregation", "mean")), "mean")
                lines.append(f"per-{noun} scores ({how} of {len(units)}):")
            for i, unit in enumerate(units):
                mark = "   <- weakest" if i == weakest and len(units) > 1 else ""
                mark = "   <- proven wrong" if _proven(unit) else mark
                lines.append(f"  [{i + 1}] {unit['score']:.4f}  {_clip(unit['text'])}{mark}")
        # the claim that decides the score: a proven one caps it, so it is named even when a faithful claim
        # that the head doubts scores lower
        if proven:
            focus = min(proven, key=lambda u: u["score"])
            lines.append(f"proven wrong {noun} ({focus['score']:.4f}): {_clip(focus['text'])!r}")
        else:
            focus = units[weakest]
            lines.append(f"weakest {noun} ({focus['score']:.4f}): {_clip(focus['text'])!r}")
        window = focus.get("window")
    elif units:
        lines.append(f"{noun}: {_clip(units[0]['text'])!r}")
        window = units[0].get("window")
    else:
        output = (details.get("inputs") or {}).get("output")
        if output is not None and per_unit:
            lines.append(f"output: {_clip(output)!r}")
        window = details.get("window")
    for part in units or [{"window": window}]:
        verdict = (part.get("window") or {}).get("claim") or {}
        for mismatch in verdict.get("mismatches", []):
            # a claim that does not read as a statement is no fact error: say which it is
            label = "unreadable" if mismatch.get("kind") == "form" else "unsupported"
            lines.append(f"{label}: {_clip(mismatch['message'])}")
    for finding in (window or {}).get("findings", []):
        lines.append(finding)
    if window and window.get("evasive"):
        lines.append(f"evasive: {window['evasive']}")
    if window and "sentences" in window:
        first, last = window["sentences"]
        lines.append(
            f"best-supporting source window {window['index'] + 1} of {window['count']} "
            f"(sentences {first + 1}-{last}, {window['aggregation']} over windows): {_clip(window['text'])!r}"
        )
    if details.get("claims_read"):
        lines.append(f"read: {details['claims_read']} (a cap on the cost of one output)")
    if details.get("truncated") and per_unit:
        lines.append("note: the evaluator input was longer than the model's maximum length; its tail was cut")
    return lines


class Score:
    """A score that asserts when compared with a threshold.

        >>> s = Score(0.82, name="fluency", task="summarization")
        >>> s > 0.7
        True
        >>> float(s)
        0.82

    ``kind`` is ``"dimension"``, ``"metric"``, ``"trajectory"`` or ``"aggregate"``; ``details`` is stored
    with the check (``inputs``, ``units`` = per-sentence ``[{"text", "score", "window"?}]``, ``window`` (the
    source window that supported a windowed whole-text score), ``truncated``, or any
    JSON-serialisable fields of the engine); ``evaluator_id``/``evaluator_fingerprint`` identify the model
    that produced it. ``explain(score, op, threshold) -> list[str]`` adds lines to a failure message.
    ``recorder``: the :class:`~pytest_nlgeval.core.checks.CheckRecorder` its comparisons are recorded
    by (the assertions of the DSL hand in their run's); None, the default, records nothing: a score is a
    plain value that reads no global state.
    """

    __slots__ = (
        "value",
        "name",
        "kind",
        "task",
        "details",
        "evaluator_id",
        "evaluator_fingerprint",
        "_explain",
        "recorder",
    )

    def __init__(
        self,
        value: float,
        *,
        name: str,
        kind: str = "dimension",
        task: str | None = None,
        details: dict | None = None,
        evaluator_id: str | None = None,
        evaluator_fingerprint: dict | None = None,
        explain: Callable[["Score", str, float], list[str]] | None = None,
        recorder: Any = None,
    ) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
            raise TypeError(f"Score value must be a number, got {type(value).__name__}")
        self.value = float(value)
        self.name = str(name)
        self.kind = kind
        self.task = task
        self.details = dict(details or {})
        self.evaluator_id = evaluator_id
        self.evaluator_fingerprint = evaluator_fingerprint
        self._explain = explain
        self.recorder = recorder

    # -- the assertion -------------------------------------------------------------------------------------
    def _compare(self, op: str, other: Any) -> bool:
        __tracebackhide__ = True
        threshold = _threshold(other, op)
        passed = (not math.isnan(self.value)) and _OPERATORS[op](self.value, threshold)
        recorder = self.recorder
        if recorder is not None:
            if self.evaluator_id and self.evaluator_fingerprint:
                recorder.add_evaluator(self.evaluator_id, self.evaluator_fingerprint)
            recorder.record(
                kind=self.kind,
                name=self.name,
                task=self.task,
                score=self.value,
                operator=op,
                threshold=threshold,
                passed=passed,
                evaluator=self.evaluator_id,
                details=self.details,
            )
        if not passed:
            raise AssertionError(self.failure_message(op, threshold))
        return True

    def __gt__(self, other: Any) -> bool:
        __tracebackhide__ = True
        return self._compare(">", other)

    def __ge__(self, other: Any) -> bool:
        __tracebackhide__ = True
        return self._compare(">=", other)

    def __lt__(self, other: Any) -> bool:
        __tracebackhide__ = True
        return self._compare("<", other)

    def __le__(self, other: Any) -> bool:
        __tracebackhide__ = True
        return self._compare("<=", other)

    def __eq__(self, other: Any) -> bool:
        try:
            return self.value == float(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __ne__(self, other: Any) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self.value)

    def __bool__(self) -> bool:
        # A score is not a verdict: `assert score` would always pass and hide a missing threshold.
        raise TypeError(f"compare the {self.name} score with a threshold (score > 0.7) instead of testing its truth")

    # -- float-like ----------------------------------------------------------------------------------------
    def __float__(self) -> float:
        return self.value

    def __round__(self, ndigits: int | None = None):
        return round(self.value, ndigits)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __abs__(self) -> float:
        return abs(self.value)

    def __neg__(self) -> float:
        return -self.value

    def __add__(self, other):
        return self.value + float(other)

    def __radd__(self, other):
        return float(other) + self.value

    def __sub__(self, other):
        return self.value - float(other)

    def __rsub__(self, other):
        return float(other) - self.value

    def __mul__(self, other):
        return self.value * float(other)

    def __rmul__(self, other):
        return float(other) * self.value

    def __truediv__(self, other):
        return self.value / float(other)

    def __rtruediv__(self, other):
        return float(other) / self.value

    def __repr__(self) -> str:
        task = f", task={self.task!r}" if self.task else ""
        return f"Score({self.name}={self.value:.4f}{task})"

    # -- messages ------------------------------------------------------------------------------------------
    @property
    def units(self) -> list[dict]:
        """Per-sentence ``{"text", "score"}`` entries (empty for whole-text dimensions)."""
        return list(self.details.get("units") or [])

    @property
    def claims(self) -> list[ClaimVerdict]:
        """Per-claim verdicts of a fact dimension (a claim unit: summarization and fact consistency, rag
        faithfulness; and dialogue groundedness's claims about its fact), in the output's order; empty for other
        dimensions. Gate on "no unsupported claim" with
        ``assert not score.unsupported_claims``."""
        if self.details.get("unit") != "claim":
            return self._claims_about_fact()
        out = []
        for unit in self.units:
            verdict = (unit.get("window") or {}).get("claim") or {}
            mismatches = [m for m in verdict.get("mismatches") or [] if isinstance(m, dict)]
            score = float(unit["score"])
            out.append(
                ClaimVerdict(
                    text=str(unit["text"]),
                    score=score,
                    supported=not mismatches and score >= SUPPORTED_FROM,
                    proven_wrong=_proven(unit),
                    reasons=tuple(str(m.get("message")) for m in mismatches),
                    evidence=(unit.get("window") or {}).get("text"),
                )
            )
        return out

    def _claims_about_fact(self) -> list[ClaimVerdict]:
        """Dialogue groundedness: the reply's claims about its fact, each with the checks it failed; a failing
        claim carries the reply's capped score, the others the reply's score before the cap."""
        windows = [u.get("window") or {} for u in self.units] or [self.details.get("window") or {}]
        out = []
        for window in windows:
            for claim in (window.get("claim") or {}).get("claims") or []:
                mismatches = [m for m in claim.get("mismatches") or [] if isinstance(m, dict)]
                proven = [m for m in mismatches if m.get("kind") not in _NOT_PROOF]
                out.append(
                    ClaimVerdict(
                        text=str(claim.get("text", "")),
                        score=float(claim.get("score", self.value)),
                        supported=not mismatches and float(claim.get("score", self.value)) >= SUPPORTED_FROM,
                        proven_wrong=bool(proven),
                        reasons=tuple(str(m.get("message")) for m in mismatches),
                    )
                )
        return out

    @property
    def unsupported_claims(self) -> list[ClaimVerdict]:
        """The claims of :attr:`claims` that are not supported (proven wrong, or scored below
        :data:`SUPPORTED_FROM`)."""
        return [c for c in self.claims if not c.supported]

    @property
    def proven_wrong_claims(self) -> list[ClaimVerdict]:
        """The claims of :attr:`claims` that an explicit check proved wrong (the gate "no claim proven wrong":
        ``assert not score.proven_wrong_claims, "\\n".join(score.explanation())``)."""
        return [c for c in self.claims if c.proven_wrong]

    @property
    def label(self) -> str:
        return f"{self.name} ({self.task})" if self.task else self.name

    def explanation(self) -> list[str]:
        """Lines describing how the score came about (per-sentence scores, the weakest sentence)."""
        return explanation_lines(self.details)

    def failure_message(self, op: str, threshold: float) -> str:
        lines = [f"{self.label} = {self.value:.4f}, expected {op} {format_threshold(threshold)}"]
        if op in (">", "<") and math.isclose(self.value, threshold, abs_tol=5e-5):
            lines[0] += " (a score equal to the threshold fails)"  # a claim capped at 0.2 fails "> 0.2"
        extra = self._explain(self, op, threshold) if self._explain else self.explanation()
        lines.extend(f"  {line}" for line in extra)
        if self.evaluator_id:
            fp = self.evaluator_fingerprint or {}
            where = ", ".join(str(fp[k]) for k in ("provider", "precision") if fp.get(k))
            lines.append(f"  evaluator {self.evaluator_id}" + (f" ({where})" if where else ""))
        return "\n".join(lines)


class ScoreList(Sequence[Score]):
    """Scores of many outputs for one dimension, with aggregate assertions.

        >>> scores = ScoreList([Score(v, name="fluency") for v in (0.9, 0.8, 0.4)], name="fluency")
        >>> scores.mean() > 0.6
        True
        >>> scores.fraction(above=0.7) >= 0.6
        True

    Each aggregate is a :class:`Score` (kind ``"aggregate"``) whose failure message names the cases that
    pulled it down, recorded by the recorder of the list's scores. Indexing gives the per-case scores,
    which can be asserted one by one.
    """

    def __init__(
        self,
        scores: Iterable[Score],
        *,
        name: str,
        task: str | None = None,
        labels: Sequence[str] | None = None,
        samples: dict | None = None,
    ) -> None:
        self._scores = list(scores)
        #: set when the outputs are repeated samples of one call (:func:`pytest_nlgeval.samples`): what
        #: they were; the aggregates then record the spread of the scores
        self.samples = samples
        self.name = name
        self.task = task
        self.labels = (
            list(labels)
            if labels is not None
            else [str((s.details.get("inputs") or {}).get("output", "")) for s in self._scores]
        )

    def __len__(self) -> int:
        return len(self._scores)

    def __getitem__(self, index):
        return self._scores[index]

    @property
    def values(self) -> list[float]:
        return [s.value for s in self._scores]

    def __repr__(self) -> str:
        shown = ", ".join(f"{v:.3f}" for v in self.values[:8])
        more = ", ..." if len(self) > 8 else ""
        return f"ScoreList({self.name}, n={len(self)}: [{shown}{more}])"

    def __gt__(self, other):
        raise TypeError(self._no_direct_compare())

    __ge__ = __lt__ = __le__ = __gt__

    def _no_direct_compare(self) -> str:
        return (
            f"compare an aggregate of the {self.name} scores: .mean() > t, .min() >= t, "
            f".fraction(above=t) >= share, or index one case: scores[0] > t"
        )

    def _check_nonempty(self, what: str) -> None:
        if not self._scores:
            raise ValueError(f"{what} of an empty ScoreList ({self.name}): no outputs were scored")

    def _case(self, i: int) -> dict:
        return {"index": i, "score": self._scores[i].value, "output": _clip(self.labels[i], 200)}

    def _aggregate(self, func: str, value: float, explain, extra: dict | None = None) -> Score:
        first = self._scores[0]
        details = {"aggregate": func, "n": len(self), "cases": [self._case(i) for i in range(len(self))]}
        if self.samples:
            from pytest_nlgeval.core.sampling import spread

            details["samples"] = {**self.samples, **spread(self.values)}
        details.update(extra or {})
        return Score(
            value,
            name=f"{func}({self.name})",
            kind="aggregate",
            task=self.task,
            details=details,
            evaluator_id=first.evaluator_id,
            evaluator_fingerprint=first.evaluator_fingerprint,
            explain=explain,
            recorder=first.recorder,
        )

    def _case_line(self, i: int) -> str:
        return f"  case {i}: {self._scores[i].value:.4f}  {_clip(self.labels[i], 100)!r}"

    def mean(self) -> Score:
        """The mean score; a failure lists the five lowest cases."""
        self._check_nonempty("mean")
        value = sum(self.values) / len(self)

        def explain(score, op, threshold):
            order = sorted(range(len(self)), key=lambda i: self.values[i], reverse=op in ("<", "<="))
            head = "highest" if op in ("<", "<=") else "lowest"
            return [f"mean of {len(self)} cases; {head} cases:"] + [self._case_line(i) for i in order[:5]]

        return self._aggregate("mean", value, explain)

    def _extreme(self, func: str) -> Score:
        self._check_nonempty(func)
        value = min(self.values) if func == "min" else max(self.values)

        def explain(score, op, threshold):
            failing = [i for i, v in enumerate(self.values) if not _OPERATORS[op](v, threshold)]
            lines = [f"{len(failing)} of {len(self)} cases are not {op} {format_threshold(threshold)}:"]
            lines += [self._case_line(i) for i in sorted(failing, key=lambda i: self.values[i])[:10]]
            if len(failing) > 10:
                lines.append(f"  ... and {len(failing) - 10} more")
            return lines

        return self._aggregate(func, value, explain)

    def min(self) -> Score:
        """The lowest score; a failure lists every case that misses the threshold."""
        return self._extreme("min")

    def max(self) -> Score:
        """The highest score; a failure lists every case that misses the threshold."""
        return self._extreme("max")

    def fraction(self, *, above: float | None = None, below: float | None = None) -> Score:
        """Share of cases strictly above (or below) a level: ``scores.fraction(above=0.7) >= 0.9``."""
        self._check_nonempty("fraction")
        if (above is None) == (below is None):
            raise TypeError("fraction() takes exactly one of above=... or below=...")
        level = _threshold(above if above is not None else below, "fraction")
        side = ">" if above is not None else "<"
        hits = [_OPERATORS[side](v, level) for v in self.values]
        value = sum(hits) / len(self)

        def explain(score, op, threshold):
            misses = [i for i, hit in enumerate(hits) if not hit]
            lines = [
                f"{sum(hits)} of {len(self)} cases are {side} {format_threshold(level)} ({value:.1%}); "
                f"{len(misses)} are not:"
            ]
            lines += [
                self._case_line(i) for i in sorted(misses, key=lambda i: self.values[i], reverse=side == "<")[:10]
            ]
            if len(misses) > 10:
                lines.append(f"  ... and {len(misses) - 10} more")
            return lines

        return self._aggregate(f"fraction{side}{level:g}", value, explain, {"level": level, "side": side})
