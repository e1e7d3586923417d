"""Numbers in text with their scale and the noun that says what is counted: the parsing under the explicit fact
checks (:mod:`nlgeval_runtime.factcheck`) and the quantities they compare (:mod:`nlgeval_runtime.quantities`).

Digits and number words ("eleven" = 11, "six thousand two hundred", "three and a half", "38m" = 38 million),
percentages, money, and dates (a day with its month: "19 July" is a number whose unit is the month).

    >>> [(n.value, n.unit) for n in numbers("It cost $3.5bn over eleven weeks, up 31% since 19 May 2015.")]
    [(3500000000.0, 'dollar'), (11.0, 'week'), (31.0, 'percent'), (19.0, 'may'), (2015.0, None)]
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from nlgeval_runtime.claims import STOPWORDS

__all__ = ["NumberMention", "numbers"]

# not "once": "once lag reached 100,000" is a conjunction; "once a week" is read as a rate
_UNITS_WORDS = {
    "zero": 0, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "dozen": 12, "half": 0.5,
    "twice": 2, "thrice": 3,
}  # fmt: skip
#: ordinals from "third" on ("first" and "second" are too often not counts: "the first time", "a second")
_ORDINALS = {
    "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9, "tenth": 10,
    "eleventh": 11, "twelfth": 12, "twentieth": 20, "thirtieth": 30, "hundredth": 100,
}  # fmt: skip
_SCALES = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "mln": 1e6, "billion": 1e9, "bn": 1e9,
    "b": 1e9, "trillion": 1e12, "tn": 1e12,
}  # fmt: skip
_MONTH_SPELLINGS = (
    ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
    ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
    ("december", "dec"),
)  # fmt: skip
#: every spelling of a month -> the month's full name
_MONTHS = {spelling: forms[0] for forms in _MONTH_SPELLINGS for spelling in forms}
#: a month of a year written as numbers: "01/2022" is January 2022 (groups: month, year)
_NUMERIC_MONTH_YEAR = re.compile(r"(?<![\d/.])(0?[1-9]|1[0-2])/((?:19|20)\d{2})\b")
_MONTH_NAMES = frozenset(forms[0] for forms in _MONTH_SPELLINGS)
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: the noun after a number that says what is counted; plural and singular map to one name
_UNIT_NOUNS = {
    "second": "second", "minute": "minute", "hour": "hour", "day": "day", "week": "week", "fortnight": "fortnight",
    "month": "month", "year": "year", "decade": "decade", "century": "century", "centurie": "century",
    "percent": "percent", "%": "percent", "percentage": "percent",
    "euro": "euro", "€": "euro", "dollar": "dollar", "$": "dollar", "usd": "dollar", "pound": "pound",
    "£": "pound", "gbp": "pound", "eur": "euro", "yen": "yen", "cent": "cent", "pence": "pence", "p": "pence",
    "mile": "mile", "km": "km", "kilometre": "km", "kilometer": "km", "metre": "metre", "meter": "metre",
    "m2": "square metre", "foot": "foot", "feet": "foot", "inch": "inch", "inche": "inch", "kg": "kg",
    "kilogram": "kg", "kilo": "kg", "cm": "cm", "centimetre": "cm", "centimeter": "cm", "mm": "mm",
    "millimetre": "mm", "millimeter": "mm", "ml": "ml", "millilitre": "ml", "milliliter": "ml", "mg": "mg",
    "milligram": "mg", "g": "gram", "ft": "foot", "tonne": "tonne", "ton": "tonne", "gram": "gram", "litre": "litre",
    "liter": "litre", "gallon": "gallon", "lb": "lb", "lbs": "lb", "oz": "oz", "ounce": "oz", "floz": "floz",
    "people": "people", "person": "people", "men": "people",
    "women": "people", "child": "child", "children": "child", "student": "student", "worker": "worker",
    "employee": "employee", "job": "job", "home": "home", "house": "house", "vote": "vote", "seat": "seat",
    "goal": "goal", "point": "point", "game": "game", "match": "match", "time": "time", "member": "member",
    "country": "country", "state": "state", "city": "city", "store": "store", "shop": "store",
    "customer": "customer", "user": "user", "passenger": "passenger", "patient": "patient", "death": "death",
    "case": "case", "bag": "bag", "item": "item", "unit": "unit", "page": "page", "night": "night",
    "floor": "floor", "room": "room", "victim": "victim", "soldier": "soldier", "officer": "officer",
    "player": "player", "team": "team", "mph": "mph", "kmh": "kmh", "gb": "gb", "mb": "mb", "tb": "tb",
    "degree": "degree", "am": "am", "pm": "pm", "quarter": "quarter", "half": "half", "place": "place",
    "round": "round", "term": "term", "edition": "edition", "generation": "generation", "grade": "grade",
    "min": "minute", "hr": "hour", "wk": "week", "mo": "month", "yr": "year",
}  # fmt: skip
_CURRENCY_SIGNS = {"$": "dollar", "€": "euro", "£": "pound", "us$": "dollar"}
#: ISO currency codes written before a figure, as price lists and terms write them
_CODE_SIGNS = {"EUR": "€", "USD": "$", "GBP": "£"}
_CODE_BEFORE = re.compile(r"\b(EUR|USD|GBP)\s?(?=\d)")

_TOKEN = re.compile(
    r"(?P<cur>us\$|[$€£])?\s?(?P<num>\d+(?:[.,]\d+)*)(?P<suffix>(?:st|nd|rd|th)\b|%|(?:bn|mn|mln|m|k|tn|b)\b)?"
    r"|(?P<word>[^\W\d_]+(?:['’][^\W\d_]+)?)|(?P<sign>[%$€£])",
    re.I,
)


@dataclass(frozen=True)
class NumberMention:
    """A number in a text: its value (scale applied), the unit that says what it counts, and its words."""

    value: float
    unit: str | None
    text: str
    kind: str = "number"  # "number", "date" (a day with its month) or "year"


def _untokenise(text: str) -> str:
    """Undo the tokenisation of news corpora in numbers: ``3 , 500`` -> ``3,500``, ``$ 25`` -> ``$25``,
    ``1 . 5`` -> ``1.5``, ``31 %`` -> ``31%``."""
    text = re.sub(r"(?<=\d) , (?=\d{3}\b)", ",", text)
    text = re.sub(r"(?<=\d) \. (?=\d)", ".", text)
    text = re.sub(r"([$€£]) (?=\d)", r"\1", text)
    text = _CODE_BEFORE.sub(lambda m: _CODE_SIGNS[m.group(1)], text)  # "EUR 12" is €12, "USD 40" is $40
    return re.sub(r"(?<=\d) %", "%", text)


def _tokens(text: str) -> list[tuple[str, str, str]]:
    """``(kind, lower-cased token, original text)`` for numbers, words and signs, in order."""
    out = []
    for m in _TOKEN.finditer(_untokenise(text)):
        if m.group("num") is not None:
            out.append(("num", m.group(0).lower().replace(" ", ""), m.group(0).strip()))
        elif m.group("word") is not None:
            out.append(("word", m.group("word").lower().replace("’", "'"), m.group("word")))
        else:
            out.append(("sign", m.group("sign").lower(), m.group("sign")))
    return out


def _unit(token: str) -> str | None:
    if token in _UNIT_NOUNS:
        return _UNIT_NOUNS[token]
    if token.endswith("s") and token[:-1] in _UNIT_NOUNS:
        return _UNIT_NOUNS[token[:-1]]
    if token.endswith("es") and token[:-2] in _UNIT_NOUNS:
        return _UNIT_NOUNS[token[:-2]]
    return None


def _parse_digits(token: str) -> tuple[float | None, str | None, str | None]:
    """Value, currency and suffix of a digit token such as ``$38.5m``, ``31%``, ``1,200`` or ``19th``."""
    m = re.fullmatch(r"(us\$|[$€£])?(\d+(?:[.,]\d+)*)(st|nd|rd|th|%|bn|mn|mln|m|k|tn|b)?", token)
    if not m:
        return None, None, None
    digits = m.group(2)
    if re.fullmatch(r"\d{1,3}(,\d{3})+", digits):
        digits = digits.replace(",", "")
    elif "," in digits:
        digits = digits.replace(",", ".") if re.fullmatch(r"\d+,\d{1,2}", digits) else digits.replace(",", "")
    try:
        value = float(digits)
    except ValueError:
        return None, None, None
    if not math.isfinite(value) or value > 1e15:
        return None, None, None  # beyond any quantity a source states (10**400 written out): not compared
    return value, _CURRENCY_SIGNS.get(m.group(1) or ""), (m.group(3) or None)


def numbers(text: str, *, liberal: bool = False) -> list[NumberMention]:
    """The numbers of ``text`` with scale and unit: ``"38 million euros"`` -> 38e6 euro; ``"eleven weeks"``
    -> 11 week; ``"19 May"`` and ``"May 19th"`` -> 19 may (a date); ``"2015"`` -> a year.

        >>> [(n.value, n.unit) for n in numbers("It cost $3.5bn over eleven weeks, up 31% since 19 May 2015.")]
        [(3500000000.0, 'dollar'), (11.0, 'week'), (31.0, 'percent'), (19.0, 'may'), (2015.0, None)]
    """
    toks = _tokens(text)
    out: list[NumberMention] = []
    i = 0
    while i < len(toks):
        kind, tok, orig = toks[i]
        start = i
        value: float | None = None
        unit: str | None = None
        if kind == "num":
            value, unit, suffix = _parse_digits(tok)
            if value is None:
                i += 1
                continue
            if suffix == "%":
                unit = "percent"
            elif suffix in _SCALES:
                value *= _SCALES[suffix]
        elif kind == "word" and tok in _UNITS_WORDS and (liberal or tok != "half"):
            value = float(_UNITS_WORDS[tok])
            # compound number words: "twenty five", "two hundred", "six thousand two hundred", "three and a half"
            done = 0.0  # the thousands, millions ... already complete
            while i + 1 < len(toks) and toks[i + 1][0] == "word":
                word = toks[i + 1][1]
                if word in _UNITS_WORDS and word != "half":
                    nxt = _UNITS_WORDS[word]
                    value = value * nxt if nxt == 100 else value + nxt
                    i += 1
                elif word in ("thousand", "million", "billion") and _number_word_at(toks, i + 2):
                    # "six thousand" followed by "two hundred"
                    done, value = done + value * _SCALES[word], 0.0
                    i += 1
                elif word == "and" and [t[1] for t in toks[i + 2 : i + 4]] == ["a", "half"]:
                    value, i = value + 0.5, i + 3
                elif word == "and" and value and value % 100 == 0 and _number_word_at(toks, i + 2):
                    i += 1  # "one hundred and forty"
                else:
                    break
            value += done
        elif kind == "word" and tok in _ORDINALS:
            value = float(_ORDINALS[tok])
        elif kind == "word" and tok == "one" and (liberal or _unit_follows(toks, i)):
            value = 1.0  # "one" counts only before a unit of time ("one week"); "no one", "one of" are not numbers
        elif kind == "word" and tok in ("a", "an") and i + 1 < len(toks) and toks[i + 1][1] in _SCALES_WORDS:
            value = 1.0  # "a million"
        elif kind == "sign" and tok in _CURRENCY_SIGNS and i + 1 < len(toks) and toks[i + 1][0] == "num":
            i += 1
            continue
        if value is None:
            i += 1
            continue
        if i > 0 and toks[start - 1][0] == "sign" and toks[start - 1][1] in _CURRENCY_SIGNS and unit is None:
            unit = _CURRENCY_SIGNS[toks[start - 1][1]]
        # scale words and the counted noun follow ("38 million euros", "eleven weeks", "31 per cent")
        j = i + 1
        spaced_letter = j < len(toks) and toks[j][1] in ("m", "k", "b") and unit is None
        if j < len(toks) and toks[j][1] in _SCALES_WORDS and not spaced_letter:
            value *= _SCALES[toks[j][1]]
            j += 1
        elif spaced_letter and toks[j][1] == "m":
            unit, j = "metre", j + 1  # "at 7 m": seven metres
        if j + 1 < len(toks) and toks[j][1] == "per" and toks[j + 1][1] == "cent":
            unit, j = "percent", j + 2
        elif j < len(toks) and (toks[j][0] == "sign" and toks[j][1] == "%"):
            unit, j = "percent", j + 1
        elif (
            j < len(toks)
            and toks[j][1] in _MONTHS
            and toks[j][0] == "word"
            and value <= 31
            and (kind == "num" or toks[j][1] != "may")  # "under three may be eligible": the verb, not the month
        ):
            unit, j = _MONTHS[toks[j][1]], j + 1
        elif j < len(toks) and unit is None:
            noun = _unit(toks[j][1])
            if noun is None and j + 1 < len(toks) and toks[j][0] == "word" and toks[j][1] not in _NOT_ADJECTIVES:
                noun = _unit(toks[j + 1][1]) if toks[j + 1][1] not in ("of",) else None
                if noun is not None:
                    j += 1  # "38 million new jobs": one adjective between the number and its noun
            if noun is not None:
                unit, j = noun, j + 1
        if unit is None and start > 0 and toks[start - 1][1] in _MONTHS and value <= 31 and kind == "num":
            unit = _MONTHS[toks[start - 1][1]]  # "May 19"
        mention_kind = "date" if unit in _MONTH_NAMES else "number"
        if unit is None and kind == "num" and float(value).is_integer() and 1800 <= value <= 2100 and "," not in tok:
            mention_kind = "year"
        span = _span_text(text, toks, start, j)
        if mention_kind == "date" and start > 0 and toks[start - 1][1] in _MONTHS and j == start + 1:
            span = toks[start - 1][2] + " " + span  # "April 8", named with its month
        if start > 0 and toks[start - 1][0] == "sign" and toks[start - 1][1] in _CURRENCY_SIGNS:
            span = toks[start - 1][2] + span
        out.append(NumberMention(float(value), unit, span, mention_kind))
        i = j
    return out


#: words that may stand between a number and its noun only as adjectives do ("38 million new jobs"); "310,000
#: last year" is a number and a time, not 310,000 years
_NOT_ADJECTIVES = STOPWORDS | {"last", "next", "this", "each", "every", "per", "a", "an"}
_TIME_UNITS = frozenset({"second", "minute", "hour", "day", "week", "fortnight", "month", "year", "decade", "century"})
_SCALES_WORDS = frozenset({"thousand", "million", "billion", "trillion", "bn", "mn", "m", "k"})


def _span_text(text: str, toks: list, start: int, end: int) -> str:
    """The original words from token ``start`` to ``end - 1`` (joined with single spaces)."""
    parts = [t[2] for t in toks[start:end]]
    out = " ".join(parts)
    return out.replace(" %", "%")


#: count nouns of people that a summary interchanges ("21,000 employees" for "21,000 people")
_PEOPLE = frozenset(
    """people worker employee member student passenger patient customer user victim soldier officer player child
    crew staff firefighter resident adult visitor volunteer nurse doctor teacher pupil fan participant respondent
    driver rider tenant client guest applicant person men women""".split()
)


def _number_word_at(toks: list, k: int) -> bool:
    return k < len(toks) and toks[k][1] in _UNITS_WORDS


def _unit_follows(toks: list, i: int) -> bool:
    """Whether a unit of time follows token ``i`` ("one week"): only then is "one" a count in a claim."""
    return i + 1 < len(toks) and _unit(toks[i + 1][1]) in _TIME_UNITS
