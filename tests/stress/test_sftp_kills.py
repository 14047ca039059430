"""kill -9 of real `flowcore run`s of ListSFTP -> FetchSFTP -> PutFile and GetSFTP -> PutFile.

The SFTP server (paramiko's) lives in the test process and outlives the killed runs.
ListSFTP's listing state commits with its FlowFiles, so each remote file enters the flow once
however the run dies, and PutFile writes it once. FetchSFTP's Move File runs after the
commit (an after-commit action), so a run killed just after a move loses nothing.
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
from tests.processors.sftp.sftp_server import PASSWORD, USER, SftpServer, sftp_server

pytestmark = pytest.mark.stress
__all__ = ["sftp_server"]

ROOT = Path(__file__).resolve().parents[2]
FILES = 20
KILLS = 3

FLOW = """
from flowcore import Flow
from processors import PutFile
from processors.sftp.fetch_sftp import FetchSFTP
from processors.sftp.list_sftp import ListSFTP

SFTP = {{"Hostname": "127.0.0.1", "Port": "{port}", "Username": "{user}",
        "Password": "{password}", "Connection Timeout": "5 sec", "Data Timeout": "5 sec"}}
flow = Flow("sftp-kills")
listing = flow.add(ListSFTP(**SFTP, **{{"Remote Path": "/{directory}"}}), name="list")
fetch = flow.add(FetchSFTP(**SFTP, **{{"Remote File": "${{path}}/${{filename}}"}}, **{completion}),
                 name="fetch")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(listing, fetch)
flow.connect(fetch, put, "success", durable=True)
flow.auto_terminate(fetch, ["comms.failure", "not.found", "permission.denied"])
flow.auto_terminate(put, ["success", "failure"])
"""


def _run(workdir: Path) -> subprocess.Popen:
    script = Path(sys.executable).parent / "flowcore"
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    return subprocess.Popen(
        [str(script), "run", "flow.py", "--runner", "direct", "--json",
         "--setting", "batch_max_flowfiles=8"],
        cwd=workdir, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def _finish(workdir: Path) -> None:
    process = _run(workdir)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 0, err.decode()


def _setup(
    server: SftpServer, workdir: Path, name: str, completion: dict[str, str] | None = None
) -> Path:
    remote = server.root / name
    remote.mkdir()
    workdir.mkdir(parents=True)
    text = FLOW.format(
        port=server.port, user=USER, password=PASSWORD, directory=name,
        completion=repr(completion or {}),
    )  # fmt: skip
    (workdir / "flow.py").write_text(text)
    return remote


def _write(remote: Path, data: dict[str, bytes], names: list[str]) -> None:
    when = time.time() - 30  # older than the listing lag: listed at once
    for name in names:
        (remote / name).write_bytes(data[name])
        os.utime(remote / name, (when, when))


def _fetches(workdir: Path) -> int:
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=1_000_000)
        seen = Counter(e.flowfile_uuid for e in events if e.event_type.value == "FETCH")
        assert [u for u, n in seen.items() if n > 1] == []
        return sum(seen.values())
    finally:
        repos.close()


@pytest.mark.slow
def test_kill_9_lists_and_fetches_each_file_once(sftp_server: SftpServer, tmp_path: Path) -> None:
    """Killed at random moments while files arrive, then rerun: each remote file written once
    to out/, fetched once in the committed history, as an uninterrupted run."""
    rng = random.Random(17)
    data = {
        f"f{n:03d}.txt": f"{n} {rng.random()}\n".encode() * rng.randint(1, 30) for n in range(FILES)
    }
    names = sorted(data)
    reference = _setup(sftp_server, tmp_path / "reference", f"ref-{tmp_path.name}")
    _write(reference, data, names)
    started = time.monotonic()
    _finish(tmp_path / "reference")
    duration = time.monotonic() - started
    crashed = _setup(sftp_server, tmp_path / "crashed", f"crash-{tmp_path.name}")
    per_run = -(-FILES // KILLS)
    killed = 0
    for attempt in range(3 * KILLS):
        _write(crashed, data, names[attempt * per_run : (attempt + 1) * per_run])
        process = _run(tmp_path / "crashed")
        time.sleep(rng.uniform(0.2, max(0.3, duration * 0.9)))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
            killed += 1
            if killed == KILLS:
                break
    _write(crashed, data, [n for n in names if not (crashed / n).exists()])
    print(f"killed {killed} runs; an uninterrupted run took {duration:.1f} s")
    assert killed >= 2, f"only {killed} runs were still going when killed"
    _finish(tmp_path / "crashed")
    for workdir in (tmp_path / "reference", tmp_path / "crashed"):
        assert {p.name: p.read_bytes() for p in (workdir / "out").iterdir()} == data
    assert _fetches(tmp_path / "crashed") == _fetches(tmp_path / "reference") == FILES


def _moved(remote: Path) -> int:
    """How many source files are in done/ now."""
    try:
        return len(os.listdir(remote / "done"))
    except FileNotFoundError:
        return 0


#: FetchSFTP's Completion Strategy: the source moved into done/ once its FlowFile is durable.
MOVE = {"Completion Strategy": "Move File", "Create Directory": "true"}


@pytest.mark.slow
def test_kill_9_moves_each_source_file_only_once_its_flowfile_is_durable(
    sftp_server: SftpServer, tmp_path: Path
) -> None:
    """Completion Strategy Move File under kill -9 (3 kills), then a rerun: every remote file
    is written once to out/ and fetched once, and every source file ends moved to done/ (the
    move runs after the commit, and again at start-up): none lost, none left behind."""
    rng = random.Random(23)
    data = {f"m{n:03d}.txt": f"{n} {rng.random()}\n".encode() * 20 for n in range(FILES)}
    names = sorted(data)
    crashed = tmp_path / "crashed"
    remote = _setup(
        sftp_server, crashed, f"move-{tmp_path.name}",
        {**MOVE, "Move Destination Directory": f"/move-{tmp_path.name}/done"},
    )  # fmt: skip
    _write(remote, data, names)
    killed = 0
    for _ in range(3 * KILLS):
        process = _run(crashed)
        # Killed just after a source file was moved: with the move done in the task, before
        # the commit, that FlowFile would be lost (its replay finds no file).
        moved = _moved(remote)
        deadline = time.monotonic() + 20
        while _moved(remote) == moved and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.002)
        time.sleep(rng.uniform(0, 0.02))
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=60)
            killed += 1
            if killed == KILLS:
                break
        if not any(p.is_file() for p in remote.iterdir()):
            break
    print(f"killed {killed} runs")
    _finish(crashed)
    assert {p.name: p.read_bytes() for p in (crashed / "out").iterdir()} == data
    assert [p.name for p in remote.iterdir() if p.is_file()] == []
    assert {p.name: p.read_bytes() for p in (remote / "done").iterdir()} == data
    assert _fetches(crashed) == FILES


GET = """
from flowcore import Flow
from processors import PutFile
from processors.sftp.get_sftp import GetSFTP

