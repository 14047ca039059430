"""NiFi's schema access properties and the base classes of the record reader and writer services.

NiFi's readers and writers share their schema properties (``SchemaAccessUtils``,
``SchemaInferenceUtil``, ``SchemaRegistryRecordSetWriter``): how the schema is found (inferred,
the "Schema Text" property, a name looked up in a schema registry, the record's own schema for
writers, the Avro content's embedded schema) and how a writer tells it downstream ("Schema Write
Strategy"). They live here once, with NiFi's names (NiFi 2 names; NiFi 1's internal names such
as ``schema-access-strategy`` are aliases, so flows of either version import).

The API record processors call (see ``flowcore/records/record_io.py``):

- ``RecordReaderService.create_reader(attributes, stream)`` -> an iterator of
  ``pyarrow.RecordBatch`` whose Arrow schema carries NiFi's types;
- ``RecordWriterService.create_writer(schema, attributes, stream)`` -> a writer with
  ``write(batch)`` and ``finish()`` returning NiFi's write attributes (``record.count``,
  ``mime.type``, and the schema attributes of the Schema Write Strategy).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, ClassVar, Protocol

import pyarrow as pa

from flowcore.controller_service import ControllerService, ServiceContext
from flowcore.errors import ConfigurationError
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.avro_schema import parse_schema_text, schema_text
from flowcore.records.record_io import RecordWriter
from flowcore.records.schema import RecordSchema
from flowcore.records.values import TemporalFormats
from flowcore.validators import NON_EMPTY_VALIDATOR, POSITIVE_INTEGER_VALIDATOR, ValidationResult
from processors.record_services._confluent_wire import (
    RegisteredSchema,
    confluent_header,
    lookup_schema_id,
    read_confluent_header,
    schema_id_of,
    with_schema_id,
)
from processors.record_services._conform import conform

__all__ = [
    "RecordReaderService",
    "RecordWriterService",
    "SchemaRegistryService",
    "schema_access_strategy",
]

EL = ExpressionLanguageScope.FLOWFILE_ATTRIBUTES

SCHEMA_NAME_PROPERTY = AllowableValue(
    "schema-name",
    "Use 'Schema Name' Property",
    "The name of the Schema to use is specified by the 'Schema Name' Property. The value of "
    "this property is used to lookup the Schema in the configured Schema Registry service.",
)
SCHEMA_TEXT_PROPERTY = AllowableValue(
    "schema-text-property",
    "Use 'Schema Text' Property",
    "The text of the Schema itself is specified by the 'Schema Text' Property. The value of "
    "this property must be a valid Avro Schema.",
)
SCHEMA_REFERENCE_READER_PROPERTY = AllowableValue(
    "schema-reference-reader",
    "Schema Reference Reader",
    "The schema reference information will be provided through a configured Schema Reference "
    "Reader service implementation.",
)
INHERIT_RECORD_SCHEMA = AllowableValue(
    "inherit-record-schema",
    "Inherit Record Schema",
    "The schema used to write records will be the same schema that was given to the Record "
    "when the Record was created.",
)
INFER_SCHEMA = AllowableValue(
    "infer-schema",
    "Infer Schema",
    "The Schema of the data will be inferred automatically when the data is read.",
)
EMBEDDED_AVRO_SCHEMA = AllowableValue(
    "embedded-avro-schema",
    "Use Embedded Avro Schema",
    "The FlowFile has the Avro Schema embedded within the content, and this schema will be used.",
)
HWX_SCHEMA_REF_ATTRIBUTES = AllowableValue(
    "hwx-schema-ref-attributes", "HWX Schema Reference Attributes", "Not supported by flowcore yet."
)
HWX_CONTENT_ENCODED_SCHEMA = AllowableValue(
    "hwx-content-encoded-schema",
    "HWX Content-Encoded Schema Reference",
    "Not supported by flowcore yet.",
)
CONFLUENT_ENCODED_SCHEMA = AllowableValue(
    "confluent-encoded",
    "Confluent Content-Encoded Schema Reference",
    "The content of the FlowFile contains a reference to a schema in the Schema Registry "
    "service. The reference is encoded as a single 'Magic Byte' followed by 4 bytes "
    "representing the identifier of the schema, as outlined at "
    "http://docs.confluent.io/current/schema-registry/docs/serializer-formatter.html. This is "
    "based on version 3.2.x of the Confluent Schema Registry.",
)

#: Strategies NiFi has that flowcore does not build yet: a validation problem says so.
UNSUPPORTED = frozenset(
    {
        HWX_SCHEMA_REF_ATTRIBUTES.value,
        HWX_CONTENT_ENCODED_SCHEMA.value,
        "hwx-content-encoded-schema",
    }
)

READER_STRATEGIES = (SCHEMA_NAME_PROPERTY, SCHEMA_TEXT_PROPERTY, SCHEMA_REFERENCE_READER_PROPERTY)
WRITER_STRATEGIES = (INHERIT_RECORD_SCHEMA, *READER_STRATEGIES)


def schema_access_strategy(
    values: Iterable[AllowableValue], default: AllowableValue
) -> PropertyDescriptor:
    """NiFi's "Schema Access Strategy" with a service's own allowable values and default."""
    return PropertyDescriptor(
        "Schema Access Strategy",
        description="Specifies how to obtain the schema that is to be used for interpreting "
        "the data.",
        default=default.value,
        required=True,
        allowable_values=tuple(values),
        aliases=("schema-access-strategy",),
    )


_NAMED = (
    SCHEMA_NAME_PROPERTY.value,
    SCHEMA_REFERENCE_READER_PROPERTY.value,
    CONFLUENT_ENCODED_SCHEMA.value,
)


def schema_properties(access: PropertyDescriptor) -> tuple[PropertyDescriptor, ...]:
    """The properties that depend on *access*: registry, name, branch, version, text."""
    return (
        access,
        PropertyDescriptor(
            "Schema Registry",
            description="Specifies the Controller Service to use for the Schema Registry",
            identifies_service="SchemaRegistry",
            dependencies=((access, *_NAMED),),
            aliases=("schema-registry",),
        ),
        PropertyDescriptor(
            "Schema Name",
            description="Specifies the name of the schema to lookup in the Schema Registry "
            "property",
            default="${schema.name}",
            validators=(NON_EMPTY_VALIDATOR,),
            el_scope=EL,
            dependencies=((access, SCHEMA_NAME_PROPERTY.value),),
            aliases=("schema-name",),
        ),
        PropertyDescriptor(
            "Schema Version",
            description="Specifies the version of the schema to lookup in the Schema Registry. "
            "If not specified then the latest version of the schema will be retrieved.",
            validators=(POSITIVE_INTEGER_VALIDATOR,),
            el_scope=EL,
            dependencies=((access, SCHEMA_NAME_PROPERTY.value),),
            aliases=("schema-version",),
        ),
        PropertyDescriptor(
            "Schema Branch",
            description="Specifies the name of the branch to use when looking up the schema in "
            "the Schema Registry property.",
            validators=(NON_EMPTY_VALIDATOR,),
            el_scope=EL,
            dependencies=((access, SCHEMA_NAME_PROPERTY.value),),
            aliases=("schema-branch",),
        ),
        PropertyDescriptor(
            "Schema Text",
            description="The text of an Avro-formatted Schema",
            default="${avro.schema}",
            el_scope=EL,
            dependencies=((access, SCHEMA_TEXT_PROPERTY.value),),
            aliases=("schema-text",),
        ),
        PropertyDescriptor(
            "Schema Reference Reader",
            description="Service implementation responsible for reading FlowFile attributes or "
            "content to determine the Schema Reference Identifier",
            identifies_service="SchemaReferenceReader",
            dependencies=((access, SCHEMA_REFERENCE_READER_PROPERTY.value),),
            aliases=("schema-reference-reader",),
        ),
    )


def schema_inference_cache(access: PropertyDescriptor) -> PropertyDescriptor:
    """NiFi's "Schema Inference Cache" of an inferring reader, shown when *access* infers."""
    return PropertyDescriptor(
        "Schema Inference Cache",
        description="Specifies a Schema Cache to use when inferring the schema (not used by "
        "flowcore: it infers from a bounded sample of each FlowFile).",
        identifies_service="RecordSchemaCacheService",
        dependencies=((access, INFER_SCHEMA.value),),
        aliases=("schema-inference-cache",),
    )


