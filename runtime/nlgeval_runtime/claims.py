"""Claims: the assertions an output makes, the units that fact dimensions score.

A fact dimension (summarization and fact consistency, rag faithfulness) asks of each claim whether the
source supports it. UniEval scores each sentence (Zhong et al., 2022); a sentence that joins several
assertions ("The council approved the bridge, and construction starts in May") hides one unsupported half
behind a supported one, and a unit with no content ("Yes.", "Sure!", "Here is the summary:") is not a claim
at all: scored as one, it reads as unsupported and halves the mean of a correct answer. So an output is split
into sentences, each sentence into clauses where a conjunction joins two statements, and units with no
content are dropped (reported in the score's details as skipped).

    >>> split_claims("Yes. The kettle can be returned within 30 days, and the refund takes a week.")
    (['The kettle can be returned within 30 days,', 'and the refund takes a week.'], ['Yes.'])
"""

from __future__ import annotations

import re
from typing import Collection

__all__ = ["split_claims", "is_contentless", "is_evasive", "content_words", "STOPWORDS", "words"]

#: English function words: not evidence of content on their own.
STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not
    of off on once only or other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your yours yourself yourselves said says say
    s t don't isn't wasn't aren't weren't won't can't cannot n't 's ll re ve d m""".split()
)

#: Words that make a unit a reply, a greeting or a preamble rather than an assertion.
_FILLER = frozenset(
    """yes no yeah yep nope sure ok okay certainly absolutely definitely of course indeed right correct great
    hi hello hey thanks thank you please welcome glad happy help here is the summary answer following below
    well so alright understood noted hope this helps let me know sorry unfortunately fortunately luckily sadly
    actually honestly basically afraid i'm apologies apologise apologize perfect exactly totally good news
    of course no problem got it""".split()
)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)?|\d+(?:[.,]\d+)*")
# Where one sentence joins two statements: a semicolon, or a comma before a coordinating conjunction.
_CLAUSE = re.compile(r"(?<=;)\s+|(?<=,)\s+(?=(?:and|but|while|whereas|although|though|yet)\s)|(?<=:)\s+", re.I)
# Where a sentence may list statements without a conjunction after its comma ("Nobody was hurt, two schools
# stay shut") or join two with a bare "and": split only where both sides read as statements.
_SOFT = re.compile(r"(?<=,)\s+|\s+(?=and\s)", re.I)


def words(text: str) -> list[str]:
    """Lower-cased words and numbers of ``text``."""
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


# Words with their hyphenated compounds kept whole: "time-locked" is an adjective, never the verb "locked".
_COMPOUND_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")


def _verb_words(text: str) -> list[str]:
    return [w.lower() for w in _COMPOUND_WORD.findall(text)]


def _verb_at(tokens: list[str], k: int) -> bool:
    """Whether ``tokens[k]`` reads as a finite verb: an auxiliary, or a past form that is neither part of a
    hyphenated compound nor a participle opening a noun phrase ("and scheduled bandwidth limits", "related
    costs": a participle first, then a content word, is the noun's adjective)."""
    t = tokens[k]
    if t in _AUXILIARIES:
        return True
    if "-" in t or not _finite_form(t):
        return False
    after = tokens[k + 1] if k + 1 < len(tokens) else ""
    opens_a_phrase = k == 0 and bool(after) and after not in STOPWORDS and not after[0].isdigit()
    return not (opens_a_phrase and not after.endswith("ly"))


def _finite_form(word: str) -> bool:
    """Whether a lower-cased word has the form of a finite verb: an auxiliary or a past form ("approved")."""
    return word in _AUXILIARIES or (word.endswith("ed") and len(word) > 4)


