"""Tests for LookupRecord, ported from NiFi's TestLookupRecord (JSON/CSV services for its mocks).

NiFi's MockRecordParser becomes a JsonTreeReader with the same schema, and its MockRecordWriter
(values joined by commas, no header) a CSVRecordSetWriter without a header line, so contents
compare byte for byte; the mime.type is the CSV writer's (tests/processors/_lookup_record.py).
flowcore's own tests of the reads and answers are in test_lookup_record_reads.py.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import ClassVar

from flowcore.testing import TestRunner
from processors import LookupRecord
from processors.lookup_services import SimpleKeyValueLookupService
from processors.record_services import JsonRecordSetWriter, JsonTreeReader
from tests.processors._lookup_record import (
    SPORTS,
    InPlaceLookup,
    MapLookup,
    RecordLookup,
    people_runner,
    run_once,
)


def test_all_match() -> None:
    """NiFi's testAllMatch: every record matched, the result written at /sport."""
    runner = run_once(people_runner())
    runner.assert_all_flowfiles_transferred("matched", 1)
    out = runner.flowfiles_for("matched")[0]
    out.assert_attribute_equals("record.count", "3")
    out.assert_attribute_equals("mime.type", "text/csv")
    out.assert_content_equals("John Doe,48,Soccer\nJane Doe,47,Basketball\nJimmy Doe,14,Football\n")


def test_flowfile_attributes_passed() -> None:
    """NiFi's testFlowfileAttributesPassed: the lookup context is the FlowFile's attributes."""
    MapLookup.contexts.clear()
    runner = run_once(people_runner(), **{"schema.name": "person", "something_something": "test"})
    runner.assert_all_flowfiles_transferred("matched", 1)
    assert MapLookup.contexts
    for context in MapLookup.contexts:
        assert context["schema.name"] == "person"
        assert context["something_something"] == "test"


def test_all_unmatched() -> None:
    """NiFi's testAllUnmatched: no value, every record unmatched and unchanged."""
    runner = run_once(people_runner({}))
    runner.assert_all_flowfiles_transferred("unmatched", 1)
    out = runner.flowfiles_for("unmatched")[0]
    out.assert_attribute_equals("record.count", "3")
    out.assert_content_equals("John Doe,48,\nJane Doe,47,\nJimmy Doe,14,\n")


def test_mixture_of_match() -> None:
    """NiFi's testMixtureOfMatch: one FlowFile to matched, one to unmatched."""
    runner = run_once(people_runner({"John Doe": "Soccer", "Jimmy Doe": "Football"}))
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("matched", 1)
    runner.assert_transfer_count("unmatched", 1)
    matched = runner.flowfiles_for("matched")[0]
    matched.assert_attribute_equals("record.count", "2")
    matched.assert_content_equals("John Doe,48,Soccer\nJimmy Doe,14,Football\n")
    unmatched = runner.flowfiles_for("unmatched")[0]
    unmatched.assert_attribute_equals("record.count", "1")
    unmatched.assert_content_equals("Jane Doe,47,\n")


def test_all_match_but_first_route_to_success() -> None:
    """NiFi's testAllMatchButFirstRouteToSuccess: one FlowFile to success, all records."""
    runner = run_once(
        people_runner(
            {"Jane Doe": "Soccer", "Jimmy Doe": "Football"}, routing_strategy="route-to-success"
        )
    )
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "3")
    out.assert_content_equals("John Doe,48,\nJane Doe,47,Soccer\nJimmy Doe,14,Football\n")


def test_result_path_not_found() -> None:
    """NiFi's testResultPathNotFound: a field the schema lacks is added after the others."""
    runner = run_once(people_runner(result_recordpath="/other"))
    runner.assert_all_flowfiles_transferred("matched", 1)
    out = runner.flowfiles_for("matched")[0]
    out.assert_attribute_equals("record.count", "3")
    out.assert_content_equals(
        "John Doe,48,,Soccer\nJane Doe,47,,Basketball\nJimmy Doe,14,,Football\n"
    )