def date_time_properties() -> tuple[PropertyDescriptor, ...]:
    """NiFi's DateTimeUtils properties: Date Format, Time Format, Timestamp Format."""
    return tuple(
        PropertyDescriptor(
            display,
            description=f"Specifies the format to use when reading/writing {kind} fields. If "
            f"not specified, {kind} fields will be assumed to be number of milliseconds since "
            f"epoch (Midnight, Jan 1, 1970 GMT). If specified, the value must match the Java "
            f"java.time.format.DateTimeFormatter format (for example, {example}).",
            aliases=(alias,),
        )
        for display, alias, kind, example in (
            ("Date Format", "Date Format", "Date", "MM/dd/yyyy"),
            ("Time Format", "Time Format", "Time", "HH:mm:ss"),
            ("Timestamp Format", "Timestamp Format", "Timestamp", "MM/dd/yyyy HH:mm:ss"),
        )
    )


class SchemaRegistry(Protocol):
    """What a schema registry service offers (NiFi's ``SchemaRegistry``)."""

    def retrieve_schema(self, name: str) -> RecordSchema:
        """The schema registered as *name*."""
        ...


class _SchemaService(ControllerService):
    """The schema finding both readers and writers do."""

    #: The strategies of this service NiFi has and flowcore builds.
    supported_strategies: ClassVar[frozenset[str]] = frozenset()

    def _access_descriptor(self) -> PropertyDescriptor:
        return next(d for d in self.descriptors if d.display_name == "Schema Access Strategy")

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """A strategy flowcore lacks is named; the registry strategy needs a registry."""
        problems = []
        strategy = values.get("Schema Access Strategy")
        if strategy in UNSUPPORTED:
            problems.append(
                ValidationResult(
                    "Schema Access Strategy",
                    strategy,
                    False,
                    f"the Schema Access Strategy {strategy!r} is not supported by flowcore yet; "
                    "use 'schema-name' with an AvroSchemaRegistry, 'schema-text-property' or "
                    "'infer-schema'",
                )
            )
        if strategy == SCHEMA_NAME_PROPERTY.value and not values.get("Schema Registry"):
            problems.append(
                ValidationResult(
                    "Schema Registry",
                    None,
                    False,
                    "The 'Use 'Schema Name' Property' Schema Access Strategy requires that the "
                    "Schema Registry property be set.",
                )
            )
        if strategy == SCHEMA_REFERENCE_READER_PROPERTY.value:
            for needed in ("Schema Reference Reader", "Schema Registry"):
                if not values.get(needed):
                    problems.append(
                        ValidationResult(
                            needed,
                            None,
                            False,
                            "The 'Schema Reference Reader' Schema Access Strategy requires that "
                            f"the {needed} property be set.",
                        )
                    )
        if strategy == CONFLUENT_ENCODED_SCHEMA.value and not values.get("Schema Registry"):
            problems.append(
                ValidationResult(
                    "Schema Registry",
                    None,
                    False,
                    "The 'Confluent Content-Encoded Schema Reference' Schema Access Strategy "
                    "requires that the Schema Registry property be set (a "
                    "ConfluentSchemaRegistry).",
                )
            )
        if values.get("Schema Branch") and values.get("Schema Version"):
            problems.append(
                ValidationResult(
                    "Schema Branch",
                    values.get("Schema Branch"),
                    False,
                    "Schema Branch and Schema Version cannot be specified together",
                )
            )
        return problems

    def on_enabled(self, context: ServiceContext) -> None:
        """Keep the registry this service names, if any."""
        has = self.resolve_descriptor
        self._strategy = (
            self.get_property("Schema Access Strategy").value
            if has("Schema Access Strategy")
            else None
        )
        registry = self.get_property("Schema Registry").value if has("Schema Registry") else None
        self._registry = context.controller_service(registry) if registry else None
        self._references: dict[str, Any] = {}
        for name in ("Schema Reference Reader", "Schema Reference Writer"):
            reference = self.get_property(name).value if has(name) else None
            if reference:
                self._references[name] = context.controller_service(reference)

    def _evaluate(self, name: str, attributes: Mapping[str, str]) -> str | None:
        return self.get_property(name).evaluate_attribute_expressions(dict(attributes)).value

    def configured_schema(self, attributes: Mapping[str, str]) -> RecordSchema | None:
        """The schema the properties give for a FlowFile with *attributes* (None: none given).

        Raises:
            ConfigurationError: the schema text is not Avro, or the name is not registered.
        """
        strategy = self._strategy
        if strategy == SCHEMA_TEXT_PROPERTY.value:
            text = self._evaluate("Schema Text", attributes)
            if not text:
                msg = "the Schema Text property is empty for this FlowFile (no avro.schema?)"
                raise ConfigurationError(msg)
            return parse_schema_text(text)
        if strategy == SCHEMA_NAME_PROPERTY.value:
            name = self._evaluate("Schema Name", attributes)
            if not name:
                msg = "the Schema Name property is empty for this FlowFile (no schema.name?)"
                raise ConfigurationError(msg)
            if self._registry is None:
                msg = "Schema Access Strategy 'schema-name' needs a Schema Registry"
                raise ConfigurationError(msg)
            version = self._schema_version(attributes)
            if version is not None:  # a registry of versions (ConfluentSchemaRegistry)
                return self._registry.retrieve_schema(name, version)
            return self._registry.retrieve_schema(name)
        return None

    def _schema_version(self, attributes: Mapping[str, str]) -> int | None:
        """The Schema Version for a registry that keeps versions (None: latest, or none kept)."""
        if not hasattr(self._registry, "registered") or not self.resolve_descriptor(
            "Schema Version"
        ):
            return None
        text = self._evaluate("Schema Version", attributes)
        if not text:
            return None
        try:
            return int(text)
        except ValueError:
            msg = f"Schema Version must be a whole number, not {text!r}"
            raise ConfigurationError(msg) from None


