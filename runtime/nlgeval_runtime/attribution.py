"""Who said or does what in a transcript: a claim that gives a speaker's words or task to someone else.

A meeting summary is mostly attributions ("Oyelaran recommended Halden", "Bexley will post the notices"), and
the commonest error of a summariser there is the right statement given to the wrong person. The claim head reads
a bag of supported words and passes it. A reader checks who said it; this module does the same for sources
written as a transcript (four or more turns, two or more speakers with two turns each, each line opening with
the speaker's name and a colon):

- every sentence of a turn belongs to its speaker, unless it opens with a participant's name as its subject
  ("Marcus drafts the Halden contract" in the chair's summing-up belongs to Marcus; "Marcus, put that in the
  contract" is said to him and stays the chair's);
- a claim about a participant (the first participant it names) is compared with every sentence: when the
  sentences about the claim's matter (three or more of its content words, by stem) belong to another
  participant and none of the nearly as close ones is said by or names the claim's participant, the claim is
  misattributed, and the message names the owner and the sentence.

A claim that names no participant, or whose words no sentence holds clearly, is left to the head: this check
fires on a conflict, never on absence.

    >>> source = '''Dana Whitfield: Tom, will you need to close the branch?
    ... Tom Bexley: Only the children's section. I'll post notices two weeks before the work starts.
    ... Dana Whitfield: To sum up: Marcus drafts the contract by April 16.
    ... Marcus Oyelaran: Fine by me.
    ... Tom Bexley: Me too.'''
    >>> misattributions("Bexley will draft the contract by April 16.", source)
    [('Bexley', "the source gives this to Marcus Oyelaran: 'To sum up: Marcus drafts the contract by April 16.'")]
    >>> misattributions("Oyelaran will draft the contract by April 16.", source)
    []
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from nlgeval_runtime.claims import STOPWORDS, content_words, stem_match, words

__all__ = ["misattributions", "transcript_turns"]

_TURN = re.compile(
    r"^[ \t]*(?:\[[^\]\n]{1,24}\][ \t]*|\(?\d{1,2}:\d{2}(?::\d{2})?\)?[ \t]+)?"  # "[10:00] ", "00:41 "
    r"(?P<speaker>[A-Z][\w'’.-]*(?:[ \t]+[A-Z][\w'’.-]*){0,2})"
    r"(?:[ \t]*\([^)\n]{1,40}\))?[ \t]*:[ \t]+(?P<text>\S.*)$",  # "Maya Goldberg (00:00:41): ", "Cho (trustee): "
    re.M,
)
#: line labels that are no speakers: headers of a transcript, and roles that are no one's name
_NOT_SPEAKERS = frozenset(
    """present speakers attendees apologies absent note notes agenda item date time location re subject from to cc
    minutes action actions decision decisions q a customer agent user assistant bot system caller operator
    chair host moderator interviewer summary update directors members participants guests staff board committee
    recorder venue place doctor patient nurse teacher student guest client caller interviewee speaker audience
    reporter clerk parent pupil candidate panel""".split()
)
#: words that may stand before a sentence's subject: "To summarize:", "So", "And then"
_LEAD_IN = re.compile(
    r"(?:[^:]{0,30}:\s+)?(?:(?:so|and|then|also|ok|okay|right|next|finally|first|second)\b,?\s+)*", re.I
)
#: a first name and a surname ("Ruth Kowalski" in the list of speakers)
_FULL_NAME = re.compile(r"\b[A-Z][a-z'’-]+[ \t]+[A-Z][\w'’-]+\b")
#: the fewest content words a sentence must share with the claim to be "about the claim's matter"
_CLEAR = 3


@dataclass(frozen=True)
class _Sentence:
    text: str
    owner: str  # the participant's key (surname, lower case)
    involved: frozenset[str]  # the speaker and every participant the sentence names
    words: frozenset[str]


@functools.lru_cache(maxsize=32)
def transcript_turns(source: str) -> tuple[tuple[str, str], ...]:
    """The (speaker, text) turns of a source written as a transcript, or () when it is not one (fewer than
    four turns, or fewer than two speakers who speak twice)."""
    turns = []
    for m in _TURN.finditer(source):
        speaker = m.group("speaker").strip()
        if speaker.lower() in _NOT_SPEAKERS or any(p.lower() in _NOT_SPEAKERS for p in speaker.split()[:1]):
            continue
        turns.append((speaker, m.group("text").strip()))
    counts: dict[str, int] = {}
    for speaker, _ in turns:
        counts[speaker] = counts.get(speaker, 0) + 1
    if len(turns) < 4 or sum(1 for n in counts.values() if n >= 2) < 2:
        return ()  # labelled lines of a manual ("Rear-facing: 2.3-18 kg") are no conversation
    return tuple(turns)


@functools.lru_cache(maxsize=32)
def _participants(source: str) -> tuple[dict[str, str], dict[str, str]]:
    """(word -> participant key, key -> full name) for the speakers of a transcript. A speaker labelled by one
    word ("KOWALSKI") gets the full name the source gives elsewhere ("Ruth Kowalski"); a first name two
    participants share is nobody's."""
    turns = transcript_turns(source)
    full: dict[str, str] = {}
    for speaker, _ in turns:
        parts = speaker.split()
        key = parts[-1].lower().strip(".")
        if len(parts) > 1 or key not in full:
            full[key] = speaker if len(parts) > 1 else speaker.title()
    for name in _FULL_NAME.findall(source):
        parts = name.split()
        if len(parts) >= 2 and parts[-1].lower() in full and len(full[parts[-1].lower()].split()) < 2:
            full[parts[-1].lower()] = name
    index: dict[str, str] = {}
    shared: set[str] = set()
    for key, name in full.items():
        index[key] = key
        for part in name.split()[:-1]:
            word = part.lower().strip(".")
            if word in STOPWORDS or len(word) < 2:
                continue
            if word in index and index[word] != key:
                shared.add(word)
            index.setdefault(word, key)
    for word in shared:
        if word not in full:
            del index[word]
    return index, full


