"""The CSV reader's check after closing quotes: its cost on the Arrow path and the Python path.

Commons CSV refuses a character after a closing quote (``"a"x``); flowcore's Arrow path checks
the raw bytes with numpy before Arrow parses them, the Python path reads with the ``csv``
module's strict mode (issue csvq45). This times ``read_csv`` on distinct records (an id, a
name, an e-mail, a timestamp, an amount, a city) in one big file and in 100 small ones, written
two ways: quoted as needed (no quote at all: the check is one byte search) and every text value
quoted, a tenth of the names with a doubled quote and a comma inside (the numpy check's worst
case). Each read runs in a fresh worker process, with and without the check, interleaved
round by round (the machine's noise hits both alike); the table gives the process's CPU
seconds (Arrow's reader thread included; on a shared machine wall time mostly measures the
neighbours), best and range.

Without the check means: ``--baseline DIR`` runs the workers on the flowcore checkout in DIR
(the code before the change); without it, the Arrow check is switched off in this checkout
(the Python path then cannot be compared: its strict mode is not switchable).

    .venv/bin/python bench/csv_quotes.py [--rows N] [--repeat N] [--baseline DIR] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CITIES = ["Berlin", "Lisbon", "Osaka", "Lagos", "Lima", "Quebec", "Pune", "Oslo", "Perth"]
FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Ken", "Radia", "Tim"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Thompson"]
HEADER = "id,name,email,created,amount,city\n"


def _lines(rows: int, quoted: bool) -> list[str]:
    """*rows* distinct CSV lines; *quoted*: every text value quoted, some with "" and a comma."""
    import numpy as np

    random = np.random.default_rng(45)
    first = random.integers(0, len(FIRST), rows)
    last = random.integers(0, len(LAST), rows)
    seconds = 1_700_000_000 + random.integers(0, 40_000_000, rows)
    cents = random.integers(0, 100_000, rows)
    city = random.integers(0, len(CITIES), rows)
    odd = random.random(rows) < 0.1
    out = []
    for i in range(rows):
        name = f"{FIRST[first[i]]} {LAST[last[i]]}-{i}"
        email = f"{FIRST[first[i]].lower()}{i}@example.com"
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(int(seconds[i])))
        if quoted:
            name = f'"{name}, ""Jr"""' if odd[i] else f'"{name}"'
            out.append(f'{i},{name},"{email}","{stamp}",{cents[i] / 100},"{CITIES[city[i]]}"\n')
        else:
            out.append(f"{i},{name},{email},{stamp},{cents[i] / 100},{CITIES[city[i]]}\n")
    return out


def _write(root: Path, rows: int) -> dict[str, list[Path]]:
    sets: dict[str, list[Path]] = {}
    for quoted in (False, True):
        lines = _lines(rows, quoted)
        kind = "all quoted" if quoted else "as needed"
        big = root / f"{kind}-one.csv"
        big.write_text(HEADER + "".join(lines))
        small = []
        step = -(-rows // 100)
        for index in range(100):
            path = root / f"{kind}-x100-{index:03d}.csv"
            path.write_text(HEADER + "".join(lines[index * step : (index + 1) * step]))
            small.append(path)
        sets[f"{kind} one"] = [big]
        sets[f"{kind} x100"] = small
    return sets


def _worker(paths: list[str], python_path: bool, no_check: bool) -> None:
    """Time reading *paths* (prints the seconds): Arrow's path, or the Python path forced."""
    from flowcore.records import _csv_arrow, csv_reader
    from flowcore.records.csv_reader import CsvReaderOptions, read_csv

    if no_check and hasattr(_csv_arrow, "QuoteWatch"):

        class _Off:
            def __init__(self, _dialect: object) -> None:
                pass

            def suspect(self, _data: bytes) -> bool:
                return False

            def finish(self) -> bool:
                return False

        _csv_arrow.QuoteWatch = _Off  # type: ignore[attr-defined,misc]
    if python_path:
        _csv_arrow.usable = lambda *_: False  # type: ignore[assignment]
    options = CsvReaderOptions(first_line_is_header=True)
    with open(paths[0], "rb") as stream:  # imports and first use out of the timing
        for _ in read_csv(stream, options):
            pass
    start, cpu = time.perf_counter(), time.process_time()
    rows = 0
    for path in paths:
        with open(path, "rb") as stream:
            for batch in read_csv(stream, options):
                rows += batch.num_rows
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    print(json.dumps({"seconds": wall, "cpu_seconds": cpu, "rows": rows}))
    del csv_reader


def _run(tree: str, paths: list[Path], python_path: bool, no_check: bool) -> float:
    """The worker's CPU seconds (all its threads: a shared machine's waits do not count)."""
    env = {**os.environ, "PYTHONPATH": tree}
    command = [sys.executable, __file__, "--worker", *map(str, paths)]
    command += ["--python-path"] * python_path + ["--no-check"] * no_check
    out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
    return float(json.loads(out.strip().splitlines()[-1])["cpu_seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3, help="rounds, interleaved")
    parser.add_argument("--baseline", help="a flowcore checkout without the check")
    parser.add_argument("--json", help="write the results here too")
    parser.add_argument("--worker", nargs="*", help=argparse.SUPPRESS)
    parser.add_argument("--python-path", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-check", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.worker, args.python_path, args.no_check)
        return
    here = str(Path(__file__).resolve().parents[1])
    root = Path(tempfile.mkdtemp(prefix="bench-csv-quotes-"))
    paths = [("arrow", False)] + ([("python", True)] if args.baseline else [])
    times: dict[tuple[str, str, str], list[float]] = {}
    try:
        sets = _write(root, args.rows)
        for _ in range(args.repeat):
            for name, files in sets.items():
                for path_name, python_path in paths:
                    for label in ("without", "with"):
                        tree = args.baseline if label == "without" and args.baseline else here
                        off = label == "without" and not args.baseline
                        seconds = _run(tree, files, python_path, off)
                        times.setdefault((name, path_name, label), []).append(seconds)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    results = {
        " ".join(key): {"best": min(v), "slowest": max(v), "runs": v} for key, v in times.items()
    }
    print(f"{'content':<20} {'path':<7} {'CPU without check':>22} {'with check':>22}  change")
    for name in sets:
        for path_name, _ in paths:
            old, new = (times[(name, path_name, label)] for label in ("without", "with"))
            print(
                f"{name:<20} {path_name:<7} {min(old):>8.3f} s ({min(old):.2f}-{max(old):.2f})"
                f" {min(new):>8.3f} s ({min(new):.2f}-{max(new):.2f})"
                f"  {100 * (min(new) / min(old) - 1):+.1f}%"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
