"""The ``nlgeval`` command line.

Each subcommand lives in its own module under :mod:`pytest_nlgeval.commands` and exposes
``register(subparsers)``; ``register`` adds its parser and sets ``func`` (``args -> int exit code``).
Modules are imported only to build the parser, and they import their heavy dependencies inside ``func``.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from pytest_nlgeval import commands
from pytest_nlgeval.errors import UsageError

__all__ = ["main", "build_parser", "UsageError"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="nlgeval", description="pytest-nlgeval command line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except UsageError as exc:
        print(f"nlgeval {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a path that is a folder, read-only or on a full disk: the user's to fix
        where = f" {exc.filename!r}" if exc.filename else ""
        print(f"nlgeval {args.command}: error: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except RecursionError:
        print(f"nlgeval {args.command}: error: an input is nested too deeply to read", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
