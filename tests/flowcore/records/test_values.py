"""Tests for value coercion to NiFi types (DataTypeUtils.convertType's leniency)."""

from __future__ import annotations

import datetime as dt
import json
import math
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
    to_text,
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


@pytest.mark.parametrize("text", ["1.5", "2.0", "1e3", "1_000", " 1", "1 ", "+", "", "0x10", "½"])
@pytest.mark.parametrize("dtype", [s.BYTE, s.SHORT, s.INT, s.LONG, s.BIGINT])
def test_text_that_is_not_a_whole_number_is_refused_by_whole_number_types(
    text: str, dtype: s.DataType
) -> None:
    """NiFi's toInteger/toLong/toBigInt(String) is Integer.parseInt...: no point, exponent,
    underscore or space, so "1.5" goes to failure instead of being truncated to 1."""
    with pytest.raises(FieldError, match="Cannot convert value"):
        coerce(text, dtype, NO_FORMATS, "f")


def test_whole_number_text_and_numbers_convert_as_nifi_does() -> None:
    """A sign and digits parse (Java's parseInt); a number is truncated (Number.intValue())."""
    assert coerce("+7", s.INT, NO_FORMATS, "f") == 7
    assert coerce("-007", s.LONG, NO_FORMATS, "f") == -7
    assert coerce("\u0663", s.INT, NO_FORMATS, "f") == 3  # Java's Character.digit takes it too
    assert coerce(1.5, s.INT, NO_FORMATS, "f") == 1
    assert coerce(-1.5, s.LONG, NO_FORMATS, "f") == -1
    assert coerce(Decimal("2.9"), s.SHORT, NO_FORMATS, "f") == 2


def test_text_that_is_not_integral_fits_no_whole_number_option_of_a_choice() -> None:
    """NiFi's isIntegerTypeCompatible(String) is isIntegral: "2.5" under CHOICE[INT, STRING]
    stays the STRING "2.5"; a number fits an INT whatever its fraction (chooseDataType's
    findMostSuitableType takes INT for 1.5, as getWiderType(INT, DOUBLE) exists)."""
    choice = s.ChoiceType([s.INT, s.STRING])
    assert choose_option("2.5", choice) == s.STRING
    assert coerce("2.5", choice, NO_FORMATS, "c") == '"2.5"'
    assert coerce("1_000", choice, NO_FORMATS, "c") == '"1_000"'
    assert choose_option("-25", choice) == s.INT
    assert coerce(1.5, choice, NO_FORMATS, "c") == "1"


def test_an_inferred_whole_number_field_refuses_a_number_with_a_fraction() -> None:
    """A type inferred from a sample refuses a wider value (NiFi, reading every record, would
    have typed the field DOUBLE) instead of truncating it; explicit schemas still truncate."""
    for value in (1.5, 2.0, Decimal("2.5")):
        with pytest.raises(FieldError, match="inferred from the records before it") as caught:
            coerce(value, s.INT, NO_FORMATS, "a", inferred=True)
        assert caught.value.field == "a"
    assert coerce(3, s.INT, NO_FORMATS, "a", inferred=True) == 3
    assert coerce("3", s.INT, NO_FORMATS, "a", inferred=True) == 3
    assert coerce(Decimal(4), s.LONG, NO_FORMATS, "a", inferred=True) == 4
    nested = s.RecordSchema.of(
        {"a": s.ArrayType(s.RecordType(s.RecordSchema.of({"b": s.MapType(s.LONG)})))}
    )
    with pytest.raises(FieldError, match=r"Cannot convert value \[1.5\].*inferred"):
        coerce_record({"a": [{"b": {"k": 1.5}}]}, nested, NO_FORMATS, inferred=True)
    assert coerce_record({"a": [{"b": {"k": 1.5}}]}, nested, NO_FORMATS) == {
        "a": [{"b": [("k", 1)]}]
    }
    with pytest.raises(FieldError, match="inferred"):
        coerce(1.5, s.ChoiceType([s.INT, s.STRING]), NO_FORMATS, "c", inferred=True)


