"""What a way of scoring is: one object that reads a dimension's planned units in one batch.

The evaluator plans (an output's units and the input texts a Boolean-QA model would read), hands the units of
many outputs for one dimension to the scorer the model folder declares for it (``scorer`` in the dimension's
entry of ``nlgeval.json``), then to each scorer that refines those readings (an entry key such as ``checks`` or
``form``), and aggregates. A scorer never reaches into the evaluator: the models it may use, the cache and the
folder's declaration come through :class:`Models`. A new model kind is a new module, not a new branch.

    >>> class Shouting:
    ...     name, refines = "acme.shouting", False
    ...     def score(self, dim, spec, batch, models):
    ...         return [[Reading(float(u.isupper())) for u in planned.units] for planned in batch]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol, Sequence

if TYPE_CHECKING:
    from pytest_nlgeval.core.dimensions import Dimension, DimensionRegistry
    from pytest_nlgeval.core.windows import Window, WindowPlanner

__all__ = ["Models", "Planned", "Reading", "Scorer"]


@dataclass
class Reading:
    """One unit's reading: its ``score``, whether the model's input was cut (``truncated``), its tokens, the
    ``support`` a failure message shows (the window that decided, a finding), and the source units the unit was
    read against (``evidence``; the explicit fact checks hold a claim to them)."""

    score: float
    truncated: bool = False
    n_tokens: int = 0
    support: dict | None = None
    evidence: list[Window] | None = None

    def capped(self, cap: float, **support: Any) -> Reading:
        """This reading at most ``cap``, with ``support`` added to its details."""
        return Reading(
            min(self.score, cap), self.truncated, self.n_tokens, {**(self.support or {}), **support}, self.evidence
        )


@dataclass
class Planned:
    """One output's units for one dimension: ``case`` (the output's position in the call), ``units`` (the output,
    its sentences or its claims), ``texts`` (the Boolean-QA input of each unit), ``values`` (the output's inputs:
    ``source``, ``reference``, ...) and, once a scorer has read them, their ``readings``."""

    case: int
    units: list[str]
    texts: list[str]
    values: dict
    readings: list[Reading] = field(default_factory=list)


class Models(Protocol):
    """What a scorer may use: the models of the evaluator's folder, its cache, and the folder's declaration."""

    registry: DimensionRegistry
    source_windows: str
    max_windows: int | None
    device: str
    precision: str
    threads: int | None

    def served(self, dim: Dimension) -> dict: ...
    def as_served(self, dim: Dimension) -> Dimension: ...
    def score_texts(self, texts: Sequence[str], graph: str | None = None) -> list[tuple[float, bool, int]]: ...
    def similarities(self, keys: Sequence[str], folder: str, *, best_sentence: bool = False) -> list[float]: ...
    def embedder(self, folder: str) -> Any: ...
    def cached(
        self, keys: Sequence[str], compute: Callable[[list[str]], list[tuple[float, bool, int]]]
    ) -> list[tuple[float, bool, int]]: ...
    def resource(self, key: tuple, make: Callable[[], Any]) -> Any: ...

    @property
    def window_planner(self) -> WindowPlanner: ...


class Scorer(Protocol):
    """One way of scoring. ``name``: what a model folder's declaration calls it; ``refines``: False for a scorer
    that answers the units (chosen by ``"scorer": name``), True for one that reads those answers again (applied
    when the dimension's entry holds the key ``name``: ``checks``, ``form``, ...).

    :meth:`score` receives the planned units of many outputs for one dimension (``spec`` is its entry) and
    returns one list of :class:`Reading` per planned output, a reading per unit; a refining scorer finds the
    readings so far in each :class:`Planned`.
    """

    name: ClassVar[str]
    refines: ClassVar[bool]

    def score(self, dim: Dimension, spec: dict, batch: list[Planned], models: Models) -> list[list[Reading]]: ...
