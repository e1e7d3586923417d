"""The core of a check: what a test asserts, and how the number behind it is computed.

``dimensions`` (the questions and their inputs), ``windows`` (long sources in sentence windows),
``evaluator`` (dimension specs in, :class:`~pytest_nlgeval.core.score.Score` out, through ``cache`` and the
runtime scorer), ``score`` (a number whose comparison with a threshold is the assertion), ``checks`` (the
record of each comparison) and ``run`` (the run: evaluators, cache and recorder of one pytest session or
script, and the one module-level slot through which the assertions find the current run).
The feature folders (baselines, metrics, induction, trajectories, reports) and the plugin build on it; it
imports none of them.
"""
