"""Fixtures for the analysis tests."""

import pytest
from analysis_data import SEEDS


@pytest.fixture(params=SEEDS)
def seed(request):
    return request.param
