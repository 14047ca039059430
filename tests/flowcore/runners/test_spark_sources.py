"""Tests for Spark reading datasets and provenance as DataFrames, on a real local Spark."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import flowcore.runners.spark_sources as sources
from flowcore import Flow
from flowcore.datasets import open as open_dataset
from flowcore.datasets.store import Dataset
from flowcore.driver.controller import run_flow
from flowcore.errors import DatasetError
from flowcore.settings import Settings
from processors import GetFile, PutDataset, SplitText
from repositories.repository_set import RepositorySet

pytestmark = [
    pytest.mark.spark,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
]

# every stage run goes to Spark, in two tasks, so the dataset gets chunks from both
SETTINGS = Settings(sync=False, parallelism=2, shuffle_partitions=3, driver_run_max_flowfiles=0)


@pytest.fixture(scope="module")
def spark():  # type: ignore[no-untyped-def]
    """The process's Spark runner (its session has the formats: the runner registers them)."""
    from flowcore.runners.spark import SparkRunner

    return SparkRunner()


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory, spark) -> Path:  # type: ignore[no-untyped-def]
    """A flow run on Spark: lines split one per FlowFile into a dataset of several chunks."""
    root = tmp_path_factory.mktemp("written")
    (root / "in").mkdir()
    for n in range(3):
        (root / "in" / f"f{n}.txt").write_text("".join(f"{n}:{i}:é\n" for i in range(150)))
    flow = Flow("to-dataset")
    get = flow.add(GetFile(input_directory=str(root / "in")), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    put = flow.add(
        PutDataset(directory=str(root / "ds"), demarcator="\n", desired_chunk_size="1 KB"),
        name="put",
    )
    flow.connect(get, split)
    flow.connect(split, put, "splits")
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(flow, spark, repository=root / "repo", settings=SETTINGS)
    return root


def _flowcore(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "flowcore", *args], capture_output=True, timeout=120, check=True
    )


