"""Claim-support pairs made by rule from real premises: the cases a reader notices first and a bag of words misses.

Human entailment sets hold few pairs where the words stay and the meaning moves. Five kinds are made here from
premises of the kit's entailment and news data, each balanced (as many supported claims as unsupported ones) and
labelled by the rule that made it:

- ``swap``: two named arguments or two figures of one sentence exchanged ("Ana paid Ben" / "Ben paid Ana";
  the two prices of a list). The unswapped sentence, read against a passage that holds it among others, is the
  supported claim. Names joined by "and", "or" or a comma are never swapped (their order carries no role).
- ``negation``: a negation inserted after the sentence's auxiliary or removed from it (unsupported), against
  the same statement in other words (supported): "did not" / "didn't", "no one" / "nobody" / "not a single
  person", "never" / "not ever".
- ``quantity``: a figure restated in words or other units, correctly (supported: "14 days" as "two weeks",
  "50 percent" as "half", "3" as "three") or converted wrongly (unsupported: "three weeks", "a third", "four").
- ``state``: an adjective replaced by its complementary antonym under negation (supported: "open" as "not
  closed") or without it (unsupported: "closed"). Only complementary pairs, where not-A means B, are used.
- ``span``: a claim joining the facts of two sentences of a passage (supported), or one of them with a sentence
  of another passage (unsupported: half supported is not supported).

Held out by premise like the human sets (:func:`nlgeval_training.pseudo.common.is_held_out`), so a premise's
pairs are all trained on or all measured on. The idea of rule-made contrast pairs follows FactCC (Kryscinski
et al., 2020) and the syntactic augmentation of Min et al. (2020); the rules here are this project's own.

    >>> swap_names("Maria Lopez paid Tom Reed for the car.")
    'Tom Reed paid Maria Lopez for the car.'
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Iterator

KINDS = ("swap", "negation", "quantity", "state", "span")

_NAME = re.compile(r"\b(?:[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?)(?:\s+[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?){0,2}\b")
_NOT_NAMES = {
    "The", "A", "An", "He", "She", "It", "They", "We", "I", "You", "This", "That", "These", "Those", "His", "Her",
    "Their", "Our", "My", "Your", "In", "On", "At", "For", "But", "And", "Or", "If", "When", "While", "After",
    "Before", "There", "Here", "As", "So", "Mr", "Mrs", "Ms", "Dr", "January", "February", "March", "April", "May",
    "June", "July", "August", "September", "October", "November", "December", "Monday", "Tuesday", "Wednesday",
    "Thursday", "Friday", "Saturday", "Sunday", "What", "Who", "Why", "How", "Where", "Yes", "No", "Oh", "Well",
}  # fmt: skip
_JOINED = re.compile(r"^\s*(?:,|and|or|&|/|-|,\s*and|,\s*or)\s*$")
_FIGURE = re.compile(r"(?<![\w.,])(\$|£|€)?(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)(\s?%| percent)?(?![\w,]*\d)")

_AUX = re.compile(
    r"\b(is|are|was|were|will|can|could|should|would|has|have|had|must|may|might|does|do|did)\b(?! not\b| n't\b)"
)
_CONTRACT = {
    "is": "isn't", "are": "aren't", "was": "wasn't", "were": "weren't", "will": "won't", "can": "can't",
    "could": "couldn't", "should": "shouldn't", "would": "wouldn't", "has": "hasn't", "have": "haven't",
    "had": "hadn't", "must": "mustn't", "does": "doesn't", "do": "don't", "did": "didn't",
}  # fmt: skip
_NEGATED = re.compile(r"\b(is|are|was|were|will|can|could|should|would|has|have|had|must|does|do|did) not\b")
_NOBODY = [("no one", "nobody"), ("nobody", "not a single person"), ("nothing", "not a single thing")]

_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine", 10: "ten",
          11: "eleven", 12: "twelve", 20: "twenty", 30: "thirty", 40: "forty", 50: "fifty",
          100: "a hundred"}  # fmt: skip
_SHARES = {50: ("half", "a third"), 25: ("a quarter", "a fifth"), 75: ("three quarters", "two thirds"),
           20: ("a fifth", "a quarter"), 10: ("a tenth", "a fifth"), 33: ("a third", "a quarter")}  # fmt: skip
_DURATIONS = [  # (value, unit) -> right restatement, wrong restatement
    ((14, "days"), "two weeks", "three weeks"), ((7, "days"), "a week", "two weeks"),
    ((12, "months"), "a year", "two years"), ((24, "months"), "two years", "a year"),
    ((6, "months"), "half a year", "a year"), ((60, "minutes"), "an hour", "half an hour"),
    ((30, "minutes"), "half an hour", "an hour"), ((48, "hours"), "two days", "one day"),
    ((24, "hours"), "a day", "two days"), ((2, "weeks"), "a fortnight", "a month"),
    ((3, "months"), "a quarter of a year", "half a year"), ((10, "years"), "a decade", "a century"),
]  # fmt: skip

# complementary adjectives: "not A" means B and "not B" means A
_COMPLEMENTS = [
    ("open", "closed"), ("alive", "dead"), ("present", "absent"), ("same", "different"), ("true", "false"),
    ("correct", "incorrect"), ("possible", "impossible"), ("legal", "illegal"), ("available", "unavailable"),
    ("married", "single"), ("empty", "full"), ("visible", "invisible"), ("complete", "incomplete"),
    ("safe", "unsafe"), ("valid", "invalid"), ("awake", "asleep"), ("inside", "outside"), ("public", "private"),
    ("paid", "unpaid"), ("required", "optional"), ("allowed", "forbidden"), ("on", "off"), ("male", "female"),
    ("wet", "dry"), ("guilty", "innocent"), ("accurate", "inaccurate"), ("finished", "unfinished"),
    ("included", "excluded"), ("successful", "unsuccessful"), ("eligible", "ineligible"),
]  # fmt: skip
_COMPLEMENT = {a: b for a, b in _COMPLEMENTS} | {b: a for a, b in _COMPLEMENTS}
_BE_ADJ = re.compile(r"\b(is|are|was|were)\s+(" + "|".join(sorted(_COMPLEMENT, key=len, reverse=True)) + r")\b")

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'])")


def sentences(text: str) -> list[str]:
    """Sentences of ``text`` (a simple split at end punctuation followed by a capital)."""
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _names(sentence: str) -> list[re.Match]:
    """Capitalised spans that may be names. A capitalised word right before a name stays part of its span
    ("Yesterday Priya", "Friday Priya"); a swap then still makes a wrong claim, only a less natural one."""
    found = []
    for m in _NAME.finditer(sentence):
        words = m.group(0).split()
        while words and words[0] in _NOT_NAMES:
            words = words[1:]
        if not words or m.start() == 0 and len(words) == len(m.group(0).split()) and len(words) == 1:
            continue  # a lone capitalised first word is usually not a name
        found.append(m)
    return found


def swap_names(sentence: str) -> str | None:
    """``sentence`` with two names exchanged across the verb between them ("Ana paid Ben" -> "Ben paid Ana"):
    only when one to six lowercase words stand between the names, so coordinated names ("Ana and Ben"),
    names used as modifiers ("an American band") and lists are left alone; None otherwise."""
    names = _names(sentence)
    for i in range(len(names) - 1):
        a, b = names[i], names[i + 1]
        ta, tb = a.group(0), b.group(0)
        between = sentence[a.end() : b.start()]
        words = between.split()
        if ta == tb or ta in tb or tb in ta or not 1 <= len(words) <= 6:
            continue
        if not all(w.isalpha() and w.islower() for w in words) or {"and", "or", "nor"} & set(words):
            continue
        before = sentence[: a.start()].split()[-1:]
        after = sentence[b.end() :].split()[:1]
        if before and before[0].lower() in ("a", "an", "the") or after and after[0][:1].isupper():
            continue
        if words[-1] in ("a", "an", "the", "of"):
            continue  # "the leader of X": the second name is a modifier of the object
        return sentence[: a.start()] + tb + between + ta + sentence[b.end() :]
    return None


def swap_figures(sentence: str) -> str | None:
    """``sentence`` with two different figures of the same form exchanged (not a range "5 to 7", "5-7")."""
    figures = list(_FIGURE.finditer(sentence))
    for i in range(len(figures) - 1):
        a, b = figures[i], figures[i + 1]
        if a.group(0) == b.group(0) or (a.group(1), a.group(3)) != (b.group(1), b.group(3)):
            continue
        between = sentence[a.end() : b.start()]
        if re.fullmatch(r"\s*(?:-|–|to|and|or|,|x|by)\s*", between) or len(between.split()) > 10:
            continue
        return sentence[: a.start()] + b.group(0) + between + a.group(0) + sentence[b.end() :]
    return None


def negate(sentence: str) -> str | None:
    """Insert "not" after the first auxiliary, or remove the first "not"; None when neither applies."""
    m = _NEGATED.search(sentence)
    if m:
        return sentence[: m.end(1)] + sentence[m.end() :]
    m = _AUX.search(sentence)
    if m and m.start() > 0:
        return sentence[: m.end()] + " not" + sentence[m.end() :]
    return None


def restate_negation(sentence: str) -> str | None:
    """The same negative statement in other words: contraction, or "no one" as "nobody"; None if none applies."""
    m = _NEGATED.search(sentence)
    if m:
        return sentence[: m.start()] + _CONTRACT[m.group(1)] + sentence[m.end() :]
    low = sentence.lower()
    for a, b in _NOBODY:
        k = low.find(a)
        if k >= 0 and (k == 0 or not low[k - 1].isalpha()):
            repl = b if k else b[0].upper() + b[1:]
            return sentence[:k] + repl + sentence[k + len(a) :]
    return None


def _put(sentence: str, start: int, end: int, text: str) -> str:
    return sentence[:start] + text + sentence[end:]


def restate_quantity(sentence: str) -> tuple[str, str] | None:
    """``(right, wrong)`` restatements of the sentence's first figure that can be put in words."""
    for (value, unit), right, wrong in _DURATIONS:
        for form in (f"{value} {unit}", f"{_WORDS.get(value, value)} {unit}"):
            k = sentence.find(form)
            if k >= 0 and (k == 0 or not sentence[k - 1].isalnum()):
                return _put(sentence, k, k + len(form), right), _put(sentence, k, k + len(form), wrong)
    m = re.search(r"(?<![\w.,$£€])(\d+)(?: percent|%)(?![\w])", sentence)
    if m and int(m.group(1)) in _SHARES:
        right, wrong = _SHARES[int(m.group(1))]
        tail = sentence[m.end() :]
        if tail.startswith(" of "):
            return sentence[: m.start()] + right + tail, sentence[: m.start()] + wrong + tail
    m = re.search(r"(?<![\w.,$£€:/-])(?<!-- )([1-9]\d?)(?= [a-z]{3,})", sentence)
    if m and int(m.group(1)) in _WORDS and int(m.group(1)) + 1 in _WORDS:
        v = int(m.group(1))
        return _put(sentence, m.start(), m.end(), _WORDS[v]), _put(sentence, m.start(), m.end(), _WORDS[v + 1])
    return None


