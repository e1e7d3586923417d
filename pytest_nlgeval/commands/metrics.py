"""``nlgeval metrics``: list the metric bank, show a metric's card.

nlgeval metrics list            # every metric with its one-line summary
nlgeval metrics show rouge2     # the whole card, and the metric's signature
nlgeval metrics seal helpful.json   # re-seal an induced metric after a reviewed hand edit
"""

from __future__ import annotations


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "metrics",
        help="list the metric bank and show metric cards",
        description="List the metric bank and show metric cards.",
    )
    sub = parser.add_subparsers(dest="metrics_command", metavar="ACTION")
    sub.required = True
    p_list = sub.add_parser("list", help="every metric with a one-line summary")
    p_list.add_argument("--names", action="store_true", help="names only, one per line")
    p_list.set_defaults(func=_list)
    p_show = sub.add_parser("show", help="print a metric's card")
    p_show.add_argument("name", help="metric name (see `nlgeval metrics list`)")
    p_show.add_argument("--section", help="print only this section of the card, e.g. 'Known Limitations'")
    p_show.set_defaults(func=_show)
    p_seal = sub.add_parser(
        "seal",
        help="re-seal an induced-metric artifact after a reviewed hand edit",
        description="Validate an induced-metric artifact and rewrite its content hash "
        "(sha256), so that it loads without trust=True. Only for edits you "
        "reviewed: every score of the metric depends on the file's numbers.",
    )
    p_seal.add_argument("path", metavar="FILE", help="the induced-metric artifact (nlgeval induce -o FILE)")
    p_seal.set_defaults(func=_seal)


def _list(args) -> int:
    from pytest_nlgeval.metrics import CardError, list_metrics, load_card

    names = list_metrics()
    if args.names:
        print("\n".join(names))
        return 0
    width = max(len(n) for n in names)
    for name in names:
        try:
            summary = load_card(name).summary
        except CardError:
            summary = "(no card)"
        print(f"{name.ljust(width)}  {summary}")
    return 0


def _show(args) -> int:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.metrics import CardError, list_metrics, load_card

    if args.name not in list_metrics():
        import difflib

        close = difflib.get_close_matches(args.name, list_metrics(), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else "; see `nlgeval metrics list`"
        raise UsageError(f"unknown metric {args.name!r}{hint}")
    try:
        card = load_card(args.name)
    except CardError as exc:
        raise UsageError(str(exc)) from None
    if args.section:
        if args.section not in card.sections:
            raise UsageError(f"card {args.name!r} has no section {args.section!r}; it has: {', '.join(card.sections)}")
        print(card.sections[args.section])
        return 0
    print(card.text.rstrip())
    return 0


def _seal(args) -> int:
    from pytest_nlgeval.errors import UsageError
    from pytest_nlgeval.induction.artifact import ArtifactError, seal_file

    try:
        digest = seal_file(args.path)
    except ArtifactError as exc:
        raise UsageError(str(exc)) from None
    print(f"{args.path}: sealed, sha256 {digest}")
    return 0