def test_a_dataset_reads_back_as_flowcore_dataset_cat_prints_it(written: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """A record per row, a partition per chunk in dataset order: the values joined with the
    demarcator are the bytes `flowcore dataset cat` prints."""
    frame = spark.session.read.format("flowcore-dataset").load(str(written / "ds"))
    manifest = open_dataset(written / "ds").manifest()
    assert len(manifest.chunks) > 2
    assert frame.rdd.getNumPartitions() == len(manifest.chunks)
    rows = frame.collect()
    cat = _flowcore("dataset", "cat", str(written / "ds")).stdout
    assert "\n".join(r.value for r in rows).encode() == cat
    assert len(rows) == manifest.records == 450
    assert [r.chunk for r in rows] == [c.id for c in manifest.chunks for _ in range(c.records)]
    assert [r.chunk_index for r in rows][-1] == len(manifest.chunks) - 1
    assert [r.record for r in rows[: manifest.chunks[0].records]] == list(
        range(manifest.chunks[0].records)
    )


def test_to_spark_reads_a_retained_version_as_binary_values(
    tmp_path: Path,
    spark,  # type: ignore[no-untyped-def]
    published_dataset: Callable[..., Dataset],
) -> None:
    """``open(path).to_spark(spark, version)`` reads that version, not the current one; with
    ``binary`` the values are bytes, split at the demarcator wherever it falls in the data."""
    dataset = published_dataset(tmp_path / "ds", [3000, 1, 70_000])
    extra = tmp_path / "extra.bin"
    extra.write_bytes(b"late\nrecords")
    dataset.add_file(extra)
    assert dataset.latest_version() == 2
    old = open_dataset(tmp_path / "ds").to_spark(spark.session, version=1, binary="true")
    assert b"\n".join(r.value for r in old.collect()) == b"".join(dataset.iter_bytes(1))
    current = open_dataset(tmp_path / "ds").to_spark(spark.session, binary="true")
    assert b"\n".join(r.value for r in current.collect()) == b"".join(dataset.iter_bytes())


def test_line_separator_and_whole_text_options(written: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """``lineSep`` splits at another separator; ``wholetext`` gives a row per chunk."""
    dataset = open_dataset(written / "ds")
    by_colon = dataset.to_spark(spark.session, lineSep=":")
    assert by_colon.count() > dataset.manifest().records
    whole = dataset.to_spark(spark.session, wholetext="true").collect()
    assert [r.value.encode() for r in whole] == [
        dataset.chunk_path(c.id).read_bytes() for c in dataset.manifest().chunks
    ]


def test_a_dataset_without_a_demarcator_reads_a_row_per_chunk(
    tmp_path: Path,
    spark,  # type: ignore[no-untyped-def]
) -> None:
    """Records written without a demarcator cannot be told apart: each chunk is one value."""
    dataset = Dataset(tmp_path / "ds")
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text(f"{name}\nsecond line\n")
        dataset.add_file(tmp_path / name)
    values = [r.value for r in dataset.to_spark(spark.session).collect()]
    assert values == ["a.txt\nsecond line\n", "b.txt\nsecond line\n"]


def test_a_path_without_a_dataset_is_one_error_and_any_session_of_flowcores_finds_the_format(
    tmp_path: Path,
    spark,  # type: ignore[no-untyped-def]
    published_dataset: Callable[..., Dataset],
) -> None:
    """A mistyped path is refused (not read as empty); another session of a context flowcore
    started finds the formats by Spark's static lookup, never registered (a user's own session,
    told how to register them: test_spark.py)."""
    with pytest.raises(DatasetError, match="is not a dataset"):
        open_dataset(tmp_path / "nowhere").to_spark(spark.session)
    dataset = published_dataset(tmp_path / "ds", [10, 20])
    other = spark.session.newSession()  # registrations would be per session; the lookup is not
    assert dataset.to_spark(other).collect() == dataset.to_spark(spark.session).collect()


def _search_count(repository: Path, event_type: str) -> int:
    shown = _flowcore(
        "provenance", "search", "--type", event_type, "--limit", "1000000",
        "--repository", str(repository),
    ).stdout.decode()  # fmt: skip
    found = re.search(r"(\d+) event\(s\)", shown)
    assert found is not None, shown
    return int(found.group(1))


def test_provenance_reads_as_the_events_provenance_search_shows(written: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """Counted by type, the DataFrame's events are those `flowcore provenance search` lists;
    an event's fields and attribute map are the repository's."""
    frame = spark.session.read.format("flowcore-provenance").load(str(written / "repo"))
    counts = {r.event_type: r["count"] for r in frame.groupBy("event_type").count().collect()}
    assert set(counts) >= {"RECEIVE", "FORK", "SEND", "DROP"}
    assert counts == {kind: _search_count(written / "repo", kind) for kind in counts}
    repos = RepositorySet.open(written / "repo")
    try:
        assert sum(counts.values()) == repos.provenance.count()
        row = frame.where("event_type = 'FORK'").orderBy("event_id").first()
        event = repos.provenance.get(row.event_id)
    finally:
        repos.close()
    assert row.flowfile_uuid == event.flowfile_uuid
    assert row.attributes == dict(event.attributes)
    assert row.filename == event.filename
    assert sorted(row.child_uuids) == sorted(event.child_uuids)
    assert int(row.event_time.timestamp() * 1000) == event.event_time


def test_provenance_partitions_are_ranges_of_event_ids(written: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """``numPartitions`` cuts the ids into that many ranges; together they hold every event
    once, as one partition does."""
    reader = spark.session.read.format("flowcore-provenance")
    whole = reader.load(str(written / "repo"))
    cut = reader.option("numPartitions", 3).load(str(written / "repo"))
    assert cut.rdd.getNumPartitions() == 3
    assert whole.rdd.getNumPartitions() == 1
    ids = [r.event_id for r in cut.select("event_id").collect()]
    assert ids == sorted(set(ids))
    assert ids == [r.event_id for r in whole.select("event_id").collect()]


def test_id_ranges_tile_the_ids() -> None:
    """Ranges follow each other without gap or overlap and cover the ids, whatever the count."""
    assert sources.id_ranges(5, 5, None) == []
    assert sources.id_ranges(0, 10, 3) == [(0, 4), (4, 8), (8, 10)]
    assert len(sources.id_ranges(0, 250_001, None)) == 3
    assert sources.id_ranges(7, 9, 5) == [(7, 8), (8, 9)]


def _read_records(data: bytes, separator: bytes, tmp_path: Path) -> list[bytes]:
    path = tmp_path / "chunk"
    path.write_bytes(data)
    return list(sources._chunk_records(sources._ChunkPartition(str(path), "c", 0, separator)))


@given(
    records=st.lists(st.binary(max_size=12), min_size=1, max_size=20),
    separator=st.sampled_from([b"\n", b"\r\n", b"--sep--"]),
)
def test_chunk_records_split_across_read_blocks(
    records: list[bytes], separator: bytes, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Records and separators straddling the blocks a chunk is read in come back whole."""
    kept = [r.replace(separator[:1], b"") for r in records]  # no separator inside a record
    tmp_path = tmp_path_factory.mktemp("chunk")
    original = sources._BLOCK
    sources._BLOCK = 3
    try:
        assert _read_records(separator.join(kept), separator, tmp_path) == kept
        assert _read_records(separator.join(kept), b"", tmp_path) == [separator.join(kept)]
    finally:
        sources._BLOCK = original


def _schema(frame: Any) -> dict[str, str]:
    return {f.name: f.dataType.simpleString() for f in frame.schema.fields}


def test_schemas_name_what_a_spark_user_reads(written: Path, spark) -> None:  # type: ignore[no-untyped-def]
    """Datasets: value (string, or binary) and where it sits; provenance: NiFi's fields, times
    as timestamps, attributes as maps."""
    dataset = open_dataset(written / "ds")
    assert _schema(dataset.to_spark(spark.session)) == {
        "value": "string",
        "chunk": "string",
        "chunk_index": "int",
        "record": "bigint",
    }
    assert _schema(dataset.to_spark(spark.session, binary="true"))["value"] == "binary"
    events = _schema(spark.session.read.format("flowcore-provenance").load(str(written / "repo")))
    assert events["event_time"] == "timestamp"
    assert events["attributes"] == "map<string,string>"
    assert events["parent_uuids"] == "array<string>"
    assert {"event_id", "event_type", "flowfile_uuid", "component_id", "details"} <= set(events)
    assert Counter(events.values())["map<string,string>"] == 3


def test_without_pyarrow_runs_register_and_reading_is_refused_in_one_line(
    spark,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run's registration needs no pyarrow; asking to read is refused with how to install it."""
    import importlib.util

    from flowcore.errors import ConfigurationError

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a)
    )
    sources.register(spark.session, check=False)
    with pytest.raises(ConfigurationError, match=r"needs pyarrow; install it"):
        sources.register(spark.session)
