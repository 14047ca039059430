"""Tests for value coercion to NiFi types (DataTypeUtils.convertType's leniency)."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pyarrow as pa
import pytest

from flowcore.records import schema as s
from flowcore.records.values import (
    FieldError,
    TemporalFormats,
    batch_rows,
    choose_option,
    coerce,
    coerce_record,
)

NO_FORMATS = TemporalFormats()


@pytest.mark.parametrize(
    ("value", "dtype", "expected"),
    [
        ("42", s.INT, 42),
        (42.9, s.LONG, 42),
        ("TRUE", s.BOOLEAN, True),
        (3, s.DOUBLE, 3.0),
        ("1.005", s.DecimalType(5, 2), Decimal("1.01")),
        (True, s.STRING, "true"),
        (1.0e10, s.STRING, "1.0E10"),
        ("abc", s.CHAR, "a"),
        ("2017-01-02", s.DATE, dt.date(2017, 1, 2)),
        (86_400_000, s.DATE, dt.date(1970, 1, 2)),
        ("17:00:00", s.TIME, dt.time(17)),
        ("2017-01-02 03:04:05", s.TIMESTAMP, dt.datetime(2017, 1, 2, 3, 4, 5)),
        ("1000", s.TIMESTAMP, dt.datetime(1970, 1, 1, 0, 0, 1)),
        ({"b": 1}, s.MapType(s.STRING), [("b", "1")]),
        ([1, "2"], s.ArrayType(s.INT), [1, 2]),
        ([1, -1], s.ArrayType(s.BYTE), b"\x01\xff"),
    ],
)
def test_values_convert_as_nifi_converts_them(
    value: object, dtype: s.DataType, expected: object
) -> None:
    """Text, numbers and containers become the field's type as NiFi's convertType does."""
    assert coerce(value, dtype, NO_FORMATS, "f") == expected


@pytest.mark.parametrize(
    ("value", "dtype", "message"),
    [
        ("x", s.INT, r"Cannot convert value \[x\] of type class java.lang.String to Integer"),
        (2**40, s.INT, "Cannot convert value"),
        ("maybe", s.BOOLEAN, "to Boolean for field outer.inner"),
        ("C", s.EnumType(["A", "B"]), "not one of the enum's symbols"),
        ("2017/01/02", s.DATE, "to Date"),
    ],
)
def test_values_that_do_not_fit_name_the_field(
    value: object, dtype: s.DataType, message: str
) -> None:
    """A value that cannot become its type raises FieldError naming the field."""
    with pytest.raises(FieldError, match=message) as caught:
        coerce(value, dtype, NO_FORMATS, "outer.inner")
    assert caught.value.field == "outer.inner"


def test_a_choice_keeps_the_option_the_value_takes_as_json_text() -> None:
    """CHOICE values are stored as JSON text of the option NiFi's chooseDataType picks: a
    string that fits several options takes the narrowest in RecordFieldType's order, so "5"
    under CHOICE[INT, STRING] is the INT 5, as NiFi writes it (its findMostSuitableType)."""
    choice = s.ChoiceType([s.INT, s.STRING])
    assert coerce(5, choice, NO_FORMATS, "c") == "5"
    assert coerce("5", choice, NO_FORMATS, "c") == "5"
    assert coerce("five", choice, NO_FORMATS, "c") == '"five"'
    assert coerce("true", s.ChoiceType([s.STRING, s.BOOLEAN]), NO_FORMATS, "c") == "true"
    assert coerce(5.5, s.ChoiceType([s.LONG, s.DOUBLE]), NO_FORMATS, "c") == "5.5"


def test_a_choice_of_arrays_or_records_takes_the_first_option_the_value_fits() -> None:
    """chooseDataType keeps only compatible options: elements and fields must fit, not just kind."""
    arrays = s.ChoiceType([s.ArrayType(s.INT), s.ArrayType(s.STRING)])
    assert choose_option([1, 2], arrays) == s.ArrayType(s.INT)
    assert choose_option(["x"], arrays) == s.ArrayType(s.STRING)
    assert coerce(["x"], arrays, NO_FORMATS, "c") == '["x"]'
    inner = s.RecordType(s.RecordSchema.of({"b": s.INT}))
    records_ = s.ChoiceType([s.RecordType(s.RecordSchema.of({"b": s.BOOLEAN})), inner])
    assert choose_option({"b": 1}, records_) == inner


def test_records_take_defaults_and_aliases_and_refuse_a_missing_required_field() -> None:
    """Missing fields take their default, aliases are looked up, non-nullable ones must be set."""
    schema = s.RecordSchema(
        [
            s.RecordField("id", s.INT, nullable=False, aliases=["ident"]),
            s.RecordField("kind", s.STRING, default="none"),
        ]
    )
    assert coerce_record({"ident": "7"}, schema, NO_FORMATS) == {"id": 7, "kind": "none"}
    with pytest.raises(FieldError, match="not nullable") as caught:
        coerce_record({"kind": "x"}, schema, NO_FORMATS)
    assert caught.value.field == "id"


def test_batch_rows_decode_choices_and_maps() -> None:
    """The writers' row view: CHOICE JSON text decoded, maps as dicts."""
    schema = s.RecordSchema.of({"c": s.ChoiceType([s.INT, s.STRING]), "m": s.MapType(s.INT)})
    batch = pa.RecordBatch.from_pylist(
        [{"c": json.dumps("x"), "m": [("a", 1)]}, {"c": "3", "m": None}], schema.to_arrow()
    )
    assert list(batch_rows(batch)) == [{"c": "x", "m": {"a": 1}}, {"c": 3, "m": None}]
