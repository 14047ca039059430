"""NiFi's record types and record schema as frozen values, and their mapping to Arrow.

NiFi types a record field with a ``DataType`` (``RecordFieldType`` plus parameters: a decimal's
precision and scale, an array's element type, a choice's options...). Records travel through
flowcore as Arrow record batches, so every NiFi type maps to one Arrow type; where Arrow cannot
say the NiFi type (choice, enum, uuid, char, bigint), the Arrow field keeps it in its metadata
under :data:`NIFI_TYPE_KEY`, and :meth:`RecordSchema.from_arrow` reads it back. docs/records.md
holds the table.

A CHOICE value is kept in Arrow as the JSON text of the value (``5``, ``"5"``, ``{"a":1}``): Arrow
unions do not reach Parquet, DuckDB or Spark, while JSON text keeps which option a value took
(the writers decode it and pick the option as NiFi's ``DataTypeUtils.chooseDataType`` does).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import attrs
import pyarrow as pa
import pyarrow.compute as pc

from flowcore.errors import ConfigurationError

__all__ = [
    "BIGINT",
    "BOOLEAN",
    "BYTE",
    "CHAR",
    "DATE",
    "DOUBLE",
    "FLOAT",
    "INT",
    "LONG",
    "NIFI_TYPE_KEY",
    "SHORT",
    "STRING",
    "TIME",
    "TIMESTAMP",
    "UUID",
    "ArrayType",
    "ChoiceType",
    "DataType",
    "DecimalType",
    "EnumType",
    "MapType",
    "RecordField",
    "RecordSchema",
    "RecordType",
    "SimpleType",
    "type_from_json",
    "type_to_json",
]

#: The Arrow field metadata key holding the NiFi type (JSON, see :func:`type_to_json`).
NIFI_TYPE_KEY = b"nifi.type"

#: NiFi's simple RecordFieldType names, in NiFi's enum order (the order CHOICE options sort by).
SIMPLE_TYPE_NAMES = (
    "boolean",
    "byte",
    "short",
    "int",
    "long",
    "bigint",
    "float",
    "double",
    "decimal",
    "timestamp",
    "date",
    "time",
    "uuid",
    "char",
    "enum",
    "string",
    "record",
    "choice",
    "array",
    "map",
)

#: Integral types, narrowest first (NiFi's DataTypeUtils.getIntegerTypeValue).
INTEGRAL = ("byte", "short", "int", "long", "bigint")


class DataType:
    """A NiFi record DataType; ``name`` is NiFi's RecordFieldType name (``"int"``...)."""

    name: str

    def order(self) -> int:
        """The position of this type in NiFi's RecordFieldType enum (CHOICE options sort by it)."""
        return SIMPLE_TYPE_NAMES.index(self.name)


@attrs.frozen
class SimpleType(DataType):
    """A type without parameters.

    string, boolean, byte, short, int, long, bigint, float, double, date, time, timestamp, uuid,
    char.
    """

    name: str = attrs.field(validator=attrs.validators.in_(SIMPLE_TYPE_NAMES))

    def __str__(self) -> str:
        return self.name.upper()


BOOLEAN = SimpleType("boolean")
BYTE = SimpleType("byte")
SHORT = SimpleType("short")
INT = SimpleType("int")
LONG = SimpleType("long")
BIGINT = SimpleType("bigint")
FLOAT = SimpleType("float")
DOUBLE = SimpleType("double")
TIMESTAMP = SimpleType("timestamp")
DATE = SimpleType("date")
TIME = SimpleType("time")
UUID = SimpleType("uuid")
CHAR = SimpleType("char")
STRING = SimpleType("string")


@attrs.frozen
class DecimalType(DataType):
    """NiFi's DECIMAL(precision, scale); NiFi's default is DECIMAL(10, 0)."""

    precision: int = 10
    scale: int = 0
    name: str = attrs.field(default="decimal", init=False)

    def __str__(self) -> str:
        return f"DECIMAL{self.precision}{self.scale}"


@attrs.frozen
class EnumType(DataType):
    """NiFi's ENUM: a string from a fixed list of symbols."""

    symbols: tuple[str, ...] = attrs.field(converter=tuple)
    name: str = attrs.field(default="enum", init=False)


@attrs.frozen
class ArrayType(DataType):
    """NiFi's ARRAY; ``element`` None is the type inference gives an empty array."""

    element: DataType | None
    element_nullable: bool = True
    name: str = attrs.field(default="array", init=False)

    def __str__(self) -> str:
        return f"ARRAY[{self.element}]"


