"""Tests of processors._nifi_compat: NiFi's isCompatibleDataType, a column at a time."""

from __future__ import annotations

from decimal import Decimal

import pyarrow as pa
import pytest

from flowcore.records import schema as s
from processors._nifi_compat import compatible, incompatible

_ANSWERS = s.RecordType(s.RecordSchema((s.RecordField("x", s.INT),)))

#: (value, Arrow type it is read as, NiFi type read, wanted type, NiFi's answer)
CASES = [
    # BOOLEAN: a Boolean, or text true/false in any case; never a number
    (True, pa.bool_(), s.BOOLEAN, s.BOOLEAN, True),
    ("TRUE", pa.string(), s.STRING, s.BOOLEAN, True),
    ("false", pa.string(), s.STRING, s.BOOLEAN, True),
    ("1", pa.string(), s.STRING, s.BOOLEAN, False),
    ("yes", pa.string(), s.STRING, s.BOOLEAN, False),
    (1, pa.int64(), s.LONG, s.BOOLEAN, False),
    (0.0, pa.float64(), s.DOUBLE, s.BOOLEAN, False),
    # INT: a Number whose longValue fits (1.5 truncates); sign-and-digits text in range
    (1.5, pa.float64(), s.DOUBLE, s.INT, True),
    (3e9, pa.float64(), s.DOUBLE, s.INT, False),
    (2**31, pa.int64(), s.LONG, s.INT, False),
    (-(2**31), pa.int64(), s.LONG, s.INT, True),
    (Decimal("7.9"), pa.decimal128(5, 1), s.DecimalType(5, 1), s.INT, True),
    (True, pa.bool_(), s.BOOLEAN, s.INT, False),
    ("+12", pa.string(), s.STRING, s.INT, True),
    ("0x1F", pa.string(), s.STRING, s.INT, False),
    ("1.5", pa.string(), s.STRING, s.INT, False),
    (" 1", pa.string(), s.STRING, s.INT, False),
    ("2147483648", pa.string(), s.STRING, s.INT, False),
    # LONG, SHORT, BIGINT: any Number; text in the type's range
    (1.5, pa.float64(), s.DOUBLE, s.LONG, True),
    ("9223372036854775808", pa.string(), s.STRING, s.LONG, False),
    ("9223372036854775808", pa.string(), s.STRING, s.BIGINT, True),
    ("40000", pa.string(), s.STRING, s.SHORT, False),
    (True, pa.bool_(), s.BOOLEAN, s.LONG, False),
    # FLOAT, DOUBLE, DECIMAL: any Number; decimal text (NaN, Infinity: not for DECIMAL)
    (1, pa.int64(), s.LONG, s.DOUBLE, True),
    ("-2.5e3", pa.string(), s.STRING, s.DOUBLE, True),
    ("NaN", pa.string(), s.STRING, s.FLOAT, True),
    ("Infinity", pa.string(), s.STRING, s.DOUBLE, True),
    ("inf", pa.string(), s.STRING, s.DOUBLE, False),
    ("1,5", pa.string(), s.STRING, s.DOUBLE, False),
    ("NaN", pa.string(), s.STRING, s.DecimalType(10, 2), False),
    (".5", pa.string(), s.STRING, s.DecimalType(10, 2), True),
    (False, pa.bool_(), s.BOOLEAN, s.DOUBLE, False),
    # STRING: anything but a record
    (1.5, pa.float64(), s.DOUBLE, s.STRING, True),
    (True, pa.bool_(), s.BOOLEAN, s.STRING, True),
    ([1, 2], pa.list_(pa.int64()), s.ArrayType(s.LONG), s.STRING, True),
    ({"x": 1}, pa.struct([("x", pa.int32())]), _ANSWERS, s.STRING, False),
    ([("k", 1)], pa.map_(pa.string(), pa.int64()), s.MapType(s.LONG), s.STRING, True),
    # CHAR, UUID, ENUM
    ("", pa.string(), s.STRING, s.CHAR, False),
    ("ab", pa.string(), s.STRING, s.CHAR, True),
    ("0f8fad5b-d9cb-469f-a165-70867728950e", pa.string(), s.STRING, s.UUID, True),
    ("nope", pa.string(), s.STRING, s.UUID, False),
    ("b", pa.string(), s.STRING, s.EnumType(("a", "b")), True),
    ("c", pa.string(), s.STRING, s.EnumType(("a", "b")), False),
    # ARRAY: each element compatible; MAP and RECORD: a map or a record
    ([1, 2], pa.list_(pa.int64()), s.ArrayType(s.LONG), s.ArrayType(s.INT), True),
    ([True], pa.list_(pa.bool_()), s.ArrayType(s.BOOLEAN), s.ArrayType(s.INT), False),
    ("x", pa.string(), s.STRING, s.ArrayType(s.INT), False),
    ({"x": 1}, pa.struct([("x", pa.int32())]), _ANSWERS, s.MapType(s.INT), True),
    (1, pa.int64(), s.LONG, s.MapType(s.INT), False),
    # CHOICE: compatible with one option
    (True, pa.bool_(), s.BOOLEAN, s.ChoiceType((s.INT, s.STRING)), True),
    (True, pa.bool_(), s.BOOLEAN, s.ChoiceType((s.INT, s.LONG)), False),
]


@pytest.mark.parametrize(("value", "arrow", "have", "want", "fits"), CASES)
def test_incompatible_answers_as_nifis_is_compatible_data_type(
    value: object, arrow: pa.DataType, have: s.DataType, want: s.DataType, fits: bool
) -> None:
    """Each value read as *have* is compatible with *want* exactly when NiFi says so, a column
    at a time (with a null beside it, never flagged) and value by value."""
    column = pa.array([value, None], arrow)
    assert incompatible(column, have, want).tolist() == [not fits, False]
    one = column[0].as_py()
    if isinstance(have, s.MapType):
        one = dict(one)
    assert compatible(one, want, mapping_is_record=isinstance(have, s.RecordType)) is fits


def test_incompatible_leaves_dates_and_times_to_the_caller() -> None:
    """A date, time or timestamp depends on the field's format: asking is a ValueError."""
    with pytest.raises(ValueError, match="timestamp compatibility depends on the field's format"):
        incompatible(pa.array(["1"]), s.STRING, s.TIMESTAMP)
