"""kill -9 of real `flowcore run`s of ListSFTP -> FetchSFTP -> PutFile.

The SFTP server (paramiko's) lives in the test process and outlives the killed runs.
ListSFTP's listing state commits with its FlowFiles, so each remote file enters the flow once
however the run dies, and PutFile writes it once.
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
fetch = flow.add(FetchSFTP(**SFTP, **{{"Remote File": "${{path}}/${{filename}}"}}), name="fetch")
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


def _setup(server: SftpServer, workdir: Path, name: str) -> Path:
    remote = server.root / name
    remote.mkdir()
    workdir.mkdir(parents=True)
    text = FLOW.format(port=server.port, user=USER, password=PASSWORD, directory=name)
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
