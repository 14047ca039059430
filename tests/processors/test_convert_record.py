"""Tests for ConvertRecord, ported from NiFi's TestConvertRecord, plus failure and memory checks."""

from __future__ import annotations

import datetime as dt
import io
import json
import logging
from decimal import Decimal
from pathlib import Path

import fastavro
import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.compiler.plan import serial
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import ConvertRecord, GetFile, PutFile
from processors.record_services import (
    AvroReader,
    AvroRecordSetWriter,
    CSVReader,
    CSVRecordSetWriter,
    FreeFormTextRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
    ParquetReader,
    ParquetRecordSetWriter,
)

FLOWS = Path(__file__).parent / "nifi_flows"

PERSON_SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "person",
        "fields": [
            {"name": "id", "type": "int"},
            {"name": "name", "type": ["string", "null"]},
        ],
    }
)


def converter(reader: object, writer: object, **properties: str) -> TestRunner:
    """A ConvertRecord runner with *reader* and *writer* added as 'reader' and 'writer'."""
    runner = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer", **properties))
    runner.add_service(reader)
    runner.add_service(writer)
    return runner


def test_csv_to_json_gives_records_count_and_mime_type() -> None:
    """CSV with a header becomes NiFi's JSON array; record.count and mime.type are set."""
    runner = converter(
        CSVReader("reader", treat_first_line_as_header="true"), JsonRecordSetWriter("writer")
    )
    runner.enqueue(b"id,name\n1,John Doe\n2,Jane Doe\n")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals('[{"id":1,"name":"John Doe"},{"id":2,"name":"Jane Doe"}]')
    out.assert_attribute_equals("record.count", "2")
    out.assert_attribute_equals("mime.type", "application/json")
    types = [e.event_type for e in runner.provenance_events]
    assert types == [ProvenanceEventType.CONTENT_MODIFIED]


