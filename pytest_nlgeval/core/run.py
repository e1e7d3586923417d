"""The run: evaluators by model, the dimension registry, the score cache and the check recorder.

A pytest session keeps its :class:`Run` in ``config.stash`` (the plugin builds it from its options and its
check recorder) and installs it as the current run for the length of the session. Outside pytest (a script, a
notebook), :func:`active` gives the standalone run: model from ``NLGEVAL_MODEL`` or the embedded default,
cache in ``.nlgeval-cache``, no recorder. Evaluators, the registry and the cache are created on first use, so
a run that never scores anything loads nothing.

    >>> from pytest_nlgeval.core.run import active
    >>> active().evaluator().score("The cat sat on the mat.", "fluency")      # doctest: +SKIP

This module is the only one that knows the current run. ``assert_dimension(...)`` and
``assert_trajectory(...)`` take no run argument, and pytest offers no way to reach the running session's
``config`` from inside a test, so the assertions of the DSL look the run up here, once, where they are
called, and hand what they found down as arguments: evaluators, scores and their comparisons never look it
up. ``_runs`` is the stack of installed runs, innermost last:

* outside pytest, the standalone run sits at the bottom, created on first use by :func:`active`;
* a pytest session installs its run when it is configured and takes it out when it ends; pytester runs
  sessions inside a session, so the innermost one is current and the outer one is back afterwards.
"""

from __future__ import annotations

import os
from typing import Any, Callable

__all__ = ["Run", "active", "install", "installed", "uninstall"]

_runs: list["Run"] = []


