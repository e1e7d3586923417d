"""Run configurations from TOML or YAML files.

A file has up to three tables: ``[pseudo]`` (corpora and generator options for :func:`build_pseudo_data`),
``[intermediate]`` (files of the intermediate tasks) and ``[train]`` (the fields of
:class:`~nlgeval_training.trainer.TrainConfig`). Relative paths are resolved against the config file's folder.

    >>> cfg = load_config("training/configs/embedded.toml")     # doctest: +SKIP
    >>> cfg["train"]["mode"]                                     # doctest: +SKIP
    'multitask'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A configuration file is missing, malformed or has unknown keys."""


def load_config(path: str | Path) -> dict[str, Any]:
    """Parse a ``.toml``, ``.yaml`` or ``.yml`` file into a dict of tables."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".toml":
        import tomllib

        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path} is not valid TOML: {exc}") from None
    elif path.suffix in (".yaml", ".yml"):
        import yaml

        try:
            data = yaml.safe_load(text) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path} is not valid YAML: {exc}") from None
    else:
        raise ConfigError(f"{path}: use a .toml, .yaml or .yml file")
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a table/mapping at the top level")
    unknown = sorted(set(data) - {"pseudo", "intermediate", "train"})
    if unknown:
        raise ConfigError(f"{path}: unknown table(s) {unknown}; expected pseudo, intermediate, train")
    return data


def resolve(base: Path, value: str) -> str:
    """``value`` as a path relative to ``base`` unless absolute; ``~`` and ``$VARS`` are expanded."""
    import os

    expanded = os.path.expandvars(os.path.expanduser(value))
    p = Path(expanded)
    return str(p if p.is_absolute() else (base / p))
