"""What content checksums cost: claim writes and reads with and without them, beside raw I/O.

Every claim file gets a CRC32C per 64 KiB block, written as a footer when the file is retired,
and reads verify the blocks they touch (repositories/_claim_checksums.py). Measured in one run,
alternating the variants each round, best of N with the range (min-max) over the rounds:

* ``write``: the same bytes (1 GiB; 128 MiB with ``--quick``) as 1 KiB, 64 KiB and 16 MiB
  contents through the file content repository (default 1 MB claim files, and 64 KiB contents
  in 16 MB claim files too; no fsync: NiFi's default), with checksums and with the checksum
  step stubbed out; baselines: a plain Python
  ``open(..., 'wb').write`` loop of the same sizes into one file, ``os.write`` of 1 MiB chunks
  (dd-like), and ``dd if=/dev/zero bs=1M``. ``64k_durable`` times the same 64 KiB writes until
  a sync has put them on disk, for the repository and the raw loop alike. Target: content
  writes with checksums >= 70% of the raw write loop of the same sizes. Each write is timed
  by the wall clock and by the CPU seconds it used (MB per CPU second), since on a shared
  machine the wall time of creating files stretches with the neighbours' disk traffic.
* ``read``: every content read back once by a fresh repository (nothing verified yet), from
  checksummed claim files and from the same bytes in footer-less files (claims of an older
  flowcore, read unverified); baseline: ``read()`` of the claim files. The files are in the
  page cache, so this is the CPU cost of verifying.
* ``crc``: CRC32C (``crc32c``) against ``zlib.crc32`` on 64 KiB blocks, the choice made.

Run: ``.venv/bin/python bench/content.py`` (``--quick``, ``--rounds N``). Prints one JSON line
and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from crc32c import crc32c
from rich.console import Console
from rich.table import Table

import repositories._claim_writer as claim_writer
from flowcore.flowfile import ContentClaim, ResourceClaim
from repositories._claim_checksums import BlockSummer, read_footer
from repositories.content import SEALED_SUFFIX, FileContentRepository

MIB = 1 << 20
SIZES = {"1k": 1024, "64k": 64 * 1024, "16m": 16 * MIB}
#: Write scenarios: label -> (content size, claim file size, durable). Durable ones time the
#: writes until they are on disk (a sync ends the timed part, for the baseline too).
WRITES = {
    "1k": (1024, MIB, False),
    "64k": (64 * 1024, MIB, False),
    "64k_in_16m_claims": (64 * 1024, 16 * MIB, False),
    "16m": (16 * MIB, MIB, False),
    "64k_durable": (64 * 1024, MIB, True),
}


class _NoSums:
    """The checksum step stubbed out: what a claim write costs without it."""

    def update(self, data: bytes) -> None:
        pass

    def footer(self) -> bytes:
        return b""


class _Clock:
    """Wall seconds and CPU seconds (user + system, this process and its children) since made.

    CPU time is the fairer measure on a machine shared with other work: the wall time of
    creating files and of page-cache writes stretches with the neighbours' disk traffic.
    """

    def __init__(self) -> None:
        self._wall = time.perf_counter()
        self._cpu = _cpu_seconds()

    def stop(self) -> tuple[float, float]:
        return time.perf_counter() - self._wall, _cpu_seconds() - self._cpu


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _best(times: list[float], volume: int) -> dict[str, float]:
    rates = [volume / MIB / t for t in times]
    return {"best": max(rates), "min": min(rates), "max": max(rates)}


def _through_repository(
    directory: Path,
    volume: int,
    size: int,
    *,
    sums: bool,
    appendable: int = MIB,
    durable: bool = False,
) -> tuple[float, float]:
    """Seconds to write *volume* bytes as contents of *size* bytes; the claim files are removed.

    The section directories stay, as in a running repository (creating 1,024 of them would be
    timed otherwise).
    """
    chunk = os.urandom(min(size, 64 * 1024))
    pieces = size // len(chunk)
    repo = FileContentRepository(directory / "repo", max_appendable_size=appendable)
    claim_writer.BlockSummer = BlockSummer if sums else _NoSums  # type: ignore[misc,assignment]
    try:
        os.sync()  # no dirty pages of the previous round
        clock = _Clock()
        writer = repo.writer("bench")
        claims = []
        for _ in range(volume // size):
            stream = writer.open_stream()
            for _ in range(pieces):
                stream.write(chunk)
            claims.append(stream.close())
        writer.close()
        if durable:
            os.sync()
        elapsed = clock.stop()
    finally:
        claim_writer.BlockSummer = BlockSummer  # type: ignore[misc]
    for claim in claims:
        repo.remove(claim.resource_claim)
    return elapsed


def _raw_loop(
    directory: Path, volume: int, size: int, durable: bool = False
) -> tuple[float, float]:
    """Seconds for a plain Python write loop of the same sizes into one file."""
    chunk = os.urandom(min(size, 64 * 1024))
    path = directory / "raw"
    os.sync()
    clock = _Clock()
    with open(path, "wb") as out:
        for _ in range(volume // len(chunk)):
            out.write(chunk)
    if durable:
        os.sync()
    elapsed = clock.stop()
    path.unlink()
    return elapsed


def _dd_like(directory: Path, volume: int) -> tuple[float, float]:
    """Seconds for os.write of 1 MiB chunks (what dd does, from Python)."""
    chunk = os.urandom(MIB)
    path = directory / "dd-like"
    os.sync()
    clock = _Clock()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        for _ in range(volume // MIB):
            os.write(fd, chunk)
    finally:
        os.close(fd)
    elapsed = clock.stop()
    path.unlink()
    return elapsed


def _dd(directory: Path, volume: int) -> tuple[float, float] | None:
    """Wall and CPU seconds of ``dd if=/dev/zero bs=1M`` (None when dd is missing)."""
    if shutil.which("dd") is None:
        return None
    path = directory / "dd"
    os.sync()
    clock = _Clock()
    subprocess.run(  # its CPU is counted as a child's
        ["dd", "if=/dev/zero", f"of={path}", "bs=1M", f"count={volume // MIB}"],
        check=True,
        capture_output=True,
    )
    elapsed = clock.stop()
    path.unlink()
    return elapsed


def bench_writes(directory: Path, volume: int, rounds: int) -> dict[str, float]:
    """Content writes with and without checksums beside raw writes, alternated per round."""
    times: dict[str, list[float]] = {}

    def timed(key: str, run: Callable[[], tuple[float, float] | None]) -> None:
        measured = run()
        if measured is not None:
            times.setdefault(key, []).append(measured[0])
            times.setdefault(f"{key}_cpu", []).append(measured[1])

    for _ in range(rounds):
        for label, (size, claim, durable) in WRITES.items():
            for sums in (True, False):
                timed(
                    f"{label}_{'sums' if sums else 'nosums'}",
                    lambda s=size, c=claim, k=sums, d=durable: _through_repository(
                        directory, volume, s, sums=k, appendable=c, durable=d
                    ),
                )
            timed(f"{label}_raw", lambda s=size, d=durable: _raw_loop(directory, volume, s, d))
        timed("dd_like", lambda: _dd_like(directory, volume))
        timed("dd", lambda: _dd(directory, volume))
    results: dict[str, float] = {}
    for key, values in times.items():
        for stat, value in _best(values, volume).items():
            results[f"write_{key}_mb_per_s_{stat}"] = value
    return results


def _legacy_copies(repo: FileContentRepository, claims: list[ContentClaim]) -> list[ContentClaim]:
    """The same contents in footer-less files named as an older flowcore named them."""
    copies: dict[ResourceClaim, ResourceClaim] = {}
    for claim in claims:
        resource = claim.resource_claim
        if resource in copies:
            continue
        path = repo.path_of(resource)
        fd = os.open(path, os.O_RDONLY)
        try:
            footer = read_footer(fd, os.fstat(fd).st_size)
        finally:
            os.close(fd)
        assert footer is not None
        old = ResourceClaim(
            resource.container, resource.section, resource.id.removesuffix(SEALED_SUFFIX)
        )
        with open(path, "rb") as source, open(repo.path_of(old), "wb") as target:
            target.write(source.read(footer.data_length))
        copies[resource] = old
    return [ContentClaim(copies[c.resource_claim], c.offset, c.length) for c in claims]


def bench_reads(directory: Path, volume: int, rounds: int) -> dict[str, float]:
    """Each content read once by a fresh repository: verified, unverified, raw file reads."""
    results: dict[str, float] = {}
    for label, size in SIZES.items():
        root = directory / f"read-{label}"
        repo = FileContentRepository(root)
        chunk = os.urandom(size)
        writer = repo.writer("bench")
        claims = []
        for _ in range(volume // size):
            stream = writer.open_stream()
            stream.write(chunk)
            claims.append(stream.close())
        writer.close()
        legacy = _legacy_copies(repo, claims)
        files = sorted({repo.path_of(c.resource_claim) for c in claims})
        for path in files + sorted({repo.path_of(c.resource_claim) for c in legacy}):
            path.read_bytes()  # into the page cache
        times: dict[str, list[float]] = {"verified": [], "unverified": [], "raw": []}
        for _ in range(rounds):
            for key, wanted in (("verified", claims), ("unverified", legacy)):
                fresh = FileContentRepository(root)
                start = time.perf_counter()
                for claim in wanted:
                    fresh.read(claim)
                times[key].append(time.perf_counter() - start)
            start = time.perf_counter()
            for path in files:
                with open(path, "rb") as source:
                    source.read()
            times["raw"].append(time.perf_counter() - start)
        for key, values in times.items():
            for stat, value in _best(values, volume).items():
                results[f"read_{label}_{key}_mb_per_s_{stat}"] = value
        shutil.rmtree(root)
    return results


def bench_crc(rounds: int) -> dict[str, float]:
    """GB/s of CRC32C and zlib.crc32 over 64 MiB in 64 KiB blocks."""
    data = os.urandom(64 * MIB)
    view = memoryview(data)
    results = {}
    for name, function in (("crc32c", crc32c), ("zlib_crc32", zlib.crc32)):
        best = 0.0
        for _ in range(rounds):
            start = time.perf_counter()
            for offset in range(0, len(data), 64 * 1024):
                function(view[offset : offset + 64 * 1024])
            best = max(best, len(data) / (time.perf_counter() - start) / 1e9)
        results[f"crc_{name}_gb_per_s"] = best
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="128 MiB instead of 1 GiB")
    parser.add_argument("--rounds", type=int, default=5, help="rounds per variant (best of N)")
    args = parser.parse_args()
    volume = (128 if args.quick else 1024) * MIB
    with tempfile.TemporaryDirectory(prefix="flowcore-bench-content-", dir=ROOT) as tmp:
        directory = Path(tmp)
        results = bench_crc(args.rounds)
        results |= bench_writes(directory, volume, args.rounds)
        results |= bench_reads(directory, volume, args.rounds)
    print(json.dumps({k: round(v, 2) for k, v in results.items()}))

    table = Table(title=f"Content checksums, {volume // MIB} MiB, best of {args.rounds} (range)")
    for column in ("measure", "MB/s", "range", "vs baseline"):
        table.add_column(column, justify="left" if column == "measure" else "right")

    def row(label: str, key: str, base: str | None = None) -> None:
        best = results.get(f"{key}_mb_per_s_best")
        if best is None:
            return
        spread = f"{results[f'{key}_mb_per_s_min']:,.0f}-{results[f'{key}_mb_per_s_max']:,.0f}"
        ratio = ""
        if base is not None and f"{base}_mb_per_s_best" in results:
            ratio = f"{best / results[f'{base}_mb_per_s_best']:.0%}"
        table.add_row(label, f"{best:,.0f}", spread, ratio)

    for label in WRITES:
        for clock, suffix in (("wall", ""), ("CPU", "_cpu")):
            sums, nosums = f"write_{label}_sums{suffix}", f"write_{label}_nosums{suffix}"
            raw = f"write_{label}_raw{suffix}"
            row(f"write {label} ({clock}), checksummed / raw loop", sums, raw)
            row(f"write {label} ({clock}), no checksums / raw loop", nosums, raw)
            row(f"write {label} ({clock}), checksummed / no checksums", sums, nosums)
            row(f"write {label} ({clock}), raw loop of the same sizes", raw)
    row("write os.write 1 MiB chunks (dd-like), wall", "write_dd_like")
    row("write dd if=/dev/zero bs=1M, wall", "write_dd")
    for label in SIZES:
        row(
            f"read {label} contents, verified / unverified",
            f"read_{label}_verified",
            f"read_{label}_unverified",
        )
        row(f"read {label} contents, unverified (older claims)", f"read_{label}_unverified")
        row("read the claim files raw", f"read_{label}_raw")
    table.add_row(
        "CRC32C GB/s (zlib.crc32)",
        f"{results['crc_crc32c_gb_per_s']:.1f}",
        "",
        f"({results['crc_zlib_crc32_gb_per_s']:.1f})",
    )
    Console().print(table)


if __name__ == "__main__":
    main()
