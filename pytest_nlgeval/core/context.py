"""The evaluation context of a run: evaluators by model and the dimension registry.

Inside pytest the plugin installs a :class:`Context` built from its options; outside pytest (a script,
a notebook) :func:`active` gives a default one (model from ``NLGEVAL_MODEL`` or the embedded default,
cache in ``.nlgeval-cache``). Evaluators and the registry are created on first use, so a session that
never scores anything loads nothing.
"""
from __future__ import annotations

import os
from typing import Any, Callable

__all__ = ["Context", "activate", "active", "deactivate"]


class Context:
    """Evaluators (one per model, created lazily) sharing one dimension registry.

    ``options``: ``model``, ``device``, ``precision``, ``batch_size``, ``source_windows``, ``cache`` (bool),
    ``cache_dir``.
    ``register_dimensions(registry)`` is called once, when the registry is first needed (the plugin
    passes its ``pytest_nlgeval_register_dimensions`` hook there, after every conftest is loaded).
    """

    def __init__(self, options: dict[str, Any] | None = None,
                 register_dimensions: Callable[[Any], None] | None = None) -> None:
        self.options = dict(options or {})
        self._register_dimensions = register_dimensions
        self._registry = None
        self._evaluators: dict[str | None, Any] = {}
        self._cache = None

    @property
    def registry(self):
        if self._registry is None:
            from pytest_nlgeval.core.dimensions import DimensionRegistry

            registry = DimensionRegistry()
            if self._register_dimensions is not None:
                self._register_dimensions(registry)
            self._registry = registry
        return self._registry

    def evaluator(self, model: str | None = None):
        """The evaluator for ``model`` (default: the configured model); created on first use."""
        key = model if model is not None else self.options.get("model")
        evaluator = self._evaluators.get(key)
        if evaluator is None:
            from pytest_nlgeval.core.evaluator import DEFAULT_CACHE_DIR, Evaluator

            cache: Any = False
            if self.options.get("cache", True):
                if self._cache is None:
                    from pathlib import Path

                    from pytest_nlgeval.core.cache import ScoreCache

                    base = self.options.get("cache_dir") or DEFAULT_CACHE_DIR
                    self._cache = ScoreCache(Path(base) / "scores.sqlite3")
                cache = self._cache
            evaluator = Evaluator(key, device=self.options.get("device") or "auto",
                                  precision=self.options.get("precision") or "auto",
                                  batch_size=self.options.get("batch_size"), cache=cache, registry=self.registry,
                                  source_windows=self.options.get("source_windows") or "auto")
            self._evaluators[key] = evaluator
        return evaluator

    @property
    def evaluators(self) -> list:
        return list(self._evaluators.values())

    def close(self) -> None:
        for evaluator in self._evaluators.values():
            evaluator._scorer = None
        if self._cache is not None:
            self._cache.close()


_stack: list[Context] = []  # nested sessions (pytester runs in-process) restore the outer one
_standalone: Context | None = None


def activate(context: Context) -> None:
    _stack.append(context)


def deactivate(context: Context | None = None) -> None:
    if context is None:
        _stack.clear()
    elif context in _stack:
        _stack.remove(context)


def active() -> Context:
    """The plugin's context inside pytest, else a default standalone one."""
    global _standalone
    if _stack:
        return _stack[-1]
    if _standalone is None:
        _standalone = Context({"model": os.environ.get("NLGEVAL_MODEL") or None})
    return _standalone
