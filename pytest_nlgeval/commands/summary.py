"""``nlgeval summary RESULTS.json --format step-summary|pr-comment``: Markdown for CI.

``step-summary`` is for ``$GITHUB_STEP_SUMMARY`` (kept under 1 MiB); ``pr-comment`` starts with a hidden
marker so a workflow can find and update its own comment (kept under GitHub's 65,536-character limit).
Example::

    nlgeval summary results.json --format step-summary --artifact-url "$URL" >> "$GITHUB_STEP_SUMMARY"
"""

from __future__ import annotations


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "summary",
        help="Markdown summary of a results file (job summary or pull-request comment)",
        description="Totals, regressions with old -> new scores, the worst failures and a link to the report, "
        "within GitHub's size limits.",
    )
    p.add_argument("results", metavar="RESULTS.json", help="results file of a pytest session")
    p.add_argument(
        "--format",
        choices=("step-summary", "pr-comment"),
        default="step-summary",
        help="step-summary (<= 1 MiB) or pr-comment (<= 64 KB, with a hidden marker)",
    )
    p.add_argument("--artifact-url", metavar="URL", help="link to the uploaded HTML report")
    p.add_argument(
        "--marker-id",
        default="default",
        help="id in the comment's hidden marker (one sticky comment per id, e.g. per job)",
    )
    p.add_argument("-o", "--output", metavar="PATH", help="append to PATH instead of printing")
    p.set_defaults(func=run)


def run(args) -> int:
    import sys

    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.report.markdown import pr_comment, step_summary
    from pytest_nlgeval.report.results import ReportInputError, load_results

    try:
        results = load_results(args.results)
        if args.format == "pr-comment":
            text = pr_comment(results, artifact_url=args.artifact_url, marker_id=args.marker_id)
        else:
            text = step_summary(results, artifact_url=args.artifact_url)
    except (ReportInputError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    if args.output:
        from pytest_nlgeval.util.files import write_output

        write_output(args.output, text, append=True)
    else:
        sys.stdout.write(text)
    return 0
