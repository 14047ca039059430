"""Records as mappings under RecordPath and back to Arrow (UpdateRecord, PartitionRecord).

RecordPath (``flowcore.record_path``) works on Python mappings with a duck-typed schema; record
processors hold Arrow batches whose schema is a :class:`~flowcore.records.schema.RecordSchema`.
This module joins them:

- :func:`path_schema` shows a reader's schema to RecordPath (``field_names``/``field_type``),
  keeping each NiFi type so :func:`nifi_type` can give back the type of a selected value;
- :class:`Updates` does NiFi's ``FieldValue.updateValue(value, dataType)`` on a mapping and
  remembers each change of a field's type, so :meth:`Updates.schema_of` gives the schema NiFi's
  ``MapRecord.incorporateInactiveFields`` would (a field the schema lacks is added, a changed
  type is merged with the old one as ``DataTypeUtils.merge`` does);
- :func:`rows_to_batch` coerces the records to a schema and builds the Arrow batch, choosing a
  CHOICE option for text as NiFi's ``DataTypeUtils.chooseDataType`` does (``"35"`` under
  CHOICE[INT, STRING] is the INT 35).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, MutableMapping, MutableSequence
from typing import Any

import attrs
import pyarrow as pa

from flowcore.errors import RecordError, RecordPathEvaluationError
from flowcore.record_path._values import FieldValue
from flowcore.records.inference import infer_value_type, merge_schemas, merge_types
from flowcore.records.schema import (
    SIMPLE_TYPE_NAMES,
    STRING,
    ArrayType,
    ChoiceType,
    DataType,
    DecimalType,
    MapType,
    RecordField,
    RecordSchema,
    RecordType,
    SimpleType,
)
from flowcore.records.values import FieldError, TemporalFormats, coerce, coerce_record

__all__ = [
    "PathSchema",
    "PathType",
    "Updates",
    "nifi_type",
    "parent_record",
    "path_schema",
    "prefer",
    "rows_to_batch",
]

_NO_FORMATS = TemporalFormats()


@attrs.frozen
class PathType:
    """A NiFi :class:`DataType` as RecordPath reads types (``DataTypeLike``)."""

    dtype: DataType

    @property
    def name(self) -> str:
        """NiFi's type name."""
        return self.dtype.name

    @property
    def schema(self) -> PathSchema | None:
        """A record's child schema."""
        return PathSchema(self.dtype.schema) if isinstance(self.dtype, RecordType) else None

    @property
    def element_type(self) -> PathType | None:
        """An array's element type."""
        if isinstance(self.dtype, ArrayType) and self.dtype.element is not None:
            return PathType(self.dtype.element)
        return None

    @property
    def value_type(self) -> PathType | None:
        """A map's value type."""
        return PathType(self.dtype.value) if isinstance(self.dtype, MapType) else None

    @property
    def choices(self) -> tuple[PathType, ...]:
        """A choice's options."""
        if isinstance(self.dtype, ChoiceType):
            return tuple(PathType(o) for o in self.dtype.options)
        return ()


@attrs.frozen
class PathSchema:
    """A :class:`RecordSchema` as RecordPath reads schemas (``RecordSchemaLike``)."""

    schema: RecordSchema

    @property
    def field_names(self) -> tuple[str, ...]:
        """The field names, in order."""
        return self.schema.names

    def field_type(self, name: str) -> PathType | None:
        """The type of field *name*, or None."""
        field = self.schema.field(name)
        return None if field is None else PathType(field.type)


def path_schema(schema: RecordSchema) -> PathSchema:
    """*schema* as RecordPath's ``schema=`` argument."""
    return PathSchema(schema)


def nifi_type(fv: FieldValue) -> DataType:
    """The NiFi type of a selected value: its schema's, its function's, or its value's."""
    kind = None if fv.field is None else fv.field.type
    if isinstance(kind, PathType):
        return kind.dtype
    name = getattr(kind, "name", None)
    if name in SIMPLE_TYPE_NAMES and name not in ("record", "choice", "array", "map", "enum"):
        if name == "decimal":
            inferred = infer_value_type(fv.value)
            return inferred if isinstance(inferred, DecimalType) else DecimalType()
        return SimpleType(name)
    if name == "map" and isinstance(fv.value, Mapping):
        values = getattr(kind, "value_type", None)
        value_name = getattr(values, "name", "string")
        simple = value_name in SIMPLE_TYPE_NAMES and value_name not in ("record", "choice")
        return MapType(SimpleType(value_name) if simple else STRING)
    return infer_value_type(fv.value) or STRING


