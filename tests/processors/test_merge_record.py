"""Tests for MergeRecord, ported from NiFi's TestMergeRecord (CSV services for NiFi's mocks).

NiFi's mock writer prints a ``header`` line and ``value,value`` rows; the CSVRecordSetWriter
here prints the CSV header (``Name,Age``) and the same rows.
"""

from __future__ import annotations

from pathlib import Path

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, MergeRecord, PutFile, SplitRecord
from processors.record_services import CSVReader, CSVRecordSetWriter

HEADER = "Name,Age\n"
AGE_SCHEMA = (
    '{"type":"record","name":"person","fields":[{"name":"Name","type":"string"},'
    '{"name":"Age","type":"int"}]}'
)


def merge_runner(**properties: str) -> TestRunner:
    """A MergeRecord runner over a CSV reader (header line) and a CSV writer."""
    runner = TestRunner(MergeRecord(record_reader="reader", record_writer="writer", **properties))
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(CSVRecordSetWriter("writer"))
    return runner


def counts(runner: TestRunner) -> tuple[int, int, int]:
    """FlowFiles sent to merged, original and failure."""
    return tuple(len(runner.flowfiles_for(r)) for r in ("merged", "original", "failure"))  # type: ignore[return-value]


def test_small_output_is_flushed() -> None:
    """NiFi's testSmallOutputIsFlushed: a FlowFile past Maximum Number of Records merges at once."""
    runner = merge_runner(minimum_number_of_records="1", maximum_number_of_records="1")
    runner.enqueue("Name, Age\nJohn, 35\nJane, 34")
    runner.run(1)
    assert counts(runner) == (1, 1, 0)
    merged = runner.flowfiles_for("merged")[0]
    merged.assert_attribute_equals("record.count", "2")
    merged.assert_content_equals(HEADER + "John,35\nJane,34\n")
    merged.assert_attribute_equals("merge.completion.reason", "Bin is full")
    for original in runner.flowfiles_for("original"):
        original.assert_attribute_equals("merge.uuid", merged.uuid)


def test_merge_simple() -> None:
    """NiFi's testMergeSimple: two FlowFiles merge on the second trigger, full enough."""
    runner = merge_runner()
    runner.enqueue("Name, Age\nJohn, 35")
    runner.enqueue("Name, Age\nJane, 34")
    runner.run(2)
    assert counts(runner) == (1, 2, 0)
    merged = runner.flowfiles_for("merged")[0]
    merged.assert_attribute_equals("record.count", "2")
    merged.assert_attribute_equals("merge.count", "2")
    merged.assert_attribute_equals("mime.type", "text/csv")
    merged.assert_attribute_exists("merge.bin.age")
    merged.assert_content_equals(HEADER + "John,35\nJane,34\n")
    merged.assert_attribute_equals("merge.completion.reason", "Bin is full enough")
    for original in runner.flowfiles_for("original"):
        original.assert_attribute_equals("merge.uuid", merged.uuid)
    joins = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.JOIN]
    assert len(joins) == 1
    assert len(joins[0].parent_uuids) == 2
    assert joins[0].details == "Records Merged due to: Bin is full enough"


