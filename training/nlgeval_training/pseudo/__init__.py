"""Pseudo Boolean-QA data for the summarization and dialogue dimensions (50/50, seeded, deduplicated).

>>> from nlgeval_training.pseudo import build_pseudo_data     # doctest: +SKIP
>>> records = build_pseudo_data(summarization=["cnndm.jsonl.gz"], dialogue=["topicalchat.jsonl.gz"],
...                             antonyms="antonyms_wordnet.jsonl.gz", seed=0)   # doctest: +SKIP
"""

from nlgeval_training.pseudo.build import build_pseudo_data

__all__ = ["build_pseudo_data"]
