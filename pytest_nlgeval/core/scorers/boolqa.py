"""Boolean-QA over source windows: P(Yes) of the dimension's question, a long source read in windows.

UniEval (Zhong et al., 2022) asks a yes/no question and reads P(Yes) / (P(Yes) + P(No)). A unit whose input is
longer than the model reads is scored against windows of its source (:mod:`pytest_nlgeval.core.windows`); a
dimension declared with ``source_units`` ``sentences`` or ``both`` is always read against the source sentences
the unit shares most words with (SummaC's zero-shot granularity, Laban et al., TACL 2022), with a ``cascade``
reading the best-aligned ones first. The windows a unit was read against travel with its reading as its
evidence, which the explicit fact checks read (:mod:`pytest_nlgeval.core.scorers.claims`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, AbstractSet

from pytest_nlgeval.core.dimensions import DimensionError, InputError, hide_user_errors, prepare_fields
from pytest_nlgeval.core.scorers.base import Models, Planned, Reading
from pytest_nlgeval.core.windows import Window, alignment_units, word_share

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["BoolQA", "WHOLE_SOURCE_TOKENS", "claim_evidence", "source_parts"]

#: the longest source (tokens, with the claim and question) that a claim of a ``both`` dimension also reads
#: whole, window by window; past it, each claim reads only its aligned units, found over the whole source
WHOLE_SOURCE_TOKENS = 4096

_Windows = tuple[list[Window] | None, list[str]]


class BoolQA:
    """P(Yes) of each unit's question, with the graph the entry's ``folder`` names (the folder's own without)."""

    name = "boolqa"
    refines = False

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        texts = [t for planned in batch for t in planned.texts]
        capped: set[int] = set()  # units (in plan order) past WHOLE_SOURCE_TOKENS: read against aligned units only
        windows = _windows(dim, spec, batch, texts, models, capped)
        graph = spec.get("folder")
        if windows is None:
            flat = iter(models.score_texts(texts, graph))
            return [[Reading(*next(flat)) for _ in planned.texts] for planned in batch]
        decided = _failing_checks(dim, spec, batch, windows)
        units = [u for planned in batch for u in planned.units]
        results = _cascade(spec, windows, models, graph, decided, units)
        out, at, unit_at = [], 0, 0
        for planned in batch:
            readings = []
            for _ in planned.texts:
                unit_windows, window_texts = windows[unit_at]
                read = [(k, r) for k, r in enumerate(results[at : at + len(window_texts)]) if r is not None]
                at += len(window_texts)
                scored = [r for _, r in read]
                reading = Reading(*_combine(dim, scored), evidence=unit_windows)
                reading.support = _support(dim, [unit_windows[k] for k, _ in read] if unit_windows else None, scored)
                if unit_at in capped:
                    reading.support = {
                        **(reading.support or {}),
                        "source_read": f"aligned units only: the source is over the {WHOLE_SOURCE_TOKENS:,} tokens "
                        "read whole",
                    }
                if unit_windows and len(read) < len(window_texts):
                    reading.support = {
                        **(reading.support or {}),
                        "candidates_read": f"{len(read)} of {len(window_texts)}",
                    }
                readings.append(reading)
                unit_at += 1
            out.append(readings)
        return out


def claim_evidence(windows: list[Window] | None, body: str) -> str:
    """What a claim's explicit checks read: the source sentences and sentence pairs it was aligned with (read by
    the model or not), else the whole source."""
    aligned = [w.text for w in windows or [] if 1 <= w.last - w.first <= 2]
    return "\n".join(aligned) if aligned else body


def _failing_checks(dim: Dimension, spec: dict, batch: list[Planned], windows: list[_Windows]) -> set[int]:
    """Units (in plan order) that an explicit fact check already fails against their aligned evidence, for a
    dimension whose claims are checked (``checks``) and read in steps (``cascade``): such a claim is capped
    whatever the model reads (:mod:`pytest_nlgeval.core.scorers.claims`), so it stops after the first step."""
    cascade = spec.get("cascade")
    if not cascade or not cascade.get("decided_by_checks") or dim.unit != "claim" or "checks" not in spec:
        return set()
    from nlgeval_runtime.factcheck import check_claim

    failing, at = set(), 0
    for planned in batch:
        _, body, _ = source_parts(dim, planned.values)
        for unit in planned.units:
            if windows[at][0] and check_claim(unit, claim_evidence(windows[at][0], body), body):
                failing.add(at)
            at += 1
    return failing


def _cascade(
    spec: dict,
    windows: list[_Windows],
    models: Models,
    graph: str | None,
    decided: AbstractSet[int] = frozenset(),
    units: list[str] | None = None,
) -> list:
    """Scores of every unit's window texts (flat, in plan order); None for a candidate window that was not read.

    A dimension declared with ``cascade: {"first": k, "stop": t, "whole": w, "units": u}`` reads a unit's
    candidates in up to three steps, each a batched model call over every unit still undecided: first the ``k``
    aligned source units that share the most content words with it; only a unit whose best score there stays
    below ``t`` reads its other aligned units up to the ``u`` best-sharing ones (default: all ``top_units``), and
    the sentences that together hold its words; only a unit whose best score over those stays below ``w``
    (default ``t``) reads the whole source, window by window. The score is the best over the windows read
    (``max``), so a unit that stops has found support already; the evidence of its explicit fact checks is still
    every aligned unit (``top_units``), read or not. With ``"decided_by_checks": true``, a claim that an explicit
    check already fails (``decided``: it is capped whatever the model reads) stops after the first step. With
    ``"whole_words": f``, the third step reads only the source windows that hold at least the share ``f`` of the
    claim's content words (``units``: each unit's claim, in plan order).
    """
    texts = [t for _, window_texts in windows for t in window_texts]
    cascade = spec.get("cascade")
    groups = []  # (start, end, step of each candidate: 0 first, 1 other aligned units, 2 whole-source windows)
    start = 0
    for k, (unit_windows, window_texts) in enumerate(windows):
        n = len(window_texts)
        steps = [0] * n
        if cascade and unit_windows and n > 1:
            first, most = int(cascade["first"]), int(cascade.get("units", len(unit_windows)))
            cover = int(spec.get("top_units", 6))  # the rank of the sentences that together hold its words
            steps = [
                2 if w.rank is None else 0 if w.rank < first else 1 if w.rank < most or w.rank == cover else 3
                for w in unit_windows
            ]
            least = float(cascade.get("whole_words", 0.0))
            if least > 0 and units is not None:  # a window that holds too few of the claim's words is not read
                steps = [
                    3 if step == 2 and word_share(units[k], w.text) < least else step
                    for w, step in zip(unit_windows, steps)
                ]
            if 0 not in steps:
                steps = [0] * n
            elif k in decided:  # an explicit check fails it: capped whatever the later steps would read
                steps = [0 if step == 0 else 3 for step in steps]
        groups.append((start, start + n, steps))
        start += n
    out: list = [None] * len(texts)
    bars = (float(cascade["stop"]), float(cascade.get("whole", cascade["stop"]))) if cascade else (1.0, 1.0)
    for step in (0, 1, 2):
        todo = [
            p
            for s, e, steps in groups
            if step == 0 or max((r[0] for r in out[s:e] if r is not None), default=0.0) < bars[step - 1]
            for p in range(s, e)
            if steps[p - s] == step
        ]
        if todo:
            for p, r in zip(todo, models.score_texts([texts[p] for p in todo], graph)):
                out[p] = r
    return out


def _windows(
    dim: Dimension, spec: dict, batch: list[Planned], texts: list[str], models: Models, capped: set[int]
) -> list[_Windows] | None:
    """Per unit (in plan order): ``(windows or None, texts to score)``; None when no unit needs windows.

    A unit of a dimension declared with ``source_units`` ``sentences`` or ``both`` is always aligned with its
    source's sentences (:func:`~pytest_nlgeval.core.windows.alignment_units`); otherwise windows are planned only
    for inputs longer than the model's maximum.
    """
    if not texts or models.source_windows == "off" or not dim.window:
        return None  # (no texts: outputs that make no claim)
    mode = spec.get("source_units", "windows")
    aligned = mode != "windows"
    planner = models.window_planner
    # A token covers at least one byte of UTF-8, so a text with fewer bytes than the maximum (less the special
    # tokens) fits for sure and needs no tokenising: the common short input costs nothing here.
    room = planner.max_length - planner.special_tokens
    maybe_long = [k for k, t in enumerate(texts) if len(t) > room and len(t.encode("utf-8")) > room]
    # a text far past the whole-source cap is not tokenised at all (it is over any budget)
    over_cap = {k for k in maybe_long if len(texts[k].encode("utf-8")) > 8 * WHOLE_SOURCE_TOKENS and aligned}
    maybe_long = [k for k in maybe_long if k not in over_cap]
    if not maybe_long and not aligned:
        return None
    lengths = [0] * len(texts)
    for k, n in zip(maybe_long, planner.count([texts[k] for k in maybe_long])):
        lengths[k] = n
    for k in over_cap:
        lengths[k] = 8 * WHOLE_SOURCE_TOKENS + 1
    if max(lengths) <= planner.max_length and not aligned:
        return None
    out: list[_Windows] = []
    k = 0
    for planned in batch:
        for unit, text in zip(planned.units, planned.texts):
            n = lengths[k]
            k += 1
            if mode == "windows" and n <= planner.max_length:
                out.append((None, [text]))
                continue
            passage = None
            if mode == "both" and (n > WHOLE_SOURCE_TOKENS or len(text.encode("utf-8")) > 8 * WHOLE_SOURCE_TOKENS):
                # Past the cap the whole source is not read window by window: each claim reads its aligned
                # units, found lexically over all of it (a 2 MB context would be ~10,000 windows).
                capped.add(len(out))
            elif mode != "sentences":
                passage = (
                    _unit_windows(dim, unit, planned.values, models)
                    if n > planner.max_length
                    else ([Window(0, 1, 0, 0, source_parts(dim, planned.values)[1])], [text])
                )
            if mode == "windows":
                assert passage is not None, "a windows dimension always reads its passage"
                out.append(passage)
                continue
            windows, window_texts = _alignment_windows(dim, spec, unit, planned.values, models)
            if passage is not None:
                windows, window_texts = windows + (passage[0] or []), window_texts + passage[1]
            out.append((windows, window_texts))
    return out


def _alignment_windows(
    dim: Dimension, spec: dict, unit: str, values: dict, models: Models
) -> tuple[list[Window], list[str]]:
    """The unit's claim against its source's sentence units (see :func:`alignment_units`)."""
    fields, body, tail = source_parts(dim, values)
    prefix_text = dim.input_text(unit, {**fields, _window_argument(dim): ""})
    planner = models.window_planner
    # a token covers at least one byte: a short prefix leaves room for sure and needs no tokenising
    if len(prefix_text.encode("utf-8")) + planner.special_tokens > _room_limit(models):
        _check_room(dim, unit, planner.count([prefix_text])[0], models)
    windows = alignment_units(unit, body, top=int(spec.get("top_units", 6)), tail=tail)
    from nlgeval_runtime.quantities import in_evidence_terms

    # a checked claim is read against each unit with its quantities worded as that unit words them ("a two-week
    # trial" against "a 14-day trial"): the quantity reader found them equal, and the model compares the rest
    checked = bool(spec.get("checks"))
    return windows, [
        dim.input_text(in_evidence_terms(unit, w.text) if checked else unit, {**fields, _window_argument(dim): w.text})
        for w in windows
    ]


def source_parts(dim: Dimension, values: dict) -> tuple[dict, str, str]:
    """The prepared fields of a unit, and its source split into body and the tail every window keeps (the
    dialogue fact convention ends a fact with a line break)."""
    fields = prepare_fields(dim, values)
    source = fields[_window_argument(dim)]
    tail = "\n" if source.endswith("\n") else ""
    return fields, (source[:-1] if tail else source), tail


def _room_limit(models: Models) -> int:
    """The most tokens a unit and its question may take: room stays for a short sentence of the source."""
    limit = models.window_planner.max_length
    return limit - max(8, limit // 8)


def _check_room(dim: Dimension, unit: str, prefix_tokens: int, models: Models) -> None:
    """A unit must leave room for its source: scored without it, a claim would be judged on itself."""
    __tracebackhide__ = hide_user_errors
    if prefix_tokens > _room_limit(models):
        raise InputError(
            f"a {dim.fields[0]} of {dim.name!r} takes {prefix_tokens} tokens with its question, and the model "
            f"reads {models.window_planner.max_length}: its `{dim.window}=` would not be read. Score shorter "
            f"units (split the output into sentences; one sentence starts {unit[:60]!r}...)"
        )


def _unit_windows(dim: Dimension, unit: str, values: dict, models: Models) -> _Windows:
    __tracebackhide__ = hide_user_errors
    planner = models.window_planner
    fields, body, tail = source_parts(dim, values)
    prefix = planner.count([dim.input_text(unit, {**fields, _window_argument(dim): ""})])[0]
    _check_room(dim, unit, prefix, models)
    for _ in range(4):
        windows = planner.plan(prefix, body, tail)
        window_texts = [dim.input_text(unit, {**fields, _window_argument(dim): w.text}) for w in windows]
        over = max(n - planner.max_length for n in planner.count(window_texts))
        # The sentence counts are measured one sentence at a time; joined sentences can tokenise a little
        # longer. Shrink the budget by the overflow and plan again.
        if over <= 0 or all(w.last - w.first == 1 for w in windows):
            break
        prefix += over
    if models.max_windows is not None and len(windows) > models.max_windows:
        raise InputError(
            f"the `{dim.window}=` of {dim.name!r} needs {len(windows)} windows of the model's {planner.max_length} "
            f"tokens for each {dim.fields[0]}, more than the cap of {models.max_windows} "
            "(--nlgeval-max-windows / Evaluator(max_windows=...)); raise the cap, or pass the part of the "
            "source the output is about"
        )
    return windows, window_texts


def _combine(dim: Dimension, scored: list[tuple[float, bool, int]]) -> tuple[float, bool, int]:
    """One unit's ``(score, truncated, tokens)`` from the scores of its source windows."""
    values = [r[0] for r in scored]
    value = max(values) if dim.window_aggregation == "max" else sum(values) / len(values)
    return value, any(r[1] for r in scored), max(r[2] for r in scored)


def _support(dim: Dimension, windows, scored) -> dict | None:
    """The window that decided a unit's score (the best one under ``max``), for the failure message."""
    if windows is None:
        return None
    best = max(range(len(scored)), key=lambda k: scored[k][0])
    return {**windows[best].describe(scored[best][0]), "aggregation": dim.window_aggregation}


def _window_argument(dim: Dimension) -> str:
    """The argument a windowed dimension splits; only dimensions with one reach the window paths."""
    if dim.window is None:  # pragma: no cover - guarded by every caller
        raise DimensionError(f"dimension {dim.key!r} has no source argument to split into windows")
    return dim.window
