"""Schema inference with NiFi's rules (nifi-schema-inference-utils and the JSON/CSV inference).

Each field's values add possible types to a :class:`FieldTypeInference` (NiFi's class of that
name): a type a possible type is already wider than is dropped, a wider type replaces the
narrower ones, records merge their fields; what is left merges into one type, or a CHOICE of
the types that do not widen into each other (``DataTypeUtils.mergeDataTypes``). Every inferred
field is nullable; a field seen only as null is a STRING.

The value rules are NiFi's: a JSON integer is an INT, a LONG beyond 32 bits, a BIGINT beyond 64;
a JSON fraction is a DOUBLE; text is a DATE/TIME/TIMESTAMP when it matches the configured
format, else a STRING. CSV text (``SchemaInferenceUtil.getDataType``) is an INT/LONG when it
parses as a whole number, a FLOAT when it has a point (a DOUBLE beyond a float's range, and for
zero and negatives, since NiFi compares with ``Float.MIN_VALUE``), a BOOLEAN for true/false in
any case, then a temporal type by the formats, else a STRING; an empty value adds nothing.

NiFi infers from a FlowFile's whole content; the readers here infer from a bounded sample (the
first ``max_records`` records, see ``docs/records.md``) so a 1 GB FlowFile is not read twice in
full; a later record that does not fit the inferred schema raises a RecordError naming it.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any

import attrs

from flowcore.records import formats
from flowcore.records.schema import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    FLOAT,
    INT,
    INTEGRAL,
    LONG,
    STRING,
    TIME,
    TIMESTAMP,
    ArrayType,
    ChoiceType,
    DataType,
    DecimalType,
    RecordField,
    RecordSchema,
    RecordType,
)
from flowcore.records.values import TemporalFormats

__all__ = [
    "FieldTypeInference",
    "infer_record_schema",
    "infer_text_type",
    "infer_value_type",
    "merge_schemas",
    "merge_types",
]

#: No date, time or timestamp format: text is never a temporal type.
NO_FORMATS = TemporalFormats()

#: RecordFieldType's narrower types (``isWiderThan``), as NiFi's enum declares them.
_NARROWER: dict[str, frozenset[str]] = {
    "short": frozenset({"byte"}),
    "int": frozenset({"short", "byte"}),
    "long": frozenset({"short", "byte", "int"}),
    "bigint": frozenset({"short", "byte", "int", "long"}),
    "double": frozenset({"float"}),
    "decimal": frozenset({"float", "double"}),
    "string": frozenset(
        {
            "boolean",
            "byte",
            "char",
            "short",
            "int",
            "bigint",
            "long",
            "float",
            "double",
            "decimal",
            "date",
            "time",
            "timestamp",
            "enum",
        }
    ),
}


def _wider_than(wide: DataType, narrow: DataType) -> bool:
    return narrow.name in _NARROWER.get(wide.name, frozenset())


class FieldTypeInference:
    """The possible types of one field, as NiFi's ``FieldTypeInference`` collects them."""

    def __init__(self) -> None:
        self._single: DataType | None = None
        self._possible: list[DataType] = []

    def add(self, dtype: DataType | None) -> None:
        """Add the type of one more value (None, a null value, adds nothing)."""
        if dtype is None:
            return
        if self._single is None:
            self._single = dtype
            return
        if self._single == dtype or dtype in self._possible:
            return
        if isinstance(self._single, RecordType) and isinstance(dtype, RecordType):
            merged = RecordType(merge_schemas(self._single.schema, dtype.schema))
            self._possible = [p for p in self._possible if p != self._single]
            self._single = merged
            self._possible.append(merged)
            return
        if not self._possible:
            self._possible.append(self._single)
        for possible in self._possible:
            if possible.name != "string" and _wider_than(possible, dtype):
                return
        if dtype.name != "string":
            self._possible = [p for p in self._possible if not _wider_than(dtype, p)]
        self._possible.append(dtype)

    def to_type(self) -> DataType:
        """The field's type: the one type seen, or the merge of the possible ones."""
        if not self._possible:
            return self._single or STRING
        merged: DataType | None = None
        for dtype in self._possible:
            merged = merge_types(merged, dtype)
        return merged or STRING


