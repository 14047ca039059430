"""Spark reads flowcore's datasets and provenance as DataFrames (PySpark's Python Data Source API).

::

    spark.read.format("flowcore-dataset").load("out/logs")                 # the current version
    spark.read.format("flowcore-dataset").option("version", 7).load(path)  # a retained version
    spark.read.format("flowcore-provenance").load(".flowcore")             # a repository's events

Sessions flowcore starts find both formats by PySpark's static lookup on their first read (see
:mod:`flowcore.runners.static_sources`), so a run registers nothing; :func:`register`
(``flowcore.register_spark_sources(spark)``) registers them on any other session. With
its sibling :mod:`flowcore.runners.spark`, the only modules importing pyspark; it needs pyarrow
(rows travel to Spark as Arrow batches).

**flowcore-dataset** reads one manifest version, chosen when the DataFrame is made (a later
publication does not change it), one partition per chunk in dataset order. A row is a record:
the bytes between two demarcators (PutDataset's Demarcator, which ``flowcore dataset cat``
writes between records and between chunks). Columns: ``value`` (string, UTF-8 with invalid bytes
replaced; binary with ``binary=true``), ``chunk`` (the chunk file's id), ``chunk_index`` (its
place in the version), ``record`` (the record's place in its chunk). Options: ``version``;
``lineSep``, another separator (Spark's text source option); ``wholetext=true``, a row per chunk,
which is also what a dataset written without a demarcator gives, its records not being
separable.

**flowcore-provenance** reads a repository's indexed events (what ``flowcore provenance search``
finds) with NiFi's fields, one row per event: times as timestamps, ``attributes`` (NiFi's
``getAttributes()``), ``previous_attributes`` and ``updated_attributes`` as
``map<string,string>``. Partitions are ranges of event ids, :data:`EVENTS_PER_PARTITION` each
unless ``numPartitions`` (Spark's JDBC option) says how many.

Readers run in Spark's Python workers, so the paths must be reachable from every executor, as a
run's repositories must.
"""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

from flowcore.datasets.model import Manifest
from flowcore.datasets.store import DATASET_FORMAT, RETAINED_VERSIONS, Dataset
from flowcore.errors import ConfigurationError, DatasetError
from flowcore.provenance_events import TEXT_FIELDS, ProvenanceEvent
from repositories.provenance_reader import (
    claim_texts,
    event_id_range,
    provenance_url,
    read_events,
)

__all__ = [
    "EVENTS_PER_PARTITION",
    "PROVENANCE_FORMAT",
    "PROVENANCE_SCHEMA",
    "DatasetSource",
    "ProvenanceSource",
    "id_ranges",
    "register",
    "require_pyarrow",
]

PROVENANCE_FORMAT = "flowcore-provenance"
EVENTS_PER_PARTITION = 100_000  # event ids per partition when numPartitions is not given
_BLOCK = 8 << 20  # bytes read from a chunk file at a time
_BATCH_ROWS = 10_000  # rows per Arrow batch handed to Spark
_BATCH_BYTES = 32 << 20  # ... or fewer, once their values hold this much


def register(spark: Any, *, check: bool = True) -> None:
    """Register the ``flowcore-dataset`` and ``flowcore-provenance`` formats on a SparkSession.

    Registration lasts for the session; repeating it is harmless (and cheap after the first,
    which has Spark build its SQL session state: about a second, which is why sessions flowcore
    starts rely on the static lookup instead).

    Raises:
        ConfigurationError: pyarrow is missing (with *check*).
    """
    if check:
        require_pyarrow()
    spark.dataSource.register(DatasetSource)
    spark.dataSource.register(ProvenanceSource)


def require_pyarrow() -> None:
    """Refuse to read without pyarrow, which carries the rows to Spark.

    Raises:
        ConfigurationError: pyarrow is not installed, with how to install it.
    """
    if importlib.util.find_spec("pyarrow") is None:
        msg = (
            "reading flowcore datasets and provenance from Spark needs pyarrow; install it "
            "(pip install 'pyarrow>=18')"
        )
        raise ConfigurationError(msg)


def _flag(options: Mapping[str, str], name: str) -> bool:
    return str(options.get(name, "false")).strip().lower() == "true"


def _whole_number(options: Mapping[str, str], name: str) -> int | None:
    text = options.get(name)
    if text is None:
        return None
    try:
        number = int(str(text).strip())
    except ValueError:
        number = -1
    if number < 0:
        msg = f"option {name!r} takes a whole number, got {text!r}"
        raise ConfigurationError(msg)
    return number


# --- datasets ----------------------------------------------------------------------------------


