"""Errors of pytest-nlgeval that users see; messages name the wrong input and the fix."""

from __future__ import annotations


class NLGEvalError(Exception):
    """Base class of pytest-nlgeval's user-facing errors."""


class UsageError(NLGEvalError):
    """A user error of a command-line subcommand: printed without a traceback, exit status 2."""
