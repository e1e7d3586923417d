"""Offline English sentence splitting for per-sentence dimensions.

UniEval scores consistency, fluency and engagingness sentence by sentence and splits with NLTK Punkt's
``sent_tokenize``. Punkt's English parameters are a separate data download (``punkt_tab``) that is not
available offline, so this module implements a small rule-based splitter with no data files.

    >>> split_sentences('Dr. Smith paid $3.50 in the U.S. yesterday. "Stop!" she said. It rained.')
    ['Dr. Smith paid $3.50 in the U.S. yesterday.', '"Stop!" she said.', 'It rained.']

A boundary is a run of ``.``, ``!``, ``?`` or ``…`` (plus closing quotes and brackets) followed by
whitespace and then something that can start a sentence (an upper-case letter, a digit, or an opening
quote/bracket). It is *not* a boundary when:

- the word before a ``.`` is a known abbreviation (titles ``Mr. Dr. Prof.``, ``e.g. i.e. etc. vs.``,
  months, ``St. Inc. Corp.`` ...), see :data:`ABBREVIATIONS`, or one of ``No. Fig. Eq. pp.`` ... followed
  by a number (:data:`NUMBER_ABBREVIATIONS`), or ``et al.``;
- the word before a ``.`` is a single letter or a dotted acronym (``J. K. Rowling``, ``U.S.``, ``a.m.``);
- the next word starts with a lower-case letter (``"the end. and then"`` stays one sentence);
- the ``.`` is inside a number (``3.14``, ``v1.2``) or a web address (no whitespace follows it);
- the text so far is only a list number (``"1. Introduction"``).

A blank line (two or more line breaks) always ends a sentence, even without punctuation, and so does a line
break before a list item (a line opening with ``-``, ``*``, ``•``, ``–``, ``2.``, ``2)`` or ``b)``): each item
of a list of doses or terms is a statement of its own.

How this differs from Punkt's ``sent_tokenize`` (documented in docs/sentence-splitting.md as well):

- Punkt learns abbreviations, collocations and sentence starters from a corpus; this splitter uses a
  fixed abbreviation list. An abbreviation missing from the list followed by a capitalised word is
  split here (Punkt may know it); a known abbreviation that really ends a sentence (``... and so on,
  etc. The next ...``) is *not* split here, while Punkt's orthographic heuristics sometimes split it.
- Punkt splits before a lower-case word after a period unless the preceding token is a known
  abbreviation; this splitter never does (lower-case continuations are far more often abbreviations
  than sentence starts in generated text).
- Punkt ignores line breaks; this splitter ends a sentence at a blank line and before a list item, so
  bullet lists and paragraphs without final punctuation become separate units.
- Dotted acronyms (``U.S.``) followed by a capitalised word are never split here; Punkt splits some
  of them when the next word is a frequent sentence starter (``in the U.S. The president ...``).
- Both keep closing quotes and brackets with the sentence they end, and both leave decimals intact.
"""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "split_sentences"]

#: Lower-cased words (without their final period) after which a period does not end a sentence.
#: Words that are also ordinary English words (``no``, ``sat``, ``sun``, ``fig``) are left out here and
#: handled by :data:`NUMBER_ABBREVIATIONS` or not at all.
ABBREVIATIONS = frozenset(
    """
    mr mrs ms dr prof sr jr st mt rev hon gov sen supt insp lt sgt capt cmdr adm messrs mme mlle
    e.g i.e etc vs cf approx dept univ assn bros inc ltd corp llc plc
    jan feb apr jun jul aug sep sept oct nov dec tues thur thurs
    ave blvd hwy
    a.m p.m u.s u.k u.n e.u d.c ph.d b.a m.a b.sc m.sc
    """.split()
)

#: Abbreviations only when a number follows them ("No. 5", "Fig. 3", "pp. 12"): alone they are words.
NUMBER_ABBREVIATIONS = frozenset("no nos fig figs eq eqs sec ch vol vols pp p art para ref refs".split())

