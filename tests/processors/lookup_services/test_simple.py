"""Tests for SimpleKeyValueLookupService, ported from NiFi's TestSimpleKeyValueLookupService."""

from __future__ import annotations

from flowcore.controller_service import ServiceContext
from flowcore.registry import service_class
from processors.lookup_services import SimpleKeyValueLookupService


def test_simple_key_value_lookup_service() -> None:
    """NiFi's testSimpleKeyValueLookupService: dynamic properties are the map."""
    service = SimpleKeyValueLookupService("simple", key1="value1", key2="value2")
    assert service.validate() == ()
    enabled = service.enable(ServiceContext(service))
    assert enabled.lookup({"key": "key1"}) == "value1"
    assert enabled.lookup({"key": "key2"}) == "value2"
    assert enabled.lookup({"key": "key3"}) is None


def test_no_key_coordinate_is_no_value() -> None:
    """Coordinates without ``key`` (or none at all) find nothing."""
    service = SimpleKeyValueLookupService("simple", key1="value1")
    enabled = service.enable(ServiceContext(service))
    assert enabled.lookup({}) is None
    assert enabled.lookup({"other": "key1"}) is None


def test_values_take_environment_expressions() -> None:
    """A value's Expression Language is evaluated when the service is enabled."""
    service = SimpleKeyValueLookupService("simple", greeting="${literal('hi'):toUpper()}")
    enabled = service.enable(ServiceContext(service))
    assert enabled.lookup({"key": "greeting"}) == "HI"


def test_registered_under_nifi_type() -> None:
    """NiFi's type maps onto the service, which is a StringLookupService."""
    cls = service_class("org.apache.nifi.lookup.SimpleKeyValueLookupService")
    assert cls is SimpleKeyValueLookupService
    assert SimpleKeyValueLookupService("s").implements_interface("StringLookupService")
    assert SimpleKeyValueLookupService("s").implements_interface("LookupService")