def merge_types(this: DataType | None, other: DataType | None) -> DataType | None:
    """NiFi's ``DataTypeUtils.mergeDataTypes``: the wider type, merged records, or a CHOICE."""
    if this is None:
        return other
    if other is None or this == other:
        return this
    wider = wider_type(this, other)
    if wider is not None:
        return wider
    if isinstance(this, RecordType) and isinstance(other, RecordType):
        return RecordType(merge_schemas(this.schema, other.schema))
    if (
        isinstance(this, ArrayType)
        and isinstance(other, ArrayType)
        and isinstance(this.element, RecordType)
        and isinstance(other.element, RecordType)
    ):
        return ArrayType(merge_types(this.element, other.element))
    options: list[DataType] = []
    for dtype in (this, other):
        for option in dtype.options if isinstance(dtype, ChoiceType) else (dtype,):
            _add_option(options, option)
    options.sort(key=DataType.order)
    return ChoiceType(options)


def _add_option(options: list[DataType], dtype: DataType) -> None:
    """NiFi's ``DataTypeSet.add``: a type an option widens with replaces that option."""
    if dtype in options:
        return
    remove: DataType | None = None
    add: DataType | None = None
    for current in options:
        wider = wider_type(current, dtype)
        if wider is not None:
            remove, add = current, wider
        elif isinstance(current, RecordType) and isinstance(dtype, RecordType):
            remove, add = current, RecordType(merge_schemas(current.schema, dtype.schema))
    if remove is not None:
        options.remove(remove)
    options.append(add or dtype)


def wider_type(this: DataType, other: DataType) -> DataType | None:
    """NiFi's ``DataTypeUtils.getWiderType``, or None when neither type is wider."""
    if isinstance(this, ArrayType) and isinstance(other, ArrayType):
        if this.element is None:
            return None if other.element is None else other
        if other.element is None:
            return this
        element = wider_type(this.element, other.element)
        return None if element is None else ArrayType(element)
    a, b = this.name, other.name
    if a in INTEGRAL and b in INTEGRAL:
        return this if INTEGRAL.index(a) > INTEGRAL.index(b) else other
    decimal_like = ("float", "double", "decimal")
    if a in ("byte", "short", "int", "long") and b in decimal_like:
        return other
    if a == "float":
        if b in ("double", "decimal"):
            return other
        if b in ("byte", "short", "int", "long"):
            return this
    if a == "double":
        if b == "decimal":
            return other
        if b in ("byte", "short", "int", "long", "float"):
            return this
    if a == "decimal":
        if b in ("double", "float") or b in INTEGRAL:
            return this
        if isinstance(this, DecimalType) and isinstance(other, DecimalType):
            return DecimalType(max(this.precision, other.precision), max(this.scale, other.scale))
    if a in ("char", "uuid") and b == "string":
        return other
    if a == "string" and b in ("char", "uuid"):
        return this
    if isinstance(this, RecordType) and isinstance(other, RecordType):
        if _record_covers(this.schema, other.schema):
            return this
        if _record_covers(other.schema, this.schema):
            return other
    return None


def _record_covers(wide: RecordSchema, narrow: RecordSchema) -> bool:
    """Whether *wide* has every field of *narrow* with a type at least as wide.

    NiFi's ``getWiderRecordType``.
    """
    for field in narrow.fields:
        match = wide.field(field.name)
        if match is None:
            return False
        if match.type != field.type and wider_type(match.type, field.type) != match.type:
            return False
    return True


def merge_schemas(this: RecordSchema, other: RecordSchema) -> RecordSchema:
    """NiFi's ``DataTypeUtils.merge``: every field of both, types of shared fields merged."""
    fields = {f.name: f for f in this.fields}
    for field in other.fields:
        known = fields.get(field.name)
        if known is None:
            fields[field.name] = field
        else:
            fields[field.name] = attrs.evolve(
                known,
                type=merge_types(known.type, field.type) or STRING,
                nullable=known.nullable or field.nullable,
            )
    return RecordSchema(fields.values())


@attrs.frozen
class _TimeInference:
    """NiFi's ``TimeValueInference``: text is a temporal type when it matches its format."""

    formats: TemporalFormats

    def infer(self, text: str) -> DataType | None:
        for dtype, pattern in (
            (TIMESTAMP, self.formats.timestamp),
            (DATE, self.formats.date),
            (TIME, self.formats.time),
        ):
            if pattern and formats.pattern(pattern).matches(text):
                return dtype
        return None