def test_lookup_path_not_found() -> None:
    """NiFi's testLookupPathNotFound: a coordinate path selecting nothing is unmatched."""
    runner = run_once(people_runner(lookup="/other"))
    runner.assert_all_flowfiles_transferred("unmatched", 1)
    runner.flowfiles_for("unmatched")[0].assert_content_equals(
        "John Doe,48,\nJane Doe,47,\nJimmy Doe,14,\n"
    )


def test_unparseable_data() -> None:
    """NiFi's testUnparseableData: a record that does not parse fails the FlowFile, unchanged."""
    content = b'[{"name": "John Doe", "age": 48}, {"name": "Jane Doe", "age": "old"}]'
    runner = run_once(people_runner(), content)
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_attribute_not_exists("record.count")
    out.assert_content_equals(content)


def test_no_result_path() -> None:
    """NiFi's testNoResultPath: without Result RecordPath records match but stay as they were."""
    runner = run_once(people_runner(result_recordpath=None))
    runner.assert_all_flowfiles_transferred("matched", 1)
    runner.flowfiles_for("matched")[0].assert_content_equals(
        "John Doe,48,\nJane Doe,47,\nJimmy Doe,14,\n"
    )


def test_multiple_lookup_paths() -> None:
    """NiFi's testMultipleLookupPaths: a path selecting several values is unmatched."""
    runner = run_once(people_runner(lookup="/*"))
    runner.assert_all_flowfiles_transferred("unmatched", 1)
    runner.flowfiles_for("unmatched")[0].assert_content_equals(
        "John Doe,48,\nJane Doe,47,\nJimmy Doe,14,\n"
    )


def test_literal_coordinate() -> None:
    """NiFi's testLiteralCoordinate: a function giving a literal is a coordinate too."""
    runner = run_once(
        people_runner({"lookupKey": "lookupValue"}, lookup="toString('lookupKey', 'UTF-8')")
    )
    runner.assert_all_flowfiles_transferred("matched", 1)


def test_invalid_unless_a_valid_coordinate_is_added() -> None:
    """NiFi's testInvalidUnlessAllRequiredPropertiesAdded: coordinates must be RecordPaths."""
    runner = people_runner()
    runner.processor.remove_property("lookup")
    runner.assert_not_valid()
    runner.set_property("lookup", "xx")
    runner.assert_not_valid()
    runner.set_property("lookup", "/name")
    runner.assert_valid()


def test_missing_required_key_fails_naming_it() -> None:
    """A coordinate the service requires but no property gives fails, naming the key."""
    runner = people_runner(lookup=None, hello="/name")
    run_once(runner)
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_relationships_follow_routing_strategy() -> None:
    """Routing Strategy decides the relationships, as NiFi's onPropertyModified."""
    assert LookupRecord(routing_strategy="route-to-success").relationship_names() == (
        "success",
        "failure",
    )
    assert LookupRecord(routing_strategy="route-to-matched-unmatched").relationship_names() == (
        "matched",
        "unmatched",
        "failure",
    )


def test_nifi_property_names() -> None:
    """NiFi's internal names (migrateProperties' old ones) still name the properties."""
    processor = LookupRecord(
        **{
            "record-reader": "r",
            "record-writer": "w",
            "lookup-service": "l",
            "result-contents": "record-fields",
            "routing-strategy": "route-to-success",
            "record-update-strategy": "use-property",
            "result-record-path": "/x",
            "record-path-lookup-miss-result-cache-size": "10",
            "key": "/k",
        }
    )
    assert processor.configured["Record Result Contents"] == "record-fields"
    assert processor.configured["Cache Size"] == "10"
    assert processor.dynamic_properties == {"key": "/k"}


# --- record results ------------------------------------------------------------------------

SPORTS_RECORD = json.dumps({"favorite": "basketball", "least": "soccer"})