def test_merge_simple_different_write_schema() -> None:
    """NiFi's testMergeSimpleDifferentWriteSchema: the writer's own schema drops Age."""
    runner = TestRunner(MergeRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(CSVReader("reader", treat_first_line_as_header="true"))
    runner.add_service(
        CSVRecordSetWriter(
            "writer",
            schema_access_strategy="schema-text-property",
            schema_text='{"type":"record","name":"n","fields":[{"name":"Name","type":"string"}]}',
        )
    )
    runner.enqueue("Name, Age\nJohn, 35")
    runner.enqueue("Name, Age\nJane, 34")
    runner.run(2)
    assert counts(runner) == (1, 2, 0)
    merged = runner.flowfiles_for("merged")[0]
    merged.assert_attribute_equals("record.count", "2")
    merged.assert_content_equals("Name\nJohn\nJane\n")


def test_different_schema() -> None:
    """NiFi's testDifferentSchema: FlowFiles bin with their like schemas only."""
    runner = merge_runner(minimum_number_of_records="2")
    runner.enqueue("Name, Age\nJohn, 35")
    runner.enqueue("Name, Color\nJane, Red")
    runner.run(1, stop_on_finish=False)
    assert counts(runner) == (0, 0, 0)
    runner.enqueue("Name, Age\nJane, 34")
    runner.enqueue("Name, Color\nJohn, Blue")
    runner.run(1, stop_on_finish=False, initialize=False)
    runner.run(1, stop_on_finish=True, initialize=False)
    assert counts(runner) == (2, 4, 0)
    contents = sorted(f.content for f in runner.flowfiles_for("merged"))
    assert contents == [b"Name,Age\nJohn,35\nJane,34\n", b"Name,Color\nJane,Red\nJohn,Blue\n"]
    assert {f.attributes["record.count"] for f in runner.flowfiles_for("merged")} == {"2"}


def test_failure_to_parse() -> None:
    """NiFi's testFailureToParse: a FlowFile whose records do not parse fails its whole bin."""
    runner = TestRunner(
        MergeRecord(record_reader="reader", record_writer="writer", minimum_number_of_records="3")
    )
    runner.add_service(
        CSVReader(
            "reader",
            treat_first_line_as_header="true",
            schema_access_strategy="schema-text-property",
            schema_text=AGE_SCHEMA,
        )
    )
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.enqueue("Name, Age\nJohn, 35")
    runner.enqueue("Name, Age\nJane, 34")
    runner.enqueue("Name, Age\nJake, 3\nJoe, many")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 3)


def test_unreadable_flowfile_alone_fails_alone() -> None:
    """A FlowFile whose first record does not parse fails alone; the bin waits on."""
    runner = TestRunner(
        MergeRecord(record_reader="reader", record_writer="writer", minimum_number_of_records="2")
    )
    runner.add_service(
        CSVReader(
            "reader",
            treat_first_line_as_header="true",
            schema_access_strategy="schema-text-property",
            schema_text=AGE_SCHEMA,
        )
    )
    runner.add_service(CSVRecordSetWriter("writer"))
    runner.enqueue("Name, Age\nJoe, many")
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def fragment(identifier: str, index: str, count: str = "2", **more: str) -> dict[str, str]:
    """Defragment attributes."""
    return {
        "fragment.identifier": identifier,
        "fragment.index": index,
        "fragment.count": count,
        **more,
    }


def test_defragment() -> None:
    """NiFi's testDefragment: whole fragment sets merge; an incomplete one stays queued."""
    runner = merge_runner(merge_strategy="Defragment")
    runner.enqueue("Name, Age\nJohn, 35", fragment("1", "0"))
    runner.enqueue("Name, Age\nJane, 34", fragment("1", "1"))
    runner.enqueue("Name, Age\nJay, 24", fragment("2", "0"))
    runner.enqueue("Name, Age\nJake, 3", fragment("3", "0"))
    runner.enqueue("Name, Age\nJan, 2", fragment("3", "1"))
    runner.run(1)
    assert runner.queue_size() == 1
    assert counts(runner) == (2, 4, 0)
    contents = {f.content for f in runner.flowfiles_for("merged")}
    assert contents == {
        HEADER.encode() + b"John,35\nJane,34\n",
        HEADER.encode() + b"Jake,3\nJan,2\n",
    }


def test_defragment_over_multiple_calls() -> None:
    """NiFi's testDefragmentOverMultipleCalls: the second fragment completes the set later."""
    runner = merge_runner(merge_strategy="Defragment")
    runner.enqueue("Name, Age\nJohn, 35", fragment("1", "0"))
    runner.run(2)
    assert runner.queue_size() == 1
    assert counts(runner) == (0, 0, 0)
    runner.enqueue("Name, Age\nJane, 34", fragment("1", "1"))
    runner.run(1)
    assert runner.queue_size() == 0
    assert counts(runner) == (1, 2, 0)
    runner.flowfiles_for("merged")[0].assert_content_equals(HEADER + "John,35\nJane,34\n")


