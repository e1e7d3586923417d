"""Quantities as a reader compares them: a value with its kind, converted to one unit per kind.

:func:`nlgeval_runtime.figures.numbers` finds the numbers of a text with their scale and the noun that says what
is counted. This module reads them as quantities and decides when a claim's quantity *conflicts* with its
evidence, which is the only time an explicit check may call a claim wrong:

- **kinds**: durations (seconds to centuries, a fortnight included, compared in days), lengths, masses and
  volumes (compared in metres, kilograms and litres), percentages and fractions ("a quarter", "two in five",
  "one fifth" are 25, 40 and 20 percent), money by currency, dates, years, times of day, and counts by the noun
  they count; a bare number compares only with a bare number;
- **references are not quantities**: "section 5.3", "clause 4", "form 12B", "step 2", "page 7" are read as
  identifiers and never offered as what the source says about an amount;
- **approximate words** widen the match: "about", "around", "roughly", "nearly", "almost" (10%), "more than",
  "over", "at least" (at most the source's figure), "less than", "under", "up to" (at least it); a range
  ("3-5 days", "between 3 and 5 days") holds every value inside it;
- **how often and how much of a period**: a source's "weekly", "monthly", "once a month", "twice a week" are
  frequencies ("every 7 days"), which a claim's "every seven days" or "the 100-hour interval" may restate; "six
  days a week" is a rate, compared only with a rate; "a quarter of a million" is 250,000; "one minute to
  midnight" is 23:59; "from 1 May" starts on the day "after 30 April" does, "until 9 May" ends where "before
  10 May" does; "lighter than", "longer than" and the like are bounds; the first number of "2 to 3 working
  days" or "from about 1,800 to 3,500 square feet" takes the second's unit;
- **one step of arithmetic**: a figure the source's figures give by a sum, a difference (of two prices, or two
  lengths: "raised by 70 cm" from 3.8 to 4.5 metres), a percentage of a stated amount or an amount less or more
  a stated percentage (a 25 percent cut of a $1,000 deductible is $750) is accepted, never called wrong; so is a
  sum the claim works out itself ("16 servings at £3.60, £57.60");
- **absence is not a conflict**: a claim's quantity is compared only with the quantities of the same kind in
  the evidence sentence about the same thing (the one sharing most words with the claim near the quantity);
  when none stands out, with those of the sentences that share any such word, never with figures of sentences
  about something else; a bare number the source states anywhere, with any unit, proves nothing. The one
  conflict read without a shared word is a unit error: the same number of another unit ("27 lb" for "27 kg").
  When the evidence states none, the claim-support head decides.

The conversions are the SI definitions and the Gregorian calendar's mean month (30.44 days) and year (365.25 days).

    >>> [(q.kind, round(q.value, 2)) for q in quantities("Returns are accepted for a fortnight; a quarter of it.")]
    [('duration', 14.0), ('percent', 25.0)]
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Sequence

from nlgeval_runtime.figures import _CODE_BEFORE, _CODE_SIGNS, _MONTH_SPELLINGS, _NUMERIC_MONTH_YEAR, _PEOPLE, numbers

__all__ = ["Quantity", "conflicts", "in_evidence_terms", "quantities", "same_quantity"]

#: duration units in days
_DAYS = {
    "second": 1 / 86400, "minute": 1 / 1440, "hour": 1 / 24, "day": 1.0, "night": 1.0, "week": 7.0,
    "fortnight": 14.0, "month": 30.44, "year": 365.25, "decade": 3652.5, "century": 36525.0,
}  # fmt: skip
#: other measures: unit -> (kind, factor to the kind's base unit)
_MEASURES = {
    "km": ("length", 1000.0), "metre": ("length", 1.0), "mile": ("length", 1609.344), "foot": ("length", 0.3048),
    "inch": ("length", 0.0254), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "kg": ("mass", 1.0), "gram": ("mass", 0.001), "mg": ("mass", 1e-6), "tonne": ("mass", 1000.0),
    "lb": ("mass", 0.45359237), "oz": ("mass", 0.028349523125), "floz": ("volume", 0.0295735295625),
    "litre": ("volume", 1.0), "ml": ("volume", 0.001), "gallon": ("volume", 3.785),
    "gb": ("data", 1e9), "mb": ("data", 1e6), "tb": ("data", 1e12),
    "mph": ("speed", 1.609344), "kmh": ("speed", 1.0), "degree": ("degree", 1.0),
}  # fmt: skip
_MONEY = frozenset({"dollar", "euro", "pound", "yen", "cent", "pence"})
#: words before a number that make it a reference, not an amount
_REFERENCE_WORDS = frozenset(
    """section sections clause clauses article articles paragraph paragraphs para form forms step steps item items
    page pages chapter chapter part annex schedule appendix table figure fig exhibit no nr number code ref reference
    version v model room flight line platform gate option tier level phase stage policy account ticket order
    extension ext rule rules question questions box question bus route tram stand bay terminal exit junction
    § #""".split()
)
#: words after a number that do not say what it counts
_NOT_COUNTED = frozenset(
    """last next this that per each every and or but the a an of in on at to for from by with than as is are was
    were be been has have had will would can may times percent more less fewer other new old""".split()
)
_APPROX = {"about", "around", "roughly", "approximately", "approx", "nearly", "almost", "some", "circa", "c"}
_AT_LEAST = {"over", "more than", "at least", "above", "upwards of", "in excess of", "exceeding", "heavier than",
             "longer than", "larger than", "bigger than", "older than", "taller than", "higher than"}  # fmt: skip
#: "within" and "up to" are not here: a limit or a deadline states its figure ("within 5 days" is wrong for
#: "within 30 days")
_AT_MOST = {"under", "less than", "fewer than", "at most", "below", "no more than", "lighter than", "shorter than",
            "smaller than", "younger than", "lower than", "cheaper than"}  # fmt: skip

