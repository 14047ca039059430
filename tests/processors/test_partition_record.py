"""Tests for PartitionRecord, ported from NiFi's TestPartitionRecord, plus order and spilling."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import processors.partition_record as partition_module
from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.record_path import compile_record_path
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import GetFile, PartitionRecord, PutFile, UpdateAttribute, UpdateRecord
from processors.record_services import (
    CSVReader,
    CSVRecordSetWriter,
    JsonRecordSetWriter,
    JsonTreeReader,
)

SCHEMA = json.dumps(
    {
        "type": "record",
        "name": "person",
        "fields": [
            {"name": "name", "type": ["null", "string"]},
            {"name": "age", "type": ["null", "int"]},
            {"name": "sports", "type": ["null", {"type": "array", "items": "string"}]},
        ],
    }
)


def partitioner(writer: str = "csv", **properties: str) -> TestRunner:
    """PartitionRecord over JSON records of (name, age, sports), written as CSV lines or JSON."""
    runner = TestRunner(PartitionRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(
        JsonTreeReader("reader", schema_access_strategy="schema-text-property", schema_text=SCHEMA)
    )
    runner.add_service(
        CSVRecordSetWriter("writer", include_header_line="false")
        if writer == "csv"
        else JsonRecordSetWriter("writer", output_grouping="output-oneline")
    )
    for name, value in properties.items():
        runner.set_property(name, value)
    return runner


def people(*rows: tuple[str, int | None, list[str] | None]) -> bytes:
    """The JSON content of (name, age, sports) records."""
    return json.dumps([{"name": n, "age": a, "sports": s} for n, a, s in rows]).encode()


def test_group_by_string_mixed_number_of_records() -> None:
    """NiFi's groupByStringMixedNumberOfRecords: one FlowFile per name, first-seen order."""
    runner = partitioner(**{"person-name": "/name"})
    runner.enqueue(
        people(("John", 28, None), ("Jake", 49, None), ("Mark", 19, None), ("Jane", 20, None),
               ("Jake", 14, None)),
        {"filename": "people.json"},
    )  # fmt: skip
    runner.run()
    runner.assert_transfer_count("original", 1)
    runner.assert_transfer_count("failure", 0)
    runner.assert_transfer_count("success", 4)
    out = runner.flowfiles_for("success")
    assert [f.attributes["person-name"] for f in out] == ["John", "Jake", "Mark", "Jane"]
    assert [f.attributes["record.count"] for f in out] == ["1", "2", "1", "1"]
    assert [f.attributes["fragment.index"] for f in out] == ["0", "1", "2", "3"]
    ids = {f.attributes["fragment.identifier"] for f in out}
    assert len(ids) == 1
    for f in out:
        f.assert_attribute_equals("fragment.count", "4")
        f.assert_attribute_equals("segment.original.filename", "people.json")
        f.assert_attribute_equals("mime.type", "text/csv")
    out[1].assert_content_equals("Jake,49,\nJake,14,\n")
    original = runner.flowfiles_for("original")[0]
    original.assert_attribute_not_exists("fragment.identifier")
    types = [e.event_type for e in runner.provenance_events]
    assert types.count(ProvenanceEventType.FORK) == 1


def test_group_by_is_empty() -> None:
    """NiFi's groupByIsEmpty: filter functions at the top level give booleans."""
    runner = partitioner(
        **{"unknown-age": "isEmpty( /age )", "another-unknown": "isEmpty( /nonExistentField )"}
    )
    runner.enqueue(
        people(("John", 28, None), ("Jake", 49, None), ("Mark", None, None), ("Jane", 20, None),
               ("Jake", 14, None))
    )  # fmt: skip
    runner.run()
    runner.assert_transfer_count("original", 1)
    runner.assert_transfer_count("success", 2)
    out = runner.flowfiles_for("success")
    assert [f.attributes["record.count"] for f in out] == ["4", "1"]
    assert [f.attributes["unknown-age"] for f in out] == ["false", "true"]
    for f in out:
        f.assert_attribute_equals("another-unknown", "true")


def test_expression_as_path() -> None:
    """NiFi's testExpressionAsPath: a comparison groups adults from the rest (null age too)."""
    runner = partitioner(adult="/age >= 18")
    runner.enqueue(
        people(("John", 28, None), ("Jake", 49, None), ("Mark", None, None), ("Jane", 20, None),
               ("Jake", 14, None))
    )  # fmt: skip
    runner.run()
    runner.assert_transfer_count("success", 2)
    out = runner.flowfiles_for("success")
    assert [(f.attributes["adult"], f.attributes["record.count"]) for f in out] == [
        ("true", "3"),
        ("false", "2"),
    ]


