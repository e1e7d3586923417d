"""Claims with their explicit checks: a claim's reading held to the numbers, dates, names and negations of its
evidence (:mod:`nlgeval_runtime.factcheck`).

``checks`` (summarization and fact consistency, rag faithfulness): each claim's final score combines its support
(the head's score, max over the source units it was read against), its lexical support and its form, as the
folder's fitted block says, and is capped when an explicit check fails; the evidence of a claim is the source
units it was aligned with, or the whole source. With an external fact checker (:mod:`.checker`) the claim's
score is the checker's own reading, capped the same way. ``fact_checks`` (dialogue groundedness): a reply's
claims about the fact are held to the fact's dates, weekdays, numbers, names and roles (names and days may come
from the history), and with a fact checker also to its reading; a failure caps the reply and names the claim.
As SummaC returns a claim's best source span, the details name the span and the mismatch.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from pytest_nlgeval.core.scorers.base import Models, Planned, Reading
from pytest_nlgeval.core.scorers.boolqa import claim_evidence, source_parts

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["AgainstFact", "ClaimChecks"]


class ClaimChecks:
    """Each claim's final score from its support, its explicit checks, its lexical support and its form."""

    name = "checks"
    refines = True

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        from nlgeval_runtime.factcheck import FactChecks as Combination

        claims = [(planned, u) for planned in batch for u in range(len(planned.units))]
        if dim.unit != "claim" or not claims:
            return [planned.readings for planned in batch]
        fluency = models.as_served(models.registry.get("fluency", "summarization"))
        forms = models.score_texts(
            [fluency.input_text(planned.units[u], {}) for planned, u in claims], models.served(fluency).get("folder")
        )
        checks = Combination.from_spec(spec["checks"])
        out = {id(planned): list(planned.readings) for planned in batch}
        for (planned, u), form in zip(claims, forms):
            _, body, _ = source_parts(dim, planned.values)
            reading = planned.readings[u]
            evidence = claim_evidence(reading.evidence, body)
            # what the user asked is known too: a name of the question is no error, and a figure worked out from
            # one of its figures is shown arithmetic ("the remaining £3,000" of £8,000 asked about, £5,000 earning)
            question = planned.values.get("question")
            given = question if isinstance(question, str) else ""
            verdict = checks.judge(
                planned.units[u], head=reading.score, form=form[0], evidence=evidence, source=body, given=given
            )
            if spec.get("checker"):  # the checker's reading is the claim's score; a failed check caps it
                verdict = dataclasses.replace(
                    verdict, score=min(reading.score, checks.cap) if verdict.mismatches else reading.score
                )
            out[id(planned)][u] = dataclasses.replace(
                reading, score=verdict.score, support={**(reading.support or {}), "claim": verdict.as_dict()}
            )
        return [out[id(planned)] for planned in batch]


class AgainstFact:
    """Dialogue groundedness: a claim about the fact (sharing two of its content words, or half of a short claim's)
    that states another date, weekday, number, name or role than the fact, or that the fact checker reads as
    unsupported (``checker``), or that restates the fact (half its content words from it) and is read as unsupported
    by the folder's own claim head (``head``: ``{"dimension": "fact/consistency"}``), caps the reply at ``cap``."""

    name = "fact_checks"
    refines = True

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        checks = spec["fact_checks"]
        about = [_claims_about_fact(checks, planned) for planned in batch]
        support: dict[tuple[str, str], tuple[float, dict]] = {}
        if checks.get("checker"):  # the fact checker reads every claim about the fact
            from pytest_nlgeval.core.scorers.checker import read_claims

            pairs = list(dict.fromkeys((fact, claim) for case in about for _, fact, claim, *_ in case))
            support = dict(zip(pairs, read_claims(checks["checker"], pairs, models)))
        elif checks.get("head"):  # the claim head, only a claim that restates the fact and that no check fails
            pairs = list(
                dict.fromkeys((fact, claim) for case in about for _, fact, claim, failed, restates in case
                              if restates and not failed)
            )  # fmt: skip
            support = dict(zip(pairs, _head_support(checks["head"], pairs, models))) if pairs else {}
        cap = float(checks.get("cap", 0.2))
        out = []
        for planned, case in zip(batch, about):
            findings: dict[int, list[dict]] = {}
            listed: dict[int, list[dict]] = {}  # every claim about the fact, for ``score.claims``
            for u, fact, claim, mismatches, _restates in case:
                mine = [m.as_dict() for m in mismatches]
                if (fact, claim) in support and support[(fact, claim)][0] < support[(fact, claim)][1]["supported_from"]:
                    mine.append(_unsupported(claim, *support[(fact, claim)]))
                findings.setdefault(u, []).extend(mine)
                listed.setdefault(u, []).append({"text": claim.strip(), "mismatches": mine})
            readings = []
            for u, r in enumerate(planned.readings):
                claims = [{**c, "score": min(r.score, cap) if c["mismatches"] else r.score} for c in listed.get(u, [])]
                if findings.get(u):
                    readings.append(r.capped(cap, claim={"mismatches": findings[u], "claims": claims}))
                elif claims:
                    readings.append(dataclasses.replace(r, support={**(r.support or {}), "claim": {"claims": claims}}))
                else:
                    readings.append(r)
            out.append(readings)
        return out