_FRACTION_WORDS = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4, "fifth": 5, "fifths": 5,
    "sixth": 6, "sixths": 6, "eighth": 8, "eighths": 8, "tenth": 10, "tenths": 10,
}  # fmt: skip
_SMALL = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
}  # fmt: skip
_SMALL_RE = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d{1,2})"
_FRACTION = re.compile(
    rf"\b(?P<num>{_SMALL_RE})[\s-]+(?P<frac>half|halves|thirds?|quarters?|fifths?|sixths?|eighths?|tenths?)"
    # "eight-tenths of a percentage point" is 0.8 points, not a share of 80%
    r"(?!\s+of\s+(?:a|an|one)\s+(?:percentage\s+)?(?:point|percent))"
    r"(?=\s+(?:of|the|all|those|its|their|our|your)\b|\s*[.,;:!?)]|\s*$)",  # "two fifths of", "by two fifths."
    re.I,
)
# "eight-tenths of a percentage point", "half a point", "1.5 percentage points": a change of a rate, read in basis
# points (a hundredth of a percentage point), never a share of the whole
_PART_OF_POINT = re.compile(
    rf"\b(?:(?P<num>{_SMALL_RE})[\s-]+)?(?P<frac>half|thirds?|quarters?|fifths?|tenths?)\s+(?:of\s+)?(?:a|an|one)\s+"
    r"(?:percentage\s+)?point\b",
    re.I,
)
# "Q4 2024" is "the fourth quarter of 2024", "H1" "the first half"
_QUARTER_LABEL = re.compile(r"\b(?P<part>[QH])(?P<n>[1-4])\b")
_ORDINAL_WORDS = {"1": "first", "2": "second", "3": "third", "4": "fourth"}
_PERCENTAGE_POINTS = re.compile(r"\b(?P<n>\d+(?:\.\d+)?)\s+percentage\s+points?\b", re.I)
_TIME_UNIT_RE = r"(?P<unit>second|minute|hour|day|week|fortnight|month|year|decade|century)"
# "a quarter of a year", "half an hour", "three quarters of an hour"
_PART_OF_UNIT = re.compile(
    rf"\b(?:(?P<num>{_SMALL_RE})[\s-]+)?(?P<frac>half|thirds?|quarters?)\s+(?:of\s+)?(?:a|an)\s+{_TIME_UNIT_RE}\b", re.I
)
# "a year and a half", "two days and a half"
_AND_A_HALF = re.compile(rf"\b(?P<num>{_SMALL_RE})\s+{_TIME_UNIT_RE}s?\s+and\s+a\s+half\b", re.I)
_HALF_OF = re.compile(
    r"\b(?<!a\s)(?<!and\s)(?<!first\s)(?<!1st\s)(?<!2nd\s)half\s+(?=of\b|the\b|all\b|its\b|their\b)", re.I
)
# "the second quarter", "the second half": a position, where "second" alone may be a unit of time
_SECOND_PART = re.compile(r"\bsecond(?=\s+(?:quarter|half)\b)", re.I)
_IN = re.compile(rf"\b(?P<a>{_SMALL_RE})\s+(?:in|out\s+of)\s+(?P<b>{_SMALL_RE}|\d{{2,3}})\b", re.I)
_ONE_UNIT = re.compile(
    r"\b(?P<before>for|within|in|after|about|over|than|last|lasts|lasted|lasting|takes|take|took|taking|of|under|"
    r"nearly|almost|just|only|to|least|most|extra|another|full|whole)\s+(?:a|an|one)\s+(?P<unit>fortnight|week|month|"
    r"year|day|hour|minute|decade|century)\b(?!\s*(?:'s|’s|ago|or\s+two|later|earlier))",
    re.I,
)  # "within a fortnight", "lasts a year"; never "70,000 passengers a day" or "once a week", which are rates
_RANGE = re.compile(r"\b(?:between\s+)?(\d+(?:\.\d+)?)\s*(?:-|–|to|and)\s*(\d+(?:\.\d+)?)\b", re.I)
_TIME = re.compile(
    r"(?<![:\d])\b(\d{1,2})(?:[:.](\d{2}))?\s*(a\.?m\.?|p\.?m\.?)(?=\W|$)|(?<![:\d])\b(\d{1,2}):(\d{2})\b(?!:\d)", re.I
)  # "7:35 pm", "19:35"; never "2:05:48", a race time
_NOON = re.compile(r"\b(?:noon|midday|midnight)\b", re.I)
_TIMES_SIGN = re.compile(r"(\d+(?:\.\d+)?)\s*(?:x|×|by)\s*(\d+(?:\.\d+)?)(?:\s*(?:x|×|by)\s*(\d+(?:\.\d+)?))?\s*"
                         r"(mm|cm|m|metres?|meters?|millimet(?:re|er)s?|centimet(?:re|er)s?|inch(?:es)?|in|feet|ft)\b",
                         re.I)  # fmt: skip


_MONTH_ORDER = ("",) + tuple(forms[0] for forms in _MONTH_SPELLINGS)  # month number -> name
_MONTH_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
#: "weekly", "once a month", "twice a week": how often, read as "every <period>"
_PERIODIC = {
    "hourly": "1 hour",
    "daily": "1 day",
    "nightly": "1 night",
    "weekly": "1 week",
    "fortnightly": "1 fortnight",
    "monthly": "1 month",
    "quarterly": "3 month",
    "yearly": "1 year",
    "annually": "1 year",
}
_PERIODIC_RE = re.compile(r"\b(?:every\s+)?(" + "|".join(_PERIODIC) + r")\b", re.I)
_TIMES_PER = re.compile(rf"\b(?P<n>once|twice|{_SMALL_RE}\s+times)\s+(?:a|an|per|every|each)\s+{_TIME_UNIT_RE}\b", re.I)
#: how often a prescription says a dose is taken, as a period in days
_DOSING_DAYS = {
    "SID": 1.0,
    "OD": 1.0,
    "QD": 1.0,
    "BID": 0.5,
    "BD": 0.5,
    "TID": 1 / 3,
    "TDS": 1 / 3,
    "QID": 0.25,
    "QDS": 0.25,
}
_DOSING = re.compile(r"\b(" + "|".join(_DOSING_DAYS) + r")\b")
_EVERY_HOURS = re.compile(r"\bq(\d{1,2})h\b")
#: "twice daily" is "twice a day"
_TIMES_ADVERB = re.compile(
    rf"\b(?P<n>once|twice|{_SMALL_RE}\s+times)\s+(?P<adverb>hourly|daily|nightly|weekly|monthly|yearly|annually)\b",
    re.I,
)
_ADVERB_UNIT = {
    "hourly": "hour",
    "daily": "day",
    "nightly": "day",
    "weekly": "week",
    "monthly": "month",
    "yearly": "year",
    "annually": "year",
}
#: pounds of weight, not of money: "heavier than 15 pounds", "weight goes up by more than 2 pounds"
_POUNDS_OF_WEIGHT = re.compile(  # a scaled sum ("lost 42 million pounds") is money: the figure must touch "pounds"
    r"(?i)(\b(?:heavier|heavy|lighter|weigh\w*|lift|lifts|lifting|carry|carries|carrying|gain\w*|lose|loses|lost|"
    r"losing)\b[^.;:\n$£]{0,40}?"
    r"\b\d+(?:\.\d+)?)\s*(?:pounds?|lbs?)\b"
)
#: ounces of a drink are fluid ounces: "1.5 liters (about 50 ounces) of fluid", "drink 64 ounces of water"
_FLUID_OUNCES = re.compile(
    r"(?i)(\b(?:drink\w*|fluid\w*|liquid\w*|water|lit(?:er|re)s?|ml|millilit\w*)\b[^.;:\n]{0,40}?"
    r"\b\d+(?:\.\d+)?)\s*(?:fl\.?\s*)?(?:ounces?|oz)\b|(\b\d+(?:\.\d+)?)\s*(?:fl\.?\s*(?:ounces?|oz)|fluid\s+ounces?)\b"
)
# "a quarter of a million", "half a billion": a share of a scale is a number
_PART_OF_SCALE = re.compile(
    rf"\b(?:(?P<num>{_SMALL_RE})[\s-]+)?(?P<frac>half|thirds?|quarters?)\s+(?:of\s+)?(?:a|an|one)\s+"
    r"(?P<scale>thousand|million|billion)\b",
    re.I,
)
_SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9}
# "one minute to midnight", "five minutes past noon": a time of day
_TO_NOON = re.compile(
    rf"\b(?:(?P<n>{_SMALL_RE}|fifteen|twenty|thirty)\s+minutes?|(?P<f>half|(?:a\s+)?quarter))\s+"
    r"(?P<dir>to|before|past|after)\s+(?P<at>midnight|noon|midday)\b",
    re.I,
)  # "half past midnight" is 00:30
_MINUTE_WORDS = {"fifteen": 15, "twenty": 20, "thirty": 30}
# "seven in the evening", "9 o'clock at night", "six in the morning": an hour and its half of the day
_PART_OF_DAY = re.compile(
    r"\b(?P<h>one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})(?:\s+o['’]clock)?\s+"
    r"(?:in\s+the\s+(?P<part>morning|afternoon|evening)|at\s+(?P<night>night))\b",
    re.I,
)
_HOUR_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12,
}  # fmt: skip
# a time told by the clock face: "twenty past three", "half past nine", "a quarter to five"; never "two to three
# days" (only a quarter goes "to" an hour here)
_PAST_HOUR = re.compile(
    r"\b(?:(?P<n>(?:a\s+)?quarter|half|five|ten|twenty(?:[\s-]five)?|\d{1,2})(?:\s+minutes)?\s+past"
    r"|(?P<w>(?:a\s+)?quarter|half|twenty(?:[\s-]five)?)\s+after"  # "2 after 10 overs" is no clock
    r"|(?P<q>(?:a\s+)?quarter)\s+to)\s+(?P<h>one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|\d{1,2})\b"
    r"(?!\s*(?:minutes?|hours?|days?|weeks?|months?|years?|%|percent|per|of)\b)",
    re.I,
)
#: a bound's word before a date: where a period starts or ends ("after 30 April" starts on 1 May)
_STARTS_AFTER, _STARTS_ON = frozenset({"after"}), frozenset({"from", "starting", "of", "since", "beginning"})
_ENDS_BEFORE, _ENDS_ON = frozenset({"before"}), frozenset({"until", "till", "through", "by"})


