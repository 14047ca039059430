"""FetchSFTP against a real SFTP server (paramiko's, on loopback)."""

from __future__ import annotations

import json
import logging
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


def test_log_level_when_file_not_found(sftp_server: SftpServer, remote: Path, caplog: Any) -> None:
    """NiFi's Log Level When File Not Found (old name accepted): WARN logs a warning, NONE
    nothing; the FlowFile goes to not.found either way."""
    for name, level, expected in (
        ("Log Level When File Not Found", "WARN", [logging.WARNING]),
        ("fetchfiletransfer-notfound-loglevel", "NONE", []),
    ):
        caplog.clear()
        runner = _runner(sftp_server, **{name: level})
        runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "nope"})
        with caplog.at_level(logging.DEBUG, logger="flowcore.processors"):
            runner.run()
        runner.assert_all_flowfiles_transferred("not.found", 1)
        found = [r.levelno for r in caplog.records if "routing to not.found" in r.getMessage()]
        assert found == expected, level


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


def test_completion_waits_for_the_commit_and_a_rollback_keeps_the_file(
    sftp_server: SftpServer, remote: Path
) -> None:
    """Delete File happens only when the session commits (NiFi's commitAsync): fetched but
    rolled back (a crash, a failed task), the remote file stays for the replay."""
    (remote / "r.txt").write_bytes(b"r")
    runner = _runner(sftp_server, **{"Completion Strategy": "Delete File"})
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "r.txt"})
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    assert (remote / "r.txt").exists()
    session.rollback()
    assert (remote / "r.txt").exists()
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    session.commit()
    assert not (remote / "r.txt").exists()


def test_completion_actions_are_idempotent_and_hold_no_secret(
    sftp_server: SftpServer, remote: Path, caplog: Any
) -> None:
    """Carried out again (a start-up after a crash), a delete or move already done is done,
    without a warning; the recorded action names no password, even one from an attribute."""
    (remote / "m.txt").write_bytes(b"m")
    runner = _runner(
        sftp_server, Password="${secret}",
        **{"Completion Strategy": "Move File", "Create Directory": "true",
           "Move Destination Directory": f"/{remote.name}/done"},
    )  # fmt: skip
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "m.txt", "secret": PASSWORD})
    session = runner.create_session()
    runner.processor.on_trigger(runner.context, session)
    actions = [dict(a.payload) for a in session._effects._actions]
    assert [a["move_to"] for a in actions] == [f"/{remote.name}/done/m.txt"]
    assert PASSWORD not in json.dumps({k: v for k, v in actions[0].items() if k != "attributes"})
    session.commit()
    assert (remote / "done" / "m.txt").read_bytes() == b"m"
    with caplog.at_level(logging.WARNING):
        runner.processor.run_after_commit_actions(runner.context, actions)
        delete = {**actions[0], "remote": f"/{remote.name}/gone.txt"}
        del delete["move_to"]
        runner.processor.run_after_commit_actions(runner.context, [delete])
    assert "failed to perform" not in caplog.text
    assert (remote / "done" / "m.txt").exists()


def test_a_completion_that_fails_is_a_warning(sftp_server: SftpServer, remote: Path) -> None:
    """Move File into a directory that does not exist (Create Directory false): the FlowFile
    still goes to success, the file stays, a warning names the cause (NiFi's)."""
    (remote / "w.txt").write_bytes(b"w")
    runner = _runner(
        sftp_server, **{"Completion Strategy": "Move File",
                        "Move Destination Directory": f"/{remote.name}/missing"},
    )  # fmt: skip
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "w.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / "w.txt").exists()


