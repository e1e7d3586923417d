"""Hook specifications of pytest-nlgeval.

Third-party plugins implement these the way they implement pytest hooks: define a function with the
hook's name in a ``conftest.py`` or in a module registered through the ``pytest11`` entry point.
"""

from __future__ import annotations

import pytest

hookspec = pytest.hookspec  # reuse pytest's marker so these hooks live in the same plugin manager


@hookspec
def pytest_nlgeval_register_dimensions(registry):
    """Add dimensions to the catalogue before the first check of the session.

    ``registry`` is a :class:`pytest_nlgeval.core.dimensions.DimensionRegistry`; call
    ``registry.add(Dimension(...))`` for each custom (zero-shot) dimension::

        def pytest_nlgeval_register_dimensions(registry):
            registry.add(Dimension(task="summarization", name="politeness",
                                   question="Is this a polite summary?", fields=("summary",)))
    """


@hookspec
def pytest_nlgeval_register_scorers(scorers):
    """Add ways of scoring before the first evaluator of the session is made.

    ``scorers`` is a :class:`pytest_nlgeval.core.scorers.registry.ScorerRegistry`; call ``scorers.add(cls)`` for
    each class that follows :class:`pytest_nlgeval.core.scorers.base.Scorer`. A model folder declares it by name
    (``"scorer": "acme.toxicity"`` in a dimension's entry; a plugin's name reads ``package.name``)::

        def pytest_nlgeval_register_scorers(scorers):
            scorers.add(ToxicityScorer)   # name = "acme.toxicity", refines = False
    """


@hookspec
def pytest_nlgeval_check_recorded(check):
    """Called after every comparison of a score with a threshold (passed or failed).

    ``check`` is a :class:`pytest_nlgeval.core.checks.Check`; read-only by convention.
    """


@hookspec
def pytest_nlgeval_results_ready(config, results):
    """Called once per session, on the controller (never on an xdist worker), with the merged results.

    ``results`` is the dict that is written as the JSON results file (schema in docs/results-schema.md).
    Implementations may add top-level keys (the baseline comparison adds ``"baseline"``) before the
    file and the report are written.
    """


@hookspec
def pytest_nlgeval_report_sections(results):
    """Return a list of extra report sections for the HTML report.

    Each section is a mapping ``{"id": str, "title": str, "html": markupsafe.Markup}``; the HTML must be
    self-contained (inline SVG, no scripts fetched from the network). Called by the plugin's
    ``--nlgeval-report`` and by ``nlgeval report``.
    """