class Run:
    """Evaluators (one per model, created lazily) sharing one dimension registry and one score cache.

    ``options``: ``model``, ``device``, ``precision``, ``batch_size``, ``source_windows``, ``cache`` (bool),
    ``cache_dir``, ``trajectory_lm`` (the causal LM of trajectory checks).
    ``register_dimensions(registry)`` is called once, when the registry is first needed (the plugin
    passes its ``pytest_nlgeval_register_dimensions`` hook there, after every conftest is loaded);
    ``register_scorers(scorers)`` likewise for the ways of scoring (``pytest_nlgeval_register_scorers``).
    ``options`` may also name a ``fact_checker`` folder that reads the fact dimensions' claims.
    ``recorder``: the :class:`~pytest_nlgeval.core.checks.CheckRecorder` of the run, or None (nothing is
    recorded); :meth:`use_recorder` lends the run another one for a while.
    """

    def __init__(
        self,
        options: dict[str, Any] | None = None,
        register_dimensions: Callable[[Any], None] | None = None,
        recorder: Any = None,
        register_scorers: Callable[[Any], None] | None = None,
    ) -> None:
        self.options = dict(options or {})
        self._register_dimensions = register_dimensions
        self._register_scorers = register_scorers
        self._registry = None
        self._scorers = None
        self._evaluators: dict[str | None, Any] = {}
        self._cache = None
        self._recorders: list[Any] = [recorder]
        self._resources: dict[tuple, Any] = {}

    @property
    def recorder(self):
        """Where the checks of this run are recorded (None: nowhere)."""
        return self._recorders[-1]

    def use_recorder(self, recorder) -> None:
        """Record into ``recorder`` until :meth:`drop_recorder` (a test of its own records apart)."""
        self._recorders.append(recorder)

    def drop_recorder(self, recorder) -> bool:
        """Stop recording into ``recorder``; False when it was not lent to this context."""
        for i in range(len(self._recorders) - 1, 0, -1):
            if self._recorders[i] is recorder:
                del self._recorders[i]
                return True
        return False

    def default_task(self) -> str:
        """The task of an evaluation that names none: the running test's ``nlgeval(task=...)`` (as the
        recorder was told when the test started), else summarization."""
        from pytest_nlgeval.core.dimensions import DEFAULT_TASK

        recorder = self.recorder
        return (recorder.marker.get("task") if recorder is not None else None) or DEFAULT_TASK

    @property
    def registry(self):
        if self._registry is None:
            from pytest_nlgeval.core.dimensions import DimensionRegistry

            registry = DimensionRegistry()
            if self._register_dimensions is not None:
                self._register_dimensions(registry)
            self._registry = registry
        return self._registry

    @property
    def scorers(self):
        """The ways of scoring of this run's evaluators (:class:`~pytest_nlgeval.core.scorers.registry.ScorerRegistry`):
        the built-in ones and those ``register_scorers(registry)`` adds (the plugin's
        ``pytest_nlgeval_register_scorers`` hook), made on first use."""
        if self._scorers is None:
            from pytest_nlgeval.core.scorers.registry import default_scorers

            scorers = default_scorers()
            if self._register_scorers is not None:
                self._register_scorers(scorers)
            self._scorers = scorers
        return self._scorers

    @property
    def cache(self):
        """The run's :class:`~pytest_nlgeval.core.cache.ScoreCache` (None with ``cache=False``), shared by
        every evaluator of the run; opened on first use."""
        if self._cache is None and self.options.get("cache", True):
            from pytest_nlgeval.core.cache import ScoreCache, user_cache_dir

            # a pytest run always names its folder (under the rootdir); a run made elsewhere uses the user's
            self._cache = ScoreCache.in_folder(self.options.get("cache_dir") or user_cache_dir())
        return self._cache

    def evaluator(self, model: str | None = None):
        """The evaluator for ``model`` (default: the configured model); created on first use."""
        key = model if model is not None else self.options.get("model")
        evaluator = self._evaluators.get(key)
        if evaluator is None:
            from pytest_nlgeval.core.evaluator import Evaluator

            evaluator = Evaluator(
                key,
                device=self.options.get("device") or "auto",
                precision=self.options.get("precision") or "auto",
                batch_size=self.options.get("batch_size"),
                cache=self.cache or False,
                registry=self.registry,
                scorers=self.scorers,
                fact_checker=self.options.get("fact_checker"),
                source_windows=self.options.get("source_windows") or "auto",
                max_windows=self.options.get("max_windows"),
                default_task=self.default_task,
                recorder=lambda: self.recorder,
                progress=self.options.get("progress"),
            )
            self._evaluators[key] = evaluator
        return evaluator

    def resource(self, key: tuple, make: Callable[[], Any]) -> Any:
        """What this run keeps for its length beside evaluators (a trajectory LM session, a loaded reference
        bank): made by ``make()`` on first use of ``key``, closed with the run when it has a ``close()``."""
        if key not in self._resources:
            self._resources[key] = make()
        return self._resources[key]

    @property
    def evaluators(self) -> list:
        return list(self._evaluators.values())

    def has_resource(self, key: tuple) -> bool:
        """Whether :meth:`resource` made ``key`` in this run."""
        return key in self._resources

    def close(self) -> None:
        """Release every evaluator's model session and the run's other resources, and close the cache."""
        for evaluator in self._evaluators.values():
            evaluator.close()
        for resource in self._resources.values():
            close = getattr(resource, "close", None)
            if callable(close):
                close()
        self._resources.clear()
        if self._cache is not None:
            self._cache.close()


def install(run: Run) -> None:
    """Make ``run`` the current one until :func:`uninstall` (the plugin does this with its session's run)."""
    _runs.append(run)


def uninstall(run: Run) -> None:
    """Take ``run`` out, wherever it is in the stack (sessions may end out of order)."""
    for i in range(len(_runs) - 1, -1, -1):
        if _runs[i] is run:
            del _runs[i]
            return


def installed() -> tuple[Run, ...]:
    """Every installed run, innermost last."""
    return tuple(_runs)


def active() -> Run:
    """The current run: the running pytest session's, else the standalone one (made on first use)."""
    if not _runs:
        _runs.append(Run({"model": os.environ.get("NLGEVAL_MODEL") or None}))  # what code outside pytest uses
    return _runs[-1]
