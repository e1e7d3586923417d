"""Pseudo data for the summarization dimensions (Zhong et al., 2022, section 3.2;
UniEval's public code, maszhongming/UniEval).

Positives are reference summaries (or the article lead for relevance); negatives are built as the paper
describes:

- coherence: one summary sentence replaced by a sentence of another document's summary retrieved by BM25;
- consistency: a summary sentence perturbed by antonym substitution, a changed number, a swapped named
  entity, or negation pruning/insertion (a syntactic edit that flips the claim);
- fluency: a span of Poisson(5) words repeated, deleted or shuffled in one sentence (sentence-level units,
  as the scorer splits summaries into sentences for fluency);
- relevance: several sentences of the candidate replaced by sentences of BM25-retrieved other documents.
  The candidate is the article lead and the reference is the gold summary, so a positive is never the
  reference itself (that would be a trivial string match).

Documents are shortened to ``document_sentences`` sentences (``None`` keeps the whole article) so small
encoders can see the evidence inside their context.

    >>> from nlgeval_training.data import Document
    >>> docs = [Document(f"d{i}", [f"Sentence {j} of story {i} about topic{i}." for j in range(6)],
    ...                  [f"Story {i} is about topic{i}.", f"It has {i + 2} parts."]) for i in range(4)]
    >>> recs = fluency(docs, seed=1)
    >>> sum(r["label"] for r in recs) * 2 == len(recs)
    True
"""

from __future__ import annotations

from typing import Any

import random
import re
from pathlib import Path

from nlgeval_training.boolqa import make_record
from nlgeval_training.data import Document, read_jsonl
from nlgeval_training.pseudo.common import finalize, match_case, span_pairs
from nlgeval_training.retrieval import BM25Index

TASK = "summarization"
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(?![\w])")
_ENTITY = re.compile(r"(?<!^)(?<![.!?]\s)\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)\b")
_AUX_NEG = re.compile(r"\b(is|are|was|were|will|would|can|could|has|have|had|did|does|do|should|must)\s+not\b")
_NT = re.compile(r"\b(is|are|was|were|could|would|did|does|do|has|have|had|should)n't\b", re.IGNORECASE)
_AUX = re.compile(r"\b(is|are|was|were|will|would|can|could|has|have|had|should|must)\b")
_NEVER = re.compile(r"\bnever\s+")


def load_antonyms(path: str | Path) -> dict[str, list[str]]:
    """Single-word antonym pairs (both directions) from a WordNet JSONL list (``word``, ``antonym``)."""
    table: dict[str, list[str]] = {}
    for obj in read_jsonl(path):
        a, b = str(obj.get("word", "")).lower(), str(obj.get("antonym", "")).lower()
        if a and b and " " not in a and " " not in b and "-" not in a + b and a != b:
            table.setdefault(a, [])
            if b not in table[a]:
                table[a].append(b)
            table.setdefault(b, [])
            if a not in table[b]:
                table[b].append(a)
    return table