def test_add_fields_to_existing_record() -> None:
    """NiFi's testAddFieldsToExistingRecord: record-fields at / overwrite the record's fields."""
    schema = json.dumps(
        {
            "type": "record",
            "name": "r",
            "fields": [
                {"name": "name", "type": ["string", "null"]},
                {"name": "age", "type": ["int", "null"]},
                {"name": "favorite", "type": ["string", "null"]},
                {"name": "least", "type": ["string", "null"]},
            ],
        }
    )
    runner = people_runner(
        schema=schema,
        service=RecordLookup("lookup", **{"John Doe": SPORTS_RECORD}),
        result_recordpath="/",
        record_result_contents="record-fields",
    )
    run_once(runner, b'{"name": "John Doe", "age": 48, "least": "baseball"}')
    runner.flowfiles_for("matched")[0].assert_content_equals("John Doe,48,basketball,soccer\n")


def test_add_fields_to_existing_record_route_to_success() -> None:
    """NiFi's testAddFieldsToExistingRecordRouteToSuccess: fields added, null where unmatched.

    NiFi's MockRecordWriter leaves the unmatched record's absent fields out; the CSV writer
    writes them empty.
    """
    schema = json.dumps(
        {
            "type": "record",
            "name": "r",
            "fields": [
                {"name": "name", "type": ["string", "null"]},
                {"name": "age", "type": ["int", "null"]},
            ],
        }
    )
    runner = people_runner(
        schema=schema,
        service=RecordLookup("lookup", **{"John Doe": SPORTS_RECORD}),
        result_recordpath="/",
        record_result_contents="record-fields",
        routing_strategy="route-to-success",
    )
    run_once(runner, b'[{"name": "John Doe", "age": 48}, {"name": "Jane Doe", "age": 47}]')
    runner.flowfiles_for("success")[0].assert_content_equals(
        "John Doe,48,basketball,soccer\nJane Doe,47,,\n"
    )


def test_insert_entire_record_into_a_new_field() -> None:
    """NiFi's testAddFieldsToNonExistentRecord: the record result is a record field (JSON)."""
    runner = people_runner(
        service=RecordLookup("lookup", **{"John Doe": SPORTS_RECORD}),
        result_recordpath="/sports",
    )
    runner.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    run_once(runner, b'{"name": "John Doe", "age": 48}')
    runner.flowfiles_for("matched")[0].assert_content_equals(
        '{"name":"John Doe","age":48,"sport":null,'
        '"sports":{"favorite":"basketball","least":"soccer"}}'
    )


# --- Root Record Path (NiFi's JSON tests, byte for byte) -------------------------------------

FILES = {"file1.txt": "text/plain", "file2.pdf": "application/pdf", "file3.jpg": "image/jpeg"}


def root_runner(**properties: str) -> TestRunner:
    """NiFi's setupForRootElement: JSON in and pretty JSON out, lookups per file record."""
    settings = {
        "record_reader": "reader",
        "record_writer": "writer",
        "lookup_service": "lookup",
        "root_record_path": "/fileSet/files[*]",
        "result_recordpath": "/mimeType",
        "routing_strategy": "route-to-success",
        "lookup": "/filename",
        **properties,
    }
    runner = TestRunner(LookupRecord(**settings))
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer", pretty_print_json="true"))
    runner.add_service(MapLookup("lookup", **FILES))
    return runner


def file_set(*names_and_sizes: tuple[str, int]) -> bytes:
    """A fileSet document holding these files."""
    files = [{"filename": n, "size": s} for n, s in names_and_sizes]
    return json.dumps(
        {"fileSet": {"id": "11223344", "source": "external", "files": files}}
    ).encode()


def pretty(*files: str) -> str:
    """NiFi's expected pretty output around the files' JSON."""
    inner = ", ".join(files)
    return (
        '[ {\n  "fileSet" : {\n    "id" : "11223344",\n    "source" : "external",\n'
        f'    "files" : [ {inner} ]\n  }}\n}} ]'
    )


def file_json(name: str, size: int, mime: str | None = "absent") -> str:
    """One file record as NiFi pretty-prints it inside the array."""
    mime_line = "" if mime == "absent" else f',\n      "mimeType" : {json.dumps(mime)}'
    return f'{{\n      "filename" : "{name}",\n      "size" : {size}{mime_line}\n    }}'


