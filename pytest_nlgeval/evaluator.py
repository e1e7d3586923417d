"""The former place of :mod:`pytest_nlgeval.core.evaluator`, kept so that existing imports keep working.

``import pytest_nlgeval.evaluator`` gives the very module ``pytest_nlgeval.core.evaluator`` (same objects, same
monkeypatching); new code imports the core module.
"""
import sys

from pytest_nlgeval.core import evaluator as _core

sys.modules[__name__] = _core
