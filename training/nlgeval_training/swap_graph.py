"""Put a newly trained graph into a model folder that already declares its dimensions.

The embedded default folder's own graph is the claim-support head of the fact dimensions
(training/configs/embedded-claim.toml); retraining it changes the graph, its tokenizer and what the card says
of its training and held-out figures, not the dimensions it serves, their calibrations or its sub-folders.
``nlgeval-train swap-graph FOLDER EXPORT`` copies the exported graph and tokenizer in, takes the export's
record (exporter, parity, source checkpoint), replaces the card's training entries, and re-hashes the folder.

    >>> swap_graph("runtime/nlgeval_runtime/embedded", "runs/claim/export")  # doctest: +SKIP
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from nlgeval_training.errors import UsageError
from nlgeval_training.folder_writer import finalize_model_folder

#: what the export decides and the folder takes over; everything else of the folder's manifest is kept
TAKEN = ("architecture", "classifier", "export", "input", "kind", "quantization", "source", "variants")


def swap_graph(folder: str | Path, export: str | Path, *, training: list[dict] | None = None) -> dict[str, Any]:
    from nlgeval_runtime.modelfolder import ModelFolder

    folder, export = Path(folder), Path(export)
    old = ModelFolder.open(folder).manifest
    new = ModelFolder.open(export).manifest
    if new.get("kind") != old.get("kind"):
        raise UsageError(f"{export} holds a {new.get('kind')!r} model; {folder} serves a {old.get('kind')!r} one")
    for name in new["variants"].values():
        shutil.copy2(export / name, folder / name)
    shutil.copy2(export / "tokenizer.json", folder / "tokenizer.json")
    for precision, name in old.get("variants", {}).items():
        if precision not in new["variants"] and (folder / name).exists():
            (folder / name).unlink()  # a precision the new export does not ship
    manifest = {k: v for k, v in old.items() if k not in ("files", *TAKEN)}
    manifest.update({k: new[k] for k in TAKEN if k in new})
    card = dict(manifest.get("card") or {})
    card["file_sizes"] = {name: (folder / name).stat().st_size for name in new["variants"].values()}
    if training is not None:
        card["training"] = training
    manifest["card"] = card
    return finalize_model_folder(folder, manifest)
