"""The slots of a meaning representation, and whether an utterance conveys their values.

Data-to-text informativeness asks whether the utterance gives the information of its input. A reader checks
that slot by slot: is the restaurant's name there, its address, its phone number, its price range? This
module reads a meaning representation in the common forms of data-to-text corpora and names the slot values
an utterance does not state.

Forms read (``parse_mr``):

- dialogue acts, as in SF restaurants/hotels (Wen et al., EMNLP 2015):
  ``inform(name='red door cafe';food=none;address='1608 bush street')``, separated by ``;`` or ``,``;
- bracketed attributes, as in E2E (Novikova et al., SIGDIAL 2017): ``name[The Eagle], food[French]``;
- a JSON object of slot names to values.

Values that are not stated as words of their own are not checked: ``dont_care``, ``none``, yes/no flags
(a reader accepts "does not allow children" for ``kids_allowed=no``), a slot with no value (``request(area)``)
and the ``type`` of the venue (the utterance may say "place").
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

#: values that are not words of the utterance (see the module's docstring)
UNCHECKED_VALUES = {"", "dont_care", "dontcare", "none", "yes", "no", "yes or no", "?", "true", "false", "null"}
UNCHECKED_SLOTS = {"type", "eattype"}

_ACT = re.compile(r"^\s*\??\s*([A-Za-z_]+)\s*\((.*)\)\s*$", re.S)
_BRACKETS = re.compile(r"([^,\[\]]+?)\s*\[([^\]]*)\]")
_PAIR = re.compile(r"""\s*([A-Za-z_][\w ]*?)\s*(?:=\s*('[^']*'|"[^"]*"|[^;,]*))?\s*(?:[;,]|$)""")


@dataclass(frozen=True)
class Slot:
    name: str
    value: str | None

    def __str__(self) -> str:
        return self.name if self.value is None else f"{self.name}={self.value!r}"


def parse_mr(text: str) -> list[Slot]:
    """The slots of a meaning representation (see the module's docstring for the forms read); ValueError
    naming the forms when ``text`` is none of them."""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError as exc:
            raise ValueError(f"the meaning representation is not valid JSON: {exc}") from None
        if not isinstance(data, dict):
            raise ValueError("a JSON meaning representation must be an object of slot names to values")
        return [Slot(str(k), None if v is None else str(v)) for k, v in data.items()]
    act = _ACT.match(stripped)
    if act:
        body = act.group(2)
        slots = []
        for match in _PAIR.finditer(body):
            name, value = match.group(1).strip(), match.group(2)
            if not name:
                continue
            slots.append(Slot(name, None if value is None else value.strip().strip("'\"")))
        return slots
    pairs = _BRACKETS.findall(stripped)
    if pairs and not _BRACKETS.sub("", stripped).replace(",", "").strip():
        return [Slot(name.strip(), value.strip()) for name, value in pairs]
    raise ValueError(
        f"cannot read the meaning representation {stripped[:60]!r}: give dialogue acts "
        "(\"inform(name='x';area='y')\"), bracketed attributes (\"name[X], food[French]\") or a JSON object"
    )


#: address words and their abbreviations ("925 cortland ave" states "925 cortland avenue")
_ABBREVIATIONS = {
    "avenue": "ave",
    "street": "st",
    "boulevard": "blvd",
    "road": "rd",
    "drive": "dr",
    "place": "pl",
    "square": "sq",
    "saint": "st",
    "north": "n",
    "south": "s",
    "east": "e",
    "west": "w",
}


def _words(text: str) -> list[str]:
    return [_ABBREVIATIONS.get(w, w) for w in re.findall(r"[a-z0-9]+", text.lower())]


def conveys(utterance: str, slot: Slot) -> bool | None:
    """Whether ``utterance`` states the slot's value; None where the value is not checked."""
    if slot.value is None or slot.name.lower().replace("_", "") in UNCHECKED_SLOTS:
        return None
    value = slot.value.strip().lower()
    if value in UNCHECKED_VALUES:
        return None
    said = _words(utterance)
    wanted = _words(value)
    if not wanted:
        return None
    if "".join(wanted) in "".join(said):  # "sea food" for "seafood", "415 566 7020" for "4155667020"
        return True
    digits = [w for w in wanted if w.isdigit()]
    if digits and not all(d in "".join(w for w in said if w.isdigit()) for d in digits):
        return False
    stems = {w[:5] for w in said}  # "moderately" states "moderate"
    content = [w for w in wanted if not w.isdigit() and len(w) > 2 and w not in _GLUE]
    if not content:
        return True
    found = sum(1 for w in content if w[:5] in stems)
    return found == len(content) if len(content) <= 2 else found >= 2 * len(content) / 3


_GLUE = {"and", "the", "for", "with", "near", "from"}


def missing_slots(utterance: str, mr: str) -> list[Slot]:
    """The checked slots of ``mr`` whose value ``utterance`` does not state."""
    return [slot for slot in parse_mr(mr) if conveys(utterance, slot) is False]
