"""The application under test: a knowledge-grounded chatbot that turns a fact into a friendly reply."""

from __future__ import annotations

import json
from pathlib import Path

CONVERSATIONS = json.loads((Path(__file__).parent / "conversations.json").read_text(encoding="utf-8"))


def reply(history: list[str], fact: str) -> str:
    """A template bot: acknowledge the last turn, share the fact, ask a follow-up question."""
    fact = fact.strip().rstrip(" .")
    return f"i do , and here is something fun : {fact} . have you heard that before ?"
