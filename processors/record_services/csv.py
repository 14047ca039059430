"""CSVReader and CSVRecordSetWriter: NiFi's CSV record services over the CSV codecs."""

from __future__ import annotations

import csv
from collections.abc import Iterator, Mapping
from typing import IO, ClassVar

import attrs
import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.csv_reader import CsvReaderOptions, read_csv
from flowcore.records.csv_writer import CsvRecordWriter, CsvWriterOptions
from flowcore.records.schema import STRING, RecordSchema
from flowcore.session.streams import buffered
from processors.record_services._codec_writer import CodecWriterService
from processors.record_services._options import options_from
from processors.record_services.schema_access import (
    INFER_SCHEMA,
    READER_STRATEGIES,
    RecordReaderService,
    RecordWriterService,
    date_time_properties,
    schema_access_strategy,
    schema_properties,
    writer_properties,
)

__all__ = ["CSVReader", "CSVRecordSetWriter"]

CUSTOM = "custom"
CSV_FORMAT = PropertyDescriptor(
    "CSV Format",
    description='Specifies which "format" the CSV data is in, or specifies if custom formatting '
    "should be used.",
    default=CUSTOM,
    required=True,
    allowable_values=(
        AllowableValue(CUSTOM, "Custom Format"),
        AllowableValue("rfc-4180", "RFC 4180"),
        AllowableValue("excel", "Microsoft Excel"),
        AllowableValue("tdf", "Tab-Delimited"),
        AllowableValue("mysql", "MySQL Format"),
        AllowableValue("informix-unload", "Informix Unload"),
        AllowableValue("informix-unload-csv", "Informix Unload Escape Disabled"),
    ),
)
_CUSTOM = ((CSV_FORMAT, CUSTOM),)


def _custom(
    display: str, default: str | None, description: str, **kw: object
) -> PropertyDescriptor:
    return PropertyDescriptor(
        display, description=description, default=default, dependencies=_CUSTOM, **kw
    )


VALUE_SEPARATOR = _custom(
    "Value Separator",
    ",",
    "The character that is used to separate values/fields in a CSV Record.",
    required=True,
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
)
QUOTE_CHARACTER = _custom(
    "Quote Character",
    '"',
    "The character that is used to quote values so that escape characters do not have to be used.",
    required=True,
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
)
ESCAPE_CHARACTER = _custom(
    "Escape Character",
    "\\",
    "The character that is used to escape characters that would "
    "otherwise have a specific meaning to the CSV Parser.",
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
)
COMMENT_MARKER = _custom(
    "Comment Marker",
    None,
    "The character that is used to denote the start of a comment.",
    el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
)
NULL_STRING = _custom(
    "Null String",
    None,
    "Specifies a String that, if present as a value in the CSV, should be "
    "considered a null field instead of using the literal value.",
)
TRIM_FIELDS = _custom(
    "Trim Fields",
    "true",
    "Whether or not white space should be removed from the beginning and end of fields",
    allowable_values=("true", "false"),
    required=True,
)
CHARACTER_SET = PropertyDescriptor(
    "Character Set",
    description="The Character Encoding that is used to encode/decode the CSV file",
    default="UTF-8",
    required=True,
    aliases=("csvutils-character-set",),
)


def _uses_attributes(service: RecordReaderService | RecordWriterService) -> bool:
    """Whether a CSV property takes Expression Language (then options are built per FlowFile)."""
    return any(
        d.supports_expressions and "${" in (service.get_property(d).value or "")
        for d in (VALUE_SEPARATOR, QUOTE_CHARACTER, ESCAPE_CHARACTER, COMMENT_MARKER)
    )


class CSVReader(RecordReaderService):
    """Parses CSV-formatted data into records (NiFi's CSVReader, its formats and options)."""

    nifi_types: ClassVar = ("org.apache.nifi.csv.CSVReader",)
    tags: ClassVar = ("csv", "parse", "record", "row", "reader", "delimited", "comma")
    property_descriptors: ClassVar = (
        *schema_properties(
            schema_access_strategy(
                (
                    AllowableValue(
                        "csv-header-derived",
                        "Use String Fields From Header",
                        "The first non-comment line of the CSV file is a header line that "
                        "contains the names of the columns. The schema will be derived by using "
                        "the column names in the header and assuming that all columns are of "
                        "type String.",
                    ),
                    INFER_SCHEMA,
                    *READER_STRATEGIES,
                ),
                INFER_SCHEMA,
            )
        ),
        PropertyDescriptor(
            "CSV Parser",
            description="Specifies which parser to use to read CSV records (flowcore has one; "
            "jackson-csv changes only where a repeated header name's values go: under each "
            "column's own name, the last one winning).",
            default="commons-csv",
            required=True,
            allowable_values=(
                AllowableValue("commons-csv", "Apache Commons CSV"),
                AllowableValue("jackson-csv", "Jackson CSV"),
                AllowableValue("fast-csv", "FastCSV"),
            ),
            aliases=("csv-reader-csv-parser",),
        ),
        *date_time_properties(),
        CSV_FORMAT,
        VALUE_SEPARATOR,
        PropertyDescriptor(
            "Treat First Line as Header",
            description="Specifies whether or not the first line of CSV should be considered a "
            "Header or should be considered a record.",
            default="false",
            required=True,
            allowable_values=("true", "false"),
            aliases=("Skip Header Line",),
        ),
        PropertyDescriptor(
            "Ignore CSV Header Column Names",
            description="If the first line of a CSV is a header, and the configured schema "
            "does not match the fields named in the header line, this controls how the Reader "
            "will interpret the fields.",
            default="false",
            allowable_values=("true", "false"),
            aliases=("ignore-csv-header",),
        ),
        QUOTE_CHARACTER,
        ESCAPE_CHARACTER,
        COMMENT_MARKER,
        NULL_STRING,
        TRIM_FIELDS,
        CHARACTER_SET,
        PropertyDescriptor(
            "Allow Duplicate Header Names",
            description="Whether duplicate header names are allowed.",
            default="true",
            allowable_values=("true", "false"),
            dependencies=_CUSTOM,
            aliases=("csvutils-allow-duplicate-header-names",),
        ),
        PropertyDescriptor(
            "Trim double quote",
            description="Whether or not to trim starting and ending double quotes.",
            default="true",
            allowable_values=("true", "false"),
            dependencies=((CSV_FORMAT, "rfc-4180"),),
            aliases=("Trim Double Quote",),
        ),
    )

    def on_enabled(self, context: ServiceContext) -> None:
        """Build the codec's options once."""
        super().on_enabled(context)
        self._options = options_from(self, CsvReaderOptions)
        self._per_flowfile = _uses_attributes(self)
        self._header_strings = self._strategy == "csv-header-derived"

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """The CSV codec (csv-header-derived: every column a string, named by the header)."""
        options = self._options
        if self._per_flowfile:
            options = options_from(self, CsvReaderOptions, attributes)
        if self._header_strings:
            return _all_strings(stream, options)
        return _never_schemaless(stream, options, schema)


