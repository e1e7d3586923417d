"""Lexical-overlap metrics: ROUGE (rouge-score) and BLEU, chrF/chrF++, TER (sacrebleu).

Both libraries are the maintained reference implementations in Python: rouge-score is Google's
re-implementation of Lin (2004)'s ROUGE-1.5.5, sacrebleu is Post (2018)'s implementation of
BLEU (Papineni et al., 2002), chrF (Popović, 2015), chrF++ (Popović, 2017) and TER (Snover et al., 2006).

Multiple references follow each standard:

* ROUGE (rouge-score ``score_multi``): the reference with the best F-measure is taken (``multi_ref="max"``).
  SummEval's baseline tables instead average the score over all references (``multi_ref="mean"``).
* BLEU: n-gram counts are clipped by the maximum count in any reference and the brevity penalty uses
  the closest reference length (Papineni et al., 2002), as sacrebleu does.
* chrF/chrF++: the best-scoring reference (sacrebleu's sentence statistics).
* TER: the fewest edits to any reference, divided by the average reference length (Snover et al., 2006).

Example::

    >>> from pytest_nlgeval.metrics import get_metric
    >>> round(get_metric("bleu").score("The dog bit the man.", references=["The dog bit the man."]), 6)
    100.0
"""

from __future__ import annotations

from typing import Any

from functools import lru_cache

from pytest_nlgeval.metrics.base import Metric, MetricInputError, package_version

_ROUGE_VARIANTS = ("rouge1", "rouge2", "rougeL", "rougeLsum")
_MEASURES = {"f": "fmeasure", "p": "precision", "r": "recall"}


class _CachingTokenizer:
    """Wraps rouge-score's default tokenizer with a memo: in meta-evaluation every reference is scored
    against every system's output of its document, so each text is tokenised once instead of 16 times."""

    def __init__(self, use_stemmer: bool) -> None:
        from rouge_score import tokenizers

        self._tok = tokenizers.DefaultTokenizer(use_stemmer=use_stemmer)
        self.tokenize = lru_cache(maxsize=65536)(self._tokenize)

    def _tokenize(self, text: str) -> list[str]:
        return self._tok.tokenize(text)


def _ngram_counts(tokens: list[str], n: int):
    from collections import Counter

    return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))


def _prf(overlap: int, n_out: int, n_ref: int) -> tuple[float, float, float]:
    # rouge-score's scoring.Score arithmetic: P = overlap / |out|, R = overlap / |ref|, F = 2PR / (P + R)
    p = overlap / n_out if n_out > 0 else 0.0
    r = overlap / n_ref if n_ref > 0 else 0.0
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return p, r, f