def test_group_by_int_all_records_together() -> None:
    """NiFi's testGroupByIntAllRecordsTogether: one partition holding every record."""
    runner = partitioner(age="/age")
    runner.enqueue(
        people(("John", 30, None), ("Jake", 30, None), ("Mark", 30, None), ("Jane", 30, None),
               ("Jake", 30, None))
    )  # fmt: skip
    runner.run()
    runner.assert_transfer_count("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "5")
    out.assert_content_equals("John,30,\nJake,30,\nMark,30,\nJane,30,\nJake,30,\n")
    out.assert_attribute_equals("age", "30")


def test_group_by_multiple_fields() -> None:
    """NiFi's testGroupByMultipleFields: the key is the tuple of both paths' values."""
    runner = partitioner(age="/age", name="/name")
    runner.enqueue(
        people(("John", 30, None), ("Jane", 30, None), ("John", 30, None), ("John", 31, None))
    )
    runner.run()
    runner.assert_transfer_count("success", 3)
    out = runner.flowfiles_for("success")
    got = [(f.content.decode(), f.attributes["age"], f.attributes["name"]) for f in out]
    assert got == [
        ("John,30,\nJohn,30,\n", "30", "John"),
        ("Jane,30,\n", "30", "Jane"),
        ("John,31,\n", "31", "John"),
    ]


def test_group_by_array_field() -> None:
    """NiFi's testGroupByArrayField: arrays compare by content; no attribute for an array."""
    runner = partitioner("json", sports="/sports")
    runner.enqueue(
        people(("John", 30, ["baseball"]), ("Jane", 30, ["baseball"]),
               ("John", 30, ["basketball"]), ("John", 31, ["football"]))
    )  # fmt: skip
    runner.run()
    runner.assert_transfer_count("success", 3)
    out = runner.flowfiles_for("success")
    assert [f.content.decode() for f in out] == [
        '{"name":"John","age":30,"sports":["baseball"]}\n'
        '{"name":"Jane","age":30,"sports":["baseball"]}',
        '{"name":"John","age":30,"sports":["basketball"]}',
        '{"name":"John","age":31,"sports":["football"]}',
    ]
    assert all("sports" not in f.attributes for f in out)


def test_read_failure() -> None:
    """NiFi's testReadFailure: a bad record sends the original, unchanged, to failure only."""
    runner = partitioner(sports="/sports")
    content = b'[{"name":"John","age":30},{"name":"Jane","age":"not a number"}]'
    runner.enqueue(content)
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(content)


def test_value_wrapper_equality_with_arrays() -> None:
    """NiFi's testValueWrapperEqualityWithArrays: equal arrays are one key."""
    assert partition_module._frozen(["baseball"]) == partition_module._frozen(["baseball"])
    assert partition_module._frozen(True) != partition_module._frozen(1)


def test_migrated_property_names() -> None:
    """NiFi's testMigrateProperties: record-reader and record-writer are the old names."""
    values = PartitionRecord(**{"record-reader": "reader", "record-writer": "w"}).effective_values()
    assert values["Record Reader"] == "reader"
    assert values["Record Writer"] == "w"


def test_needs_a_valid_record_path() -> None:
    """At least one dynamic property, each a valid RecordPath unless it holds EL."""
    runner = partitioner()
    runner.assert_not_valid()
    runner.set_property("n", "/name[")
    runner.assert_not_valid()
    runner.set_property("n", "${path}")
    runner.assert_valid()


def test_path_from_expression_language_that_is_not_valid_fails() -> None:
    """A RecordPath from EL that does not compile sends the original to failure."""
    runner = partitioner(n="${path}")
    runner.enqueue(people(("John", 1, None)), {"path": "/name["})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)


def test_no_records_makes_no_partition() -> None:
    """Content without records: only the original, to original."""
    runner = partitioner(n="/name")
    runner.enqueue(b"[]")
    runner.run()
    runner.assert_all_flowfiles_transferred("original", 1)


def test_nested_path_per_record_and_null_group() -> None:
    """An array index, evaluated per record: a null or empty array selects nothing (one group,
    no attribute)."""
    runner = partitioner("json", first="/sports[0]")
    runner.enqueue(people(("a", 1, ["x", "y"]), ("b", 2, None), ("c", 3, ["x"]), ("d", 4, [])))
    runner.run()
    out = runner.flowfiles_for("success")
    assert [f.attributes.get("first") for f in out] == ["x", None]
    assert [f.attributes["record.count"] for f in out] == ["2", "2"]


