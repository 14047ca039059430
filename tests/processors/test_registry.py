"""Tests for the built-in processor registry."""

from __future__ import annotations

import re
from pathlib import Path

import processors
from flowcore import Processor


def test_registry_names_match_classes_and_exports() -> None:
    """Each registry key is its class's name, and each class is exported."""
    for name, cls in processors.BUILTIN_PROCESSORS.items():
        assert cls.__name__ == name
        assert issubclass(cls, Processor)
        assert getattr(processors, name) is cls
        assert name in processors.__all__


def test_no_code_probes_a_context_session_or_processor_for_a_capability() -> None:
    """Hooks are typed with the context they get, so no code asks ``hasattr`` what it is."""
    root = Path(__file__).resolve().parents[2]
    probe = re.compile(r"hasattr\(\s*(\w+\.)*_*(context|session|processor)\b")
    found = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for package in ("flowcore", "processors")
        for path in sorted((root / package).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if probe.search(line)
    ]
    assert found == []
