"""AvroReader, AvroRecordSetWriter and AvroSchemaRegistry: NiFi's Avro services over fastavro."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, ClassVar

import pyarrow as pa

from flowcore.controller_service import ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.records.avro_codec import AvroRecordWriter, AvroWriterOptions, read_avro
from flowcore.records.avro_schema import parse_schema_text, schema_to_avro
from flowcore.records.record_io import RecordWriter
from flowcore.records.schema import RecordSchema
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR, ValidationResult
from processors.record_services._confluent_wire import (
    RegisteredRecordSchema,
    registered_schema_of,
    with_schema_id,
)
from processors.record_services.schema_access import (
    CONFLUENT_ENCODED_SCHEMA,
    EMBEDDED_AVRO_SCHEMA,
    READER_STRATEGIES,
    SCHEMA_WRITE_STRATEGY_VALUES,
    RecordReaderService,
    RecordWriterService,
    SchemaRegistryService,
    schema_access_strategy,
    schema_properties,
    writer_properties,
)

__all__ = ["AvroReader", "AvroRecordSetWriter", "AvroSchemaRegistry"]

EMBED = "avro-embedded"


class AvroReader(RecordReaderService):
    """Parses Avro data into records (NiFi's AvroReader).

    With "Use Embedded Avro Schema" (the default) the content is an Avro data file; with a
    schema from the Schema Text or a registry it may also be bare datums of that schema.
    """

    nifi_types: ClassVar = ("org.apache.nifi.avro.AvroReader",)
    tags: ClassVar = (
        "avro",
        "parse",
        "record",
        "row",
        "reader",
        "delimited",
        "comma",
        "separated",
        "values",
    )
    property_descriptors: ClassVar = (
        *schema_properties(
            schema_access_strategy(
                (EMBEDDED_AVRO_SCHEMA, *READER_STRATEGIES, CONFLUENT_ENCODED_SCHEMA),
                EMBEDDED_AVRO_SCHEMA,
            )
        ),
        PropertyDescriptor(
            "Cache Size",
            description="Specifies how many Schemas should be cached",
            default="1000",
            required=True,
            validators=(POSITIVE_INTEGER_VALIDATOR,),
            aliases=("cache-size",),
        ),
    )

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """fastavro: the embedded schema, or the configured one (data file or bare datums)."""
        avro = schema_to_avro(schema) if schema is not None else None
        return read_avro(stream, schema=schema, avro_schema=avro)

    def create_reader(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> Iterator[pa.RecordBatch]:
        """As NiFi's: the configured schema's Avro text is the reader's schema."""
        strategy = self._strategy
        registered = self.content_schema(attributes, stream)
        if registered is not None:  # confluent-encoded, or a Schema Reference Reader's
            batches = read_avro(
                stream, schema=registered.schema, avro_schema=json.loads(registered.text)
            )
            return (with_schema_id(batch, registered) for batch in batches)
        if strategy == "schema-text-property":
            text = self._evaluate("Schema Text", attributes) or ""
            avro = json.loads(text) if text else None
            return read_avro(stream, schema=parse_schema_text(text), avro_schema=avro)
        return self.read(stream, self.configured_schema(attributes), attributes)


class AvroRecordSetWriter(RecordWriterService):
    """Writes records in Avro (NiFi's AvroRecordSetWriter): a data file, or bare datums."""

    nifi_types: ClassVar = ("org.apache.nifi.avro.AvroRecordSetWriter",)
    tags: ClassVar = ("avro", "result", "set", "writer", "serializer", "record", "recordset", "row")
    property_descriptors: ClassVar = (
        *writer_properties(
            (
                AllowableValue(
                    EMBED,
                    "Embed Avro Schema",
                    "The FlowFile will have the Avro schema embedded into the content, as is "
                    "typical with Avro",
                ),
                *SCHEMA_WRITE_STRATEGY_VALUES,
            ),
            EMBED,
        ),
        PropertyDescriptor(
            "Compression Format",
            description="Compression type to use when writing Avro files. Default is None.",
            default="NONE",
            required=True,
            allowable_values=("BZIP2", "DEFLATE", "NONE", "SNAPPY", "LZO", "ZSTANDARD", "XZ"),
            aliases=("compression-format",),
        ),
        PropertyDescriptor(
            "Cache Size",
            description="Specifies how many Schemas should be cached",
            default="1000",
            required=True,
            validators=(POSITIVE_INTEGER_VALIDATOR,),
            aliases=("cache-size",),
        ),
        PropertyDescriptor(
            "Encoder Pool Size",
            description="Avro Writers require the use of an Encoder. This property bounds how "
            "many are pooled (not used by flowcore).",
            default="32",
            required=True,
            validators=(POSITIVE_INTEGER_VALIDATOR,),
            aliases=("encoder-pool-size",),
        ),
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """The writers' checks, and LZO refused (no maintained Python codec)."""
        problems = list(super().custom_validate(values))
        if values.get("Compression Format") == "LZO":
            problems.append(
                ValidationResult(
                    "Compression Format",
                    "LZO",
                    False,
                    "LZO is not supported by flowcore (no maintained Python codec); choose "
                    "SNAPPY or ZSTANDARD",
                )
            )
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Build the codec's options once."""
        super().on_enabled(context)
        self._options = AvroWriterOptions(
            schema_write_strategy=self.get_property("Schema Write Strategy").value or EMBED,
            compression_format=self.get_property("Compression Format").value or "NONE",
        )
        self._options.codec()  # a bad compression fails at enable time

    def create_writer(
        self, schema: RecordSchema | pa.Schema, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> RecordWriter:
        """As the other writers'; records read with a registry's schema keep its Avro text."""
        registered = registered_schema_of(schema) if isinstance(schema, pa.Schema) else None
        return super().create_writer(registered or schema, attributes, stream)

    def open_writer(
        self, stream: IO[bytes], schema: RecordSchema, attributes: Mapping[str, str]
    ) -> RecordWriter:
        """The Avro codec's writer (a schema from a Confluent registry written as registered)."""
        avro = None
        if isinstance(schema, RegisteredRecordSchema) and schema.avro_text:
            avro = json.loads(schema.avro_text)
        registry = self._registry
        if (
            self._options.schema_write_strategy in ("confluent-encoded", "schema-reference-writer")
            and self._strategy == "schema-name"
            and hasattr(registry, "registered")
        ):
            name = self._evaluate("Schema Name", attributes) or ""
            registered = registry.registered(name, self._schema_version(attributes))  # type: ignore[union-attr]
            avro = json.loads(registered.text)
            schema = registered.schema
        return _NoSchemaAttribute(AvroRecordWriter(stream, schema, self._options, avro))


class _NoSchemaAttribute:
    """NiFi writes schema attributes only as the Schema Write Strategy says (not the codec)."""

    def __init__(self, inner: AvroRecordWriter) -> None:
        self._inner = inner

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        self._inner.write(batch)

    def finish(self) -> dict[str, str]:
        attributes = self._inner.finish()
        attributes.pop("avro.schema", None)
        return attributes


class AvroSchemaRegistry(SchemaRegistryService):
    """Schemas by name, each a dynamic property holding Avro schema text (NiFi's).

    Readers and writers with "Schema Access Strategy" = "Use 'Schema Name' Property" look a
    schema up by their "Schema Name" (default ``${schema.name}``).
    """

    nifi_types: ClassVar = ("org.apache.nifi.schemaregistry.services.AvroSchemaRegistry",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-registry-nar")
    tags: ClassVar = ("schema", "registry", "avro", "json", "csv")
    supports_dynamic_properties: ClassVar = True
    property_descriptors: ClassVar = (
        PropertyDescriptor(
            "Validate Field Names",
            description="Whether or not to validate the field names in the Avro schema based "
            "on Avro naming rules.",
            default="true",
            required=True,
            allowable_values=("true", "false"),
            aliases=("avro-reg-validated-field-names",),
        ),
    )

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """Every schema must parse (NiFi validates each dynamic property as Avro)."""
        problems = []
        for name, text in self.dynamic_properties.items():
            try:
                parse_schema_text(text)
            except ConfigurationError as error:
                problems.append(ValidationResult(name, None, False, str(error)))
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Parse every schema once."""
        del context
        self._schemas: dict[str, RecordSchema] = {
            name: parse_schema_text(text) for name, text in self.dynamic_properties.items()
        }

    def retrieve_schema(self, name: str) -> RecordSchema:
        """The schema registered as *name*.

        Raises:
            ConfigurationError: no schema of that name (NiFi's SchemaNotFoundException).
        """
        found = self._schemas.get(name)
        if found is None:
            msg = (
                f"Unable to find schema with name '{name}' in {self.name!r} (it holds "
                f"{sorted(self._schemas)!r})"
            )
            raise ConfigurationError(msg)
        return found

    def avro_schema(self, name: str) -> Any:
        """The Avro schema registered as *name*, parsed."""
        return json.loads(self.dynamic_properties[name])
