"""Tests of processors.record_services._conform: records cast to a writer's schema."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from flowcore.errors import RecordError
from flowcore.records import schema as s
from flowcore.records.values import TemporalFormats
from processors.record_services._conform import conform


def test_conform_parses_text_in_nifis_default_formats() -> None:
    """A string column cast to timestamp, date or time is read in RecordFieldType's default
    formats, spaces around and blanks (null) as NiFi's DataTypeUtils reads them."""
    batch = pa.table(
        {
            "ts": ["2017-04-04 14:20:33", " 2017-04-05 01:02:03 ", None],
            "date": ["2017-04-04", "", "2016-02-29"],
            "time": ["14:20:33", "00:00:01", None],
        }
    )
    target = pa.schema(
        [
            pa.field("ts", pa.timestamp("us", tz="UTC")),
            pa.field("date", pa.date32()),
            pa.field("time", pa.time64("us")),
        ]
    )
    conformed = conform(batch, target)
    assert conformed.schema == target
    assert conformed.to_pylist() == [
        {
            "ts": dt.datetime(2017, 4, 4, 14, 20, 33, tzinfo=dt.UTC),
            "date": dt.date(2017, 4, 4),
            "time": dt.time(14, 20, 33),
        },
        {
            "ts": dt.datetime(2017, 4, 5, 1, 2, 3, tzinfo=dt.UTC),
            "date": None,
            "time": dt.time(0, 0, 1),
        },
        {"ts": None, "date": dt.date(2016, 2, 29), "time": None},
    ]


def test_conform_names_the_record_and_field_of_text_that_does_not_parse() -> None:
    """A value not in the default format is a RecordError naming its record (counted from
    *first*, the batch's first record) and field; an invalid date (02-30) is one too."""
    target = pa.schema([pa.field("date", pa.date32())])
    with pytest.raises(RecordError, match="record 3, field 'date': '04/06/2017'") as caught:
        conform(pa.table({"date": ["2017-04-04", " 2017-04-05 ", "04/06/2017"]}), target)
    assert (caught.value.record, caught.value.field) == (3, "date")
    with pytest.raises(RecordError, match="record 11, field 'date': '2017-02-30'"):
        conform(pa.table({"date": ["2017-02-30"]}), target, first=11)


@pytest.mark.parametrize(
    ("values", "source", "target", "expected"),
    [
        (["true", "FALSE", "True", None], pa.string(), pa.bool_(), [True, False, True, None]),
        ([1.5, -1.9, 2.0, None], pa.float64(), pa.int32(), [1, -1, 2, None]),
        (["+1", "-20", " ", None], pa.string(), pa.int32(), [1, -20, None, None]),
        (["1", "2147483648"], pa.string(), pa.int64(), [1, 2147483648]),
        ([float("nan"), float("inf")], pa.float64(), pa.int64(), [0, 2**63 - 1]),
        (
            ["1.5", " 2 ", "NaN", "1e3", "3d", ""],
            pa.string(),
            pa.float64(),
            [1.5, 2.0, None, 1000.0, 3.0, None],
        ),
        ([1.0, 1e10, 1.5], pa.float64(), pa.string(), ["1.0", "1.0E10", "1.5"]),
        ([True, False], pa.bool_(), pa.string(), ["true", "false"]),
        ([2**40], pa.int64(), pa.float64(), [float(2**40)]),
    ],
)
def test_conform_converts_as_nifis_data_type_utils(
    values: list, source: pa.DataType, target: pa.DataType, expected: list
) -> None:
    """Values NiFi's DataTypeUtils converts (toBoolean, toInteger, toLong, toDouble, toString)
    come out as NiFi gives them: text true/false in any case, numbers truncated toward zero,
    parseInt's sign, blank text as null, Java's form of a double as text."""
    conformed = conform(pa.table({"a": pa.array(values, source)}), pa.schema([("a", target)]))
    got = conformed.column("a").to_pylist()
    if expected[2:3] == [None] and pa.types.is_floating(target):  # NaN != NaN
        assert got[2] != got[2]
        got[2] = None
    assert got == expected


@pytest.mark.parametrize(
    ("value", "source", "target"),
    [
        ("1", pa.string(), pa.bool_()),
        ("yes", pa.string(), pa.bool_()),
        (2, pa.int64(), pa.bool_()),
        (True, pa.bool_(), pa.int32()),
        ("0x1F", pa.string(), pa.int32()),
        (" 1", pa.string(), pa.int32()),
        ("1.5", pa.string(), pa.int32()),
        (2**31, pa.int64(), pa.int32()),
        (3e9, pa.float64(), pa.int32()),
        (True, pa.bool_(), pa.float64()),
        ("inf", pa.string(), pa.float64()),
        ("0x10", pa.string(), pa.int64()),
    ],
)
def test_conform_refuses_what_nifi_refuses(
    value: object, source: pa.DataType, target: pa.DataType
) -> None:
    """A value NiFi's writer refuses (a number for a BOOLEAN, a boolean or hex for an int, an
    int overflow) is a RecordError naming record, field and value, not Arrow's cast of it."""
    batch = pa.table({"a": pa.array([None, value], source)})
    with pytest.raises(RecordError, match=r"record 6, field 'a': NiFi does not convert") as caught:
        conform(batch, pa.schema([("a", target)]), first=5)
    assert (caught.value.record, caught.value.field) == (6, "a")


