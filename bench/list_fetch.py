"""ListFile -> FetchFile over many small files, beside a plain Python loop in the same run.

20,000 files of 1 KB (distinct content) in 20 directories, the direct runner: ListFile lists
them (one FlowFile batch per 10,000 files), FetchFile reads each into the content repository
(Completion Strategy None; ``success`` auto-terminated, so the run ends with each file ingested
and committed). Also ListFile alone (the listing and its FlowFiles). The baseline is a Python
loop over ``os.scandir`` (recursive) that reads each file's bytes.

Rounds are interleaved; each figure is the best of N with the range.

Run: ``.venv/bin/python bench/list_fetch.py [--files 20000] [--rounds 3]``. Prints one JSON line
and a table.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from get_file import interleave_and_report

FLOW = """
from flowcore import Flow
from processors import FetchFile, ListFile

flow = Flow("list-fetch")
listing = flow.add(ListFile(input_directory={input!r}), name="list")
fetch = flow.add(FetchFile(), name="fetch")
flow.connect(listing, fetch)
flow.auto_terminate(fetch, ["success", "not.found", "permission.denied", "failure"])
"""

LIST_ONLY = """
from flowcore import Flow
from processors import ListFile

flow = Flow("list-only")
listing = flow.add(ListFile(input_directory={input!r}), name="list")
flow.auto_terminate(listing, "success")
"""


def make_inputs(directory: Path, count: int) -> None:
    """*count* files of 1 KB with distinct content, in 20 directories, a minute old."""
    stamp = time.time() - 60
    for number in range(count):
        sub = directory / f"d{number % 20:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        line = f"file {number:06d} " + os.urandom(16).hex()
        path = sub / f"f{number:06d}.txt"
        path.write_bytes((line * 40)[:1023].encode() + b"\n")
        os.utime(path, (stamp, stamp))


def flowcore_run(work: Path, source: Path, flow: str) -> float:
    """Seconds for `flowcore run` of *flow* over *source* (left in place)."""
    (work / "flow.py").write_text(flow.format(input=str(source)))
    os.sync()
    script = Path(sys.executable).parent / "flowcore"
    started = time.perf_counter()
    subprocess.run(
        [str(script), "run", "flow.py", "--runner", "direct", "--json"],
        cwd=work,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def python_read(work: Path, source: Path) -> float:
    """Seconds for a Python loop over os.scandir (recursive) reading each file."""
    del work
    os.sync()
    started = time.perf_counter()
    total = 0
    pending = [str(source)]
    while pending:
        with os.scandir(pending.pop()) as entries:
            for entry in entries:
                if entry.is_dir():
                    pending.append(entry.path)
                elif entry.is_file():
                    with open(entry.path, "rb") as data:
                        total += len(data.read())
    assert total > 0
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", default=str(ROOT), help="where the files go")
    args = parser.parse_args()
    scenarios = {
        "flowcore ListFile -> FetchFile (direct)": lambda w, s: flowcore_run(w, s, FLOW),
        "flowcore ListFile alone (direct)": lambda w, s: flowcore_run(w, s, LIST_ONLY),
        "python os.scandir + read loop": python_read,
    }
    interleave_and_report(scenarios, make_inputs, args.files, args.rounds, args.dir)


if __name__ == "__main__":
    main()
