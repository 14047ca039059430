"""Tests for the flowcore.definition package: its re-exports, loaded on first use."""

from __future__ import annotations

import importlib

import pytest

import flowcore.definition
from flowcore.definition.flow import FlowDefinition


def test_every_exported_name_is_its_defining_modules_object() -> None:
    """Each name of ``__all__`` (sorted) is the object of the module that defines it."""
    assert flowcore.definition.__all__ == sorted(flowcore.definition.__all__)
    for name in flowcore.definition.__all__:
        module = importlib.import_module(flowcore.definition._DEFINED_IN[name])
        assert getattr(flowcore.definition, name) is getattr(module, name), name
    from flowcore.definition import FlowDefinition as exported

    assert exported is FlowDefinition
    assert set(flowcore.definition.__all__) <= set(dir(flowcore.definition))


def test_an_unknown_name_is_an_attribute_error() -> None:
    """A name the package does not export fails as a missing attribute, naming it."""
    with pytest.raises(AttributeError, match="'no_such_name'"):
        _ = flowcore.definition.no_such_name