def test_defragment_with_multiple_records() -> None:
    """NiFi's testDefragmentWithMultipleRecords: record.count gives the counts unread."""
    runner = merge_runner(merge_strategy="Defragment")
    runner.enqueue("Name, Age\nJohn, 35\nJane, 34", fragment("1", "0", record_count="2"))
    runner.enqueue("Name, Age\nJake, 3\nJan, 2", fragment("1", "1", record_count="2"))
    runner.enqueue("Name, Age\nJay, 24\nJade, 28", fragment("2", "0", record_count="2"))
    runner.run(1)
    assert runner.queue_size() == 1
    assert counts(runner) == (1, 2, 0)
    merged = runner.flowfiles_for("merged")[0]
    merged.assert_attribute_equals("record.count", "4")
    merged.assert_content_equals(HEADER + "John,35\nJane,34\nJake,3\nJan,2\n")


def test_defragment_oldest_bin_fails_when_too_many_bins() -> None:
    """NiFi's testDefragmentOldestBinFailsWhenTooManyBins: the evicted incomplete bin fails."""
    runner = merge_runner(merge_strategy="Defragment", maximum_number_of_bins="5")
    for i in range(5):
        runner.enqueue(f"Name, Age\nJohn, 3{i}", fragment(str(i), "0", "5"))
    runner.run(1, stop_on_finish=False)
    assert counts(runner) == (0, 0, 0)
    runner.enqueue("Name, Age\nJohn, 35", fragment("5", "0", "5"))
    assert runner.processor.bin_count() == 5
    runner.run(1, stop_on_finish=False, initialize=False)
    assert counts(runner) == (0, 0, 1)
    assert runner.processor.bin_count() == 5


def test_defragment_expired_bin_fails_on_timeout() -> None:
    """NiFi's testDefragmentExpiredBinFailsOnTimeout: an expired incomplete set fails."""
    runner = merge_runner(
        merge_strategy="Defragment", maximum_number_of_bins="5", max_bin_age="1 millis"
    )
    runner.enqueue("Name, Age\nJohn, 30", fragment("0", "0", "5"))
    runner.run(1, stop_on_finish=False)
    runner.advance_time(0.05)
    runner.run(1, stop_on_finish=False, initialize=False)
    runner.run(1, stop_on_finish=True, initialize=False)
    assert counts(runner) == (0, 0, 1)


def test_min_size() -> None:
    """NiFi's testMinSize: below Minimum Bin Size nothing merges, until a large FlowFile."""
    runner = merge_runner(minimum_number_of_records="2", minimum_bin_size="500 B")
    runner.enqueue("Name, Age\nJohn, 35")
    runner.enqueue("Name, Age\nJane, 34")
    runner.run()
    assert counts(runner) == (0, 0, 0)
    rows = "".join(f"Person {i}, {i}\n" for i in range(100))
    runner.enqueue("Name, Age\n" + rows)
    runner.run(2)
    assert counts(runner) == (1, 3, 0)


def test_validation() -> None:
    """NiFi's testValidation: Maximum Number of Records below the minimum is invalid."""
    runner = merge_runner(
        minimum_number_of_records="103", maximum_number_of_records="2", minimum_bin_size="500 B"
    )
    runner.assert_not_valid()
    runner.set_property("Minimum Number of Records", "2")
    runner.set_property("Maximum Number of Records", "103")
    runner.assert_valid()
    runner.set_property("Maximum Bin Size", "100 B")
    runner.assert_not_valid()


