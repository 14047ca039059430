"""Large and small files, each figure beside a baseline measured in the same run.

Scenarios (each in a child process, so every Spark run starts a fresh JVM; Spark ``local[2]``):

* ``split``: one generated log of SIZE through FileSplitter (64 MB blocks) -> SplitText
  (10,000 lines) -> PutDataset (relaxed auto-merge, 256 MB chunks). Baselines doing the same
  byte work (every line read, everything written to fsynced output files): a hand-written
  ``sc.textFile`` job (lines through Python, one file per partition) and a raw block-reading
  job (the same line-aligned 64 MB blocks read and written as bytes).
* ``growth``: half of SIZE split and merged zero-copy: FileSplitter -> SplitText (10,000
  lines) -> MergeContent (Zero Copy, 128 MB bins) -> PutFile. The content repository's growth
  (its peak size during the run, sampled) against the input (target: at most 1%), beside the
  same flow copying (Copy Into Repository, Zero Copy off).
* ``modes``: a log of SIZE/8 cut into 1 MB blocks, 2 per micro-batch, -> PutDataset (64 MB
  desired chunks, small under 50%) with each auto-merge mode: chunk count, sizes, merge jobs,
  high-water mark.

Run: ``.venv/bin/python bench/files.py`` (``--quick`` for 256 MB). Prints one JSON line and a
table.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.engine import generate_logs, peak_rss_mb, print_figures, run_child, warm_up

MB = 1_000_000
BLOCK = 64 * 1024 * 1024


def one_log(directory: Path, total: int) -> Path:
    """A single log file of about *total* bytes (the engine bench's lines, concatenated)."""
    pieces = directory / "pieces"
    generate_logs(pieces, total)
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / "in" / "big.log"
    target.parent.mkdir()
    with open(target, "wb") as out:
        for path in sorted(pieces.iterdir()):
            with open(path, "rb") as source:
                shutil.copyfileobj(source, out, 1 << 22)
    shutil.rmtree(pieces)
    return target


def _spark(master: str):  # type: ignore[no-untyped-def]
    from flowcore.runners.spark import SparkRunner

    runner = SparkRunner(master=master)
    warm_up(runner.context)
    return runner


def _size_of(directory: Path) -> int:
    total = 0
    for path in directory.rglob("*"):
        with contextlib.suppress(FileNotFoundError):  # the repository removes files as we look
            total += path.stat().st_size if path.is_file() else 0
    return total


class PeakSize:
    """The largest size a directory reaches while the ``with`` body runs (sampled every 0.2 s):
    the content repository's growth is its peak, since at the end everything was dropped."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.peak = 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._done.wait(0.2):
            self.peak = max(self.peak, _size_of(self.directory))

    def __enter__(self) -> PeakSize:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        self._thread.join()
        self.peak = max(self.peak, _size_of(self.directory))


# --- children ---------------------------------------------------------------------------------


def child_split(args: argparse.Namespace) -> dict[str, float]:
    from flowcore import Flow
    from flowcore.datasets import Dataset
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import FileSplitter, PutDataset, SplitText

    data = Path(args.workdir)
    flow = Flow("split")
    split = flow.add(FileSplitter(input_directory=str(data / "in"), blocks_threshold=64), name="s")
    lines = flow.add(SplitText(line_split_count=10_000, remove_trailing_newlines=False), name="l")
    put = flow.add(
        PutDataset(
            directory=str(data / "ds"),
            auto_merge={"mode": "relaxed", "desired_chunk_size": "256 MB"},
        ),
        name="put",
    )
    flow.connect(split, lines, "blocks")
    flow.connect(lines, put, "splits")
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(lines, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    runner = _spark(args.master)
    started = time.perf_counter()
    with PeakSize(data / "repo" / "content") as content:
        result = run_flow(
            flow, runner, repository=data / "repo", settings=Settings(parallelism=2, sync=False)
        )
    elapsed = time.perf_counter() - started
    manifest = Dataset(data / "ds").manifest()
    return {
        "seconds": elapsed,
        "output_bytes": manifest.size,
        "chunks": len(manifest.chunks),
        "splits": result.count("l", "splits"),
        "content_repo_peak_bytes": content.peak,
        "driver_rss_mb": peak_rss_mb(),
    }


def _write_lines(index: int, lines, out_dir: str) -> list[int]:  # type: ignore[no-untyped-def]
    path = os.path.join(out_dir, f"part-{index:05d}")
    size = 0
    with open(path, "wb") as out:
        for line in lines:
            data = line.encode() + b"\n"
            out.write(data)
            size += len(data)
        out.flush()
        os.fsync(out.fileno())
    return [size]


def _baseline(args: argparse.Namespace, output: str):  # type: ignore[no-untyped-def]
    """A hand-written baseline's SparkContext (workers up), the input log, a fresh output dir."""
    from flowcore.runners.spark import spark_session

    data = Path(args.workdir)
    sc = spark_session(args.master).sparkContext
    warm_up(sc)
    out = data / output
    out.mkdir()
    return sc, str(data / "in" / "big.log"), out


def child_textfile(args: argparse.Namespace) -> dict[str, float]:
    sc, source, out = _baseline(args, "textfile-out")
    started = time.perf_counter()
    rdd = sc.textFile(source, minPartitions=max(2, os.path.getsize(source) // BLOCK))
    sizes = rdd.mapPartitionsWithIndex(lambda i, it: _write_lines(i, it, str(out))).collect()
    return {"seconds": time.perf_counter() - started, "output_bytes": sum(sizes)}


def _copy_block(block: tuple[int, int, int], source: str, out_dir: str) -> int:
    from processors._blocks import RecordReader, aligned_range

    index, offset, length = block
    fd = os.open(source, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        start, end = aligned_range(fd, offset, length, size, reader=RecordReader.LINES)
        with open(os.path.join(out_dir, f"block-{index:05d}"), "wb") as out:
            at = start
            while at < end:
                chunk = os.pread(fd, min(1 << 22, end - at), at)
                out.write(chunk)
                at += len(chunk)
            out.flush()
            os.fsync(out.fileno())
    finally:
        os.close(fd)
    return end - start


def child_blocks(args: argparse.Namespace) -> dict[str, float]:
    from processors._blocks import nominal_blocks

    sc, source, out = _baseline(args, "blocks-out")
    started = time.perf_counter()
    blocks = [(i, o, n) for i, (o, n) in enumerate(nominal_blocks(os.path.getsize(source), BLOCK))]
    sizes = sc.parallelize(blocks, len(blocks)).map(lambda b: _copy_block(b, source, str(out)))
    total = sum(sizes.collect())
    return {"seconds": time.perf_counter() - started, "output_bytes": total}


def child_growth(args: argparse.Namespace) -> dict[str, float]:
    from flowcore import Flow
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import FileSplitter, MergeContent, PutFile, SplitText, UpdateAttribute

    data = Path(args.workdir)
    kind = "copy" if args.copy else "zero-copy"
    repo, out = data / f"repo-{kind}", data / f"out-{kind}"
    flow = Flow("growth")
    split = flow.add(
        FileSplitter(
            input_directory=str(data / "in"), blocks_threshold=64, copy_into_repository=args.copy
        ),
        name="s",
    )
    lines = flow.add(SplitText(line_split_count=10_000, remove_trailing_newlines=False), name="l")
    merge = flow.add(
        MergeContent(
            zero_copy=not args.copy,
            minimum_group_size="128 MB",
            maximum_group_size="128 MB",
            maximum_number_of_entries=100_000,
        ),
        name="m",
    )
    # Every bin is named after the one input log (segment.original.filename, as in NiFi):
    # give each its own name, or PutFile's `fail` conflict strategy fails all but the first.
    rename = flow.add(UpdateAttribute(filename="${filename}.${uuid}"), name="n")
    put = flow.add(PutFile(directory=str(out)), name="put")
    flow.connect(split, lines, "blocks")
    flow.connect(lines, merge, "splits")
    flow.connect(merge, rename, "merged")
    flow.connect(rename, put)
    flow.auto_terminate(split, ["files", "failure"])
    flow.auto_terminate(lines, ["original", "failure"])
    flow.auto_terminate(merge, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    runner = _spark(args.master)
    started = time.perf_counter()
    with PeakSize(repo / "content") as content:
        result = run_flow(
            flow, runner, repository=repo, settings=Settings(parallelism=2, sync=False)
        )
    elapsed = time.perf_counter() - started
    failed = sum(result.transfers[n].get("failure", (0, 0))[0] for n in ("s", "l", "m", "put"))
    assert failed == 0, f"{failed} FlowFiles went to failure"
    figures = {
        "seconds": elapsed,
        "input_bytes": _size_of(data / "in"),
        "output_bytes": _size_of(out),
        "content_repo_peak_bytes": content.peak,
        "content_repo_end_bytes": _size_of(repo / "content"),
    }
    shutil.rmtree(out)
    shutil.rmtree(repo)
    return figures


def child_modes(args: argparse.Namespace) -> dict[str, float]:
    from flowcore import Flow
    from flowcore.datasets import Dataset
    from flowcore.driver.controller import run_flow
    from flowcore.settings import Settings
    from processors import FileSplitter, PutDataset

    data = Path(args.workdir)
    runner = _spark(args.master)
    figures: dict[str, float] = {}
    for mode in ("disabled", "relaxed", "economy"):
        flow = Flow(f"modes-{mode}")
        split = flow.add(
            FileSplitter(input_directory=str(data / "in"), block_size="1 MB", blocks_threshold=2),
            name="s",
        )
        section = {"mode": mode, "desired_chunk_size": "64 MB", "chunk_size_threshold": 50}
        put = flow.add(PutDataset(directory=str(data / f"ds-{mode}"), auto_merge=section), name="p")
        flow.connect(split, put, "blocks")
        flow.auto_terminate(split, ["files", "failure"])
        flow.auto_terminate(put, ["success", "failure"])
        started = time.perf_counter()
        result = run_flow(
            flow,
            runner,
            repository=data / f"repo-{mode}",
            settings=Settings(parallelism=2, sync=False),
        )
        elapsed = time.perf_counter() - started
        sizes = [c.size for c in Dataset(data / f"ds-{mode}").manifest().chunks]
        report = result.sinks["p"]
        figures.update(
            {
                f"{mode}_seconds": elapsed,
                f"{mode}_chunks": len(sizes),
                f"{mode}_median_chunk_mb": statistics.median(sizes) / MB,
                f"{mode}_min_chunk_mb": min(sizes) / MB,
                f"{mode}_merge_jobs": float(report["merge.jobs"]),
                f"{mode}_produced": float(report["produced"]),
                f"{mode}_high_water": float(report["intermediate.high_water"]),
            }
        )
    return figures


CHILDREN = {
    "split": child_split,
    "textfile": child_textfile,
    "blocks": child_blocks,
    "growth": child_growth,
    "modes": child_modes,
}


def child(scenario: str, workdir: Path, **options: object) -> dict[str, float]:
    return run_child(__file__, scenario, workdir, **options)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="256 MB instead of 2 GB")
    parser.add_argument("--size-mb", type=int, default=2000)
    parser.add_argument("--scenario", action="append", choices=("split", "growth", "modes"))
    parser.add_argument("--child", choices=tuple(CHILDREN))
    parser.add_argument("--workdir")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--copy", action="store_true", help="growth: copy instead of zero-copy")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args)))
        return
    size = (256 if args.quick else args.size_mb) * MB
    scenarios = args.scenario or ["split", "growth", "modes"]
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory(
        prefix="flowcore-files-", dir=os.environ.get("BENCH_DIR")
    ) as tmp:
        root = Path(tmp)
        if "split" in scenarios:
            one_log(root / "split", size)
            flow = child("split", root / "split")
            text = child("textfile", root / "split")
            raw = child("blocks", root / "split")
            assert flow["output_bytes"] == raw["output_bytes"], "the flow lost or added bytes"
            results.update(
                split_s=flow["seconds"],
                split_mb_s=size / MB / flow["seconds"],
                split_chunks=flow["chunks"],
                split_content_repo_peak_bytes=flow["content_repo_peak_bytes"],
                textfile_s=text["seconds"],
                blocks_s=raw["seconds"],
                split_vs_textfile=flow["seconds"] / text["seconds"],
                split_vs_blocks=flow["seconds"] / raw["seconds"],
                split_driver_rss_mb=flow["driver_rss_mb"],
            )
            shutil.rmtree(root / "split")
        if "growth" in scenarios:
            one_log(root / "growth", size // 2)
            zero = child("growth", root / "growth")
            copy = child("growth", root / "growth", copy=True)
            for got in (zero, copy):
                assert got["output_bytes"] == got["input_bytes"], "the merge lost or added bytes"
            results.update(
                growth_input_mb=zero["input_bytes"] / MB,
                growth_s=zero["seconds"],
                growth_peak_bytes=zero["content_repo_peak_bytes"],
                growth_percent=100 * zero["content_repo_peak_bytes"] / zero["input_bytes"],
                copy_s=copy["seconds"],
                copy_peak_bytes=copy["content_repo_peak_bytes"],
                copy_percent=100 * copy["content_repo_peak_bytes"] / copy["input_bytes"],
            )
            shutil.rmtree(root / "growth")
        if "modes" in scenarios:
            one_log(root / "modes", size // 8)
            results.update(child("modes", root / "modes"))
    print_figures(f"files ({size // MB} MB log)", results)


if __name__ == "__main__":
    main()
