"""Fixtures of the summariser suite."""
from __future__ import annotations

import pytest

from summarizer import ARTICLES, lead_summary


@pytest.fixture
def summarize():
    return lead_summary


@pytest.fixture(params=ARTICLES, ids=[a["id"] for a in ARTICLES])
def article(request):
    return request.param
