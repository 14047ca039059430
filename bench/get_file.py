"""GetFile -> PutFile over many small files, beside plain copies measured in the same run.

20,000 files of 1 KB (distinct content) in one directory, the direct runner, GetFile's default
Batch Size (10) and Keep Source File false (each file deleted after its commit), PutFile into an
output directory. Baselines, on copies of the same input: a Python loop that reads each file,
writes it under a temporary name, fsyncs and renames it (what PutFile does per file, without a
repository), the same without the fsync, and ``cp -r``.

Rounds are interleaved; each figure is the best of N with the range.

Run: ``.venv/bin/python bench/get_file.py [--files 20000] [--rounds 3]``. Prints one JSON line
and a table.
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
from collections.abc import Callable, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

FLOW = """
from flowcore import Flow
from processors import GetFile, PutFile

flow = Flow("many-files")
get = flow.add(GetFile(input_directory={input!r}, keep_source_file=False), name="get")
put = flow.add(PutFile(directory={output!r}), name="put")
flow.connect(get, put)
flow.auto_terminate(put, ["success", "failure"])
"""


def make_inputs(directory: Path, count: int) -> None:
    """*count* files of 1 KB with distinct content."""
    directory.mkdir(parents=True)
    for number in range(count):
        line = f"file {number:06d} " + os.urandom(16).hex()
        (directory / f"f{number:06d}.txt").write_bytes((line * 40)[:1023].encode() + b"\n")


def flowcore_run(work: Path, source: Path) -> float:
    """Seconds for `flowcore run` of GetFile -> PutFile over a copy of *source*."""
    inputs, outputs = work / "in", work / "out"
    shutil.copytree(source, inputs)
    (work / "flow.py").write_text(FLOW.format(input=str(inputs), output=str(outputs)))
    os.sync()
    script = Path(sys.executable).parent / "flowcore"
    started = time.perf_counter()
    subprocess.run(
        [str(script), "run", "flow.py", "--runner", "direct", "--json"],
        cwd=work,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    elapsed = time.perf_counter() - started
    assert not any(inputs.iterdir()), "every input should have been ingested"
    return elapsed


def python_copy(work: Path, source: Path, *, sync: bool) -> float:
    """Seconds for a Python loop copying each file (temporary, optional fsync, rename)."""
    inputs, outputs = work / "in", work / "out"
    shutil.copytree(source, inputs)
    outputs.mkdir()
    os.sync()
    started = time.perf_counter()
    for path in sorted(inputs.iterdir()):
        data = path.read_bytes()
        temporary = outputs / f".{path.name}.part"
        with open(temporary, "wb") as out:
            out.write(data)
            if sync:
                out.flush()
                os.fsync(out.fileno())
        os.replace(temporary, outputs / path.name)
        path.unlink()
    return time.perf_counter() - started


def cp(work: Path, source: Path) -> float:
    """Seconds for ``cp -r``."""
    os.sync()
    started = time.perf_counter()
    subprocess.run(["cp", "-r", str(source), str(work / "out")], check=True)
    return time.perf_counter() - started


def interleave_and_report(
    scenarios: Mapping[str, Callable[[Path, Path], float]],
    make: Callable[[Path, int], None],
    files: int,
    rounds: int,
    directory: str,
) -> None:
    """Run *scenarios* interleaved, *rounds* times over *files* inputs made by *make* in a
    temporary directory under *directory*; print one JSON line and a table (best of the rounds,
    with the range)."""
    times: dict[str, list[float]] = {name: [] for name in scenarios}
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        source = Path(tmp) / "source"
        make(source, files)
        for round_number in range(rounds):
            for name, scenario in scenarios.items():  # interleaved
                work = Path(tmp) / f"r{round_number}-{len(times[name])}-{abs(hash(name))}"
                work.mkdir()
                times[name].append(scenario(work, source))
                shutil.rmtree(work)
    figures = {
        name: {
            "best_s": round(min(t), 3),
            "worst_s": round(max(t), 3),
            "files_per_s": round(files / min(t)),
            "files_per_s_range": [round(files / max(t)), round(files / min(t))],
        }
        for name, t in times.items()
    }
    print(json.dumps({"files": files, "rounds": rounds, "dir": directory, "figures": figures}))
    print(f"{'scenario':42} {'best s':>8} {'files/s (best)':>15} {'range':>18}")
    for name, f in figures.items():
        low, high = f["files_per_s_range"]
        print(f"{name:42} {f['best_s']:8.2f} {f['files_per_s']:15,} {low:>8,}-{high:<8,}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--dir",
        default=str(ROOT),
        help="where the files go (a tmpfs such as /dev/shm shows "
        "the CPU's share; the default, the checkout's disk, shows the file system's)",
    )
    args = parser.parse_args()
    scenarios = {
        "flowcore GetFile -> PutFile (direct)": flowcore_run,
        "python loop, fsync + rename": lambda w, s: python_copy(w, s, sync=True),
        "python loop, rename only": lambda w, s: python_copy(w, s, sync=False),
        "cp -r": cp,
    }
    interleave_and_report(scenarios, make_inputs, args.files, args.rounds, args.dir)


if __name__ == "__main__":
    main()
