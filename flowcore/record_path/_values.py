"""FieldValue: one field a RecordPath selected, with its parent, and the way to change it in place.

NiFi's ``FieldValue`` (``StandardFieldValue``, ``ArrayIndexFieldValue``, ``MapEntryFieldValue``)
as one frozen class: ``index`` is set for an array element, ``key`` for a map entry. Records
are Python mappings, so :meth:`FieldValue.update_value` writes into the mapping, list or map that
holds the field, as UpdateRecord does through ``updateValue``.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from collections.abc import Mapping, MutableMapping, MutableSequence
from typing import Any

import attrs

from flowcore.errors import RecordPathEvaluationError, quoted
from flowcore.expression._values import java_double_to_string
from flowcore.record_path._schema import DataType, DataTypeLike, type_name

__all__ = [
    "FieldValue",
    "RecordField",
    "describe",
    "is_array",
    "is_map",
    "is_record",
    "root_value",
    "to_string",
]


@attrs.frozen
class RecordField:
    """A field: its name and its type (None when no schema says and no function set one)."""

    name: str
    type: DataTypeLike | None = None


@attrs.frozen(repr=False)
class FieldValue:
    """A value a RecordPath selected.

    Attributes:
        value: the value (a record is a mapping, an array a list).
        field: its field (name and type); None for a literal.
        parent: the field value that holds it (None for the root record and for values a
            function built).
        index: its position when it is an element of an array.
        key: its key when it is an entry of a map.
    """

    value: Any
    field: RecordField | None = None
    parent: FieldValue | None = None
    index: int | None = None
    key: str | None = None

    def __repr__(self) -> str:
        return f"FieldValue({self.field_name!r}={self.value!r})"

    @property
    def field_name(self) -> str | None:
        """The field's name (an element's or entry's is its array's or map's), or None."""
        return None if self.field is None else self.field.name

    @property
    def type_name(self) -> str | None:
        """NiFi's type name of the field when known (schema or function), else None."""
        return None if self.field is None else type_name(self.field.type)

    @property
    def parent_record(self) -> Mapping[str, Any] | None:
        """The nearest record holding this value (NiFi's ``getParentRecord``), or None.

        As NiFi, the walk up stops at the first holder that is a record, even when that
        record is null: a field under a null record has no parent record (None), it does not
        belong to the record above. A holder typed a record is one; an untyped holder is one
        when it holds a mapping, or when it is a null field present in its own record (what
        a schema would type a record; a field missing from its record walks on, as NiFi's
        missing child, typed a choice, does).
        """
        holder = self.parent
        while holder is not None:
            name = holder.type_name
            if name == "record" or (name is None and _null_field(holder)):
                return holder.value if isinstance(holder.value, Mapping) else None
            if name in (None, "choice") and isinstance(holder.value, Mapping):
                return holder.value
            holder = holder.parent
        return None

    def update_value(self, new_value: Any) -> None:
        """Write *new_value* where this value lives: the record field, array slot or map entry.

        The record is changed in place (this FieldValue keeps the old ``value``); UpdateRecord
        calls this for each field its path selected.

        Raises:
            RecordPathEvaluationError: the value belongs to no record (a literal, or a value a
                function built from several fields), or its holder cannot be changed.
        """
        try:
            if self.index is not None and self.parent is not None:
                holder = self.parent.value
                if isinstance(holder, MutableSequence):
                    holder[self.index] = new_value
                else:  # a tuple: replace the whole array
                    items = list(holder)
                    items[self.index] = new_value
                    self.parent.update_value(items)
                return
            if self.key is not None and self.parent is not None:
                _writable(self.parent.value)[self.key] = new_value
                return
            record = self.parent_record
            if record is None or self.field is None:
                if self.value is None:
                    return  # as NiFi: nothing to update (a null literal, a null parent record)
                msg = (
                    f"cannot update {self!r}: the value is not associated with any record "
                    "(a literal or a value a function built); select a field instead"
                )
                raise RecordPathEvaluationError(msg)
            _writable(record)[self.field.name] = new_value
        except TypeError as exc:
            msg = f"cannot update {self!r}: its record or array cannot be changed ({exc})"
            raise RecordPathEvaluationError(msg) from None

    def remove(self) -> None:
        """Remove this field from its record, element from its array or entry from its map."""
        parent = self.parent
        if parent is None or parent.value is None:
            return
        if self.index is not None:
            items = list(parent.value)
            del items[self.index]
            parent.update_value(items)
        elif self.key is not None:
            _writable(parent.value).pop(self.key, None)
        elif self.field is not None and is_record(parent):
            _writable(parent.value).pop(self.field.name, None)

    def remove_content(self) -> None:
        """Empty this array or map (NiFi's ``removeContent``); other values are left alone."""
        if is_array(self):
            self.update_value([])
        elif is_map(self):
            self.update_value({})


def root_value(record: Mapping[str, Any], schema: Any = None) -> FieldValue:
    """The FieldValue of a whole record (NiFi's ``RootPath``: field ``root``, no parent)."""
    return FieldValue(record, RecordField("root", DataType("record", schema=schema)))


def _null_field(fv: FieldValue) -> bool:
    """*fv* is a null field present in the record that holds it."""
    holder = fv.parent
    return (
        fv.value is None
        and fv.index is None
        and fv.key is None
        and fv.field is not None
        and holder is not None
        and isinstance(holder.value, Mapping)
        and fv.field.name in holder.value
    )


def _writable(holder: Any) -> MutableMapping[str, Any]:
    if not isinstance(holder, MutableMapping):
        msg = f"a {type(holder).__name__} is read-only"
        raise TypeError(msg)
    return holder


def is_record(fv: FieldValue) -> bool:
    """NiFi's ``Filters.isRecord``: typed a record, or (untyped or a choice) a mapping value."""
    name = fv.type_name
    if name == "record":
        return True
    return name in (None, "choice") and isinstance(fv.value, Mapping)


def is_map(fv: FieldValue) -> bool:
    """Typed a map, or (untyped or a choice) a mapping value: ``['key']`` and ``[*]`` apply."""
    name = fv.type_name
    if name == "map":
        return True
    return name in (None, "choice") and isinstance(fv.value, Mapping)


def is_array(fv: FieldValue) -> bool:
    """Typed an array, or a list or tuple value: ``[0]`` and ``[*]`` apply."""
    return fv.type_name == "array" or isinstance(fv.value, (list, tuple))


def _json_default(value: Any) -> Any:
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(value).decode("ascii")
    return str(value)


def to_string(value: Any) -> str | None:
    """NiFi's ``DataTypeUtils.toString(value, null)``.

    None stays None, booleans are ``true``/``false``, doubles print as Java does, bytes (or an
    array of byte values) decode as UTF-8, records and maps as JSON.
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return java_double_to_string(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, (list, tuple)):
        if value and all(
            isinstance(v, int) and not isinstance(v, bool) and -128 <= v < 256 for v in value
        ):
            return bytes(v & 0xFF for v in value).decode("utf-8", errors="replace")
        return "[" + ", ".join(str(to_string(v)) for v in value) + "]"
    if isinstance(value, Mapping):
        return json.dumps(value, default=_json_default, separators=(",", ":"))
    if isinstance(value, datetime.datetime):
        return value.isoformat(sep=" ")
    return str(value)


def describe(value: Any) -> str:
    """*value* for an error message."""
    return quoted(to_string(value))
