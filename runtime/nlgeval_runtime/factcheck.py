"""Explicit fact checks: what a reader checks first when a summary or an answer states a fact.

A neural Boolean-QA head judges whether a claim follows from its evidence, and it does that well for
paraphrase ("No one was injured" / "Nobody was hurt") but poorly for the details that make a claim false
while leaving it almost word-for-word the source: a number read backwards ("83 million" for 38), a
month or a unit swapped ("eleven months" for eleven weeks), a name that the source never mentions. FactCC
(Kryscinski et al., EMNLP 2020) builds its negatives from exactly these swaps because they are the
commonest errors of summarisers. This module finds them without a model:

- **numbers** with their scale and unit: digits and number words ("eleven" = 11, "38m" = 38 million),
  percentages, money, and the noun that says what is counted (weeks, people, euros); dates are a day and a
  month, so "19 July" against "19 May" is a number whose unit differs;
- **months and weekdays** named on their own;
- **names**: capitalised words inside a sentence (people, places, organisations) that the source never
  mentions, matched case-insensitively and by stem ("British" finds "Britain");
- **negation**: a claim that negates what its evidence asserts, or the reverse, on the same words.

Each finding is a :class:`Mismatch` that names the claim's span and what the evidence says instead;
:func:`check_claim` returns them. :func:`lexical_support` is the share of the claim's content words
found in the source (unigram precision, the strong baseline of factual-consistency benchmarks).

    >>> [m.message for m in check_claim("It costs 83 million euros.", "It will cost 38 million euros.")]
    ['`83 million euros`: the source says 38 million euros']
"""

from __future__ import annotations

import functools
import math
import re
from typing import Collection, Sequence
from dataclasses import dataclass

from nlgeval_runtime.claims import STOPWORDS, content_words, stem_match, words
from nlgeval_runtime.sentences import split_sentences
from nlgeval_runtime.figures import _MONTH_SPELLINGS, _MONTHS, _NUMERIC_MONTH_YEAR, _WEEKDAYS, NumberMention, numbers

__all__ = [
    "FactChecks",
    "Mismatch",
    "NumberMention",
    "Verdict",
    "check_claim",
    "lexical_support",
    "numbers",
    "names",
    "negated",
]

_NEGATION = frozenset(
    "not n't no never nobody none nothing neither nor without cannot can't won't don't doesn't didn't isn't "
    "wasn't aren't weren't hasn't haven't hadn't wouldn't shouldn't couldn't".split()
)
# Capitalised words that start many sentences or are titles, not names
_NOT_NAMES = frozenset(
    """i mr mrs ms dr prof sir madam mayor president minister chief the a an it this that these those he she they we
    you his her their our my your its there here however but and or so if when while after before as at in on
    for from with by of to under over according meanwhile also yesterday today tomorrow monday tuesday wednesday
    thursday friday saturday sunday ok yes no christmas easter eid diwali hanukkah ramadan new year's gp id pin
    atm tv pc faq although though because since unless once whereas whether please thanks sorry unfortunately
    fortunately sadly instead otherwise overall finally first second third next then still even only just both
    either neither each every any all some most many several yet""".split()
)


@dataclass(frozen=True)
class Mismatch:
    """One explicit check that failed: ``kind`` (number, date, year, month, weekday, name, role, attribution, party,
    swap, negation, contradiction, form), the claim's
    span, and what the evidence says instead (or None when it says nothing of the kind)."""

    kind: str
    span: str
    evidence: str | None

    @property
    def message(self) -> str:
        if self.kind in ("negation", "form", "attribution", "party", "contradiction"):
            return f"`{self.span}`: {self.evidence}"
        if self.evidence:
            return f"`{self.span}`: the source says {self.evidence}"
        return f"`{self.span}`: not in the source"

    def as_dict(self) -> dict:
        return {"kind": self.kind, "span": self.span, "evidence": self.evidence, "message": self.message}


#: titles before a name: the name is what follows them
_TITLE_WORDS = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "sir", "dame", "madam", "rev"})
_NAME = re.compile(r"\b[A-Z][\w'’.-]*(?:\s+(?:of|de|van|von|al|bin|la|le|da|del|der)?\s*[A-Z][\w'’.-]*)*")


# a capital letter joined to a word ("X-ray", "T-shirt", "U-turn") is a common noun, not a name
_LETTER_COMPOUND = re.compile(r"^[A-Z]-[a-z]")
# a word quoted inside a name ("Little Fern 'Sprout' high chairs"): the quotes are no part of it
_QUOTED_WORD = re.compile(r"(?<=\s)['‘\"“]([A-Z][\w-]*)['’\"”](?=[\s,.;:])")
# words that open a sentence as its verb or adverb, never as a name: "Let Brightwater know", "Leaving Fixed Saver"
_OPENING_VERB = re.compile(
    r"^(?:[A-Z][a-z]+ing|Let|Make|Call|Send|Keep|Take|Leave|Bring|Check|Contact|Ask|Tell|Give|"
    r"Use|Note|Remember|Please|Visit|Return|Stop|Switch|Turn|Pay|Read|Book|Choose|Expect|Go|"
    r"Try|Find|Get|Put|Move|Submit|Apply|Register|Email|Phone|Ring|Write|Bear|Mind|Do|Don't)$"
)


