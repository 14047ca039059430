"""A ``flowcore serve`` server killed with SIGKILL during a served run (real JVM and client)."""

from __future__ import annotations

import os
import shutil
import signal
import textwrap
import time
from pathlib import Path

import pytest

from tests.flowcore.cli._serving import Server, client, error_lines, run

pytestmark = [
    pytest.mark.stress,
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
    pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the server's children in /proc"),
]

FLOW = textwrap.dedent(
    """
    from flowcore import Flow
    from processors import GetFile, PutFile, SplitText, UpdateAttribute

    flow = Flow("killed")
    get = flow.add(GetFile(input_directory="in", batch_size=1), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    name = flow.add(UpdateAttribute(filename="${filename}.${fragment.index}"), name="name")
    put = flow.add(PutFile(directory="out"), name="put")
    flow.connect(get, split)
    flow.connect(split, name, "splits")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    """
)
FILES, LINES = 80, 5


def _descendants(pid: int) -> set[int]:
    """The processes under *pid* (its JVM, Spark's Python daemon and workers)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier}
        found |= frontier
    return found


def test_a_server_killed_mid_run_is_one_line_and_a_local_run_finishes(tmp_path: Path) -> None:
    """SIGKILL to the server during a served run: the client exits 2 with one line saying the
    server died; the stale socket is left, and a local run of the same repository finishes with
    every input line written once; a new server replaces the stale socket and stops cleanly."""
    work = tmp_path / "work"
    (work / "in").mkdir(parents=True)
    (work / "flow.py").write_text(FLOW)
    expected = {}
    for number in range(FILES):
        (work / "in" / f"f{number:03}.txt").write_text(
            "".join(f"{number}-{i}\n" for i in range(LINES))
        )
        for i in range(LINES):
            expected[f"f{number:03}.txt.{i + 1}"] = f"{number}-{i}"
    server = Server(tmp_path / "s.sock", tmp_path / "serve.err")
    served = client(work, "flow.py", "--server", str(server.socket))
    deadline = time.monotonic() + 120
    while not (work / "out").is_dir() or len(os.listdir(work / "out")) < LINES * 3:
        assert served.poll() is None, served.communicate()
        assert time.monotonic() < deadline, "the served run wrote nothing"
        time.sleep(0.05)
    children = _descendants(server.pid)
    os.kill(server.pid, signal.SIGKILL)
    _, err = served.communicate(timeout=60)
    assert served.returncode == 2, err
    assert error_lines(err) == [
        f"error: the flowcore server at {server.socket} died during the run; its repository "
        "recovers at the next run (nothing committed is lost): start the server again with "
        "flowcore serve, or run without --server"
    ]
    assert len(os.listdir(work / "out")) < len(expected), "killed too late to test anything"
    server.process.wait(10)
    deadline = time.monotonic() + 60
    while any(Path(f"/proc/{pid}").exists() for pid in children):  # the JVM follows its driver
        assert time.monotonic() < deadline, "the killed server's JVM outlived it"
        time.sleep(0.2)
    assert server.socket.exists()  # stale: nobody listens
    local = run(work, "flow.py", "--runner", "direct")
    assert local.returncode == 0, local.stderr
    written = {p.name: p.read_text() for p in (work / "out").iterdir()}
    assert written == expected

    again = Server(tmp_path / "s.sock", tmp_path / "serve-again.err")
    assert again.ready.startswith(f"serving Spark local[1] on {again.socket}")
    nothing = run(work, "flow.py", "--server", str(again.socket))
    assert nothing.returncode == 0, nothing.stderr
    assert "session reused" in nothing.stdout
    assert again.stop() == 0
    assert not again.socket.exists()


def test_a_server_whose_jvm_dies_stops_and_removes_its_socket(tmp_path: Path) -> None:
    """SIGKILL to the server's JVM while it waits: it stops with one line naming the signal,
    exit status 1, its socket removed; a client is then told there is no server."""
    server = Server(tmp_path / "s.sock", tmp_path / "serve.err")
    jvms = [
        pid for pid in _descendants(server.pid)
        if Path(f"/proc/{pid}/comm").read_text().strip() == "java"
    ]  # fmt: skip
    assert len(jvms) == 1
    os.kill(jvms[0], signal.SIGKILL)
    assert server.process.wait(60) == 1
    log = server.log.read_text()
    assert "the server's Spark session ended (killed by signal 9, SIGKILL); stopping" in log
    assert "Traceback" not in log
    assert not server.socket.exists()
    (tmp_path / "flow.py").write_text(FLOW)
    (tmp_path / "in").mkdir()
    done = run(tmp_path, "flow.py", "--server", str(server.socket))
    assert done.returncode == 2
    assert f"no flowcore server at {server.socket}; start one" in done.stderr