def test_move_completion_overwrites_existing_destination(
    sftp_server: SftpServer, remote: Path
) -> None:
    """NiFi's testMoveCompletionStrategyOverwritesExistingDestinationFile: Move Conflict
    Resolution REPLACE deletes the destination before the rename; FAIL leaves the source."""
    (remote / "src.txt").write_bytes(b"new")
    (remote / "done").mkdir()
    (remote / "done" / "src.txt").write_bytes(b"old content")
    runner = _runner(
        sftp_server,
        **{
            "Completion Strategy": "Move File",
            "Move Destination Directory": f"/{remote.name}/done",
            "Move Conflict Resolution": "REPLACE",
        },
    )
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "src.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert not (remote / "src.txt").exists()
    assert (remote / "done" / "src.txt").read_bytes() == b"new"
    (remote / "src.txt").write_bytes(b"newer")
    runner = _runner(
        sftp_server,
        **{
            "Completion Strategy": "Move File",
            "Move Destination Directory": f"/{remote.name}/done",
        },
    )
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "src.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)  # FAIL (the default): the data kept
    assert (remote / "src.txt").read_bytes() == b"newer"
    assert (remote / "done" / "src.txt").read_bytes() == b"new"


def test_move_replace_onto_itself_keeps_the_file(sftp_server: SftpServer, remote: Path) -> None:
    """Move File with REPLACE into the file's own directory (spelled ``dir/.``) moves nothing:
    the source is not removed as the destination it also is."""
    (remote / "same.txt").write_bytes(b"kept")
    runner = _runner(
        sftp_server,
        **{
            "Completion Strategy": "Move File",
            "Move Destination Directory": f"/{remote.name}/.",
            "Move Conflict Resolution": "REPLACE",
        },
    )
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "same.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / "same.txt").read_bytes() == b"kept"


def test_allowed_algorithms_narrow_what_the_connection_uses(sftp_server: SftpServer) -> None:
    """Ciphers, Key Exchange, MAC and Key Algorithms Allowed: the connection uses those named;
    Use Compression negotiates zlib, Send Keep Alive On Timeout sends keep-alives every 5 s."""
    from processors.sftp import _sftp

    runner = _runner(sftp_server, **{
        "Ciphers Allowed": "aes192-cbc, no-such-cipher",
        "Key Exchange Algorithms Allowed": "diffie-hellman-group14-sha256",
        "Message Authentication Codes Allowed": "hmac-sha1",
        "Key Algorithms Allowed": "rsa-sha2-256", "Use Compression": "true",
        "Send Keep Alive On Timeout": "true",
    })  # fmt: skip
    with _sftp.connect(runner.context) as connection:
        transport = connection.ssh.get_transport()
        assert transport.local_cipher == transport.remote_cipher == "aes192-cbc"
        assert transport.local_mac == "hmac-sha1"
        assert transport.preferred_kex == ("diffie-hellman-group14-sha256",)  # all it offers
        assert transport.host_key_type == "rsa-sha2-256"
        assert transport.local_compression in {"zlib", "zlib@openssh.com"}  # Use Compression
        assert transport.packetizer._Packetizer__keepalive_interval == 5


def test_an_algorithm_list_naming_nothing_supported_is_invalid(sftp_server: SftpServer) -> None:
    """Ciphers Allowed naming only unknown ciphers: invalid, the message lists the known ones."""
    runner = _runner(sftp_server, **{"Ciphers Allowed": "blowfish-cbc"})
    problems = [str(p) for p in runner.validation_problems()]
    assert any("Ciphers Allowed" in p and "aes128-ctr" in p for p in problems), problems


def test_move_with_disable_directory_listing(sftp_server: SftpServer, remote: Path) -> None:
    """Move File with Create Directory and Disable Directory Listing makes the nested
    destination blindly; a destination already there is no error."""
    for name in ("1.txt", "2.txt"):
        (remote / name).write_bytes(name.encode())
    runner = _runner(sftp_server, **{
        "Completion Strategy": "Move File", "Create Directory": "true",
        "Disable Directory Listing": "true", "Move Destination Directory": f"/{remote.name}/x/y",
    })  # fmt: skip
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "1.txt"})
    runner.enqueue(b"", {"path": f"/{remote.name}", "filename": "2.txt"})
    runner.run(2)
    runner.assert_all_flowfiles_transferred("success", 2)
    assert sorted(p.name for p in (remote / "x" / "y").iterdir()) == ["1.txt", "2.txt"]
