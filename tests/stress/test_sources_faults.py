"""Sources under faults: a full disk, links, odd names. Real files, real `flowcore run`s."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.stress

FLOW = """
from flowcore import Flow
from processors import GetFile, PutFile

flow = Flow("ingest")
get = flow.add(GetFile(input_directory="{input}", keep_source_file=False), name="get")
put = flow.add(PutFile(directory="{output}"), name="put")
flow.connect(get, put)
flow.auto_terminate(put, ["success", "failure"])
"""


def _run(flow: Path, repository: Path) -> subprocess.CompletedProcess:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.run(
        [str(script), "run", str(flow), "--runner", "direct", "--repository", str(repository)],
        capture_output=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def small_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 4 MB tmpfs (root only), unmounted afterwards."""
    mount = tmp_path / "small"
    mount.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], check=False
    )
    if done.returncode != 0:
        pytest.skip("this machine does not allow mounting a tmpfs")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_full_disk_stops_the_run_in_one_line_and_the_next_run_loses_nothing(
    tmp_path: Path, small_disk: Path
) -> None:
    """GetFile without Keep Source File, repository on a 4 MB disk, a 6 MB input: the run
    stops with one line naming what is full (exit 2, no traceback); no input file is deleted
    or marked ingested without its FlowFile. With room made, the next run delivers every file
    exactly once."""
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    expected = {f"small-{n}.txt": f"small {n}\n".encode() * 100 for n in range(5)}
    expected["big.bin"] = os.urandom(6 * 1024 * 1024)  # more than the 4 MB disk
    for name, data in expected.items():
        (inputs / name).write_bytes(data)
    flow = tmp_path / "flow.py"
    flow.write_text(FLOW.format(input=inputs, output=outputs))
    repository = small_disk / "repo"

    first = _run(flow, repository)
    err = first.stderr.decode()
    assert first.returncode == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "No space left on device" in lines[0]
    written = {p.name for p in outputs.iterdir()} if outputs.exists() else set()
    assert {p.name for p in inputs.iterdir()} | written == set(expected)
    assert (inputs / "big.bin").read_bytes() == expected["big.bin"]

    subprocess.run(["mount", "-o", "remount,size=64m", str(small_disk)], check=True)
    second = _run(flow, repository)
    assert second.returncode == 0, second.stderr.decode()
    assert {p.name: p.read_bytes() for p in outputs.iterdir()} == expected
    assert list(inputs.iterdir()) == []
