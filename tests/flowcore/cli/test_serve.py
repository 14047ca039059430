"""Tests for ``flowcore serve`` and ``run --server``: a real server, real Spark, real clients.

One server (``local[1]``) serves the whole module; each test runs its flows in a directory of
its own. The server killed during a run is in ``tests/stress/test_serve_kills.py``.
"""

from __future__ import annotations

import shutil
import signal
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.flowcore.cli._serving import Server, client, error_lines, run, serve

pytestmark = [
    pytest.mark.spark,
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None, reason="Spark needs a Java runtime"),
]

FLOW = textwrap.dedent(
    """
    from flowcore import Flow, FlowFileTransform, Relationship, TransformResult
    from processors import GetFile, PutFile, SplitText, UpdateAttribute
    from marks import SUFFIX

    PREFIX = "{prefix}"


    class Mark(FlowFileTransform):
        '''Marks each line: a processor of the flow file, which Spark's workers cannot import.'''

        relationships = (Relationship("success"), Relationship("failure"))

        def transform(self, context, flowfile):
            line = flowfile.read().decode().strip()
            if line == "boom":
                raise ValueError("a line that says boom")
            return TransformResult(contents=PREFIX + line + SUFFIX)


    flow = Flow("served")
    get = flow.add(GetFile(input_directory="in"), name="get")
    split = flow.add(SplitText(line_split_count=1), name="split")
    mark = flow.add(Mark(), name="mark")
    name = flow.add(UpdateAttribute(filename="${{filename}}.${{fragment.index}}"), name="name")
    put = flow.add(PutFile(directory="out"), name="put")
    flow.connect(get, split)
    flow.connect(split, mark, "splits")
    flow.connect(mark, name, "success")
    flow.connect(name, put)
    flow.auto_terminate(split, ["original", "failure"])
    flow.auto_terminate(mark, "failure")
    flow.auto_terminate(put, ["success", "failure"])
    """
)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server on local[1] for the module; stopped by SIGTERM at the end, which must be clean."""
    home = tmp_path_factory.mktemp("serve")
    started = Server(home / "s.sock", home / "serve.err")
    yield started
    assert started.stop() == 0, started.log.read_text()[-2000:]
    assert not started.socket.exists()


def _workdir(path: Path, lines: dict[str, str], prefix: str = "", suffix: str = "!") -> Path:
    """A flow directory: flow.py, marks.py beside it, and in/ holding *lines* as files."""
    (path / "in").mkdir(parents=True, exist_ok=True)
    (path / "flow.py").write_text(FLOW.format(prefix=prefix))
    (path / "marks.py").write_text(f"SUFFIX = {suffix!r}\n")
    for name, text in lines.items():
        (path / "in" / name).write_text(text)
    return path


def _outputs(path: Path) -> dict[str, str]:
    out = path / "out"
    return {p.name: p.read_text() for p in sorted(out.iterdir())} if out.is_dir() else {}


def test_the_ready_line_names_master_socket_and_start_time(server: Server) -> None:
    """The server says once that it serves, on which master and socket, after how long."""
    assert server.ready.startswith(f"serving Spark local[1] on {server.socket}; session started")
    assert server.ready.endswith(" s")
    assert oct(server.socket.stat().st_mode & 0o777) == oct(0o700)


def test_runs_through_the_server_reuse_its_session(server: Server, tmp_path: Path) -> None:
    """Two runs of a flow whose processor is defined in the flow file: both done on the
    server's session ("session reused", the first too), each input line written once; the
    second is sent by FLOWCORE_SERVER instead of --server."""
    work = _workdir(tmp_path, {"a.txt": "x\ny\n"})
    first = run(work, "flow.py", "--server", str(server.socket))
    assert first.returncode == 0, first.stderr
    assert "on spark (local[1]): session reused" in first.stdout
    assert _outputs(work) == {"a.txt.1": "x!", "a.txt.2": "y!"}
    (work / "in" / "b.txt").write_text("z\n")
    second = run(work, "flow.py", FLOWCORE_SERVER=str(server.socket))
    assert second.returncode == 0, second.stderr
    assert "session reused" in second.stdout
    assert _outputs(work) == {"a.txt.1": "x!", "a.txt.2": "y!", "b.txt.1": "z!"}


def test_an_edited_flow_and_its_neighbour_are_imported_afresh(
    server: Server, tmp_path: Path
) -> None:
    """After the flow file and the module beside it change, the next served run uses the new
    code (each request imports them under a name of its own)."""
    work = _workdir(tmp_path, {"a.txt": "x\n"})
    assert run(work, "flow.py", "--server", str(server.socket)).returncode == 0
    _workdir(tmp_path, {"b.txt": "y\n"}, prefix=">", suffix="?")
    again = run(work, "flow.py", "--server", str(server.socket))
    assert again.returncode == 0, again.stderr
    assert _outputs(work) == {"a.txt.1": "x!", "b.txt.1": ">y?"}


def test_a_master_or_conf_unlike_the_servers_is_one_line(server: Server, tmp_path: Path) -> None:
    """--master or --conf other than the server's: exit 2 and one line naming both sides."""
    work = _workdir(tmp_path, {"a.txt": "x\n"})
    master = run(work, "flow.py", "--server", str(server.socket), "--master", "local[2]")
    assert master.returncode == 2
    lines = error_lines(master.stderr)
    assert len(lines) == 1, master.stderr
    assert "--master local[2]" in lines[0]
    assert "local[1]" in lines[0]
    conf = run(work, "flow.py", "--server", str(server.socket), "--conf", "spark.foo=1")
    assert conf.returncode == 2
    lines = error_lines(conf.stderr)
    assert len(lines) == 1, conf.stderr
    assert "--conf spark.foo=1" in lines[0]
    assert "spark.foo unset" in lines[0]
    assert not (work / "out").exists()


