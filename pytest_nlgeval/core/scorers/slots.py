"""Slots (data-to-text informativeness): a slot of the meaning representation whose value the utterance does not
state caps the score (:mod:`nlgeval_runtime.slots`: dialogue acts, E2E's bracketed attributes, a JSON object)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_nlgeval.core.dimensions import InputError, _check_text
from pytest_nlgeval.core.scorers.base import Models, Planned, Reading

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["Slots"]


class Slots:
    """``"slots": {"cap": c}``: read when ``source=`` (the meaning representation) is given; names the missing slot."""

    name = "slots"
    refines = True

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        from nlgeval_runtime.slots import missing_slots

        cap = float(spec["slots"].get("cap", 0.2))
        out = []
        for planned in batch:
            if planned.values.get("source") is None:
                out.append(planned.readings)
                continue
            mr = _check_text(planned.values["source"], "`source=` (the meaning representation)")
            readings = []
            for unit, r in zip(planned.units, planned.readings):
                try:
                    missing = missing_slots(unit, mr)
                except ValueError as exc:
                    raise InputError(
                        f"{dim.task} {dim.name} reads `source=` as a meaning representation: {exc}"
                    ) from None
                if missing:
                    findings = [f"missing slot: {slot} is not stated" for slot in missing]
                    r = r.capped(cap, slots=[str(s) for s in missing], findings=findings)
                readings.append(r)
            out.append(readings)
        return out