def test_drop_empty() -> None:
    """NiFi's testDropEmpty: with Include Zero Record FlowFiles false no-record input is dropped."""
    runner = converter(
        JsonTreeReader("reader"),
        JsonRecordSetWriter("writer"),
        include_zero_record_flowfiles="false",
    )
    runner.enqueue(b"[]")
    runner.run()
    runner.assert_transfer_count("success", 0)
    runner.assert_transfer_count("failure", 0)
    runner.enqueue(b'[{"a":1}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_attribute_equals("record.count", "1")


def test_zero_records_are_kept_by_default() -> None:
    """By default a FlowFile with no records goes to success with record.count 0 and '[]'."""
    runner = converter(JsonTreeReader("reader"), JsonRecordSetWriter("writer"))
    runner.enqueue(b"")
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals("[]")
    out.assert_attribute_equals("record.count", "0")


def test_one_line_per_object_ends_without_a_newline() -> None:
    """With One Line Per Object the records are joined by newlines, none after the last, and
    an empty record set is an empty content (NiFi's WriteJsonResult)."""
    runner = converter(
        CSVReader("reader", treat_first_line_as_header="true"),
        JsonRecordSetWriter("writer", output_grouping="output-oneline"),
    )
    runner.enqueue(b"id,name\n1,a\n2,b\n")
    runner.enqueue(b"id,name\n")
    runner.run(2)
    first, empty = runner.flowfiles_for("success")
    first.assert_content_equals('{"id":1,"name":"a"}\n{"id":2,"name":"b"}')
    empty.assert_content_equals("")
    empty.assert_attribute_equals("record.count", "0")


def test_read_failure_routes_the_unchanged_flowfile_to_failure() -> None:
    """NiFi's testReadFailure: a bad record sends the original content to failure, with the
    error message naming the record and field."""
    runner = converter(
        JsonTreeReader(
            "reader", schema_access_strategy="schema-text-property", schema_text=PERSON_SCHEMA
        ),
        JsonRecordSetWriter("writer"),
    )
    content = b'[{"id":1,"name":"a"},{"id":true,"name":"b"}]'
    runner.enqueue(content)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_content_equals(content)
    message = out.attributes["record.error.message"]
    assert "record 2" in message
    assert "id" in message
    assert [e.event_type for e in runner.provenance_events] == [
        ProvenanceEventType.ATTRIBUTES_MODIFIED
    ]


def test_a_csv_cut_inside_a_quoted_value_goes_to_failure() -> None:
    """A CSV that ends inside a quoted value goes to failure unchanged, as NiFi's Commons CSV
    reader raises there, with a message naming the record and the value's line."""
    runner = converter(
        CSVReader("reader", treat_first_line_as_header="true"), JsonRecordSetWriter("writer")
    )
    content = b'id,name\n1,"John"\n2,"Jane\nDo'
    runner.enqueue(content)
    runner.enqueue(b'id,name\n1,"John"\n2,"Jane\nDoe"\n')
    runner.run(2)
    runner.assert_transfer_count("success", 1)
    runner.assert_transfer_count("failure", 1)
    out = runner.flowfiles_for("failure")[0]
    out.assert_content_equals(content)
    message = out.attributes["record.error.message"]
    assert "record 2 (line 3)" in message
    assert "EOF reached before encapsulated token finished" in message


def test_not_json_goes_to_failure() -> None:
    """Content that is not JSON goes to failure, unchanged."""
    runner = converter(JsonTreeReader("reader"), JsonRecordSetWriter("writer"))
    runner.enqueue(b"hello")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals("hello")


def test_csv_formatting_with_el() -> None:
    """NiFi's testCSVFormattingWithEL: separators, quotes, escape and comment from attributes."""
    runner = converter(
        CSVReader(
            "reader",
            treat_first_line_as_header="true",
            value_separator="${csv.in.delimiter}",
            quote_character="${csv.in.quote}",
            escape_character="${csv.in.escape}",
            comment_marker="${csv.in.comment}",
        ),
        CSVRecordSetWriter(
            "writer",
            value_separator="${csv.out.delimiter}",
            quote_character="${csv.out.quote}",
            quote_mode="ALL",
        ),
    )
    content = "~ comment\nid|username|password\n123|'John'|^|^'^^\n"
    attributes = {
        "csv.in.delimiter": "|",
        "csv.in.quote": "'",
        "csv.in.escape": "^",
        "csv.in.comment": "~",
        "csv.out.delimiter": "\t",
        "csv.out.quote": "`",
    }
    runner.enqueue(content, attributes)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        "`id`\t`username`\t`password`\n`123`\t`John`\t`|'^`\n"
    )


def test_schema_text_writer_sets_avro_schema_attribute() -> None:
    """A writer with Schema Write Strategy full-schema-attribute sets avro.schema."""
    runner = converter(
        JsonTreeReader("reader"),
        JsonRecordSetWriter(
            "writer",
            schema_access_strategy="schema-text-property",
            schema_text=PERSON_SCHEMA,
            schema_write_strategy="full-schema-attribute",
            pretty_print_json="true",
        ),
    )
    runner.enqueue(b'{"id": 1, "name": "a", "extra": 2}')
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals('[ {\n  "id" : 1,\n  "name" : "a"\n} ]')
    assert json.loads(out.attributes["avro.schema"])["fields"][0]["name"] == "id"


def test_json_to_avro_to_parquet_and_back() -> None:
    """Records survive JSON -> Avro -> Parquet -> JSON through four services."""
    content = b'[{"id":1,"name":"a"},{"id":2,"name":null}]'
    hops = [
        (JsonTreeReader("reader"), AvroRecordSetWriter("writer")),
        (AvroReader("reader"), ParquetRecordSetWriter("writer")),
        (ParquetReader("reader"), JsonRecordSetWriter("writer")),
    ]
    for reader, writer in hops:
        runner = converter(reader, writer)
        runner.enqueue(content)
        runner.run()
        runner.assert_all_flowfiles_transferred("success", 1)
        content = runner.flowfiles_for("success")[0].content
    assert content == b'[{"id":1,"name":"a"},{"id":2,"name":null}]'


