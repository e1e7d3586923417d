"""The former place of :mod:`pytest_nlgeval.core.context`, kept so that existing imports keep working.

``import pytest_nlgeval.context`` gives the very module ``pytest_nlgeval.core.context`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import context as _core

sys.modules[__name__] = _core
