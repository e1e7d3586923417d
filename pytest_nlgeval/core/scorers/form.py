"""Form (summarization fluency): the model's answer, raised to ``head_power``, times the factor of
:mod:`nlgeval_runtime.form` (a phrase repeated across sentences, a run-on, a fragment), the findings named.
With sentence units (UniEval reads fluency per sentence and averages) the factor is the whole output's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_nlgeval.core.scorers.base import Models, Planned, Reading

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["Form"]


class Form:
    """``"form": {"penalty": p, "head_power": h}``: each unit's score is head ** h times its form factor."""

    name = "form"
    refines = True

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        from nlgeval_runtime.form import read_form
        from nlgeval_runtime.sentences import split_sentences

        form_spec = spec["form"]
        out = []
        penalty = float(form_spec.get("penalty", 0.5))
        for planned in batch:
            readings = []
            # read sentence by sentence (UniEval's fluency), the form is still the whole output's: a phrase
            # repeated across its sentences lowers each of them
            whole = (
                read_form(" ".join(planned.units), planned.units, penalty=penalty) if dim.unit == "sentence" else None
            )
            for unit, r in zip(planned.units, planned.readings):
                form = whole or read_form(unit, split_sentences(unit) or [unit], penalty=penalty)
                head = max(0.0, r.score) ** float(form_spec.get("head_power", 1.0))
                support = r.support
                if form.findings:
                    support = {**(support or {}), "findings": [*(support or {}).get("findings", []), *form.findings]}
                readings.append(Reading(head * form.factor, r.truncated, r.n_tokens, support, r.evidence))
            out.append(readings)
        return out
