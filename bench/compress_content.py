"""CompressContent (gzip) on many small distinct FlowFiles, beside a plain zlib loop, same run.

Three measurements over the same COUNT distinct access-log lines (10 files):

* ``zlib_loop``: a plain Python loop gzipping each line with ``zlib.compressobj(1, DEFLATED,
  31)`` (what CompressContent does per FlowFile, without a FlowFile): the floor.
* ``split_only``: GetFile -> SplitText (1 line), splits auto-terminated, in the engine (direct
  runner): the cost of making and dropping the FlowFiles.
* ``split_compress``: the same with CompressContent (gzip, level 1) after SplitText.

CompressContent's share is ``split_compress`` less ``split_only``. CompressContent has no batch
form: each FlowFile's content is read, compressed and written as a claim of its own, which a
columnar batch cannot do without a Python call per FlowFile anyway.

Run: ``.venv/bin/python bench/compress_content.py`` (``--count N``; default 1,000,000). Prints
one JSON line and a table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # ahead of bench/, where a script would shadow the packages

FILES = 10


def lines(count: int) -> list[bytes]:
    """COUNT distinct access-log lines."""
    return [
        f"10.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255} - - [23/Nov/2026:{n // 3600 % 24:02d}:"
        f'{n // 60 % 60:02d}:{n % 60:02d} +0000] "GET /api/orders?req={n} HTTP/1.1" 200 '
        f"{100 + n * 7919 % 9000}\n".encode()
        for n in range(count)
    ]


def zlib_loop(data: list[bytes]) -> float:
    started = time.perf_counter()
    total = 0
    for line in data:
        compressor = zlib.compressobj(1, zlib.DEFLATED, 31)
        total += len(compressor.compress(line) + compressor.flush())
    assert total > 0
    return time.perf_counter() - started


def engine(source: Path, work: Path, *, compress: bool) -> tuple[float, int]:
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import CompressContent, GetFile, SplitText

    flow = Flow("compress-bench")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["original", "failure"])
    if compress:
        gzip = flow.add(CompressContent(compression_format="gzip"), name="gzip")
        flow.connect(split, gzip, "splits")
        flow.auto_terminate(gzip, ["success", "failure"])
    else:
        flow.auto_terminate(split, "splits")
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=work, settings=Settings(sync=False))
    elapsed = time.perf_counter() - started
    done = result.count("gzip", "success") if compress else result.count("split", "splits")
    return elapsed, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    args = parser.parse_args()
    data = lines(args.count)
    with tempfile.TemporaryDirectory(prefix="compress-bench-") as tmp:
        source = Path(tmp) / "in"
        source.mkdir()
        per_file = -(-args.count // FILES)
        for number in range(FILES):
            chunk = data[number * per_file : (number + 1) * per_file]
            (source / f"access-{number:02d}.log").write_bytes(b"".join(chunk))
        loop = zlib_loop(data)
        split_s, split_n = engine(source, Path(tmp) / "r1", compress=False)
        both_s, both_n = engine(source, Path(tmp) / "r2", compress=True)
    assert split_n == both_n == args.count, (split_n, both_n)
    share = both_s - split_s
    figures = {
        "count": args.count,
        "zlib_loop_s": round(loop, 2),
        "zlib_loop_per_s": round(args.count / loop),
        "split_only_s": round(split_s, 2),
        "split_compress_s": round(both_s, 2),
        "compress_share_s": round(share, 2),
        "compress_per_s": round(args.count / share) if share > 0 else None,
    }
    print(json.dumps(figures))
    print(f"{'measurement':<34}{'seconds':>10}{'FlowFiles/s':>14}")
    print(f"{'zlib loop (floor)':<34}{loop:>10.2f}{args.count / loop:>14,.0f}")
    print(f"{'GetFile -> SplitText':<34}{split_s:>10.2f}{args.count / split_s:>14,.0f}")
    print(f"{'... -> CompressContent (gzip)':<34}{both_s:>10.2f}{args.count / both_s:>14,.0f}")
    if share > 0:
        print(f"{'CompressContent alone':<34}{share:>10.2f}{args.count / share:>14,.0f}")


if __name__ == "__main__":
    main()