_UNTIL_TIME = re.compile(r"\s*(?:to|until|till|-|–)\s*\d", re.I)


def _clock(text: str, at: int, minutes: float, shown: str, clock: str | None) -> Quantity:
    """A time of day; "before noon" and "by 5pm" allow any earlier time, "after 6pm" any later ("open until 9pm"
    states the closing time)."""
    before = re.findall(r"[a-z]+", text[max(0, at - 12) : at].lower())[-1:]
    low, high = minutes, minutes
    if before and before[0] in ("before", "by"):
        low = 0.0
        if shown.lower() == "midnight":
            minutes = high = 1440.0  # "before midnight": by the end of the day
    elif before and before[0] in ("after", "from") and not _UNTIL_TIME.match(text, at + len(shown)):
        high = 1440.0  # "from 6pm"; but "from 06:00 to 23:00" is a range whose ends are read apart
    return Quantity(minutes, "time", shown, low, high, clock, minutes)


_BETWEEN_TIMES = re.compile(r"\s*(?:to|until|till|and|-|–|—)\s*", re.I)


def _time_ranges(out: list[Quantity], times: list[tuple[int, int, int]], text: str) -> None:
    """Two times of day joined as a span ("between 00:30 and 05:30", "from 06:00 to 23:00", "9am-5pm") each hold
    the whole span, so that a time inside it ("at 2am" of the off-peak hours) is no conflict; a span across
    midnight is left as two times."""
    for (i, begin, end), (j, start, _) in zip(times, times[1:]):
        joiner = text[end:start]
        before = re.findall(r"[a-z]+", text[max(0, begin - 12) : begin].lower())[-1:]
        if not _BETWEEN_TIMES.fullmatch(joiner):
            continue
        word = joiner.strip().lower()
        if word == "and" and before != ["between"] or word not in ("-", "–", "—", "and") and before != ["from"]:
            continue
        first, second = out[i], out[j]
        low, high = first.value, second.value
        if "12h" in (first.currency, second.currency) and high <= low:
            high += 720  # "from 9 to 5": the afternoon
        if high <= low:
            continue
        out[i] = Quantity(first.value, "time", first.text, low, high, None, first.raw, first.before)
        out[j] = Quantity(second.value, "time", second.text, low, high, None, second.raw, second.before)


def _small(word: str) -> float:
    word = word.lower()
    return float(_SMALL[word]) if word in _SMALL else float(word)


def _rewrite(text: str, liberal: bool = True) -> tuple[str, frozenset[str]]:
    """``text`` with fractions as percentages ("a quarter of" -> "25% of", "two in five" -> "40%"), a lone
    unit of time counted ("a fortnight" -> "1 fortnight"), and the sides of a size ("40 x 30 x 15 cm") each
    given its unit; and the percentages that were fractions (read to the nearest point and a half)."""
    made: set[str] = set()

    def percent(share: float) -> str:
        made.add(f"{share:.4g}%")
        return f"{share:.4g}%"

    def fraction(m: re.Match) -> str:
        return percent(_small(m.group("num")) / _FRACTION_WORDS[m.group("frac").lower()] * 100)

    def share_in(m: re.Match) -> str:
        a, b = _small(m.group("a")), _small(m.group("b"))
        return percent(a / b * 100) if 0 < a <= b else m.group(0)

    def part_of_unit(m: re.Match) -> str:
        share = _small(m.group("num") or "a") / _FRACTION_WORDS[m.group("frac").lower()]
        return f"{share:g} {m.group('unit')}"

    def half(m: re.Match) -> str:
        return percent(50.0) + " "

    def sides(m: re.Match) -> str:
        unit = m.group(4)
        return " by ".join(f"{v} {unit}" for v in m.groups()[:3] if v)

    def part_of_scale(m: re.Match) -> str:
        share = _small(m.group("num") or "a") / _FRACTION_WORDS[m.group("frac").lower()]
        return f"{share * _SCALES[m.group('scale').lower()]:.0f}"

    def every(m: re.Match) -> str:
        word = m.group("n").lower()
        times = 1.0 if word == "once" else 2.0 if word == "twice" else _small(word.split()[0])
        return f"every {1 / times:g} {m.group('unit')}" if times > 0 else m.group(0)  # "0 times a week": never

    def part_of_day(m: re.Match) -> str:
        h = m.group("h").lower()
        hour = _HOUR_WORDS[h] if h in _HOUR_WORDS else int(h)
        if not 1 <= hour <= 12:
            return m.group(0)
        part = (m.group("part") or "").lower()
        if m.group("night"):  # "eleven at night" is 23:00, "twelve at night" midnight, "two at night" 02:00
            return "12 am" if hour == 12 else f"{hour} am" if hour <= 5 else f"{hour} pm"
        if part == "morning":
            return f"{hour} am"
        return "12 pm" if hour == 12 else f"{hour} pm"

    def past_hour(m: re.Match) -> str:
        h = m.group("h").lower()
        hour = _HOUR_WORDS[h] if h in _HOUR_WORDS else int(h)
        if hour < 1 or hour > 12:
            return m.group(0)
        if m.group("q"):  # "a quarter to five"
            return f"{hour - 1 if hour > 1 else 12}:45"
        n = (m.group("n") or m.group("w")).lower().replace("a ", "").replace("-", " ")
        minutes = {"quarter": 15, "half": 30, "five": 5, "ten": 10, "twenty": 20, "twenty five": 25}.get(n)
        minutes = int(n) if minutes is None and n.isdigit() else minutes
        return f"{hour}:{minutes:02d}" if minutes is not None and minutes < 60 else m.group(0)

    def to_noon(m: re.Match) -> str:
        if m.group("f"):
            minutes = 30.0 if m.group("f").lower() == "half" else 15.0
        else:
            n = m.group("n").lower()
            minutes = _MINUTE_WORDS[n] if n in _MINUTE_WORDS else _small(n)
        at: float = 0 if m.group("at").lower() == "midnight" else 720
        at = (at - minutes if m.group("dir").lower() in ("to", "before") else at + minutes) % 1440
        return f"{int(at // 60)}:{int(at % 60):02d}"

    text = _CODE_BEFORE.sub(lambda m: _CODE_SIGNS[m.group(1)], text)  # "EUR 300" is €300, as the figures read it
    # "01/2022" is January 2022 (a month of a year, never a share of 2022)
    text = _NUMERIC_MONTH_YEAR.sub(lambda m: f"{_MONTH_ORDER[int(m.group(1))].capitalize()} {m.group(2)}", text)
    text = _TO_NOON.sub(to_noon, text)
    text = _PAST_HOUR.sub(past_hour, text)
    text = _PART_OF_DAY.sub(part_of_day, text)
    text = _PART_OF_SCALE.sub(part_of_scale, text)
    text = _TIMES_ADVERB.sub(lambda m: f"{m.group('n')} a {_ADVERB_UNIT[m.group('adverb').lower()]}", text)
    text = _TIMES_PER.sub(every, text)
    text = _POUNDS_OF_WEIGHT.sub(lambda m: f"{m.group(1)} lb", text)
    text = _FLUID_OUNCES.sub(lambda m: f"{m.group(1) or m.group(2)} floz", text)
    if liberal:  # a source's "weekly" is "every 7 days"; a claim's "paying yearly" may name a plan, not a period
        text = _PERIODIC_RE.sub(lambda m: f"every {_PERIODIC[m.group(1).lower()]}", text)
        # a prescription's "BID" is twice a day, "q8h" every 8 hours (written in capitals: "bid" is an offer)
        text = _DOSING.sub(lambda m: f"every {_DOSING_DAYS[m.group(1)]:g} day", text)
        text = _EVERY_HOURS.sub(lambda m: f"every {m.group(1)} hour", text)
    text = _PART_OF_UNIT.sub(part_of_unit, text)
    text = _AND_A_HALF.sub(lambda m: f"{_small(m.group('num')) + 0.5:g} {m.group('unit')}", text)
    text = _QUARTER_LABEL.sub(
        lambda m: (
            f"{_ORDINAL_WORDS[m.group('n')]} {'quarter' if m.group('part') == 'Q' else 'half'}"
            if m.group("part") == "Q" or m.group("n") in "12"
            else m.group(0)
        ),
        text,
    )
    text = _SECOND_PART.sub("2nd", text)
    text = _PART_OF_POINT.sub(
        lambda m: f"{_small(m.group('num') or 'a') / _FRACTION_WORDS[m.group('frac').lower()] * 100:g} basis points",
        text,
    )
    text = _PERCENTAGE_POINTS.sub(lambda m: f"{float(m.group('n')) * 100:g} basis points", text)
    text = _FRACTION.sub(fraction, text)
    text = _HALF_OF.sub(half, text)
    text = _IN.sub(share_in, text)
    text = _ONE_UNIT.sub(lambda m: f"{m.group('before')} 1 {m.group('unit')}", text)
    return _TIMES_SIGN.sub(sides, text), frozenset(made)


