"""Tests for the registries of processors and services: built-ins, plugins, lookup, usage pages."""

from __future__ import annotations

from importlib import metadata

import pytest

from flowcore.errors import InvalidProcessorError, UnknownProcessorError
from flowcore.registry import (
    BUILTIN_SERVICES,
    ENTRY_POINT_GROUP,
    SERVICE_ENTRY_POINT_GROUP,
    available_processors,
    available_services,
    describe,
    describe_service,
    processor_class,
    relationships_of,
    service_class,
    service_for_nifi_type,
)
from flowcore.services import MapCacheService
from flowcore.ssl_context import StandardSSLContextService
from processors import BUILTIN_PROCESSORS, LogAttribute, RouteOnAttribute, SplitText


def plugins(monkeypatch: pytest.MonkeyPatch, **entries: str) -> None:
    points = [
        metadata.EntryPoint(name, value, ENTRY_POINT_GROUP) for name, value in entries.items()
    ]

    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        return points if group == ENTRY_POINT_GROUP else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_builtins_are_available_by_name() -> None:
    """Every built-in processor is listed, sorted by name."""
    found = available_processors()
    assert set(BUILTIN_PROCESSORS) <= set(found)
    assert list(found) == sorted(found)
    assert processor_class("SplitText") is SplitText


def test_installed_plugins_join_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A class registered in the flowcore.processors group is available under its name."""
    plugins(monkeypatch, AuditLog="processors.log_attribute:LogAttribute")
    assert processor_class("AuditLog") is LogAttribute


@pytest.mark.parametrize(
    ("entries", "message"),
    [
        ({"Broken": "no_such_module:Thing"}, "failed to load: ModuleNotFoundError"),
        ({"NotAProcessor": "pathlib:Path"}, "not a flowcore Processor subclass"),
        ({"SplitText": "processors.log_attribute:LogAttribute"}, "reuses the name of a built-in"),
    ],
)
def test_bad_plugins_are_named(
    monkeypatch: pytest.MonkeyPatch, entries: dict, message: str
) -> None:
    """A plugin that fails to load, is not a Processor, or shadows a built-in is refused by name."""
    plugins(monkeypatch, **entries)
    with pytest.raises(InvalidProcessorError, match=message):
        available_processors()


def test_unknown_names_suggest_near_ones() -> None:
    """A typo gets the closest names."""
    with pytest.raises(UnknownProcessorError, match="did you mean SplitText"):
        processor_class("SplitTxt")


def test_usage_page_lists_properties_and_relationships() -> None:
    """describe() shows NiFi names, keys, defaults, allowable values and relationships."""
    page = describe(SplitText)
    assert page.startswith("SplitText\n=========\n")
    assert "  Line Split Count (line_split_count) [required" in page
    assert "  Remove Trailing Newlines (remove_trailing_newlines)" in page
    assert "    default: true" in page
    assert "Relationships:\n  original: " in page
    assert "  splits: " in page
    assert "Writes attributes:" in page


def test_usage_page_wraps_keeping_each_lines_indentation() -> None:
    """describe(width=...) wraps prose under itself and `name: text` lines two columns further."""
    page = describe(RouteOnAttribute, width=60)
    lines = page.splitlines()
    assert max(len(line) for line in lines) <= 60
    start = next(i for i, line in enumerate(lines) if line.startswith("  <one per dynamic"))
    dynamic = lines[start:]
    assert dynamic[1].startswith("    ")
    assert not dynamic[1].startswith("     ")
    assert describe(RouteOnAttribute).replace("\n", " ").split() == page.replace("\n", " ").split()


def test_relationships_of_lists_the_dynamic_relationship_last() -> None:
    """A processor's declared relationships, then the one it makes per dynamic property."""
    assert [r.name for r in relationships_of(RouteOnAttribute)] == [
        "matched",
        "unmatched",
        "<one per dynamic property>",
    ]
    assert relationships_of(SplitText) == SplitText.relationships


# --- controller services -----------------------------------------------------------------------


def service_plugins(monkeypatch: pytest.MonkeyPatch, **entries: str) -> None:
    points = [
        metadata.EntryPoint(name, value, SERVICE_ENTRY_POINT_GROUP)
        for name, value in entries.items()
    ]

    def entry_points(*, group: str) -> list[metadata.EntryPoint]:
        return points if group == SERVICE_ENTRY_POINT_GROUP else []

    monkeypatch.setattr(metadata, "entry_points", entry_points)


def test_services_are_found_by_name_and_by_nifi_type() -> None:
    """Built-in services by simple name, NiFi's qualified type, or a NiFi 1.x type's name."""
    assert available_services() == BUILTIN_SERVICES
    assert service_class("MapCacheService") is MapCacheService
    assert service_class("org.apache.nifi.ssl.StandardSSLContextService") is (
        StandardSSLContextService
    )
    assert service_for_nifi_type("DistributedMapCacheClientService") is MapCacheService
    reader = BUILTIN_SERVICES["JsonTreeReader"]
    assert service_for_nifi_type("org.apache.nifi.json.JsonTreeReader") is reader
    assert service_for_nifi_type("org.apache.nifi.cef.CEFReader") is None
    with pytest.raises(UnknownProcessorError, match="did you mean MapCacheService"):
        service_class("MapCacheServce")


def test_installed_services_join_the_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """A package's service registered under flowcore.services is listed and found."""
    service_plugins(monkeypatch, LookupTable="tests.flowcore.test_controller_service:LookupTable")
    found = service_for_nifi_type("com.example.LookupTable")
    assert found is not None
    assert found.__name__ == "LookupTable"
    assert "LookupTable" in available_services()


def test_a_plugin_that_is_no_service_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A registered service that is not a ControllerService fails naming the entry point."""
    service_plugins(monkeypatch, Bad="processors.log_attribute:LogAttribute")
    with pytest.raises(InvalidProcessorError, match=r"'Bad'.*not a flowcore ControllerService"):
        available_services()


def test_a_service_usage_page_lists_interfaces_and_properties() -> None:
    """The page names the interfaces, NiFi types and properties (sensitive ones flagged)."""
    page = describe_service(StandardSSLContextService)
    assert "Implements: SSLContextService" in page
    assert "Keystore Password (keystore_password) [sensitive]" in page
    assert "NiFi name: key-password" in page