class Rouge(Metric):
    """ROUGE-N / ROUGE-L (Lin, 2004) with rouge-score's tokenizer and rouge-score's formulas.

    ``variant`` is ``"rouge1"``, ``"rouge2"`` (default), ``"rougeL"`` (sentence-level LCS) or ``"rougeLsum"``
    (summary-level LCS over newline-separated sentences). ``measure`` is ``"f"`` (F1, default), ``"p"``
    (precision) or ``"r"`` (recall). ``use_stemmer`` Porter-stems tokens (rouge-score's option; off by
    default as in rouge-score). ``multi_ref`` is ``"max"`` (default; rouge-score: the reference with the
    best F1), ``"mean"`` (SummEval: the average over references) or ``"pooled"`` (matches, output and
    reference units summed over the references before P, R and F are computed, as the Perl ROUGE-1.5.5's
    model-averaging mode ``-f A`` accumulates its counts).

    ``impl="fast"`` (default): rouge-score tokenises, n-gram counts are kept per text and the LCS comes from
    rapidfuzz's C++ ``LCSseq``, so a reference shared by many outputs is processed once; ``"rouge-score"``:
    every pair through ``RougeScorer.score``. Both give the same numbers (the tests compare them);
    ``rougeLsum`` always uses rouge-score. An unknown ``variant``, ``measure``, ``multi_ref`` or ``impl``
    raises :class:`ValueError`.

    >>> Rouge("rouge1").score("the cat sat", references="the cat ran")
    0.6666666666666666
    """

    needs_references = True

    def __init__(
        self,
        variant: str = "rouge2",
        measure: str = "f",
        use_stemmer: bool = False,
        multi_ref: str = "max",
        impl: str = "fast",
    ):
        if variant not in _ROUGE_VARIANTS:
            raise ValueError(f"unknown ROUGE variant {variant!r}; choose one of {', '.join(_ROUGE_VARIANTS)}")
        if measure not in _MEASURES:
            raise ValueError(f"unknown ROUGE measure {measure!r}; choose 'f' (F1), 'p' (precision) or 'r' (recall)")
        if multi_ref not in ("max", "mean", "pooled"):
            raise ValueError(
                "multi_ref must be 'max' (rouge-score), 'mean' (SummEval) or 'pooled' (ROUGE-1.5.5 -f A), "
                f"got {multi_ref!r}"
            )
        self.name = variant
        self.variant = variant
        self.measure = measure
        self.use_stemmer = bool(use_stemmer)
        self.multi_ref = multi_ref
        if impl not in ("fast", "rouge-score"):
            raise ValueError(f"impl must be 'fast' or 'rouge-score', got {impl!r}")
        self.impl = "rouge-score" if variant == "rougeLsum" else impl
        if multi_ref == "pooled" and self.impl != "fast":
            raise ValueError("multi_ref='pooled' needs the match counts of the fast path (impl='fast', not rougeLsum)")
        self._scorer = None
        self._tokenizer: Any = None
        self._features: Any = None

    def _get_scorer(self):
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer(
                [self.variant], use_stemmer=self.use_stemmer, tokenizer=_CachingTokenizer(self.use_stemmer)
            )
        return self._scorer

    def _feature(self, text: str):
        """Tokens (ROUGE-L) or n-gram counts (ROUGE-N) of a text, memoised per metric object."""
        if self._features is None:
            self._features = lru_cache(maxsize=65536)(self._compute_feature)
        return self._features(text)

    def _compute_feature(self, text: str):
        if self._tokenizer is None:
            self._tokenizer = _CachingTokenizer(self.use_stemmer)
        toks = self._tokenizer._tokenize(text)
        if self.variant == "rougeL":
            return toks
        n = int(self.variant[-1])
        counts = _ngram_counts(toks, n)
        return counts, max(0, len(toks) - n + 1)

    def _per_reference(self, output: str, references: list[str]):
        from rouge_score.scoring import Score

        if self.impl == "rouge-score":
            scorer = self._get_scorer()
            # rouge-score's argument order is (target, prediction)
            return [scorer.score(ref, output)[self.variant] for ref in references]
        return [Score(*_prf(*counts)) for counts in self._counts(output, references)]

    def _counts(self, output: str, references: list[str]) -> list[tuple[int, int, int]]:
        """(matches, output units, reference units) per reference: n-gram hits or LCS length."""
        out = self._feature(output)
        counts = []
        for ref in references:
            r = self._feature(ref)
            if self.variant == "rougeL":
                from rapidfuzz.distance import LCSseq

                lcs = LCSseq.similarity(out, r) if out and r else 0
                counts.append((lcs, len(out), len(r)))
            else:
                (oc, on), (rc, rn) = out, r
                small, large = (oc, rc) if len(oc) < len(rc) else (rc, oc)
                overlap = sum(min(c, large[g]) for g, c in small.items() if g in large)
                counts.append((overlap, on, rn))
        return counts

    def _score(self, output, input, references):
        if self.multi_ref == "pooled":
            hits, outs, refs = (sum(c) for c in zip(*self._counts(output, references)))
            return _prf(hits, outs, refs)[{"p": 0, "r": 1, "f": 2}[self.measure]]
        scores = self._per_reference(output, references)
        attr = _MEASURES[self.measure]
        if self.multi_ref == "mean":
            return sum(getattr(s, attr) for s in scores) / len(scores)
        best = max(scores, key=lambda s: s.fmeasure)  # rouge-score score_multi: best F1 reference
        return getattr(best, attr)

    def _feedback(self, output, input, references, value):
        unit = {"rouge1": "unigram", "rouge2": "bigram"}.get(self.variant, "longest-common-subsequence")
        s = self._per_reference(output, references)
        p = max(x.precision for x in s)
        r = max(x.recall for x in s)
        return (
            f"{self.variant} {self.measure}={value:.3f} ({unit} overlap with {len(references)} reference(s); "
            f"best precision {p:.3f}, best recall {r:.3f}). Low recall: reference content is missing; "
            "low precision: the output adds content the references do not have."
        )

    def _options(self):
        return {"measure": self.measure, "stem": self.use_stemmer, "refs": self.multi_ref}

    def _versions(self):
        # the fast path reproduces rouge-score's numbers; its tokenizer is rouge-score's
        return {"rouge-score": package_version("rouge-score")}


