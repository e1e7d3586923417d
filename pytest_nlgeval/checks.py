"""The former place of :mod:`pytest_nlgeval.core.checks`, kept so that existing imports keep working.

``import pytest_nlgeval.checks`` gives the very module ``pytest_nlgeval.core.checks`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import checks as _core

sys.modules[__name__] = _core
