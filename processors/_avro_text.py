"""Avro datums as the text NiFi's ConvertAvroToJSON writes: Java Avro's renderings, exactly.

ConvertAvroToJSON prints each record with Java Avro's ``GenericData.toString`` (``{"name":
"Alyssa", "favorite_number": 256}``: a space after ``:`` and ``,``, Java's number texts, strings
escaped by Avro's own rules, bytes as ISO-8859-1 text, NaN and infinities quoted, fixed as Java's
``Arrays.toString`` of signed bytes) or, with Use AVRO JSON, Avro's JSON encoding (compact,
each non-null union value wrapped as ``{"<branch>": value}``). fastavro applies logical types when
reading; values are printed as their raw Avro values, as Java's ``GenericDatumReader`` without
conversions gives them (a date is its day number).

API: ``BAD_AVRO`` (what bad content raises), ``raw_value(value, schema)`` (a logical value
back to its Avro value), ``to_string(value, schema)`` (``GenericData.toString``),
``to_avro_json(value, schema)`` (Avro's JsonEncoder).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any
from uuid import UUID

from flowcore.records.formats import java_double_str, java_float_str

__all__ = ["BAD_AVRO", "raw_value", "to_avro_json", "to_string"]

#: What reading content that is not (valid) Avro raises in fastavro: the FlowFile fails.
BAD_AVRO: tuple[type[BaseException], ...] = (
    ValueError,
    EOFError,
    KeyError,
    TypeError,
    IndexError,
    OSError,
)

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = dt.date(1970, 1, 1)

_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def raw_value(value: Any, schema: Any) -> Any:
    """*value* as Java reads it without conversions (fastavro applies the logical types)."""
    logical = schema.get("logicalType") if isinstance(schema, dict) else None
    if logical is None or value is None:
        return value
    if logical == "date" and isinstance(value, dt.date):
        return (value - _EPOCH_DATE).days
    if logical in ("time-millis", "time-micros") and isinstance(value, dt.time):
        micros = ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000
        micros += value.microsecond
        return micros // 1000 if logical == "time-millis" else micros
    if "timestamp" in logical and isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        micros = (value - _EPOCH) // dt.timedelta(microseconds=1)
        return micros // 1000 if logical.endswith("millis") else micros
    if logical == "decimal" and isinstance(value, Decimal):
        unscaled = int(value.scaleb(int(schema.get("scale", 0))))
        size = int(schema["size"]) if schema.get("type") == "fixed" else None
        length = size or max(1, (unscaled.bit_length() + 8) // 8)
        return unscaled.to_bytes(length, "big", signed=True)
    if isinstance(value, UUID):
        return str(value)
    return value


class _Names:
    """Named types of a schema by full and short name, to follow references."""

    def __init__(self, schema: Any) -> None:
        self.types: dict[str, dict[str, Any]] = {}
        self.full_names: dict[int, str] = {}  # id of a named type's definition -> full name
        self._collect(schema, "")

    def _collect(self, schema: Any, namespace: str) -> None:
        if isinstance(schema, list):
            for branch in schema:
                self._collect(branch, namespace)
        elif isinstance(schema, dict):
            kind = schema.get("type")
            if kind in ("record", "error", "enum", "fixed"):
                name = schema["name"]
                space = schema.get("namespace", namespace) if "." not in name else ""
                full = name if "." in name else (f"{space}.{name}" if space else name)
                self.types[full] = schema
                self.full_names[id(schema)] = full
                self.types.setdefault(full.rsplit(".", 1)[-1], schema)
                namespace = full.rsplit(".", 1)[0] if "." in full else ""
                for field in schema.get("fields", ()):
                    self._collect(field["type"], namespace)
            elif kind == "array":
                self._collect(schema["items"], namespace)
            elif kind == "map":
                self._collect(schema["values"], namespace)
            elif isinstance(kind, (dict, list)):
                self._collect(kind, namespace)

    def resolve(self, schema: Any) -> Any:
        """*schema* with a named reference replaced by its definition."""
        if isinstance(schema, str) and schema not in _PRIMITIVES:
            return self.types.get(schema, self.types.get(schema.rsplit(".", 1)[-1], schema))
        if isinstance(schema, dict) and isinstance(schema.get("type"), (dict, list)):
            return self.resolve(schema["type"])
        if isinstance(schema, dict) and schema.get("type") in _PRIMITIVES and len(schema) == 1:
            return schema["type"]
        return schema


def _kind(schema: Any) -> str:
    if isinstance(schema, str):
        return schema
    if isinstance(schema, list):
        return "union"
    return str(schema.get("type"))


def _branch(value: Any, union: list[Any], names: _Names) -> Any:
    """The union branch *value* was read as (by its Python type, as Avro resolves it)."""
    original = value
    for option in union:
        resolved = names.resolve(option)
        kind = _kind(resolved)
        value = raw_value(original, resolved)
        if (
            (value is None and kind == "null")
            or (isinstance(value, bool) and kind == "boolean")
            or (isinstance(value, int) and not isinstance(value, bool) and kind in ("int", "long"))
            or (isinstance(value, float) and kind in ("float", "double"))
            or (isinstance(value, str) and kind in ("string", "enum"))
            or (isinstance(value, bytes) and kind in ("bytes", "fixed"))
            or (isinstance(value, list) and kind == "array")
        ):
            return option
        if (
            isinstance(value, dict)
            and kind in ("record", "error")
            and {f["name"] for f in resolved["fields"]} == set(value)
        ):
            return option
    value = original
    for option in union:  # a dict that is no record of the union is a map
        if isinstance(value, dict) and _kind(names.resolve(option)) == "map":
            return option
    return union[0]


def escape(text: str) -> str:
    """Avro's ``GenericData.writeEscapedString``."""
    out = []
    for ch in text:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code <= 0x1F or 0x7F <= code <= 0x9F or 0x2000 <= code <= 0x20FF:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    return "".join(out)


