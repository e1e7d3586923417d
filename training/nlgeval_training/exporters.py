"""The exporters this package registers for the runtime (entry-point group ``nlgeval_runtime.exporters``).

:func:`nlgeval_runtime.resolve.resolve_model` meets PyTorch checkpoints (a Hub id with no exported
folder, a local checkpoint folder) that it cannot convert without torch; it calls the exporter
registered here for the kind of folder it needs. All take the runtime's arguments:

    >>> export_boolqa("ckpt/unieval-sum", "models/unieval-sum", source_id="MingZhong/unieval-sum",
    ...               revision="main")                                     # doctest: +SKIP

The export modules are imported on call, so that looking an exporter up stays cheap.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["export_boolqa", "export_causal_lm", "export_claim_support"]


def export_boolqa(
    checkpoint: str, out_dir: str | Path, *, source_id: str | None = None, revision: str | None = None
) -> dict[str, Any]:
    """A Boolean-QA evaluator folder (T5 family or encoder classifier); returns its manifest."""
    from nlgeval_training.export import export_model

    return export_model(checkpoint, out_dir, source_id=source_id, revision=revision)


def export_causal_lm(
    checkpoint: str, out_dir: str | Path, *, source_id: str | None = None, revision: str | None = None
) -> Path:
    """A causal-LM folder (token log-probabilities); returns the folder.

    ``checkpoint`` is already local, so ``revision`` is not passed on: it would select a branch of a Hub
    repository, and the manifest then records the folder the weights were read from.
    """
    from nlgeval_training.export_causal import export_causal_lm as export

    return export(checkpoint, out_dir)


def export_claim_support(
    checkpoint: str, out_dir: str | Path, *, source_id: str | None = None, revision: str | None = None
) -> dict[str, Any]:
    """A fact checker's claim-support folder (MiniCheck, HHEM-2.1-Open; ``nlgeval_training.checkers``), recognised
    from ``source_id`` or the checkpoint; returns its manifest."""
    from nlgeval_training.checkers import export_checker

    return export_checker(checkpoint, out_dir, source_id=source_id, revision=revision)
