"""Memory of the record processors on large content: streamed batch by batch, never held whole."""

from __future__ import annotations

import resource

import pytest

from flowcore.testing import TestRunner
from processors import ConvertRecord
from processors.record_services import CSVReader, JsonRecordSetWriter

pytestmark = [pytest.mark.stress, pytest.mark.slow]


def converter(reader: object, writer: object, **properties: str) -> TestRunner:
    """A ConvertRecord runner with *reader* and *writer* added as 'reader' and 'writer'."""
    runner = TestRunner(ConvertRecord(record_reader="reader", record_writer="writer", **properties))
    runner.add_service(reader)
    runner.add_service(writer)
    return runner


def test_a_large_csv_is_streamed_not_held() -> None:
    """Converting 10 MB of CSV raises peak memory by far less than the content's size."""
    rows = b"".join(b"%d,name-%d,%d.5\n" % (i, i, i) for i in range(1_200_000))
    content = b"id,name,value\n" + rows
    runner = converter(
        CSVReader("reader", treat_first_line_as_header="true"),
        JsonRecordSetWriter("writer", output_grouping="output-oneline"),
    )
    runner.enqueue(content)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    runner.run()
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "1200000")
    assert grown_mb < len(content) / (1 << 20), grown_mb