def test_root_record_success_some_matches() -> None:
    """NiFi's testRootRecordSuccessSomeMatches: each file enriched, null where unknown."""
    runner = root_runner()
    run_once(
        runner,
        file_set(("file1.txt", 4810), ("file2.pdf", 47203782), ("unknown-file.unk", 278102)),
    )
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        pretty(
            file_json("file1.txt", 4810, "text/plain"),
            file_json("file2.pdf", 47203782, "application/pdf"),
            file_json("unknown-file.unk", 278102, None),
        )
    )


def test_root_record_success_none_match() -> None:
    """NiFi's testRootRecordSuccessNoneMatch: no match, no mimeType field at all."""
    runner = root_runner()
    run_once(runner, file_set(("abc.abc", 4810), ("xyz.xyz", 47203782)))
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        pretty(file_json("abc.abc", 4810), file_json("xyz.xyz", 47203782))
    )


def test_root_record_matched_unmatched() -> None:
    """NiFi's testRootRecordRouteToMatchedUnmatched{All,Some}Match: all sub-records must match."""
    runner = root_runner(routing_strategy="route-to-matched-unmatched")
    run_once(runner, file_set(("file1.txt", 4810), ("file2.pdf", 47203782)))
    runner.assert_all_flowfiles_transferred("matched", 1)
    runner.flowfiles_for("matched")[0].assert_content_equals(
        pretty(
            file_json("file1.txt", 4810, "text/plain"),
            file_json("file2.pdf", 47203782, "application/pdf"),
        )
    )
    runner = root_runner(routing_strategy="route-to-matched-unmatched")
    run_once(runner, file_set(("file1.txt", 4810), ("xyz.xyz", 47203782)))
    runner.assert_all_flowfiles_transferred("unmatched", 1)
    runner.flowfiles_for("unmatched")[0].assert_content_equals(
        pretty(file_json("file1.txt", 4810, "text/plain"), file_json("xyz.xyz", 47203782, None))
    )


def test_root_record_pointing_to_array() -> None:
    """NiFi's testRootRecordPointingToArray: a root path at the array takes its records."""
    runner = root_runner(root_record_path="/fileSet/files")
    run_once(runner, file_set(("file1.txt", 4810), ("file2.pdf", 47203782)))
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        pretty(
            file_json("file1.txt", 4810, "text/plain"),
            file_json("file2.pdf", 47203782, "application/pdf"),
        )
    )


# --- replace-existing-values ------------------------------------------------------------------


def in_place_runner(values: Mapping[str, str], **paths: str) -> TestRunner:
    """NiFi's in-place tests: JSON in and out, one lookup per selected value."""
    runner = TestRunner(
        LookupRecord(
            record_reader="reader",
            record_writer="writer",
            lookup_service="lookup",
            routing_strategy="route-to-matched-unmatched",
            record_update_strategy="replace-existing-values",
            **paths,
        )
    )
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer", output_grouping="output-oneline"))
    runner.add_service(InPlaceLookup("lookup", **values))
    return runner


def test_lookup_array_replaces_values() -> None:
    """NiFi's testLookupArray: every selected value is replaced by its own lookup."""
    runner = in_place_runner(
        {"FR": "France", "CA": "Canada", "fr": "French", "key": "value"},
        lookupLanguage="/locales[*]/language",
        lookupRegion="/locales[*]/region",
        lookupFoo="/foo/foo",
    )
    content = {
        "foo": {"foo": "key"},
        "locales": [{"language": "fr", "region": "CA"}, {"language": "fr", "region": "FR"}],
    }
    run_once(runner, json.dumps(content).encode())
    runner.assert_all_flowfiles_transferred("matched", 1)
    out = json.loads(runner.flowfiles_for("matched")[0].content)
    assert out == {
        "foo": {"foo": "value"},
        "locales": [
            {"language": "French", "region": "Canada"},
            {"language": "French", "region": "France"},
        ],
    }