flow = Flow("get-sftp-kills")
get = flow.add(GetSFTP(**{{"Hostname": "127.0.0.1", "Port": "{port}", "Username": "{user}",
                          "Password": "{password}", "Remote Path": "/{directory}",
                          "Max Selects": "4", "Connection Timeout": "5 sec"}}), name="get")
put = flow.add(PutFile(directory="out"), name="put")
flow.connect(get, put, durable=True)
flow.auto_terminate(put, ["success", "failure"])
"""


@pytest.mark.slow
def test_kill_9_get_sftp_pulls_each_file_once(sftp_server: SftpServer, tmp_path: Path) -> None:
    """GetSFTP (Delete Original) killed just after a remote file was deleted, 3 times, then a
    rerun: every file written once to out/, received once, and gone from the server."""
    rng = random.Random(29)
    data = {f"g{n:03d}.txt": f"{n} {rng.random()}\n".encode() * 20 for n in range(12)}
    name = f"get-{tmp_path.name}"
    remote = sftp_server.root / name
    remote.mkdir()
    workdir = tmp_path / "crashed"
    workdir.mkdir()
    text = GET.format(port=sftp_server.port, user=USER, password=PASSWORD, directory=name)
    (workdir / "flow.py").write_text(text)
    _write(remote, data, sorted(data))
    killed = 0
    for _ in range(3 * KILLS):
        process = _run(workdir)
        left = len(os.listdir(remote))
        deadline = time.monotonic() + 20
        while len(os.listdir(remote)) == left and process.poll() is None:
            if time.monotonic() > deadline:
                break
            time.sleep(0.002)
        if process.poll() is not None:
            break
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=60)
        killed += 1
        if killed == KILLS:
            break
    print(f"killed {killed} runs")
    _finish(workdir)
    assert {p.name: p.read_bytes() for p in (workdir / "out").iterdir()} == data
    assert list(remote.iterdir()) == []
    repos = RepositorySet.open(workdir / ".flowcore")
    try:
        events = repos.provenance.search(limit=1_000_000)
    finally:
        repos.close()
    assert sum(e.event_type.value == "RECEIVE" for e in events) == len(data)
