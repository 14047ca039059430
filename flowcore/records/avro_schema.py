"""Avro schemas to and from NiFi record schemas, by NiFi's AvroTypeUtil rules.

From NiFi to Avro (``AvroTypeUtil.extractAvroSchema``): the top record is ``nifiRecord`` in the
namespace ``org.apache.nifi``, a nested record is ``<prefix><field>Type``, a nullable field is the
union ``[T, "null"]``, BIGINT and CHAR are strings, BYTE and SHORT ints, ARRAY[BYTE] is bytes, and
the logical types are decimal (bytes), date, time-millis, timestamp-millis and uuid.

From Avro to NiFi (``AvroTypeUtil.determineDataType``): a union with ``null`` is a nullable field
of the other branch, any other union a CHOICE; logical types map back, ``fixed`` and ``bytes``
without one are ARRAY[BYTE].

The schema text is what NiFi's "Schema Text" property (``schema-text``) and the ``avro.schema``
attribute hold: Avro's JSON form.
"""

from __future__ import annotations

import json
from typing import Any

import fastavro

from flowcore.errors import ConfigurationError
from flowcore.records.schema import (
    BOOLEAN,
    BYTE,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    UUID,
    ArrayType,
    ChoiceType,
    DataType,
    DecimalType,
    EnumType,
    MapType,
    RecordField,
    RecordSchema,
    RecordType,
    SimpleType,
)

__all__ = ["parse_schema_text", "schema_from_avro", "schema_text", "schema_to_avro"]


def parse_schema_text(text: str) -> RecordSchema:
    """The record schema of Avro schema *text* (NiFi's "Schema Text" property).

    Raises:
        ConfigurationError: *text* is not JSON, not a valid Avro schema, or not a record.
    """
    try:
        avro = json.loads(text)
    except ValueError as exc:
        msg = f"Schema Text is not valid JSON ({exc}); give an Avro schema such as {_EXAMPLE}"
        raise ConfigurationError(msg) from None
    return schema_from_avro(avro)


_EXAMPLE = '{"type":"record","name":"r","fields":[{"name":"id","type":"int"}]}'


def schema_from_avro(avro: Any) -> RecordSchema:
    """The record schema of a parsed Avro schema (a dict, as ``json.loads`` gives)."""
    try:
        fastavro.parse_schema(avro, _write_hint=False)
    except Exception as exc:  # fastavro raises several types for a bad schema
        msg = f"not a valid Avro schema: {exc}"
        raise ConfigurationError(msg) from None
    if not isinstance(avro, dict) or avro.get("type") != "record":
        msg = f"an Avro schema for records must be of type 'record', not {_short(avro)}"
        raise ConfigurationError(msg)
    named: dict[str, Any] = {}
    return _record_schema(avro, named, avro.get("namespace"))


def schema_to_avro(schema: RecordSchema) -> dict[str, Any]:
    """The Avro schema NiFi's ``AvroTypeUtil.extractAvroSchema`` builds for *schema*."""
    return {
        "type": "record",
        "name": schema.name or "nifiRecord",
        "namespace": schema.namespace or "org.apache.nifi",
        "fields": [_avro_field(field, "") for field in schema.fields],
    }


def schema_text(schema: RecordSchema) -> str:
    """*schema* as Avro schema text (what NiFi writes to the ``avro.schema`` attribute)."""
    return json.dumps(schema_to_avro(schema), separators=(",", ":"))


# ---------------------------------------------------------------------------------------------
# NiFi -> Avro


def _avro_field(field: RecordField, prefix: str) -> dict[str, Any]:
    avro_type = _avro_type(field.type, field.name, prefix)
    if field.nullable:
        avro_type = _nullable(avro_type)
    out: dict[str, Any] = {"name": field.name, "type": avro_type}
    if field.default is not None:
        out["default"] = field.default
    if field.aliases:
        out["aliases"] = list(field.aliases)
    return out


def _nullable(avro_type: Any) -> Any:
    if isinstance(avro_type, list):
        return avro_type if "null" in avro_type else [*avro_type, "null"]
    return [avro_type, "null"]


def _avro_type(dtype: DataType, name: str, prefix: str) -> Any:
    if isinstance(dtype, SimpleType):
        return _SIMPLE_AVRO[dtype.name]
    if isinstance(dtype, DecimalType):
        return {
            "type": "bytes",
            "logicalType": "decimal",
            "precision": dtype.precision,
            "scale": dtype.scale,
        }
    if isinstance(dtype, EnumType):
        return {
            "type": "enum",
            "name": name,
            "namespace": "org.apache.nifi",
            "symbols": list(dtype.symbols),
        }
    if isinstance(dtype, ArrayType):
        if dtype.element == BYTE:
            return "bytes"
        return {"type": "array", "items": _avro_type(dtype.element or STRING, name, prefix)}
    if isinstance(dtype, MapType):
        return {"type": "map", "values": _avro_type(dtype.value, name, prefix)}
    if isinstance(dtype, RecordType):
        child_prefix = f"{name}_" if not prefix.strip() else f"{prefix}{name}_"
        return {
            "type": "record",
            "name": f"{prefix}{name}Type",
            "namespace": "org.apache.nifi",
            "fields": [_avro_field(f, child_prefix) for f in dtype.schema.fields],
        }
    if isinstance(dtype, ChoiceType):
        union: list[Any] = []
        kinds: set[str] = set()
        for index, option in enumerate(dtype.options, start=1):
            branch = _avro_type(option, name if index == 1 else f"{name}{index}", prefix)
            kind = branch if isinstance(branch, str) else branch["type"]
            if kind not in kinds or (kind == "record" and branch not in union):
                union.append(branch)
                kinds.add(kind)
        return union
    msg = f"no Avro type for the NiFi type {dtype!r}"
    raise ConfigurationError(msg)