@dataclass(frozen=True)
class Quantity:
    """A quantity of a text: ``value`` in its kind's base unit (days, metres, kilograms, litres, percent, the
    currency's unit, the count), ``kind`` ("duration", "length", "money", "percent", "date", "year",
    "time", "count:people", "number", "reference"), ``low``/``high`` the values it allows (a range, an
    approximate word), the words it was read from, and a sum of money's ``currency``."""

    value: float
    kind: str
    text: str
    low: float
    high: float
    currency: str | None = None
    raw: float = 0.0  # the number as written, before any conversion
    before: str = ""  # the word before it ("after", "every", "about")

    def holds(self, value: float) -> bool:
        return self.low - 1e-9 <= value <= self.high + 1e-9


def _kind(unit: str | None, mention_kind: str) -> tuple[str, float]:
    if mention_kind == "date":
        return "date", 1.0
    if mention_kind == "year":
        return "year", 1.0
    if unit is None:
        return "number", 1.0
    if unit in _DAYS:
        return "duration", _DAYS[unit]
    if unit in _MEASURES:
        return _MEASURES[unit]
    if unit == "percent":
        return "percent", 1.0
    if unit in _MONEY:
        return "money", 0.01 if unit in ("cent", "pence") else 1.0
    if unit in ("am", "pm"):
        return "time", 1.0
    if unit in ("time", "times", "fold"):
        return "ratio", 1.0  # "four times the old limit": a multiple, never a count of something

    return f"count:{'people' if unit in _PEOPLE else unit}", 1.0


_WRAPPED_AFTER_COMMA = re.compile(r",[ \t]*\n[ \t]*")


@functools.lru_cache(maxsize=256)
def quantities(text: str, liberal: bool = True) -> tuple[Quantity, ...]:
    """The quantities of ``text`` in reading order (times of day first), references marked as such.
    ``liberal``: read "one" and "half" as numbers everywhere (a source), not only before a unit (a claim)."""

    # a line broken after a comma goes on with its sentence ("x 10 days,\n30 min before food")
    rewritten, fractions = _rewrite(_WRAPPED_AFTER_COMMA.sub(", ", text), liberal)
    out: list[Quantity] = []
    spans: list[tuple[int, int, int]] = []  # (index in out, start, end) of the numbers read from ``lowered``
    times: list[tuple[int, int, int]] = []  # (index in out, start, end) of the times of day
    for m in _TIME.finditer(rewritten):
        hour = int(m.group(1) or m.group(4))
        minute = int(m.group(2) or m.group(5) or 0)
        half = (m.group(3) or "").lower().replace(".", "")
        if half == "pm" and hour < 12:
            hour += 12
        elif half == "am" and hour == 12:
            hour = 0
        if hour <= 24 and minute < 60:
            minutes = float(hour * 60 + minute)
            shown = m.group(0) if m.group(0).count(".") > 1 else m.group(0).rstrip(".")
            written_24h = (m.group(1) or m.group(4) or "").startswith("0")  # "09:00" is nine in the morning
            clock = None if half or hour > 12 or written_24h else "12h"  # "at 7:02" may be 7:02 p.m.
            out.append(_clock(rewritten, m.start(), minutes, shown, clock))
            times.append((len(out) - 1, m.start(), m.end()))
    for m in _NOON.finditer(rewritten):
        minutes = 720.0 if m.group(0).lower() == "noon" or m.group(0).lower() == "midday" else 0.0
        out.append(_clock(rewritten, m.start(), minutes, m.group(0), None))
        times.append((len(out) - 1, m.start(), m.end()))
    _time_ranges(out, sorted(times, key=lambda t: t[1]), rewritten)
    rewritten = _TIME.sub(" ", rewritten)
    lowered = rewritten.lower()
    ranges = [(float(a), float(b), r) for r in _RANGE.finditer(lowered) for a, b in [r.groups()] if float(a) < float(b)]
    for mention in numbers(rewritten, liberal=liberal):
        kind, factor = _kind(mention.unit, mention.kind)
        where = lowered.find(mention.text.lower())
        before = lowered[max(0, where - 24) : where] if where >= 0 else ""
        before_words = re.findall(r"[\w§#]+", before)
        if (
            before_words
            and before_words[-1] in _REFERENCE_WORDS
            and re.search(r"[\w§#]+[.:]?\s*$", before) is not None  # "section 4.2", never "120 V, 60 Hz"
            and mention.unit is None  # "section 4.2", never "the line 52 seconds ahead"
            or re.search(r"[§#]\s*$", before)
            or re.fullmatch(r"0\d{3,}", mention.text.split()[0])  # "0300 123 4567", "01632": a phone number
            or mention.unit is None  # "bus 47 connects the two": the two stations, no amount
            and before_words[-1:] == ["the"]
            and mention.text.isalpha()
            and where >= 0
            and re.match(
                r"\s*(?:$|[^\w\s]|(?:every|each|of|in|on|at|to|for|will|would|are|were|have|had)\b)",
                lowered[where + len(mention.text) :],
            )
            or mention.unit is None  # a group of a tracking or account number: "1550 7723 9041"
            and where >= 0
            and (
                re.match(r" \d{3,}\b", lowered[where + len(mention.text) :])
                or re.search(r"\b\d{3,} $", lowered[:where])
            )
        ):
            kind = "reference"
        mention_unit: str | None = None
        value = float(mention.value * factor)
        if kind == "date":  # a day of a month: May 19 is 519, so that 19 July and 19 May differ
            value = 100 * _MONTH_ORDER.index(str(mention.unit)) + mention.value
        low: float = value
        high: float = value
        tail = " ".join(before_words[-3:])
        if before_words and before_words[-1] in _APPROX:
            low, high = value * 0.9, value * 1.1
        elif any(tail.endswith(w) for w in _AT_LEAST):
            high = float("inf")
        elif any(tail.endswith(w) for w in _AT_MOST):
            low = 0.0
        for a, b, r in ranges:
            if where >= 0 and r.start() <= where <= r.end() and mention.value in (a, b):
                low, high = min(low, a * factor), max(high, b * factor)
        if kind == "percent" and mention.text in fractions and mention.text not in text:
            low, high = value - 1.5, value + 1.5  # a fraction read as a percentage: "a third" is 33.3
        if re.fullmatch(r"\d+(?:st|nd|rd|th)|[a-z]+(?:st|nd|rd|th)", mention.text.lower().split()[0]):
            # a position, not an amount: "the fifth day", "the fourth quarter"
            kind = f"ordinal:{mention.unit or ''}"
            value = low = high = mention.value
        following = lowered[where + len(mention.text) :] if where >= 0 else ""
        compound = re.match(r"-[a-z]+\s+([a-z]{3,})", following)
        if kind == "duration" and compound and mention.unit and where >= 0:
            # "the 12 night-shift staff" counts staff; "a 12-month contract" (no space) stays a duration
            kind, value, low, high = "number", mention.value, mention.value, mention.value
            following = " " + compound.group(1)
        if kind == "number" and where >= 0:  # what a bare number counts: the noun after it ("310,000 visitors")
            after = re.match(r"[\s-]*([a-z]{3,})", following)
            if after and after.group(1) not in _NOT_COUNTED:
                noun = re.sub(r"(?<=[a-z]{3})(?:es|s)$", "", after.group(1))
                kind = "money" if noun in _MONEY - {"cent", "pence"} else "count:" + noun
                mention_unit = noun if kind == "money" else None
        if kind == "duration" and before_words and before_words[-1] == "every":
            kind = "frequency"  # "every 7 days", "weekly": how often, not how long
        elif kind == "duration" and re.match(r"\s+(?:a|an|per|each)\s+(?:day|week|month|year)\b", following):
            kind = "rate"  # "six days a week": how much of a period, compared only with another rate
        currency = None if kind != "money" or mention.unit in ("cent", "pence") else mention.unit
        if kind == "money" and mention.unit is None:
            currency = mention_unit
        word = before_words[-1] if before_words else ""
        out.append(Quantity(value, kind, mention.text, low, high, currency, mention.value, word))
        spans.append((len(out) - 1, where, where + len(mention.text)))
    return tuple(_ranges_share_units(out, spans, rewritten))


