"""The former place of :mod:`pytest_nlgeval.core.windows`, kept so that existing imports keep working.

``import pytest_nlgeval.windows`` gives the very module ``pytest_nlgeval.core.windows`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import windows as _core

sys.modules[__name__] = _core