def stem_match(word: str, vocabulary: Collection[str]) -> bool:
    """Whether ``word`` is in ``vocabulary``, or (five letters or more) shares its stem with a word there: all but
    its last three letters, at least four ("British" finds "Britain")."""
    if word in vocabulary:
        return True
    if len(word) < 5:
        return False
    stem = word[: max(4, len(word) - 3)]
    return any(v.startswith(stem) for v in vocabulary if len(v) >= len(stem))


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry content: not function words, at least two characters or a digit."""
    return [w for w in words(text) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]


def is_contentless(unit: str) -> bool:
    """True for a unit that asserts nothing: a yes/no, a greeting, a preamble such as "Here is the summary:".

    >>> [is_contentless(u) for u in ["Yes.", "Sure!", "Here is the summary:", "Nobody was hurt."]]
    [True, True, True, False]
    """
    tokens = words(unit)
    if not tokens:
        return True
    if unit.rstrip().endswith(":") and len(tokens) <= 6:
        return True  # a preamble introducing what follows
    return all(t in _FILLER or t in STOPWORDS for t in tokens)


_AUXILIARIES = frozenset(
    "is are was were be been has have had will would can could should might must do does did said says told".split()
)


def _statement(part: str) -> bool:
    """Whether a piece of a sentence reads as a statement: four or more words and a verb-like word (an
    auxiliary, a past form, or a present form after a noun). "and Berlin in May" is a list item."""
    tokens = words(part)
    if len(tokens) < 3 or (len(tokens) == 3 and not _AUXILIARIES & set(tokens)):
        return False  # "Nobody was hurt" is a statement; "and Paris in" is not
    for k, t in enumerate(tokens):
        if _finite_form(t):
            return True
        if k > 0 and t.endswith("s") and len(t) > 3 and tokens[k - 1] not in STOPWORDS and not t.endswith("ss"):
            return True  # "the refund takes"
        if k > 0 and tokens[k - 1].endswith("s") and len(tokens[k - 1]) > 3 and t.isalpha() and t not in STOPWORDS:
            return True  # "other customers pay"
    return False


# "Priya Shah, who accepted the request, will send the contract": a subject, a relative clause about it between
# commas, and the rest of the sentence (its verb first)
_RELATIVE = re.compile(r"^(?P<subject>[^,;:]{2,60}?),\s+(?:who|which)\s+(?P<about>[^,;:]+?),\s+(?P<rest>.+)$", re.S)


def _relative(sentence: str) -> list[str] | None:
    """``[subject + relative clause, subject + rest]`` for a sentence whose subject carries a relative clause
    between commas, so that neither claim loses its subject; None for any other sentence."""
    m = _RELATIVE.match(sentence.strip())
    if not m or len(words(m.group("subject"))) > 6:
        return None
    first = words(m.group("rest"))[:1]
    if not first or not _finite_form(first[0]):
        return None
    subject = m.group("subject").strip()
    return [f"{subject} {m.group('about').strip()}.", f"{subject} {m.group('rest').strip()}"]


# "Other products, including the smoked salmon flakes and smoked trout, are not affected": a subject, a list
# between commas that it includes or leaves out, and the rest of the sentence (its verb first)
_PARENTHETICAL = re.compile(
    r"^(?P<subject>[^,;:]{2,60}?),\s+(?:including|such as|like|except|excluding|apart from|other than|notably|"
    r"especially|among them)\s+[^,;:]+?,\s+(?P<rest>.+)$",
    re.S | re.I,
)


def _parenthetical(sentence: str) -> bool:
    """Whether ``sentence``'s subject carries a list between commas ("X, including A and B, are ...")."""
    m = _PARENTHETICAL.match(sentence.strip())
    if not m or len(words(m.group("subject"))) > 6:
        return False
    first = _verb_words(m.group("rest"))[:1]
    return bool(first) and (_finite_form(first[0]) or first[0] in _AUXILIARIES)


def _clauses(sentence: str) -> list[str]:
    """A sentence split where a conjunction, a comma or a semicolon joins two statements; a clause that
    starts with its verb ("and will start in May") gets the sentence's subject back, and a relative clause
    about the subject ("X, who accepted the request, will ...") becomes a claim about X."""
    relative = _relative(sentence)
    if relative is not None:
        return [relative[0], *_clauses(relative[1])]
    if _parenthetical(sentence):
        return [sentence.strip()]  # its "and" joins the list, not two statements
    parts = _merge([p for p in _CLAUSE.split(sentence) if p and p.strip()])
    out: list[str] = []
    for part in parts:
        pieces = _merge([p for p in _SOFT.split(part) if p and p.strip()], soft=True)
        out.extend(pieces)
    # a clause that opens with its verb shares the subject of the nearest clause before it that has one ("The
    # seller will pay $1,200, but you must arrange the work and should retest": "you should retest")
    subject = _subject(out[0]) if len(out) > 1 else None
    auxiliary = _auxiliary(out[0], subject) if subject else ""
    filled = [out[0]]
    for part in out[1:]:
        bare = _CONJUNCTION.sub("", part.strip())
        own = _subject(bare)
        if own:
            subject, auxiliary = own, _auxiliary(bare, own)
            filled.append(part)
        else:
            filled.append(_with_subject(part, subject, auxiliary) if subject else part)
    return filled


def _auxiliary(clause: str, subject: str) -> str:
    """The auxiliaries between ``subject`` and a past participle in ``clause`` ("was" of "The contract was
    signed in May"), which a clause opening with a participle shares ("and renewed in June"); else ""."""
    tokens = _COMPOUND_WORD.findall(clause[len(subject) :])
    k = 0
    while k < len(tokens) and tokens[k].lower() in _AUXILIARIES | {"not", "also", "already", "then"}:
        k += 1
    if 0 < k < len(tokens) and tokens[k].lower().endswith("ed") and "-" not in tokens[k]:
        return " ".join(t for t in tokens[:k] if t.lower() in _AUXILIARIES)  # "not" is the first clause's own
    return ""


_CONJUNCTION = re.compile(r"^(?:and|but|while|whereas|although|though|yet)\s+", re.I)


def _subject(clause: str) -> str | None:
    """The words of ``clause`` before its first verb-like word ("The city council" of "The city council
    approved ..."), or None when it opens with the verb or has none."""
    found = list(_COMPOUND_WORD.finditer(clause))
    tokens = [m.group(0).lower() for m in found]
    for k, m in enumerate(found):
        if _verb_at(tokens, k):
            return clause[: m.start()].strip().rstrip(",") or None if k > 0 else None
    return None


