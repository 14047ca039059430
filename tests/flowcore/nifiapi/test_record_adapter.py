"""Tests for nifiapi._record_adapter: a NiFi 2 Python RecordTransform, unchanged, in
TestRunner and in a flow (as NiFi's RecordTransformProxy runs it)."""

from __future__ import annotations

import io
import json
import pickle
from pathlib import Path

import pyarrow as pa
import pytest

from flowcore import Flow, ProvenanceEventType
from flowcore.errors import RecordError
from flowcore.records.csv_reader import CsvReaderOptions, read_csv
from flowcore.testing import TestRunner
from nifiapi._loader import PythonExtensions, load_python_extensions
from nifiapi._record_adapter import java_text, record_dicts
from processors import GetFile
from processors.record_services import JsonRecordSetWriter, JsonTreeReader

SAMPLES = Path(__file__).parent / "record_samples"
PEOPLE = (
    b'[{"name":"ann","color":"red","age":3},{"name":"bob","color":"blue","age":4},'
    b'{"name":"drop","color":"red","age":5},{"name":"cy","color":"red","age":6},'
    b'{"name":"skip","color":"red","age":7}]'
)


@pytest.fixture(scope="module")
def loaded() -> PythonExtensions:
    """The sample record transforms, loaded as NiFi loads a directory."""
    return load_python_extensions([SAMPLES])


def runner_for(loaded: PythonExtensions, content: bytes = PEOPLE, **properties: str) -> TestRunner:
    """PartitionByColor over JSON records, run once over *content*."""
    cls = loaded.processors["PartitionByColor"]
    runner = TestRunner(cls(**{"Record Reader": "reader", "Record Writer": "writer", **properties}))
    runner.add_service(JsonTreeReader("reader"))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.enqueue(content, {"filename": "people.json"})
    runner.run()
    return runner


def test_properties_and_relationships_are_nifis(loaded: PythonExtensions) -> None:
    """Record Reader and Record Writer come first, then the processor's; its relationships,
    then failure and original (auto-terminated by default), as NiFi's proxy has them."""
    cls = loaded.processors["PartitionByColor"]
    assert [d.name for d in cls.property_descriptors] == [
        "Record Reader",
        "Record Writer",
        "Name Suffix",
    ]
    assert [(r.name, r.auto_terminated) for r in cls.relationships] == [
        ("success", False),
        ("skipped", False),
        ("failure", False),
        ("original", True),
    ]
    assert cls.tags == ("record", "partition")


def test_records_are_grouped_by_relationship_and_partition(loaded: PythonExtensions) -> None:
    """Each (relationship, partition) is one FlowFile written by the Record Writer, with
    record.count, mime.type and the partition's values; a None record is dropped."""
    runner = runner_for(loaded, **{"Name Suffix": "!"})
    out = runner.flowfiles_for("success")
    assert [f.attributes["color"] for f in out] == ["red", "blue"]
    red, blue = (json.loads(f.content) for f in out)
    assert red == [
        {"name": "ANN!", "color": "red", "age": 3, "source": "people.json"},
        {"name": "CY!", "color": "red", "age": 6, "source": "people.json"},
    ]
    assert blue == [{"name": "BOB!", "color": "blue", "age": 4, "source": "people.json"}]
    out[0].assert_attribute_equals("record.count", "2")
    out[0].assert_attribute_equals("mime.type", "application/json")
    out[0].assert_attribute_equals("filename", "people.json")
    [skipped] = runner.flowfiles_for("skipped")
    assert json.loads(skipped.content) == [{"name": "skip", "color": "red", "age": 7}]
    skipped.assert_attribute_not_exists("color")
    assert runner.auto_terminated_count("original") == 1
    forks = [e for e in runner.provenance_events if e.event_type is ProvenanceEventType.FORK]
    assert len(forks) == 1
    assert len(forks[0].child_uuids) == 3


def test_an_exception_sends_the_original_to_failure(loaded: PythonExtensions) -> None:
    """transform raising: no child is kept, the original goes to failure unchanged."""
    content = b'[{"name":"ann","color":"red"},{"name":"boom","color":"red"}]'
    runner = runner_for(loaded, content)
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(content)


def test_unreadable_records_send_the_original_to_failure(loaded: PythonExtensions) -> None:
    """A record the reader cannot parse fails the FlowFile, as NiFi's proxy does."""
    runner = runner_for(loaded, b'[{"name":"ann","color":"red"}, nonsense]')
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_many_records_spool_and_come_back_in_order(loaded: PythonExtensions) -> None:
    """More records than a chunk go through the spool and come back, in order."""
    rows = [{"name": f"p{i}", "color": "red" if i % 3 else "blue", "age": i} for i in range(6300)]
    runner = runner_for(loaded, json.dumps(rows).encode())
    blue, red = runner.flowfiles_for("success")  # in the order their first record came
    assert red.attributes["record.count"] == "4200"
    assert blue.attributes["record.count"] == "2100"
    assert [r["age"] for r in json.loads(blue.content)] == list(range(0, 6300, 3))


def test_records_reach_transform_as_nifis_raw_json() -> None:
    """Dicts hold NiFi's raw JSON values: nulls kept, CSV text typed by the reader's schema."""
    csv = io.BytesIO(b"a,b\n1,\n2,x\n")
    batches = list(read_csv(csv, CsvReaderOptions(first_line_is_header=True)))
    assert record_dicts(batches[0]) == [{"a": 1, "b": None}, {"a": 2, "b": "x"}]


def test_a_nan_fails_as_nifis_raw_json_writer_does() -> None:
    """RecordTransformProxy's WriteJsonResult has no scientific notation: NaN throws there (the
    FlowFile fails), and here a RecordError names the record and field, never a bare NaN."""
    batch = pa.record_batch({"a": [1.5, float("nan")]})
    with pytest.raises(RecordError, match=r"^record 2, field 'a': the double NaN is no JSON"):
        record_dicts(batch)


def test_partition_values_print_as_java() -> None:
    """Objects.toString: null, true, 1.5, 1.0E10."""
    assert [java_text(v) for v in (None, True, 1.5, 1e10, 7, "x")] == [
        "null",
        "true",
        "1.5",
        "1.0E10",
        "7",
        "x",
    ]


def test_the_processor_pickles_and_runs_in_a_flow(loaded: PythonExtensions, tmp_path: Path) -> None:
    """GetFile -> PartitionByColor on the direct runner (the processor travels pickled)."""
    cls = loaded.processors["PartitionByColor"]
    made = cls(**{"Record Reader": "reader", "Record Writer": "writer"})
    assert type(pickle.loads(pickle.dumps(made))).__name__ == "PartitionByColor"
    inbox = tmp_path / "in"
    inbox.mkdir()
    (inbox / "people.json").write_bytes(PEOPLE)
    flow = Flow("record-transform")
    reader = flow.add_service(JsonTreeReader("reader"))
    writer = flow.add_service(JsonRecordSetWriter("writer"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    part = flow.add(cls(**{"Record Reader": reader, "Record Writer": writer}), name="part")
    flow.connect(get, part)
    flow.auto_terminate(part, ["success", "skipped", "failure"])
    result = flow.run("direct", repository=tmp_path / "repo")
    assert result.count("part", "success") == 2
    assert result.count("part", "skipped") == 1
