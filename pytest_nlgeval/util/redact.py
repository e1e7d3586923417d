"""Absolute paths of this machine taken out of text that is written into a shared file.

A file that is committed and read elsewhere (an induced-metric artifact) must not carry the folders of the
machine that wrote it: they say nothing to its readers, and they leak user names and layouts. Messages of
exceptions often name such paths; :func:`local_paths_removed` rewrites each absolute path in a text as the
path relative to ``base`` (the current folder by default) when it lies inside it, and as its last component
otherwise. Example::

    >>> local_paths_removed("/home/ann/proj/models/sum has no nlgeval.json", base="/home/ann/proj")
    'models/sum has no nlgeval.json'
    >>> local_paths_removed("cannot read /tmp/x1/data.jsonl; see https://example.org/a/b", base="/home/ann")
    'cannot read data.jsonl; see https://example.org/a/b'
"""

from __future__ import annotations

import ntpath
import os
import posixpath
import re

__all__ = ["local_paths_removed"]

# A POSIX path starts with "/", a Windows one with a drive ("C:\" or "C:/") or "\\server"; neither may follow a
# character that makes it part of something else (a URL's "//host/x", a ratio "3/5", "and/or"). It ends at
# white space, a quote, a bracket or a separator of the sentence around it.
_STOP = r"""\s'"`()\[\]{}<>,;|"""
_PATH = re.compile(
    rf"(?<![\w.:/\\~$%&+=@-])(?:[A-Za-z]:[\\/]|\\\\|/)[^{_STOP}]*[^{_STOP}.:]",
)


def local_paths_removed(text: str, base: str | os.PathLike | None = None) -> str:
    """``text`` with every absolute path made relative to ``base`` (inside it) or cut to its last component."""
    root = os.path.abspath(os.fspath(base) if base is not None else os.getcwd())

    def shorten(match: re.Match) -> str:
        path = match.group(0)
        windows = not path.startswith("/") or "\\" in path
        flavour = ntpath if windows else posixpath
        if not windows and os.sep == "/":
            inside = path == root or path.startswith(root.rstrip("/") + "/")
            if inside:
                return posixpath.relpath(path, root)
        stripped = path.rstrip("\\/")
        return flavour.basename(stripped) or stripped

    return _PATH.sub(shorten, text)
