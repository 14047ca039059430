"""Fixtures for the NiFi interop tests: the sample flows, and the JSON builders beside them."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))  # _nifi_json, the builders the test modules share

#: The sample flows, written from NiFi's schema (nifi-api's Versioned* classes).
SAMPLES = HERE / "samples"


@pytest.fixture
def samples() -> Path:
    """The directory of the sample NiFi flows."""
    return SAMPLES