class RecordReaderService(_SchemaService):
    """A Record Reader (NiFi's ``RecordReaderFactory``)."""

    implements: ClassVar = ("org.apache.nifi.serialization.RecordReaderFactory",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-record-serialization-services-nar")

    def create_reader(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> Iterator[pa.RecordBatch]:
        """Record batches of *stream*'s records (NiFi's ``createRecordReader``).

        Raises:
            RecordError: a record does not parse or fit (after the batches before it).
            ConfigurationError: the schema cannot be found for this FlowFile.
        """
        registered = self.content_schema(attributes, stream)
        if registered is not None:
            batches = self.read(stream, registered.schema, attributes)
            return (with_schema_id(batch, registered) for batch in batches)
        return self.read(stream, self.configured_schema(attributes), attributes)

    def content_schema(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> RegisteredSchema | None:
        """The registry's schema a reference at the start of *stream* names.

        'confluent-encoded', or a Schema Reference Reader's ('schema-reference-reader'); None
        for the other strategies.

        Raises:
            RecordError: the content does not start with the reference.
            ConfigurationError: the registry does not have the schema.
        """
        if self._strategy == CONFLUENT_ENCODED_SCHEMA.value:
            return read_confluent_header(stream, self._registry)
        if self._strategy == SCHEMA_REFERENCE_READER_PROPERTY.value:
            reader = self._references.get("Schema Reference Reader")
            if reader is None or self._registry is None:
                msg = (
                    "Schema Access Strategy 'schema-reference-reader' needs a Schema Reference "
                    "Reader and a Schema Registry"
                )
                raise ConfigurationError(msg)
            return lookup_schema_id(self._registry, reader.schema_reference(attributes, stream))
        return None

    def read(
        self,
        stream: IO[bytes],
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> Iterator[pa.RecordBatch]:
        """The format's codec over *stream* (None: infer or the embedded schema)."""
        raise NotImplementedError


SCHEMA_WRITE_STRATEGY_VALUES = (
    AllowableValue(
        "no-schema", "Do Not Write Schema", "Do not add any schema-related information."
    ),
    AllowableValue(
        "schema-name",
        "Set 'schema.name' Attribute",
        "The FlowFile will be given an attribute named 'schema.name' and this attribute will "
        "indicate the name of the schema in the Schema Registry.",
    ),
    AllowableValue(
        "full-schema-attribute",
        "Set 'avro.schema' Attribute",
        "The FlowFile will be given an attribute named 'avro.schema' and this attribute will "
        "contain the Avro Schema that describes the records in the FlowFile.",
    ),
    AllowableValue(
        "hwx-schema-ref-attributes", "HWX Schema Reference Attributes", "Not supported yet."
    ),
    AllowableValue(
        "hwx-content-encoded-schema", "HWX Content-Encoded Schema Reference", "Not supported yet."
    ),
    AllowableValue(
        "confluent-encoded",
        "Confluent Schema Registry Reference",
        "The content of the FlowFile will contain a reference to a schema in the Schema "
        "Registry service. The reference is encoded as a single byte indicating the 'protocol "
        "version', followed by 4 bytes indicating the schema identifier.",
    ),
    AllowableValue(
        "schema-reference-writer",
        "Schema Reference Writer",
        "The schema reference information will be written through a configured Schema "
        "Reference Writer service implementation.",
    ),
)


def writer_properties(
    write_values: tuple[AllowableValue, ...] = SCHEMA_WRITE_STRATEGY_VALUES,
    write_default: str = "no-schema",
) -> tuple[PropertyDescriptor, ...]:
    """NiFi's SchemaRegistryRecordSetWriter properties (write strategy, cache, access)."""
    return (
        PropertyDescriptor(
            "Schema Write Strategy",
            description="Specifies how the schema for a Record should be added to the data.",
            default=write_default,
            required=True,
            allowable_values=write_values,
            aliases=("Schema Write Strategy",),
        ),
        PropertyDescriptor(
            "Schema Cache",
            description="Specifies a Schema Cache to add the Record Schema to so that Record "
            "Readers can quickly lookup the schema (not used by flowcore).",
            identifies_service="RecordSchemaCacheService",
            aliases=("schema-cache",),
        ),
        PropertyDescriptor(
            "Schema Reference Writer",
            description="Service implementation responsible for writing FlowFile attributes or "
            "content header with Schema reference information",
            identifies_service="SchemaReferenceWriter",
            dependencies=(("Schema Write Strategy", "schema-reference-writer"),),
        ),
        *schema_properties(schema_access_strategy(WRITER_STRATEGIES, INHERIT_RECORD_SCHEMA)),
    )


class RecordWriterService(_SchemaService):
    """A Record Writer (NiFi's ``RecordSetWriterFactory``)."""

    implements: ClassVar = ("org.apache.nifi.serialization.RecordSetWriterFactory",)
    nifi_bundle: ClassVar = ("org.apache.nifi", "nifi-record-serialization-services-nar")

    def custom_validate(self, values: Mapping[str, str | None]) -> Iterable[ValidationResult]:
        """As the readers', plus a write strategy flowcore lacks."""
        problems = list(super().custom_validate(values))
        write = values.get("Schema Write Strategy")
        if write == "schema-reference-writer" and not values.get("Schema Reference Writer"):
            problems.append(
                ValidationResult(
                    "Schema Reference Writer",
                    None,
                    False,
                    "The 'Schema Reference Writer' Schema Write Strategy requires that the "
                    "Schema Reference Writer property be set.",
                )
            )
        if values.get("Schema Access Strategy") == SCHEMA_REFERENCE_READER_PROPERTY.value:
            problems.append(
                ValidationResult(
                    "Schema Access Strategy",
                    SCHEMA_REFERENCE_READER_PROPERTY.value,
                    False,
                    "a writer cannot read a schema reference from content; use "
                    "'inherit-record-schema', 'schema-name' or 'schema-text-property'",
                )
            )
        if write in UNSUPPORTED or write == "hwx-schema-ref-attributes":
            problems.append(
                ValidationResult(
                    "Schema Write Strategy",
                    write,
                    False,
                    f"the Schema Write Strategy {write!r} is not supported by flowcore yet; use "
                    "'no-schema', 'schema-name', 'full-schema-attribute' or 'confluent-encoded'",
                )
            )
        return problems

    def write_schema(self, batch_schema: pa.Schema, attributes: Mapping[str, str]) -> RecordSchema:
        """The schema to write records read with *batch_schema* (NiFi's ``getSchema``)."""
        return self.configured_schema(attributes) or RecordSchema.from_arrow(batch_schema)

    def create_writer(
        self, schema: RecordSchema | pa.Schema, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> RecordWriter:
        """A writer of records of *schema* to *stream* (NiFi's ``createWriter``).

        *schema* is the records' own (an Arrow schema is taken as NiFi's types it carries); the
        Schema Access Strategy may replace it. ``finish()`` adds the Schema Write Strategy's
        attributes (``schema.name``, ``avro.schema``).
        """
        own = schema if isinstance(schema, RecordSchema) else RecordSchema.from_arrow(schema)
        chosen = self.configured_schema(attributes) or own
        has_write = self.resolve_descriptor("Schema Write Strategy") is not None
        write = self.get_property("Schema Write Strategy").value if has_write else None
        if write == "confluent-encoded":
            stream.write(confluent_header(self._confluent_id(schema, attributes)))
        elif write == "schema-reference-writer":
            stream.write(
                self._references["Schema Reference Writer"].header(
                    self._confluent_id(schema, attributes)
                )
            )
        return _SchemaAttributes(
            self.open_writer(stream, chosen, attributes), self, chosen, attributes
        )

    def open_writer(
        self, stream: IO[bytes], schema: RecordSchema, attributes: Mapping[str, str]
    ) -> RecordWriter:
        """The format's writer."""
        raise NotImplementedError

    def _confluent_id(self, own: RecordSchema | pa.Schema, attributes: Mapping[str, str]) -> int:
        """The registry id the ``confluent-encoded`` header references.

        The schema named in a ConfluentSchemaRegistry ('schema-name'), else the id the records
        were read with (a reader's 'confluent-encoded').

        Raises:
            ConfigurationError: the id is not known (NiFi's message).
        """
        if self._strategy == SCHEMA_NAME_PROPERTY.value and hasattr(self._registry, "registered"):
            name = self._evaluate("Schema Name", attributes) or ""
            return self._registry.registered(name, self._schema_version(attributes)).id  # type: ignore[union-attr]
        found = schema_id_of(own)
        if found is None:
            msg = (
                "Cannot write Confluent Schema Registry Reference because the Schema Identifier "
                "is not known: read the records with 'confluent-encoded', or set Schema Access "
                "Strategy to 'schema-name' with a ConfluentSchemaRegistry"
            )
            raise ConfigurationError(msg)
        return found

    def schema_attributes(
        self, schema: RecordSchema, attributes: Mapping[str, str]
    ) -> dict[str, str]:
        """The Schema Write Strategy's attributes."""
        write = self.get_property("Schema Write Strategy").value
        if write == "schema-name":
            name = (
                self._evaluate("Schema Name", attributes)
                if self._strategy == "schema-name"
                else None
            )
            return {"schema.name": name or attributes.get("schema.name", "")}
        if write == "full-schema-attribute":
            return {"avro.schema": schema_text(schema)}
        return {}


class _SchemaAttributes:
    """A format writer whose ``finish`` adds the schema attributes."""

    def __init__(
        self,
        inner: RecordWriter,
        service: RecordWriterService,
        schema: RecordSchema,
        attributes: Mapping[str, str],
    ) -> None:
        self._inner = inner
        self._service = service
        self._schema = schema
        self._attributes = attributes
        self.schema = schema
        self._target = schema.to_arrow()
        self._formats = self._writer_formats()  # once: the service's properties, not per batch
        self._written = 0  # records written so far: a bad value's record number counts from 1

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Write every record of *batch*, cast to the writer's schema when it differs."""
        target = self._target
        # the metadata too: a CHOICE column is text like a STRING one, its values JSON text
        if batch.schema.names != target.names or not batch.schema.equals(
            target, check_metadata=True
        ):
            batch = conform(batch, target, first=self._written + 1, formats_=self._formats)
        self._inner.write(batch)
        self._written += batch.num_rows

    def _writer_formats(self) -> TemporalFormats:
        """The writer's Date, Time and Timestamp Format (unset where it has none)."""
        names = ("Date Format", "Time Format", "Timestamp Format")
        given = [
            self._service.get_property(name).value
            if self._service.resolve_descriptor(name) is not None
            else None
            for name in names
        ]
        return TemporalFormats(*(value or None for value in given))

    def finish(self) -> dict[str, str]:
        """The format's attributes, then the schema's."""
        written = dict(self._inner.finish())
        written.update(self._service.schema_attributes(self._schema, self._attributes))
        return written


class SchemaRegistryService(ControllerService):
    """Marker base of schema registries (NiFi's ``SchemaRegistry``)."""

    implements: ClassVar = ("org.apache.nifi.schemaregistry.services.SchemaRegistry",)

    def retrieve_schema(self, name: str) -> RecordSchema:
        """The schema registered as *name*."""
        raise NotImplementedError