def test_free_form_text_writer_evaluates_text_per_record() -> None:
    """FreeFormTextRecordSetWriter evaluates its Text per record, fields over attributes."""
    runner = converter(
        JsonTreeReader("reader"),
        FreeFormTextRecordSetWriter("writer", text="${name}:${id:plus(1)} (${filename})"),
    )
    runner.enqueue(b'[{"id":1,"name":"a"},{"id":2,"name":"b"}]', {"filename": "f.json"})
    runner.run()
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals("a:2 (f.json)\nb:3 (f.json)\n")
    out.assert_attribute_equals("mime.type", "text/plain")


def test_csv_to_json_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> ConvertRecord (CSVReader to JsonRecordSetWriter) -> PutFile, direct runner."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "people.csv").write_bytes(b"id,name\n1,John Doe\n2,Jane Doe\n")
    flow = Flow("csv-to-json")
    reader = flow.add_service(CSVReader("csv", treat_first_line_as_header="true"))
    writer = flow.add_service(JsonRecordSetWriter("json"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    convert = flow.add(ConvertRecord(record_reader=reader, record_writer=writer), name="convert")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(get, convert)
    flow.connect(convert, put, "success")
    flow.auto_terminate(convert, ["failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("convert", "success") == 1
    assert (tmp_path / "out" / "people.csv").read_bytes() == (
        b'[{"id":1,"name":"John Doe"},{"id":2,"name":"Jane Doe"}]'
    )


def test_a_nifi_flow_with_convert_record_imports_and_runs(tmp_path: Path) -> None:
    """A NiFi 2 flow definition (tests/processors/nifi_flows/convert_record.json: GetFile ->
    ConvertRecord with a CSVReader and a JsonRecordSetWriter, NiFi 1 internal names among its
    properties -> PutFile) imports with Flow.from_nifi and runs."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "orders.csv").write_bytes(b"order;amount\na-1;5\na-2;7.5\n")
    document = json.loads((FLOWS / "convert_record.json").read_text())
    flow = Flow.from_nifi(
        document,
        parameters={"input.directory": str(inbox), "output.directory": str(tmp_path / "out")},
    )
    assert sorted(flow.services) == ["CSV orders", "JSON lines"]
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.transfers["Convert"]["success"][0] == 1
    assert (tmp_path / "out" / "orders.csv").read_bytes() == (
        b'{"order":"a-1","amount":5.0}\n{"order":"a-2","amount":7.5}'
    )


@pytest.mark.spark
def test_on_spark_services_are_enabled_on_executors_and_tasks_stay_parallel(
    tmp_path: Path,
) -> None:
    """On Spark local[2]: the reader and writer are enabled in the executors (the files
    convert), and ConvertRecord is not made serial by naming them."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    for n in range(6):
        (inbox / f"f{n}.csv").write_bytes(b"id,v\n%d,a\n%d,b\n" % (n, n))
    flow = Flow("csv-to-json-spark")
    reader = flow.add_service(CSVReader("csv", treat_first_line_as_header="true"))
    writer = flow.add_service(JsonRecordSetWriter("json", output_grouping="output-oneline"))
    convert_record = ConvertRecord(record_reader=reader, record_writer=writer)
    assert not serial(convert_record, flow.services)
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    convert = flow.add(convert_record, name="convert")
    put = flow.add(
        PutFile(directory=str(tmp_path / "out"), conflict_resolution_strategy="replace"),
        name="put",
    )
    flow.connect(get, convert)
    flow.connect(convert, put, "success")
    flow.auto_terminate(convert, ["failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "spark", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=2)
    )
    assert result.count("convert", "success") == 6
    assert (tmp_path / "out" / "f3.csv").read_bytes() == b'{"id":3,"v":"a"}\n{"id":3,"v":"b"}'


NAME_RECORD = {
    "type": "record",
    "name": "nameRecord",
    "fields": [{"name": "last", "type": "string"}, {"name": "first", "type": "string"}],
}
STATUS = {
    "name": "status",
    "type": ["null", {"type": "enum", "name": "statusEnum", "symbols": ["ACTIVE", "INACTIVE"]}],
    "default": None,
}
PERSON_WITH_NAME = {
    "name": "personWithNameRecord",
    "namespace": "nifi",
    "type": "record",
    "fields": [{"name": "id", "type": "int"}, {"name": "name", "type": NAME_RECORD}, STATUS],
}


def _json_with_schema(schema: dict, writer: object = None) -> TestRunner:
    """A ConvertRecord runner: JsonTreeReader and a writer, both given *schema* as text."""
    text = json.dumps(schema)
    access = {"schema_access_strategy": "schema-text-property", "schema_text": text}
    return converter(
        JsonTreeReader("reader", **access), writer or JsonRecordSetWriter("writer", **access)
    )


def test_a_long_read_into_an_int_field_fails() -> None:
    """NiFi's testJSONLongToInt: an id beyond an int's range sends the FlowFile to failure."""
    runner = _json_with_schema(PERSON_WITH_NAME)
    runner.enqueue(
        b'[{"id": 2156760545, "name": {"last": "Doe", "first": "John"}, "status": "ACTIVE"}]'
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_an_enum_value_outside_its_symbols_fails() -> None:
    """NiFi's testEnumBadValue: status "ERROR" is not a symbol of the enum, so Avro fails."""
    text = json.dumps(PERSON_WITH_NAME)
    writer = AvroRecordSetWriter(
        "writer", schema_access_strategy="schema-text-property", schema_text=text
    )
    runner = _json_with_schema(PERSON_WITH_NAME, writer)
    runner.enqueue(b'[{"id": 485, "name": {"last": "Doe", "first": "John"}, "status": "ERROR"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_fields_outside_the_schema_are_dropped_at_every_level() -> None:
    """NiFi's testJSONDroppingUnknownFields: unknown keys, objects and arrays, nested ones too,
    are not written."""
    job = {
        "type": "record",
        "name": "jobType",
        "fields": [
            {"name": "jobId", "type": ["null", "string"]},
            {"name": "jobName", "type": ["null", "string"]},
        ],
    }
    jobs = {"name": "jobs", "type": ["null", {"type": "array", "items": job}]}
    schema = {**PERSON_WITH_NAME, "fields": [*PERSON_WITH_NAME["fields"], jobs]}
    runner = _json_with_schema(schema)
    runner.enqueue(
        json.dumps(
            [
                {
                    "id": 485,
                    "name": {"last": "Doe", "first": "John", "undefinedKeyInObject": "whatever"},
                    "status": "ACTIVE",
                    "undefinedKey": "whatever",
                    "jobs": [{"jobId": "1", "jobName": "someJob", "undefinedKeyInObject": "x"}],
                    "undefinedObjectArray": [{"elementId": "1", "elementName": "someName"}],
                    "undefinedObject": {"elementId": "2", "elementName": "someName"},
                    "undefinedScalarArray": [1, 2, 3],
                }
            ]
        ).encode()
    )
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(
        '[{"id":485,"name":{"last":"Doe","first":"John"},"status":"ACTIVE",'
        '"jobs":[{"jobId":"1","jobName":"someJob"}]}]'
    )


def test_a_date_text_converts_to_avros_days_since_the_epoch() -> None:
    """NiFi's testDateConversionWithUTCMinusTimezone: "1970-01-02" is day 1 in the Avro output,
    whatever the zone (Python reads no user.timezone; the date is zone-free)."""
    schema = {
        "type": "record",
        "name": "DateRecord",
        "fields": [{"name": "date", "type": {"type": "int", "logicalType": "date"}}],
    }
    reader = JsonTreeReader(
        "reader",
        schema_access_strategy="schema-text-property",
        schema_text=json.dumps(schema),
        date_format="yyyy-MM-dd",
    )
    runner = converter(reader, AvroRecordSetWriter("writer"))
    runner.enqueue(b'{ "date": "1970-01-02" }')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (record,) = fastavro.reader(io.BytesIO(runner.flowfiles_for("success")[0].content))
    assert record["date"] == dt.date(1970, 1, 2)


def _logical_types_schema(nullable: bool) -> dict:
    """NiFi's logical-types.avsc (nullable: logical-types-nullable.avsc)."""
    types = {
        "timeMillis": {"type": "int", "logicalType": "time-millis"},
        "timeMicros": {"type": "long", "logicalType": "time-micros"},
        "timestampMillis": {"type": "long", "logicalType": "timestamp-millis"},
        "timestampMicros": {"type": "long", "logicalType": "timestamp-micros"},
        "date": {"type": "int", "logicalType": "date"},
        "decimal": {"type": "bytes", "logicalType": "decimal", "precision": 5, "scale": 2},
    }
    fields = [{"name": n, "type": ["null", t] if nullable else t} for n, t in types.items()]
    return {"namespace": "nifi", "name": "data_types", "type": "record", "fields": fields}


def _to_avro(content: bytes, reader_schema: dict, writer_schema: dict, **reader: str) -> dict:
    """The one record ConvertRecord writes from JSON *content* with the two schemas."""
    runner = converter(
        JsonTreeReader(
            "reader",
            schema_access_strategy="schema-text-property",
            schema_text=json.dumps(reader_schema),
            **reader,
        ),
        AvroRecordSetWriter(
            "writer",
            schema_access_strategy="schema-text-property",
            schema_text=json.dumps(writer_schema),
        ),
    )
    runner.enqueue(content)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    (record,) = fastavro.reader(io.BytesIO(runner.flowfiles_for("success")[0].content))
    return record


@pytest.mark.parametrize("nullable", [False, True])
def test_logical_types_are_written_as_avros(nullable: bool) -> None:
    """TestWriteAvroResult.testLogicalTypes / testNullableLogicalTypes: NiFi TIME, TIMESTAMP,
    DATE and DECIMAL values become Avro's millis/micros, days and decimal logical types."""
    content = json.dumps(
        {
            "timeMillis": "14:20:33.789",
            "timeMicros": "14:20:33.789",
            "timestampMillis": "2017-04-04 14:20:33.789",
            "timestampMicros": "2017-04-04 14:20:33.789",
            "date": "2017-04-04",
            "decimal": 123.45,
        }
    ).encode()
    schema = _logical_types_schema(nullable)
    formats = {"time_format": "HH:mm:ss.SSS", "timestamp_format": "yyyy-MM-dd HH:mm:ss.SSS"}
    record = _to_avro(content, schema, schema, **formats)
    # parsed in the system zone, as NiFi's test (ZoneId.systemDefault())
    moment = dt.datetime(2017, 4, 4, 14, 20, 33, 789000).astimezone(dt.UTC)
    assert record == {
        "timeMillis": dt.time(14, 20, 33, 789000),
        "timeMicros": dt.time(14, 20, 33, 789000),
        "timestampMillis": moment,
        "timestampMicros": moment,
        "date": dt.date(2017, 4, 4),
        "decimal": Decimal("123.45"),
    }


def test_decimal_precision_and_scale_follow_the_writers_schema() -> None:
    """TestWriteAvroResult.testDecimalType: decimals read with other precisions and scales are
    written at the Avro schema's scale (123456.1 as 123456.10)."""
    decimal = {"type": "bytes", "logicalType": "decimal", "precision": 10, "scale": 2}
    writer = {
        "namespace": "nifi",
        "name": "data_types",
        "type": "record",
        "fields": [{"name": f"decimal{i}", "type": decimal} for i in range(1, 5)],
    }
    sizes = [(10, 2), (10, 2), (8, 1), (16, 4)]
    reader = {
        "type": "record",
        "name": "r",
        "fields": [
            {"name": f"decimal{i}", "type": {**decimal, "precision": p, "scale": sc}}
            for i, (p, sc) in enumerate(sizes, 1)
        ],
    }
    content = b'{"decimal1": 12345678.12, "decimal2": 123456.1, "decimal3": 123456.1,'
    content += b' "decimal4": 123456.1}'
    record = _to_avro(content, reader, writer)
    assert record == {
        "decimal1": Decimal("12345678.12"),
        "decimal2": Decimal("123456.10"),
        "decimal3": Decimal("123456.10"),
        "decimal4": Decimal("123456.10"),
    }


def test_text_is_converted_to_the_writers_logical_types() -> None:
    """AvroTypeUtil.convertToAvroObject (used by testLogicalTypes): "14:20:33", "2017-04-04" and
    "2017-04-04 14:20:33" read as strings are written as time-millis, date, timestamp-millis."""
    logical = _logical_types_schema(nullable=False)
    writer = {**logical, "fields": [f for f in logical["fields"] if "Millis" in f["name"]]}
    writer["fields"].append({"name": "date", "type": {"type": "int", "logicalType": "date"}})
    names = [f["name"] for f in writer["fields"]]
    reader = {
        "type": "record",
        "name": "r",
        "fields": [{"name": n, "type": "string"} for n in names],
    }
    content = b'{"timeMillis": "14:20:33", "timestampMillis": "2017-04-04 14:20:33",'
    content += b' "date": "2017-04-04"}'
    record = _to_avro(content, reader, writer)
    assert record == {
        "timeMillis": dt.time(14, 20, 33),
        "timestampMillis": dt.datetime(2017, 4, 4, 14, 20, 33).astimezone(dt.UTC),
        "date": dt.date(2017, 4, 4),
    }


def test_text_not_in_the_default_format_sends_the_flowfile_to_failure() -> None:
    """AvroTypeUtil.convertToAvroObject: a date text not in "yyyy-MM-dd" fails the FlowFile."""
    writer = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "date", "type": {"type": "int", "logicalType": "date"}}],
    }
    reader = {"type": "record", "name": "r", "fields": [{"name": "date", "type": "string"}]}
    runner = converter(
        JsonTreeReader(
            "reader", schema_access_strategy="schema-text-property", schema_text=json.dumps(reader)
        ),
        AvroRecordSetWriter(
            "writer", schema_access_strategy="schema-text-property", schema_text=json.dumps(writer)
        ),
    )
    runner.enqueue(b'[{"date": "2017-04-04"}, {"date": "04/05/2017"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].content == (
        b'[{"date": "2017-04-04"}, {"date": "04/05/2017"}]'
    )


def _float_schema(kind: str) -> str:
    return json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "a", "type": ["null", kind]}]}
    )


