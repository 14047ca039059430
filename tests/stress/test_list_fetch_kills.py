"""kill -9 of real `flowcore run`s of ListFile -> FetchFile (Delete File) -> PutFile.

FetchFile deletes each source file only after the transaction holding its content is durable
(and again at start-up); ListFile's listing state commits with its FlowFiles. So however often
the run is killed, a rerun ends with every input file written exactly once and none left.
With Tracking Entities (files left in place), the map cache entry commits with the FlowFiles:
each file is listed, fetched and written once however often the run is killed.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from repositories.repository_set import RepositorySet

pytestmark = pytest.mark.stress

FILES = 300

FLOW = """
from flowcore import Flow
from processors import FetchFile, ListFile, PutFile

flow = Flow("list-fetch-kills")
listing = flow.add(ListFile(input_directory="in"), name="list")
fetch = flow.add(FetchFile(completion_strategy="Delete File"), name="fetch")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(listing, fetch)
flow.connect(fetch, put, "success", durable=True)
flow.auto_terminate(fetch, ["not.found", "permission.denied", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


FLOW_ENTITIES = """
from flowcore import Flow
from flowcore.services import MapCacheService
from processors import FetchFile, ListFile, PutFile

flow = Flow("list-entities-kills")
flow.add_service(MapCacheService("listed"))
listing = flow.add(
    ListFile(
        input_directory="in", listing_strategy="entities", entity_tracking_state_cache="listed"
    ),
    name="list",
)
fetch = flow.add(FetchFile(), name="fetch")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(listing, fetch)
flow.connect(fetch, put, "success", durable=True)
flow.auto_terminate(fetch, ["not.found", "permission.denied", "failure"])
flow.auto_terminate(put, ["success", "failure"])
"""


def _workdir(root: Path, flow: str = FLOW) -> dict[str, bytes]:
    """FILES input files in a few directories, with distinct contents; what they hold."""
    rng = random.Random(7)
    expected = {}
    for number in range(FILES):
        directory = root / "in" / f"d{number % 5}"
        directory.mkdir(parents=True, exist_ok=True)
        name = f"f{number:04d}.txt"
        data = f"{number} {rng.random()}\n".encode() * rng.randint(1, 40)
        (directory / name).write_bytes(data)
        expected[name] = data
    (root / "flow.py").write_text(flow)
    return expected


def _run(workdir: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json",
         "--setting", "batch_max_flowfiles=40"],
        cwd=workdir,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def _written(out: Path) -> int:
    """How many files PutFile has committed (it makes the directory with its first; its hidden
    temporaries are renamed after the commit)."""
    return sum(not p.name.startswith(".") for p in out.iterdir()) if out.exists() else 0


def _wait_for_new_output(process: subprocess.Popen, out: Path, rng: random.Random) -> None:
    """Return at most a few milliseconds after the run commits its first new file, or when it ends
    (a whole run's writing can take less than 50 ms)."""
    before = _written(out)
    while process.poll() is None and _written(out) == before:
        time.sleep(0.001)
    time.sleep(rng.uniform(0, 0.003))


def _events(workdir: Path) -> Counter:
    """Event types, checking no FlowFile was fetched or sent twice."""
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=1_000_000)
        for kind in ("FETCH", "SEND"):
            seen = Counter(e.flowfile_uuid for e in events if e.event_type.value == kind)
            assert [u for u, n in seen.items() if n > 1] == [], kind
        return Counter(e.event_type.value for e in events)
    finally:
        repos.close()


@pytest.mark.slow
def test_kill_9_lists_fetches_deletes_and_writes_each_file_once(tmp_path: Path) -> None:
    """Killed at random moments, then rerun: exactly the input files in out/, none in in/,
    each fetched and sent once, no effect file or temporary left."""
    expected = _workdir(tmp_path / "reference")
    started = time.monotonic()
    done = _run(tmp_path / "reference")
    _, err = done.communicate(timeout=120)
    assert done.returncode == 0, err.decode()
    duration = time.monotonic() - started
    crashed = tmp_path / "crashed"
    assert _workdir(crashed) == expected
    rng = random.Random(3)
    killed = 0
    for _ in range(24):
        process = _run(crashed)
        time.sleep(rng.uniform(0.3, duration * 0.95))
        if process.poll() is not None:
            continue
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        killed += 1
        if killed == 8:
            break
    assert killed >= 4, f"only {killed} runs were still going when killed"
    final = _run(crashed)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    for workdir in (tmp_path / "reference", crashed):
        written = {p.name: p.read_bytes() for p in (workdir / "out").iterdir()}
        assert written == expected  # every file once (PutFile's default fails a duplicate)
        assert [p for p in (workdir / "in").rglob("*") if p.is_file()] == []
        assert list((workdir / ".flowcore" / "effects").glob("*")) == []
    reference, got = _events(tmp_path / "reference"), _events(crashed)
    for kind in ("FETCH", "SEND"):
        assert got[kind] == reference[kind] == FILES, kind


@pytest.mark.slow
def test_kill_9_tracking_entities_lists_each_file_once(tmp_path: Path) -> None:
    """Tracking Entities, files left in place: killed at random moments, then rerun, every file
    is written once and fetched and sent once; a further run lists nothing."""
    reference = tmp_path / "reference"
    _workdir(reference, FLOW_ENTITIES)
    started = time.monotonic()
    _, err = _run(reference).communicate(timeout=120)
    duration = time.monotonic() - started  # a whole run: kills are drawn within it
    crashed = tmp_path / "crashed"
    expected = _workdir(crashed, FLOW_ENTITIES)
    rng = random.Random(5)
    killed = 0
    partial = 0  # kills that left some files written, not all: mid-run, past the start-up
    for attempt in range(16):
        process = _run(crashed)
        if attempt < 2:  # while files are being written: a random time may miss that window
            _wait_for_new_output(process, crashed / "out", rng)
        else:  # then anywhere in a run, the start-up included (once it is done, runs end early)
            time.sleep(rng.uniform(0.3, duration * 0.9))
        if process.poll() is not None:
            continue
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        killed += 1
        partial += 0 < _written(crashed / "out") < FILES
        if killed >= 4:
            break
    assert killed >= 2, f"only {killed} runs were still going when killed"
    assert partial, "no kill landed while the files were being written"
    for _ in range(2):  # the rerun finishes the listing; the next one finds nothing new
        final = _run(crashed)
        _, err = final.communicate(timeout=120)
        assert final.returncode == 0, err.decode()
    written = {p.name: p.read_bytes() for p in (crashed / "out").iterdir()}
    assert written == expected  # every file once (PutFile's default fails a duplicate)
    got = _events(crashed)
    for kind in ("FETCH", "SEND"):
        assert got[kind] == FILES, kind
