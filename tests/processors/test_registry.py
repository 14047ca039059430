"""Tests for the built-in processor registry."""

from __future__ import annotations

import processors
from flowcore import Processor


def test_registry_names_match_classes_and_exports() -> None:
    """Each registry key is its class's name, and each class is exported."""
    for name, cls in processors.BUILTIN_PROCESSORS.items():
        assert cls.__name__ == name
        assert issubclass(cls, Processor)
        assert getattr(processors, name) is cls
        assert name in processors.__all__
