"""The fact dimensions on good and damaged outputs in six domains, per domain, with a held-out tenth.

Reads benchmarks/data/domain_claims.json (meeting transcripts, policies and terms, product manuals, support
knowledge with chat history, medical and public-service leaflets, news; written for this project) and composes,
with a fixed seed:

- **summaries** (summarization consistency, every document): good summaries of 1 to all of a document's claim
  slots in document order, each slot in one of its faithful renderings, and a damaged twin of each that differs
  by one edit: one slot's rendering replaced by its damaged version (a number, unit, date, name, swapped roles,
  negation, a contradiction without a number, an invented entity, a quantifier, a reversed order) or one
  unsupported sentence added;
- **answers** (rag faithfulness, documents with questions): the renderings of the slots that answer a question,
  against the document's paragraphs as retrieved passages, and their damaged twins;
- **replies** (dialogue groundedness, support documents): one or two slots as a chat reply to the history,
  grounded in the knowledge text, and their damaged twins.

Each output is scored once; ``--json`` keeps every score with its claims' signals. The threshold of each dimension
is chosen on nine tenths of the outputs (by a hash of the output's id): the highest t at which at most one good
output in ten fails ``score > t`` in every domain. On the held-out tenth, per domain, it prints the false alarms
(good outputs at or below t), the caught damaged outputs, and the AUC of good above damaged on outputs of 8 or
more claims.

    python benchmarks/domain_claims.py [--model default] [--json scored.json] [--only summarization]
    python benchmarks/domain_claims.py --checks-only    # the explicit checks alone, on every rendering (no model)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import defaultdict
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "domain_claims.json"
GRID = [round(0.05 * k, 2) for k in range(1, 20)]
SIZES = ("all", "all", "all", "all", 8, 8, 8, 5, 5, 3, 2, 1)  # claims per good summary (slots chosen at random)


def _twin(rng: random.Random, slots: list[dict], chosen: list[int], extra: list[str]) -> tuple[list, list, str]:
    """``(good renderings, damaged renderings, kind)``: one good output's texts and its one-edit damaged twin."""
    picks = {k: rng.randrange(len(slots[k]["good"])) for k in chosen}
    damageable = [k for k in chosen if slots[k].get("bad")]
    if extra and (not damageable or rng.random() < 0.1):
        good = [slots[k]["good"][picks[k]] for k in chosen]
        at = rng.randrange(len(good) + 1)
        return good, good[:at] + [rng.choice(extra)] + good[at:], "unsupported extra claim"
    k = rng.choice(damageable)
    bad = rng.choice(slots[k]["bad"])
    picks[k] = int(bad.get("of", 0)) if int(bad.get("of", 0)) < len(slots[k]["good"]) else picks[k]
    good = [slots[j]["good"][picks[j]] for j in chosen]
    damaged = [bad["text"] if j == k else slots[j]["good"][picks[j]] for j in chosen]
    return good, damaged, bad["kind"]


def compose(documents: list[dict], seed: int = 13) -> list[dict]:
    """Good outputs and their damaged twins, one row each (``pair`` links a twin to its good output)."""
    rows: list[dict] = []

    def add(doc: dict, task: str, n: int, good: list[str], damaged: list[str], kind: str, values: dict) -> None:
        pair = f"{doc['id']}:{task}:{n}"
        for ok, texts in ((True, good), (False, damaged)):
            rows.append(
                {"id": f"{pair}:{'good' if ok else 'damaged'}", "pair": pair, "domain": doc["domain"], "task": task,
                 "document": doc["id"], "good": ok, "kind": "good" if ok else kind, "claims": len(texts),
                 "output": " ".join(texts), "values": values}
            )  # fmt: skip

    for doc in documents:
        rng = random.Random(f"{seed}:{doc['id']}")
        slots = doc["slots"]
        for n, size in enumerate(SIZES):
            count = len(slots) if size == "all" else min(int(size), len(slots))
            chosen = sorted(rng.sample(range(len(slots)), count))
            good, damaged, kind = _twin(rng, slots, chosen, doc.get("extra") or [])
            add(doc, "summarization", n, good, damaged, kind, {"source": doc["source"]})
        passages = [p.strip() for p in doc["source"].split("\n\n") if p.strip()] or [doc["source"]]
        for q, question in enumerate(doc.get("questions") or []):
            for v in range(4):
                chosen = sorted(set(question["slots"]))
                good, damaged, kind = _twin(rng, slots, chosen, doc.get("extra") or [])
                values = {"question": question["question"], "context": passages}
                add(doc, "rag", q * 10 + v, good, damaged, kind, values)
        if doc.get("history"):
            for n in range(4 * len(slots)):
                chosen = sorted(rng.sample(range(len(slots)), 1 if n % 2 else min(2, len(slots))))
                good, damaged, kind = _twin(rng, slots, chosen, [])
                add(doc, "dialogue", n, good, damaged, kind, {"fact": doc["source"], "context": doc["history"]})
    return rows


