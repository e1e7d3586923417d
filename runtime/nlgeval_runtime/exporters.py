"""Checkpoint exporters, found through the entry-point group ``nlgeval_runtime.exporters``.

The runtime serves model folders and converts nothing itself: turning a PyTorch checkpoint into a folder
needs torch, which the runtime never imports. A distribution that can convert checkpoints registers one
exporter per folder kind (``boolqa``, ``causal-lm``, ``claim-support``); nlgeval-training does, so installing
``pytest-nlgeval[train]`` lets :func:`~nlgeval_runtime.resolve.resolve_model` accept checkpoints::

    [project.entry-points."nlgeval_runtime.exporters"]
    boolqa = "my_package.export:export_boolqa"

An exporter is called as ``exporter(checkpoint, out_dir, source_id=..., revision=...)``: ``checkpoint``
is a local checkpoint folder, ``out_dir`` an empty folder to fill with a complete model folder,
``source_id``/``revision`` where the checkpoint came from (None for a local folder), for the manifest.

    >>> find_exporter("boolqa")          # None when no installed distribution registers one
    <function export_boolqa at 0x...>
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Protocol

from nlgeval_runtime.errors import ModelNotFoundError
from nlgeval_runtime.modelfolder import KINDS

GROUP = "nlgeval_runtime.exporters"

__all__ = ["GROUP", "Exporter", "find_exporter"]


class Exporter(Protocol):
    def __call__(self, checkpoint: str, out_dir: Path, *, source_id: str | None, revision: str | None) -> object: ...


def _entry_points() -> Iterable:
    from importlib.metadata import entry_points

    return entry_points(group=GROUP)


def find_exporter(kind: str) -> Exporter | None:
    """The exporter registered for model folders of ``kind``, or None when none is installed.

    Loading it imports the registering distribution, so an ImportError there (torch missing, say)
    reaches the caller, which knows what the user should install.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    # The same distribution can be seen twice (an editable install next to its egg-info); only
    # different targets are a real conflict.
    targets = {ep.value: ep for ep in _entry_points() if ep.name == kind}
    if not targets:
        return None
    if len(targets) > 1:
        raise ModelNotFoundError(
            f"several exporters are registered for {kind!r} model folders in the entry-point group {GROUP!r} "
            f"({', '.join(sorted(targets))}); uninstall all but one of the distributions that provide them"
        )
    return next(iter(targets.values())).load()