# Sentence-final punctuation run, then the closing quotes/brackets that belong to that sentence.
_BOUNDARY = re.compile(
    r"""
    (?P<punct>[.!?\u2026]+)             # . ! ? … (possibly repeated: ?!, ...)
    (?P<close>["'\u201d\u2019)\]]*)     # closing quotes and brackets stay with the sentence
    (?P<space>\s+)                      # a boundary needs whitespace after it
    (?=(?P<next>\S))
    """,
    re.VERBOSE,
)
_PARAGRAPH = re.compile(r"\n[ \t]*\n\s*")
# a line that opens a list item ("- Aspirin 81 mg: STOPPED", "• ...", "2. Connect the modem", "b) ...")
_LIST_ITEM = re.compile(r"\n(?=[ \t]*(?:[-*\u2022\u2013]|\d{1,2}[.)]|[a-z][.)])[ \t]+\S)")
_OPENERS = "\"'\u201c\u2018([{"
_WORD_BEFORE = re.compile(r"([\w.\-']+)$")
_LIST_NUMBER = re.compile(r"^\s*(\d{1,3}|[ivxlc]{1,5}|[a-z])$", re.IGNORECASE)


def _can_start_sentence(text: str, pos: int) -> bool:
    """True if the text at ``pos`` looks like the first character(s) of a sentence."""
    char = text[pos]
    if char.isupper() or char.isdigit():
        return True
    if char in _OPENERS:
        # An opening quote/bracket starts a sentence if what it opens does.
        rest = text[pos + 1 : pos + 3]
        return bool(rest) and (rest[0].isupper() or rest[0].isdigit() or rest[0] in _OPENERS)
    # Other scripts without case (CJK, Arabic, ...) and symbols: only a letter without case counts.
    return char.isalpha() and not char.islower()


#: capitalised words that may follow a clock time inside its sentence
_CLOCK_FOLLOWERS = frozenset(
    """monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun january
    february march april may june july august september october november december jan feb mar apr jun jul aug sep
    sept oct nov dec gmt utc bst cet cest est edt cst cdt mst mdt pst pdt et pt ct aest ist eastern central pacific
    mountain atlantic alaska hawaii local uk us""".split()
)


def _is_abbreviation(before: str, after: str) -> bool:
    """True if the text ending just before a period ends with an abbreviation or an initial."""
    match = _WORD_BEFORE.search(before)
    if not match:
        return False
    word = match.group(1).lstrip("-'")
    lowered = word.lower()
    if lowered in ("a.m", "p.m") and re.search(r"\d\s*$", before[: match.start(1)]):
        # a clock time ends the sentence when a capitalised word other than a day, a month or a zone follows:
        # "open until 10 p.m. Off-Peak costs £28", not "at 10 p.m. Tuesday" or "9 a.m. GMT"
        following = re.match(r"[A-Z][\w'-]*", after)
        if following and following.group(0).lower() not in _CLOCK_FOLLOWERS:
            return False
    if lowered in ABBREVIATIONS:
        return True
    if lowered in NUMBER_ABBREVIATIONS and after[:1].isdigit():
        return True
    if lowered == "al" and before[: match.start(1)].rstrip().lower().endswith("et"):
        return True  # "et al."
    if len(word) == 1 and word.isalpha():
        return True  # an initial: "J. K. Rowling", "Section A. The ..." is rarely a sentence end
    # Dotted acronyms and abbreviations such as "U.S", "a.m", "Ph.D" (the last period is the boundary).
    parts = [part for part in word.split(".") if part]
    if len(parts) > 1 and all(len(part) <= 2 and part.isalpha() for part in parts):
        return True
    return False


def _split_paragraph(text: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY.finditer(text):
        next_pos = match.start("next")
        if not _can_start_sentence(text, next_pos):
            continue
        punct = match.group("punct")
        before = text[start : match.start("punct")]
        if punct == "." and not match.group("close"):
            if _is_abbreviation(before, text[next_pos:]):
                continue
            if _LIST_NUMBER.match(before):
                continue  # "1. Introduction" is a list item number, not a sentence
        sentence = text[start : match.end("close")].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end("space")
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def split_sentences(text: str) -> list[str]:
    """Split English ``text`` into sentences, offline (no NLTK data).

    Returns the sentences with surrounding whitespace removed, in order; an empty or blank text gives
    ``[]``. Joining the result with spaces gives back the text up to whitespace.

        >>> split_sentences("It is 3.5 km long. Is it? Yes!")
        ['It is 3.5 km long.', 'Is it?', 'Yes!']
        >>> split_sentences("Mr. Lee met e.g. the staff. They talked.")
        ['Mr. Lee met e.g. the staff.', 'They talked.']
    """
    if not isinstance(text, str):
        raise TypeError(f"split_sentences expects a str, got {type(text).__name__}")
    sentences: list[str] = []
    for paragraph in _PARAGRAPH.split(text):
        for item in _LIST_ITEM.split(paragraph):
            sentences.extend(_split_paragraph(item))
    return sentences
