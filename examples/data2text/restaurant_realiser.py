"""The application under test: a template realiser for E2E-style restaurant meaning representations."""

from __future__ import annotations

import json
from pathlib import Path

RESTAURANTS = json.loads((Path(__file__).parent / "restaurants.json").read_text(encoding="utf-8"))


def realise(mr: dict[str, str]) -> str:
    """Turn slot-value pairs into one or two sentences."""
    article = "an" if mr["food"][0].lower() in "aeiou" else "a"
    text = f"{mr['name']} is {article} {mr['food']} {mr['eatType']} in the {mr['area']} area"
    if "near" in mr:
        text += f" near {mr['near']}"
    text += (
        f", with prices {mr['priceRange']}."
        if mr["priceRange"].startswith("less")
        else f" with {mr['priceRange']} prices."
    )
    text += " It is family friendly." if mr.get("familyFriendly") == "yes" else " It is not family friendly."
    return text