_TO = re.compile(r"\s*(?:to|-|–|and|or)\s*(?:about\s+|around\s+|roughly\s+)?")


def _ranges_share_units(out: list[Quantity], spans: list[tuple[int, int, int]], text: str) -> list[Quantity]:
    """The first number of "2 to 3 working days", "from about 1,800 to 3,500 square feet" takes the second's unit
    (and names the whole range)."""
    lowered = text.lower()
    for (i, begin, end), (j, start, stop) in zip(spans, spans[1:]):
        first, second = out[i], out[j]
        if first.kind == "money" and second.kind == "number" and end >= 0 and start >= 0:
            # "$7.2-7.3 billion", "$630-640 million": the currency is written on the first, the scale on the second
            digits = re.match(r"\d[\d,]*(?:\.\d+)?", second.text)
            shown = float(digits.group(0).replace(",", "")) if digits else 0.0
            scale = second.value / shown if shown else 1.0
            if _TO.fullmatch(lowered[end:start]) and scale > 1 and first.raw == first.value:
                low, high = first.low * scale, second.high
                out[i] = Quantity(
                    first.raw * scale, "money", text[begin:stop], low, high, first.currency, first.raw, first.before
                )
                out[j] = Quantity(
                    second.value, "money", second.text, low, high, first.currency, second.raw, second.before
                )
            continue
        if first.kind != "number" or second.kind in ("number", "reference", "date", "year") or end < 0 or start < 0:
            continue
        if not _TO.fullmatch(lowered[end:start]) or not second.raw:
            continue
        factor = second.value / second.raw if second.kind != "percent" else 1.0
        value = first.raw * factor
        low, high = first.low * factor, first.high * factor  # a range's or an approximate word's bounds
        out[i] = Quantity(value, second.kind, text[begin:stop], low, high, second.currency, first.raw, first.before)
    return out


def _counted(q: Quantity) -> bool:
    return q.kind == "number" or q.kind.startswith(("count:", "ordinal:"))


def _comparable(q: Quantity, s: Quantity) -> bool:
    """Same kind, or a period and a frequency ("the 100-hour interval" and "every 100 hours")."""
    return q.kind == s.kind or {q.kind, s.kind} == {"duration", "frequency"}


def _is_range(q: Quantity) -> bool:
    """A range ("3-5 days", "between 400 and 900 euros"), not an approximate figure ("about 40": 36 to 44)."""
    return q.low > 0 and q.high != float("inf") and q.high - q.low > 0.25 * abs(q.value)


def same_quantity(claim: Quantity, evidence: Quantity) -> bool:
    """Whether two quantities of one kind agree: either one's allowed values hold the other's value, or the
    claim rounds the evidence ("38 million" for 38.2 million, "a year" for 12 months, "a third" for 33%)."""
    if (
        claim.kind != evidence.kind
        and not (_counted(claim) and _counted(evidence))
        and not _comparable(claim, evidence)
    ):
        return False
    if claim.kind == "date" and _date_bound(claim) is not None and _date_bound(claim) == _date_bound(evidence):
        return True  # "from 1 May" and "after 30 April" start on the same day
    if claim.kind == "time" and "12h" in (claim.currency, evidence.currency):
        if claim.low == claim.high and evidence.low < evidence.high < 1440:  # a span of the day holds either half
            return any(evidence.holds(v) for v in (claim.value % 720, claim.value % 720 + 720))
        return claim.value % 720 == evidence.value % 720
    if claim.currency and evidence.currency and claim.currency != evidence.currency:
        return False  # "50 euros" for "£50"
    if claim.value == evidence.value and claim.low == evidence.low and claim.high == evidence.high:
        return True
    if _is_range(claim):  # "between 400 and 900 euros" is not "600 euros"; it is "400 to 900 euros"
        return claim.low == evidence.low and claim.high == evidence.high or claim.value == evidence.value
    bound = (
        claim.low == 0 and evidence.low == 0 and claim.high == claim.value and evidence.high == evidence.value
    ) or (claim.high == float("inf") and evidence.high == float("inf"))
    if not bound and (claim.holds(evidence.value) or evidence.holds(claim.value)):
        return True  # a bound holds a value ("under 5" holds 2); two bounds must agree ("under 5" is not "under 2")
    a, b = claim.value, evidence.value
    if a == 0 or b == 0 or claim.kind in ("date", "year", "time") or claim.kind.startswith("ordinal:"):
        return False  # a date or a position is not rounded: 20 May is not "about" 16 May
    if claim.kind == "duration" and claim.raw and evidence.raw:
        if abs(a / claim.raw - b / evidence.raw) > 1e-9:  # in other units: "a month" for 30 days, "a year" for 52
            return abs(a - b) / max(abs(a), abs(b)) < 0.1  # weeks, "three months" for 12 weeks
        return False  # in the same unit a duration is exact: 15 working days are not 14
    magnitude = 10 ** max(0, len(str(int(abs(a)))) - 2)
    return float(a).is_integer() and round(b / magnitude) * magnitude == a and abs(a - b) / abs(b) < 0.05


def _day_of_year(value: float) -> int:
    month, day = divmod(int(value), 100)
    return sum(_MONTH_DAYS[:month]) + day


def _date_bound(q: Quantity) -> tuple[str, int] | None:
    """``("start" | "end", day of the year)`` of a date a bound word precedes, else None."""
    day = _day_of_year(q.value)
    if q.before in _STARTS_AFTER or q.before in _STARTS_ON:
        return "start", day + (q.before in _STARTS_AFTER)
    if q.before in _ENDS_BEFORE or q.before in _ENDS_ON:
        return "end", day - (q.before in _ENDS_BEFORE)
    return None