def test_conform_decodes_a_choice_before_converting_it() -> None:
    """A CHOICE column holds JSON text a value: the writer's field takes the value itself
    (text "7" is 7 for an INT, "abc" has no quotes as a STRING), and NiFi's rules refuse
    text "1" for a BOOLEAN, naming the value without its JSON quotes."""
    choice = s.RecordSchema((s.RecordField("a", s.ChoiceType((s.INT, s.STRING))),)).to_arrow()
    batch = pa.RecordBatch.from_arrays([pa.array(["5", '"7"', '"abc"', None])], schema=choice)
    as_text = conform(batch, pa.schema([("a", pa.string())]))
    assert as_text.column("a").to_pylist() == ["5", "7", "abc", None]
    as_int = conform(batch.slice(0, 2), pa.schema([("a", pa.int32())]))
    assert as_int.column("a").to_pylist() == [5, 7]
    with pytest.raises(RecordError, match="record 2, field 'a': NiFi does not convert '1' to"):
        conform(
            pa.RecordBatch.from_arrays([pa.array(["true", '"1"'])], schema=choice),
            pa.schema([("a", pa.bool_())]),
        )


def test_conform_reads_a_number_for_a_timestamp_as_epoch_millis() -> None:
    """A number written into a DATE, TIME or TIMESTAMP is epoch millis, as NiFi's convertType
    reads a Long (a float keeps its microseconds), not Arrow's microseconds of timestamp[us]."""
    batch = pa.table(
        {
            "ts": pa.array([1700000000123, -1], pa.int64()),
            "f": pa.array([1700000000123.5, None], pa.float64()),
            "d": pa.array([1700000000123, -1], pa.int64()),
            "t": pa.array([1700000000123, 1], pa.int64()),
        }
    )
    target = pa.schema(
        [
            ("ts", s.arrow_type(s.TIMESTAMP)),
            ("f", s.arrow_type(s.TIMESTAMP)),
            ("d", pa.date32()),
            ("t", pa.time32("ms")),
        ]
    )
    assert conform(batch, target).to_pylist() == [
        {
            "ts": dt.datetime(2023, 11, 14, 22, 13, 20, 123000),
            "f": dt.datetime(2023, 11, 14, 22, 13, 20, 123500),
            "d": dt.date(2023, 11, 14),
            "t": dt.time(22, 13, 20, 123000),
        },
        {
            "ts": dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
            "f": None,
            "d": dt.date(1969, 12, 31),
            "t": dt.time(0, 0, 0, 1000),
        },
    ]


def test_conform_converts_a_choice_to_a_timestamp_value_by_value() -> None:
    """A CHOICE's number for a TIMESTAMP is epoch millis and its text is in the default
    format; text that is neither is a RecordError naming record and field (not Arrow's)."""
    choice = s.RecordSchema((s.RecordField("ts", s.ChoiceType((s.LONG, s.STRING))),)).to_arrow()
    batch = pa.RecordBatch.from_arrays(
        [pa.array(["1700000000123", '"2023-11-14 22:13:20"', None])], schema=choice
    )
    target = pa.schema([("ts", s.arrow_type(s.TIMESTAMP))])
    assert conform(batch, target).column("ts").to_pylist() == [
        dt.datetime(2023, 11, 14, 22, 13, 20, 123000),
        dt.datetime(2023, 11, 14, 22, 13, 20),
        None,
    ]
    bad = pa.RecordBatch.from_arrays([pa.array(["1", '"x"'])], schema=choice)
    with pytest.raises(RecordError, match=r"record 2, field 'ts': .*\[x\]") as caught:
        conform(bad, target)
    assert (caught.value.record, caught.value.field) == (2, "ts")


def test_conform_writes_a_timestamp_into_text_in_the_writers_formats() -> None:
    """A TIMESTAMP, DATE or TIME written into a STRING field is text in the writer's format
    (NiFi's convertType to STRING), NiFi's default format where none is set."""
    batch = pa.table(
        {
            "ts": pa.array(
                [dt.datetime(2024, 1, 2, 3, 4, 5, 123000), None], s.arrow_type(s.TIMESTAMP)
            ),
            "d": pa.array([dt.date(2024, 1, 2), None], pa.date32()),
            "t": pa.array([dt.time(3, 4, 5), None], pa.time32("ms")),
        }
    )
    target = pa.schema([("ts", pa.string()), ("d", pa.string()), ("t", pa.string())])
    assert conform(batch, target).to_pylist()[0] == {
        "ts": "2024-01-02 03:04:05",
        "d": "2024-01-02",
        "t": "03:04:05",
    }
    given = TemporalFormats("dd/MM/yyyy", "HH.mm", "yyyy-MM-dd HH:mm:ss.SSS")
    assert conform(batch, target, formats_=given).to_pylist() == [
        {"ts": "2024-01-02 03:04:05.123", "d": "02/01/2024", "t": "03.04"},
        {"ts": None, "d": None, "t": None},
    ]