class _ChunkPartition(InputPartition):
    """One chunk of the version read: its file's path, place and the record separator."""

    def __init__(self, path: str, chunk_id: str, index: int, separator: bytes) -> None:
        super().__init__(index)
        self.path = path
        self.chunk_id = chunk_id
        self.index = index
        self.separator = separator


class DatasetSource(DataSource):
    """``spark.read.format("flowcore-dataset").load(path)``: a dataset's records."""

    @classmethod
    def name(cls) -> str:
        """The format's name."""
        return DATASET_FORMAT

    def schema(self) -> str:
        """``value`` (string or binary), ``chunk``, ``chunk_index``, ``record``."""
        kind = "binary" if _flag(self.options, "binary") else "string"
        return f"value {kind}, chunk string, chunk_index int, record long"

    def reader(self, schema: Any) -> DataSourceReader:
        """Reads the version chosen now, so every partition reads the same one."""
        del schema
        require_pyarrow()
        return _DatasetReader(self.options)


def _path(options: Mapping[str, str], what: str) -> str:
    path = options.get("path")
    if not path:
        msg = f"give the {what} to read: spark.read.format(...).load(PATH)"
        raise ConfigurationError(msg)
    return str(path)


def _separator(options: Mapping[str, str], manifest: Manifest) -> bytes:
    """What splits a chunk into records: none (a row per chunk), lineSep, or the demarcator."""
    if _flag(options, "wholetext"):
        return b""
    line_sep = options.get("lineSep")
    return str(line_sep).encode() if line_sep else manifest.demarcator


class _DatasetReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.binary = _flag(options, "binary")
        dataset = Dataset(_path(options, "dataset's directory"))
        dataset.require_exists()
        manifest = dataset.manifest(_whole_number(options, "version"))
        separator = _separator(options, manifest)
        self.chunks = [
            _ChunkPartition(str(dataset.chunk_path(c.id)), c.id, n, separator)
            for n, c in enumerate(manifest.chunks)
        ]

    def partitions(self) -> Sequence[InputPartition]:
        """One per chunk, in dataset order."""
        return self.chunks

    def read(self, partition: InputPartition | None) -> Iterator[Any]:
        """The chunk's records as Arrow batches (an empty version has no partition: None)."""
        if not isinstance(partition, _ChunkPartition):
            return
        values: list[bytes] = []
        size = first = 0
        for values_read in _chunk_records(partition):
            values.append(values_read)
            size += len(values_read)
            if len(values) >= _BATCH_ROWS or size >= _BATCH_BYTES:
                yield _record_batch(values, partition, first, binary=self.binary)
                first += len(values)
                values, size = [], 0
        if values:
            yield _record_batch(values, partition, first, binary=self.binary)