def _document(doc: Document, n: int | None, around: int = 0) -> str:
    if n is None or len(doc.sentences) <= n:
        return doc.text
    start = max(0, min(around - n // 2, len(doc.sentences) - n))
    return " ".join(doc.sentences[start : start + n])


def _summary(doc: Document, max_sentences: int) -> list[str]:
    return doc.summary[:max_sentences]


# -- coherence --------------------------------------------------------------------------------------------
def coherence(
    docs: list[Document],
    seed: int = 0,
    *,
    document_sentences: int | None = None,
    max_summary_sentences: int = 4,
    candidates: int = 5,
    negatives: tuple[str, ...] = ("swap",),
    with_document: bool = True,
    limit: int | None = None,
) -> list[dict]:
    """Positive: the reference summary. Negative, one kind per document drawn from ``negatives``:

    - ``swap``: one sentence swapped for one of a BM25-retrieved other summary (UniEval's recipe);
    - ``order``: the summary's sentences in another order (hard: the same content, broken flow);
    - ``inner``: one sentence replaced by a non-lead sentence of the same article (hard: on topic).

    ``with_document=False`` asks the question about the summary alone (``summary:`` field only), for a
    model that judges the flow of the summary's own text.
    """
    unknown = [k for k in negatives if k not in ("swap", "order", "inner")]
    if unknown or not negatives:
        raise ValueError(f"coherence negatives must be among swap, order, inner; got {list(negatives)}")
    rng = random.Random(seed)
    index = BM25Index([" ".join(d.summary) for d in docs])
    all_hits = index.top_many(
        [" ".join(_summary(d, max_summary_sentences)) for d in docs],
        k=candidates,
        exclude=[{i} for i in range(len(docs))],
    )
    records = []
    for i, doc in enumerate(docs):
        summ = _summary(doc, max_summary_sentences)
        if len(summ) < 2:
            continue
        source = _document(doc, document_sentences)
        neg = None
        kinds = rng.sample(list(negatives), len(negatives)) if len(negatives) > 1 else list(negatives)
        for kind in kinds:
            neg = _incoherent(kind, doc, summ, [docs[h] for h in all_hits[i]], rng)
            if neg is not None:
                break
        if neg is None:
            continue
        for label, text in ((1, summ), (0, neg)):
            if with_document:
                records.append(make_record(TASK, "coherence", label, doc.id, output=" ".join(text), source=source))
            else:
                records.append(_summary_only_record("coherence", label, doc.id, " ".join(text)))
    return finalize(records, seed, limit)


def _summary_only_record(dimension: str, label: int, group: str, summary: str) -> dict:
    """A record of a summarization question asked about the summary alone (see :func:`coherence`)."""
    from nlgeval_training.boolqa import DIMENSIONS, question_input

    question = DIMENSIONS[(TASK, dimension)][0]
    return {
        "input": question_input(question, summary=summary),
        "label": int(label),
        "task": TASK,
        "dimension": dimension,
        "group": group,
    }


def _incoherent(
    kind: str, doc: Document, summ: list[str], neighbours: list[Document], rng: random.Random
) -> list[str] | None:
    """One incoherent version of the summary ``summ`` of ``kind`` (see :func:`coherence`), or None."""
    neg = list(summ)
    if kind == "order":
        if len(set(summ)) < 2:
            return None
        while neg == summ:
            rng.shuffle(neg)
        return neg
    if kind == "inner":
        lead = set(doc.sentences[:3]) | set(summ)
        pool = [s for s in doc.sentences[3:] if s not in lead and len(s.split()) >= 6]
    else:
        pool = [s for other in neighbours for s in other.summary if s not in summ]
    if not pool:
        return None
    neg[rng.randrange(len(neg))] = rng.choice(pool)
    return neg


# -- consistency ------------------------------------------------------------------------------------------
def _antonym_swap(sentence: str, rng: random.Random, antonyms: dict[str, list[str]]) -> str | None:
    spots = [m for m in _WORD.finditer(sentence) if m.group(0).lower() in antonyms and len(m.group(0)) > 2]
    if not spots:
        return None
    m = rng.choice(spots)
    repl = match_case(m.group(0), rng.choice(antonyms[m.group(0).lower()]))
    return sentence[: m.start()] + repl + sentence[m.end() :]


def _number_change(sentence: str, rng: random.Random) -> str | None:
    spots = list(_NUMBER.finditer(sentence))
    if not spots:
        return None
    m = rng.choice(spots)
    text = m.group(0)
    value = float(text.replace(",", ""))
    is_int = "." not in text
    for _ in range(10):
        factor = rng.choice([0.5, 2, 3, 0.25, 10, 1.5])
        new = value * factor + rng.choice([-3, -1, 0, 1, 2, 7])
        if new < 0:
            new = value + rng.randint(1, 9)
        new_text = (
            f"{int(round(new)):,}" if is_int and "," in text else (str(int(round(new))) if is_int else f"{new:.1f}")
        )
        if new_text != text:
            return sentence[: m.start()] + new_text + sentence[m.end() :]
    return None


def _entity_swap(sentence: str, rng: random.Random, pool: list[str]) -> str | None:
    spots = [m for m in _ENTITY.finditer(sentence) if m.start() > 0]
    if not spots:
        return None
    m = rng.choice(spots)
    options = [e for e in pool if e != m.group(0) and e not in sentence]
    if not options:
        return None
    return sentence[: m.start()] + rng.choice(options) + sentence[m.end() :]


def _negation_edit(sentence: str, rng: random.Random) -> str | None:
    for pattern, repl in ((_AUX_NEG, r"\1"), (_NT, r"\1"), (_NEVER, "")):
        if pattern.search(sentence):
            return pattern.sub(repl, sentence, count=1)  # prune the negation
    m = _AUX.search(sentence)
    if m:
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    return None


def entities(texts: list[str]) -> list[str]:
    """Capitalised multi- or single-word names that do not start a sentence (a cheap NER substitute)."""
    found: list[str] = []
    for text in texts:
        found.extend(m.group(0) for m in _ENTITY.finditer(text) if m.start() > 0 and len(m.group(0)) > 3)
    return sorted(set(found))


def perturb_claim(
    sentence: str, rng: random.Random, antonyms: dict[str, list[str]], entity_pool: list[str]
) -> tuple[str, str] | None:
    """An inconsistent version of ``sentence`` and the perturbation used, or ``None``."""
    ops = ["antonym", "number", "entity", "negation"]
    rng.shuffle(ops)
    for op in ops:
        if op == "antonym":
            out = _antonym_swap(sentence, rng, antonyms)
        elif op == "number":
            out = _number_change(sentence, rng)
        elif op == "entity":
            out = _entity_swap(sentence, rng, entity_pool)
        else:
            out = _negation_edit(sentence, rng)
        if out and out != sentence:
            return out, op
    return None


def _support(doc: Document, sentence: str) -> int:
    """Index of the article sentence sharing most words with ``sentence`` (where its evidence is)."""
    words = set(w.lower() for w in _WORD.findall(sentence))
    best, best_i = -1, 0
    for i, s in enumerate(doc.sentences):
        overlap = len(words & set(w.lower() for w in _WORD.findall(s)))
        if overlap > best:
            best, best_i = overlap, i
    return best_i


def _content_words(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if len(w) > 3}


def _overlaps(doc: Document, claim: str) -> list[float]:
    """Per article sentence: the fraction of the claim's content words it contains."""
    words = _content_words(claim)
    if not words:
        return [0.0] * len(doc.sentences)
    return [len(words & _content_words(s)) / len(words) for s in doc.sentences]


def _window_around(doc: Document, keep: list[int], words: int, rng: random.Random) -> tuple[int, int]:
    """Sentence span ``[a, b)`` holding every index in ``keep``, grown at random sides up to ``words`` words."""
    a, b = min(keep), max(keep) + 1
    size = sum(len(s.split()) for s in doc.sentences[a:b])
    while True:
        sides = [side for side in ("left", "right") if (a > 0 if side == "left" else b < len(doc.sentences))]
        if not sides:
            return a, b
        side = rng.choice(sides)
        nxt = doc.sentences[a - 1] if side == "left" else doc.sentences[b]
        if size + len(nxt.split()) > words:
            return a, b
        size += len(nxt.split())
        a, b = (a - 1, b) if side == "left" else (a, b + 1)


def _windowed_records(doc: Document, claim: str, bad: str | None, words: int, rng: random.Random) -> list[dict]:
    """Claim-against-window records of one claim (see :func:`consistency`)."""
    overlap = _overlaps(doc, claim)
    best = max(range(len(overlap)), key=overlap.__getitem__)
    if overlap[best] < 0.3:
        return []  # no sentence carries the claim's evidence: its support cannot be placed in a window
    keep = [i for i, o in enumerate(overlap) if o >= 0.6 * overlap[best] and abs(i - best) <= 2] or [best]
    a, b = _window_around(doc, keep, words, rng)
    window = " ".join(doc.sentences[a:b])
    out = [make_record(TASK, "consistency", 1, doc.id, output=claim, source=window)]
    if bad is not None:
        out.append(make_record(TASK, "consistency", 0, doc.id, output=bad, source=window))
    # The same claim against a window that lacks its evidence: with max aggregation over windows, the
    # windows that do not support a claim must score low (SummaC zero-shot, Laban et al., TACL 2022).
    far = [i for i, o in enumerate(overlap) if o < 0.25 and (i < a or i >= b)]
    if far:
        c, d = _window_around(doc, [rng.choice(far)], words, rng)
        if all(overlap[i] < 0.25 for i in range(c, d)):
            out.append(make_record(TASK, "consistency", 0, doc.id, output=claim, source=" ".join(doc.sentences[c:d])))
    return out


def consistency(
    docs: list[Document],
    antonyms: dict[str, list[str]],
    seed: int = 0,
    *,
    document_sentences: int | None = None,
    claims_per_document: int = 2,
    window_words: int | None = None,
    min_window_words: int | None = None,
    extractive_claims: int = 0,
    limit: int | None = None,
) -> list[dict]:
    """Positive: a reference summary sentence. Negative: the same sentence adversarially perturbed.

    With ``window_words`` the document is a sentence-aligned window of about that many words, as the
    scorer's source windows present it: the positive window holds the sentences that carry the claim,
    and a second negative pairs the unchanged claim with a window of the same article that lacks them.
    ``extractive_claims`` adds that many article sentences per document as claims (copied sentences, as
    extractive summarisers write them), each with its perturbed version. With ``min_window_words`` each
    claim's window size is drawn between it and ``window_words``: short windows teach the model to judge a
    claim against one or two sentences (sentence alignment, Laban et al., TACL 2022), long ones against a
    passage.
    """
    rng = random.Random(seed)
    records = []
    for doc in docs:
        pool = entities(doc.sentences) or entities([" ".join(d.summary) for d in rng.sample(docs, min(5, len(docs)))])
        claims = list(doc.summary)
        rng.shuffle(claims)
        claims = claims[:claims_per_document]
        if extractive_claims:
            picks = rng.sample(doc.sentences, min(extractive_claims, len(doc.sentences)))
            claims += [s for s in picks if len(s.split()) >= 6 and s not in claims]
        for claim in claims:
            bad = perturb_claim(claim, rng, antonyms, pool)
            if window_words:
                words = rng.randint(min_window_words, window_words) if min_window_words else window_words
                records.extend(_windowed_records(doc, claim, bad[0] if bad else None, words, rng))
                continue
            if bad is None:
                continue
            source = _document(doc, document_sentences, around=_support(doc, claim))
            records.append(make_record(TASK, "consistency", 1, doc.id, output=claim, source=source))
            records.append(make_record(TASK, "consistency", 0, doc.id, output=bad[0], source=source))
    return finalize(records, seed, limit)


# -- fluency ----------------------------------------------------------------------------------------------
def fluency(
    docs: list[Document],
    seed: int = 0,
    *,
    lam: float = 5.0,
    units_per_document: int = 2,
    min_words: int = 6,
    max_words: int | None = None,
    ops: tuple[str, ...] | None = None,
    article_sentences: bool = False,
    limit: int | None = None,
) -> list[dict]:
    """Positive: one summary sentence (and article sentences with ``article_sentences``). Negative: the
    sentence damaged by one of ``ops`` (default: a Poisson(lam) span repeated/deleted/shuffled)."""
    groups = ((doc.id, list(doc.summary) + (list(doc.sentences) if article_sentences else [])) for doc in docs)
    records = span_pairs(
        TASK,
        "fluency",
        groups,
        random.Random(seed),
        lam=lam,
        per_group=units_per_document,
        min_words=min_words,
        max_words=max_words,
        ops=ops,
    )
    return finalize(records, seed, limit)


def utterance_naturalness(
    docs: list[Document],
    seed: int = 0,
    *,
    lam: float = 3.0,
    units_per_document: int = 2,
    min_words: int = 5,
    max_words: int | None = 30,
    ops: tuple[str, ...] | None = None,
    limit: int | None = None,
) -> list[dict]:
    """data2text naturalness ("Is this a fluent utterance?"): short article and summary sentences as
    utterances, the damaged sentence as the negative (the same recipe as :func:`fluency`)."""
    groups = ((doc.id, list(doc.summary) + list(doc.sentences)) for doc in docs)
    records = span_pairs(
        "data2text",
        "naturalness",
        groups,
        random.Random(seed),
        lam=lam,
        per_group=units_per_document,
        min_words=min_words,
        max_words=max_words,
        ops=ops,
    )
    return finalize(records, seed, limit)


# -- relevance --------------------------------------------------------------------------------------------
def relevance(
    docs: list[Document],
    seed: int = 0,
    *,
    lead: int = 3,
    max_reference_sentences: int = 4,
    candidates: int = 5,
    inner_rate: float = 0.0,
    limit: int | None = None,
) -> list[dict]:
    """Positive: the article lead against the reference summary. Negative: most lead sentences replaced
    by sentences of BM25-retrieved other documents' leads, or (with probability ``inner_rate``) by the
    same article's least salient sentences, those sharing fewest words with the reference (hard: on topic,
    but not what the reference says)."""
    rng = random.Random(seed)
    index = BM25Index([d.lead(lead) for d in docs])
    references = [[s for s in d.summary if s not in d.sentences[:lead]][:max_reference_sentences] for d in docs]
    all_hits = index.top_many([" ".join(r) for r in references], k=candidates, exclude=[{i} for i in range(len(docs))])
    records = []
    for i, doc in enumerate(docs):
        cand = doc.sentences[:lead]
        reference = references[i]
        if len(cand) < 2 or not reference:
            continue
        n_replace = max(2, (len(cand) + 1) // 2 + 1) if len(cand) > 2 else len(cand) - 1
        pool = []
        if inner_rate and rng.random() < inner_rate:
            ref_words = _content_words(" ".join(reference))
            rest = [s for s in doc.sentences[lead + 2 :] if len(s.split()) >= 6]
            rest.sort(key=lambda s: len(_content_words(s) & ref_words) / max(1, len(_content_words(s))))
            pool = rest[: max(n_replace, len(rest) // 3)]
        if len(pool) < n_replace:
            pool = [s for h in all_hits[i] for s in docs[h].sentences[: lead + 2]]
        if len(pool) < n_replace:
            continue
        neg = list(cand)
        for pos, sent in zip(rng.sample(range(len(cand)), n_replace), rng.sample(pool, n_replace)):
            neg[pos] = sent
        ref = " ".join(reference)
        records.append(make_record(TASK, "relevance", 1, doc.id, output=" ".join(cand), reference=ref))
        records.append(make_record(TASK, "relevance", 0, doc.id, output=" ".join(neg), reference=ref))
    return finalize(records, seed, limit)


GENERATORS: dict[str, Any] = {
    "coherence": coherence,
    "consistency": consistency,
    "fluency": fluency,
    "relevance": relevance,
}
