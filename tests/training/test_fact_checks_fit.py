"""nlgeval_training.fact_checks: pseudo-labelled claims, the logistic fit, the declaration it writes."""

from __future__ import annotations

import json
import math
import random

import pytest

from nlgeval_training.fact_checks import auc, fit_checks, fit_logistic, pseudo_claims, write_checks


def _documents(n=6):
    out = []
    for i in range(n):
        out.append(
            {
                "article": (
                    f"The council of Town{i} approved a new library on Monday. It will cost {10 + i} million euros. "
                    f"Mayor Person{i} said building in Town{i} starts in {['May', 'June', 'July'][i % 3]} "
                    "and takes two years."
                ),
                "highlights": (
                    f"Town{i} approved a new library costing {10 + i} million euros.\n"
                    f"Building in Town{i} takes two years."
                ),
            }
        )
    return out


def test_pseudo_claims_pair_each_highlight_with_its_corruptions():
    rows = pseudo_claims(_documents(), articles=6, seed=0)
    kinds = {r["kind"] for r in rows}
    assert {"highlight", "salad", "other article", "invented detail"} <= kinds
    assert all(r["label"] == (1 if r["kind"] == "highlight" else 0) for r in rows)
    assert rows == pseudo_claims(_documents(), articles=6, seed=0)  # seeded
    # a negative never equals a positive of the same article
    positives = {(r["claim"], r["source"]) for r in rows if r["label"] == 1}
    assert not positives & {(r["claim"], r["source"]) for r in rows if r["label"] == 0}


def test_fit_logistic_finds_the_direction_that_separates_and_weighs_classes_equally():
    rng = random.Random(0)
    x, y = [], []
    for _ in range(300):
        label = 1 if rng.random() < 0.8 else 0  # unbalanced
        x.append([rng.gauss(1.0 if label else -1.0, 1.0), rng.gauss(0.0, 1.0)])
        y.append(label)
    b, w_useful, w_noise = fit_logistic(x, y)
    assert w_useful > 1.0 and abs(w_noise) < 0.3
    assert abs(b) < 0.5  # balanced weights: no pull toward the majority class
    assert auc([w_useful * v[0] for v in x], y) > 0.8


def test_fit_checks_writes_a_block_the_runtime_reads(tmp_path):
    from nlgeval_runtime.modelfolder import _validate_dimensions

    from nlgeval_runtime.factcheck import FactChecks

    rng = random.Random(1)
    signals = []
    for k in range(120):
        label = k % 2
        signals.append(
            {
                "label": label,
                "kind": "highlight" if label else "invented detail",
                "source": f"doc {k % 10}",
                "signals": {
                    "head": min(0.99, max(0.01, rng.gauss(0.8 if label else 0.4, 0.15))),
                    "lexical": min(1.0, max(0.0, rng.gauss(0.95 if label else 0.6, 0.1))),
                    "form": 0.9,
                    "mismatches": [] if label or k % 3 else [{"kind": "number"}],
                },
            }
        )
    block, report = fit_checks(signals)
    assert block["weights"]["head"] > 0 and block["weights"]["lexical"] > 0
    assert report["held_out"]["combined"]["auc"] > 0.8
    checks = FactChecks.from_spec(block)
    assert checks.combine(0.95, 1.0) > checks.combine(0.5, 0.6)
    declaration = tmp_path / "dims.json"
    declaration.write_text(json.dumps({"serves": {"summarization/consistency": {"scorer": "boolqa"}}}))
    write_checks(block, [declaration])
    written = json.loads(declaration.read_text())
    spec = written["serves"]["summarization/consistency"]
    assert spec["unit"] == "claim" and spec["checks"] == block
    _validate_dimensions(written, lambda msg: pytest.fail(msg))
    assert all(math.isfinite(v) for v in block["weights"].values())
