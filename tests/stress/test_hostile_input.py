"""Hostile input through a real `flowcore run`, on both runners: nothing hangs, nothing escapes.

One flow meets what the hostile tester used: a file name that makes ``(a|aa)+$`` backtrack
exponentially, an expression that asks for two billion characters, ``path`` attributes that
climb out of the archive, names with backslashes. The run must end well within its time
limit, say per queue what is stuck (exit status 3, no traceback), and write a TAR that
extracts inside its directory with the harmless file in it.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.stress

FLOW = """
from flowcore import Flow
from processors import GetFile, MergeContent, PutFile, RouteOnAttribute, UpdateAttribute

flow = Flow("hostile")
get = flow.add(GetFile(input_directory={inbox!r}, keep_source_file=True), name="get")
tag = flow.add(
    UpdateAttribute(
        path="../../../escaped/${{filename}}",
        size_check="${{filename:startsWith('bomb'):ifElse("
        "${{filename:repeat(2000000000)}}, 'ok')}}",
    ),
    name="tag",
)
route = flow.add(RouteOnAttribute(aas="${{filename:matches('^(a|aa)+$')}}"), name="route")
merge = flow.add(MergeContent(merge_format="TAR", keep_path=True), name="merge")
put = flow.add(PutFile(directory={outbox!r}), name="put")
flow.connect(get, tag)
flow.connect(tag, route)
flow.connect(route, merge, "unmatched")
flow.connect(merge, put, "merged")
flow.auto_terminate(route, "aas")
flow.auto_terminate(merge, ["original", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""

NAMES = {
    "a" * 40 + "!": b"backtracks",  # (a|aa)+$ takes ~1.6^40 steps on it
    "bomb.txt": b"two billion characters",
    "plain.txt": b"harmless",
    "back\\slash.txt": b"windows separators",
}


@pytest.mark.parametrize(
    "runner", ["direct", pytest.param("spark", marks=[pytest.mark.spark, pytest.mark.slow])]
)
def test_a_hostile_flow_run_ends_says_what_is_stuck_and_escapes_nothing(
    tmp_path: Path, runner: str
) -> None:
    """Ends in bounded time with exit 3 and one 'stuck:' line per parked queue; the TAR holds
    the harmless files under safe names and extracts inside its directory."""
    if runner == "spark" and shutil.which("java") is None:
        pytest.skip("Spark needs a Java runtime")
    inbox, outbox = tmp_path / "in", tmp_path / "out"
    inbox.mkdir()
    for name, data in NAMES.items():
        (inbox / name).write_bytes(data)
    flow = tmp_path / "flow.py"
    flow.write_text(FLOW.format(inbox=str(inbox), outbox=str(outbox)))
    script = Path(sys.executable).parent / "flowcore"
    command = [str(script), "run", str(flow), "--runner", runner, "--repository"]
    command += [str(tmp_path / "repo"), "--setting", "regex_time_limit=200 millis"]
    command += ["--setting", "driver_run_max_flowfiles=0"]  # every stage run on the runner
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, check=False)
    elapsed = time.monotonic() - started
    assert done.returncode == 3, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert elapsed < (300 if runner == "spark" else 60)
    stuck = [line for line in done.stderr.splitlines() if line.startswith("stuck:")]
    assert len(stuck) == 2, done.stderr[-3000:]
    assert any("tag (returned after errors)" in line for line in stuck)
    assert any("route (returned after errors)" in line for line in stuck)
    (archive,) = list(outbox.iterdir())
    sandbox = tmp_path / "sandbox"
    (sandbox / "into").mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(archive.read_bytes())) as bundle:
        names = sorted(bundle.getnames())
        bundle.extractall(sandbox / "into", filter="fully_trusted")
    assert names == ["escaped/back/slash.txt/back/slash.txt", "escaped/plain.txt/plain.txt"]
    written = [p for p in sandbox.rglob("*") if p.is_file()]
    assert all(sandbox / "into" in p.parents for p in written)
    assert (sandbox / "into" / "escaped" / "plain.txt" / "plain.txt").read_bytes() == b"harmless"