@pytest.mark.parametrize("spill", [1, 10**9])
def test_many_batches_and_spilling_keep_order(monkeypatch: pytest.MonkeyPatch, spill: int) -> None:
    """Records over many reader batches, spilled to files or not, keep their order per group."""
    monkeypatch.setattr(partition_module, "SPILL_BYTES", spill)
    runner = partitioner("json", group="/age")
    rows = [(f"n{i}", i % 3, None) for i in range(3000)]
    runner.enqueue(people(*rows))
    runner.run()
    out = runner.flowfiles_for("success")
    assert [f.attributes["group"] for f in out] == ["0", "1", "2"]
    for group, f in enumerate(out):
        names = [json.loads(line)["name"] for line in f.content.decode().splitlines()]
        assert names == [f"n{i}" for i in range(group, 3000, 3)]
        f.assert_attribute_equals("record.count", "1000")


def test_update_then_partition_in_a_flow(tmp_path: Path) -> None:
    """GetFile -> UpdateRecord -> PartitionRecord -> UpdateAttribute -> PutFile, direct runner:
    one file per city, each record with the added field."""
    inbox = tmp_path / "in"
    inbox.mkdir()
    rows = [
        {"name": "a", "city": "Oslo"},
        {"name": "b", "city": "Rome"},
        {"name": "c", "city": "Oslo"},
    ]
    (inbox / "people.json").write_text(json.dumps(rows))
    flow = Flow("update-partition")
    reader = flow.add_service(JsonTreeReader("json in"))
    writer = flow.add_service(JsonRecordSetWriter("json out"))
    get = flow.add(GetFile(input_directory=str(inbox)), name="get")
    update = flow.add(
        UpdateRecord(record_reader=reader, record_writer=writer, **{"/source": "${filename}"}),
        name="update",
    )
    partition = flow.add(
        PartitionRecord(record_reader=reader, record_writer=writer, city="/city"), name="partition"
    )
    rename = flow.add(UpdateAttribute(filename="${city}.json"), name="rename")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, update)
    flow.connect(update, partition, "success")
    flow.connect(partition, rename, "success")
    flow.connect(rename, put)
    flow.auto_terminate(update, ["failure"])
    flow.auto_terminate(partition, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    result = run_flow(
        flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False, parallelism=1)
    )
    assert result.count("partition", "success") == 2
    oslo = json.loads((tmp_path / "out" / "Oslo.json").read_text())
    assert oslo == [
        {"name": "a", "city": "Oslo", "source": "people.json"},
        {"name": "c", "city": "Oslo", "source": "people.json"},
    ]
    assert json.loads((tmp_path / "out" / "Rome.json").read_text())[0]["name"] == "b"