class _Sacre(Metric):
    """Shared sentence/corpus plumbing for sacrebleu metrics."""

    needs_references = True
    _sacre = None

    def _make(self, references=None):
        raise NotImplementedError

    def _metric(self):
        if self._sacre is None:
            self._sacre = self._make()
        return self._sacre

    def _score(self, output, input, references):
        return self._metric().sentence_score(output, references).score

    def _score_many(self, outputs, inputs, references):
        """Outputs that share a reference set (the systems of one document) reuse its n-gram statistics:
        sacrebleu's documented reference cache (``references=`` in the constructor); a one-line
        ``corpus_score`` then equals ``sentence_score`` exactly."""
        groups: dict[tuple[str, ...], list[int]] = {}
        for i, refs in enumerate(references):
            groups.setdefault(tuple(refs), []).append(i)
        scores = [0.0] * len(outputs)
        for refs, members in groups.items():
            if len(members) == 1:
                scores[members[0]] = self._score(outputs[members[0]], None, list(refs))
                continue
            cached = self._make(references=[[r] for r in refs])
            for i in members:
                scores[i] = cached.corpus_score([outputs[i]], None).score
        return scores

    def score_corpus(self, outputs, inputs=None, references=None):
        """sacrebleu's corpus statistic: counts pooled over all outputs, then one score.

        Outputs may have different numbers of references; missing ones are passed to sacrebleu as
        ``None``, which it skips.
        """
        if references is None:
            raise MetricInputError(f"metric {self.name!r}: score_corpus needs references, one entry per output")
        outputs = list(outputs)
        refs_col = self._batch_column(references, len(outputs), "references")
        checked = [self._validate_one(o, None, r, None, index=i) for i, (o, r) in enumerate(zip(outputs, refs_col))]
        if not checked:
            raise MetricInputError(f"metric {self.name!r}: score_corpus needs at least one output")
        n_refs = max(len(c[2]) for c in checked)
        streams = [[c[2][k] if k < len(c[2]) else None for c in checked] for k in range(n_refs)]
        return float(self._metric().corpus_score([c[0] for c in checked], streams).score)

    def _versions(self):
        return {"sacrebleu": package_version("sacrebleu")}


