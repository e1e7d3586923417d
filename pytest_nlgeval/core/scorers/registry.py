"""The scorers an evaluator knows, by the names a model folder's declaration uses.

:func:`default_scorers` holds the built-in ways of scoring; a plugin adds its own through the
``pytest_nlgeval_register_scorers`` hook (:mod:`pytest_nlgeval.hookspecs`), or a script passes a registry to
:class:`~pytest_nlgeval.core.evaluator.Evaluator`::

    >>> scorers = default_scorers()
    >>> scorers.add(Shouting)                     # doctest: +SKIP
    >>> [s.name for s in scorers.chain({"scorer": "boolqa", "checks": {...}})]   # doctest: +SKIP
    ['boolqa', 'checks']

A name of a scorer that is not built in reads ``package.name`` (a model folder may declare it; the runtime's
validation accepts such names and leaves the lookup to the evaluator).
"""

from __future__ import annotations

from typing import Any, Iterable

from pytest_nlgeval.core.dimensions import DimensionError
from pytest_nlgeval.core.scorers.base import Scorer

__all__ = ["ScorerRegistry", "default_scorers"]


class ScorerRegistry:
    """Scorer classes by name: those that answer a dimension's units, and those that refine the answers (applied
    in the order they were added)."""

    def __init__(self, scorers: Iterable[type] = ()) -> None:
        self._classes: dict[str, Any] = {}
        for cls in scorers:
            self.add(cls)

    def add(self, cls: type, *, replace: bool = False) -> type:
        """Register ``cls`` under its ``name``; a second class of the same name needs ``replace=True``."""
        name = getattr(cls, "name", None)
        if not isinstance(name, str) or not name or not isinstance(getattr(cls, "refines", None), bool):
            raise DimensionError(
                f"a scorer class needs a `name` (str) and `refines` (bool) class attribute; {cls!r} lacks them"
            )
        if not callable(getattr(cls, "score", None)):
            raise DimensionError(f"scorer {name!r} has no score(dim, spec, batch, models) method")
        if name in self._classes and not replace and self._classes[name] is not cls:
            raise DimensionError(f"a scorer named {name!r} is registered already; pass replace=True to replace it")
        self._classes[name] = cls
        return cls

    def names(self) -> list[str]:
        return list(self._classes)

    def __contains__(self, name: str) -> bool:
        return name in self._classes

    def get(self, name: str) -> Any:
        """The class registered as ``name``; a clear error for a name no installed plugin registers."""
        cls = self._classes.get(name)
        if cls is None:
            known = ", ".join(n for n, c in self._classes.items() if not c.refines)
            raise DimensionError(
                f"the model folder declares scorer {name!r}, which no installed plugin registers (known: {known}); "
                "install the plugin that provides it (it registers it in pytest_nlgeval_register_scorers)"
            )
        return cls

    def reads_whole(self, spec: dict) -> bool:
        """Whether the scorer of ``spec`` reads its texts whole, so its dimension is never split into windows."""
        return bool(getattr(self._classes.get(spec.get("scorer", "boolqa")), "reads_whole", False))

    def chain(self, spec: dict) -> list[Scorer]:
        """The scorers of one dimension's entry, in order: the one it names, then each refining one it asks for."""
        first = self.get(spec.get("scorer", "boolqa"))
        then = [cls for name, cls in self._classes.items() if cls.refines and spec.get(name)]
        return [first(), *(cls() for cls in then)]


def default_scorers() -> ScorerRegistry:
    """A registry of the built-in scorers (a new one each call: a plugin's additions stay in its run)."""
    from pytest_nlgeval.core.scorers.boolqa import BoolQA
    from pytest_nlgeval.core.scorers.checker import ClaimSupport
    from pytest_nlgeval.core.scorers.claims import AgainstFact, ClaimChecks
    from pytest_nlgeval.core.scorers.discourse import Discourse
    from pytest_nlgeval.core.scorers.form import Form
    from pytest_nlgeval.core.scorers.related import Informative, Related
    from pytest_nlgeval.core.scorers.similarity import Evasive, Similarity
    from pytest_nlgeval.core.scorers.slots import Slots

    return ScorerRegistry(
        [
            BoolQA,
            Similarity,
            Related,
            Informative,
            ClaimSupport,
            Evasive,
            ClaimChecks,
            AgainstFact,
            Form,
            Slots,
            Discourse,
        ]
    )
