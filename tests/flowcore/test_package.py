"""Tests for the package surface: import cost and the public names."""

from __future__ import annotations

import subprocess
import sys

import flowcore


def test_import_flowcore_does_not_import_pyspark() -> None:
    """Importing flowcore (and the processors and repositories) never imports pyspark."""
    code = (
        "import sys, flowcore, flowcore.testing, processors, repositories; "
        "sys.exit('pyspark' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_all_is_sorted_and_resolves() -> None:
    """__all__ is sorted isort-style (constants, classes, functions) and every name exists."""

    def isort_key(name: str) -> tuple[int, str]:
        group = 0 if name.isupper() else 1 if name[0].isupper() else 2
        return group, name

    assert list(flowcore.__all__) == sorted(flowcore.__all__, key=isort_key)
    for name in flowcore.__all__:
        assert hasattr(flowcore, name), name
