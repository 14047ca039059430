"""Tests of processors.record_services._conform: records cast to a writer's schema."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from flowcore.errors import RecordError
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
