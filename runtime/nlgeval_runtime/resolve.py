"""Model resolution: explicit folder, Hugging Face id, or the embedded default.

Order (README, "Models"; docs/model-folder.md):

1. ``None`` / ``"default"``: the embedded default model that ships inside this package.
2. An existing local path: an exported model folder is used as it is; a Hugging Face checkpoint
   folder (``config.json``) is exported once into the cache.
3. Anything else is a Hugging Face id, ``org/name`` or ``org/name@revision``. The cache under the user
   cache dir is consulted first, so an id resolves offline once prepared. Online, a repository that
   already holds an exported model folder (``nlgeval.json`` at its root) is downloaded as it is;
   otherwise the checkpoint is downloaded and exported once.

Exporting needs torch, which the runtime never imports: it calls the exporter that an installed
distribution registers for the folder kind (:mod:`nlgeval_runtime.exporters`; ``pytest-nlgeval[train]``
installs one). Without one, a checkpoint is an error that names the extra to install.

Example::

    resolve_model("MingZhong/unieval-sum")   # ~/.cache/nlgeval/models/MingZhong--unieval-sum/main
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

from nlgeval_runtime import exporters
from nlgeval_runtime.errors import ModelNotFoundError
from nlgeval_runtime.modelfolder import KINDS, MANIFEST

DEFAULT_NAMES = ("default", "embedded")
_HF_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def embedded_model_path() -> Path:
    return Path(__file__).resolve().parent / "embedded"


def default_cache_dir() -> Path:
    env = os.environ.get("NLGEVAL_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_cache_dir

    return Path(user_cache_dir("nlgeval"))


def is_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in {"1", "true", "yes", "on"} or (
        os.environ.get("NLGEVAL_OFFLINE", "").lower() in {"1", "true", "yes", "on"}
    )


def split_hub_id(spec: str) -> tuple[str, str]:
    repo, _, revision = spec.partition("@")
    return repo, revision or "main"


def cached_model_path(
    repo_id: str, revision: str, cache_dir: str | os.PathLike | None = None, kind: str = "boolqa"
) -> Path:
    base = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    # One checkpoint can be served as a Boolean-QA evaluator and as a causal LM: keep the exports apart.
    leaf = revision if kind == "boolqa" else f"{revision}.{kind}"
    return base / "models" / repo_id.replace("/", "--") / leaf


def resolve_model(
    model: str | os.PathLike | None,
    *,
    cache_dir: str | os.PathLike | None = None,
    offline: bool | None = None,
    kind: str = "boolqa",
) -> Path:
    """Return the path of an exported model folder for ``model``; see the module docstring.

    ``kind`` says what a checkpoint is exported as when it must be: ``"boolqa"`` (evaluator) or
    ``"causal-lm"`` (token log-probabilities for trajectories and perplexity).
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    if model is None or str(model) in DEFAULT_NAMES:
        path = embedded_model_path()
        if not (path / MANIFEST).is_file():
            raise ModelNotFoundError(
                "the embedded default model is not part of this installation of nlgeval-runtime "
                f"({path} has no {MANIFEST}); pass a model folder or a Hugging Face id instead, "
                "e.g. --nlgeval-model MingZhong/unieval-sum"
            )
        return path
    spec = os.fspath(model)
    local = Path(spec).expanduser()
    if local.exists():
        if (local / MANIFEST).is_file():
            return local
        if (local / "config.json").is_file():
            target = cached_model_path("local/" + _slug(local), "export", cache_dir, kind)
            if (target / MANIFEST).is_file():
                return target
            return _export_into(str(local), target, kind=kind)
        raise ModelNotFoundError(
            f"{spec!r} is neither an exported model folder (no {MANIFEST}) nor a Hugging Face checkpoint "
            f"folder (no config.json); export one with `nlgeval export CHECKPOINT {spec}`"
        )
    if not _HF_ID.match(spec.partition("@")[0]):
        raise ModelNotFoundError(
            f"model {spec!r} is not an existing folder and not a Hugging Face id of the form 'org/name'"
        )
    repo_id, revision = split_hub_id(spec)
    target = cached_model_path(repo_id, revision, cache_dir, kind)
    if (target / MANIFEST).is_file():
        return target
    if offline if offline is not None else is_offline():
        raise ModelNotFoundError(
            f"model {spec!r} is not in the cache ({target}) and the Hugging Face Hub is offline; "
            f"prepare it once while online with `nlgeval prepare {spec}` "
            f"(or export it anywhere with `nlgeval export {spec} DIR` and pass DIR)"
        )
    return _fetch(repo_id, revision, target, kind)


def _slug(path: Path) -> str:
    import hashlib

    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


def _fetch(repo_id: str, revision: str, target: Path, kind: str) -> Path:
    try:
        from huggingface_hub import list_repo_files, snapshot_download
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise ModelNotFoundError("huggingface_hub is needed to download models: pip install huggingface_hub") from exc
    try:
        files = list_repo_files(repo_id, revision=revision)
    except Exception as exc:  # network errors, 404s and auth errors all end here
        raise ModelNotFoundError(
            f"cannot reach Hugging Face model {repo_id!r} at revision {revision!r}: {type(exc).__name__}: "
            f"{str(exc)[:300]}. Check the id and your network (set HF_HUB_OFFLINE=1 to fail at once when "
            f"offline), or prepare the model elsewhere with `nlgeval prepare {repo_id}`"
        ) from None
    if MANIFEST in files:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".download-", dir=target.parent))
        try:
            snapshot_download(repo_id, revision=revision, local_dir=str(staging))
            shutil.rmtree(staging / ".cache", ignore_errors=True)
            _publish(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return target
    _exporter(kind, repo_id)  # a checkpoint needs the exporter: say so before downloading gigabytes
    checkpoint = snapshot_download(
        repo_id,
        revision=revision,
        allow_patterns=["*.json", "*.safetensors", "*.bin", "*.model", "*.txt"],
    )
    return _export_into(checkpoint, target, source_id=repo_id, revision=revision, kind=kind)


def _exporter(kind: str, name: str):
    """The installed exporter of ``kind``, or the named error that says which extra installs one."""
    missing: ImportError | None = None
    try:
        export = exporters.find_exporter(kind)
    except ImportError as exc:  # registered, but its distribution lacks a dependency (torch, ...)
        export, missing = None, exc
    if export is None:
        raise ModelNotFoundError(
            f"{name!r} is a PyTorch checkpoint, not an exported model folder, and exporting "
            "it needs the training extra: pip install \"pytest-nlgeval[train]\" (or nlgeval-training); "
            "then run `nlgeval prepare` again" + (f" ({type(missing).__name__}: {missing})" if missing else "")
        ) from None
    return export


def _export_into(
    checkpoint: str, target: Path, *, source_id: str | None = None, revision: str | None = None, kind: str = "boolqa"
) -> Path:
    export = _exporter(kind, source_id or checkpoint)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target.parent))
    try:
        export(checkpoint, staging, source_id=source_id, revision=revision)
        _publish(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _publish(staging: Path, target: Path) -> None:
    """Move a complete folder into place; a concurrent writer that won the race is kept."""
    if (target / MANIFEST).is_file():
        return
    if target.exists():
        shutil.rmtree(target)  # an incomplete leftover of an interrupted export
    try:
        os.replace(staging, target)
    except OSError:
        if not (target / MANIFEST).is_file():
            raise
