"""Errors of ``nlgeval-train`` that users see; messages name the wrong input and the fix.

Kept apart from :mod:`nlgeval_training.cli` so that the subcommand modules it loads can raise them
without importing the command line that imports them.
"""

from __future__ import annotations


class UsageError(Exception):
    """Bad command-line input; the message says what to change."""
