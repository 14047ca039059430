"""ConvertAvroToJSON: Avro records (a data file, or one bare datum) as JSON text."""

from __future__ import annotations

import json
from typing import IO, Any, ClassVar

import fastavro

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR, ValidationResult
from processors._avro_text import BAD_AVRO, to_avro_json, to_string

__all__ = ["ConvertAvroToJSON"]

CONTAINER_ARRAY = "array"
CONTAINER_NONE = "none"
EMPTY_JSON_OBJECT = b"{}"

CONTAINER_OPTIONS = PropertyDescriptor(
    "JSON container options",
    description="Determines how stream of records is exposed: either as a sequence of single "
    "Objects (none) (i.e. writing every Object to a new line), or as an array of Objects "
    "(array).",
    required=True,
    default=CONTAINER_ARRAY,
    allowable_values=(CONTAINER_NONE, CONTAINER_ARRAY),
)
WRAP_SINGLE_RECORD = PropertyDescriptor(
    "Wrap Single Record",
    description="Determines if the resulting output for empty records or a single record should "
    "be wrapped in a container array as specified by 'JSON container options'",
    required=True,
    default="false",
    allowable_values=("true", "false"),
)
SCHEMA = PropertyDescriptor(
    "Avro schema",
    description="If the Avro records do not contain the schema (datum only), it must be "
    "specified here.",
    required=False,
    validators=(NON_EMPTY_VALIDATOR,),
)
USE_AVRO_JSON = PropertyDescriptor(
    "Use AVRO JSON",
    description="Determines if the resulting JSON output is in AVRO-JSON format or standard "
    "JSON format. Default 'false'",
    required=True,
    default="false",
    allowable_values=("false", "true"),
)

REL_SUCCESS = Relationship(
    "success", "A FlowFile is routed to this relationship after it has been converted to JSON"
)
REL_FAILURE = Relationship(
    "failure",
    "A FlowFile is routed to this relationship if it cannot be parsed as Avro or cannot be "
    "converted to JSON for any reason",
)


class ConvertAvroToJSON(Processor):
    """Converts binary Avro records into JSON objects (NiFi 1's ConvertAvroToJSON).

    The JSON keeps the records' structure, not their schema. An Avro data file's records become
    a JSON array (``array``) or objects one per line (``none``); a single record or none (``{}``)
    is wrapped in an array only with Wrap Single Record and ``array``. With an Avro schema given,
    the content is one bare datum (NiFi reads only the first). Each record is printed as Java
    Avro's ``GenericData.toString`` does (``{"name": "Alyssa", "favorite_number": 256}``); with
    Use AVRO JSON the first record (as in NiFi) is in Avro's JSON encoding. Records are read
    and written one at a time (memory: one record). Content that is not Avro goes to
    ``failure``; ``mime.type`` is ``application/json``.
    """

    CONTAINER_OPTIONS = CONTAINER_OPTIONS
    WRAP_SINGLE_RECORD = WRAP_SINGLE_RECORD
    SCHEMA = SCHEMA
    USE_AVRO_JSON = USE_AVRO_JSON

    property_descriptors: ClassVar = (CONTAINER_OPTIONS, WRAP_SINGLE_RECORD, SCHEMA, USE_AVRO_JSON)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    tags: ClassVar = ("avro", "convert", "json")
    writes_attributes: ClassVar = {"mime.type": "Sets the mime type to application/json"}

    def custom_validate(self, values: Any) -> list[ValidationResult]:
        """The Avro schema, when given, must parse."""
        text = values.get(SCHEMA.name)
        if not text:
            return []
        try:
            fastavro.parse_schema(json.loads(text))
        except Exception as error:
            return [ValidationResult(SCHEMA.name, text, False, f"not a valid Avro schema: {error}")]
        return []

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Convert one FlowFile."""
        flowfile = session.get()
        if flowfile is None:
            return
        use_container = context.get_property(CONTAINER_OPTIONS).value == CONTAINER_ARRAY
        wrap = bool(context.get_property(WRAP_SINGLE_RECORD).as_boolean()) and use_container
        avro_json = bool(context.get_property(USE_AVRO_JSON).as_boolean())
        schema_text = context.get_property(SCHEMA).value

        def convert(source: IO[bytes], out: IO[bytes]) -> None:
            if schema_text:
                _convert_datum(source, out, json.loads(schema_text), wrap=wrap, avro_json=avro_json)
            else:
                _convert_file(source, out, container=use_container, wrap=wrap, avro_json=avro_json)

        try:
            flowfile = session.rewrite(flowfile, convert)
        except BAD_AVRO as error:
            context.logger.error(
                "Failed to convert %s from Avro to JSON due to %s; transferring to failure",
                flowfile,
                error,
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        flowfile = session.put_attribute(flowfile, "mime.type", "application/json")
        session.transfer(flowfile, REL_SUCCESS)


def _convert_datum(
    source: IO[bytes], out: IO[bytes], schema: Any, *, wrap: bool, avro_json: bool
) -> None:
    """NiFi's bare-datum branch: the first datum only, wrapped when asked."""
    record = fastavro.schemaless_reader(source, fastavro.parse_schema(schema), None)
    if wrap:
        out.write(b"[")
    render = to_avro_json if avro_json else to_string
    out.write(EMPTY_JSON_OBJECT if record is None else render(record, schema).encode())
    if wrap:
        out.write(b"]")


def _convert_file(
    source: IO[bytes], out: IO[bytes], *, container: bool, wrap: bool, avro_json: bool
) -> None:
    """NiFi's data-file branch, byte for byte (its bracket conditions included)."""
    schema, records_iter = _raw_records(source)
    records = iter(records_iter)
    first = next(records, None)
    second = next(records, None) if first is not None else None
    count = (first is not None) + (second is not None)
    if (second is not None and container) or wrap:
        out.write(b"[")
    if first is None:
        out.write(EMPTY_JSON_OBJECT)
    else:
        out.write((to_avro_json if avro_json else to_string)(first, schema).encode())
    pending = second
    while pending is not None:
        out.write(b"," if container else b"\n")
        out.write(to_string(pending, schema).encode())
        pending = next(records, None)
        count += pending is not None
    if (count > 1 and container) or wrap:
        out.write(b"]")


def _raw_records(source: IO[bytes]) -> tuple[Any, Any]:
    """A data file's schema and its records (logical values go back to raw when printed)."""
    reader = fastavro.reader(source)  # reads the header: content that is not Avro fails here
    return json.loads(reader.metadata["avro.schema"]), reader