def _header_names(head: bytes, options: CsvReaderOptions) -> list[str]:
    """The header line's names as Commons CSV's header map keys them.

    Unquoted, unescaped and trimmed; a repeated name once, where it first stands.
    """
    text = head.decode(options.character_set, "replace").lstrip("\ufeff")
    dialect = options.dialect()
    names = next(
        csv.reader(
            [text],
            delimiter=dialect.delimiter,
            quotechar=dialect.quote or '"',
            escapechar=dialect.escape,
        ),
        [],
    )
    return list(dict.fromkeys(n.strip() for n in names))


def _never_schemaless(
    stream: IO[bytes], options: CsvReaderOptions, schema: RecordSchema | None
) -> Iterator[pa.RecordBatch]:
    """The codec's batches; with no record, one empty batch of the schema.

    NiFi's CSV reader still knows the header's fields then, which a query or a writer's header
    line needs.
    """
    head = stream.readline() if schema is None and options.first_line_is_header else b""
    found = False
    for batch in read_csv(buffered(stream, head), options, schema):
        found = True
        yield batch
    if found:
        return
    if schema is None:
        schema = RecordSchema.of([(n, STRING) for n in _header_names(head, options) if n])
    yield pa.RecordBatch.from_pylist([], schema=schema.to_arrow())


def _all_strings(stream: IO[bytes], options: CsvReaderOptions) -> Iterator[pa.RecordBatch]:
    """NiFi's CSVHeaderSchemaStrategy: the header's names, every field a STRING."""
    head = stream.readline()
    schema = RecordSchema.of([(n, STRING) for n in _header_names(head, options)])
    # the header line names the fields: it is not a record
    header = attrs.evolve(options, first_line_is_header=True)
    return read_csv(buffered(stream, head), header, schema)


class CSVRecordSetWriter(CodecWriterService):
    """Writes records as CSV (NiFi's CSVRecordSetWriter: Commons CSV's printing, NiFi's bytes)."""

    nifi_types: ClassVar = ("org.apache.nifi.csv.CSVRecordSetWriter",)
    options_type: ClassVar = CsvWriterOptions
    writer_type: ClassVar = CsvRecordWriter
    tags: ClassVar = ("csv", "result", "set", "recordset", "record", "writer", "serializer", "row")
    property_descriptors: ClassVar = (
        *writer_properties(),
        PropertyDescriptor(
            "CSV Writer",
            description="Specifies which writer implementation to use to write CSV records.",
            default="commons-csv",
            required=True,
            allowable_values=(
                AllowableValue("commons-csv", "Apache Commons CSV"),
                AllowableValue("fast-csv", "FastCSV"),
            ),
            aliases=("csv-writer",),
        ),
        *date_time_properties(),
        CSV_FORMAT,
        VALUE_SEPARATOR,
        PropertyDescriptor(
            "Include Header Line",
            description="Specifies whether or not the CSV column names should be written out "
            "as the first line.",
            default="true",
            required=True,
            allowable_values=("true", "false"),
        ),
        QUOTE_CHARACTER,
        ESCAPE_CHARACTER,
        COMMENT_MARKER,
        NULL_STRING,
        TRIM_FIELDS,
        _custom(
            "Quote Mode",
            "MINIMAL",
            "Specifies how fields should be quoted when they are written",
            required=True,
            allowable_values=(
                AllowableValue("ALL", "Quote All Values"),
                AllowableValue("MINIMAL", "Quote Minimal"),
                AllowableValue("NON_NUMERIC", "Quote Non-Numeric Values"),
                AllowableValue("NONE", "Do Not Quote Values"),
            ),
        ),
        _custom(
            "Record Separator",
            "\\n",
            "Specifies the characters to use in order to separate CSV Records",
            required=True,
        ),
        _custom(
            "Include Trailing Delimiter",
            "false",
            "If true, a trailing delimiter will be added to each CSV Record that is written.",
            required=True,
            allowable_values=("true", "false"),
        ),
        CHARACTER_SET,
    )

    def options_per_flowfile(self) -> bool:
        """Whether a separator, quote, escape or comment takes Expression Language."""
        return _uses_attributes(self)
