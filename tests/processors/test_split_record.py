"""Tests for SplitRecord, ported from NiFi's TestSplitRecord (CSV services for NiFi's mocks)."""

from __future__ import annotations

import logging

import pytest

from flowcore import ProvenanceEventType
from flowcore.testing import TestRunner
from processors import SplitRecord
from processors.record_services import CSVReader, CSVRecordSetWriter, JsonTreeReader
from processors.split_record import chunks

PEOPLE = b"name,age\nJohn Doe,48\nJane Doe,47\nJimmy Doe,14\n"


def split(per_split: str, content: bytes = PEOPLE, reader: object = None) -> TestRunner:
    """A SplitRecord runner that has split *content* in *per_split* records each."""
    runner = TestRunner(
        SplitRecord(record_reader="reader", record_writer="writer", records_per_split=per_split)
    )
    runner.add_service(reader or CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.enqueue(content, {"filename": "people.csv"})
    runner.run()
    return runner


def test_individual_record_per_split() -> None:
    """NiFi's testIndividualRecordPerSplit: one split per record, fragments numbered from 0."""
    runner = split("1")
    runner.assert_transfer_count("splits", 3)
    runner.assert_transfer_count("original", 1)
    runner.assert_transfer_count("failure", 0)
    out = runner.flowfiles_for("splits")
    fragment_id = out[0].attributes["fragment.identifier"]
    for index, flowfile in enumerate(out):
        flowfile.assert_attribute_equals("fragment.identifier", fragment_id)
        flowfile.assert_attribute_equals("fragment.count", "3")
        flowfile.assert_attribute_equals("fragment.index", str(index))
        flowfile.assert_attribute_equals("segment.original.filename", "people.csv")
        flowfile.assert_attribute_equals("record.count", "1")
        flowfile.assert_attribute_equals("mime.type", "text/csv")
    assert [f.content for f in out] == [
        b"name,age\nJohn Doe,48\n",
        b"name,age\nJane Doe,47\n",
        b"name,age\nJimmy Doe,14\n",
    ]
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_equals("fragment.count", "3")
    original.assert_attribute_equals("fragment.identifier", fragment_id)
    fork = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.FORK]
    assert len(fork) == 1
    assert len(fork[0].child_uuids) == 3


def test_multiple_records_per_split() -> None:
    """NiFi's testMultipleRecordsPerSplit: two records, then the one left."""
    out = split("2").flowfiles_for("splits")
    assert [f.attributes["record.count"] for f in out] == ["2", "1"]
    assert out[0].content == b"name,age\nJohn Doe,48\nJane Doe,47\n"
    assert out[1].content == b"name,age\nJimmy Doe,14\n"


def test_all_splits_one_destination() -> None:
    """NiFi's testAllSplitsOneDesintation: three records per split make one split."""
    runner = split("3")
    runner.assert_transfer_count("splits", 1)
    out = runner.flowfiles_for("splits")[0]
    out.assert_attribute_equals("record.count", "3")
    out.assert_content_equals(PEOPLE)


def test_read_failure(caplog: pytest.LogCaptureFixture) -> None:
    """NiFi's testReadFailure: a record that does not parse fails the original, no splits."""
    content = b'[{"a": 1}, {"a": 2}, nonsense]'
    with caplog.at_level(logging.ERROR):
        runner = split("1", content, JsonTreeReader("reader"))
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(content)
    assert "Failed to split" in caplog.text


def test_records_per_split_from_an_attribute() -> None:
    """Records Per Split takes Expression Language over the FlowFile's attributes."""
    runner = TestRunner(
        SplitRecord(record_reader="reader", record_writer="writer", records_per_split="${n}")
    )
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.enqueue(PEOPLE, {"n": "2"})
    runner.run()
    runner.assert_transfer_count("splits", 2)


def test_chunks_cross_batches() -> None:
    """chunks cuts record batches into tables of exactly the size, across batch edges."""
    import pyarrow as pa

    batches = [pa.record_batch({"a": list(range(n))}) for n in (3, 4, 2)]
    assert [t.num_rows for t in chunks(batches, 4)] == [4, 4, 1]
