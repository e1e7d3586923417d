"""Atomic file writes: a reader (or a later run after an interrupt) sees the old file or the new one, never half.

The text goes to a temporary file in the target's folder, is flushed to disk, gets the permissions of the
file it replaces (or of a normal new file: ``mkstemp`` would leave it readable by its owner only), and then
replaces the target in one :func:`os.replace`, which is atomic on POSIX and Windows.
"""
from __future__ import annotations

import contextlib
import os
import tempfile


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    try:
        mode = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
