"""``flowcore ui``'s mistakes: each is one line and exit status 2, before anything is served."""

from __future__ import annotations

import socket
from pathlib import Path

from flowcore.cli import main
from flowcore.cli.ui import is_loopback
from tests.flowcore.ui.conftest import ran  # noqa: F401  (the fixture: a real run's repository)


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert err.startswith("error:")
    return err


def test_a_missing_flow_file_is_one_line(ran, capsys, tmp_path: Path) -> None:  # noqa: F811
    """A flow file that does not exist names it."""
    status = main(["ui", str(tmp_path / "nope.py"), "--repository", ran.repository])
    assert status == 2
    assert "nope.py does not exist" in _one_line_error(capsys)


def test_a_directory_without_a_repository_is_one_line(ran, capsys, tmp_path: Path) -> None:  # noqa: F811
    """A --repository with no flowcore repository says how to fix it."""
    assert main(["ui", ran.flow, "--repository", str(tmp_path)]) == 2
    assert "holds no flowcore repository" in _one_line_error(capsys)


def test_another_flows_repository_is_one_line(ran, capsys, tmp_path: Path) -> None:  # noqa: F811
    """A repository that belongs to another flow names both flows."""
    other = tmp_path / "other.py"
    other.write_text("from flowcore import Flow\nflow = Flow('other')\n")
    assert main(["ui", str(other), "--repository", ran.repository]) == 2
    error = _one_line_error(capsys)
    assert "belongs to flow 'ui-test', not 'other'" in error


def test_a_busy_port_is_one_line(ran, capsys) -> None:  # noqa: F811
    """A port another program listens on is named, with --port as the fix."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert main(["ui", ran.flow, "--repository", ran.repository, "--port", str(port)]) == 2
    assert f"port {port} on 127.0.0.1 is in use; pass another with --port" in _one_line_error(
        capsys
    )


def test_loopback_addresses() -> None:
    """Loopback needs no token; anything else does."""
    assert all(is_loopback(h) for h in ("127.0.0.1", "127.8.0.1", "::1", "localhost"))
    assert not any(is_loopback(h) for h in ("0.0.0.0", "192.0.2.1", "example.org", "::"))