def test_lookup_array_some_unmatched_and_empty_arrays() -> None:
    """NiFi's testLookupArrayKeyNotInLRS / testLookupEmptyArray: partial is unmatched."""
    runner = in_place_runner(
        {"FR": "France", "fr": "French"},
        lookupLanguage="/locales[*]/language",
        lookupRegion="/locales[*]/region",
        lookupCurrency="/currencies[*]/currency",
    )
    content = [
        {"locales": [{"language": "fr", "region": "FR"}], "currencies": []},
        {"locales": [{"language": "fr", "region": "XX"}], "currencies": []},
    ]
    run_once(runner, json.dumps(content).encode())
    runner.assert_transfer_count("matched", 1)
    runner.assert_transfer_count("unmatched", 1)
    matched = json.loads(runner.flowfiles_for("matched")[0].content)
    assert matched["locales"] == [{"language": "French", "region": "France"}]
    unmatched = json.loads(runner.flowfiles_for("unmatched")[0].content)
    assert unmatched["locales"] == [{"language": "French", "region": "XX"}]


def test_in_place_needs_a_single_key_service() -> None:
    """Replacing values in place with a service of several required keys fails, as NiFi."""

    class TwoKeys(MapLookup):
        required_keys: ClassVar = frozenset({"a", "b"})

    runner = in_place_runner({}, a="/a")
    runner.add_service(TwoKeys("lookup"))
    run_once(runner, b'{"a": "x"}')
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_simple_key_value_service_in_a_flow() -> None:
    """LookupRecord with SimpleKeyValueLookupService and its ``key`` coordinate."""
    runner = people_runner(
        lookup=None, key="/name", service=SimpleKeyValueLookupService("lookup", **SPORTS)
    )
    run_once(runner)
    runner.assert_all_flowfiles_transferred("matched", 1)
    runner.flowfiles_for("matched")[0].assert_content_equals(
        "John Doe,48,Soccer\nJane Doe,47,Basketball\nJimmy Doe,14,Football\n"
    )


def test_a_nifi_flow_with_lookup_record_imports(tmp_path: Path) -> None:
    """A NiFi flow's LookupRecord and its reader, writer and SimpleKeyValueLookupService map.

    The processor keeps its NiFi properties and its coordinate; the services are flowcore's
    (the lookup service's dynamic properties its table), and the flow validates.
    """
    from flowcore import Flow
    from tests.flowcore.nifi._nifi_json import connection, download, group, processor, service

    reader = service("r", "Reader", "org.apache.nifi.json.JsonTreeReader")
    writer = service("w", "Writer", "org.apache.nifi.csv.CSVRecordSetWriter")
    sports = service("l", "Sports", "org.apache.nifi.lookup.SimpleKeyValueLookupService")
    sports["properties"] = {"John Doe": "Soccer"}
    get = processor("get", "Get", "GetFile", {"Input Directory": str(tmp_path)})
    lookup = processor(
        "lookup",
        "Lookup",
        "LookupRecord",
        {
            "record-reader": "r",
            "record-writer": "w",
            "lookup-service": "l",
            "result-record-path": "/sport",
            "routing-strategy": "route-to-matched-unmatched",
            "key": "/name",
        },
        autoTerminatedRelationships=["matched", "unmatched", "failure"],
    )
    link = connection(
        "c1", ("get", "PROCESSOR", "top"), ("lookup", "PROCESSOR", "top"), ["success"]
    )
    root = group(
        "top",
        "Top",
        processors=[get, lookup],
        connections=[link],
        controllerServices=[reader, writer, sports],
    )
    flow = Flow.from_nifi(download(root))
    configured = flow.component("Lookup").processor.configured
    assert configured["Lookup Service"] == "Sports"
    assert configured["Result RecordPath"] == "/sport"
    assert configured["key"] == "/name"
    assert type(flow.services["Sports"]).__name__ == "SimpleKeyValueLookupService"
    assert flow.services["Sports"].dynamic_properties == {"John Doe": "Soccer"}
    flow.validate()  # raises listing every problem
    assert not flow.stopped