def test_a_writer_failure_removes_every_child_and_fails_the_original() -> None:
    """A Record Writer that fails (its schema text does not parse) sends the original to
    failure, its content unchanged, and leaves no partition child behind (NiFi's catch)."""
    runner = TestRunner(PartitionRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(
        JsonTreeReader("reader", schema_access_strategy="schema-text-property", schema_text=SCHEMA)
    )
    runner.add_service(
        JsonRecordSetWriter(
            "writer", schema_access_strategy="schema-text-property", schema_text="${bad}"
        )
    )
    runner.set_property("n", "/name")
    content = people(("John", 28, None), ("Jake", 49, None))
    runner.enqueue(content, {"filename": "p.json", "bad": "{not json"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    runner.flowfiles_for("failure")[0].assert_content_equals(content)


def test_every_nan_is_one_partition() -> None:
    """NaN values group together, as NiFi's ValueWrapper compares doubles with Double.equals.
    (Read from CSV: JSON has no NaN, and JsonTreeReader refuses it as Jackson does; the writer
    allows scientific notation, without which NiFi's fails on NaN, and writes it "NaN".)"""
    schema = json.dumps(
        {"type": "record", "name": "r", "fields": [{"name": "x", "type": ["null", "double"]}]}
    )
    runner = TestRunner(PartitionRecord(record_reader="reader", record_writer="writer"))
    runner.add_service(
        CSVReader(
            "reader",
            schema_access_strategy="schema-text-property",
            schema_text=schema,
            treat_first_line_as_header="true",
        )
    )
    runner.add_service(
        JsonRecordSetWriter(
            "writer", output_grouping="output-oneline", allow_scientific_notation="true"
        )
    )
    runner.set_property("x", "/x")
    runner.enqueue(b"x\nNaN\nNaN\nNaN\n1.0\n1.0\n")
    runner.run()
    out = runner.flowfiles_for("success")
    assert [f.attributes["record.count"] for f in out] == ["3", "2"]
    out[0].assert_content_equals('{"x":"NaN"}\n{"x":"NaN"}\n{"x":"NaN"}')


def test_spilling_thousands_of_partitions_keeps_no_file_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Spilled partitions are written to files closed at once: 1,500 partitions spilled under
    a limit of 256 open files all come out, each with its records."""
    import resource

    monkeypatch.setattr(partition_module, "SPILL_BYTES", 1)
    runner = partitioner("json", group="/age")
    runner.enqueue(people(*[(f"n{i}", i % 1500, None) for i in range(3000)]))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))
    try:
        runner.run()
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    out = runner.flowfiles_for("success")
    assert len(out) == 1500
    assert {f.attributes["record.count"] for f in out} == {"2"}


_SCALARS = st.one_of(
    st.none(), st.sampled_from([0.0, -0.0, 1.5, float("nan"), float("-nan"), float("inf")])
)
_ROWS = st.lists(
    st.fixed_dictionaries(
        {
            "s": st.one_of(st.none(), st.sampled_from(["a", "b", "é", ""])),
            "i": st.one_of(st.none(), st.integers(-2, 2)),
            "d": _SCALARS,
            "t": st.one_of(st.none(), st.booleans()),
            "r": st.one_of(
                st.none(), st.fixed_dictionaries({"b": st.one_of(st.none(), st.integers(0, 2))})
            ),
        }
    ),
    max_size=40,
)
_ROW_TYPE = pa.schema(
    [
        ("s", pa.string()),
        ("i", pa.int64()),
        ("d", pa.float64()),
        ("t", pa.bool_()),
        ("r", pa.struct([("b", pa.int32())])),
    ]
)


def _partitioned(
    batches: list[pa.RecordBatch], texts: dict[str, str], tmp: Path
) -> list[tuple[dict[str, str], int, list[dict[str, object]]]]:
    """The partitions *texts*' paths make of *batches*: attributes, count, records."""
    paths = {name: compile_record_path(text) for name, text in texts.items()}
    out = partition_module._Partitions(tmp)
    for batch in batches:
        partition_module._partition(batch, paths, out)
    return [
        (
            out.attributes[index],
            out.counts[index],
            [repr(row) for batch in out.batches(index) for row in batch.to_pylist()],
        )
        for index in range(len(out))
    ]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    rows=_ROWS,
    split=st.integers(1, 40),
    keys=st.lists(
        st.sampled_from(["/s", "/i", "/d", "/t", "/r/b"]), min_size=1, max_size=3, unique=True
    ),
)
def test_column_grouping_matches_the_per_record_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rows: list[dict[str, object]],
    split: int,
    keys: list[str],
) -> None:
    """Arrow's grouping of plain scalar paths makes the same partitions (first-seen order,
    every NaN one partition, -0.0 apart from 0.0, nulls and null parents, attributes,
    records in order) as the per-record RecordPath grouping, over several batches."""
    table = pa.Table.from_pylist(rows, schema=_ROW_TYPE)
    batches = table.to_batches(max_chunksize=split)
    texts = {f"k{n}": key for n, key in enumerate(keys)}
    columnar = _partitioned(batches, texts, tmp_path)
    with monkeypatch.context() as patch:
        patch.setattr(partition_module, "_scalar_column", lambda *_: None)
        per_record = _partitioned(batches, texts, tmp_path)
    assert columnar == per_record


def test_plain_paths_make_one_python_key_per_group_not_per_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Plain scalar paths are grouped by Arrow: 20,000 records in 3 groups build 3 Python keys
    (the per-record path built 20,000) and never a Python record."""
    calls = []
    frozen = partition_module._frozen
    monkeypatch.setattr(partition_module, "_frozen", lambda v: calls.append(v) or frozen(v))
    monkeypatch.setattr(partition_module, "batch_rows", None)
    table = pa.table({"c": [f"c{i % 3}" for i in range(20_000)], "n": range(20_000)})
    out = _partitioned(table.to_batches(), {"c": "/c"}, tmp_path)
    assert [(a, n) for a, n, _ in out] == [
        ({"c": "c0"}, 6667),
        ({"c": "c1"}, 6667),
        ({"c": "c2"}, 6666),
    ]
    assert len(calls) == 3