def test_mistakes_and_failures_leave_the_server_serving(server: Server, tmp_path: Path) -> None:
    """A flow file that raises and a bad property end as a local run ends (exit 2, the same
    message: one line, or the list of the flow's problems); a processor's exception fails its
    FlowFile (exit 4); the next run is served."""
    work = _workdir(tmp_path, {"a.txt": "x\nboom\n"})
    flow = (work / "flow.py").read_text()
    (work / "flow.py").write_text(flow.replace("PREFIX = ", "undefined_name\nPREFIX = "))
    served = run(work, "flow.py", "--server", str(server.socket))
    local = run(work, "flow.py")
    assert served.returncode == local.returncode == 2
    assert error_lines(served.stderr) == error_lines(local.stderr)
    assert len(error_lines(served.stderr)) == 1
    assert "flow.py:6: NameError" in served.stderr
    (work / "flow.py").write_text(flow.replace("line_split_count=1", "line_split_count=-1"))
    bad = run(work, "flow.py", "--server", str(server.socket))
    assert bad.returncode == 2
    assert error_lines(bad.stderr) == error_lines(run(work, "flow.py").stderr)
    assert "'Line Split Count' validated against '-1' is invalid" in bad.stderr
    (work / "flow.py").write_text(flow)
    failing = run(work, "flow.py", "--server", str(server.socket))
    assert failing.returncode == 4, failing.stderr
    assert "a line that says boom" in failing.stderr
    assert _outputs(work) == {"a.txt.1": "x!"}
    (work / "in" / "b.txt").write_text("y\n")
    good = run(work, "flow.py", "--server", str(server.socket))
    assert good.returncode == 0, good.stderr
    assert "session reused" in good.stdout
    assert _outputs(work) == {"a.txt.1": "x!", "b.txt.1": "y!"}


def test_ctrl_c_stops_a_served_run_and_the_next_waits_its_turn(
    server: Server, tmp_path: Path
) -> None:
    """A continuous run holds the server: a second client says it waits; Ctrl-C on the first
    stops its run after the micro-batch (exit 0, its summary); then the second runs."""
    looping = _workdir(tmp_path / "looping", {"a.txt": "x\n"})
    first = client(looping, "flow.py", "--server", str(server.socket), "--continuous")
    deadline = time.monotonic() + 60
    while not (looping / "out" / "a.txt.1").exists():  # the run is under way
        assert time.monotonic() < deadline, first.stderr.read() if first.poll() else "no output"
        time.sleep(0.2)
    waiting = _workdir(tmp_path / "waiting", {"b.txt": "y\n"})
    second = client(waiting, "flow.py", "--server", str(server.socket))
    assert second.stderr is not None
    assert second.stderr.readline().startswith("waiting for the server's current run (flow.py")
    first.send_signal(signal.SIGINT)
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert "stopping after the current micro-batch" in err
    assert "session reused" in out
    out, err = second.communicate(timeout=60)
    assert second.returncode == 0, err
    assert _outputs(waiting) == {"b.txt.1": "y!"}


def test_a_second_ctrl_c_leaves_and_the_server_stops_the_run(
    server: Server, tmp_path: Path
) -> None:
    """Ctrl-C twice on a continuous run's client: it leaves at once (exit 130, saying the
    server stops the run); the server, its client gone, stops that run and serves the next."""
    looping = _workdir(tmp_path / "looping", {"a.txt": "x\n"})
    first = client(looping, "flow.py", "--server", str(server.socket), "--continuous")
    deadline = time.monotonic() + 60
    while not (looping / "out" / "a.txt.1").exists():
        assert time.monotonic() < deadline, first.stderr.read() if first.poll() else "no output"
        time.sleep(0.2)
    first.send_signal(signal.SIGINT)
    assert first.stderr is not None
    # the second Ctrl-C once the first is handled (two at once would reach Python's handler as
    # one), and at once: a continuous run with nothing to do ends its micro-batch quickly
    said = first.stderr.readline()
    assert said.startswith("stopping after the current micro-batch"), said
    first.send_signal(signal.SIGINT)
    _, err = first.communicate(timeout=60)
    err = said + err
    assert first.returncode == 130, err
    assert error_lines(err)[-1] == (
        "left the run; the server stops it after the current micro-batch"
    )
    after = _workdir(tmp_path / "after", {"b.txt": "y\n"})
    done = run(after, "flow.py", "--server", str(server.socket))
    assert done.returncode == 0, done.stderr
    assert _outputs(after) == {"b.txt.1": "y!"}


def test_a_second_server_on_the_socket_is_one_line(server: Server) -> None:
    """``flowcore serve`` on a socket a live server holds: exit 2, one line naming its pid."""
    refused = serve("--socket", str(server.socket))
    assert refused.returncode == 2
    assert error_lines(refused.stderr) == [
        f"error: a flowcore server already serves {server.socket} (pid {server.pid}); stop it "
        f"(kill {server.pid}) or pass another --socket"
    ]