def names(text: str) -> list[str]:
    """Capitalised names of ``text`` that are not sentence openers, titles, months or weekdays.

    A capitalised run that starts a sentence counts when it has two or more words ("John Peters said").

        >>> names("Mayor John Peters met the Red Cross in Paris on Monday. The visit ended.")
        ['John Peters', 'Red Cross', 'Paris']
    """
    from nlgeval_runtime.sentences import split_sentences

    found: list[str] = []
    for sentence in split_sentences(text) or [text]:
        sentence = _QUOTED_WORD.sub(r"\1", sentence)
        for m in _NAME.finditer(sentence):
            parts = [re.sub(r"['’]s$", "", p).strip(".’'") for p in m.group(0).split()]  # "Sam's" is Sam
            at_start = not sentence[: m.start()].strip(" \"'“‘([")
            while parts and (parts[0].lower() in _NOT_NAMES or parts[0].lower() in _MONTHS):
                parts.pop(0)
                at_start = False if parts else at_start
            if at_start and len(parts) > 1 and _OPENING_VERB.match(parts[0]):
                parts, at_start = parts[1:], False  # "Let Brightwater know": the name is Brightwater
            titled = [k for k, p in enumerate(parts) if p.lower().rstrip(".") in _TITLE_WORDS]
            if titled:  # "See Dr. Lisa Park": the name is what follows the title
                parts, at_start = parts[titled[-1] + 1 :], False
            parts = [p for p in parts if p.lower() not in _MONTHS and p.lower().removesuffix("s") not in _WEEKDAYS]
            parts = [p for p in parts if not _LETTER_COMPOUND.match(p)]  # "X-ray", "T-shirt", "U-turn": common nouns
            if not parts:
                continue
            if at_start and len(parts) < 2:
                continue  # a single capitalised word opening a sentence is usually just the first word
            if all(p.lower() in STOPWORDS for p in parts):
                continue
            found.append(" ".join(parts))
    return found


def negated(text: str) -> bool:
    """Whether ``text`` contains a negation cue (not, n't, no, never, nobody, without ...)."""
    toks = words(text)
    return any(t in _NEGATION or t.endswith("n't") for t in toks)


@functools.lru_cache(maxsize=64)
def _word_set(text: str) -> frozenset[str]:
    return frozenset(words(text))


@functools.lru_cache(maxsize=64)
def _ordered_words(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(words(text)))


def lexical_support(claim: str, source: str) -> float:
    """Share of the claim's content words found in the source (1.0 for a claim without content words)."""
    claim_words = content_words(claim)
    if not claim_words:
        return 1.0
    vocabulary = _word_set(source)
    return sum(1 for w in claim_words if stem_match(w, vocabulary)) / len(claim_words)


def check_claim(claim: str, evidence: str, source: str | None = None, given: str = "") -> list[Mismatch]:
    """The explicit checks of ``claim`` against its ``evidence`` (the best supporting span or spans).

    ``source``: the whole source (default: the evidence); names are looked up there, since a name is often
    introduced in one sentence and referred to in the next. ``given``: what the user wrote (a question, a
    conversation's history): its names are known, and a figure worked out from one of its figures is shown
    arithmetic. Remembered for recent arguments: a claim's checks decide how much of its source the model reads,
    and then its score.
    """
    return list(_check_claim(claim, evidence, source, given))


@functools.lru_cache(maxsize=512)
def _check_claim(claim: str, evidence: str, source: str | None, given: str = "") -> tuple[Mismatch, ...]:
    source = evidence if source is None else source
    found: list[Mismatch] = []
    # the evidence is read liberally ("one" is 1), the claim strictly: a missed number in the claim costs a
    # check, a missed number in the evidence a false alarm. The evidence and the source are shared by every
    # claim of an output, so their parses are memoised.
    from nlgeval_runtime.attribution import misattributions
    from nlgeval_runtime.quantities import conflicts, swapped_values

    for quantity, rival in conflicts(claim, evidence, source, given):
        if source != evidence and _stated_elsewhere(quantity, claim, source, rival):
            continue  # aligned with the wrong paragraph: another sentence about the same thing states it
        if any(quantity.text in m.span for m in found):
            continue  # the second end of a range already named with the whole range ("$7.2-7.3 million")
        kind = "date" if quantity.kind == "date" else "year" if quantity.kind == "year" else "number"
        found.append(Mismatch(kind, quantity.text, rival.text))
    claim_numbers = numbers(claim)
    claim_words = words(claim)
    evidence_words = _ordered_words(evidence)  # in reading order: "the source says" names the first one
    source_words = _word_set(source + "\n" + given if given else source)
    source_months = {_MONTHS[w] for w in source_words if w in _MONTHS}
    # "01/2022 to 06/2023": months written as numbers of a year
    source_months |= {_MONTH_SPELLINGS[int(month) - 1][0] for month, _ in _NUMERIC_MONTH_YEAR.findall(source)}
    dated = {n.unit for n in claim_numbers if n.kind == "date"}
    for month in dict.fromkeys(w for w in claim_words if w in _MONTHS and len(w) > 3):
        if month in source_words or _MONTHS[month] in source_months:
            continue
        if _MONTHS[month] in dated:
            continue  # already reported with its day
        said = [w for w in evidence_words if w in _MONTHS and len(w) > 3]
        said += [str(n.unit) for n in numbers(evidence) if n.kind == "date"]  # "19 May": "may" is a date there
        if said:  # the evidence dates it otherwise; a month the source never mentions is left to the head
            found.append(Mismatch("month", month.capitalize(), said[0].capitalize()))
    weekdays = [] if negated(claim) or re.search(r"(?i)(day)\s*(?:to|-|–|through)\s*\w+day", source) else claim_words
    for day in dict.fromkeys(w.removesuffix("s") for w in weekdays if w.removesuffix("s") in _WEEKDAYS):
        if day not in source_words and day + "s" not in source_words:  # "Thursday" for "meets Thursdays"
            said = [w for w in evidence_words if w in _WEEKDAYS]
            if said:
                found.append(Mismatch("weekday", day.capitalize(), said[0].capitalize()))
    source_aliases = _aliases_in(source)
    for name in dict.fromkeys(names(claim)):
        if _alias_key(name) in source_aliases:
            continue  # "US" for "the United States", "the EU" for "the European Union"
        if _acronym_of(name, source):
            continue  # "EEA" for "the European Economic Area"
        parts = [p for p in name.split() if not _PERIOD_LABEL.match(p) and not _acronym_of(p, source)]
        missing = [
            p
            for p in words(" ".join(parts))
            if p not in STOPWORDS
            and not stem_match(p, source_words)
            and not {p + "s", p + "'s", p + "’s"} & source_words  # SUV, SUVs; Hill, Hill's
        ]
        altered = _name_variant(name, source)  # "Waypoint Mutual Assurance": the source says Meridian ...
        if missing or altered is not None:
            found.append(Mismatch("name", name, altered))
    found.extend(_role_swaps(claim, source))
    found.extend(_party_swaps(claim, evidence, source))
    found.extend(Mismatch("attribution", span, said) for span, said in misattributions(claim, source))
    for first, second in swapped_values(claim, evidence):
        found.append(
            Mismatch("swap", f"{first.text} ... {second.text}", f"{second.text} ... {first.text}, the other way round")
        )
    found.extend(_day_states(claim, evidence))
    negation = _negation_flip(claim, evidence)
    if negation is not None:
        found.append(negation)
    return tuple(found)


