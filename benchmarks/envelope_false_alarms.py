"""How often human continuations fail ``assert_not_degenerate``: the pointwise 5th percentile vs the envelope.

Human texts are the check's negatives: a CI check on story diversity should rarely fail on them. For a bank
(``fit-bank`` output), the references are split into ``--folds`` folds; each fold's texts are checked against
a bank built from the other folds (out of sample), and, for comparison, against the whole bank (in sample).
Printed: the share of human continuations that leave (a) the pointwise 5th-percentile band and (b) the
envelope that 95% of the fitting bank's references stay above at every position.

    python benchmarks/envelope_false_alarms.py examples/stories/bank.npz
    python benchmarks/envelope_false_alarms.py runs/union/bank.npz --folds 10 \\
        --rated $NLGEVAL_DATA/human/union_rocstories_ratings.jsonl.gz --story-field story --rating judgements

With ``--rated``, the rated machine texts are checked against the whole bank too (with the bank's LM), and
the mean human rating of the texts each check fails is printed next to that of the texts it passes.
"""

from __future__ import annotations

import argparse

import numpy as np

from pytest_nlgeval.trajectory.bank import ReferenceBank
from pytest_nlgeval.trajectory.signals import Trajectory


def leaves(curve: np.ndarray, band: np.ndarray) -> bool:
    n = min(curve.size, band.size)
    ok = np.isfinite(band[:n])
    return bool(np.any(curve[:n][ok] < band[:n][ok]))


def sub_bank(bank: ReferenceBank, keep: np.ndarray) -> ReferenceBank:
    trajectories = [
        Trajectory(
            np.zeros(bank.diversity[i].size, dtype=np.int64),
            np.zeros(bank.diversity[i].size),
            bank.diversity[i],
            bank.coherence[i],
        )
        for i in keep
    ]
    return ReferenceBank.from_trajectories(
        [bank.prompts[i] for i in keep], trajectories, lm=bank.lm, horizon=bank.horizon
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("bank")
    parser.add_argument("--folds", type=int, default=10)
    parser.add_argument("--coverage", type=float, default=0.95)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rated", default=None, help="rated machine texts (as for `trajectory meta-eval`)")
    parser.add_argument("--story-field", default=None)
    parser.add_argument("--rating", default="rating")
    args = parser.parse_args()
    bank = ReferenceBank.load(args.bank)
    n = bank.n_references
    folds = np.array_split(np.random.default_rng(args.seed).permutation(n), args.folds)
    rows = {}
    for name, fit in (("in sample", None), ("out of sample", folds)):
        pointwise = envelope = 0
        levels = []
        for fold in folds if fit else [np.arange(n)]:
            fitted = bank if fit is None else sub_bank(bank, np.setdiff1d(np.arange(n), fold))
            p5 = fitted.band("diversity", (5.0,))[0]
            level = fitted.envelope_percentile("diversity", args.coverage)
            levels.append(level)
            env = fitted.band("diversity", (level,))[0]
            pointwise += sum(leaves(bank.diversity[i], p5) for i in fold)
            envelope += sum(leaves(bank.diversity[i], env) for i in fold)
        rows[name] = (pointwise, envelope, float(np.mean(levels)))
    print(f"{args.bank}: {n} human continuations, horizon {bank.horizon}, {args.folds} folds (seed {args.seed})")
    print(
        f"{'':15} {'leave the pointwise 5th percentile':>36} {f'leave the {args.coverage:.0%} envelope':>26} "
        f"{'envelope level (pointwise pct)':>32}"
    )
    for name, (pointwise, envelope, level) in rows.items():
        print(
            f"{name:15} {pointwise:>14} of {n} ({pointwise / n:6.1%}) {envelope:>12} of {n} ({envelope / n:6.1%}) "
            f"{level:>32.3g}"
        )
    if args.rated:
        rated_summary(bank, args)


def rated_summary(bank: ReferenceBank, args) -> None:
    from pytest_nlgeval.trajectory.assertions import get_lm
    from pytest_nlgeval.trajectory.humandata import read_ratings
    from pytest_nlgeval.trajectory.scoring import compute_trajectories

    rated = read_ratings(args.rated, rating_field=args.rating, story_field=args.story_field)
    lm_ref = bank.lm.get("model_ref")
    lm = get_lm(None if lm_ref == "default-lm" else lm_ref, device="cpu")
    bank.check_lm(lm)
    trajectories = compute_trajectories(rated.prompts, rated.continuations, lm, horizon=bank.horizon)
    level = bank.envelope_percentile("diversity", args.coverage)
    checks = {
        "pointwise 5th percentile": bank.band("diversity", (5.0,))[0],
        f"{args.coverage:.0%} envelope": bank.band("diversity", (level,))[0],
    }
    print(f"{args.rated}: {len(rated)} rated machine texts, mean rating {rated.ratings.mean():.3f}")
    for name, band in checks.items():
        fail = np.array([leaves(tr.diversity, band) for tr in trajectories])
        print(
            f"  {name:26} fails {fail.sum():>4} of {len(rated)} ({fail.mean():6.1%}); mean rating of failed "
            f"{rated.ratings[fail].mean() if fail.any() else float('nan'):.3f}, of passed "
            f"{rated.ratings[~fail].mean() if (~fail).any() else float('nan'):.3f}"
        )


if __name__ == "__main__":
    main()
