"""``nlgeval baseline update|validate``: manage a baseline file outside pytest.

``update RESULTS.json -o BASELINE.json`` records a results file's checks into the baseline (creating it if
needed; entries of checks that are not in the results are kept unless ``--prune``), writing atomically under
the baseline's lock, as ``pytest --nlgeval-baseline-update`` does.
``validate BASELINE.json`` exits 2 with the line of the first problem. Example::

    nlgeval baseline update results.json -o tests/nlgeval-baseline.json
"""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "baseline",
        help="record or validate a regression baseline file",
        description="Manage the regression baseline file outside pytest.",
    )
    sub = p.add_subparsers(dest="baseline_command", metavar="ACTION")
    sub.required = True
    up = sub.add_parser("update", help="record a results file's checks into a baseline file")
    up.add_argument("results", metavar="RESULTS.json", help="results file written by pytest --nlgeval-json")
    up.add_argument("-o", "--output", required=True, metavar="BASELINE.json", help="baseline file to create or update")
    up.add_argument("--prune", action="store_true", help="remove entries of checks that are not in the results")
    up.set_defaults(func=_update)
    val = sub.add_parser("validate", help="check that a baseline file is valid (exit 2 naming the line if not)")
    val.add_argument("baseline", metavar="BASELINE.json")
    val.set_defaults(func=_validate)


def _update(args) -> int:
    from pytest_nlgeval.baseline.errors import BaselineError
    from pytest_nlgeval.baseline.store import load_snapshot, update_baseline_file
    from pytest_nlgeval.errors import UsageError

    try:
        head = load_snapshot(args.results)
        if head.origin != "results":
            raise UsageError(f"{args.results} is a baseline file; pass a results file (pytest --nlgeval-json)")
        new, summary = update_baseline_file(args.output, head, prune=args.prune)
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.output}: {summary.describe()}; {len(new.entries)} entries")
    return 0


def _validate(args) -> int:
    from pytest_nlgeval.baseline.errors import BaselineError
    from pytest_nlgeval.baseline.store import load_baseline
    from pytest_nlgeval.errors import UsageError

    try:
        baseline = load_baseline(args.baseline)
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.baseline}: valid, {len(baseline.entries)} entries, {len(baseline.evaluators)} evaluators")
    return 0
