"""FetchSFTP against a real SFTP server (paramiko's, on loopback)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flowcore.testing import TestRunner
from processors.sftp.fetch_sftp import FetchSFTP
from tests.processors.sftp.sftp_server import PASSWORD, SftpServer, configure


def _runner(server: SftpServer, **more: str) -> TestRunner:
    runner = TestRunner(FetchSFTP())
    configure(runner, server, **{"Remote File": "${path}/${filename}", **more})
    return runner


def test_fetch_with_attributes_and_fetch_event(sftp_server: SftpServer, remote: Path) -> None:
    """The remote file becomes the content; sftp.* attributes, a FETCH event; None keeps it."""
    (remote / "a.txt").write_bytes(b"remote content")
    runner = _runner(sftp_server)
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "a.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_content_equals(b"remote content")
    out.assert_attribute_equals("sftp.remote.host", "127.0.0.1")
    out.assert_attribute_equals("sftp.remote.port", str(sftp_server.port))
    out.assert_attribute_equals("filename", "a.txt")
    fetch = runner.provenance_events[0]
    assert fetch.event_type.name == "FETCH"
    assert fetch.transit_uri == f"sftp://127.0.0.1:{sftp_server.port}/{remote.name}/a.txt"
    assert (remote / "a.txt").exists()


def test_delete_and_move_completion(sftp_server: SftpServer, remote: Path) -> None:
    """Delete File removes the remote file; Move File moves it (creating the directory)."""
    (remote / "d.txt").write_bytes(b"d")
    (remote / "m.txt").write_bytes(b"m")
    runner = _runner(sftp_server, **{"Completion Strategy": "Delete File"})
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "d.txt"})
    runner.run()
    assert not (remote / "d.txt").exists()
    runner = _runner(
        sftp_server, **{"Completion Strategy": "Move File", "Create Directory": "true",
                        "Move Destination Directory": f"/{remote.name}/done"},
    )  # fmt: skip
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "m.txt"})
    runner.run()
    assert (remote / "done" / "m.txt").read_bytes() == b"m"
    assert not (remote / "m.txt").exists()


def test_missing_file_goes_to_not_found(sftp_server: SftpServer, remote: Path) -> None:
    """A file that does not exist: not.found, penalized, fetch.failure.reason."""
    runner = _runner(sftp_server)
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "nope"})
    runner.run()
    runner.assert_all_flowfiles_transferred("not.found", 1)
    runner.flowfiles_for("not.found")[0].assert_attribute_equals(
        "fetch.failure.reason", "not.found"
    )


def test_refused_password_is_a_comms_failure_without_the_secret(
    sftp_server: SftpServer, remote: Path, caplog: Any
) -> None:
    """A wrong password: comms.failure; neither password appears in logs or attributes."""
    runner = _runner(sftp_server, Password="wrong-password-123")
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "x"})
    runner.run()
    runner.assert_all_flowfiles_transferred("comms.failure", 1)
    out = runner.flowfiles_for("comms.failure")[0]
    for secret in ("wrong-password-123", PASSWORD):
        assert secret not in caplog.text
        assert all(secret not in v for v in out.attributes.values())


def test_unreachable_server_is_a_comms_failure() -> None:
    """Nothing listening: comms.failure within the Connection Timeout."""
    from tests.processors.aws.s3_server import free_port

    runner = TestRunner(FetchSFTP())
    runner.set_property("Hostname", "127.0.0.1")
    runner.set_property("Port", str(free_port()))
    runner.set_property("Username", "u")
    runner.set_property("Connection Timeout", "2 sec")
    runner.set_property("Remote File", "/x")
    runner.enqueue(b"")
    runner.run()
    runner.assert_all_flowfiles_transferred("comms.failure", 1)


def test_key_auth_and_strict_host_key_checking(sftp_server: SftpServer, remote: Path) -> None:
    """A private key with the server's key in Host Key File works; a wrong host key fails."""
    (remote / "k.txt").write_bytes(b"k")
    runner = TestRunner(FetchSFTP())
    configure(runner, sftp_server, **{"Remote File": "${path}/${filename}"})
    runner.remove_property("Password")
    runner.set_property("Private Key Path", str(sftp_server.client_key))
    runner.set_property("Host Key File", str(sftp_server.known_hosts))
    runner.set_property("Strict Host Key Checking", "true")
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "k.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    wrong = sftp_server.known_hosts.parent / "other_hosts"
    import paramiko

    other = paramiko.RSAKey.generate(1024)
    wrong.write_text(f"[127.0.0.1]:{sftp_server.port} ssh-rsa {other.get_base64()}\n")
    runner = _runner(
        sftp_server, **{"Host Key File": str(wrong), "Strict Host Key Checking": "true"}
    )
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "k.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("comms.failure", 1)
