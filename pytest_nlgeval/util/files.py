"""Atomic file writes: a reader (or a later run after an interrupt) sees the old file or the new one, never half.

The text goes to a temporary file in the target's folder, is flushed to disk, gets the permissions of the
file it replaces (or of a normal new file: ``mkstemp`` would leave it readable by its owner only), and then
replaces the target in one :func:`os.replace`, which is atomic on POSIX and Windows.

A process killed (SIGKILL, power loss) between creating the temporary file and the replace leaves the
temporary file behind (``.NAME.<random>.tmp``); the next write of the same target removes such leftovers once
they are older than :data:`STALE_AFTER_S` (a write in progress takes milliseconds).
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import time

STALE_AFTER_S = 60.0  # a temporary file untouched this long belongs to a writer that was killed


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
    remove_stale_temporaries(path)


def remove_stale_temporaries(path: str | os.PathLike, older_than: float = STALE_AFTER_S) -> list[str]:
    """Delete the temporary files of killed writes of ``path``; returns the paths removed."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    pattern = os.path.join(glob.escape(folder), "." + glob.escape(os.path.basename(path)) + ".*.tmp")
    now, removed = time.time(), []
    for leftover in glob.glob(pattern):
        with contextlib.suppress(OSError):  # gone already, or not ours to remove
            if now - os.stat(leftover).st_mtime >= older_than:
                os.unlink(leftover)
                removed.append(leftover)
    return removed


def output_problem(path: str | os.PathLike) -> str | None:
    """Why a file cannot be written at ``path`` (a folder is there, its folder cannot be created or written,
    the file is read-only), in words that name it; None when it can be written, as far as can be told before
    trying."""
    path = os.fspath(path)
    if os.path.isdir(path):
        return f"{path!r} is a folder; give a file name inside it"
    if os.path.exists(path) and not os.access(path, os.W_OK):
        return f"{path!r} is read-only; give a file you may write, or change its permissions"
    folder = os.path.dirname(os.path.abspath(path))
    existing = folder
    while not os.path.isdir(existing):
        parent = os.path.dirname(existing)
        if os.path.exists(existing) or parent == existing:
            return f"{path!r} cannot be created: {existing!r} is not a folder"
        existing = parent
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"{path!r} cannot be written: the folder {existing!r} is read-only"
    return None


def write_output(path: str | os.PathLike, text: str, *, append: bool = False) -> None:
    """Write (or append) ``text`` to a command's output file; a :class:`~pytest_nlgeval.errors.UsageError`
    naming the file when it cannot be written (a folder, a read-only file or folder, a full disk)."""
    from pytest_nlgeval.errors import UsageError

    problem = output_problem(path)
    if problem is not None:
        raise UsageError(problem)
    try:
        if append:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(text)
        else:
            write_text_atomic(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write {os.fspath(path)!r}: {exc.strerror or exc}") from None