def _avro_float_nan() -> bytes:
    """An Avro data file of one record whose float field is NaN."""
    out = io.BytesIO()
    schema = fastavro.parse_schema(json.loads(_float_schema("float")))
    fastavro.writer(out, schema, [{"a": float("nan")}])
    return out.getvalue()


_NON_FINITE_INPUTS = {
    "csv double NaN": (
        lambda: CSVReader(
            "reader",
            treat_first_line_as_header="true",
            schema_access_strategy="schema-text-property",
            schema_text=_float_schema("double"),
        ),
        b"a\nNaN\n",
        "the double NaN",
        '[{"a":"NaN"}]',
    ),
    "json 1e400": (
        lambda: JsonTreeReader("reader"),
        b'[{"a":1e400}]',
        "the double Infinity",
        '[{"a":"Infinity"}]',
    ),
    "avro float NaN": (lambda: AvroReader("reader"), None, "the float NaN", '[{"a":"NaN"}]'),
}


@pytest.mark.parametrize("case", list(_NON_FINITE_INPUTS))
def test_nan_and_infinity_fail_to_json_unless_scientific_notation(
    case: str, caplog: pytest.LogCaptureFixture
) -> None:
    """NiFi's JsonTreeReader reads 1e400 as the double Infinity (Jackson); its JSON writer fails
    on NaN and infinities by default (BigDecimal), and writes Jackson's "NaN"/"Infinity"
    strings with Allow Scientific Notation: never a bare NaN, which is no JSON."""
    reader, data, what, quoted = _NON_FINITE_INPUTS[case]
    data = data if data is not None else _avro_float_nan()
    runner = converter(reader(), JsonRecordSetWriter("writer"))
    runner.enqueue(data)
    with caplog.at_level(logging.ERROR):
        runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert runner.flowfiles_for("failure")[0].content == data
    assert f"record 1, field 'a': {what} is no JSON number" in caplog.text
    runner = converter(reader(), JsonRecordSetWriter("writer", allow_scientific_notation="true"))
    runner.enqueue(data)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    runner.flowfiles_for("success")[0].assert_content_equals(quoted)