def restate_state(sentence: str) -> tuple[str, str] | None:
    """``(right, wrong)``: "was open" as "was not closed" (right) and "was closed" (wrong)."""
    m = _BE_ADJ.search(sentence)
    if not m:
        return None
    verb, adj = m.group(1), m.group(2)
    other = _COMPLEMENT[adj]
    right = sentence[: m.start()] + f"{verb} not {other}" + sentence[m.end() :]
    wrong = sentence[: m.start()] + f"{verb} {other}" + sentence[m.end() :]
    return right, wrong


def _join(a: str, b: str, text: str = "") -> str:
    """One claim from two sentences: "A, and b" (b's first word lowercased unless it is a name in ``text``)."""
    a = a.rstrip().rstrip(".!?")
    first = b.split()[0] if b.split() else ""
    name = first == "I" or re.search(r"[a-z,] " + re.escape(first) + r"\b", text) is not None
    return f"{a}, and {b if name else b[:1].lower() + b[1:]}"


def _usable(s: str) -> bool:
    return 6 <= len(s.split()) <= 40


def make_pairs(
    passages: Iterable[str], kinds: Iterable[str] = KINDS, seed: int = 0, per_kind: int = 2000
) -> Iterator[dict]:
    """``{"kind", "premise", "hypothesis", "label"}`` pairs, at most ``per_kind`` of each kind, balanced."""
    kinds = list(kinds)
    unknown = [k for k in kinds if k not in KINDS]
    if unknown:
        raise ValueError(f"unknown kind(s) {unknown}; choose from {KINDS}")
    rng = random.Random(seed)
    texts = [p.strip() for p in passages if p and p.strip()]
    rng.shuffle(texts)
    made = {k: [0, 0] for k in kinds}  # [unsupported, supported]

    def room(kind: str, label: int) -> bool:
        return kind in made and made[kind][label] < per_kind // 2

    def emit(kind: str, premise: str, hypothesis: str, label: int) -> dict:
        made[kind][label] += 1
        return {"kind": kind, "premise": premise, "hypothesis": hypothesis, "label": label}

    for n, text in enumerate(texts):
        sents = [s for s in sentences(text) if _usable(s)]
        if not sents:
            continue
        s = sents[rng.randrange(len(sents))]
        if "swap" in made:
            swapped = swap_names(s) or swap_figures(s)
            if swapped and room("swap", 0) and room("swap", 1):
                yield emit("swap", text, swapped, 0)
                yield emit("swap", text, s, 1)
        if "negation" in made:
            flipped, same = negate(s), restate_negation(s)
            if flipped and same and room("negation", 0) and room("negation", 1):
                yield emit("negation", text, flipped, 0)
                yield emit("negation", text, same, 1)
            elif flipped and room("negation", 0) and made["negation"][0] <= made["negation"][1]:
                yield emit("negation", text, flipped, 0)
            elif same and room("negation", 1) and made["negation"][1] <= made["negation"][0]:
                yield emit("negation", text, same, 1)
        if "quantity" in made:
            q = restate_quantity(s)
            if q and room("quantity", 0) and room("quantity", 1):
                yield emit("quantity", text, q[0], 1)
                yield emit("quantity", text, q[1], 0)
        if "state" in made:
            st = restate_state(s)
            if st and room("state", 0) and room("state", 1):
                yield emit("state", text, st[0], 1)
                yield emit("state", text, st[1], 0)
        if "span" in made and len(sents) >= 2 and room("span", 0) and room("span", 1):
            i = rng.randrange(len(sents) - 1)
            other = sentences(texts[(n + 1 + rng.randrange(len(texts) - 1)) % len(texts)]) if len(texts) > 1 else []
            other = [o for o in other if _usable(o) and o not in text]
            if other:
                yield emit("span", text, _join(sents[i], sents[i + 1], text), 1)
                yield emit("span", text, _join(sents[i], other[rng.randrange(len(other))], text), 0)
        if all(not room(k, 0) and not room(k, 1) for k in made):
            return
