"""Fixtures of the summariser suite."""

from __future__ import annotations

import os

import pytest

from summarizer import ARTICLES, SUMMARIZERS


@pytest.fixture
def summarize():
    # SUMMARIZER=tail switches to a worse variant, SUMMARIZER=salad to a broken one (word salad): record a
    # baseline with the default, then compare.
    return SUMMARIZERS[os.environ.get("SUMMARIZER", "lead")]


@pytest.fixture(params=ARTICLES, ids=[a["id"] for a in ARTICLES])
def article(request):
    return request.param
