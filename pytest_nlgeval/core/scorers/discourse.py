"""Discourse (summarization coherence): the model's answer, raised to ``head_power``, times the order, repetition
and topic factors of :mod:`nlgeval_runtime.discourse`, read against the document's lead when ``source=`` is given;
the message names the sentences."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pytest_nlgeval.core.dimensions import _check_text
from pytest_nlgeval.core.scorers.base import Models, Planned, Reading

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension

__all__ = ["DISCOURSE_DOCUMENT_SENTENCES", "Discourse"]

#: the document sentences a coherence reading places summary sentences among (the lead of a long source)
DISCOURSE_DOCUMENT_SENTENCES = 200


class Discourse:
    """``"discourse": {"folder": encoder, ...}``: the whole output's sentences placed among the document's."""

    name = "discourse"
    refines = True

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]:
        import numpy as np
        from nlgeval_runtime.discourse import read_discourse
        from nlgeval_runtime.sentences import split_sentences

        settings = spec["discourse"]
        readings = {}
        for planned in batch:
            if planned.values.get("source") is None:
                continue
            source = _check_text(planned.values["source"], "`source=`")
            document = split_sentences(source)[:DISCOURSE_DOCUMENT_SENTENCES]
            if dim.unit == "passage":  # the output read in overlapping passages: its sentences once each
                from pytest_nlgeval.core.dimensions import passage_sentences

                sentences = passage_sentences(planned.units, split_sentences)
            else:
                sentences = split_sentences(planned.units[0]) or [planned.units[0]]
            readings[id(planned)] = (sentences, document)
        texts = list(dict.fromkeys(t for sentences, document in readings.values() for t in sentences + document))
        vectors = dict(zip(texts, models.embedder(settings["folder"]).embed(texts))) if texts else {}
        out = []
        for planned in batch:
            if id(planned) not in readings:
                out.append(planned.readings)
                continue
            sentences, document = readings[id(planned)]
            reading = read_discourse(
                np.stack([vectors[t] for t in sentences]),
                np.stack([vectors[t] for t in document]) if document else np.zeros((0, 1)),
                repeat_from=float(settings.get("repeat_from", 0.6)),
                order_floor=float(settings.get("order_floor", 0.0)),
                topic_from=float(settings.get("topic_from", 0.0)),
                topic_to=float(settings.get("topic_to", 0.0)),
            )
            power = float(settings.get("head_power", 1.0))
            found = {"discourse": reading.as_dict(), "findings": reading.findings(sentences)}
            # the order, repetition and topic factor is the whole output's; it scales each unit's answer
            out.append(
                [
                    Reading(
                        max(0.0, r.score) ** power * reading.factor,
                        r.truncated,
                        r.n_tokens,
                        {**(r.support or {}), **found},
                        r.evidence,
                    )
                    for r in (planned.readings if dim.unit == "passage" else planned.readings[:1])
                ]
                + ([] if dim.unit == "passage" else planned.readings[1:])
            )
        return out