DIMENSIONS = {"summarization": "consistency", "rag": "faithfulness", "dialogue": "groundedness"}


def score(rows: list[dict], evaluator, only: str | None = None) -> None:
    """Each row's ``score`` and its claims (text, score, head, lexical support, failed checks), in place."""
    for task, name in DIMENSIONS.items():
        if only and task != only:
            continue
        mine = [r for r in rows if r["task"] == task]
        if not mine:
            continue
        started = time.perf_counter()
        plural = {k + "s": [r["values"].get(k) for r in mine] for k in mine[0]["values"]}
        scores = evaluator.evaluate([r["output"] for r in mine], name, task=task, **plural)
        for r, s in zip(mine, scores):
            r["score"] = float(s)
            r["claim_verdicts"] = [
                {"text": c.text, "score": c.score, "proven": c.proven_wrong, "reasons": list(c.reasons)}
                for c in s.claims
            ]
            r["signals"] = [((u.get("window") or {}).get("claim") or {}) for u in s.units]
        print(f"{task} {name}: {len(mine)} outputs in {time.perf_counter() - started:.0f} s", file=sys.stderr)


def held_out(row: dict) -> bool:
    """The held-out tenth: by a hash of the output's pair, so a good output and its twin fall together."""
    return int(hashlib.sha256(row["pair"].encode()).hexdigest(), 16) % 10 == 0


def rates(rows: list[dict], t: float) -> tuple[float, float, int, int]:
    good = [r for r in rows if r["good"]]
    bad = [r for r in rows if not r["good"]]
    fa = sum(r["score"] <= t for r in good) / max(1, len(good))
    caught = sum(r["score"] <= t for r in bad) / max(1, len(bad))
    return fa, caught, len(good), len(bad)


def auc(good: list[float], bad: list[float]) -> float:
    """P(a good output scores above a damaged one), ties half."""
    if not good or not bad:
        return float("nan")
    wins = sum((g > b) + 0.5 * (g == b) for g in good for b in bad)
    return wins / (len(good) * len(bad))


def choose(rows: list[dict], max_false_alarms: float = 0.1) -> float:
    """The highest grid threshold whose false-alarm rate is at most the bound in every domain."""
    domains = sorted({r["domain"] for r in rows})
    best = GRID[0]
    for t in GRID:
        if all(rates([r for r in rows if r["domain"] == d], t)[0] <= max_false_alarms for d in domains):
            best = t
    return best


def report(rows: list[dict], documented: dict[str, float] | None = None) -> None:
    for task, name in DIMENSIONS.items():
        mine = [r for r in rows if r["task"] == task and "score" in r]
        if not mine:
            continue
        train = [r for r in mine if not held_out(r)]
        test = [r for r in mine if held_out(r)]
        chosen = choose(train)
        print(f"\n### {task} {name}: threshold chosen on nine tenths = {chosen}", end="")
        if documented and task in documented:
            print(f" (documented: {documented[task]})", end="")
        print()
        print("| domain | split | good | damaged | false alarms | caught | AUC (8+ claims) | AUC (all) |")
        print("|---|---|---|---|---|---|---|---|")
        t = documented.get(task, chosen) if documented else chosen
        for domain in sorted({r["domain"] for r in mine}) + ["all"]:
            for split, part in (("held-out tenth", test), ("all", mine)):
                d = [r for r in part if domain == "all" or r["domain"] == domain]
                if not d:
                    continue
                fa, caught, n_good, n_bad = rates(d, t)
                long = [r for r in d if r["claims"] >= 8]
                a8 = auc([r["score"] for r in long if r["good"]], [r["score"] for r in long if not r["good"]])
                a = auc([r["score"] for r in d if r["good"]], [r["score"] for r in d if not r["good"]])
                print(f"| {domain} | {split} | {n_good} | {n_bad} | {fa:.1%} | {caught:.1%} | {a8:.3f} | {a:.3f} |")
        if task != "dialogue":
            print("\nthe gate `no claim proven wrong` (an explicit check's conflict), all outputs:")
            print("| domain | good failing | damaged failing |")
            print("|---|---|---|")
            for domain in sorted({r["domain"] for r in mine}) + ["all"]:
                d = [r for r in mine if domain == "all" or r["domain"] == domain]
                good = [r for r in d if r["good"]]
                bad = [r for r in d if not r["good"]]
                proven = [any(c["proven"] for c in r["claim_verdicts"]) for r in good]
                caught = [any(c["proven"] for c in r["claim_verdicts"]) for r in bad]
                print(f"| {domain} | {sum(proven) / max(1, len(good)):.1%} | {sum(caught) / max(1, len(bad)):.1%} |")
            heads = {
                c["text"]: sig["head"] for r in mine if r["good"] for c, sig in zip(r["claim_verdicts"], r["signals"])
            }
            low = sum(1 for h in heads.values() if h < 0.5)
            print(
                f"\nthe claim head alone scores {low} of the {len(heads)} faithful claims of the good outputs below 0.5"
            )
        print(f"\ncaught by kind (all outputs, at {t}):")
        kinds: dict[str, list[dict]] = defaultdict(list)
        for r in mine:
            if not r["good"]:
                kinds[r["kind"]].append(r)
        print(", ".join(f"{k} {sum(r['score'] <= t for r in v)}/{len(v)}" for k, v in sorted(kinds.items())))