def _derived(
    claim: Quantity,
    figures: Sequence[Quantity],
    windows: Sequence[Sequence[Quantity]] = (),
    given: Sequence[Quantity] = (),
    total: bool = False,
) -> bool:
    """Whether one step of arithmetic gives the claim's value: an amount less or more a percentage of it, or a
    percentage of it, from the source's figures anywhere; a sum or a difference of two sums of money from a few
    (four at most) anywhere, or with a figure the user ``given`` ("the remaining £3,000" of the £8,000 asked
    about); a sum, a difference or a product of two figures, or a share or a change of two as a percentage, from
    figures of two consecutive sentences (``windows``): further apart, in a text full of figures, such sums are
    coincidences."""
    if claim.kind in ("date", "year", "time") or claim.kind.startswith("ordinal:"):
        return False  # a sum of two dates or of two positions is a coincidence, not a figure
    target = claim.value

    def near(x: float) -> bool:
        if claim.kind == "money" and claim.low == claim.high:  # money to the cent: 2 x 4.95 is not 9.95
            return abs(x - target) < 0.005 + 1e-9 * abs(target)
        approximate = claim.low > 0 and claim.high != float("inf") and not _is_range(claim)
        return abs(x - target) <= max(1e-9, 0.01 * abs(target)) or approximate and claim.holds(x)

    if claim.kind == "money":  # a saving, a total, what remains: prices are often listed apart
        money = list(dict.fromkeys(f.value for f in figures if f.kind == "money"))
        theirs = [f.value for f in given if f.kind == "money"]
        sums = [(a, b) for i, a in enumerate(money) for b in money[i + 1 :]] if len(money) <= 4 else []
        sums += [(a, b) for a in theirs for b in money + theirs if a != b]
        if any(near(a + b) or near(abs(a - b)) for a, b in sums):
            return True
        if total and any(near(a + b) for i, a in enumerate(money) for b in money[i + 1 :]):
            return True  # "the soup and the burger come to £17 in total": a total of a price list says so
    if claim.kind != "percent":
        same = [f.value for f in figures if f.kind == claim.kind]
        for p in (f.value for f in figures if f.kind == "percent"):
            if any(near(a * p / 100) or near(a * (1 - p / 100)) or near(a * (1 + p / 100)) for a in same):
                return True  # "a 25% discount on the $1,000 deductible" is $750
    for group in windows:
        if claim.kind == "percent":  # "12 of the 48 staff", "from $80 to $100"
            pairs = [f for f in group if f.kind == "money" or _counted(f) and not f.kind.startswith("ordinal:")]
            for x in pairs:
                for y in pairs:
                    if x is y or not y.value or not (x.kind == y.kind or _counted(x) and _counted(y)):
                        continue
                    if near(x.value / y.value * 100) or near(abs(x.value - y.value) / y.value * 100):
                        return True
            continue
        same = [f.value for f in group if f.kind == claim.kind]
        if claim.raw and claim.kind not in ("money",):  # "fifteen years on labour; Crestline only offers ten"
            bare = [f.raw * claim.value / claim.raw for f in group if f.kind == "number"]
            if any(near(abs(a - b)) for a in same for b in bare):
                return True
        summable = claim.kind == "money" or _counted(claim) and claim.value > 12  # small counts add up by chance
        for i, a in enumerate(same):
            for b in same[i + 1 :]:
                if (summable or claim.kind in _MEASURED) and near(abs(a - b)) or summable and near(a + b):
                    return True  # "five years longer", "raised by 70 cm", a saving, a total; never a sum of lengths
        if _counted(claim) and claim.value > 12:  # "106 of 120 posts filled" where 14 are vacant
            raws = [f.raw for f in group if _counted(f) and not f.kind.startswith("ordinal:")]
            for i, a in enumerate(raws):
                for b in raws[i + 1 :]:
                    if near(a + b) or near(abs(a - b)) or max(a, b) <= 100 and near(a * b):
                        return True
        if claim.kind == "money":  # a price times a count or a period ("22 staff at $150", "$1,850 a month")
            counts = {f.raw for f in group if _counted(f) and 1 < f.raw <= 1000} | {12, 52}
            if any(near(a * n) for a in same for n in counts):
                return True
    return False


@functools.lru_cache(maxsize=32)
def _windows(source: str) -> tuple[tuple[Quantity, ...], ...]:
    """The source's figures by two consecutive sentences (references left out)."""
    from nlgeval_runtime.sentences import split_sentences

    sentences = [[q for q in quantities(s) if q.kind != "reference"] for s in split_sentences(source) or [source]]
    return tuple(tuple(a + b) for a, b in zip(sentences, sentences[1:] + [[]]))


_PERIODS = frozenset({"duration", "frequency"})
_QUANTITY_WORDS = frozenset({"over", "under", "above", "below", "least", "most", "more", "less", "fewer", "than", "up"})
_MEASURED = frozenset({"duration", "length", "mass", "volume", "data", "speed", "degree"})

#: past this many characters a source's figures are read in the claim's evidence only (its aligned units)
LONG_SOURCE = 50_000


def conflicts(claim: str, evidence: str, source: str, given: str = "") -> list[tuple[Quantity, Quantity]]:
    """The claim's quantities that conflict with its evidence: ``(claim quantity, what the evidence says)``.
    ``given``: what the user wrote (a question, the history), whose figures the claim may work with.

    A quantity conflicts when the evidence states quantities of its kind, none agrees with it, and the source's
    figures do not give it by one step of arithmetic. References ("section 5.3") are compared only with
    references; a claim's quantity whose kind the evidence does not state is not a conflict."""
    found = []
    if len(source) > LONG_SOURCE:
        source = evidence  # a long source's figures are read where the claim aligns: the cost stays bounded
    said = [q for q in quantities(evidence)]
    figures = [q for q in quantities(source) if q.kind != "reference"]
    for q in quantities(claim, liberal=False):
        if q.kind == "reference" or q.kind == "number" and (_time_of_day(claim, q) or q.text.lower() == "once"):
            continue  # "form 12", "section 4.2": identifiers; "at twenty to twelve", "by seven in the morning"
        if any(s.raw == q.raw and (s.kind == "number" or _same_count(q, s)) for s in figures):
            # the bare number stated somewhere ("the influencer budget stays at forty thousand"), or the same count:
            # a figure the source gives is no conflict it can prove (a measure stated in another sentence about
            # the same thing is :func:`nlgeval_runtime.factcheck.check_claim`'s to find)
            continue
        if q.kind == "number" and any(s.raw == q.value for s in figures):
            continue  # a bare number the source states with a unit: "for Standard it's seven" (7 working days)
        if q.kind in _SPANS and any(
            s.kind in _SPANS and s.kind != q.kind and s.raw == q.raw and _close(s.value, q.value) for s in said
        ):
            continue  # "51 to 100 hours a month" where "a month" belongs to the price: the same span of time
        if _counted(q) and any(s.raw == q.raw and _counted(s) for s in said):
            continue  # the evidence counts the same number of something ("200 customers" for "200 cafés")
        if (
            q.kind == "ordinal:"
            and 1 <= q.raw <= 31
            and any(s.kind == "date" and s.value % 100 == q.raw for s in figures)
        ):
            continue  # "by the 16th": a day of the month the source dates ("by April 16")
        if _shown_product(q, quantities(claim, liberal=False), figures):
            continue  # "16 servings at £3.60, £57.60", "3 days at 300 km a day, 900 km": the claim shows its sums
        about = _about_the_same(claim, q, evidence)
        rivals = about if about is not None else [s for s in said if s.kind == q.kind]
        # a figure a thousand times larger or smaller is about something else: 7 kg of lifting is no 81 mg dose
        rivals = [s for s in rivals if q.kind not in _MEASURED or _within(q.value, s.value, 1000)]
        # a unit error: the same number of another unit of the kind ("27 lb" for "27 kg", "20 days" for "20 hours")
        slips = [s for s in said if s.kind == q.kind and s.raw == q.raw and abs(s.value - q.value) > 1e-9]
        rivals = rivals or slips
        if not rivals and (q.kind.startswith("count:") or q.kind == "number"):
            # a count the source states nowhere, beside the evidence's own counts ("155,000 visitors" where the
            # evidence says "a record 310,000"): the same kind of figure, about the same thing
            if any(s.raw == q.raw for s in figures):
                continue
            rivals = [s for s in said if _counted(s)]
        if not rivals or any(same_quantity(q, s) for s in rivals):
            continue
        given_figures = [g for g in quantities(given) if g.kind != "reference"]
        if _derived(q, figures, _windows(source), given_figures, total=_TOTAL.search(claim) is not None):
            continue  # a figure worked out from the source's ("saves $20", "in total", "works out at")
        found.append((q, slips[0] if slips else _nearest(claim, evidence, rivals, q)))  # a unit error names its twin
    return found