_SKIP_AFTER_CUE = STOPWORDS | {"one", "longer", "more", "need", "needs", "needed", "get", "got", "be", "been"}


def _negated_predicates(text: str, cues: Collection[str] = _NEGATION) -> set[str]:
    """The first content word after each negation cue: what is negated ("did not approve" -> approve)."""
    toks = words(text)
    out = set()
    for k, t in enumerate(toks):
        if t in cues or t.endswith("n't"):
            for nxt in toks[k + 1 : k + 5]:
                if nxt not in _SKIP_AFTER_CUE and nxt not in _NEGATION:
                    out.add(nxt)
                    break
    return out


def _negation_flip(claim: str, evidence: str) -> Mismatch | None:
    """A claim that negates what the clause of its evidence about the same thing asserts, or the reverse.

    The negated word (the first content word after "not", "never", "no" ...) must appear, by stem, in that
    clause with the opposite polarity: "did not approve" against "approved". A paraphrase that negates in
    other words ("free" for "does not pay") shares no such word and is left to the head.
    """
    from nlgeval_runtime.sentences import split_sentences

    from nlgeval_runtime.claims import _clauses

    # what the claim is about, without its modals ("may also be used" is about using) and figures ("over 32 kg
    # can't be checked in" is not about "two checked bags of up to 32 kg")
    modals = _MODALS if re.search(r"\bmay\b", claim) else _MODALS - {"may"}  # "in May" is a month
    claim_content = {
        w for w in content_words(claim) if w not in _NEGATION and w not in modals and not _FIGURE_WORD.match(w)
    }
    if len(claim_content) < 2:
        return None
    if set(words(claim)) & _CONDITIONS:
        return None  # "not final until the board votes": a condition, which the head reads
    best, best_overlap = None, 0.0
    for sentence in split_sentences(evidence) or [evidence]:  # a list's items are sentences of their own
        for clause in _clauses(sentence):
            theirs = set(content_words(clause))
            shared = sum(1 for w in claim_content if _inflected(w, theirs))
            if shared / len(claim_content) > best_overlap:
                best, best_overlap = clause, shared / len(claim_content)
    if best is None or best_overlap < 0.65:
        return None
    # in the claim only a verb's negation ("not", "n't", "never") says what is negated: "no outage now", "no single
    # item over $500" quantify, and the head reads them
    claim_negated, best_negated = _negated_predicates(claim, ("not", "never", "cannot")), _negated_predicates(best)
    best_words, claim_words = set(words(best)), set(words(claim))
    # a statement the evidence makes with the opposite word ("rejected" against "approved", "optional" against
    # "mandatory"), neither side negated, the claim's word absent from the clause and the clause's from the claim
    for word in claim_words - claim_negated:
        opposite = _ANTONYM_BASES.get(_base(word))
        if not opposite or _inflected(word, best_words) or negated(claim) or negated(best):
            continue
        said = [w for w in words(best) if _base(w) in opposite and not _inflected(w, claim_words)]
        if said:
            return Mismatch("contradiction", word, f"the source says {said[0]}: {best.strip()!r}")
    for word in claim_negated:
        if _ANTONYMS.get(word, frozenset()) & best_words:
            continue  # "won't be open on 1 January" against "closed on 1 January, open on other days"
        if word not in best_negated and _inflected(word, best_words) and _asserted(word, best):
            # the source clause may negate something else ("funded by a grant, not by local taxes"): what
            # matters is that the word the claim negates is asserted there
            return Mismatch("negation", _cue(claim) + " " + word, f"the source asserts it: {best.strip()!r}")
    claim_tokens = words(claim)
    # a contrast ("at school rather than at the surgery"), a negation of its own or advice ("should be sent for
    # testing") in the claim: none of the source's negations is flipped
    if (
        re.search(r"(?i)\b(?:rather than|instead of|other than|except|apart from)\b", claim)
        or negated(claim)
        or _ADVICE.search(claim)
    ):
        return None
    for word in best_negated:
        stopped = any(
            t in _NEGATING_VERBS and any(_inflected(word, {n}) for n in claim_tokens[k + 1 : k + 4])
            for k, t in enumerate(claim_tokens)
        )  # "stop ball throwing" says what "NO ball throwing" says
        if word not in claim_negated and _inflected(word, claim_words) and not stopped:
            return Mismatch("negation", claim.strip(), f"the source negates it: {best.strip()!r}")
    return None


_CONDITIONS = frozenset("until unless if only except before after without".split())
_FIGURE_WORD = re.compile(r"^(?:\d[\d.,]*\w*|kg|g|mg|km|cm|mm|m|lb|lbs|oz|ml|l|gb|mb|tb|kwh|mph|percent)$")
#: verbs that negate what follows them: "stop ball throwing", "avoid lifting"
_NEGATING_VERBS = frozenset(
    "stop stopped avoid avoided avoiding prevent refrain ban banned forbid prohibit non".split()
)
#: a claim that recommends ("should be sent for testing") says nothing of what was done ("was not tested")
_ADVICE = re.compile(r"(?i)\b(?:should|ought to|recommend\w*|advis\w*|needs? to be)\b")
#: words that deny what follows them as "not" does: "failed to sound" is "did not sound"
_DENYING = frozenset("fail fails failed failing unable refuse refuses refused declined neglected".split())
_MODALS = frozenset("may might can could must shall should will would also still already even".split())