def _number(value: float, kind: str, *, quote_special: bool) -> str:
    text = java_float_str(value) if kind == "float" else java_double_str(value)
    if quote_special and (math.isnan(value) or math.isinf(value)):
        return f'"{text}"'
    return text


def to_string(value: Any, schema: Any, names: _Names | None = None) -> str:
    """Java Avro's ``GenericData.toString(value)`` for a value of *schema*."""
    names = names or _Names(schema)
    schema = names.resolve(schema)
    kind = _kind(schema)
    if kind == "union":
        return to_string(value, _branch(value, schema, names), names)
    value = raw_value(value, schema)
    if value is None:
        return "null"
    if kind in ("record", "error"):
        parts = [
            f'"{escape(f["name"])}": {to_string(value.get(f["name"]), f["type"], names)}'
            for f in schema["fields"]
        ]
        return "{" + ", ".join(parts) + "}"
    if kind == "array":
        return "[" + ", ".join(to_string(v, schema["items"], names) for v in value) + "]"
    if kind == "map":
        parts = [
            f'"{escape(str(k))}": {to_string(v, schema["values"], names)}' for k, v in value.items()
        ]
        return "{" + ", ".join(parts) + "}"
    if kind in ("string", "enum"):
        return f'"{escape(value)}"'
    if kind == "bytes":
        return f'"{escape(bytes(value).decode("latin-1"))}"'
    if kind == "fixed":
        return "[" + ", ".join(str(b - 256 if b > 127 else b) for b in value) + "]"
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("float", "double"):
        return _number(value, kind, quote_special=True)
    return str(value)


def to_avro_json(value: Any, schema: Any, names: _Names | None = None) -> str:
    """Java Avro's JSON encoding of *value* (``JsonEncoder`` through ``GenericDatumWriter``)."""
    names = names or _Names(schema)
    schema = names.resolve(schema)
    kind = _kind(schema)
    if kind == "union":
        option = _branch(value, schema, names)
        resolved = names.resolve(option)
        if _kind(resolved) == "null":
            return "null"
        label = _union_label(option, resolved, names)
        return "{" + json.dumps(label) + ":" + to_avro_json(value, resolved, names) + "}"
    value = raw_value(value, schema)
    encode: dict[str, Callable[[], str]] = {
        "null": lambda: "null",
        "boolean": lambda: "true" if value else "false",
        "string": lambda: _json_string(value),
        "enum": lambda: _json_string(value),
        "bytes": lambda: _json_string(bytes(value).decode("latin-1")),
        "fixed": lambda: _json_string(bytes(value).decode("latin-1")),
        "float": lambda: _number(value, "float", quote_special=False),
        "double": lambda: _number(value, "double", quote_special=False),
        "array": lambda: (
            "[" + ",".join(to_avro_json(v, schema["items"], names) for v in value) + "]"
        ),
        "map": lambda: (
            "{"
            + ",".join(
                f"{_json_string(str(k))}:{to_avro_json(v, schema['values'], names)}"
                for k, v in value.items()
            )
            + "}"
        ),
    }
    if kind in ("record", "error"):
        return (
            "{"
            + ",".join(
                f"{_json_string(f['name'])}:{to_avro_json(value.get(f['name']), f['type'], names)}"
                for f in schema["fields"]
            )
            + "}"
        )
    if kind in encode:
        return encode[kind]()
    return str(value)


def _union_label(option: Any, resolved: Any, names: _Names) -> str:
    kind = _kind(resolved)
    if kind in ("record", "error", "enum", "fixed"):
        return names.full_names.get(id(resolved), str(resolved["name"]))
    if isinstance(option, str):
        return option
    return kind


def _json_string(text: str) -> str:
    r"""Jackson's quoting: control characters as ``\\u00XX``, the rest as is."""
    return _LOWER_HEX.sub(_upper_hex, json.dumps(text, ensure_ascii=False))


# A \u00xx escape json.dumps wrote (after an even run of backslashes: not an escaped "\").
_LOWER_HEX = re.compile(r"(?<!\\)((?:\\\\)*)\\u00([0-9a-f]{2})")


def _upper_hex(match: re.Match[str]) -> str:
    return f"{match[1]}\\u00{match[2].upper()}"