def infer_value_type(value: Any, temporal: TemporalFormats = NO_FORMATS) -> DataType | None:
    """The NiFi type of one parsed JSON value (``JsonSchemaInference.getDataType``)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return BOOLEAN
    if isinstance(value, int):
        if -(2**31) <= value < 2**31:
            return INT
        return LONG if -(2**63) <= value < 2**63 else BIGINT
    if isinstance(value, float):
        return DOUBLE
    if isinstance(value, Decimal):
        _, digits, exponent = value.as_tuple()
        return DecimalType(len(digits), max(0, -int(exponent)))
    if isinstance(value, str):
        if temporal.date is None and temporal.time is None and temporal.timestamp is None:
            return STRING
        return _TimeInference(temporal).infer(value) or STRING
    if isinstance(value, Mapping):
        return RecordType(infer_record_schema([value], temporal))
    if isinstance(value, (list, tuple)):
        if not value:
            return ArrayType(None)
        element = FieldTypeInference()
        for item in value:
            element.add(infer_value_type(item, temporal))
        return ArrayType(element.to_type())
    return STRING


def infer_record_schema(
    records: Iterable[Mapping[str, Any]],
    temporal: TemporalFormats = NO_FORMATS,
) -> RecordSchema:
    """The schema NiFi infers from parsed JSON records (fields in first-seen order, nullable).

    Records that all have the same fields in the same order (JSON lines of one producer) are
    inferred a field at a time: a field's values of one Python type give one NiFi type,
    found C-level; any other field, and any other record set, takes the exact walk. Fields
    are inferred independently and a value adds nothing to a type it already gave, so both
    give the same schema.
    """
    records = records if isinstance(records, list) else list(records)
    names = set(map(tuple, records)) if len(records) > 1 else set()
    if len(names) != 1:
        return _infer_records_exact(records, temporal)
    fields: dict[str, FieldTypeInference] = {}
    for name in next(iter(names)):
        column = list(map(operator.itemgetter(name), records))
        inference = fields[name] = FieldTypeInference()
        dtype = _column_type(column, temporal)
        if dtype is not None:
            inference.add(dtype)
        else:
            for value in column:
                inference.add(infer_value_type(value, temporal))
    return RecordSchema(RecordField(name, inf.to_type(), True) for name, inf in fields.items())


def _column_type(column: list[Any], temporal: TemporalFormats) -> DataType | None:
    """The one type every value of *column* gives (nulls add none); None: not one known type."""
    kinds = set(map(type, column))
    kinds.discard(type(None))
    if len(kinds) != 1:
        return None
    (kind,) = kinds
    if kind is str:
        plain = temporal.date is None and temporal.time is None and temporal.timestamp is None
        return STRING if plain else None
    if kind is bool:
        return BOOLEAN
    if kind is float:
        return DOUBLE
    if kind is int:
        numbers = [value for value in column if value is not None]
        return INT if min(numbers) >= -(2**31) and max(numbers) < 2**31 else None
    return None


def _infer_records_exact(
    records: Iterable[Mapping[str, Any]], temporal: TemporalFormats
) -> RecordSchema:
    """:func:`infer_record_schema` a value at a time, record after record."""
    fields: dict[str, FieldTypeInference] = {}
    for record in records:
        for name, value in record.items():
            inference = fields.get(name)
            if inference is None:
                inference = fields[name] = FieldTypeInference()
            inference.add(infer_value_type(value, temporal))
    return RecordSchema(RecordField(name, inf.to_type(), True) for name, inf in fields.items())


_PARSABLE = re.compile(r"-?(?:\d+(?:\.\d+)?|\.\d+)\Z")
_FLOAT_MAX = 3.4028234663852886e38
_FLOAT_MIN = 1.401298464324817e-45  # Java's Float.MIN_VALUE: the smallest positive float


def infer_text_type(text: str | None, temporal: TemporalFormats = NO_FORMATS) -> DataType | None:
    """The NiFi type of one CSV value (``SchemaInferenceUtil.getDataType``); None for empty."""
    if not text:
        return None
    if _PARSABLE.match(text):
        if "." in text:
            number = float(text)
            if number > _FLOAT_MAX or number < _FLOAT_MIN:
                return DOUBLE
            return FLOAT
        whole = int(text)
        if not -(2**63) <= whole < 2**63:
            return STRING
        return INT if -(2**31) <= whole < 2**31 else LONG
    if text.lower() in ("true", "false"):
        return BOOLEAN
    return _TimeInference(temporal).infer(text) or STRING


def infer_text_schema(
    names: Iterable[str],
    rows: Iterable[Iterable[str | None]],
    temporal: TemporalFormats = NO_FORMATS,
) -> RecordSchema:
    """The schema NiFi's ``CSVSchemaInference`` gives CSV rows under the header *names*."""
    columns = list(names)
    fields = [FieldTypeInference() for _ in columns]
    for row in rows:
        for inference, value in zip(fields, row, strict=False):
            if value is not None:
                text = value[1:-1] if len(value) > 1 and value[0] == value[-1] == '"' else value
                inference.add(infer_text_type(text, temporal))
    return RecordSchema(
        RecordField(n, inf.to_type(), True) for n, inf in zip(columns, fields, strict=True)
    )