def parent_record(fv: FieldValue) -> MutableMapping[str, Any] | None:
    """NiFi's ``getParentRecord``: the value of the nearest holder that is a record.

    None when that record is null (NiFi then updates nothing) or there is none.
    """
    holder = fv.parent
    while holder is not None:
        kind = None if holder.field is None else getattr(holder.field.type, "name", None)
        if kind == "record" or (kind in (None, "choice") and isinstance(holder.value, Mapping)):
            value = holder.value
            return value if isinstance(value, MutableMapping) else None
        holder = holder.parent
    return None


class Updates:
    """The changes made to one record's fields, for the schema they lead to.

    NiFi's ``MapRecord`` keeps per record the fields whose type an update changed
    (``updatedFields``) and the fields it added (``inactiveFields``); here they are kept per
    record mapping (by identity), and the schema a record has after its updates is
    :meth:`schema_of`.
    """

    def __init__(self) -> None:
        self._notes: dict[int, tuple[Any, list[tuple[str, DataType]]]] = {}
        self._own: dict[int, tuple[Any, RecordSchema]] = {}

    def set(self, fv: FieldValue, value: Any, dtype: DataType | None) -> None:
        """NiFi's ``fv.updateValue(value, dtype)`` (None: the field's own type).

        An array element or a map entry takes the value as it is (the writer coerces it to
        the element type); a record field takes it and its type.

        Raises:
            RecordPathEvaluationError: the value belongs to no record (a literal or a value
                a function built) and is not null.
        """
        if fv.index is not None and fv.parent is not None:
            holder = fv.parent.value
            if isinstance(holder, MutableSequence) and fv.index < len(holder):
                holder[fv.index] = value
                self._remember(value, dtype)
            return
        if fv.key is not None and fv.parent is not None:
            holder = fv.parent.value
            if isinstance(holder, MutableMapping):
                holder[fv.key] = value
                self._remember(value, dtype)
            return
        record = parent_record(fv)
        name = fv.field_name or "root"
        if fv.parent is None and isinstance(fv.value, MutableMapping):
            record = fv.value  # NiFi: a root record sets a field named after the root field
        elif record is None:
            if fv.value is None:
                return
            msg = (
                f"cannot update {fv!r}: the value is not associated with any record (a literal "
                "or a value a function built); select a field instead"
            )
            raise RecordPathEvaluationError(msg)
        record[name] = value
        kind = dtype if dtype is not None else nifi_type(fv)
        self._notes.setdefault(id(record), (record, []))[1].append((name, kind))
        self._remember(value, kind)

    def adopt(self, record: Any, schema: RecordSchema) -> None:
        """Say that *record* (a new root, say) has *schema* of its own."""
        self._own[id(record)] = (record, schema)

    def _remember(self, value: Any, dtype: DataType | None) -> None:
        if isinstance(value, Mapping) and isinstance(dtype, RecordType):
            self._own.setdefault(id(value), (value, dtype.schema))

    def own_schema(self, record: Any, defined: RecordSchema) -> RecordSchema:
        """The schema *record* came with (a record moved from another field), else *defined*."""
        known = self._own.get(id(record))
        return known[1] if known is not None else defined

    def schema_of(self, record: Mapping[str, Any], schema: RecordSchema) -> RecordSchema:
        """NiFi's ``incorporateInactiveFields``: *schema* after the updates of *record*."""
        notes = self._notes.get(id(record))
        updated: dict[str, DataType] = {}
        inactive: list[tuple[str, DataType]] = []
        for name, dtype in notes[1] if notes is not None else ():
            field = schema.field(name)
            if field is not None:
                updated[field.name] = merge_types(field.type, dtype) or dtype
            else:
                inactive.append((name, dtype))
        fields: dict[str, RecordField] = {}
        for field in schema.fields:
            kind = updated.get(field.name, field.type)
            kind = self._nested(kind, record.get(field.name))
            fields[field.name] = field if kind == field.type else attrs.evolve(field, type=kind)
        for name, dtype in inactive:
            known = fields.get(name)
            if known is None:
                fields[name] = RecordField(name, dtype)
            elif known.type != dtype:
                fields[name] = attrs.evolve(known, type=merge_types(known.type, dtype) or dtype)
        if not notes and all(a is b for a, b in zip(fields.values(), schema.fields, strict=True)):
            return schema
        return RecordSchema(fields.values(), schema.name, schema.namespace)

    def _nested(self, dtype: DataType, value: Any) -> DataType:
        """A RECORD's or ARRAY[RECORD]'s type merged with the schemas of its values."""
        if not self._notes or value is None:
            return dtype
        if isinstance(dtype, RecordType) and isinstance(value, Mapping):
            actual = self.schema_of(value, self.own_schema(value, dtype.schema))
            return dtype if actual is dtype.schema else RecordType(merge(dtype.schema, actual))
        if (
            isinstance(dtype, ArrayType)
            and isinstance(dtype.element, RecordType)
            and isinstance(value, list)
        ):
            merged = dtype.element.schema
            for element in value:
                if isinstance(element, Mapping):
                    own = self.own_schema(element, dtype.element.schema)
                    merged = merge(merged, self.schema_of(element, own))
            if merged is dtype.element.schema:
                return dtype
            return ArrayType(RecordType(merged), dtype.element_nullable)
        return dtype


