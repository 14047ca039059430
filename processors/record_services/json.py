"""JsonTreeReader and JsonRecordSetWriter: NiFi's JSON record services over the JSON codecs."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, ClassVar

import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.records.json_reader import JsonReaderOptions, read_json, read_json_values
from flowcore.records.json_writer import JsonRecordWriter, JsonWriterOptions
from flowcore.records.schema import RecordSchema
from flowcore.validators import ValidationResult
from processors.record_services._codec_writer import CodecWriterService
from processors.record_services._confluent_wire import with_schema_id
from processors.record_services._options import options_from
from processors.record_services.schema_access import (
    INFER_SCHEMA,
    READER_STRATEGIES,
    RecordReaderService,
    date_time_properties,
    schema_access_strategy,
    schema_inference_cache,
    schema_properties,
    writer_properties,
)

__all__ = ["JsonRecordSetWriter", "JsonTreeReader"]

_ACCESS = schema_access_strategy((INFER_SCHEMA, *READER_STRATEGIES), INFER_SCHEMA)

SCHEMA_INFERENCE_CACHE = schema_inference_cache(_ACCESS)
STARTING_FIELD_STRATEGY = PropertyDescriptor(
    "Starting Field Strategy",
    description="Start processing from the root node or from a specified nested node.",
    default="ROOT_NODE",
    required=True,
    allowable_values=(
        AllowableValue("ROOT_NODE", "Root Node", "Begins processing from the root node."),
        AllowableValue(
            "NESTED_FIELD", "Nested Field", "Skips forward to the given nested JSON field."
        ),
    ),
    aliases=("starting-field-strategy",),
)
STARTING_FIELD_NAME = PropertyDescriptor(
    "Starting Field Name",
    description="Skips forward to the given nested field (array or object) to begin processing.",
    dependencies=((STARTING_FIELD_STRATEGY, "NESTED_FIELD"),),
    aliases=("starting-field-name",),
)
SCHEMA_APPLICATION_STRATEGY = PropertyDescriptor(
    "Schema Application Strategy",
    description="Specifies whether the schema is defined for the whole document or for the "
    'selected part starting from "Starting Field Name" (flowcore: SELECTED_PART only).',
    default="SELECTED_PART",
    required=True,
    allowable_values=(
        AllowableValue("SELECTED_PART", "Selected Part"),
        AllowableValue("WHOLE_JSON", "Whole JSON"),
    ),
    dependencies=((STARTING_FIELD_STRATEGY, "NESTED_FIELD"),),
    aliases=("schema-application-strategy",),
)
MAX_STRING_LENGTH = PropertyDescriptor(
    "Max String Length",
    description="The maximum allowed length of a string value when parsing the JSON document",
    default="20 MB",
    required=True,
)
ALLOW_COMMENTS = PropertyDescriptor(
    "Allow Comments",
    description="Whether to allow comments when parsing the JSON document (NiFi 1; flowcore "
    "reads strict JSON)",
    default="false",
    allowable_values=("true", "false"),
)


class JsonTreeReader(RecordReaderService):
    """Parses JSON into records (NiFi's JsonTreeReader): one object, an array, or one per line.

    Fields of the schema missing from a record are null; fields absent from the schema are
    skipped. The schema is inferred (NiFi's rules, from the first 10,000 records), given as
    Avro "Schema Text", or looked up by name in a schema registry.
    """

    nifi_types: ClassVar = ("org.apache.nifi.json.JsonTreeReader",)
    tags: ClassVar = ("json", "tree", "record", "reader", "parser")
    property_descriptors: ClassVar = (
        *schema_properties(_ACCESS),
        SCHEMA_INFERENCE_CACHE,
        STARTING_FIELD_STRATEGY,
        STARTING_FIELD_NAME,
        SCHEMA_APPLICATION_STRATEGY,
        MAX_STRING_LENGTH,
        ALLOW_COMMENTS,
        *date_time_properties(),
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """The schema checks, and WHOLE_JSON named as not supported."""
        problems = list(super().custom_validate(values))
        if (
            values.get("Starting Field Strategy") == "NESTED_FIELD"
            and values.get("Schema Application Strategy") == "WHOLE_JSON"
            and values.get("Schema Access Strategy") != INFER_SCHEMA.value
        ):
            problems.append(
                ValidationResult(
                    "Schema Application Strategy",
                    "WHOLE_JSON",
                    False,
                    "Schema Application Strategy WHOLE_JSON is not supported by flowcore yet; "
                    "use SELECTED_PART (the schema of the nested records)",
                )
            )
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Build the codec's options once."""
        super().on_enabled(context)
        self._options = options_from(self, JsonReaderOptions)

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """The JSON codec."""
        return read_json(stream, self._options, schema)

    def read_values(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> tuple[Iterator[pa.RecordBatch], Iterator[Any]]:
        """:meth:`create_reader`'s batches beside each record's JSON value as parsed.

        For ValidateRecord's strict type checking, which judges the raw values as NiFi reads
        them (:func:`~flowcore.records.json_reader.read_json_values`).
        """
        registered = self.content_schema(attributes, stream)
        if registered is None:
            return read_json_values(stream, self._options, self.configured_schema(attributes))
        batches, values = read_json_values(stream, self._options, registered.schema)
        return (with_schema_id(batch, registered) for batch in batches), values


class JsonRecordSetWriter(CodecWriterService):
    """Writes records as a JSON array or one object per line (NiFi's JsonRecordSetWriter)."""

    nifi_types: ClassVar = ("org.apache.nifi.json.JsonRecordSetWriter",)
    options_type: ClassVar = JsonWriterOptions
    writer_type: ClassVar = JsonRecordWriter
    tags: ClassVar = ("json", "resultset", "writer", "serialize", "record", "recordset", "row")
    property_descriptors: ClassVar = (
        *writer_properties(),
        *date_time_properties(),
        PropertyDescriptor(
            "Pretty Print JSON",
            description="Specifies whether or not the JSON should be pretty printed",
            default="false",
            required=True,
            allowable_values=("true", "false"),
        ),
        PropertyDescriptor(
            "Suppress Null Values",
            description="Specifies how the writer should handle a null field",
            default="never-suppress",
            required=True,
            allowable_values=(
                AllowableValue("never-suppress", "Never Suppress"),
                AllowableValue("always-suppress", "Always Suppress"),
                AllowableValue("suppress-missing", "Suppress Missing Values"),
            ),
            aliases=("suppress-nulls",),
        ),
        PropertyDescriptor(
            "Allow Scientific Notation",
            description="Specifies whether or not scientific notation should be used when "
            "writing numbers",
            default="false",
            required=True,
            allowable_values=("true", "false"),
        ),
        PropertyDescriptor(
            "Output Grouping",
            description="Specifies how the writer should output the JSON records (as an array "
            "or one object per line). With 'One Line Per Object', Pretty Print JSON must be "
            "false.",
            default="output-array",
            required=True,
            allowable_values=(
                AllowableValue("output-array", "Array"),
                AllowableValue("output-oneline", "One Line Per Object"),
            ),
            aliases=("output-grouping",),
        ),
        PropertyDescriptor(
            "Compression Format",
            description="The compression format to use (flowcore: none only).",
            default="none",
            required=True,
            allowable_values=(
                "none",
                "gzip",
                "bzip2",
                "xz-lzma2",
                "snappy",
                "snappy framed",
                "zstd",
            ),
            aliases=("compression-format",),
        ),
        PropertyDescriptor(
            "Compression Level",
            description="The compression level to use; valid only with GZIP compression.",
            default="1",
            required=True,
            allowable_values=tuple(str(n) for n in range(10)),
            dependencies=(("Compression Format", "gzip"),),
            aliases=("compression-level",),
        ),
        PropertyDescriptor(
            "Timestamp Representation",
            description="Specifies how Timestamp logical fields are represented in JSON.",
            default="AUTO",
            required=True,
            allowable_values=("AUTO", "FORMATTED_STRING", "EPOCH_MILLISECONDS", "EPOCH_SECONDS"),
        ),
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """NiFi's checks: no pretty printing one object per line; compression not built."""
        problems = list(super().custom_validate(values))
        if values.get("Pretty Print JSON") == "true" and (
            values.get("Output Grouping") == "output-oneline"
        ):
            problems.append(
                ValidationResult(
                    "Pretty Print",
                    "true",
                    False,
                    "Pretty Print JSON must be false when 'Output Grouping' is set to "
                    "'One Line Per Object'",
                )
            )
        if values.get("Compression Format") not in (None, "none"):
            problems.append(
                ValidationResult(
                    "Compression Format",
                    values.get("Compression Format"),
                    False,
                    "compressed JSON output is not supported by flowcore yet; use 'none' and "
                    "CompressContent after the processor",
                )
            )
        if values.get("Timestamp Representation") == "FORMATTED_STRING" and not values.get(
            "Timestamp Format"
        ):
            problems.append(
                ValidationResult(
                    "Timestamp Representation",
                    "FORMATTED_STRING",
                    False,
                    "Timestamp Format must be configured when Timestamp Representation is set "
                    "to Formatted String",
                )
            )
        return problems
