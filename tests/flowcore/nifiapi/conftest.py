"""The sample NiFi Python processors, loaded once from ``samples/`` as NiFi loads a directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from nifiapi._loader import PythonExtensions, load_python_extensions

SAMPLES = Path(__file__).parent / "samples"


@pytest.fixture(scope="session")
def extensions() -> PythonExtensions:
    """Every sample processor, by class name."""
    return load_python_extensions([SAMPLES])
