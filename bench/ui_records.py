"""The content viewer's record view (Avro and Parquet as a table and JSON) against the raw bytes.

A direct run of GetFile -> a disabled UpdateAttribute leaves in a durable queue: a 15 MB Avro
file (the viewer reads its first 4 MB), a 26 MB Parquet file (read whole: its footer is at its
end) and a 2 KB Avro file (a small FlowFile), all distinct content. For each, the UI's API is
asked (in process, Starlette's TestClient) for ``/content?records=1`` (the record view: the first
1,000 records, their NiFi JSON and table cells) and, in the same rounds, interleaved, for
``/content`` (the first 4 MB the viewer fetches for text and hex: the baseline). Each figure is
the best of ``--repeat`` tries, with the range. Prints JSON, then a short table.

    .venv/bin/python bench/ui_records.py [--repeat N]
"""

from __future__ import annotations

import argparse
import datetime as dt
import io
import json
import random
import sys
import tempfile
import time
import warnings
from argparse import Namespace
from decimal import Decimal
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # before bench/'s repositories.py

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq

from flowcore.cli import main as flowcore_main
from flowcore.cli.ui import prepare

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

FLOW = """
from flowcore import Flow
from processors import GetFile, UpdateAttribute

flow = Flow("records-bench")
get = flow.add(GetFile(input_directory=%r, keep_source_file=True), name="get")
hold = flow.add(UpdateAttribute(), name="hold", disabled=True)
flow.connect(get, hold, durable=True)
"""
SCHEMA = {
    "type": "record",
    "name": "order",
    "fields": [
        {"name": "id", "type": "long"},
        {"name": "customer", "type": ["null", "string"]},
        {"name": "placed", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {
            "name": "total",
            "type": {"type": "bytes", "logicalType": "decimal", "precision": 12, "scale": 2},
        },
        {"name": "items", "type": {"type": "array", "items": "string"}},
        {"name": "note", "type": "string"},
    ],
}


def _orders(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    start = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)
    return [
        {
            "id": seed * 10_000_000 + n,
            "customer": None if n % 7 == 0 else f"customer-{rng.randrange(10**6)}",
            "placed": start + dt.timedelta(seconds=rng.randrange(10**7)),
            "total": Decimal(rng.randrange(10**8)).scaleb(-2),
            "items": [f"sku-{rng.randrange(10**5)}" for _ in range(rng.randrange(1, 5))],
            "note": "".join(rng.choice("abcdefghij klmnop") for _ in range(rng.randrange(10, 80))),
        }
        for n in range(count)
    ]


def _avro(count: int, seed: int) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, SCHEMA, _orders(count, seed), codec="null")
    return out.getvalue()


def _parquet(rows: int) -> bytes:
    rng = random.Random(3)
    table = pa.table(
        {
            "id": pa.array(range(rows), pa.int64()),
            "sensor": [f"sensor-{rng.randrange(10**6)}" for _ in range(rows)],
            "value": [rng.random() * 1000 for _ in range(rows)],
            "reading": [rng.randbytes(24).hex() for _ in range(rows)],
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out, compression="none")
    return out.getvalue()


def _summary(times: list[float]) -> dict[str, float]:
    return {"best_ms": round(min(times) * 1000, 1), "max_ms": round(max(times) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        folder = root / "in"
        folder.mkdir()
        files = {
            "big.avro": _avro(150_000, 1),
            "big.parquet": _parquet(300_000),
            "small.avro": _avro(12, 2),
        }
        for name, data in files.items():
            (folder / name).write_bytes(data)
        flow = root / "flow.py"
        flow.write_text(FLOW % str(folder))
        repository = root / "repository"
        assert flowcore_main(["run", str(flow), "--repository", str(repository)]) == 0
        ns = Namespace(flow=str(flow), repository=str(repository), host="127.0.0.1", port=0)
        app, _ = prepare(Namespace(**vars(ns), token=None))
        report: dict[str, dict] = {}
        with TestClient(app, base_url="http://127.0.0.1") as client:
            queue = "get%3Asuccess-%3Ehold"
            listing = client.get(f"/api/connections/{queue}/flowfiles").json()["flowfiles"]
            uuids = {f["filename"]: f["uuid"] for f in listing}
            times: dict[str, dict[str, list[float]]] = {
                n: {"records": [], "raw": []} for n in files
            }
            for _ in range(args.repeat):
                for name in files:
                    for mode, query in (("raw", ""), ("records", "?records=1")):
                        begun = time.perf_counter()
                        response = client.get(f"/api/flowfiles/{uuids[name]}/content{query}")
                        _ = response.content
                        times[name][mode].append(time.perf_counter() - begun)
                        assert response.status_code == 200
            for name, data in files.items():
                view = client.get(f"/api/flowfiles/{uuids[name]}/content?records=1").json()
                report[name] = {
                    "bytes": len(data),
                    "records_shown": len(view["rows"]),
                    "message": view["message"],
                    "records_view": _summary(times[name]["records"]),
                    "raw_4mb_baseline": _summary(times[name]["raw"]),
                }
    print(json.dumps({"repeat": args.repeat, "files": report}))
    print(f"{'content':<14}{'size':>12}{'shown':>7}{'records ms (best..max)':>26}{'raw ms':>18}")
    for name, row in report.items():
        rec, raw = row["records_view"], row["raw_4mb_baseline"]
        print(
            f"{name:<14}{row['bytes']:>12,}{row['records_shown']:>7}"
            f"{rec['best_ms']:>15} .. {rec['max_ms']:<8}{raw['best_ms']:>9} .. {raw['max_ms']}"
        )


if __name__ == "__main__":
    main()
