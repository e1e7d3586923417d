"""Fixtures of the chatbot suite."""

from __future__ import annotations

import pytest

from chatbot import CONVERSATIONS, reply


@pytest.fixture
def chatbot():
    return reply


@pytest.fixture(params=CONVERSATIONS, ids=[c["id"] for c in CONVERSATIONS])
def conversation(request):
    return request.param
