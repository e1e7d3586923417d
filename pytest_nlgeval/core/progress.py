"""Progress of long runs, drawn by tqdm: one status line on a terminal, a line per tenth in a log.

A run that takes more than a few seconds says how far it is: the commands that score, judge, meta-evaluate,
induce, export or fit, and the pytest plugin while it scores a batch. On a terminal the line is redrawn in
place and removed when the run ends; where standard error is not a terminal (a CI log) it is written once per
tenth of the work, so a log gains about ten lines, not thousands.

    with progress(len(rows), "scoring", unit="row") as bar:
        for chunk in chunks:
            ...
            bar.update(len(chunk))

``enabled=False`` (``-q``, ``--quiet``) or fewer than :data:`MIN_ITEMS` items gives a bar that draws nothing.
"""

from __future__ import annotations

import sys
from typing import Any

#: runs over fewer items than this draw no bar (they end before a bar would help)
MIN_ITEMS = 32


class _Silent:
    """A bar that draws nothing (quiet runs, short runs)."""

    n = 0

    def update(self, k: int = 1) -> None:
        self.n += k

    def set_postfix_str(self, text: str) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self) -> "_Silent":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def progress(total: int, description: str, *, unit: str = "item", enabled: bool = True, stream: Any = None):
    """A tqdm bar over ``total`` items on ``stream`` (standard error by default), or one that draws nothing
    when ``enabled`` is false or the run is short. Use it as a context manager and call ``update(k)``."""
    if not enabled or total < MIN_ITEMS:
        return _Silent()
    from tqdm import tqdm

    stream = stream if stream is not None else sys.stderr
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty()) if callable(isatty) else False
    if terminal:
        return tqdm(total=total, desc=description, unit=unit, file=stream, leave=False, mininterval=0.2)
    # a log: a line per tenth, plain characters, no redrawing in place
    return tqdm(
        total=total,
        desc=description,
        unit=unit,
        file=stream,
        leave=True,
        ascii=True,
        ncols=100,
        mininterval=0,
        maxinterval=float("inf"),
        miniters=max(1, total // 10),
    )
