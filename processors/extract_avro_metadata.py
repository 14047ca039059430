"""ExtractAvroMetadata: an Avro data file's header (schema, fingerprint, keys) into attributes."""

from __future__ import annotations

import json
import re
from typing import IO, Any, ClassVar

import fastavro
from fastavro.schema import fingerprint, parse_schema, to_parsing_canonical_form

from flowcore.processor.base import Processor
from flowcore.processor.context import ProcessContext
from flowcore.processor.relationship import Relationship
from flowcore.properties import AllowableValue, PropertyDescriptor
from flowcore.session.process_session import ProcessSession
from flowcore.validators import NON_EMPTY_VALIDATOR
from processors._avro_text import BAD_AVRO

__all__ = ["ExtractAvroMetadata"]

SCHEMA_TYPE_ATTR = "schema.type"
SCHEMA_NAME_ATTR = "schema.name"
SCHEMA_FINGERPRINT_ATTR = "schema.fingerprint"
ITEM_COUNT_ATTR = "item.count"

CRC_64_AVRO = AllowableValue("CRC-64-AVRO", "CRC-64-AVRO")
MD5 = AllowableValue("MD5", "MD5")
SHA_256 = AllowableValue("SHA-256", "SHA-256")

FINGERPRINT_ALGORITHM = PropertyDescriptor(
    "Fingerprint Algorithm",
    description="The algorithm used to generate the schema fingerprint. Available choices are "
    "based on the Avro recommended practices for fingerprint generation.",
    required=True,
    default=CRC_64_AVRO.value,
    allowable_values=(CRC_64_AVRO, MD5, SHA_256),
)
METADATA_KEYS = PropertyDescriptor(
    "Metadata Keys",
    description="A comma-separated list of keys indicating key/value pairs to extract from the "
    "Avro file header. The key 'avro.schema' can be used to extract the full schema in JSON "
    "format, and 'avro.codec' can be used to extract the codec name if one exists.",
    required=False,
    validators=(NON_EMPTY_VALIDATOR,),
)
COUNT_ITEMS = PropertyDescriptor(
    "Count Items",
    description="If true the number of items in the datafile will be counted and stored in a "
    "FlowFile attribute 'item.count'. The counting is done by reading blocks and getting the "
    "number of items for each block, thus avoiding de-serializing. The items being counted will "
    "be the top-level items in the datafile. For example, with a schema of type record the items "
    "will be the records, and for a schema of type Array the items will be the arrays (not the "
    "number of entries in each array).",
    required=True,
    default="false",
    allowable_values=("true", "false"),
)

REL_SUCCESS = Relationship(
    "success", "A FlowFile is routed to this relationship after metadata has been extracted."
)
REL_FAILURE = Relationship(
    "failure",
    "A FlowFile is routed to this relationship if it cannot be parsed as Avro or metadata "
    "cannot be extracted for any reason",
)


class ExtractAvroMetadata(Processor):
    """Extracts metadata from the header of an Avro data file (NiFi's ExtractAvroMetadata).

    Writes ``schema.type`` (``record``, ``array``...), ``schema.name`` (a named type's short
    name, else the type's), ``schema.fingerprint`` (the hex Fingerprint Algorithm of the
    schema's Parsing Canonical Form: CRC-64-AVRO, MD5 or SHA-256, Avro's), the header keys named
    in Metadata Keys (``avro.schema``, ``avro.codec``...) and, with Count Items, ``item.count``
    (the top-level items, summed from the block headers without decoding the items). The
    content is unchanged; content that is not an Avro data file goes to ``failure``.
    """

    FINGERPRINT_ALGORITHM = FINGERPRINT_ALGORITHM
    METADATA_KEYS = METADATA_KEYS
    COUNT_ITEMS = COUNT_ITEMS

    property_descriptors: ClassVar = (FINGERPRINT_ALGORITHM, METADATA_KEYS, COUNT_ITEMS)
    relationships: ClassVar = (REL_SUCCESS, REL_FAILURE)
    tags: ClassVar = ("avro", "schema", "metadata")
    writes_attributes: ClassVar = {
        SCHEMA_TYPE_ATTR: "The type of the schema (i.e. record, enum, etc.).",
        SCHEMA_NAME_ATTR: "Contains the name when the type is a record, enum or fixed, otherwise "
        "contains the name of the primitive type.",
        SCHEMA_FINGERPRINT_ATTR: "The result of the Fingerprint Algorithm as a Hex string.",
        ITEM_COUNT_ATTR: "The total number of items in the datafile, only written if Count "
        "Items is set to true.",
    }

    def on_trigger(self, context: ProcessContext, session: ProcessSession) -> None:
        """Read one FlowFile's header (and block counts) into attributes."""
        flowfile = session.get()
        if flowfile is None:
            return
        count_items = bool(context.get_property(COUNT_ITEMS).as_boolean())
        algorithm = context.get_property(FINGERPRINT_ALGORITHM).value or CRC_64_AVRO.value
        keys_text = context.get_property(METADATA_KEYS).value or ""
        requested = {k.strip() for k in re.split(r"\s*,\s*", keys_text)} if keys_text else set()
        try:
            with session.read(flowfile) as raw:
                metadata = _metadata(raw, algorithm, requested, count_items=count_items)
        except BAD_AVRO as error:
            context.logger.error(
                "Transferring to failure since failed to extract Avro metadata for %s: %s",
                flowfile,
                error,
            )
            session.transfer(flowfile, REL_FAILURE)
            return
        flowfile = session.put_all_attributes(flowfile, metadata)
        session.transfer(flowfile, REL_SUCCESS)


def _metadata(
    raw: IO[bytes], algorithm: str, requested: set[str], *, count_items: bool
) -> dict[str, str]:
    """The attributes of one data file (NiFi's InputStreamCallback)."""
    blocks = fastavro.block_reader(_Told(raw))  # reads the header: not Avro fails here
    header: dict[str, Any] = blocks.metadata
    found = {key: str(value) for key, value in header.items() if key in requested}
    schema = json.loads(header["avro.schema"])
    canonical = to_parsing_canonical_form(parse_schema(schema))
    found[SCHEMA_FINGERPRINT_ATTR] = fingerprint(canonical, algorithm)
    found[SCHEMA_TYPE_ATTR] = _type_name(schema)
    found[SCHEMA_NAME_ATTR] = _name(schema)
    if count_items:
        found[ITEM_COUNT_ATTR] = str(sum(block.num_records for block in blocks))
    return found


def _type_name(schema: Any) -> str:
    """Avro's ``Schema.getType().getName()``."""
    if isinstance(schema, list):
        return "union"
    if isinstance(schema, dict):
        kind = schema.get("type")
        return _type_name(kind) if isinstance(kind, (dict, list)) else str(kind)
    return str(schema)


def _name(schema: Any) -> str:
    """Avro's ``Schema.getName()``: a named type's short name, else its type's name."""
    if isinstance(schema, dict) and schema.get("type") in ("record", "error", "enum", "fixed"):
        return str(schema["name"]).rsplit(".", 1)[-1]
    return _type_name(schema)


class _Told:
    """A content stream with ``tell`` (fastavro's block reader notes each block's offset)."""

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        self._position += len(data)
        return data

    def tell(self) -> int:
        return self._position
