"""What RecordPath needs of a record schema: field names in order and NiFi type names.

A record is a Python mapping (nested dicts, lists, maps). A schema is optional: without one,
types come from the values (a mapping is a record, a list an array). With one, it says which
mappings are maps and which are records, the order of fields for ``/*`` and ``//``, and the type
a missing field would have. Any object with the attributes of :class:`DataTypeLike` and
:class:`RecordSchemaLike` serves (duck typing), so the record readers' schemas can satisfy it;
:class:`DataType` and :class:`RecordSchema` here are the minimal concrete ones.
"""

from __future__ import annotations

import datetime
import decimal
import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

__all__ = [
    "DataType",
    "DataTypeLike",
    "RecordSchema",
    "RecordSchemaLike",
    "infer_type",
    "type_name",
]


@runtime_checkable
class DataTypeLike(Protocol):
    """A NiFi data type: ``name`` is NiFi's type name in lower case.

    For example ``'string'``, ``'int'``, ``'long'``, ``'double'``, ``'record'``, ``'array'``,
    ``'map'``, ``'choice'``.

    Nested types are read with ``getattr`` and may be missing: ``schema`` (a record's child
    schema), ``element_type`` (an array's), ``value_type`` (a map's), ``choices`` (a choice's).
    """

    @property
    def name(self) -> str:
        """NiFi's type name, lower case."""
        ...


@runtime_checkable
class RecordSchemaLike(Protocol):
    """A record schema: its field names in order and the type of each."""

    @property
    def field_names(self) -> Sequence[str]:
        """The names of the fields, in schema order."""
        ...

    def field_type(self, name: str) -> DataTypeLike | None:
        """The type of field *name*, or None when the schema has no such field."""
        ...


@attrs.frozen
class DataType:
    """A minimal :class:`DataTypeLike` (tests, ``recordOf``, processors without a reader schema)."""

    name: str
    schema: RecordSchema | None = None
    element_type: DataType | None = None
    value_type: DataType | None = None
    choices: tuple[DataType, ...] = ()


@attrs.frozen
class RecordSchema:
    """A minimal :class:`RecordSchemaLike`: ``fields`` maps each name to its type, in order."""

    fields: Mapping[str, DataType] = attrs.field(converter=dict)

    @property
    def field_names(self) -> tuple[str, ...]:
        """The names of the fields, in schema order."""
        return tuple(self.fields)

    def field_type(self, name: str) -> DataType | None:
        """The type of field *name*, or None."""
        return self.fields.get(name)


def type_name(data_type: Any) -> str | None:
    """The NiFi type name of *data_type* (a :class:`DataTypeLike`), or None for no type."""
    return None if data_type is None else getattr(data_type, "name", None)


_SCALARS: tuple[tuple[type, str], ...] = (
    (bool, "boolean"),
    (int, "long"),
    (float, "double"),
    (decimal.Decimal, "decimal"),
    (str, "string"),
    (datetime.datetime, "timestamp"),
    (datetime.date, "date"),
    (datetime.time, "time"),
    (uuid.UUID, "uuid"),
)


def infer_type(value: Any) -> DataType:
    """The type of *value* when no schema says (NiFi's ``DataTypeUtils.inferDataType``).

    A mapping is a record, a list or tuple an array, bytes an array of bytes.
    """
    if isinstance(value, Mapping):
        return DataType("record")
    if isinstance(value, (list, tuple)):
        return DataType("array")
    if isinstance(value, (bytes, bytearray)):
        return DataType("array", element_type=DataType("byte"))
    for kind, name in _SCALARS:
        if isinstance(value, kind):
            if name == "long" and -(2**31) <= value < 2**31:
                return DataType("int")
            return DataType(name)
    return DataType("string")
