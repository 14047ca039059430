"""Tests for ``flowcore run --server``'s client side where no server runs (no Spark needed).

Runs through a real server are in ``test_serve.py``.
"""

from __future__ import annotations

import socket
import textwrap
from pathlib import Path

from tests.flowcore.cli._serving import error_lines, run

FLOW = textwrap.dedent(
    """
    from flowcore import Flow
    from processors import GenerateFlowFile

    flow = Flow("tiny")
    gen = flow.add(GenerateFlowFile(), name="gen")
    flow.auto_terminate(gen, "success")
    """
)


def _flow(path: Path) -> Path:
    (path / "flow.py").write_text(FLOW)
    return path


def test_no_server_is_one_line_saying_to_start_one(tmp_path: Path) -> None:
    """--server where nothing listens: exit 2 and one line naming the socket and the command
    that starts a server there."""
    done = run(_flow(tmp_path), "flow.py", "--server", str(tmp_path / "s.sock"))
    assert done.returncode == 2
    assert error_lines(done.stderr) == [
        f"error: no flowcore server at {tmp_path / 's.sock'}; start one with: flowcore serve "
        f"--socket {tmp_path / 's.sock'} (or run without --server and FLOWCORE_SERVER)"
    ]


def test_a_stale_socket_is_no_server(tmp_path: Path) -> None:
    """A socket file a killed server left: exit 2, one line calling it stale."""
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(tmp_path / "s.sock"))
    dead.close()
    done = run(_flow(tmp_path), "flow.py", "--server", str(tmp_path / "s.sock"))
    assert done.returncode == 2
    lines = error_lines(done.stderr)
    assert len(lines) == 1
    assert "(its socket is left from a server that stopped)" in lines[0]


def test_the_default_socket_is_the_masters(tmp_path: Path) -> None:
    """--server alone, or FLOWCORE_SERVER=default, looks for the master's default socket."""
    runtime = tmp_path / "run"
    runtime.mkdir(mode=0o700)
    work = _flow(tmp_path)
    alone = run(work, "flow.py", "--server", "--master", "local[2]", XDG_RUNTIME_DIR=str(runtime))
    assert alone.returncode == 2
    assert f"no flowcore server at {runtime}/flowcore/local-2.sock" in alone.stderr
    env = run(work, "flow.py", XDG_RUNTIME_DIR=str(runtime), FLOWCORE_SERVER="default")
    assert env.returncode == 2
    assert f"no flowcore server at {runtime}/flowcore/local-all.sock" in env.stderr


def test_a_direct_run_is_never_sent(tmp_path: Path) -> None:
    """--server with --runner direct is refused in one line; FLOWCORE_SERVER leaves a direct
    run here (it needs no session)."""
    work = _flow(tmp_path)
    refused = run(work, "flow.py", "--runner", "direct", "--server", str(tmp_path / "s.sock"))
    assert refused.returncode == 2
    assert len(error_lines(refused.stderr)) == 1
    assert "drop --runner direct" in refused.stderr
    here = run(work, "flow.py", "--runner", "direct", FLOWCORE_SERVER=str(tmp_path / "s.sock"))
    assert here.returncode == 0, here.stderr
    assert "tiny on direct" in here.stdout
