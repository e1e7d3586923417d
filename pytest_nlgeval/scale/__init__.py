"""Scoring beyond one machine.

:mod:`pytest_nlgeval.scale.ray_engine` scores an evaluator's cache misses on a Ray cluster (the ``ray``
extra); docs/scale.md also shows how to serve an exported model folder from NVIDIA Triton. Nothing here is
imported by the pytest plugin.
"""