class Bleu(_Sacre):
    """BLEU (Papineni et al., 2002) through sacrebleu, on sacrebleu's 0-100 scale.

    Sentence scores use sacrebleu's recommended sentence settings: exponential smoothing and effective
    order (only n-gram orders that exist in the output count).

    ``tokenize`` is the sacrebleu tokenizer (``"13a"`` default, ``"intl"``, ``"char"``, ``"none"``...);
    ``lowercase`` compares case-insensitively; ``smooth_method`` is ``"exp"`` (default), ``"floor"``,
    ``"add-k"`` or ``"none"``; ``max_ngram_order`` is the highest n-gram order (4). Options sacrebleu
    rejects raise :class:`ValueError` here, not at the first score.

    >>> round(Bleu().score("the cat sat on the mat", references=["the cat sat on the mat today"]), 2)
    84.65
    """

    name = "bleu"

    def __init__(
        self, tokenize: str = "13a", lowercase: bool = False, smooth_method: str = "exp", max_ngram_order: int = 4
    ):
        self.tokenize = tokenize
        self.lowercase = bool(lowercase)
        self.smooth_method = smooth_method
        self.max_ngram_order = int(max_ngram_order)
        self._make()  # fail on bad options now, not at the first score

    def _make(self, references=None):
        from sacrebleu.metrics import BLEU

        try:
            return BLEU(
                lowercase=self.lowercase,
                tokenize=self.tokenize,
                smooth_method=self.smooth_method,
                max_ngram_order=self.max_ngram_order,
                effective_order=True,
                references=references,
            )
        except Exception as exc:  # sacrebleu raises various types for bad options
            raise ValueError(f"bleu: invalid option ({exc})") from exc

    def _feedback(self, output, input, references, value):
        s = self._metric().sentence_score(output, references)
        precs = "/".join(f"{p:.0f}" for p in s.precisions)
        return (
            f"BLEU {value:.1f}: n-gram precisions {precs} (1- to 4-grams, %), brevity penalty {s.bp:.3f} "
            f"(output {s.sys_len} tokens, closest reference {s.ref_len})."
        )

    def _options(self):
        return {
            "case": "lc" if self.lowercase else "mixed",
            "tok": self.tokenize,
            "smooth": self.smooth_method,
            "order": self.max_ngram_order,
            "eff": True,
        }


class Chrf(_Sacre):
    """chrF (Popović, 2015) and chrF++ (Popović, 2017, ``word_order=2``) through sacrebleu, 0-100.

    ``word_order`` is 0 for chrF, 2 (default) for chrF++ (word uni- and bigrams added to character 6-grams);
    ``char_order`` the character n-gram order (6); ``beta`` the recall weight (2: recall counts twice as much
    as precision); ``lowercase`` compares case-insensitively.

    >>> Chrf(word_order=2).score("the cat", references=["the cat"])
    100.0
    """

    def __init__(self, word_order: int = 2, char_order: int = 6, beta: int = 2, lowercase: bool = False):
        self.word_order = int(word_order)
        self.char_order = int(char_order)
        self.beta = int(beta)
        self.lowercase = bool(lowercase)
        self.name = "chrf_pp" if self.word_order == 2 else "chrf"
        self._make()

    def _make(self, references=None):
        from sacrebleu.metrics import CHRF

        return CHRF(
            char_order=self.char_order,
            word_order=self.word_order,
            beta=self.beta,
            lowercase=self.lowercase,
            references=references,
        )

    def _options(self):
        return {
            "nc": self.char_order,
            "nw": self.word_order,
            "beta": self.beta,
            "case": "lc" if self.lowercase else "mixed",
        }


class Ter(_Sacre):
    """Translation Edit Rate (Snover et al., 2006) through sacrebleu: edits (insertions, deletions,
    substitutions, block shifts) per reference word, x100. Lower is better; it can exceed 100.

    >>> Ter().score("the cat sat", references=["the cat sat"])
    0.0
    """

    name = "ter"
    higher_is_better = False

    def __init__(self, case_sensitive: bool = False, normalized: bool = False, no_punct: bool = False):
        self.case_sensitive = bool(case_sensitive)
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self._make()

    def _make(self, references=None):
        from sacrebleu.metrics import TER

        return TER(
            case_sensitive=self.case_sensitive,
            normalized=self.normalized,
            no_punct=self.no_punct,
            references=references,
        )

    def _options(self):
        return {"case": "mixed" if self.case_sensitive else "lc", "norm": self.normalized, "punct": not self.no_punct}
