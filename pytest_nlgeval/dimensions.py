"""The former place of :mod:`pytest_nlgeval.core.dimensions`, kept so that existing imports keep working.

``import pytest_nlgeval.dimensions`` gives the very module ``pytest_nlgeval.core.dimensions`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import dimensions as _core

sys.modules[__name__] = _core
