"""``nlgeval compare BASE.json HEAD.json``: regression verdicts between two runs.

Each file is a results file (``pytest --nlgeval-json``) or a baseline file; the verdicts are those of
``pytest --nlgeval-baseline`` (:mod:`pytest_nlgeval.baseline.compare`). Exit status: 0 no regression,
1 regression, 2 invalid input or a refused comparison (different evaluators). Example::

    nlgeval compare main-results.json pr-results.json --format markdown >> "$GITHUB_STEP_SUMMARY"
"""

from __future__ import annotations

import argparse


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "compare",
        help="regression verdicts between two results (or baseline) files",
        description="Compare HEAD (e.g. a pull request's results) with BASE (e.g. main's results or the "
        "committed baseline): per-check drops beyond the tolerance and per-dimension paired "
        "bootstrap. Exit status 1 on a regression, 2 on invalid input or different evaluators.",
    )
    p.add_argument("base", metavar="BASE.json", help="results or baseline file of the reference run")
    p.add_argument("head", metavar="HEAD.json", help="results or baseline file of the run under test")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text", help="output format")
    p.add_argument("-o", "--output", metavar="PATH", help="write the report to PATH instead of stdout")
    p.add_argument(
        "--tolerance",
        action="append",
        default=[],
        metavar="SELECTOR=VALUE",
        help="check tolerance, e.g. 'fluency=0.1', 'metric:*=0.5' (repeatable)",
    )
    p.add_argument(
        "--suite-tolerance",
        action="append",
        default=[],
        metavar="SELECTOR=VALUE",
        help="suite (mean change) tolerance, same selectors (repeatable)",
    )
    p.add_argument(
        "--allow-evaluator-change",
        action="store_true",
        help="compare scores of different evaluators, widening tolerances by the measured drift",
    )
    p.add_argument(
        "--new-checks",
        choices=("notice", "fail"),
        default="notice",
        help="whether checks missing from BASE fail (default: they pass with a notice)",
    )
    p.add_argument("--seed", type=_non_negative, default=0, help="seed of the paired bootstrap (default 0)")
    p.add_argument("--replicates", type=_positive, default=2000, help="bootstrap replicates (default 2000)")
    p.set_defaults(func=run)


def run(args) -> int:
    import json
    import sys

    from pytest_nlgeval.baseline.compare import compare
    from pytest_nlgeval.baseline.errors import BaselineError
    from pytest_nlgeval.baseline.render import render_markdown, render_text
    from pytest_nlgeval.baseline.store import load_snapshot
    from pytest_nlgeval.baseline.tolerances import Tolerances
    from pytest_nlgeval.errors import UsageError

    try:
        base = load_snapshot(args.base)
        head = load_snapshot(args.head)
        comparison = compare(
            base,
            head,
            tolerances=Tolerances.from_specs(args.tolerance, args.suite_tolerance),
            allow_evaluator_change=args.allow_evaluator_change,
            new_checks=args.new_checks,
            seed=args.seed,
            replicates=args.replicates,
        )
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        text = json.dumps(comparison.to_dict(), indent=2, sort_keys=True) + "\n"
    elif args.format == "markdown":
        text = render_markdown(comparison)
    else:
        text = f"nlgeval compare {args.base} -> {args.head}\n" + "".join(
            line + "\n" for line, _ in render_text(comparison)
        )
    if args.output:
        from pytest_nlgeval.util.files import write_output

        write_output(args.output, text)
    else:
        sys.stdout.write(text)
    return 1 if comparison.failed else 0


def _non_negative(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if number < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0, got {value!r}")
    return number


def _positive(value: str) -> int:
    number = _non_negative(value)
    if number == 0:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number
