"""The former place of :mod:`pytest_nlgeval.core.cache`, kept so that existing imports keep working.

``import pytest_nlgeval.cache`` gives the very module ``pytest_nlgeval.core.cache`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import cache as _core

sys.modules[__name__] = _core
