"""Tests for the package surface: import cost and the public names."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

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


def test_internals_are_not_exported_but_stay_importable() -> None:
    """Storage and engine values (claims, sink jobs, the definition's parts) are not part of
    ``flowcore``'s surface; each is still importable from the module that defines it."""
    internals = {
        "flowcore.flowfile": ("Attributes", "ContentClaim", "ResourceClaim"),
        "flowcore.definition.flow": ("Component", "Connection", "FlowDefinition"),
        "flowcore.processor": ("ProcessorKind",),
        "flowcore.processor.kinds": ("SinkJobs",),
    }
    for module, names in internals.items():
        for name in names:
            assert name not in flowcore.__all__, name
            assert hasattr(importlib.import_module(module), name), f"{module}.{name}"


def test_a_name_moved_out_of_the_package_still_imports_with_a_warning() -> None:
    """Code written against the wider package keeps working: the name resolves to the same
    object, and a DeprecationWarning names the module to import it from."""
    from flowcore.processor import ProcessorKind

    with pytest.warns(DeprecationWarning, match=r"import it from flowcore\.processor"):
        moved = flowcore.ProcessorKind
    assert moved is ProcessorKind
