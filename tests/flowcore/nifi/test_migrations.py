"""Tests for flowcore.nifi.migrations: NiFi's 1.x -> 2.x property renames, read both ways."""

from __future__ import annotations

import pytest

from flowcore.nifi.migrations import RENAMED, is_removed, known_name
from flowcore.registry import available_processors


def _declares(kind: str):  # type: ignore[no-untyped-def]
    processor = available_processors()[kind]()

    def declares(name: str) -> bool:
        found = processor.resolve_descriptor(name)
        return found is not None and not found.dynamic

    return declares


def test_a_1x_name_finds_the_2x_property() -> None:
    """UpdateAttribute's canonical-value-lookup-cache-size is its Cache Value Lookup Cache Size."""
    declares = _declares("UpdateAttribute")
    found = known_name("UpdateAttribute", "canonical-value-lookup-cache-size", declares)
    assert found in ("canonical-value-lookup-cache-size", "Cache Value Lookup Cache Size")
    assert known_name("GenerateFlowFile", "generate-ff-custom-text", _declares("GenerateFlowFile"))


def test_a_2x_name_finds_a_property_flowcore_declares_by_its_1x_name() -> None:
    """LogAttribute's 2.x 'Log Prefix' finds flowcore's 'Log prefix' (the table read backwards)."""
    declares = _declares("LogAttribute")
    assert known_name("LogAttribute", "Log Prefix", declares) is not None
    regex = "Attributes to Log Regular Expression"
    assert known_name("LogAttribute", regex, declares) == "attributes-to-log-regex"


def test_an_unknown_name_stays_unknown() -> None:
    """A name no rename covers is not found (it may be a dynamic property)."""
    assert known_name("UpdateAttribute", "my.attribute", _declares("UpdateAttribute")) is None


@pytest.mark.parametrize(
    ("kind", "old", "new"),
    [
        (kind, old, new)
        for kind, renames in sorted(RENAMED.items())
        if kind in available_processors()
        for old, new in renames.items()
    ],
)
def test_every_rename_reaches_a_property_of_flowcores_processor(
    kind: str, old: str, new: str
) -> None:
    """For the processors flowcore has, both names of every rename resolve to a declared one."""
    declares = _declares(kind)
    assert known_name(kind, old, declares) is not None
    assert known_name(kind, new, declares) is not None


def test_removed_properties_are_listed_per_processor() -> None:
    """ListFile's Distributed Cache Service is gone in NiFi 2; nothing else of it is."""
    assert is_removed("ListFile", "Distributed Cache Service")
    assert not is_removed("ListFile", "Input Directory")
    assert not is_removed("GetFile", "Distributed Cache Service")