#: words with which a claim says it adds up prices
_TOTAL = re.compile(r"(?i)\b(?:in total|total|altogether|combined|comes? to|came to|adds? up to|together)\b")
_SPANS = frozenset({"duration", "rate"})  # not a frequency: "monthly" is no "within a month"


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))


def _within(a: float, b: float, factor: float) -> bool:
    """Whether two positive amounts are less than ``factor`` apart (either way); zero is near nothing but zero."""
    if a <= 0 or b <= 0:
        return a == b
    return max(a, b) / min(a, b) < factor


def _shown_product(q: Quantity, mine: Sequence[Quantity], figures: Sequence[Quantity]) -> bool:
    """Whether a quantity is a count the claim states times a rate of its kind that the claim or the source
    states: a price ("16 servings at £3.60, £57.60") or an amount per period ("a three-day rental with 300 km a
    day, 900 km in total"); or, for money, another sum of the claim plus or minus one of the source's ("£5 off
    the first bin, so it costs £47")."""
    if q.kind in ("date", "year", "time", "percent", "frequency", "duration") or q.kind.startswith("ordinal:"):
        return False
    # a price times a count of things; any other amount only times a count of periods ("three days")
    if q.kind == "money":  # "£5 off the first bin, so it costs £47" (of £52); "£27.51, £12.49 short of £40"
        own = [c.value for c in mine if c.kind == "money" and c is not q]
        others = [f.value for f in figures if f.kind == "money"] + own
        if any(
            abs(abs(a - b) - q.value) < 0.005 or b != a and abs(a + b - q.value) < 0.005 for a in own for b in others
        ):  # never a sum with itself: "£60 and a double room £120" shows no arithmetic
            return True
    counts = {
        c.raw
        for c in mine
        if (_counted(c) if q.kind == "money" else c.kind == "duration") and c is not q and 1 < c.raw <= 1000
    }
    rates = {f.value for f in list(mine) + list(figures) if f.kind == q.kind and f is not q and f.value != q.value}
    # money to the cent; a measure, converted to its base unit (2.5 mg is 2.5e-6 kg), to a part in a thousand
    slack = 0.005 + 1e-9 * abs(q.value) if q.kind == "money" else 1e-3 * abs(q.value)
    return any(abs(n * p - q.value) <= slack for n in counts for p in rates)


def _same_count(q: Quantity, s: Quantity) -> bool:
    """Whether two counted figures count the same thing: the same noun, people by another noun, or a bare number."""
    if not (_counted(q) and _counted(s)):
        return False
    if q.kind == s.kind or "number" in (q.kind, s.kind):
        return True

    nouns = {k.partition(":")[2] for k in (q.kind, s.kind)}
    return nouns <= _PEOPLE


def _about_the_same(claim: str, q: Quantity, evidence: str) -> list[Quantity] | None:
    """The evidence's figures of the quantity's kind in the evidence sentence about the same thing: the one that
    shares most words with the claim's words around the quantity (then with the whole claim), when it states any.
    "Battery wear is covered for 24 months" is compared with "battery wear ... 12 months", not with the "2-year
    warranty" of the sentence before. When no sentence stands out, the figures of the sentences that share a word
    with the claim near the quantity; None when the evidence is one sentence."""
    from nlgeval_runtime.claims import content_words
    from nlgeval_runtime.sentences import split_sentences

    # once each, in order: a claim's evidence holds its aligned sentences and the pairs they make
    sentences = list(dict.fromkeys(split_sentences(evidence))) or [evidence]
    if len(sentences) < 2:
        return None
    found = re.search(r"[\s-]+".join(map(re.escape, q.text.split())), claim, re.I)  # "100 hour" in "100-hour"
    # the words around the quantity (the whole claim when the quantity was rewritten: "a quarter of" is "25%")
    start, end = (max(0, found.start() - 60), found.end() + 40) if found else (0, len(claim))
    near_words = set(content_words(claim[start:end] if found else claim))
    near_words -= set(content_words(q.text)) | _APPROX | _QUANTITY_WORDS  # "around", "over" say nothing of the topic
    everything = set(content_words(claim))
    ranked = sorted(
        ((len(near_words & set(content_words(s))), len(everything & set(content_words(s))), s) for s in sentences),
        reverse=True,
    )
    (best_near, best_all, best), (next_near, next_all, _) = ranked[0], ranked[1]
    if (best_near, best_all) > (next_near, next_all) and best_near >= 2:
        # a period may restate a frequency ("the 100-hour interval" for "every 100 hours"), not the reverse
        stated = [r for r in quantities(best) if r.kind == q.kind or q.kind == "duration" and r.kind == "frequency"]
        if stated:
            return stated
    # no sentence stands out: the figures of sentences on the claim's topic at all (sharing a word near the
    # quantity); a sentence that shares none is about something else, and its figures prove nothing
    topical = [r for near, _, s in ranked if near for r in quantities(s) if r.kind == q.kind]
    if topical or best_near < 2:
        return topical
    # the sentence about the claim's topic states none, and the next one goes on about it ("The city council
    # approved a new bridge. The project will cost 38 million euros."): its figures are about the same thing
    after = sentences.index(best) + 1
    if after < len(sentences) and _REFERS_BACK.match(sentences[after]):
        return [r for r in quantities(sentences[after]) if r.kind == q.kind]
    return topical


_REFERS_BACK = re.compile(r"\s*(?:it|its|this|that|these|those|they|their|he|she|his|her|the)\b", re.I)
#: where a claim passes from one thing to another: "X costs $12, whereas Y costs $29"
CLAUSE_BREAK = re.compile(
    r"(?:,\s*|\s+)(?:while|whereas|but|versus|against|compared with|and)\s+|;\s*|,\s+|(?<=[.!?])\s+(?=[A-Z])"
)


def own_clause(text: str, start: int, end: int) -> str:
    """The clause of ``text`` that holds ``text[start:end]``: up to the "while", "whereas", "but", "and", comma,
    semicolon or sentence end on either side."""
    left, right = 0, len(text)
    for m in CLAUSE_BREAK.finditer(text):
        if m.end() <= start:
            left = m.end()
        elif m.start() >= end:
            right = m.start()
            break
    return text[left:right]


def _time_of_day(claim: str, q: Quantity) -> bool:
    """Whether a bare number is a clock time in words ("twenty to twelve", "seven in the morning", "before four")."""
    if q.raw > 59 or any(c.isdigit() for c in q.text):
        return False
    lowered = claim.lower()
    at = lowered.find(q.text.lower())
    after = lowered[at + len(q.text) : at + len(q.text) + 24] if at >= 0 else ""
    before = lowered[max(0, at - 16) : at] if at >= 0 else ""
    return bool(
        re.match(r"\s*(?:to|past|in the (?:morning|afternoon|evening)|at night|o'clock|sharp|thirty|fifteen)\b", after)
        or re.search(r"\b(?:at|before|after|until|till|by|around|past|to)\s*$", before)
    )


