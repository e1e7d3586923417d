"""Fixtures of the data-to-text suite."""

from __future__ import annotations

import pytest

from restaurant_realiser import RESTAURANTS, realise


@pytest.fixture
def describe():
    return realise


@pytest.fixture(params=RESTAURANTS, ids=[r["mr"]["name"] for r in RESTAURANTS])
def restaurant(request):
    return request.param
