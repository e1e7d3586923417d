"""The current run: the one piece of module-level run state in pytest-nlgeval.

The run state itself (evaluators, score cache, dimension registry, check recorder) is a
:class:`~pytest_nlgeval.core.context.Context`; a pytest session keeps its context in ``config.stash``.
But ``assert_dimension(...)``, ``assert_trajectory(...)`` and a hand-made ``Score(...)`` take no run
argument, and pytest offers no way to reach the running session's ``config`` from inside a test. So they
look the context up here, once, where they are called (a score: when it is made), and hand what they
found down as arguments: the evaluator and a score's comparison never look it up.

``_contexts`` is the stack of contexts, innermost last:

* outside pytest (a script, a notebook), the standalone context sits at the bottom, created on first use
  by :func:`pytest_nlgeval.core.context.active`;
* a pytest session installs its context when it is configured and takes it out when it ends; pytester
  runs sessions inside a session, so the innermost one is current and the outer one is back afterwards.

This module imports nothing, so every layer of the core may ask it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pytest_nlgeval.core.checks import CheckRecorder
    from pytest_nlgeval.core.context import Context

__all__ = ["CURRENT", "install", "installed", "innermost", "recorder", "uninstall"]

_contexts: list[Any] = []


class _CurrentRun:
    """The default of a ``recorder=`` argument: the recorder of the current run, looked up when used."""

    def __repr__(self) -> str:
        return "CURRENT"


CURRENT: Any = _CurrentRun()


def install(context: "Context") -> None:
    """Make ``context`` the current one until :func:`uninstall`."""
    _contexts.append(context)


def uninstall(context: "Context") -> None:
    """Take ``context`` out (wherever it is in the stack: sessions may end out of order)."""
    for i in range(len(_contexts) - 1, -1, -1):
        if _contexts[i] is context:
            del _contexts[i]
            return


def installed() -> tuple:
    """Every installed context, innermost last."""
    return tuple(_contexts)


def innermost() -> "Context | None":
    """The current context, or None when nothing has been installed yet."""
    return _contexts[-1] if _contexts else None


def recorder() -> "CheckRecorder | None":
    """The check recorder of the current run (None outside pytest unless one was activated)."""
    context = innermost()
    return context.recorder if context is not None else None