@functools.lru_cache(maxsize=4096)
def _base(word: str) -> str:
    """A word without its inflection: "used", "uses", "using" -> "us"; "crossing" -> "cross"; "carries" -> "carry"."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    for suffix in ("ing", "ed", "en", "es", "s", "e"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 2 and not (suffix == "s" and word.endswith("ss")):
            word = word[: -len(suffix)]
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "sl":
        word = word[:-1]  # "running" -> "run", "stopped" -> "stop"
    return word


def _inflected(word: str, vocabulary: Collection[str]) -> bool:
    """Whether ``word`` is in ``vocabulary`` by stem (:func:`stem_match`) or by inflection ("use" and "used")."""
    return stem_match(word, vocabulary) or any(_base(v) == _base(word) for v in vocabulary)


_ANTONYM_PAIRS = (
    ("open", "closed"), ("open", "shut"), ("allowed", "banned"), ("allowed", "prohibited"), ("allowed", "forbidden"),
    ("included", "excluded"), ("available", "unavailable"), ("accepted", "refused"), ("accepted", "rejected"),
    ("passed", "failed"), ("won", "lost"), ("approved", "rejected"), ("covered", "excluded"), ("free", "charged"),
    ("possible", "impossible"), ("valid", "invalid"), ("legal", "illegal"), ("increase", "decrease"),
    ("rose", "fell"), ("increased", "decreased"), ("raised", "lowered"), ("higher", "lower"), ("mandatory", "optional"),
    ("required", "optional"), ("permitted", "prohibited"), ("permitted", "banned"), ("accepted", "declined"),
    ("approved", "refused"), ("approved", "denied"), ("granted", "denied"), ("guilty", "innocent"),
    ("gained", "lost"), ("profit", "loss"), ("indoors", "outdoors"), ("indoor", "outdoor"), ("inside", "outside"),
    ("minimum", "maximum"), ("eligible", "ineligible"), ("earlier", "later"),
)  # fmt: skip
_ANTONYMS: dict[str, frozenset[str]] = {}  # by word ("won't be open" against "closed")
_ANTONYM_BASES: dict[str, frozenset[str]] = {}  # by inflection ("rejected", "rejects" against "approved")
for _pair in _ANTONYM_PAIRS:
    for _a, _b in (_pair, _pair[::-1]):
        _ANTONYMS[_a] = _ANTONYMS.get(_a, frozenset()) | {_b}
        _ANTONYM_BASES[_base(_a)] = _ANTONYM_BASES.get(_base(_a), frozenset()) | {_base(_b)}


def _asserted(word: str, clause: str) -> bool:
    """Whether ``word`` (by stem) occurs in ``clause`` with no negation cue among the four words before it.
    A part of a hyphenated compound is not asserted on its own: "pay-and-display bays" asserts no paying; a clause
    that opens with "No", "None", "Nobody" or "Neither" asserts nothing it says ("No orders or payments were
    affected")."""
    toks = words(re.sub(r"\b[\w']+(?:-[\w']+)+\b", " ", clause))
    if toks[:1] and toks[0] in {"no", "none", "nobody", "nothing", "neither", "never"}:
        return False
    seen = False
    for k, t in enumerate(toks):
        if stem_match(word, {t}) or stem_match(t, {word}):
            seen = True
            near = toks[max(0, k - 4) : k] + toks[k + 1 : k + 4]  # "not repaired", "a repair is not possible"
            if any(b in _NEGATION or b in _DENYING or b.endswith("n't") for b in near):
                return False
    return seen


#: the usual short forms of names a summary uses for the long ones of its source, in both directions
_ALIAS_GROUPS = (
    ("us", "usa", "united states", "united states of america", "america"),
    ("uk", "united kingdom", "britain", "great britain"),
    ("eu", "european union"),
    ("un", "united nations"),
    ("uae", "united arab emirates"),
    ("nhs", "national health service"),
    ("who", "world health organization", "world health organisation"),
    ("imf", "international monetary fund"),
    ("nato", "north atlantic treaty organization", "north atlantic treaty organisation"),
    ("fbi", "federal bureau of investigation"),
    ("nasa", "national aeronautics and space administration"),
    ("ecb", "european central bank"),
    ("fed", "federal reserve"),
)
_ALIAS_OF = {form: group[0] for group in _ALIAS_GROUPS for form in group}
_ALIAS_SCAN = re.compile(
    r"\b(" + "|".join(sorted((re.escape(f) for f in _ALIAS_OF), key=len, reverse=True)) + r")\b", re.I
)


def _alias_key(name: str) -> str | None:
    """The alias group of a name ("U.S." and "the United States" -> "us"), or None."""
    text = re.sub(r"(?<=\b[A-Za-z])\.", "", name).strip().lower()  # U.S. -> us
    text = re.sub(r"^the\s+|['’]s$", "", text)
    return _ALIAS_OF.get(text)


@functools.lru_cache(maxsize=64)
def _aliases_in(text: str) -> frozenset[str]:
    """The alias groups a text names: "U.S." and "United States" both give "us"; "us" the pronoun does not."""
    flat = re.sub(r"(?<=\b[A-Za-z])\.(?=[A-Za-z]\b|\s|$)", "", text)
    found = set()
    for m in _ALIAS_SCAN.finditer(flat):
        form = m.group(1)
        if len(form) <= 3 and not form.isupper() and form != "Fed":
            continue  # the pronoun "us", the question word "who": short forms count in capitals only
        found.add(_ALIAS_OF[form.lower()])
    return frozenset(found)


#: titles that say what role a person has; a claim that gives a source's person another source role is wrong
_TITLES = (
    "mayor", "deputy mayor", "councillor", "councilor", "council member", "president", "vice president",
    "prime minister", "minister", "chancellor", "governor", "senator", "chief executive", "ceo", "chairman",
    "chairwoman", "chair", "director", "founder", "spokesman", "spokeswoman", "spokesperson", "judge",
    "prosecutor", "coach", "manager", "captain", "secretary", "treasurer", "professor", "headteacher",
    "principal", "sheriff", "commissioner", "inspector", "chief", "editor", "owner", "landlord", "tenant",
    "buyer", "seller", "leader", "opposition leader", "king", "queen", "ambassador", "general", "officer",
    "champion", "defending champion", "winner", "runner-up", "analyst", "researcher", "lead researcher", "expert",
    "economist", "chief economist", "lawyer", "doctor", "surgeon", "nurse", "teacher", "architect", "engineer",
    "scientist", "author", "head coach", "goalkeeper", "striker", "race director", "finance director",
    "chief financial officer", "cfo", "chief operating officer", "coo", "regulator", "auditor", "mediator",
    "witness", "victim", "suspect", "defendant", "plaintiff", "candidate", "challenger", "incumbent",
)  # fmt: skip
_TITLE = "(?i:" + "|".join(sorted((re.escape(t) for t in _TITLES), key=len, reverse=True)) + ")"
_CAP = r"[A-Z][\w'’-]+"
_ROLE_PATTERNS = (
    # "Mayor Anna Berg", "the opposition councillor Tom Weiss"
    re.compile(rf"\b(?P<title>{_TITLE})\s+(?:{_CAP}\s+){{0,2}}(?P<name>{_CAP})"),
    # "The defending champion, Callum Reid", "its chief executive, Dana Holt"
    re.compile(rf"\b(?P<title>{_TITLE}),\s+(?:{_CAP}\s+){{0,2}}(?P<name>{_CAP})\b"),
    # "Tom Weiss, the opposition councillor", "Anna Berg, mayor of Lindau"
    re.compile(rf"(?P<name>{_CAP}),\s+(?:the\s+|a\s+|an\s+)?(?:[\w'’-]+\s+){{0,2}}?(?P<title>{_TITLE})\b"),
    # "Tom Weiss is the mayor", "Weiss, who became mayor", "Weiss was elected president"
    re.compile(
        rf"(?P<name>{_CAP}),?\s+(?:who\s+)?(?:is|was|became|has been|had been|serves as|served as|"
        rf"was elected|is now|as)\s+(?:the\s+|a\s+|an\s+)?(?:[\w'’-]+\s+){{0,2}}?(?P<title>{_TITLE})\b"
    ),
)


_SAME_TITLE = {
    "councilor": "councillor", "council member": "councillor", "ceo": "chief executive", "chairwoman": "chairman",
    "chair": "chairman", "spokeswoman": "spokesman", "spokesperson": "spokesman",
}  # fmt: skip


def _title_key(title: str) -> str:
    t = title.lower()
    return _SAME_TITLE.get(t, t)


@functools.lru_cache(maxsize=64)
def roles(text: str) -> dict[str, frozenset[str]]:
    """Surname (lower-cased) -> the titles ``text`` gives that person.

    >>> sorted(roles("Mayor Anna Berg met Tom Weiss, the opposition councillor.").items())
    [('berg', frozenset({'mayor'})), ('weiss', frozenset({'councillor'}))]
    """
    out: dict[str, set[str]] = {}
    for pattern in _ROLE_PATTERNS:
        for m in pattern.finditer(text):
            name = m.group("name")
            if name.lower() in _NOT_NAMES or name.lower() in _TITLES or not name[0].isupper():
                continue
            title = m.group("title")
            out.setdefault(name.lower(), set()).add(_title_key(title))
    return {k: frozenset(v) for k, v in out.items()}


def _same_role(title: str, said: frozenset[str]) -> bool:
    """Whether ``title`` is one of ``said`` or part of one ("director" of "race director")."""
    return any(title == t or title in t.split() or t in title.split() for t in said)


def _role_swaps(claim: str, source: str) -> list[Mismatch]:
    """A person of the source given a role that the source gives someone else and never them."""
    found = []
    source_roles = roles(source)
    holders: dict[str, set[str]] = {}
    for person, titles in source_roles.items():
        for title in titles:
            holders.setdefault(title, set()).add(person)
    for person, titles in roles(claim).items():
        said = source_roles.get(person)
        if not said:
            continue
        for title in titles - said:
            # the source gives this role to someone else (a person may hold several roles: "lead researcher"
            # and "professor" can both be true, so a role the source is silent about is left to the head)
            if not _same_role(title, said) and holders.get(title, set()) - {person}:
                shown = person.capitalize()
                found.append(Mismatch("role", f"{title} {shown}", f"{shown} is the {' and '.join(sorted(said))}"))
                break
    return found


#: the parties of a contract, a policy, a service or a consultation: a claim that gives one party's duty or right
#: to the other ("the landlord must report a leak" where the tenant must) is wrong whatever words it shares
_PARTIES = frozenset(
    """landlord tenant lessor lessee buyer seller purchaser vendor insurer policyholder customer company employer
    employee patient doctor lender borrower provider supplier contractor client driver passenger guest host
    student teacher sender recipient manufacturer retailer dealer applicant subscriber licensee licensor carrier
    shipper merchant cardholder pharmacist""".split()
)
#: words between two parties that make the second the agent or turn the relation round ("is paid by", "rents
#: from", "more than"), or join the two ("the landlord and the tenant")
_CONVERSE = re.compile(
    r"\b(?:by|from|to be|receives?|received|gets?|got|buys?|bought|rents?|rented|borrows?|borrowed|owe[sd]?|than|"
    r"as|with|and|or|nor|both|either|between)\b",
    re.I,
)
_BEFORE_AGENT = frozenset("to from by with of against on at in into than as".split())
_PARTY_CLAUSE = re.compile(r";|,\s+(?:while|whereas|but|and|except|unless)\s+|\.\s")


def _parties(text: str) -> tuple[list[str], list[tuple[int, str]]]:
    toks = re.findall(r"[A-Za-z][\w'’-]*", text)
    return toks, [(k, p) for k, t in enumerate(toks) if (p := re.sub(r"['’]s$", "", t.lower())) in _PARTIES]


#: a state something has on a day, and its opposite: "open on Mondays" against "closed on Mondays"
_DAY_STATES = {"open": "closed", "closed": "open", "staffed": "unstaffed", "available": "unavailable"}
_SEASONS = frozenset("winter summer spring autumn fall holiday holidays season term school".split())


def _day_states(claim: str, evidence: str) -> list[Mismatch]:
    """A claim that gives a weekday the opposite state of the one the evidence gives it, near the day in both
    ("the museum is open on Mondays" against "... and is closed on Mondays"), where the evidence's sentence holds
    every season or month the claim names and the claim negates nothing: otherwise the head reads it."""
    if negated(claim):
        return []
    toks = words(claim)
    months = {w for w in toks if w in _MONTHS and len(w) > 3} | (set(toks) & _SEASONS)
    for k, t in enumerate(toks):
        day = t.removesuffix("s")
        if day not in _WEEKDAYS:
            continue
        near = toks[max(0, k - 4) : k]
        state = next((w for w in reversed(near) if w in _DAY_STATES), None)
        if state is None:
            continue
        for sentence in _flat_sentences(evidence):
            theirs = words(sentence)
            if months - set(theirs):
                continue  # another season or month than the claim's
            for j, w in enumerate(theirs):
                if w.removesuffix("s") != day:
                    continue
                said = theirs[max(0, j - 4) : j]
                if _DAY_STATES[state] in said and state not in said and not any(n in _NEGATION for n in said):
                    said_instead = f"the source says {_DAY_STATES[state]}: {sentence!r}"
                    return [Mismatch("contradiction", f"{state} on {t.capitalize()}", said_instead)]
    return []


@functools.lru_cache(maxsize=32)
def _flat_sentences(text: str) -> tuple[str, ...]:
    """The sentences of ``text``, each once and on one line (an output's claims share their source)."""
    return tuple(dict.fromkeys(" ".join(s.split()) for s in split_sentences(text)))


def _party_swaps(claim: str, evidence: str, source: str) -> list[Mismatch]:
    """A duty or a right of one party of the source given to the other, where the evidence says it plainly:

    - the claim names two parties and a clause of the evidence holds them the other way round with the same
      relation between them ("the landlord must tell the tenant" against "Tenant must report any leak to
      Landlord"), neither side turned by a passive or a converse verb;
    - the claim names one party as the doer, and the evidence clause that holds nearly all its other content
      words (seven in ten, by stem) has another party as its subject and not this one ("the landlord may end the
      lease by giving 60 days' notice" against "Tenant may end this lease ... by giving 60 days' written notice").

    Parties are the nouns of :data:`_PARTIES` that the source uses; a clause with more parties, or none, is left
    to the head."""
    toks, mine = _parties(claim)
    kinds = list(dict.fromkeys(p for _, p in mine))
    lowered = source.lower()
    if not kinds or any(p not in lowered for p in kinds):
        return []
    # the evidence's sentences as the source writes them (the evidence joins its aligned units, whose sentences a
    # hard-wrapped source would otherwise run together), each once, on one line
    flat = " ".join(evidence.split())
    sentences = [s for s in _flat_sentences(source) if s in flat] or list(_flat_sentences(evidence))
    clauses = [c for s in sentences or [flat] for c in _PARTY_CLAUSE.split(s) if c.strip()]
    if len(mine) == 2 and len(kinds) == 2:
        (i, a), (j, b) = mine
        between = toks[i + 1 : j]
        relation = {w.lower() for w in between if w.lower() not in STOPWORDS and len(w) > 2}
        if relation and not _CONVERSE.search(" ".join(between)):
            claim_words = set(content_words(claim))
            for clause in clauses:
                theirs, held = _parties(clause)
                if [p for _, p in held] != [b, a]:
                    continue
                said = {w.lower() for w in theirs[held[0][0] + 1 : held[1][0]]}
                if _CONVERSE.search(" ".join(theirs[held[0][0] + 1 : held[1][0]])) or not any(
                    stem_match(r, said) for r in relation
                ):
                    continue
                clause_words = set(words(clause))
                if sum(1 for w in claim_words if stem_match(w, clause_words)) * 2 >= len(claim_words):
                    return [Mismatch("party", f"the {a} ... the {b}", f"the source has it the other way round: "
                                     f"{clause.strip()!r}")]  # fmt: skip
        return []
    if len(kinds) != 1:
        return []
    at, party = mine[0]
    before = [t.lower() for t in toks[max(0, at - 2) : at]]
    if any(t in _BEFORE_AGENT for t in before):
        return []  # "paid to the tenant": not the doer ("for the landlord to replace" is)
    rest = {w for w in content_words(claim) if w not in _PARTIES}
    if len(rest) < 3:
        return []
    best, overlap = None, 0.0
    for clause in clauses:
        vocabulary = set(words(clause))
        share = sum(1 for w in rest if stem_match(w, vocabulary)) / len(rest)
        if share > overlap:
            best, overlap = clause, share
    if best is None or overlap < 0.7:
        return []
    theirs, held = _parties(best)
    if len({p for _, p in held}) != 1 or held[0][1] == party:
        return []
    if held[0][0] > 3 or any(t.lower() in _BEFORE_AGENT for t in theirs[: held[0][0]]):
        return []  # the other party is no subject there ("returned to the tenant")
    return [Mismatch("party", f"the {party}", f"the source gives this to the {held[0][1]}: {best.strip()!r}")]


@functools.lru_cache(maxsize=64)
def _initials(text: str) -> frozenset[str]:
    """The initials of the capitalised phrases of ``text`` ("European Economic Area" -> "eea"; "of", "and",
    "the", "for" inside a phrase are skipped, as acronyms skip them)."""
    out = set()
    for m in re.finditer(r"[A-Z][\w'’-]*(?:\s+(?:of|and|for|the|&)?\s*[A-Z][\w'’-]*)+", text):
        parts = [p for p in m.group(0).split() if p[0].isupper()]
        for start in range(len(parts) - 1):  # "the European Economic Area" and "Economic Area" alike
            out.add("".join(p[0] for p in parts[start:]).lower())
    return frozenset(out)


def _acronym_of(name: str, source: str) -> bool:
    """Whether ``name`` is an acronym (2-6 capitals) of a capitalised phrase of ``source``, or of a run of its
    words in any case ("EPS" for "earnings per share", "TA" for "teaching assistant")."""
    bare = re.sub(r"['’]s$", "", name.replace(".", "").strip())
    if not (2 <= len(bare) <= 6 and bare.isupper() and bare.isalpha()):
        return False
    return bare.lower() in _initials(source) or bare.lower() in _run_initials(source, len(bare))


@functools.lru_cache(maxsize=256)
def _run_initials(source: str, n: int) -> frozenset[str]:
    """The initials of every run of ``n`` consecutive words of ``source`` that opens and closes with a content
    word ("earnings per share", not "the agreement")."""
    found = re.findall(r"[^\W\d_][\w'’-]*", source.lower())
    return frozenset(
        "".join(w[0] for w in found[k : k + n])
        for k in range(len(found) - n + 1)
        if found[k] not in STOPWORDS and found[k + n - 1] not in STOPWORDS
    )


@functools.lru_cache(maxsize=64)
def _source_names(source: str) -> tuple[tuple[tuple[str, ...], ...], frozenset[str]]:
    """The names of ``source`` of two or more words (as word tuples), and the words it writes as a name on
    their own inside a sentence ("..., Crestline at $79,500"; not "2. Connect the modem")."""
    multiword = tuple(dict.fromkeys(tuple(n.split()) for n in names(source) if len(n.split()) >= 2))
    alone = re.findall(r"(?<=[a-z,;])\s+([A-Z][\w'’-]+)(?![\w'’-])(?!\s+[A-Z])", source)  # linear: no backtracking
    return multiword, frozenset(re.sub(r"['’]s$", "", w).lower() for w in alone)


def _in_order(few: Sequence[str], many: Sequence[str]) -> bool:
    """Whether every word of ``few`` occurs in ``many``, in the same order."""
    it = iter(many)
    return all(any(w == m for m in it) for w in few)


def _name_variant(name: str, source: str) -> str | None:
    """The source's name that ``name`` alters in one word ("Alder Street Properties" for "Corbin Street
    Properties LLC", "Corvid Connect" for "Corvid Home"), when the source never writes ``name`` itself; None when
    it does, or when the altered word is a name the source writes alone ("Crestline Roofing" where the source
    has "Crestline" and "Halden Roofing") or a short form of the other ("Dan" for "Dana")."""
    source = _QUOTED_WORD.sub(r"\1", source)  # "Little Fern 'Sprout'" writes Little Fern Sprout
    parts = tuple(p.lower().replace("’", "'").replace("–", "-") for p in name.split())
    if len(parts) < 2 or parts[0] in _TITLE_WORDS or parts[0] in _TITLES:
        return None  # "Coach Smith", "Professor Schmidt": a title and a surname
    flat = re.sub(r"['’]s\b", "", " ".join(re.findall(r"[\w'’.–-]+", source.lower())))
    flat = flat.replace("’", "'").replace("–", "-")
    if re.search(r"(?<![\w-])" + r"\s+".join(map(re.escape, parts)) + r"(?![\w-])", flat):
        return None
    multiword, alone = _source_names(source)
    n = len(parts)
    for other in multiword:
        words_of = [w.lower().replace("’", "'").replace("–", "-") for w in other]
        if _in_order(parts, words_of):
            return None  # a shortened form of a source name: "Galaxy Ultra" of "Samsung Galaxy S24 Ultra"
        for start in range(len(other) - n + 1):  # "Meridian Mutual Assurance" inside "... Assurance Ltd"
            written = other[start : start + n]
            theirs = tuple(w.lower() for w in written)
            diff = [k for k in range(n) if parts[k] != theirs[k]]
            if len(diff) != 1:
                continue
            mine, said = parts[diff[0]], theirs[diff[0]]
            if (
                mine in STOPWORDS
                or said in STOPWORDS
                or mine in alone
                or mine.startswith(said)
                or said.startswith(mine)
            ):
                continue
            if any(ch.isdigit() for ch in mine):
                continue  # "Incident INC-2291" where the source heads "Incident Postmortem: INC-2291": an identifier
            return " ".join(written)
    return None


#: Period labels that are no names: quarters, halves and fiscal years ("Q4 2024", "H1", "FY2025").
_PERIOD_LABEL = re.compile(r"^(?:Q[1-4]|H[12]|FY(?:\d{2}|\d{4})?)$")


def _stated_elsewhere(quantity, claim: str, source: str, rival=None) -> bool:
    """Whether a sentence of the source states the quantity (value and kind) and is about what the claim is
    about (shares two of its content words, or half of them when it has fewer than four), and not far less than
    the sentence that states the ``rival`` figure (three shared words fewer): "a young-driver fee of €15 a day"
    is about the young-driver fee of EUR 12, not about the refuelling fee of EUR 15."""
    from nlgeval_runtime.quantities import quantities, same_quantity
    from nlgeval_runtime.sentences import split_sentences

    from nlgeval_runtime.quantities import LONG_SOURCE

    claim_content = {w for w in content_words(claim) if not w[0].isdigit()}
    if not claim_content or len(source) > LONG_SOURCE:
        return False  # a long source is read where the claim aligns (bounded cost)
    need = 2 if len(claim_content) >= 4 else max(1, len(claim_content) // 2)
    if quantity.kind in ("duration", "length", "mass", "volume", "money", "percent", "time"):
        need = 1  # a measure with its unit is specific: one shared word says the sentence is about the same thing
    sentences = split_sentences(source) or [source]
    # far less about the claim than the rival's sentence (by three words), and not beside it: a coincidence
    at_rival: dict[int, int] = {}
    if rival is not None:
        for k, sentence in enumerate(sentences):
            if any(q.kind == rival.kind and q.text == rival.text for q in quantities(sentence)):
                at_rival[k] = sum(1 for w in claim_content if stem_match(w, set(words(sentence))))
    # the things the claim gives this figure to ("Vertex Lift bid $189,000, while Apex bid $212,000"): a sentence
    # that states the figure of another of them, beside the one that gives this thing the rival figure, is no
    # evidence for the claim ("Vertex Lift quoted $212,000. Apex Elevator quoted $189,000.")
    owners = _owners(quantity, claim, source) if at_rival else frozenset()
    owned = {k for k in at_rival if _names_any(owners, sentences[k])}
    for k, sentence in enumerate(sentences):
        if (
            owned
            and not _names_any(owners, sentence)
            and _mentioned(sentence, source)  # it names another thing ("Apex Elevator quoted $189,000")
            and not (_REFERS_BACK.match(sentence) and k - 1 >= 0 and _names_any(owners, sentences[k - 1]))
        ):
            continue
        beside = k - 1 in at_rival or k + 1 in at_rival  # "99.9% uptime. If it falls below that level, 10%"
        need_here = need if beside or not at_rival else max(need, max(at_rival.values()) - 2)
        # a bound states its own figure ("at least 3 minutes"), not every one it holds ("below 2,000 mg": 60 mg)
        stated = [
            q
            for q in quantities(sentence)
            if q.low > 0 and q.high != math.inf or math.isclose(q.value, quantity.value, rel_tol=1e-6)
        ]
        if not any(q.kind == quantity.kind and same_quantity(quantity, q) for q in stated):
            continue
        sentence_words = set(words(sentence))
        if sum(1 for w in claim_content if stem_match(w, sentence_words)) >= need_here:
            return True
    return False


_REFERS_BACK = re.compile(r"\s*(?:it|its|this|that|they|their|he|she|his|her)\b", re.I)


def _owners(quantity, claim: str, source: str) -> frozenset[str]:
    """The names the claim gives ``quantity`` to: those of its clause (up to the next "while", "whereas", "but",
    "and", comma or semicolon) that the source mentions."""
    from nlgeval_runtime.quantities import own_clause

    at = claim.find(quantity.text)
    return _mentioned(own_clause(claim, at, at + len(quantity.text)), source) if at >= 0 else frozenset()


def _mentioned(clause: str, source: str) -> frozenset[str]:
    found = [n for n in names(clause) if n.lower() not in _NOT_NAMES]
    # a capitalised word opening the claim is a name where the source writes it so inside a sentence ("Starter
    # costs $29" of "The Starter plan costs $12")
    first = re.match(r"\s*([A-Z][\w'’-]+)", clause)
    if (
        first
        and first.group(1).lower() not in _NOT_NAMES
        and re.search(r"[a-z,;]\s+" + re.escape(first.group(1)) + r"\b", source)
    ):
        found.append(first.group(1))
    return frozenset(n for n in found if _names_any(frozenset({n}), source))


@functools.lru_cache(maxsize=256)
def _word_text(text: str) -> str:
    """``text``'s words, lower-cased and joined by single spaces (a claim's sentences share their source)."""
    return " ".join(words(text))


def _names_any(owners: frozenset[str], text: str) -> bool:
    """Whether ``text`` mentions one of the names (a name's words in order; a last name alone will do)."""
    lowered = _word_text(text)
    for name in owners:
        parts = words(name)
        if parts and (" ".join(parts) in lowered or re.search(r"\b" + re.escape(parts[-1]) + r"\b", lowered)):
            return True
    return False


#: the fluency reading of a well-formed sentence falls with its length (0.87 at 14 words; 0.035-0.066 at 31 to 45
#: words for faithful claims, against 0.000-0.001 for the same words shuffled): past this many words the form floor
#: falls with the square of the length, so a long list of doses is no word salad and a shuffled one still is
_FORM_WORDS = 12


def _cue(text: str) -> str:
    for w in re.findall(r"[\w'’]+", text):
        if w.lower() in _NEGATION or w.lower().endswith("n't"):
            return w
    return text.strip()


def _logit(p: float) -> float:
    p = min(max(float(p), 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


@dataclass(frozen=True)
class Verdict:
    """How one claim was judged: the final ``score``, the head's support, the claim's form (fluency), its
    lexical support, and the explicit checks that failed."""

    score: float
    head: float
    form: float
    lexical: float
    mismatches: tuple[Mismatch, ...]

    def as_dict(self) -> dict:
        return {
            "score": self.score,
            "head": self.head,
            "form": self.form,
            "lexical": self.lexical,
            "mismatches": [m.as_dict() for m in self.mismatches],
        }


#: the features the combination reads, in the order of its weights
FEATURES = ("head", "lexical")


@dataclass(frozen=True)
class FactChecks:
    """The combination of a claim's signals into its score, as a model folder declares it (``checks`` in a
    fact dimension's entry of ``nlgeval.json``; fitted by ``nlgeval fact-checks`` on pseudo-labelled
    claims, never on human scores).

    score = sigmoid(intercept + w_head * logit(head) + w_lexical * lexical), and at most ``cap`` when an
    explicit check fails: a number, date or name that the evidence does not contain makes the claim
    unsupported whatever the head says, and so does a claim whose form (the fluency head's score) is below
    ``form_floor``: word salad made of the source's own words is not a statement the source supports.
    """

    intercept: float
    weights: tuple[float, ...]
    cap: float = 0.2
    form_floor: float = 0.1
    version: int = 1

    @classmethod
    def from_spec(cls, spec: dict) -> FactChecks:
        try:
            weights = tuple(float(spec["weights"][name]) for name in FEATURES)
            return cls(
                float(spec["intercept"]),
                weights,
                float(spec.get("cap", 0.2)),
                float(spec.get("form_floor", 0.1)),
                int(spec.get("version", 1)),
            )
        except (KeyError, TypeError, ValueError) as exc:
            from nlgeval_runtime.errors import ModelFormatError

            raise ModelFormatError(
                f"a fact dimension's `checks` must hold intercept, weights {{{', '.join(FEATURES)}}} and cap; "
                f"got {spec!r} ({exc}); rewrite it with `nlgeval fact-checks`"
            ) from None

    @staticmethod
    def features(head: float, lexical: float) -> list[float]:
        return [_logit(head), float(lexical)]

    def combine(self, head: float, lexical: float) -> float:
        z = self.intercept + sum(w * x for w, x in zip(self.weights, self.features(head, lexical)))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))

    def judge(self, claim: str, *, head: float, form: float, evidence: str, source: str, given: str = "") -> Verdict:
        """The claim's verdict; ``given``: what the user wrote (a question), for the explicit checks only (see
        :func:`check_claim`); the lexical support reads the source alone."""
        lexical = lexical_support(claim, source)
        mismatches = list(check_claim(claim, evidence, source, given))
        if form < self.form_floor * min(1.0, _FORM_WORDS / max(1, len(words(claim)))) ** 2:
            mismatches.append(Mismatch("form", claim.strip(), "it does not read as a statement (word salad?)"))
        score = self.combine(head, lexical)
        if mismatches:
            score = min(score, self.cap)
        return Verdict(score, float(head), float(form), lexical, tuple(mismatches))
