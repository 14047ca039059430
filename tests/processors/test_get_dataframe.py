"""Tests for GetDataFrame: a Spark DataFrame's Parquet parts as record FlowFiles, read once."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import ConvertRecord, GetDataFrame, PutFile
from processors.record_services import ParquetReader, ParquetRecordSetWriter


def _spark_like_write(root: Path, parts: list[list[int]], *, committed: bool = True) -> None:
    """A directory as ``df.write.parquet`` leaves it: part files named by partition, _SUCCESS."""
    root.mkdir(parents=True, exist_ok=True)
    for index, ids in enumerate(parts):
        table = pa.table({"id": pa.array(ids, pa.int64()), "name": [f"n{i}" for i in ids]})
        pq.write_table(table, root / f"part-{index:05d}-0f3c-c000.snappy.parquet")
    (root / "._SUCCESS.crc").write_bytes(b"")
    if committed:
        (root / "_SUCCESS").write_bytes(b"")


def test_each_part_is_one_flowfile_in_partition_order_with_its_records(tmp_path: Path) -> None:
    """Parts become FlowFiles in partition order (not name order past 9); content is the part's
    bytes; record.count, fragment.*, spark.partition.index and a RECEIVE event each."""
    root = tmp_path / "df"
    _spark_like_write(root, [[i] for i in range(12)])
    runner = TestRunner(GetDataFrame(directory=str(root)))
    runner.run()
    out = runner.flowfiles_for("success")
    assert [f.attributes["spark.partition.index"] for f in out] == [str(i) for i in range(12)]
    first = out[0]
    first.assert_content_equals((root / first.attributes["filename"]).read_bytes())
    first.assert_attribute_equals("record.count", "1")
    first.assert_attribute_equals("mime.type", "application/vnd.apache.parquet")
    first.assert_attribute_equals("path", "./")
    assert {f.attributes["fragment.count"] for f in out} == {"12"}
    assert len({f.attributes["fragment.identifier"] for f in out}) == 1
    assert [f.attributes["fragment.index"] for f in out] == [str(i) for i in range(12)]
    assert [e.event_type.name for e in runner.provenance_events] == ["RECEIVE"] * 12


def test_an_uncommitted_write_is_not_read_and_a_committed_one_is_read_once(
    tmp_path: Path,
) -> None:
    """Without _SUCCESS nothing is read; after it, every part once; a second trigger with the
    state reads nothing; an overwrite is a new write, read in full."""
    root = tmp_path / "df"
    _spark_like_write(root, [[1, 2], [3]], committed=False)
    runner = TestRunner(GetDataFrame(directory=str(root)))
    runner.run()
    runner.assert_transfer_count("success", 0)
    (root / "_SUCCESS").write_bytes(b"")
    runner.run()
    runner.assert_transfer_count("success", 2)
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)
    shutil.rmtree(root)
    _spark_like_write(root, [[7], [8], [9]])
    runner.run()
    assert [f.attributes["record.count"] for f in runner.flowfiles_for("success")] == ["1"] * 3


def test_parts_per_trigger_hands_out_the_rest_on_later_triggers(tmp_path: Path) -> None:
    """With Parts per Trigger 2, five parts take three triggers and none repeats."""
    root = tmp_path / "df"
    _spark_like_write(root, [[i] for i in range(5)])
    runner = TestRunner(GetDataFrame(directory=str(root), parts_per_trigger=2))
    runner.run(3)
    indexes = [f.attributes["fragment.index"] for f in runner.flowfiles_for("success")]
    assert indexes == ["0", "1", "2", "3", "4"]


def test_a_partitioned_write_keeps_its_column_directories_in_path(tmp_path: Path) -> None:
    """A partitionBy write's parts are found in their ``column=value`` directories."""
    root = tmp_path / "df"
    _spark_like_write(root / "country=fr", [[1]], committed=False)
    _spark_like_write(root / "country=de", [[2]], committed=False)
    (root / "_SUCCESS").write_bytes(b"")
    runner = TestRunner(GetDataFrame(directory=str(root)))
    runner.run()
    assert sorted(f.attributes["path"] for f in runner.flowfiles_for("success")) == [
        "country=de/",
        "country=fr/",
    ]


def test_a_missing_directory_is_invalid() -> None:
    """Directory must exist, as GetFile's Input Directory."""
    runner = TestRunner(GetDataFrame(directory="/no/such/dataframe/dir"))
    runner.assert_not_valid()


@pytest.mark.spark
@pytest.mark.slow
@pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime")
def test_a_dataframe_feeds_a_flow_on_spark_and_spark_reads_its_records_back(
    tmp_path: Path,
) -> None:
    """A PySpark job writes a DataFrame, a flow on the same session reads its partitions as
    record FlowFiles and writes them with ParquetRecordSetWriter, and spark.read.parquet of the
    flow's output gives the DataFrame's rows and types."""
    from flowcore.runners.spark import SparkRunner

    runner = SparkRunner()
    spark = runner.session
    frame = spark.createDataFrame(
        [(i, f"name {i}", i * 1.5, None if i % 7 == 0 else i % 3 == 0) for i in range(300)],
        "id long, name string, score double, flag boolean",
    ).repartition(3)
    frame.write.parquet(str(tmp_path / "df"))
    flow = Flow("dataframe-in-and-out")
    reader = flow.add_service(ParquetReader(), name="reader")
    writer = flow.add_service(ParquetRecordSetWriter(), name="writer")
    get = flow.add(GetDataFrame(directory=str(tmp_path / "df")), name="get")
    convert = flow.add(ConvertRecord(record_reader=reader, record_writer=writer), name="convert")
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, convert)
    flow.connect(convert, put, "success")
    flow.auto_terminate(convert, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    settings = Settings(sync=False, parallelism=2, driver_run_max_flowfiles=0)
    run_flow(flow, runner, repository=tmp_path / "repo", settings=settings)
    back = spark.read.parquet(str(tmp_path / "out"))
    assert dict(back.dtypes) == dict(frame.dtypes)
    assert sorted(map(tuple, back.collect())) == sorted(map(tuple, frame.collect()))