def test_whole_number_fields_take_whole_number_text_only_as_nifi() -> None:
    """NiFi's toInteger(String) is Integer.parseInt: "1.5" under an INT schema goes to failure
    (not truncated to 1), and under an inferred CHOICE[INT, STRING] "2.5" stays text."""
    int_schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": "int"}]}
    runner = _json_with_schema(int_schema)
    runner.enqueue(b'[{"a": "1.5"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner = converter(JsonTreeReader("reader"), JsonRecordSetWriter("writer"))
    runner.enqueue(b'[{"a": 1}, {"a": "2.5"}, {"a": "3"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert runner.flowfiles_for("success")[0].content == b'[{"a":1},{"a":"2.5"},{"a":3}]'


def test_a_decimal_38_takes_more_than_28_digits() -> None:
    """A DECIMAL(38, 2) value of 29 digits converts, as NiFi's BigDecimal does."""
    decimal = {"type": "bytes", "logicalType": "decimal", "precision": 38, "scale": 2}
    schema = {"type": "record", "name": "r", "fields": [{"name": "a", "type": decimal}]}
    runner = _json_with_schema(schema, JsonRecordSetWriter("writer"))
    runner.enqueue(b'[{"a": "123456789012345678901234567.89"}]')
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert runner.flowfiles_for("success")[0].content == b'[{"a":123456789012345678901234567.89}]'


def test_a_timestamp_into_a_string_field_takes_the_writers_timestamp_format() -> None:
    """A TIMESTAMP read from epoch millis and written into the writer's STRING field is text
    in the writer's Timestamp Format, as NiFi's convertType to STRING formats it."""
    millis = {"type": "long", "logicalType": "timestamp-millis"}
    read = {"type": "record", "name": "r", "fields": [{"name": "ts", "type": millis}]}
    write = {"type": "record", "name": "r", "fields": [{"name": "ts", "type": "string"}]}
    runner = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(
        JsonTreeReader(
            "reader", schema_access_strategy="schema-text-property", schema_text=json.dumps(read)
        )
    )
    runner.add_service(
        JsonRecordSetWriter(
            "writer",
            schema_access_strategy="schema-text-property",
            schema_text=json.dumps(write),
            timestamp_format="dd/MM/yyyy HH:mm:ss.SSS",
        )
    )
    runner.enqueue(b'{"ts": 1700000000123}')
    runner.run()
    (out,) = runner.flowfiles_for("success")
    assert json.loads(bytes(out.content)) == [{"ts": "14/11/2023 22:13:20.123"}]