_SIMPLE_AVRO: dict[str, Any] = {
    "boolean": "boolean",
    "byte": "int",
    "short": "int",
    "int": "int",
    "long": "long",
    "bigint": "string",
    "float": "float",
    "double": "double",
    "char": "string",
    "string": "string",
    "date": {"type": "int", "logicalType": "date"},
    "time": {"type": "int", "logicalType": "time-millis"},
    "timestamp": {"type": "long", "logicalType": "timestamp-millis"},
    "uuid": {"type": "string", "logicalType": "uuid"},
}


# ---------------------------------------------------------------------------------------------
# Avro -> NiFi


def _record_schema(
    avro: dict[str, Any], named: dict[str, Any], namespace: str | None
) -> RecordSchema:
    if not isinstance(avro.get("fields"), list):
        msg = f"not a valid Avro schema: the record {avro.get('name')!r} has no 'fields' list"
        raise ConfigurationError(msg)
    namespace = avro.get("namespace", namespace)
    _remember(avro, named, namespace)
    building: set[str] = named.setdefault(_BUILDING, set())
    building.add(avro["name"])
    fields = []
    for field in avro["fields"]:
        dtype, nullable = _nifi_type(field["type"], named, namespace)
        fields.append(
            RecordField(
                field["name"],
                dtype,
                nullable,
                field.get("default"),
                field.get("aliases", ()),
            )
        )
    building.discard(avro["name"])
    result = RecordSchema(fields, avro.get("name"), namespace)
    named.setdefault(_BUILT, {})[id(avro)] = result
    return result


#: Keys of the named-types table that hold the records being built and those built.
_BUILDING = " building"
_BUILT = " built"


def _remember(avro: dict[str, Any], named: dict[str, Any], namespace: str | None) -> None:
    name = avro["name"]
    named[name] = avro
    if namespace and "." not in name:
        named[f"{namespace}.{name}"] = avro


def _nifi_type(avro: Any, named: dict[str, Any], namespace: str | None) -> tuple[DataType, bool]:
    """The NiFi type of Avro type *avro*, and whether it is nullable (a union with null)."""
    if isinstance(avro, list):
        branches = [b for b in avro if b != "null"]
        nullable = len(branches) < len(avro)
        if len(branches) == 1:
            return _nifi_type(branches[0], named, namespace)[0], nullable
        return ChoiceType(_nifi_type(b, named, namespace)[0] for b in branches), nullable
    return _plain_type(avro, named, namespace), False


def _plain_type(avro: Any, named: dict[str, Any], namespace: str | None) -> DataType:
    if isinstance(avro, str):
        if avro in _PRIMITIVE:
            return _PRIMITIVE[avro]
        target = named.get(avro) or named.get(f"{namespace}.{avro}")
        if target is None:
            msg = f"the Avro schema names the type {avro!r} before defining it"
            raise ConfigurationError(msg)
        if target.get("type") == "record":
            if target["name"] in named.get(_BUILDING, ()):
                msg = (
                    f"the Avro schema's record {avro!r} refers to itself; "
                    "NiFi's record schemas cannot be recursive here"
                )
                raise ConfigurationError(msg)
            return RecordType(named[_BUILT][id(target)])
        return _plain_type(target, named, namespace)
    kind = avro["type"]
    logical = avro.get("logicalType")
    if isinstance(kind, (dict, list)):
        return _nifi_type(kind, named, namespace)[0]
    if logical == "decimal" and kind in ("bytes", "fixed"):
        if kind == "fixed":
            _remember(avro, named, avro.get("namespace", namespace))
        return DecimalType(avro["precision"], avro.get("scale", 0))
    if kind == "int" and logical == "date":
        return DATE
    if kind == "int" and logical == "time-millis":
        return TIME
    if kind == "long" and logical in ("time-micros",):
        return TIME
    if kind == "long" and logical in (
        "timestamp-millis",
        "timestamp-micros",
        "local-timestamp-millis",
        "local-timestamp-micros",
    ):
        return TIMESTAMP
    if kind == "string" and logical == "uuid":
        return UUID
    if kind == "record":
        return RecordType(_record_schema(avro, named, namespace))
    if kind == "enum":
        _remember(avro, named, avro.get("namespace", namespace))
        return EnumType(avro["symbols"])
    if kind == "fixed":
        _remember(avro, named, avro.get("namespace", namespace))
        return ArrayType(BYTE, element_nullable=False)
    if kind == "array":
        element, nullable = _nifi_type(avro["items"], named, namespace)
        return ArrayType(element, nullable)
    if kind == "map":
        value, nullable = _nifi_type(avro["values"], named, namespace)
        return MapType(value, nullable)
    if kind in _PRIMITIVE:
        return _PRIMITIVE[kind]
    msg = f"unknown Avro type {_short(avro)}"
    raise ConfigurationError(msg)


_PRIMITIVE: dict[str, DataType] = {
    "null": STRING,
    "boolean": BOOLEAN,
    "int": INT,
    "long": LONG,
    "float": FLOAT,
    "double": DOUBLE,
    "bytes": ArrayType(BYTE, element_nullable=False),
    "string": STRING,
}


def _short(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) < 80 else text[:60] + "..."