def merge(this: RecordSchema, other: RecordSchema) -> RecordSchema:
    """NiFi's ``DataTypeUtils.merge`` of two schemas (the same object when nothing changes)."""
    if this is other or this == other:
        return this
    return merge_schemas(this, other)


# -- back to Arrow ------------------------------------------------------------------------------


def rows_to_batch(
    rows: Iterable[Mapping[str, Any]], schema: RecordSchema, first: int
) -> pa.RecordBatch:
    """The records *rows* coerced to *schema*, as one batch; *first* is the first's number.

    Raises:
        RecordError: a value does not fit its field's type (naming the record and field).
    """
    rows = list(rows)
    arrow = schema.to_arrow()
    if _plain(RecordType(schema)) and all(type(row) is dict for row in rows):
        try:  # Arrow takes the values as they are: no Python pass per record
            return pa.RecordBatch.from_pylist(rows, arrow)
        except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, ValueError):
            pass  # a value needs NiFi's coercion (text for a number...), or names the culprit
    out = []
    for number, row in enumerate(rows, start=first):
        try:
            out.append(coerce_record(prefer(row, RecordType(schema)), schema, _NO_FORMATS))
        except FieldError as exc:
            msg = f"record {number}, field {exc.field!r}: {exc}"
            raise RecordError(msg, record=number, field=exc.field or None) from None
    return pa.RecordBatch.from_pylist(out, arrow)


def _plain(dtype: DataType | None) -> bool:
    """Whether Arrow takes values of *dtype* exactly as NiFi's coercion would leave them.

    Not with CHOICE, MAP, ENUM, temporal, decimal, byte, char or bigint types, non-nullable
    fields or defaults (those need :func:`coerce_record`), nor with a FLOAT or DOUBLE, which
    Arrow would take a boolean for.
    """
    if dtype is None:
        return False
    if isinstance(dtype, RecordType):
        return all(
            f.nullable and f.default is None and not f.aliases and _plain(f.type)
            for f in dtype.schema.fields
        )
    if isinstance(dtype, ArrayType):
        return dtype.element is not None and dtype.element.name != "byte" and _plain(dtype.element)
    return dtype.name in ("string", "boolean", "int", "long", "short")


def prefer(value: Any, dtype: DataType) -> Any:
    """*value* with text under a CHOICE turned into the option NiFi would choose.

    NiFi's ``chooseDataType`` takes the options a string is compatible with and, when several
    are, the first in RecordFieldType's order: ``"35"`` under CHOICE[INT, STRING] is an INT.
    """
    if value is None:
        return None
    if isinstance(dtype, ChoiceType):
        if not isinstance(value, str):
            return value
        fitting = []
        for option in _flatten(dtype):
            try:
                fitting.append((option, coerce(value, option, _NO_FORMATS, "")))
            except (FieldError, ValueError, TypeError, ArithmeticError):
                continue
        if len(fitting) > 1:
            fitting.sort(key=lambda pair: pair[0].order())
        return fitting[0][1] if fitting and fitting[0][0].name != "string" else value
    if isinstance(dtype, RecordType) and isinstance(value, Mapping):
        if not _has_choice(dtype):
            return value
        return {
            k: (prefer(v, f.type) if (f := dtype.schema.field(k)) is not None else v)
            for k, v in value.items()
        }
    if isinstance(dtype, ArrayType) and dtype.element is not None and isinstance(value, list):
        if not _has_choice(dtype.element):
            return value
        return [prefer(v, dtype.element) for v in value]
    if isinstance(dtype, MapType) and isinstance(value, Mapping) and _has_choice(dtype.value):
        return {k: prefer(v, dtype.value) for k, v in value.items()}
    return value


def _flatten(dtype: ChoiceType) -> list[DataType]:
    out: list[DataType] = []
    for option in dtype.options:
        out.extend(_flatten(option) if isinstance(option, ChoiceType) else (option,))
    return out


def _has_choice(dtype: DataType | None) -> bool:
    if dtype is None:
        return False
    if isinstance(dtype, ChoiceType):
        return True
    if isinstance(dtype, RecordType):
        return any(_has_choice(f.type) for f in dtype.schema.fields)
    if isinstance(dtype, ArrayType):
        return _has_choice(dtype.element)
    if isinstance(dtype, MapType):
        return _has_choice(dtype.value)
    return False
