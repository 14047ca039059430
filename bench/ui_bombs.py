"""The content viewer against value bombs: Avro and Parquet arrays of nulls, a few bytes each.

An Avro array of nulls costs no byte per item and a Parquet list of nulls a few bits, so a few
hundred bytes can declare millions of items that the byte bound (64 MiB decoded) lets through.
Each case runs ``read_records`` in a fresh process (its peak RSS is the case's alone) on this
tree and, with ``--before DIR``, on another checkout, interleaved round by round; a legitimate
Avro file (1,200 records, the viewer's first 1,000 shown) is the baseline of what the walk costs.
Bombs past ``--before-max`` items are not run on the other tree (10^7 takes it ~30 s and ~900 MB;
10^9 would take an hour and 80 GB). Prints JSON, then a table of best-of-N seconds and MB.

    .venv/bin/python bench/ui_bombs.py [--before DIR] [--repeat N] [--before-max N] [--case TEXT]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if Path(sys.path[0]).resolve() == ROOT / "bench":
    del sys.path[0]  # bench/repositories.py would hide the package: PYTHONPATH names the tree
CASES = {
    "avro nulls 10^6": ("avro", 10**6),
    "avro nulls 10^7": ("avro", 10**7),
    "avro nulls 10^9": ("avro", 10**9),
    "parquet nulls 10^7": ("parquet", 10**7),
    "avro 1,200 records": ("orders", 1_200),
}


def _long(value: int) -> bytes:
    value = (value << 1) ^ (value >> 63)
    out = bytearray()
    while value > 0x7F:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out) + bytes([value])


def _content(kind: str, items: int) -> bytes:
    import fastavro
    import pyarrow as pa
    import pyarrow.parquet as pq

    if kind == "parquet":
        nulls = pa.ListArray.from_arrays(pa.array([0, items], pa.int32()), pa.nulls(items))
        out = io.BytesIO()
        pq.write_table(pa.table({"a": nulls}), out, compression="zstd")
        return out.getvalue()
    if kind == "orders":
        schema = {
            "type": "record",
            "name": "order",
            "fields": [
                {"name": "id", "type": "long"},
                {"name": "customer", "type": ["null", "string"]},
                {"name": "items", "type": {"type": "array", "items": "string"}},
                {"name": "scores", "type": {"type": "map", "values": "double"}},
            ],
        }
        records = [
            {
                "id": n,
                "customer": None if n % 7 == 0 else f"customer-{n * 7919 % 100_003}",
                "items": [f"sku-{n * k % 10_007}" for k in range(n % 5 + 1)],
                "scores": {f"s{k}": n / (k + 1) for k in range(n % 4)},
            }
            for n in range(items)
        ]
        out = io.BytesIO()
        fastavro.writer(out, schema, records, codec="deflate")
        return out.getvalue()
    schema = {
        "type": "record",
        "name": "r",
        "fields": [{"name": "a", "type": {"type": "array", "items": "null"}}],
    }
    header = io.BytesIO()
    fastavro.writer(header, schema, [])
    datum = _long(items) + _long(0)
    sync = header.getvalue()[-16:]
    return header.getvalue() + _long(1) + _long(len(datum)) + datum + sync


def _once(path: str) -> None:
    """Read *path*'s records as the viewer does; print seconds, peak RSS MB and the message."""
    from flowcore.ui.reading import read_records

    data = Path(path).read_bytes()
    kind = "parquet" if data.startswith(b"PAR1") else "avro"
    begun = time.perf_counter()
    view = read_records(data, kind)
    seconds = time.perf_counter() - begun
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {"seconds": seconds, "peak_mb": peak, "rows": len(view.rows), "message": view.message}
        )
    )


def _run(tree: Path, path: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    command = [sys.executable, __file__, "--once", str(path)]
    done = subprocess.run(command, env=env, check=True, capture_output=True, text=True, cwd=tree)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout to run beside this one")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before-max", type=int, default=10**7)
    parser.add_argument("--case", default="", help="run only the cases whose name has this")
    parser.add_argument("--once", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once:
        _once(args.once)
        return
    trees = {"this": ROOT, **({"before": args.before.resolve()} if args.before else {})}
    cases = {name: case for name, case in CASES.items() if args.case in name}
    results: dict[str, dict[str, list[dict]]] = {name: {} for name in cases}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for name, (kind, items) in cases.items():
            files[name] = Path(tmp) / f"{len(files)}.bin"
            files[name].write_bytes(_content(kind, items))
        for _ in range(args.repeat):
            for name, (_, items) in cases.items():
                for tree_name, tree in trees.items():
                    if tree_name == "before" and items > args.before_max:
                        continue
                    results[name].setdefault(tree_name, []).append(_run(tree, files[name]))
        sizes = {name: files[name].stat().st_size for name in cases}
    report = {
        name: {
            "bytes": sizes[name],
            **{
                tree: {
                    "best_s": round(min(r["seconds"] for r in runs), 3),
                    "slowest_s": round(max(r["seconds"] for r in runs), 3),
                    "peak_mb": round(min(r["peak_mb"] for r in runs)),
                    "peak_mb_max": round(max(r["peak_mb"] for r in runs)),
                    "rows": runs[0]["rows"],
                    "message": runs[0]["message"],
                }
                for tree, runs in by_tree.items()
            },
        }
        for name, by_tree in results.items()
    }
    print(json.dumps(report))
    print(
        f"{'case':20} {'bytes':>7} {'tree':>7} {'best s':>8} {'slowest s':>9} {'peak MB':>12} rows"
    )
    for name, row in report.items():
        for tree in trees:
            if tree in row:
                r = row[tree]
                mb = f"{r['peak_mb']}-{r['peak_mb_max']}"
                print(
                    f"{name:20} {row['bytes']:7,} {tree:>7} {r['best_s']:8.3f} "
                    f"{r['slowest_s']:9.3f} {mb:>12} {r['rows']}"
                )


if __name__ == "__main__":
    main()