def _with_subject(clause: str, subject: str, auxiliary: str = "") -> str:
    """``clause`` with ``subject`` in front when it opens with its verb ("and will start" -> "X will start"),
    and the first clause's ``auxiliary`` when it opens with a participle ("and renewed" -> "X was renewed")."""
    bare = _CONJUNCTION.sub("", clause.strip())
    tokens = _verb_words(bare)
    if not tokens or not _verb_at(tokens, 0):
        return clause
    if auxiliary and tokens[0] not in _AUXILIARIES:
        return f"{subject} {auxiliary} {bare}"
    return f"{subject} {bare}"


_NOT_OPENERS = frozenset(
    "which who whom whose that where when not nor by for from with without to of in on at as than including "
    "especially such like after before since until because once if whenever unless whether so".split()
)
_ATTRIBUTION = frozenset("said says told added according announced reported explained".split())


def _soft_statement(part: str) -> bool:
    """A piece split at a bare comma or "and" stands alone only as a full statement: a finite verb (an
    auxiliary or a past form), not opening with a relative pronoun, a preposition or "not", and not a bare
    attribution ("the company said on Monday")."""
    tokens = words(_CONJUNCTION.sub("", part.strip()))
    if not tokens or tokens[0] in _NOT_OPENERS:
        return False
    if len(tokens) <= 6 and _ATTRIBUTION & set(tokens):
        return False
    verbs = _verb_words(_CONJUNCTION.sub("", part.strip()))
    return any(_verb_at(verbs, k) for k in range(len(verbs)))


def _merge(parts: list[str], soft: bool = False) -> list[str]:
    """Pieces that are no statement joined back to their neighbour."""
    if len(parts) == 1:
        return parts
    merged: list[str] = []
    for part in parts:
        # a piece that is no statement ("and Paris,") is a list item or a phrase: keep it with its neighbour;
        # a semicolon joins statements by grammar
        after_semicolon = bool(merged) and merged[-1].rstrip().endswith(";") and len(words(part)) >= 3
        after_semicolon = after_semicolon and not soft
        weak = not _statement(part) or not _statement(merged[-1]) if merged else False
        if soft and merged and not weak:
            weak = not _soft_statement(part) or not _soft_statement(merged[-1])
        # "...over two weekends in June: from 10pm on Friday 13 June ...": a piece that opens with a preposition,
        # a relative pronoun or a subordinator is no statement of its own, whatever stands before it
        opener = words(_CONJUNCTION.sub("", part.strip()))[:1]
        if merged and opener and opener[0] in _NOT_OPENERS and opener[0] != "that":  # "and that price is ..."
            weak, after_semicolon = True, False
        if merged and not after_semicolon and weak:
            merged[-1] = merged[-1] + " " + part
        else:
            merged.append(part)
    return [m.strip() for m in merged]


def split_claims(text: str, split=None) -> tuple[list[str], list[str]]:
    """``(claims, skipped)``: the claim units of ``text`` in order, and the units dropped as contentless.

    ``split`` splits sentences (default: :func:`nlgeval_runtime.sentences.split_sentences`).
    """
    if split is None:
        from nlgeval_runtime.sentences import split_sentences as split
    claims: list[str] = []
    skipped: list[str] = []
    for sentence in split(text) or [text.strip()]:
        # "Yes, you can return it." asserts "you can return it": the reply word is not part of the claim
        for clause in _clauses(sentence):
            (skipped if is_contentless(clause) else claims).append(clause)
    return claims, skipped


# Phrases with which an answer declines to answer (Ragas flags such answers as noncommittal, Es et al., 2023).
_EVASIVE = re.compile(
    r"\b(?:not sure|unsure|(?:do|does|did)\s*n[o']t know|no idea|can(?:not|'t| not)\s+(?:help|answer|say|tell|"
    r"give|provide|share|confirm)|unable to|no information|(?:do|does)\s*n[o']t have (?:that|this|the|any|enough) "
    r"(?:information|details|data)|contact (?:our |the |your )?(?:[\w&'’-]+ ){0,2}?(?:customer )?"
    r"(?:support|service|care|helpdesk|help desk|team)|depends on many "
    r"factors|good question|let me know if|check (?:the|our) (?:website|news|faq)|may change|can vary|vary)\b",
    re.I,
)


def is_evasive(answer: str) -> bool:
    """True for an answer that declines to answer: every unit is contentless or a hedge ("I'm not sure",
    "I can't say", "Please contact customer support").

    >>> [is_evasive(a) for a in ["I'm not sure. Please contact support.", "Yes, within 30 days."]]
    [True, False]
    """
    from nlgeval_runtime.sentences import split_sentences

    units = [u for s in split_sentences(answer) or [answer] for u in _clauses(s)]
    substantive = [u for u in units if not is_contentless(u)]
    return bool(substantive) and all(_EVASIVE.search(u) for u in substantive) or (not substantive and bool(units))
