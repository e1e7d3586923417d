"""``nlgeval report RESULTS.json -o report.html``: the HTML report of a results file, outside pytest.

With ``--baseline BASE.json`` (a baseline file or another run's results file) the run is compared first, with
the verdicts of ``pytest --nlgeval-baseline`` / ``nlgeval compare``, and the comparison is shown in the report.
Extra sections come from installed plugins' ``pytest_nlgeval_report_sections`` hooks (``pytest11`` entry
points, unless ``PYTEST_DISABLE_PLUGIN_AUTOLOAD`` is set or ``--no-plugins`` is given) and from modules named
with ``-p MODULE``; ``conftest.py`` files are not read here. Example::

    nlgeval report results.json --baseline tests/nlgeval-baseline.json -o report.html
"""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "report",
        help="render the HTML report of a results file",
        description="Render one self-contained HTML page (no scripts, no network) from a results file written "
        "by `pytest --nlgeval-json`.",
    )
    p.add_argument("results", metavar="RESULTS.json", help="results file of a pytest session")
    p.add_argument(
        "-o", "--output", metavar="PATH", default="report.html", help="HTML file to write (default report.html)"
    )
    p.add_argument(
        "--baseline",
        metavar="BASE.json",
        help="compare with this baseline (or reference results) file and show the comparison "
        "(replaces a comparison already in RESULTS.json)",
    )
    p.add_argument(
        "--tolerance",
        action="append",
        default=[],
        metavar="SELECTOR=VALUE",
        help="check tolerance for --baseline, e.g. 'fluency=0.1' (repeatable)",
    )
    p.add_argument(
        "--suite-tolerance",
        action="append",
        default=[],
        metavar="SELECTOR=VALUE",
        help="suite (mean change) tolerance for --baseline (repeatable)",
    )
    p.add_argument(
        "--allow-evaluator-change",
        action="store_true",
        help="with --baseline: compare scores of different evaluators, tolerances widened by the drift",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the paired bootstrap (default 0)")
    p.add_argument(
        "-p",
        dest="plugins",
        action="append",
        default=[],
        metavar="MODULE",
        help="import MODULE and use its pytest_nlgeval_report_sections hook (repeatable)",
    )
    p.add_argument("--no-plugins", action="store_true", help="do not load installed pytest plugins' sections")
    p.add_argument("--title", default="pytest-nlgeval report", help="page title")
    p.set_defaults(func=run)


def run(args) -> int:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.report.html import write_html
    from pytest_nlgeval.report.results import ReportInputError, load_results
    from pytest_nlgeval.report.sections import collect_sections

    try:
        results = load_results(args.results)
    except ReportInputError as exc:
        raise UsageError(str(exc)) from None
    if args.baseline:
        results["baseline"] = compare_with_baseline(
            results,
            args.baseline,
            source=args.results,
            tolerances=args.tolerance,
            suite_tolerances=args.suite_tolerance,
            allow_evaluator_change=args.allow_evaluator_change,
            seed=args.seed,
        )
    try:
        sections = collect_sections(results, plugins=args.plugins, autoload=False if args.no_plugins else None)
    except (ImportError, TypeError, ValueError) as exc:
        raise UsageError(f"report sections: {exc}") from None
    try:
        path = write_html(results, args.output, sections=sections, title=args.title)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output!r}: {exc.strerror or exc}") from None
    print(f"wrote {path}")
    return 0


def compare_with_baseline(
    results,
    baseline_path: str,
    *,
    source: str,
    tolerances=(),
    suite_tolerances=(),
    allow_evaluator_change: bool = False,
    seed: int = 0,
) -> dict:
    """``results["baseline"]`` as the pytest plugin would have written it for ``--nlgeval-baseline``."""
    from pytest_nlgeval.baseline.compare import compare
    from pytest_nlgeval.baseline.errors import BaselineError
    from pytest_nlgeval.baseline.store import Baseline, load_snapshot
    from pytest_nlgeval.baseline.tolerances import Tolerances
    from pytest_nlgeval.errors import UsageError

    try:
        comparison = compare(
            load_snapshot(baseline_path),
            Baseline.from_results(results, source),
            tolerances=Tolerances.from_specs(list(tolerances), list(suite_tolerances)),
            allow_evaluator_change=allow_evaluator_change,
            seed=seed,
        )
    except BaselineError as exc:
        raise UsageError(str(exc)) from None
    return {"path": baseline_path, **comparison.to_dict()}
