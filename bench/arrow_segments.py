"""Issue 18's Arrow question for queue segments and the binning shuffle: Arrow IPC against the
format flowcore uses (array bytes in msgpack; pickle for Spark's shuffle).

A million FlowFiles as the distinct scenario's segments hold them after RouteOnAttribute
(10,000 a segment: ids, uuid numbers, offsets, sizes, lineage and queue positions, and the
columns ``fragment.index``, ``fragment.size``, ``text.line.count`` and ``group``) are encoded
and decoded three ways, interleaved, best of N:

- ``flowcore``: ``FlowFileBatch.to_wire`` packed with msgpack, unpacked and ``from_wire``
  (format-4 segments);
- ``pickle``: the batch pickled (protocol 5) and unpickled, as Spark's shuffle moves it;
- ``arrow``: the same arrays as one ``pyarrow.RecordBatch`` written to the IPC stream format and
  read back as numpy arrays (zero-copy where Arrow allows), the shared values in its metadata.

pyarrow is not a flowcore dependency: install it to run this (the script says so otherwise).
Run: ``.venv/bin/python bench/arrow_segments.py [--count 1000000] [--repeat 5]``.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from flowcore.flowfile import Attributes, ResourceClaim
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.flowfile_batch.columns import IntColumn
from repositories._wal_codec import pack, unpack

SEGMENT = 10_000


def _batches(count: int) -> list[FlowFileBatch]:
    """The distinct scenario's FlowFiles after routing, as segments of SEGMENT."""
    rng = np.random.default_rng(18)
    sizes = rng.integers(60, 120, count)
    offsets = np.concatenate(([0], np.cumsum(sizes + 1)[:-1]))
    batches = []
    for first in range(0, count, SEGMENT):
        rows = np.arange(first, min(first + SEGMENT, count))
        batches.append(
            FlowFileBatch(
                ids=rows + 1_000,
                uuid_key="6a3e09d2-5b1f-4c8e-9d7a-1f2e",
                uuid_numbers=rows,
                attributes=Attributes(
                    {"filename": "access-00.log", "path": "./", "fragment.count": str(count)}
                ),
                uuid_named=(),
                resource_claim=ResourceClaim("default", "7", "1795465928883-task-1.claim"),
                offsets=offsets[rows],
                sizes=sizes[rows],
                entry_date=1_795_465_928_883,
                lineage_start_date=1_795_465_928_000,
                lineage_start_indices=rows,
                queue_date=1_795_465_929_000,
                queue_date_indices=rows * 3,
                columns={
                    "fragment.index": IntColumn(rows + 1),
                    "fragment.size": IntColumn(sizes[rows]),
                    "text.line.count": IntColumn(np.ones(len(rows), dtype=np.int64)),
                    "group": IntColumn((rows + 1) % 8),
                },
            )
        )
    return batches


def _flowcore(batches: list[FlowFileBatch]) -> tuple[int, list[FlowFileBatch]]:
    data = [pack({"columns": b.to_wire()}) for b in batches]
    back = [FlowFileBatch.from_wire(unpack(d)["columns"]) for d in data]
    return sum(map(len, data)), back


def _pickle(batches: list[FlowFileBatch]) -> tuple[int, list[FlowFileBatch]]:
    data = [pickle.dumps(b, protocol=5) for b in batches]
    back = [pickle.loads(d) for d in data]
    return sum(map(len, data)), back


def _arrow(pa, batches: list[FlowFileBatch]) -> tuple[int, list[dict]]:  # type: ignore[no-untyped-def]
    data = []
    for b in batches:
        arrays = {
            "id": b.ids,
            "uuid": b.uuid_numbers,
            "offset": b.offsets,
            "size": b.sizes,
            "lineage": b.lineage_start_indices,
            "queue": b.queue_date_indices,
            **{name: column.numbers for name, column in b.columns.items()},  # type: ignore[union-attr]
        }
        shared = json.dumps({"key": b.uuid_key, "attributes": dict(b.attributes)})
        record = pa.RecordBatch.from_pydict(
            {k: pa.array(v) for k, v in arrays.items()}, metadata={"shared": shared}
        )
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, record.schema) as writer:
            writer.write_batch(record)
        data.append(sink.getvalue().to_pybytes())
    back = []
    for d in data:
        read = pa.ipc.open_stream(d).read_next_batch()
        back.append({n: read.column(n).to_numpy() for n in read.schema.names})
    return sum(map(len, data)), back


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    try:
        import pyarrow as pa
    except ImportError:
        print("pyarrow is not installed: `.venv/bin/pip install pyarrow` to run this comparison")
        return
    batches = _batches(args.count)
    ways = {"flowcore": _flowcore, "pickle": _pickle, "arrow": lambda b: _arrow(pa, b)}
    times: dict[str, list[float]] = {name: [] for name in ways}
    sizes: dict[str, int] = {}
    for _ in range(args.repeat):
        for name, way in ways.items():
            started = time.perf_counter()
            sizes[name], back = way(batches)
            times[name].append(time.perf_counter() - started)
            first = back[0]
            offsets = first["offset"] if isinstance(first, dict) else first.offsets
            assert np.array_equal(offsets, batches[0].offsets), name
    figures = {}
    for name in ways:
        figures[f"{name}_s"] = round(min(times[name]), 4)
        figures[f"{name}_slowest_s"] = round(max(times[name]), 4)
        figures[f"{name}_mb"] = round(sizes[name] / 1e6, 1)
        figures[f"{name}_flowfiles_per_s"] = round(args.count / min(times[name]))
    print(json.dumps(figures))
    print(f"{'way':<10}{'best s':>10}{'slowest s':>12}{'MB':>8}{'FlowFiles/s':>16}")
    for name in ways:
        print(
            f"{name:<10}{figures[f'{name}_s']:>10.4f}{figures[f'{name}_slowest_s']:>12.4f}"
            f"{figures[f'{name}_mb']:>8.1f}{figures[f'{name}_flowfiles_per_s']:>16,}"
        )


if __name__ == "__main__":
    main()