def _named(text: str, index: dict[str, str]) -> list[tuple[int, str, str]]:
    """(position, participant key, word as written) for each capitalised word of ``text`` that names one."""
    found = []
    for m in re.finditer(r"\b[A-Z][\w'’-]*", text):
        word = re.sub(r"['’]s$", "", m.group(0)).lower()
        if word in index:
            found.append((m.start(), index[word], re.sub(r"['’]s$", "", m.group(0))))
    return found


@functools.lru_cache(maxsize=32)
def _sentences(source: str) -> tuple[_Sentence, ...]:
    from nlgeval_runtime.sentences import split_sentences

    index, _ = _participants(source)
    out = []
    for speaker, text in transcript_turns(source):
        speaker_key = index.get(speaker.split()[-1].lower().strip("."), speaker.lower())
        for sentence in split_sentences(text) or [text]:
            named = _named(sentence, index)
            owner = speaker_key
            lead = _LEAD_IN.match(sentence)
            opening = len(lead.group(0)) if lead else 0  # "To summarize: Marcus drafts ..."
            if named and named[0][0] == opening and not re.match(r"[\w'’-]+\s*,", sentence[opening:]):
                owner = named[0][1]  # "Marcus drafts ..." belongs to Marcus; "Marcus, put that ..." is said to him
            involved = frozenset({speaker_key, *(key for _, key, _ in named)})
            out.append(_Sentence(sentence, owner, involved, frozenset(words(sentence))))
    return tuple(out)


def misattributions(claim: str, source: str) -> list[tuple[str, str]]:
    """``(the participant as the claim writes them, what the source says)`` when a claim gives another
    participant's words or task to the participant it names, against a transcript ``source``; [] for any other
    source or claim. :func:`nlgeval_runtime.factcheck.check_claim` reports it as a failed check of kind
    "attribution"."""
    if not transcript_turns(source):
        return []
    index, full = _participants(source)
    named = _named(claim, index)
    # the participant the claim is about: the first one not after a preposition ("after a question from Whitfield,
    # Bexley said ...": Bexley)
    subjects = [
        n for n in named if not re.search(r"\b(?:from|to|by|with|for|of|after|before|about|asked)\s+$", claim[: n[0]])
    ]
    if not subjects:
        return []
    _, person, written = subjects[0]
    named_words = {w.lower() for _, _, w in named}
    matter = [w for w in dict.fromkeys(content_words(claim)) if w not in named_words]
    if len(matter) < _CLEAR:
        return []
    scored = [(sum(1 for w in matter if stem_match(w, s.words)), s) for s in _sentences(source)]
    best, top = max(scored, key=lambda pair: pair[0])
    if best < _CLEAR or top.owner == person:
        return []
    if any(person in s.involved for n, s in scored if n >= best - 1):
        return []  # the claim's participant said or is named in a sentence nearly as close
    owner = full.get(top.owner, top.owner.title())
    return [(written, f"the source gives this to {owner}: {top.text!r}")]
