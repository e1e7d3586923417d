"""The former place of :mod:`pytest_nlgeval.core.score`, kept so that existing imports keep working.

``import pytest_nlgeval.score`` gives the very module ``pytest_nlgeval.core.score`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import score as _core

sys.modules[__name__] = _core
