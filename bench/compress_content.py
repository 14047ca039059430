"""CompressContent (gzip) on many small distinct FlowFiles: batch form and one by one, same run.

Measurements over COUNT distinct access-log lines (10 files), interleaved ``--repeat`` times:

* ``zlib_loop``: a plain Python loop gzipping each line with ``zlib.compressobj(1, DEFLATED,
  31)`` (what CompressContent does per FlowFile, without a FlowFile): the floor.
* ``split_only``: GetFile -> SplitText (1 line), splits auto-terminated, in the engine (direct
  runner): the cost of making and dropping the FlowFiles.
* ``split_compress``: the same with CompressContent (gzip, level 1) after SplitText, its batch
  form compressing each batch's contents and writing them with ``write_contents``.
* ``split_compress_one_by_one``: the same with the batch form declined, over
  ``--one-by-one-count`` lines (every FlowFile through ``on_trigger``: a session each).

``split_only`` is no floor: the engine drops an auto-terminated relationship's splits one
FlowFile at a time (bench/README.md).

Run: ``.venv/bin/python bench/compress_content.py`` (``--count N``; default 1,000,000). Prints
one JSON line and a table (best of the runs, and the slowest).
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

from flowcore import Flow
from flowcore.driver.controller import run_flow
from flowcore.settings import Settings
from processors import CompressContent, GetFile, SplitText

FILES = 10


class OneByOneCompressContent(CompressContent):
    """CompressContent with its batch form declined."""

    def transform_batch(self, context, batch):
        return None


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


def engine(source: Path, work: Path, *, compress: bool, one_by_one: bool = False) -> float:
    """Seconds of GetFile -> SplitText (-> CompressContent) over the files in *source*."""
    flow = Flow("compress-bench")
    get = flow.add(GetFile(input_directory=str(source), keep_source_file=True), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    flow.connect(get, split)
    flow.auto_terminate(split, ["original", "failure"])
    if compress:
        kind = OneByOneCompressContent if one_by_one else CompressContent
        gzip = flow.add(kind(compression_format="gzip"), name="gzip")
        flow.connect(split, gzip, "splits")
        flow.auto_terminate(gzip, ["success", "failure"])
    else:
        flow.auto_terminate(split, "splits")
    started = time.perf_counter()
    result = run_flow(flow, "direct", repository=work, settings=Settings(sync=False))
    elapsed = time.perf_counter() - started
    done = result.count("gzip", "success") if compress else result.count("split", "splits")
    lines_in = sum(p.read_bytes().count(b"\n") for p in source.iterdir())
    assert done == lines_in, (done, lines_in)
    return elapsed


def _inputs(root: Path, data: list[bytes]) -> Path:
    root.mkdir()
    per_file = -(-len(data) // FILES)
    for number in range(FILES):
        chunk = data[number * per_file : (number + 1) * per_file]
        (root / f"access-{number:02d}.log").write_bytes(b"".join(chunk))
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=1_000_000)
    parser.add_argument("--one-by-one-count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--no-split-only", action="store_true", help="skip split_only (slow: drops one by one)"
    )
    args = parser.parse_args()
    data = lines(args.count)
    times: dict[str, list[float]] = {
        "zlib_loop": [],
        "split_only": [],
        "split_compress": [],
        "split_compress_one_by_one": [],
    }
    with tempfile.TemporaryDirectory(prefix="compress-bench-") as tmp:
        source = _inputs(Path(tmp) / "in", data)
        few = _inputs(Path(tmp) / "few", data[: args.one_by_one_count])
        for attempt in range(args.repeat):  # interleaved: the machine's noise hits each alike
            work = Path(tmp) / f"r{attempt}"
            times["zlib_loop"].append(zlib_loop(data))
            if not args.no_split_only:
                times["split_only"].append(engine(source, work / "1", compress=False))
            times["split_compress"].append(engine(source, work / "2", compress=True))
            times["split_compress_one_by_one"].append(
                engine(few, work / "3", compress=True, one_by_one=True)
            )
    times = {name: t for name, t in times.items() if t}
    counts = dict.fromkeys(times, args.count)
    counts["split_compress_one_by_one"] = args.one_by_one_count
    figures = {
        "count": args.count,
        "one_by_one_count": args.one_by_one_count,
        **{f"{name}_s": [round(min(t), 2), round(max(t), 2)] for name, t in times.items()},
        **{f"{name}_per_s": round(counts[name] / min(t)) for name, t in times.items()},
    }
    print(json.dumps(figures))
    print(f"{'measurement':<40}{'FlowFiles':>10}{'best s':>9}{'worst s':>9}{'FlowFiles/s':>13}")
    labels = {
        "zlib_loop": "zlib loop (floor)",
        "split_only": "GetFile -> SplitText",
        "split_compress": "... -> CompressContent (batch form)",
        "split_compress_one_by_one": "... -> CompressContent (one by one)",
    }
    for name, label in labels.items():
        if name not in times:
            continue
        t, n = times[name], counts[name]
        print(f"{label:<40}{n:>10}{min(t):>9.2f}{max(t):>9.2f}{n / min(t):>13,.0f}")


if __name__ == "__main__":
    main()
