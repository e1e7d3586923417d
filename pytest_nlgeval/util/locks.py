"""An exclusive lock between processes, held through a lock file beside the file it protects.

Two pytest sessions (or a session and ``nlgeval baseline update``) that update one file at the same time must
take turns: each reads what is on disk, merges its own part and replaces the file while holding the lock, so
neither loses the other's part. Example::

    with exclusive_lock("tests/nlgeval-baseline.json.lock", timeout=60):
        data = read(path)
        write(path, merge(data, mine))

Where :mod:`fcntl` exists (Linux, macOS, the BSDs), the lock is :func:`fcntl.flock` on the lock file: the
kernel releases it when its holder exits, even after ``kill -9``. The file is removed on release; a process
that was waiting on a file that was removed meanwhile opens the new one and waits again, so two processes
never both hold the lock. Elsewhere (Windows), the lock is the lock file itself, created with
``O_CREAT | O_EXCL`` and removed on release (on a file system that refuses ``flock``, the same is done with
the lock file's name plus ``.excl``); a holder that was killed leaves that file behind, and a later process
waits ``timeout`` seconds and then fails with :class:`LockTimeout` saying which file to delete.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import time
from typing import Iterator

from pytest_nlgeval.errors import NLGEvalError

__all__ = ["LockTimeout", "exclusive_lock", "DEFAULT_TIMEOUT_S"]

DEFAULT_TIMEOUT_S = 60.0
_POLL_S = 0.05
# flock is unusable on this file (some network file systems): fall back to an exclusively created file
_NO_FLOCK = {errno.ENOLCK, errno.EINVAL, getattr(errno, "EOPNOTSUPP", -1), getattr(errno, "ENOTSUP", -1)}

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]


class LockTimeout(NLGEvalError):
    """Another process held the lock file ``path`` for longer than ``timeout`` seconds."""

    def __init__(self, path: str, timeout: float, held_by: str | None, stale_file: bool) -> None:
        self.path, self.timeout, self.held_by = path, timeout, held_by
        holder = f" (held by {held_by})" if held_by else ""
        message = f"could not lock {path} within {timeout:g} s: another process holds it{holder}"
        if stale_file:
            message += (
                "; if no other process is running, it was left behind by one that was killed: delete "
                f"{path} and run again"
            )
        else:
            message += "; wait for it to finish and run again"
        super().__init__(message)


@contextlib.contextmanager
def exclusive_lock(
    path: str | os.PathLike, *, timeout: float = DEFAULT_TIMEOUT_S, poll: float = _POLL_S
) -> Iterator[None]:
    """Hold an exclusive lock on the lock file ``path`` for the body of the ``with`` block.

    Waits at most ``timeout`` seconds for another holder (checking every ``poll`` seconds), then raises
    :class:`LockTimeout` naming the file. The lock file is created if needed and removed on release.
    """
    path = os.fspath(path)
    deadline = time.monotonic() + max(timeout, 0.0)
    fd = _acquire_flock(path, timeout, deadline, poll) if fcntl is not None else None
    held = path
    if fd is None:
        if fcntl is not None:
            # This file system refuses flock (every process using it does): the file that flock was tried on
            # locks nothing, the exclusively created one beside it does.
            held = path + ".excl"
            _acquire_exclusive_file(held, timeout, deadline, poll)
            with contextlib.suppress(OSError):
                os.unlink(path)
        else:
            _acquire_exclusive_file(held, timeout, deadline, poll)
    try:
        yield
    finally:
        # Remove the file before releasing: a waiter that then gets the old file's lock sees it is gone.
        with contextlib.suppress(OSError):
            os.unlink(held)
        if fd is not None:
            os.close(fd)  # releases the flock


def _holder() -> str:
    return f"pid {os.getpid()} on {socket.gethostname()}"


def _acquire_flock(path: str, timeout: float, deadline: float, poll: float) -> int | None:
    """The descriptor of the locked lock file; None when this file system does not support flock."""
    assert fcntl is not None
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(path, timeout, _read_holder(path), stale_file=False) from None
                    time.sleep(poll)
            try:
                current = os.stat(path)
            except FileNotFoundError:
                current = None
            if current is not None and os.path.samestat(os.fstat(fd), current):
                os.ftruncate(fd, 0)
                os.write(fd, (_holder() + "\n").encode("utf-8"))
                return fd
            # The holder we waited for removed this file on release; lock the one that is there now.
            os.close(fd)
        except OSError as exc:
            os.close(fd)
            if exc.errno in _NO_FLOCK:
                return None
            raise
        except BaseException:
            os.close(fd)
            raise


def _acquire_exclusive_file(path: str, timeout: float, deadline: float, poll: float) -> None:
    while True:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            if time.monotonic() >= deadline:
                raise LockTimeout(path, timeout, _read_holder(path), stale_file=True) from None
            time.sleep(poll)
            continue
        try:
            os.write(fd, (_holder() + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        return


def _read_holder(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(200).strip()
    except OSError:
        return None
    return text or None
