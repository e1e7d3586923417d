"""Ways of scoring behind one call: one module per way, chosen by the model folder's declaration.

``base`` (the :class:`~pytest_nlgeval.core.scorers.base.Scorer` protocol, what it reads and returns), ``registry``
(names to classes; plugins add theirs through ``pytest_nlgeval_register_scorers``), and one module per way:
``boolqa`` (Boolean-QA over source windows, with the cascade), ``similarity`` (sentence-encoder similarity, and the
evasive-answer cap), ``related`` (related and informative), ``claims`` (claims with their explicit checks),
``discourse``, ``form``, ``slots``, and ``checker`` (claim support by an external fact checker, MiniCheck or
HHEM-2.1-Open, when the evaluator is given one). The evaluator plans units, hands them to these in batches and
aggregates.
"""