def test_min_records() -> None:
    """NiFi's testMinRecords: 103 records are needed before the bin merges."""
    runner = merge_runner(minimum_number_of_records="103", minimum_bin_size="500 B")
    runner.enqueue("Name, Age\nJohn, 35")
    runner.enqueue("Name, Age\nJane, 34")
    runner.enqueue("Name, Age\n" + "".join(f"Person {i}, {i}\n" for i in range(100)))
    runner.run()
    assert counts(runner) == (0, 0, 0)
    runner.enqueue("Name, Age\nJohn, 35")
    runner.run(2)
    assert counts(runner) == (1, 4, 0)
    runner.flowfiles_for("merged")[0].assert_attribute_equals("record.count", "103")


def test_max_records() -> None:
    """NiFi's testMaxRecords: bins of ten records merge; the four left return to the queue."""
    runner = merge_runner(minimum_number_of_records="5", maximum_number_of_records="10")
    for _ in range(34):
        runner.enqueue("Name, Age\nJohn, 35")
    runner.run()
    assert counts(runner) == (3, 30, 0)
    assert runner.queue_size() == 4
    for merged in runner.flowfiles_for("merged"):
        merged.assert_attribute_equals("record.count", "10")


def test_max_size() -> None:
    """NiFi's testMaxSize: bytes are the writer's (9 for the header, 9 a record), so a 100 B
    bin is full at 11 FlowFiles: three bins, three FlowFiles left queued."""
    runner = merge_runner(minimum_number_of_records="5", maximum_bin_size="100 B")
    for _ in range(36):
        runner.enqueue("Name, Age\nJohnny, 5")
    runner.run()
    assert counts(runner) == (3, 33, 0)
    assert runner.queue_size() == 3
    merged = runner.flowfiles_for("merged")[0]
    merged.assert_attribute_equals("merge.count", "11")
    merged.assert_attribute_equals("merge.completion.reason", "Bin is full")


def test_timeout() -> None:
    """NiFi's testTimeout (on the harness clock): Max Bin Age merges a bin short of records."""
    runner = merge_runner(minimum_number_of_records="500", max_bin_age="500 millis")
    for _ in range(100):
        runner.enqueue("Name, Age\nJohnny, 5")
    runner.run(1, stop_on_finish=False)
    assert counts(runner) == (0, 0, 0)
    runner.advance_time(0.75)
    runner.run(1, stop_on_finish=True, initialize=False)
    assert counts(runner) == (1, 100, 0)
    runner.flowfiles_for("merged")[0].assert_attribute_equals(
        "merge.completion.reason", "Bin has reached Max Bin Age"
    )


def test_bin_count() -> None:
    """NiFi's testBinCount: a sixth correlation value completes the oldest of five bins."""
    runner = merge_runner(
        minimum_number_of_records="5",
        maximum_number_of_records="10",
        maximum_number_of_bins="5",
        correlation_attribute_name="correlationId",
    )
    for i in range(5):
        runner.enqueue(f"Name, Age\nJohn, 3{i}", {"correlationId": str(i)})
    runner.run(1, stop_on_finish=False)
    assert counts(runner) == (0, 0, 0)
    runner.enqueue("Name, Age\nJohn, 35", {"correlationId": "5"})
    assert runner.processor.bin_count() == 5
    runner.run(1, stop_on_finish=False, initialize=False)
    assert counts(runner) == (1, 1, 0)
    assert runner.processor.bin_count() == 5
    merged = runner.flowfiles_for("merged")[0]
    merged.assert_attribute_equals("correlationId", "0")
    merged.assert_attribute_equals(
        "merge.completion.reason", "Maximum number of bins has been exceeded"
    )


def test_record_count_attribute_is_trusted() -> None:
    """A FlowFile's record.count counts its records without reading them (as NiFi's bins)."""
    runner = merge_runner(minimum_number_of_records="4", maximum_number_of_records="4")
    runner.enqueue("Name, Age\nJohn, 35", {"record.count": "2"})
    runner.enqueue("Name, Age\nJane, 34", {"record.count": "2"})
    runner.run(1)
    assert counts(runner) == (1, 2, 0)
    runner.flowfiles_for("merged")[0].assert_attribute_equals("record.count", "2")


