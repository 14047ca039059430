"""Tests for CSVReader and CSVRecordSetWriter's properties."""

from __future__ import annotations

import io
import json

from flowcore.controller_service import ServiceContext
from processors.record_services import CSVReader, CSVRecordSetWriter


def test_header_derived_schema_is_all_strings() -> None:
    """Use String Fields From Header: the header names the fields, every one a string."""
    definition = CSVReader("r", schema_access_strategy="csv-header-derived")
    reader = definition.enable(ServiceContext(definition))
    (batch,) = reader.create_reader({}, io.BytesIO(b"id,name\n1,a\n2,b\n"))
    assert batch.schema.names == ["id", "name"]
    assert batch.column("id").to_pylist() == ["1", "2"]


def test_custom_only_properties_depend_on_the_format() -> None:
    """Value Separator applies to the Custom Format only, as NiFi's dependency says."""
    separator = CSVReader("r").resolve_descriptor("Value Separator")
    assert separator.dependencies[0].property == "CSV Format"
    assert separator.dependencies[0].values == ("custom",)


def test_writer_tab_delimited_format() -> None:
    """CSV Format tdf writes tab-separated values with the header."""
    definition = CSVRecordSetWriter("w", csv_format="tdf")
    writer = definition.enable(ServiceContext(definition))
    reader = CSVReader("r", treat_first_line_as_header="true")
    reader = reader.enable(ServiceContext(reader))
    (batch,) = reader.create_reader({}, io.BytesIO(b"a,b\n1,x\n"))
    out = io.BytesIO()
    records = writer.create_writer(batch.schema, {}, out)
    records.write(batch)
    assert records.finish()["mime.type"] == "text/csv"
    assert out.getvalue() == b"a\tb\r\n1\tx\r\n"


def _header_schema(header: bytes, attributes: dict[str, str], **properties: str) -> list[str]:
    """The field names CSVReader's csv-header-derived strategy gives *header* (all strings)."""
    definition = CSVReader(
        "r",
        schema_access_strategy="csv-header-derived",
        csv_format="custom",
        comment_marker="#",
        trim_fields="true",
        **properties,
    )
    reader = definition.enable(ServiceContext(definition))
    batches = list(reader.create_reader(attributes, io.BytesIO(header)))
    schema = batches[0].schema
    assert all(str(t) == "string" for t in schema.types)
    return schema.names


def test_header_schema_unquotes_and_unescapes_the_names() -> None:
    """TestCSVHeaderSchemaStrategy.testSimple: quotes and an escaped separator in the header."""
    names = _header_schema(b'"a", b, c, d, e\\,z, f', {})
    assert names == ["a", "b", "c", "d", "e,z", "f"]


def test_header_schema_keeps_one_field_per_duplicate_name() -> None:
    """TestCSVHeaderSchemaStrategy.testContainsDuplicateHeaderNames: "a, a, b" gives a and b."""
    assert _header_schema(b"a, a, b", {}) == ["a", "b"]


def _values(data: bytes, **properties: str) -> list[dict[str, str | None]]:
    """The records CSVReader (Commons CSV, NiFi's default CSV Parser) reads from *data*."""
    definition = CSVReader("r", **properties)
    reader = definition.enable(ServiceContext(definition))
    return [
        row for batch in reader.create_reader({}, io.BytesIO(data)) for row in batch.to_pylist()
    ]


def test_header_schema_duplicate_names_take_the_columns_as_nifis_commons_csv_reader() -> None:
    """CSVRecordReader: the header map's names, ordered by their last column, take the values
    from the first column on (TestCSVRecordReader.testDuplicateHeaderNames: values shift)."""
    derived = {"schema_access_strategy": "csv-header-derived"}
    # header map {a: 2, b: 1}: b takes column 0, a column 1, column 2 is an unknown field
    assert _values(b"a,b,a\n1,2,3\n", **derived) == [{"a": "2", "b": "1"}]
    assert _values(b"a,a,b\n1,2,3\n", **derived) == [{"a": "1", "b": "2"}]
    assert _values(b"x,a,b,a\n0,1,2,3\n", **derived) == [{"x": "0", "a": "2", "b": "1"}]


def test_jackson_csv_parser_puts_each_value_under_its_columns_name_last_wins() -> None:
    """JacksonCSVRecordReader maps column i to header name i into a map: the last repeat wins."""
    jackson = {"schema_access_strategy": "csv-header-derived", "csv_parser": "jackson-csv"}
    assert _values(b"a,b,a\n1,2,3\n", **jackson) == [{"a": "3", "b": "2"}]
    assert _values(b"a,a,b\n1,2,3\n", **jackson) == [{"a": "2", "b": "3"}]
    ignored = {**jackson, "ignore_csv_header_column_names": "true"}
    assert _values(b"a,b,a\n1,2,3\n", **ignored) == [{"a": "1", "b": "2"}]  # the schema's names


def test_schema_text_with_a_duplicated_header_reads_as_nifi() -> None:
    """A schema and a header line: the header's map places the values; with Ignore CSV Header
    Column Names the schema's names are the header (setHeader(schema names))."""
    fields = [{"name": n, "type": "string"} for n in ("a", "b")]
    text = json.dumps({"type": "record", "name": "r", "fields": fields})
    given = {
        "schema_access_strategy": "schema-text-property",
        "schema_text": text,
        "treat_first_line_as_header": "true",
    }
    assert _values(b"a,b,a\n1,2,3\n", **given) == [{"a": "2", "b": "1"}]
    ignored = {**given, "ignore_csv_header_column_names": "true"}
    assert _values(b"a,b,a\n1,2,3\n", **ignored) == [{"a": "1", "b": "2"}]


def test_header_schema_dialect_from_expression_language() -> None:
    """TestCSVHeaderSchemaStrategy.testWithEL: separator, quote and escape from attributes."""
    names = _header_schema(
        b"'a'; b; c; d; e^;z; f",
        {"csv.delimiter": ";", "csv.quote": "'", "csv.escape": "^"},
        value_separator="${csv.delimiter}",
        quote_character="${csv.quote}",
        escape_character="${csv.escape}",
    )
    assert names == ["a", "b", "c", "d", "e;z", "f"]