def _head_support(spec: dict, pairs: list[tuple[str, str]], models: Models) -> list[tuple[float, dict]]:
    """``(support, how it was read)`` of each ``(fact, claim)`` pair under the folder's own claim head: the
    dimension ``spec["dimension"]`` (a fact dimension with ``checks``) asks its question of the claim against the
    fact, and its combination of head and lexical support gives the claim's score, as in consistency."""
    from nlgeval_runtime.factcheck import FactChecks, lexical_support

    task, _, name = str(spec.get("dimension", "fact/consistency")).partition("/")
    dim = models.as_served(models.registry.get(name, task))
    declared = models.served(dim)
    combination = FactChecks.from_spec(declared["checks"])
    texts = [dim.input_text(claim, {dim.arguments[0]: fact}) for fact, claim in pairs]
    heads = models.score_texts(texts, declared.get("folder"))
    reading = {"checker": f"the claim head ({dim.key})", "supported_from": float(spec.get("supported_from", 0.5))}
    return [
        (combination.combine(head[0], lexical_support(claim, fact)), reading)
        for (fact, claim), head in zip(pairs, heads)
    ]


def _claims_about_fact(checks: dict, planned: Planned) -> list[tuple[int, str, str, list, bool]]:
    """``(unit, fact, claim, failed explicit checks, whether it restates the fact)`` of each claim of the output
    that is about its fact."""
    from nlgeval_runtime.claims import content_words, split_claims, words
    from nlgeval_runtime.factcheck import check_claim

    values = planned.values
    fact = values.get(checks.get("against", "fact"))
    if not isinstance(fact, str) and isinstance(fact, (list, tuple)):
        fact = "\n".join(str(f) for f in fact)
    if not isinstance(fact, str) or not fact.strip():
        return []
    history = values.get("context")
    if isinstance(history, (list, tuple)):
        history = "\n".join(str(t) for t in history)
    known = fact + ("\n" + history if isinstance(history, str) else "")
    fact_words = set(words(fact))
    found = []
    for u, unit in enumerate(planned.units):
        for claim in split_claims(unit)[0]:
            mine = set(content_words(claim))
            shared = len(mine & fact_words)
            if not mine or shared < (2 if len(mine) >= 4 else max(1, len(mine) // 2)):
                continue  # small talk beside the fact: not a statement about it
            # a name the fact does not hold counts only in a restatement of the fact (half its words from it):
            # a reply may bring in a name of its own ("I love Beyonce"), not another carrier for the same parcel
            restates = shared >= (len(mine) + 1) // 2
            failed = [
                m
                for m in check_claim(claim, fact, known)
                if not (isinstance(history, str) and m.kind in ("number", "date") and _said_in(m.span, history))
                and (m.kind != "name" or restates)
            ]
            found.append((u, fact, claim, failed, restates))
    return found


def _said_in(span: str, text: str) -> bool:
    """Whether every number of ``span`` is one that ``text`` states (a figure the user gave in the history)."""
    from nlgeval_runtime.factcheck import numbers

    stated = {n.value for n in numbers(text, liberal=True)}
    mine = numbers(span, liberal=True)
    return bool(mine) and all(n.value in stated for n in mine)


def _unsupported(claim: str, support: float, reading: dict) -> dict:
    """A claim the fact checker does not find supported, in the form of a failed explicit check."""
    message = f"{reading['checker']} finds no support in the fact (p = {support:.2f}): `{claim.strip()}`"
    return {"kind": "support", "span": claim.strip(), "evidence": None, "message": message}
