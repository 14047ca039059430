"""NiFi's TestLookupRecord mocks and setup as flowcore services and runners, for the
test_lookup_record* modules."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from flowcore.controller_service import ServiceContext
from flowcore.testing import TestRunner
from processors import LookupRecord
from processors.lookup_services import RecordLookupService, StringLookupService
from processors.record_services import CSVRecordSetWriter, JsonTreeReader

PEOPLE_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "people",
        "fields": [
            {"name": "name", "type": ["string", "null"]},
            {"name": "age", "type": ["int", "null"]},
            {"name": "sport", "type": ["string", "null"]},
        ],
    }
)
PEOPLE = b'[{"name": "John Doe", "age": 48}, {"name": "Jane Doe", "age": 47}, ' + (
    b'{"name": "Jimmy Doe", "age": 14}]'
)
SPORTS = {"John Doe": "Soccer", "Jane Doe": "Basketball", "Jimmy Doe": "Football"}


class MapLookup(StringLookupService):
    """NiFi's test MapLookup: values are dynamic properties, the coordinate is ``lookup``."""

    required_keys: ClassVar = frozenset({"lookup"})
    supports_dynamic_properties: ClassVar = True
    contexts: ClassVar[list[Mapping[str, str]]] = []

    def on_enabled(self, context: ServiceContext) -> None:
        """Keep the values."""
        self.values = dict(self.dynamic_properties)

    def lookup(self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None):
        """The value of the ``lookup`` coordinate's text."""
        MapLookup.contexts.append(dict(context or {}))
        key = coordinates.get("lookup")
        return None if key is None else self.values.get(str(key))


class InPlaceLookup(MapLookup):
    """NiFi's MapLookupForInPlaceReplacement: the first coordinate, whatever its name."""

    def lookup(self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None):
        """The value of the first coordinate."""
        key = next(iter(coordinates.values()))
        return None if key is None else self.values.get(str(key))


class RecordLookup(RecordLookupService):
    """NiFi's test RecordLookup: each dynamic property's value is a record as JSON."""

    required_keys: ClassVar = frozenset({"lookup"})
    supports_dynamic_properties: ClassVar = True

    def on_enabled(self, context: ServiceContext) -> None:
        """Parse the records."""
        self.values = {k: json.loads(v) for k, v in self.dynamic_properties.items()}

    def lookup(self, coordinates: Mapping[str, Any], context: Mapping[str, str] | None = None):
        """The record of the ``lookup`` coordinate."""
        return self.values.get(coordinates.get("lookup"))


def people_runner(
    values: Mapping[str, str] = SPORTS,
    *,
    content: bytes = PEOPLE,
    schema: str = PEOPLE_SCHEMA,
    service: object = None,
    **properties: str,
) -> TestRunner:
    """NiFi's setup: name/age/sport records, lookup /name, result /sport, matched/unmatched."""
    settings = {
        "record_reader": "reader",
        "record_writer": "writer",
        "lookup_service": "lookup",
        "lookup": "/name",
        "result_recordpath": "/sport",
        "routing_strategy": "route-to-matched-unmatched",
        **properties,
    }
    runner = TestRunner(LookupRecord(**{k: v for k, v in settings.items() if v is not None}))
    runner.add_service(
        JsonTreeReader("reader", schema_access_strategy="schema-text-property", schema_text=schema)
    )
    runner.add_service(CSVRecordSetWriter("writer", include_header_line="false"))
    runner.add_service(service or MapLookup("lookup", **values))
    return runner


def run_once(runner: TestRunner, content: bytes = PEOPLE, **attributes: str) -> TestRunner:
    """Enqueue *content* and run once."""
    runner.enqueue(content, attributes)
    runner.run()
    return runner