def _nearest(claim: str, evidence: str, rivals: list[Quantity], q: Quantity | None = None) -> Quantity:
    """The rival the message names: one stated in the evidence sentence that shares most words with the claim
    (the evidence holds several aligned sentences; the first figure of the kind may be about something else), and
    not one that another figure of the claim states ("from 20 mg to 60 mg" against "from 20 mg to 40 mg": the
    source says 40 mg)."""
    from nlgeval_runtime.claims import content_words
    from nlgeval_runtime.sentences import split_sentences

    others = [o for o in quantities(claim, liberal=False) if q is not None and o.kind == q.kind and o.text != q.text]
    rivals = [r for r in rivals if not any(same_quantity(o, r) for o in others)] or rivals
    mine = set(content_words(claim))
    texts = {r.text for r in rivals}
    best, most = rivals[0], -1
    for sentence in split_sentences(evidence) or [evidence]:
        shared = len(mine & set(content_words(sentence)))
        found = [r for r in quantities(sentence) if r.text in texts]
        if found and shared > most:
            best, most = next((r for r in rivals if r.text == found[0].text), rivals[0]), shared
    return best


@functools.lru_cache(maxsize=1024)
def in_evidence_terms(claim: str, evidence: str) -> str:
    """``claim`` with each quantity that ``evidence`` states in other words written as the evidence writes it
    (the same kind and value: "a two-week trial" where the evidence says "a 14-day trial", "4.5 hours" for "four
    and a half hours", "40%" for "two fifths"), so that a claim-support model compares the words it reads best;
    ``claim`` itself when the evidence restates none of its quantities. A quantity the evidence does not state,
    or states otherwise, is left as the claim has it: this only rewords what the quantity reader found equal."""
    mine = [q for q in quantities(claim, liberal=False) if q.kind != "reference"]
    if not mine:
        return claim
    said = [s for s in quantities(evidence) if s.kind != "reference"]
    text = _rewrite(claim, liberal=False)[0]
    changed = False
    for q in mine:
        match = next((s for s in said if s.kind == q.kind and same_quantity(q, s)), None)
        literal = match and re.search(_spelled(match.text), evidence, re.I)
        if match is None or not literal:
            continue  # none, or the evidence words it otherwise too ("a quarter of" read as "25%")
        pattern = _spelled(q.text)
        if match.text.lower().replace("-", " ") == q.text.lower().replace("-", " "):
            # worded as the evidence words it once the fractions are read ("two fifths" -> "40%")
            changed = changed or not re.search(pattern, claim, re.I)
            continue
        found = re.search(rf"(?<![\w.,]){pattern}(?![\w]|[.,]\d)", text, re.I)
        if found:
            text = text[: found.start()] + literal.group(0) + text[found.end() :]
            changed = True
    return text if changed else claim


def _spelled(text: str) -> str:
    """A pattern of ``text`` as written in either spelling: "14 day" matches "14-day" and "14 day"."""
    return r"[\s-]+".join(re.escape(part) for part in text.split())


def _anchored(text: str, liberal: bool, after: bool = False) -> tuple[tuple[Quantity, frozenset[str]], ...]:
    """Each quantity of ``text`` with the content words written between it and the quantity before it (or the
    start of the text): what the text says the quantity is about, when the text names the thing first. With
    ``after``, the words between it and the next quantity (or the end): when the text gives the value first
    ("EUR 300 for economy cars and EUR 800 for SUVs")."""
    from nlgeval_runtime.claims import content_words

    rewritten, _ = _rewrite(text, liberal)
    placed: list[tuple[Quantity, int, int]] = []
    at = 0
    for q in quantities(text, liberal):
        where = rewritten.find(q.text, at)
        if where < 0:
            return ()  # a quantity this reading cannot place: no anchors rather than wrong ones
        placed.append((q, where, where + len(q.text)))
        at = where + len(q.text)
    bounds = (
        [0] + [end for _, _, end in placed] if not after else [start for _, start, _ in placed[1:]] + [len(rewritten)]
    )
    out = []
    for (q, start, end), bound in zip(placed, bounds):
        span = rewritten[end:bound] if after else rewritten[bound:start]
        out.append((q, frozenset(w for w in content_words(span) if not w[0].isdigit())))
    return tuple(out)


#: the words after a value that show the value comes first and its thing after it ("EUR 300 for economy cars")
_THEN_ITS_THING = frozenset({"for", "on", "at", "in", "to", "with", "towards", "toward"})  # not "per": a rate


def _value_first(text: str, liberal: bool) -> bool:
    """Whether ``text`` gives its values before the things they belong to: most of its quantities are followed by
    a preposition ("EUR 300 for economy cars and EUR 800 for SUVs"), not by "and", a comma or the end ("economy
    cars need €300 and SUVs €800")."""
    votes = _value_votes(text, liberal)
    return sum(votes) * 2 > len(votes)


def _value_votes(text: str, liberal: bool) -> list[bool]:
    """For each quantity of ``text``, whether a preposition follows it (its thing comes after it)."""
    rewritten, _ = _rewrite(text, liberal)
    votes = []
    at = 0
    for q in quantities(text, liberal):
        where = rewritten.find(q.text, at)
        if where < 0:
            return [True]  # a quantity this reading cannot place: read neither way
        at = where + len(q.text)
        following = re.match(r"\s*([A-Za-z]+)", rewritten[at:])
        votes.append(following is not None and following.group(1).lower() in _THEN_ITS_THING)
    return votes


@functools.lru_cache(maxsize=32)
def _sentences_of(source: str) -> tuple[str, ...]:
    from nlgeval_runtime.sentences import split_sentences

    return tuple(split_sentences(source) or [source])


@functools.lru_cache(maxsize=32)
def _anchored_sentences(source: str, after: bool = False) -> tuple[tuple[tuple[Quantity, frozenset[str]], ...], ...]:
    """:func:`_anchored` of each sentence of ``source``, read once for every claim checked against it."""
    return tuple(_anchored(sentence, liberal=True, after=after) for sentence in _sentences_of(source))


def swapped_values(claim: str, source: str) -> list[tuple[Quantity, Quantity]]:
    """Two values of one kind that a source sentence gives to two things and the claim gives the other way round:
    "the midterm is worth 25% and the final 35%" against "the midterm is worth 35% of the grade and the final
    exam 25%", or "€800 for economy cars and €300 for SUVs" against "EUR 300 for economy cars and EUR 800 for
    SUVs". ``(first, second)`` for each such pair.

    Fires only when each value's own words (those written before it, back to the value before; or, read the
    other way on both sides, those written after it up to the next value) are found beside the other value in
    the sentence and not beside its own, on both sides: a claim that names its things on the other side of the
    values than the sentence does, or in words the sentence does not use, is left to the head."""
    found: list[tuple[Quantity, Quantity]] = []
    for after in (False, True):
        if after and not _value_first(claim, liberal=False):
            continue  # read value-first only when written so: "€800 for economy cars", not "economy cars need €300"
        mine = _anchored(claim, liberal=False, after=after)
        for (a, words_a), (b, words_b) in zip(mine, mine[1:]):
            if a.kind != b.kind or same_quantity(a, b) or not words_a or not words_b:
                continue
            if any((a, b) == pair for pair in found):
                continue
            for sentence, theirs in zip(_sentences_of(source), _anchored_sentences(source, after)):
                votes = _value_votes(sentence, liberal=True)
                if (sum(votes) * 2 > len(votes)) != after or not after and any(votes):
                    continue  # read each way only where the sentence is written so, never a mixed one
                at_a = [w for q, w in theirs if q.kind == a.kind and same_quantity(a, q)]
                at_b = [w for q, w in theirs if q.kind == b.kind and same_quantity(b, q)]
                if len(at_a) != 1 or len(at_b) != 1:
                    continue
                own_a, own_b = words_a - words_b, words_b - words_a  # the words that tell the two apart
                if own_a & at_b[0] and own_b & at_a[0] and not own_a & at_a[0] and not own_b & at_b[0]:
                    found.append((a, b))
                    break
    return found