def checks_only(documents: list[dict]) -> None:
    """The explicit checks on every good and damaged rendering against its aligned source units, without a model:
    the good claims a check fails (false alarms), by domain, and the damaged renderings a check catches, by kind."""
    from nlgeval_runtime.claims import split_claims
    from nlgeval_runtime.factcheck import check_claim

    from pytest_nlgeval.core.scorers.boolqa import claim_evidence
    from pytest_nlgeval.core.windows import alignment_units

    def failed(claim: str, source: str) -> list:
        evidence = claim_evidence(alignment_units(claim, source, top=6), source)
        return [m for m in check_claim(claim, evidence, source) if m.kind != "form"]

    alarms: dict[str, list[str]] = defaultdict(list)
    good_claims: dict[str, int] = defaultdict(int)
    caught: dict[str, int] = defaultdict(int)
    damaged: dict[str, int] = defaultdict(int)
    for doc in documents:
        for slot in doc["slots"]:
            for text in slot["good"]:
                for claim in split_claims(text)[0]:
                    good_claims[doc["domain"]] += 1
                    found = failed(claim, doc["source"])
                    if found:
                        alarms[doc["domain"]].append(f"{doc['id']}: {claim[:90]!r}: {found[0].message[:80]}")
            for bad in slot.get("bad") or []:
                damaged[bad["kind"]] += 1
                caught[bad["kind"]] += any(failed(c, doc["source"]) for c in split_claims(bad["text"])[0])
    total = sum(len(v) for v in alarms.values())
    print(f"good claims a check fails: {total} of {sum(good_claims.values())}")
    print(", ".join(f"{d} {len(alarms[d])}/{good_claims[d]}" for d in sorted(good_claims)))
    print("damaged renderings a check catches: " + ", ".join(f"{k} {caught[k]}/{damaged[k]}" for k in sorted(damaged)))
    for lines in alarms.values():
        for line in lines:
            print("  false alarm:", line)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="default")
    parser.add_argument("--json", help="write every scored output here")
    parser.add_argument("--scored", help="report on outputs scored before (a --json file) without scoring again")
    parser.add_argument("--only", choices=sorted(DIMENSIONS), help="score one task's outputs only")
    parser.add_argument("--checks-only", action="store_true", help="the explicit checks alone, no model")
    args = parser.parse_args(argv)
    if args.checks_only:
        checks_only(json.loads(DATA.read_text(encoding="utf-8"))["documents"])
        return 0

    from pytest_nlgeval.core.thresholds import recommended_threshold

    if args.scored:
        rows = json.loads(Path(args.scored).read_text(encoding="utf-8"))
    else:
        from pytest_nlgeval.core.evaluator import Evaluator

        rows = compose(json.loads(DATA.read_text(encoding="utf-8"))["documents"])
        evaluator = Evaluator(None if args.model == "default" else args.model, cache=False)
        started = time.perf_counter()
        score(rows, evaluator, args.only)
        print(f"scored in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        if args.json:
            Path(args.json).write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    documented = {task: recommended_threshold(name, task) for task, name in DIMENSIONS.items()}
    report(rows, documented)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
