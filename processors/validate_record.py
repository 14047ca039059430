"""ValidateRecord: split a FlowFile's records into valid and invalid ones by a schema."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import IO, Any, ClassVar

import attrs
import pyarrow as pa

from flowcore.errors import RecordError
from flowcore.flowfile import FlowFile
from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, ExpressionLanguageScope, PropertyDescriptor
from flowcore.records.avro_schema import parse_schema_text
from flowcore.records.csv_reader import CsvReaderOptions
from flowcore.records.json_reader import JsonReaderOptions
from flowcore.records.record_io import (
    RECORD_FAILURES,
    RECORD_READER,
    RECORD_WRITER,
    read_records,
    services,
    write_records,
)
from flowcore.records.schema import STRING, RecordSchema
from flowcore.records.values import TemporalFormats
from flowcore.session.process_session import ProcessSession
from flowcore.validators import POSITIVE_INTEGER_VALIDATOR, ValidationResult
from processors._record_validation import (
    convert_text,
    decoded_choices,
    json_mismatches,
    validate_batch,
)
from processors.record_services._options import options_from
from processors.record_services.csv import CSVReader
from processors.record_services.json import JsonTreeReader
from processors.record_services.schema_access import RecordReaderService, RecordWriterService

__all__ = ["ValidateRecord"]

READER_SCHEMA = AllowableValue(
    "reader-schema",
    "Use Reader's Schema",
    "The schema to validate the data against is determined by asking the configured Record "
    "Reader for its schema",
)
SCHEMA_NAME = AllowableValue("schema-name", "Use 'Schema Name' Property")
SCHEMA_TEXT = AllowableValue("schema-text-property", "Use 'Schema Text' Property")

REL_VALID = Relationship(
    "valid", "Records that are valid according to the schema will be routed to this relationship"
)
REL_INVALID = Relationship(
    "invalid",
    "Records that are not valid according to the schema will be routed to this relationship",
)
REL_FAILURE = Relationship(
    "failure",
    "If the records cannot be read, validated, or written, for any reason, the original "
    "FlowFile will be routed to this relationship",
)


def _flag(name: str, alias: str, description: str, default: str) -> PropertyDescriptor:
    return PropertyDescriptor(
        name,
        description=description,
        default=default,
        required=True,
        allowable_values=("true", "false"),
        aliases=(alias,),
    )


class ValidateRecord(Processor):
    """Validates a FlowFile's records against a schema (NiFi's ValidateRecord).

    Valid records go, written by the Record Writer with the validation schema, to ``valid``;
    invalid ones, written by the Record Writer for Invalid Records (else the Record Writer) with
    the reader's schema, to ``invalid``, with a ROUTE event whose details say why (NiFi's
    text: missing fields, fields not in the schema, fields whose type did not match). Both are
    children of the original, which is dropped; ``failure`` takes the original when its records
    cannot be read or written. A value that does not fit the reader's schema makes its record
    invalid, not the FlowFile a failure: the content is then read raw, as NiFi's ValidateRecord
    reads (:class:`_RawReader`). Memory: the content is read in batches, once to validate and
    once per output written.
    """

    INVALID_RECORD_WRITER = PropertyDescriptor(
        "Record Writer for Invalid Records",
        description="If specified, this Controller Service will be used to write out any "
        'records that are invalid. If not specified, the writer specified by the "Record '
        'Writer" property will be used with the schema used to read the input records.',
        identifies_service="RecordSetWriterFactory",
        aliases=("invalid-record-writer",),
    )
    SCHEMA_ACCESS_STRATEGY = PropertyDescriptor(
        "Schema Access Strategy",
        description="Specifies how to obtain the schema that should be used to validate records",
        default=READER_SCHEMA.value,
        required=True,
        allowable_values=(READER_SCHEMA, SCHEMA_NAME, SCHEMA_TEXT),
        aliases=("schema-access-strategy",),
    )
    SCHEMA_REGISTRY = PropertyDescriptor(
        "Schema Registry",
        description="Specifies the Controller Service to use for the Schema Registry",
        identifies_service="SchemaRegistry",
        aliases=("schema-registry",),
    )
    SCHEMA_NAME_PROPERTY = PropertyDescriptor(
        "Schema Name",
        description="Specifies the name of the schema to lookup in the Schema Registry property",
        default="${schema.name}",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=((SCHEMA_ACCESS_STRATEGY, SCHEMA_NAME.value),),
        aliases=("schema-name",),
    )
    SCHEMA_BRANCH = PropertyDescriptor(
        "Schema Branch",
        description="Specifies the name of the branch to use when looking up the schema",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=((SCHEMA_ACCESS_STRATEGY, SCHEMA_NAME.value),),
        aliases=("schema-branch",),
    )
    SCHEMA_VERSION = PropertyDescriptor(
        "Schema Version",
        description="Specifies the version of the schema to lookup in the Schema Registry",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=((SCHEMA_ACCESS_STRATEGY, SCHEMA_NAME.value),),
        aliases=("schema-version",),
    )
    SCHEMA_TEXT_PROPERTY = PropertyDescriptor(
        "Schema Text",
        description="The text of an Avro-formatted Schema",
        default="${avro.schema}",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        dependencies=((SCHEMA_ACCESS_STRATEGY, SCHEMA_TEXT.value),),
        aliases=("schema-text",),
    )
    ALLOW_EXTRA_FIELDS = _flag(
        "Allow Extra Fields",
        "allow-extra-fields",
        "If the incoming data has fields that are not present in the schema, this property "
        "determines whether or not the Record is valid.",
        "true",
    )
    STRICT_TYPE_CHECKING = _flag(
        "Strict Type Checking",
        "strict-type-checking",
        "If the incoming data has a Record where a field is not of the correct type, this "
        "property determines how to handle the Record: true, invalid; false, valid if the value "
        "converts.",
        "true",
    )
    COERCE_TYPES = _flag(
        "Force Types From Reader Schema",
        "coerce-types",
        "If enabled, the processor will coerce every field to the type specified in the "
        "Reader's schema (flowcore's readers always do).",
        "false",
    )
    VALIDATION_DETAILS_ATTRIBUTE_NAME = PropertyDescriptor(
        "Validation Details Attribute Name",
        description="If specified, when a validation error occurs, this attribute name will be "
        "used to leave the details.",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        aliases=("validation-details-attribute-name",),
    )
    MAX_VALIDATION_DETAILS_LENGTH = PropertyDescriptor(
        "Maximum Validation Details Length",
        description="Specifies the maximum number of characters that validation details value "
        "can have.",
        default="1024",
        el_scope=ExpressionLanguageScope.FLOWFILE_ATTRIBUTES,
        validators=(POSITIVE_INTEGER_VALIDATOR,),
        aliases=("maximum-validation-details-length",),
    )
    property_descriptors: ClassVar = (
        RECORD_READER,
        RECORD_WRITER,
        INVALID_RECORD_WRITER,
        SCHEMA_ACCESS_STRATEGY,
        SCHEMA_REGISTRY,
        SCHEMA_NAME_PROPERTY,
        SCHEMA_BRANCH,
        SCHEMA_VERSION,
        SCHEMA_TEXT_PROPERTY,
        ALLOW_EXTRA_FIELDS,
        STRICT_TYPE_CHECKING,
        COERCE_TYPES,
        VALIDATION_DETAILS_ATTRIBUTE_NAME,
        MAX_VALIDATION_DETAILS_LENGTH,
    )
    relationships: ClassVar = (REL_VALID, REL_INVALID, REL_FAILURE)
    tags: ClassVar = ("record", "schema", "validate")
    writes_attributes: ClassVar[Mapping[str, str]] = {
        "mime.type": "Sets the mime.type attribute to the MIME Type specified by the Record Writer",
        "record.count": "The number of records in the FlowFile routed to a relationship",
    }

    def custom_validate(self, values: Mapping[str, str | None]) -> list[ValidationResult]:
        """The schema name strategy needs a registry (NiFi's message)."""
        if values.get("Schema Access Strategy") == SCHEMA_NAME.value and not values.get(
            "Schema Registry"
        ):
            return [
                ValidationResult(
                    "Schema Registry",
                    None,
                    False,
                    "If the Schema Access Strategy is set to \"Use 'Schema Name' Property\", "
                    "the Schema Registry property must also be set",
                )
            ]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Validate one FlowFile's records."""
        original = session.get()
        if original is None:
            return
        reader, writer = services(context, session)
        assert writer is not None
        invalid_name = context.get_property(self.INVALID_RECORD_WRITER).value
        invalid_writer = session.controller_service(invalid_name) if invalid_name else writer
        created: list[FlowFile] = []
        try:
            schema, counts, details, source = self._validate(context, session, original, reader)
            outputs = []
            if counts[0]:
                child = self._write(session, context, original, source, writer, schema, valid=True)
                created.append(child)
                outputs.append((child, REL_VALID, None))
            if counts[1]:
                child = self._write(
                    session, context, original, source, invalid_writer, schema, valid=False
                )
                created.append(child)
                outputs.append((child, REL_INVALID, details))
        except RECORD_FAILURES as error:
            context.logger.error("Failed to process %s; will route to failure: %s", original, error)
            session.remove(created)
            session.transfer(original, REL_FAILURE)
            return
        for child, relationship, why in outputs:
            child = self._details(context, session, child, why)  # noqa: PLW2901
            session.transfer(child, relationship)
            session.provenance.route(child, relationship, details=why)
        session.adjust_counter("Records Validated", counts[0] + counts[1])
        session.adjust_counter("Records Found Valid", counts[0])
        session.adjust_counter("Records Found Invalid", counts[1])
        session.remove(original)

    def _schema(
        self, context: ProcessContext, session: ProcessSession, original: FlowFile
    ) -> RecordSchema | None:
        strategy = context.get_property(self.SCHEMA_ACCESS_STRATEGY).value
        if strategy == SCHEMA_TEXT.value:
            text = context.get_property(self.SCHEMA_TEXT_PROPERTY).evaluate_attribute_expressions(
                original
            )
            return parse_schema_text(text.value or "")
        if strategy == SCHEMA_NAME.value:
            registry = session.controller_service(
                context.get_property(self.SCHEMA_REGISTRY).value or ""
            )
            name = context.get_property(self.SCHEMA_NAME_PROPERTY).evaluate_attribute_expressions(
                original
            )
            return registry.retrieve_schema(name.value or "")  # type: ignore[attr-defined]
        return None  # the reader's

    def _verdicts(
        self,
        context: ProcessContext,
        batches: Iterator[pa.RecordBatch],
        schema: RecordSchema | None,
        source: _Source,
    ) -> Iterator[tuple[pa.RecordBatch, pa.RecordBatch, RecordSchema, object]]:
        """(batch as read, batch for the valid output, the schema judged against, verdict).

        *source* read raw (:class:`_RawReader`): the batches' text is converted first, as
        NiFi's readers do; with the JSON values as parsed (:class:`_JsonValues`): strict type
        checking judges those.
        """
        allow = bool(context.get_property(self.ALLOW_EXTRA_FIELDS).as_boolean())
        strict = bool(context.get_property(self.STRICT_TYPE_CHECKING).as_boolean())
        for batch in batches:
            against = schema or RecordSchema.from_arrow(batch.schema)
            typed, unconverted, mismatched = (batch, None, None)
            if isinstance(source, _RawReader):
                typed, unconverted = convert_text(
                    batch, against, source.formats, temporal_only=not source.text
                )
            elif isinstance(source, _JsonValues):
                mismatched = json_mismatches(source.take(batch.num_rows), against)
            verdict = validate_batch(
                typed,
                against,
                allow_extra=allow,
                strict=strict,
                unconverted=unconverted,
                mismatched=mismatched,
            )
            yield batch, typed, against, verdict

    def _validate(
        self,
        context: ProcessContext,
        session: ProcessSession,
        original: FlowFile,
        reader: RecordReaderService,
    ) -> tuple[RecordSchema | None, tuple[int, int], str, _Source]:
        """Validate through the reader; when a value does not fit the reader's schema, raw.

        NiFi's ValidateRecord reads raw (``nextRecord(false, false)``): a value that does not
        fit makes its record invalid, not the FlowFile a failure. flowcore's readers coerce, so
        when that read fails the content is read again raw (:class:`_RawReader`). With strict
        type checking, JSON is read with its values as parsed beside the coerced batches
        (:class:`_JsonValues`): ``"4"`` read into an INT is still a string to judge.

        Returns:
            The schema, the valid and invalid counts, NiFi's details, and the source the
            outputs are read from (so they get the same verdicts).
        """
        schema = self._schema(context, session, original)
        source: _Source = reader
        if (
            isinstance(reader, JsonTreeReader)
            and context.get_property(self.STRICT_TYPE_CHECKING).as_boolean()
        ):
            source = _JsonValues(reader)
        try:
            return (*self._validated(context, session, original, source, schema), source)
        except RecordError:
            schema = schema or reader.configured_schema(original.attributes)
            raw = _RawReader.of(reader, schema, original.attributes)
            if raw is None or schema is None:
                raise
            return (*self._validated(context, session, original, raw, schema), raw)

    def _validated(
        self,
        context: ProcessContext,
        session: ProcessSession,
        original: FlowFile,
        reader: _Source,
        schema: RecordSchema | None,
    ) -> tuple[RecordSchema | None, tuple[int, int], str]:
        valid = invalid = 0
        missing: set[str] = set()
        extra: set[str] = set()
        wrong: set[str] = set()
        with read_records(session, original, reader) as records:
            for *_, verdict in self._verdicts(context, iter(records), schema, reader):
                kept = int(verdict.valid.sum())  # type: ignore[attr-defined]
                valid += kept
                invalid += len(verdict.valid) - kept  # type: ignore[attr-defined]
                missing |= verdict.missing  # type: ignore[attr-defined]
                extra |= verdict.extra  # type: ignore[attr-defined]
                wrong |= verdict.invalid  # type: ignore[attr-defined]
            if schema is None and records.schema is not None:
                schema = records.schema
        return schema, (valid, invalid), _explain(missing, extra, wrong)

    def _write(  # noqa: PLR0917 (the output's parts)
        self,
        session: ProcessSession,
        context: ProcessContext,
        original: FlowFile,
        reader: _Source,
        writer: RecordWriterService,
        schema: RecordSchema | None,
        *,
        valid: bool,
    ) -> FlowFile:
        """The valid (converted) or the invalid (as read) records, written by *writer*."""
        child = session.create(original)
        with read_records(session, original, reader) as records:
            verdicts = self._verdicts(context, iter(records), schema, reader)
            first = next(verdicts, None)
            assert first is not None

            def chosen() -> Iterator[pa.RecordBatch]:
                for batch, typed, against, verdict in (first, *verdicts):
                    mask = verdict.valid if valid else ~verdict.valid  # type: ignore[attr-defined]
                    if valid:
                        yield decoded_choices(typed.filter(pa.array(mask)), against)
                    else:
                        yield batch.filter(pa.array(mask))

            out_schema = (schema or first[2]) if valid else RecordSchema.from_arrow(first[0].schema)
            child, written = write_records(
                session, child, writer, out_schema, chosen(), attributes=original.attributes
            )
        return session.put_all_attributes(child, written)

    def _details(
        self, context: ProcessContext, session: ProcessSession, child: FlowFile, why: str | None
    ) -> FlowFile:
        name = (
            context.get_property(self.VALIDATION_DETAILS_ATTRIBUTE_NAME)
            .evaluate_attribute_expressions(child)
            .value
        )
        if not name or not why:
            return child
        limit = (
            context.get_property(self.MAX_VALIDATION_DETAILS_LENGTH)
            .evaluate_attribute_expressions(child)
            .as_integer()
        )
        return session.put_attribute(child, name, why[: limit or len(why)])


@attrs.frozen
class _RawReader:
    """A Record Reader read raw, as NiFi's ValidateRecord reads (no coercion to its schema).

    CSV has no types: every field of the schema as text, by the schema's names (a headerless
    CSV still needs them), converted value by value when validated (``text``). The other
    formats: their own parsed values (the reader's inference).

    Attributes:
        reader: the configured Record Reader.
        schema: the schema to read with (None: the reader infers).
        text: the batches are CSV text to convert (else only dates and times are).
        formats: the reader's Date, Time and Timestamp Formats.
    """

    reader: RecordReaderService
    schema: RecordSchema | None
    text: bool
    formats: TemporalFormats

    @classmethod
    def of(
        cls,
        reader: RecordReaderService,
        schema: RecordSchema | None,
        attributes: Mapping[str, str],
    ) -> _RawReader | None:
        """The raw reading of *reader* whose records *schema* names (None: none raw)."""
        if isinstance(reader, CSVReader):
            if schema is None:
                return None
            formats = options_from(reader, CsvReaderOptions, attributes).temporal
            strings = RecordSchema.of([(f.name, STRING) for f in schema.fields])
            return cls(reader, strings, True, formats)
        formats = TemporalFormats()
        if isinstance(reader, JsonTreeReader):
            formats = options_from(reader, JsonReaderOptions).temporal
        return cls(reader, None, False, formats)

    def configured_schema(self, attributes: Mapping[str, str]) -> RecordSchema | None:
        """The schema read with."""
        return self.schema

    def create_reader(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> Iterator[pa.RecordBatch]:
        """*stream*'s records read raw."""
        return self.reader.read(stream, self.schema, attributes)


@attrs.define
class _JsonValues:
    """JsonTreeReader's batches with each record's JSON value as parsed, for strict checking.

    NiFi judges a JSON value by its own kind (``"4"`` is a String, not an INT); the batches
    hold the coerced values, so the parsed ones come beside them, taken a batch at a time
    (:meth:`take`). One read at a time: :meth:`create_reader` starts the values afresh.

    Attributes:
        reader: the configured JsonTreeReader.
        values: the current read's values not taken yet.
    """

    reader: JsonTreeReader
    values: Iterator[Any] = attrs.field(factory=lambda: iter(()))

    def configured_schema(self, attributes: Mapping[str, str]) -> RecordSchema | None:
        """The reader's schema."""
        return self.reader.configured_schema(attributes)

    def create_reader(
        self, attributes: Mapping[str, str], stream: IO[bytes]
    ) -> Iterator[pa.RecordBatch]:
        """*stream*'s batches, as the reader reads them; their values wait in :attr:`values`."""
        batches, self.values = self.reader.read_values(attributes, stream)
        return batches

    def take(self, count: int) -> list[Any]:
        """The parsed values of the next *count* records (those of the batch just read)."""
        return list(itertools.islice(self.values, count))


#: Where ValidateRecord reads the records from: the reader, raw, or with the JSON values.
_Source = RecordReaderService | _RawReader | _JsonValues


def _java_set(values: set[str]) -> str:
    return "[" + ", ".join(sorted(values)) + "]"


def _explain(missing: set[str], extra: set[str], wrong: set[str]) -> str:
    """NiFi's explanation of why records were invalid (the ROUTE event's details).

    As NiFi builds it: every part after the first kind is preceded by ``; `` (its builder is
    never empty, so the separator shows even when no field was missing).
    """
    text = "Records in this FlowFile were invalid for the following reasons: "
    if missing:
        text += f"The following {len(missing)} fields were missing: {_java_set(missing)}"
    if extra:
        text += (
            f"; The following {len(extra)} fields were present in the Record but not in the "
            f"schema: {_java_set(extra)}"
        )
    if wrong:
        text += (
            f"; The following {len(wrong)} fields had values whose type did not match the "
            f"schema: {_java_set(wrong)}"
        )
    return text