@pytest.mark.parametrize(
    ("text", "dtype", "expected"),
    [
        ("123456789012345678901234567.89", s.DecimalType(38, 2), "123456789012345678901234567.89"),
        ("99999999999999999999999999999999999999", s.DecimalType(38, 0), "9" * 38),
        ("1" * 60 + ".5", s.DecimalType(76, 1), "1" * 60 + ".5"),
        ("1.555", s.DecimalType(38, 2), "1.56"),
        ("-1.005", s.DecimalType(38, 2), "-1.01"),
        (2.345, s.DecimalType(10, 2), "2.35"),
        ("0.125", s.DecimalType(3, 2), "0.13"),
        ("1E-30", s.DecimalType(38, 2), "0.00"),
        ("1.5", s.DecimalType(38, 2), "1.50"),
    ],
)
def test_decimals_keep_the_fields_precision_and_round_half_up(
    text: object, dtype: s.DecimalType, expected: str
) -> None:
    """A DECIMAL(38, s) takes 38 digits (Python's default context has 28), and digits beyond
    the scale round HALF_UP, as NiFi's AvroTypeUtil does (setScale(scale, HALF_UP))."""
    got = coerce(text, dtype, NO_FORMATS, "d")
    assert got == Decimal(expected)
    assert str(got) == expected


@pytest.mark.parametrize(
    ("text", "dtype"),
    [
        ("1" * 39, s.DecimalType(38, 0)),
        ("1" * 37, s.DecimalType(38, 2)),
        ("99.995", s.DecimalType(4, 2)),
        ("1E+999999", s.DecimalType(38, 2)),
    ],
)
def test_a_decimal_with_more_digits_than_its_type_is_refused(
    text: str, dtype: s.DecimalType
) -> None:
    """Whole digits beyond precision - scale, or a rounding carry past them, do not fit."""
    with pytest.raises(FieldError, match="to BigDecimal for field d"):
        coerce(text, dtype, NO_FORMATS, "d")


def test_bytes_as_text_are_javas_arrays_to_string_and_as_a_string_field_their_utf8() -> None:
    """NiFi's DataTypeUtils.toString of an Avro bytes value (an Object[] of Byte) is
    Arrays.toString, "[0, -1, 65]", what the CSV and FreeForm writers print; convertType to a
    STRING field (ObjectStringFieldConverter) decodes the bytes as UTF-8 instead."""
    assert to_text(b"\x00\xffA") == "[0, -1, 65]"
    assert to_text(b"") == "[]"
    assert coerce(b"caf\xc3\xa9", s.STRING, NO_FORMATS, "b") == "café"
    assert coerce(b"", s.STRING, NO_FORMATS, "b") == "[]"
    uuid_bytes = bytes(range(16))
    assert coerce(uuid_bytes, s.UUID, NO_FORMATS, "u") == "00010203-0405-0607-0809-0a0b0c0d0e0f"
    with pytest.raises(FieldError):
        coerce(b"ab", s.CHAR, NO_FORMATS, "c")


@pytest.mark.parametrize(
    "text", ["1_000.5", "inf", "nan", "-infinity", "1.5x", "", "\u0661.\u0665"]
)
@pytest.mark.parametrize("dtype", [s.FLOAT, s.DOUBLE])
def test_text_for_a_floating_point_type_is_javas_number_text(text: str, dtype: s.DataType) -> None:
    """NiFi's toDouble(String) is Double.parseDouble, which refuses what Python's float also
    takes: underscores, lower-case inf and nan, other scripts' digits."""
    with pytest.raises(FieldError, match="Cannot convert value"):
        coerce(text, dtype, NO_FORMATS, "f")


def test_java_number_text_converts_to_floating_point_and_decimal() -> None:
    """Java's forms: signed Infinity and NaN, a d/f suffix, spaces trimmed; BigDecimal refuses
    underscores."""
    assert coerce(" -Infinity ", s.DOUBLE, NO_FORMATS, "f") == float("-inf")
    assert math.isnan(coerce("NaN", s.DOUBLE, NO_FORMATS, "f"))
    assert coerce("1.5d", s.DOUBLE, NO_FORMATS, "f") == 1.5
    assert coerce(".5e1", s.FLOAT, NO_FORMATS, "f") == 5.0
    with pytest.raises(FieldError, match="to BigDecimal"):
        coerce("1_000.5", s.DecimalType(10, 2), NO_FORMATS, "d")