def test_properties_by_nifi_internal_names() -> None:
    """NiFi's testMigrateProperties: the old internal names still set the properties."""
    runner = TestRunner(
        MergeRecord(
            **{
                "record-reader": "reader",
                "record-writer": "writer",
                "merge-strategy": "Defragment",
                "min-records": "2",
                "max-records": "3",
                "min-bin-size": "1 B",
                "max-bin-size": "2 B",
                "max.bin.count": "3",
                "max-bin-age": "1 sec",
                "correlation-attribute-name": "x",
            }
        )
    )
    values = runner.processor.active_values()
    assert values["Merge Strategy"] == "Defragment"
    assert values["Maximum Number of Records"] == "3"
    assert values["Maximum Number of Bins"] == "3"


def test_split_then_merge_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> SplitRecord -> MergeRecord -> PutFile on the direct runner: the engine's
    bins give back every record, in one CSV with one header."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    rows = "".join(f"p{i},{i}\n" for i in range(25))
    (inbox / "people.csv").write_text("name,age\n" + rows)
    flow = Flow("split-merge-records")
    reader = flow.add_service(CSVReader("csv", treat_first_line_as_header="true"))
    writer = flow.add_service(CSVRecordSetWriter("out"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    split = flow.add(
        SplitRecord(record_reader=reader, record_writer=writer, records_per_split="2"),
        name="split",
    )
    merge = flow.add(
        MergeRecord(record_reader=reader, record_writer=writer, merge_strategy="Defragment"),
        name="merge",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, split)
    flow.connect(split, merge, "splits")
    flow.connect(merge, put, "merged")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("merge", "merged") == 1
    assert result.count("merge", "original") == 13
    (written,) = (tmp_path / "out").iterdir()
    assert written.read_text() == "name,age\n" + rows


def test_correlated_bins_in_a_flow_split_by_schema(tmp_path: Path) -> None:
    """On the direct runner, FlowFiles bin by correlation value and by schema: two schemas
    under one value make two merged FlowFiles; the input's end merges the open bins."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    files = {
        "a1.csv": "name,age\nann,3\n",
        "a2.csv": "name,age\nbob,4\n",
        "c1.csv": "name,color\ncy,red\n",
        "c2.csv": "name,color\ndee,blue\n",
    }
    for name, text in files.items():
        (inbox / name).write_text(text)
    flow = Flow("merge-records-by-schema")
    reader = flow.add_service(CSVReader("csv", treat_first_line_as_header="true"))
    writer = flow.add_service(CSVRecordSetWriter("out"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    merge = flow.add(
        MergeRecord(
            record_reader=reader,
            record_writer=writer,
            correlation_attribute_name="path",
            minimum_number_of_records="100",
        ),
        name="merge",
    )
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, merge)
    flow.connect(merge, put, "merged")
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("merge", "merged") == 2
    texts = sorted(p.read_text() for p in (tmp_path / "out").iterdir())
    assert texts == ["name,age\nann,3\nbob,4\n", "name,color\ncy,red\ndee,blue\n"]


def test_keep_all_unique_attributes() -> None:
    """Attribute Strategy 'Keep All Unique Attributes' keeps attributes only some FlowFiles have."""
    runner = merge_runner(attribute_strategy="Keep All Unique Attributes")
    runner.enqueue("Name, Age\nJohn, 35", {"a": "1", "shared": "x"})
    runner.enqueue("Name, Age\nJane, 34", {"b": "2", "shared": "x"})
    runner.run(2)
    merged = runner.flowfiles_for("merged")[0]
    for key, value in (("a", "1"), ("b", "2"), ("shared", "x")):
        merged.assert_attribute_equals(key, value)
    plain = merge_runner()
    plain.enqueue("Name, Age\nJohn, 35", {"a": "1", "shared": "x"})
    plain.enqueue("Name, Age\nJane, 34", {"b": "2", "shared": "x"})
    plain.run(2)
    plain.flowfiles_for("merged")[0].assert_attribute_not_exists("a")
