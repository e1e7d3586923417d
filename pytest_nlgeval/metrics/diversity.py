"""Diversity metrics: distinct-n (Li et al., 2016) and self-BLEU (Zhu et al., 2018, Texygen).

distinct-n of a text = number of distinct n-grams / number of n-grams (0.0 when the text has fewer
than ``n`` tokens). :meth:`DistinctN.score_corpus` pools the n-grams of all outputs, which is how
Li et al. report it for a system; the per-output score measures repetition inside one text.

self-BLEU of an output = BLEU of that output with every *other* output of the collection as references;
the collection's self-BLEU is the mean. High self-BLEU means the outputs repeat one another.

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> get_metric("distinct_1").score("the cat and the dog")  # 4 distinct / 5 unigrams
    0.8
"""

from __future__ import annotations

from pytest_nlgeval.metrics._text import TOKENIZATION, ngrams, tokens
from pytest_nlgeval.metrics.base import Metric, MetricInputError, package_version


class DistinctN(Metric):
    """Ratio of distinct to total n-grams of lowercased word/punctuation tokens, in [0, 1].

    >>> DistinctN(2).score("a b a b")  # bigrams ab, ba, ab: 2 distinct of 3
    0.6666666666666666
    """

    def __init__(self, n: int = 2, lowercase: bool = True):
        if int(n) < 1:
            raise ValueError(f"distinct-n needs n >= 1, got {n}")
        self.n = int(n)
        self.lowercase = bool(lowercase)
        self.name = f"distinct_{self.n}"

    def _grams(self, text: str):
        return ngrams(tokens(text, self.lowercase), self.n)

    def _score(self, output, input, references):
        grams = self._grams(output)
        return len(set(grams)) / len(grams) if grams else 0.0

    def score_corpus(self, outputs, inputs=None, references=None):
        """Distinct n-grams over all outputs pooled / all n-grams (Li et al., 2016)."""
        outputs = list(outputs)
        if not outputs:
            raise MetricInputError(f"metric {self.name!r}: score_corpus needs at least one output")
        pooled = []
        for i, o in enumerate(outputs):
            self._validate_one(o, None, None, None, index=i)
            pooled.extend(self._grams(o))
        return len(set(pooled)) / len(pooled) if pooled else 0.0

    def _feedback(self, output, input, references, value):
        grams = self._grams(output)
        seen, repeated = set(), []
        for g in grams:
            if g in seen and g not in repeated:
                repeated.append(g)
            seen.add(g)
        if not repeated:
            return f"distinct-{self.n} {value:.3f}: no repeated {self.n}-grams."
        shown = ", ".join(repr(" ".join(g)) for g in repeated[:5])
        return f"distinct-{self.n} {value:.3f}: repeated {self.n}-grams: {shown}."

    def _options(self):
        return {"n": self.n, "tok": TOKENIZATION if self.lowercase else "word-punct"}


class SelfBleu(Metric):
    """Self-BLEU (Texygen): sacrebleu sentence BLEU (0-100) of each output against the other outputs.

    ``score(output, references=[...])`` takes the other outputs as ``references``; ``score_batch``
    compares each output with the rest of the batch (and ignores any references given). Lower means
    more diverse.

    >>> [round(v, 6) for v in SelfBleu().score_batch(["the cat sat on the mat", "the cat sat on the mat"])]
    [100.0, 100.0]
    """

    name = "self_bleu"
    higher_is_better = False

    def __init__(self, max_ngram_order: int = 4, tokenize: str = "13a"):
        self.max_ngram_order = int(max_ngram_order)
        self.tokenize = tokenize
        self._bleu = None

    def _metric(self):
        if self._bleu is None:
            from sacrebleu.metrics import BLEU

            self._bleu = BLEU(tokenize=self.tokenize, max_ngram_order=self.max_ngram_order, effective_order=True)
        return self._bleu

    def _score(self, output, input, references):
        if not references:
            raise MetricInputError(
                "metric 'self_bleu' compares an output with the other outputs of its collection: pass them as "
                "references=[...], or call score_batch(outputs) to compare each output with the rest"
            )
        return self._metric().sentence_score(output, references).score

    def score_batch(self, outputs, inputs=None, references=None, *, contexts=None):
        """Each output against the other outputs of the batch. ``inputs``, ``references`` and ``contexts``
        are ignored: the collection itself is the reference (so callers that pass a dataset's references
        to every metric still get self-BLEU, not BLEU)."""
        if isinstance(outputs, str):
            return super().score_batch(outputs)  # raises the one-string error
        outputs = list(outputs)
        if len(outputs) < 2:
            raise MetricInputError("metric 'self_bleu' needs at least two outputs to compare with one another")
        for i, o in enumerate(outputs):
            self._validate_one(o, None, None, None, index=i)
        return [self._score(o, None, outputs[:i] + outputs[i + 1 :]) for i, o in enumerate(outputs)]

    def _options(self):
        return {"tok": self.tokenize, "order": self.max_ngram_order, "smooth": "exp", "eff": True}

    def _versions(self):
        return {"sacrebleu": package_version("sacrebleu")}