def _chunk_records(partition: _ChunkPartition) -> Iterator[bytes]:
    """The chunk file's records: the bytes between separators (all of it without one).

    The file is read in blocks; a record may span blocks, and a separator the boundary
    between two.
    """
    separator = partition.separator
    buffer = bytearray()
    try:
        stream = open(partition.path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        msg = (
            f"chunk {partition.chunk_id} is gone: its version is no longer retained (the last "
            f"{RETAINED_VERSIONS} are); read the dataset again for its current version"
        )
        raise DatasetError(msg) from None
    with stream:
        while data := stream.read(_BLOCK):
            start = max(0, len(buffer) - len(separator) + 1)
            buffer += data
            if not separator:
                continue
            end = 0
            while (found := buffer.find(separator, start)) >= 0:
                yield bytes(buffer[end:found])
                end = start = found + len(separator)
            del buffer[:end]
    yield bytes(buffer)


def _record_batch(
    values: list[bytes], partition: _ChunkPartition, first: int, *, binary: bool
) -> Any:
    import pyarrow as pa  # noqa: PLC0415 - on the workers, only when reading

    column = pa.array(values, type=pa.binary())
    if not binary:
        try:
            column = column.cast(pa.string())
        except pa.ArrowInvalid:  # not UTF-8: replace what cannot be decoded, as Spark would show
            column = pa.array([v.decode("utf-8", "replace") for v in values], type=pa.string())
    count = len(values)
    return pa.RecordBatch.from_arrays(
        [
            column,
            pa.array([partition.chunk_id] * count, type=pa.string()),
            pa.array([partition.index] * count, type=pa.int32()),
            pa.array(list(range(first, first + count)), type=pa.int64()),
        ],
        names=["value", "chunk", "chunk_index", "record"],
    )


# --- provenance --------------------------------------------------------------------------------

#: The provenance columns: NiFi's event fields, named as flowcore's ``ProvenanceEvent``.
PROVENANCE_SCHEMA = (
    "event_id long, event_type string, event_time timestamp, flowfile_uuid string, "
    "filename string, file_size long, previous_file_size long, event_duration long, "
    "entry_date timestamp, lineage_start_date timestamp, component_id string, "
    "component_type string, component_name string, relationship string, details string, "
    "transit_uri string, source_system_flowfile_identifier string, "
    "alternate_identifier_uri string, source_queue_identifier string, "
    "parent_uuids array<string>, child_uuids array<string>, "
    "attributes map<string,string>, previous_attributes map<string,string>, "
    "updated_attributes map<string,string>, content_claim string, previous_content_claim string"
)


class _IdRange(InputPartition):
    """Events whose row starts at an id in ``low..high - 1``."""

    def __init__(self, url: str, low: int, high: int) -> None:
        super().__init__(low)
        self.url = url
        self.low = low
        self.high = high


class ProvenanceSource(DataSource):
    """``spark.read.format("flowcore-provenance").load(repository)``: provenance events."""

    @classmethod
    def name(cls) -> str:
        """The format's name."""
        return PROVENANCE_FORMAT

    def schema(self) -> str:
        """NiFi's event fields (see :data:`PROVENANCE_SCHEMA`)."""
        return PROVENANCE_SCHEMA

    def reader(self, schema: Any) -> DataSourceReader:
        """Splits the ids stored now into ranges."""
        del schema
        require_pyarrow()
        return _ProvenanceReader(self.options)


def id_ranges(low: int, high: int, partitions: int | None) -> list[tuple[int, int]]:
    """``low..high - 1`` cut into ranges ``(low, high)``, contiguous and in order.

    Into *partitions* of them, or by default ranges of :data:`EVENTS_PER_PARTITION` ids.
    """
    if high <= low:
        return []
    count = partitions or math.ceil((high - low) / EVENTS_PER_PARTITION)
    step = math.ceil((high - low) / max(1, count))
    return [(start, min(high, start + step)) for start in range(low, high, step)]


class _ProvenanceReader(DataSourceReader):
    def __init__(self, options: Mapping[str, str]) -> None:
        self.url = provenance_url(_path(options, "repository directory"))
        low, high = event_id_range(self.url)
        self.ranges = id_ranges(low, high, _whole_number(options, "numPartitions"))

    def partitions(self) -> Sequence[InputPartition]:
        """Ranges of event ids, oldest first."""
        return [_IdRange(self.url, low, high) for low, high in self.ranges]

    def read(self, partition: InputPartition | None) -> Iterator[Any]:
        """The range's events as Arrow batches (no event: no partition, None)."""
        if not isinstance(partition, _IdRange):
            return
        events: list[ProvenanceEvent] = []
        for event in read_events(partition.url, partition.low, partition.high):
            events.append(event)
            if len(events) >= _BATCH_ROWS:
                yield _event_batch(events)
                events = []
        if events:
            yield _event_batch(events)


def _event_batch(events: list[ProvenanceEvent]) -> Any:
    import pyarrow as pa  # noqa: PLC0415 - on the workers, only when reading

    text, number = pa.string(), pa.int64()
    time = pa.timestamp("us", tz="UTC")
    pairs = pa.map_(pa.string(), pa.string())
    claims = [claim_texts(e) for e in events]

    def column(values: list[Any], kind: Any) -> Any:
        return pa.array(values, type=kind)

    def times(values: list[int]) -> Any:
        return column([v * 1000 for v in values], time)  # ms to Spark's microseconds

    columns = {
        "event_id": column([e.event_id for e in events], number),
        "event_type": column([e.event_type.value for e in events], text),
        "event_time": times([e.event_time for e in events]),
        "flowfile_uuid": column([e.flowfile_uuid for e in events], text),
        "filename": column([e.filename for e in events], text),
        "file_size": column([e.file_size for e in events], number),
        "previous_file_size": column([e.previous_file_size for e in events], number),
        "event_duration": column([e.event_duration for e in events], number),
        "entry_date": times([e.entry_date for e in events]),
        "lineage_start_date": times([e.lineage_start_date for e in events]),
        **{name: column([getattr(e, name) for e in events], text) for name in TEXT_FIELDS},
        "parent_uuids": column([list(e.parent_uuids) for e in events], pa.list_(text)),
        "child_uuids": column([list(e.child_uuids) for e in events], pa.list_(text)),
        "attributes": column([list(e.attributes.items()) for e in events], pairs),
        "previous_attributes": column([list(e.previous_attributes.items()) for e in events], pairs),
        "updated_attributes": column([list(e.updated_attributes.items()) for e in events], pairs),
        "content_claim": column([c[0] for c in claims], text),
        "previous_content_claim": column([c[1] for c in claims], text),
    }
    return pa.RecordBatch.from_arrays(list(columns.values()), names=list(columns))
