"""Reproduce the ROUGE-2 row of UniEval's SummEval table with ``nlgeval``'s meta-evaluation.

SummEval is not part of this repository's data. Give it as a JSON list in the UniEval layout with all 11
references per record (``"references": [...]``), for example converted from SummEval's
``model_annotations.aligned.paired.jsonl`` (expert annotations averaged per dimension). The script
computes ROUGE-2 F1 averaged over the references (SummEval's convention), correlates it at summary level
and compares with the published row (UniEval's paper, its SummEval table): Spearman coherence 0.184, consistency
0.187, fluency 0.159, relevance 0.290; Kendall 0.139 / 0.155 / 0.128 / 0.219.

    python benchmarks/summeval_rouge.py summeval_11refs.json [--stemmer] [--multi-ref mean|pooled|max]
    python benchmarks/summeval_rouge.py summeval_11refs.json --all-variants

The exit status is 0 when the chosen variant is within 0.005 of every published value. ``--all-variants``
also prints the Spearman row of the other multi-reference and stemming settings (ROUGE-1.5.5, which
SummEval ran, is usually called with Porter stemming and its count-pooling ``-f A`` mode).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

PAPER = {
    "spearman": {"coherence": 0.184, "consistency": 0.187, "fluency": 0.159, "relevance": 0.290},
    "kendall": {"coherence": 0.139, "consistency": 0.155, "fluency": 0.128, "relevance": 0.219},
}
TOLERANCE = 0.005


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path)
    ap.add_argument("--stemmer", action="store_true", help="Porter-stem tokens (rouge-score's use_stemmer)")
    ap.add_argument("--multi-ref", choices=("mean", "pooled", "max"), default="mean")
    ap.add_argument("--all-variants", action="store_true")
    ap.add_argument("--bootstrap", type=int, default=1000)
    args = ap.parse_args(argv)

    from pytest_nlgeval.metaeval import load_records, meta_evaluate

    records = load_records(args.data)
    n_refs = sorted({len(r.references or ()) for r in records})
    print(f"{len(records)} records, references per record: {n_refs}")
    spec = f"rouge2:multi_ref={args.multi_ref},use_stemmer={str(args.stemmer).lower()}"
    t = time.perf_counter()
    result = meta_evaluate(
        records,
        [spec],
        "summary",
        dimensions=list(PAPER["spearman"]),
        n_bootstrap=args.bootstrap,
        source=str(args.data),
    )
    print(f"scored and correlated in {time.perf_counter() - t:.1f} s\n")
    print(result.to_table())
    print()
    ok = True
    for coef, row in PAPER.items():
        for dim, paper in row.items():
            got = result.get(result.rows[0].metric, dim).value(coef)
            hit = abs(got - paper) <= TOLERANCE
            ok &= hit
            print(f"{coef:8s} {dim:11s} ours {got:.3f}  paper {paper:.3f}  {'ok' if hit else 'DIFFERS'}")
    if args.all_variants:
        print()
        dims = list(PAPER["spearman"])
        print(f"{'spearman':13s}" + "  ".join(f"{d:>11s}" for d in dims))
        print(f"{'paper':13s}" + "  ".join(f"{PAPER['spearman'][d]:11.3f}" for d in dims))
        for multi in ("mean", "pooled", "max"):
            for stem in (False, True):
                label = f"rouge2:multi_ref={multi},use_stemmer={str(stem).lower()}"
                res = meta_evaluate(records, [label], "summary", dimensions=dims, n_bootstrap=0)
                print(
                    f"{multi:6s} {'stem' if stem else '':4s}  "
                    + "  ".join(f"{res.get(res.rows[0].metric, d).spearman:11.3f}" for d in dims)
                )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
