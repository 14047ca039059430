"""Tests for the records SDK's own logic; reading and writing through services is tested by the
record processors' tests (ConvertRecord, MergeRecord, ...) and the RecordTransform adapter's."""

from __future__ import annotations

import pyarrow as pa

from flowcore.errors import RecordError
from flowcore.records.record_io import RECORD_FAILURES, Records, failure_message
from flowcore.records.schema import RecordSchema


def test_records_count_as_they_go_and_take_the_first_batchs_schema() -> None:
    """With no configured schema, the first batch's becomes the records' schema."""
    batches = [pa.record_batch({"n": [1, 2]}), pa.record_batch({"n": [3]})]
    records = Records(iter(batches), None)
    assert records.schema is None
    assert [b.num_rows for b in records] == [2, 1]
    assert records.count == 3
    assert records.schema == RecordSchema.from_arrow(batches[0].schema)


def test_records_with_none_read_have_the_configured_or_an_empty_schema() -> None:
    """No record and no configured schema: an empty Arrow schema, so a writer can still start."""
    assert list(Records(iter([]), None)) == []
    assert Records(iter([]), None).arrow_schema() == pa.schema([])
    configured = RecordSchema.from_arrow(pa.schema([("name", pa.string())]))
    assert Records(iter([]), configured).arrow_schema().names == ["name"]


def test_the_failure_message_is_the_errors_or_names_its_class() -> None:
    """NiFi's record.error.message: the message, or '<class> Thrown' when there is none."""
    assert failure_message(RecordError("field 'x' is not a number")) == (
        "field 'x' is not a number"
    )
    assert failure_message(pa.ArrowInvalid()) == "ArrowInvalid Thrown"
    assert issubclass(pa.ArrowInvalid, RECORD_FAILURES)