@attrs.frozen
class MapType(DataType):
    """NiFi's MAP: string keys, values of one type."""

    value: DataType
    value_nullable: bool = True
    name: str = attrs.field(default="map", init=False)

    def __str__(self) -> str:
        return f"MAP<{self.value}>"


@attrs.frozen
class RecordType(DataType):
    """NiFi's RECORD: a nested record with its own schema."""

    schema: RecordSchema
    name: str = attrs.field(default="record", init=False)

    def __str__(self) -> str:
        return "RECORD"


@attrs.frozen
class ChoiceType(DataType):
    """NiFi's CHOICE: a value of one of several types (an Avro union other than ``[T, null]``)."""

    options: tuple[DataType, ...] = attrs.field(converter=tuple)
    name: str = attrs.field(default="choice", init=False)

    def __str__(self) -> str:
        return f"CHOICE[{', '.join(str(o) for o in self.options)}]"


@attrs.frozen
class RecordField:
    """One field of a record schema: NiFi's RecordField (name, type, nullable, default, aliases)."""

    name: str
    type: DataType
    nullable: bool = True
    default: Any = None
    aliases: tuple[str, ...] = attrs.field(default=(), converter=tuple)


@attrs.frozen
class RecordSchema:
    """NiFi's RecordSchema: ordered fields, and the name/namespace an Avro schema gave it."""

    fields: tuple[RecordField, ...] = attrs.field(converter=tuple)
    name: str | None = None
    namespace: str | None = None

    def __attrs_post_init__(self) -> None:
        seen: set[str] = set()
        for field in self.fields:
            if field.name in seen:
                msg = f"record schema has the field {field.name!r} twice; give each field one name"
                raise ConfigurationError(msg)
            seen.add(field.name)

    def __iter__(self) -> Iterator[RecordField]:
        return iter(self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    @property
    def names(self) -> tuple[str, ...]:
        """The field names, in order."""
        return tuple(field.name for field in self.fields)

    def field(self, name: str) -> RecordField | None:
        """The field called *name*, or whose aliases hold it (NiFi's ``getField``), or None."""
        for field in self.fields:
            if field.name == name:
                return field
        for field in self.fields:
            if name in field.aliases:
                return field
        return None

    def to_arrow(self) -> pa.Schema:
        """The Arrow schema for records of this schema (NiFi types kept in field metadata)."""
        return pa.schema([_arrow_field(f.name, f.type, f.nullable) for f in self.fields])

    @classmethod
    def from_arrow(cls, schema: pa.Schema) -> RecordSchema:
        """The NiFi schema of an Arrow schema.

        Metadata written by :meth:`to_arrow` wins; other Arrow types map to their nearest NiFi
        type (docs/records.md).
        """
        return cls(RecordField(f.name, _nifi_type(f), f.nullable) for f in schema)

    @classmethod
    def of(cls, fields: Iterable[tuple[str, DataType]] | Mapping[str, DataType]) -> RecordSchema:
        """A schema of nullable fields from ``(name, type)`` pairs (a shorthand)."""
        pairs = fields.items() if isinstance(fields, Mapping) else fields
        return cls(RecordField(name, dtype) for name, dtype in pairs)


# ---------------------------------------------------------------------------------------------
# Arrow


_SIMPLE_ARROW: dict[str, pa.DataType] = {
    "boolean": pa.bool_(),
    "byte": pa.int8(),
    "short": pa.int16(),
    "int": pa.int32(),
    "long": pa.int64(),
    "bigint": pa.decimal128(38, 0),
    "float": pa.float32(),
    "double": pa.float64(),
    "timestamp": pa.timestamp("us"),
    "date": pa.date32(),
    "time": pa.time32("ms"),
    "uuid": pa.string(),
    "char": pa.string(),
    "string": pa.string(),
}

#: NiFi types Arrow cannot say: the field metadata keeps them.
_NEEDS_METADATA = frozenset({"bigint", "uuid", "char", "enum", "choice"})


def arrow_type(dtype: DataType) -> pa.DataType:
    """The Arrow type of NiFi *dtype* (without the metadata of :func:`_arrow_field`)."""
    if isinstance(dtype, SimpleType):
        return _SIMPLE_ARROW[dtype.name]
    if isinstance(dtype, DecimalType):
        if dtype.precision <= 38:
            return pa.decimal128(dtype.precision, dtype.scale)
        return pa.decimal256(min(dtype.precision, 76), dtype.scale)
    if isinstance(dtype, (EnumType, ChoiceType)):
        return pa.string()
    if isinstance(dtype, ArrayType):
        if dtype.element == BYTE:
            return pa.binary()
        return pa.list_(_arrow_field("element", dtype.element or STRING, dtype.element_nullable))
    if isinstance(dtype, MapType):
        return pa.map_(
            pa.field("key", pa.string(), nullable=False),
            _arrow_field("value", dtype.value, dtype.value_nullable),
        )
    if isinstance(dtype, RecordType):
        return pa.struct([_arrow_field(f.name, f.type, f.nullable) for f in dtype.schema.fields])
    msg = f"no Arrow type for the NiFi type {dtype!r}"
    raise ConfigurationError(msg)


def millis_type(atype: pa.DataType) -> pa.DataType:
    """*atype* with every timestamp in it (nested too) at millisecond precision.

    NiFi's record TIMESTAMP is a ``java.sql.Timestamp`` and keeps microseconds, but its Avro
    and Parquet writers write ``Timestamp.getTime()``: epoch millis (an inferred schema's
    ``timestamp-millis``; ``timestamp-micros`` too is millis times 1000). Those writers write
    this type.
    """
    t = pa.types
    if t.is_timestamp(atype):
        return pa.timestamp("ms", atype.tz) if atype.unit != "ms" else atype
    if t.is_struct(atype):
        return pa.struct([f.with_type(millis_type(f.type)) for f in atype])
    if t.is_map(atype):
        return pa.map_(atype.key_field, atype.item_field.with_type(millis_type(atype.item_type)))
    if t.is_list(atype):
        return pa.list_(atype.value_field.with_type(millis_type(atype.value_type)))
    if t.is_large_list(atype):
        return pa.large_list(atype.value_field.with_type(millis_type(atype.value_type)))
    return atype


def to_millis(column: Any) -> Any:
    """*column* (an Arrow array or chunked array) with its timestamps cut to milliseconds.

    A timestamp column is floored, as ``java.sql.Timestamp.getTime()`` floors (Arrow's cast
    truncates toward zero, a millisecond off before 1970); timestamps nested in a struct,
    list or map are cast (before 1970 a value with sub-millisecond digits there rounds toward
    zero). Columns without timestamps come back as they are.
    """
    target = millis_type(column.type)
    if target == column.type:
        return column
    if pa.types.is_timestamp(column.type):
        earliest = pc.min(column).value  # none before 1970: the cast's truncation floors
        if earliest is not None and earliest < 0:
            column = pc.floor_temporal(column, unit="millisecond")
    return pc.cast(column, options=pc.CastOptions(target, allow_time_truncate=True))


def cast_column(column: Any, target: pa.DataType, *, allow_time_truncate: bool = False) -> Any:
    """*column* cast to *target*, a number to a date, time or timestamp as epoch milliseconds.

    NiFi's DataTypeUtils.convertType reads a number for a DATE, TIME or TIMESTAMP as
    milliseconds since the epoch (``new Timestamp(long)``); Arrow's cast of an integer to this
    project's ``timestamp[us]`` would read microseconds, a value 1000 times too small. A float
    keeps its fraction of a millisecond (rounded to the microsecond, as :mod:`values` does).
    Every other cast is Arrow's.
    """
    t = pa.types
    source = column.type
    numeric = t.is_integer(source) or t.is_floating(source)
    if numeric and (t.is_timestamp(target) or t.is_date(target) or t.is_time(target)):
        if t.is_floating(source):
            micros = pc.round(pc.multiply(column, 1000.0))
            column = pc.cast(micros, pa.int64()).cast(pa.timestamp("us"))
        else:
            column = pc.cast(column, pa.int64()).cast(pa.timestamp("ms"))
        allow_time_truncate = True  # a date or time of day from an instant, as NiFi's
    return pc.cast(column, options=pc.CastOptions(target, allow_time_truncate=allow_time_truncate))


def _arrow_field(name: str, dtype: DataType, nullable: bool) -> pa.Field:
    metadata = None
    if dtype.name in _NEEDS_METADATA:
        metadata = {NIFI_TYPE_KEY: json.dumps(type_to_json(dtype), separators=(",", ":"))}
    return pa.field(name, arrow_type(dtype), nullable=nullable, metadata=metadata)


def _nifi_type(field: pa.Field) -> DataType:
    meta = field.metadata or {}
    if NIFI_TYPE_KEY in meta:
        return type_from_json(json.loads(meta[NIFI_TYPE_KEY]))
    return nifi_type_of_arrow(field.type)


def nifi_type_of_arrow(atype: pa.DataType) -> DataType:
    """The nearest NiFi type of an Arrow type that carries no NiFi metadata."""
    t = pa.types
    if t.is_boolean(atype):
        return BOOLEAN
    if t.is_int8(atype):
        return BYTE
    if t.is_int16(atype) or t.is_uint8(atype):
        return SHORT
    if t.is_int32(atype) or t.is_uint16(atype):
        return INT
    if t.is_int64(atype) or t.is_uint32(atype):
        return LONG
    if t.is_uint64(atype):
        return BIGINT
    if t.is_float16(atype) or t.is_float32(atype):
        return FLOAT
    if t.is_float64(atype):
        return DOUBLE
    if t.is_decimal(atype):
        return DecimalType(atype.precision, atype.scale)
    if t.is_timestamp(atype):
        return TIMESTAMP
    if t.is_date(atype):
        return DATE
    if t.is_time(atype):
        return TIME
    if t.is_string(atype) or t.is_large_string(atype) or t.is_string_view(atype):
        return STRING
    if t.is_binary(atype) or t.is_large_binary(atype) or t.is_fixed_size_binary(atype):
        return ArrayType(BYTE, element_nullable=False)
    if t.is_list(atype) or t.is_large_list(atype) or t.is_fixed_size_list(atype):
        return ArrayType(_nifi_type(atype.value_field), atype.value_field.nullable)
    if t.is_map(atype):
        return MapType(_nifi_type(atype.item_field), atype.item_field.nullable)
    if t.is_struct(atype):
        return RecordType(
            RecordSchema(RecordField(f.name, _nifi_type(f), f.nullable) for f in atype)
        )
    if t.is_dictionary(atype):
        return nifi_type_of_arrow(atype.value_type)
    if t.is_null(atype):
        return STRING
    msg = f"the Arrow type {atype} has no NiFi record type; cast the column first"
    raise ConfigurationError(msg)


# ---------------------------------------------------------------------------------------------
# JSON descriptors (the metadata text, and a readable form for messages and docs)


def type_to_json(dtype: DataType) -> Any:
    """A JSON-able description of *dtype*: a name for a simple type, an object otherwise."""
    if isinstance(dtype, SimpleType):
        return dtype.name
    if isinstance(dtype, DecimalType):
        return {"type": "decimal", "precision": dtype.precision, "scale": dtype.scale}
    if isinstance(dtype, EnumType):
        return {"type": "enum", "symbols": list(dtype.symbols)}
    if isinstance(dtype, ArrayType):
        items = None if dtype.element is None else type_to_json(dtype.element)
        return {"type": "array", "items": items, "nullable": dtype.element_nullable}
    if isinstance(dtype, MapType):
        return {
            "type": "map",
            "values": type_to_json(dtype.value),
            "nullable": dtype.value_nullable,
        }
    if isinstance(dtype, ChoiceType):
        return {"type": "choice", "options": [type_to_json(o) for o in dtype.options]}
    if isinstance(dtype, RecordType):
        return {
            "type": "record",
            "fields": [
                {"name": f.name, "type": type_to_json(f.type), "nullable": f.nullable}
                for f in dtype.schema.fields
            ],
        }
    msg = f"not a NiFi data type: {dtype!r}"
    raise ConfigurationError(msg)


def type_from_json(obj: Any) -> DataType:
    """The DataType :func:`type_to_json` described."""
    if isinstance(obj, str):
        return SimpleType(obj)
    kind = obj["type"]
    if kind == "decimal":
        return DecimalType(obj["precision"], obj["scale"])
    if kind == "enum":
        return EnumType(obj["symbols"])
    if kind == "array":
        items = obj["items"]
        return ArrayType(
            None if items is None else type_from_json(items), obj.get("nullable", True)
        )
    if kind == "map":
        return MapType(type_from_json(obj["values"]), obj.get("nullable", True))
    if kind == "choice":
        return ChoiceType(type_from_json(o) for o in obj["options"])
    if kind == "record":
        return RecordType(
            RecordSchema(
                RecordField(f["name"], type_from_json(f["type"]), f.get("nullable", True))
                for f in obj["fields"]
            )
        )
    msg = f"unknown NiFi type description {obj!r}"
    raise ConfigurationError(msg)
