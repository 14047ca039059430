"""PutSFTP against a real SFTP server (paramiko's, on loopback)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from flowcore.testing import TestRunner
from processors.sftp.put_sftp import PutSFTP
from tests.processors.sftp.sftp_server import (
    POSIX_RENAME_FAILS,
    POSIX_RENAME_OFF,
    REFUSE_RENAME,
    REFUSE_SETSTAT,
    SftpServer,
    configure,
)


def _runner(server: SftpServer, remote: Path, **more: str) -> TestRunner:
    runner = TestRunner(PutSFTP())
    configure(runner, server, **{"Remote Path": f"/{remote.name}", **more})
    return runner


def test_put_with_dot_rename_and_send_event(sftp_server: SftpServer, remote: Path) -> None:
    """The content lands under its filename, no dot-file left; a SEND event names it."""
    runner = _runner(sftp_server, remote)
    runner.enqueue(b"payload", {"filename": "p.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / "p.txt").read_bytes() == b"payload"
    assert sorted(p.name for p in remote.iterdir()) == ["p.txt"]
    send = runner.provenance_events[0]
    assert send.event_type.name == "SEND"
    assert send.transit_uri == f"sftp://127.0.0.1:{sftp_server.port}/{remote.name}/p.txt"


def test_create_directory_and_permissions(sftp_server: SftpServer, remote: Path) -> None:
    """Create Directory makes the remote path; Permissions sets the mode."""
    runner = TestRunner(PutSFTP())
    configure(
        runner, sftp_server,
        **{"Remote Path": f"/{remote.name}/a/b", "Create Directory": "true", "Permissions": "600"},
    )  # fmt: skip
    runner.enqueue(b"x", {"filename": "f"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / "a" / "b" / "f").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    ("conflict", "relationship", "content", "names"),
    [
        ("REPLACE", "success", b"new", ["c"]),
        ("IGNORE", "success", b"old", ["c"]),
        ("REJECT", "reject", b"old", ["c"]),
        ("FAIL", "failure", b"old", ["c"]),
        ("RENAME", "success", b"old", ["1.c", "c"]),
    ],
)
def test_conflict_resolution(  # noqa: PLR0917 (pytest's parameters)
    sftp_server: SftpServer, remote: Path, conflict: str, relationship: str, content: bytes,
    names: list[str],
) -> None:  # fmt: skip
    """Each Conflict Resolution as NiFi's (NiFi's TestPutSFTP conflict cases)."""
    (remote / "c").write_bytes(b"old")
    runner = _runner(sftp_server, remote, **{"Conflict Resolution": conflict})
    runner.enqueue(b"new", {"filename": "c"})
    runner.run()
    runner.assert_all_flowfiles_transferred(relationship, 1)
    assert (remote / "c").read_bytes() == content
    assert sorted(p.name for p in remote.iterdir()) == names


def test_zero_byte_file_is_rejected(sftp_server: SftpServer, remote: Path) -> None:
    """Reject Zero-Byte Files (true by default) routes an empty FlowFile to reject."""
    runner = _runner(sftp_server, remote)
    runner.enqueue(b"", {"filename": "empty"})
    runner.run()
    runner.assert_all_flowfiles_transferred("reject", 1)


def test_refused_password_fails(sftp_server: SftpServer, remote: Path) -> None:
    """A wrong password: failure, penalized; nothing written."""
    runner = _runner(sftp_server, remote, Password="nope-password")
    runner.enqueue(b"x", {"filename": "f"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert list(remote.iterdir()) == []


def test_conflict_with_a_directory_is_rejected(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's PutFileTransfer rule: a directory of the file's name rejects the FlowFile
    whatever the Conflict Resolution (here REPLACE)."""
    (remote / "d").mkdir()
    runner = _runner(sftp_server, remote, **{"Conflict Resolution": "REPLACE"})
    runner.enqueue(b"new", {"filename": "d"})
    runner.run()
    runner.assert_all_flowfiles_transferred("reject", 1)
    assert (remote / "d").is_dir()


def test_conflict_resolution_none_overwrites(sftp_server: SftpServer, remote: Path) -> None:
    """Conflict Resolution NONE (the default) sends the file over the existing one."""
    (remote / "c").write_bytes(b"old")
    runner = _runner(sftp_server, remote)
    runner.enqueue(b"new", {"filename": "c"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / "c").read_bytes() == b"new"


def test_zero_byte_file_allowed(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunZeroByteFileAllowed: Reject Zero-Byte Files false sends an empty file."""
    runner = _runner(sftp_server, remote, **{"Reject Zero-Byte Files": "false"})
    runner.enqueue(b"", {"filename": "empty"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / "empty").read_bytes() == b""


def test_batching(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunBatching: a trigger sends at most Batch Size FlowFiles."""
    runner = _runner(sftp_server, remote, **{"Batch Size": "2"})
    for number in range(1, 5):
        runner.enqueue(b"x", {"filename": str(number)})
    runner.run()
    runner.assert_transfer_count("success", 2)
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 2)
    runner.assert_queue_empty()


def test_set_last_modified_time(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunSetLastModifiedTime: Last Modified Time sets the remote file's mtime."""
    runner = _runner(sftp_server, remote, **{"Last Modified Time": "2024-03-04T05:06:07+0000"})
    runner.enqueue(b"x", {"filename": "m"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert int((remote / "m").stat().st_mtime) == 1709528767


def test_a_refused_setstat_is_logged_and_the_file_delivered(
    sftp_server: SftpServer, remote: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A server refusing setstat (Last Modified Time, Permissions): NiFi logs it and the
    delivered file's FlowFile goes to success, so a retry does not send it twice."""
    runner = _runner(
        sftp_server, remote,
        **{"Last Modified Time": "2024-03-04T05:06:07+0000", "Permissions": "600",
           "Conflict Resolution": "RENAME"},
    )  # fmt: skip
    name = f"{REFUSE_SETSTAT}.txt"
    runner.enqueue(b"x", {"filename": name})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert sorted(p.name for p in remote.iterdir()) == [name]
    assert "Failed to set lastModifiedTime" in caplog.text
    assert "Failed to set permission" in caplog.text


def test_a_batch_shares_one_connection(sftp_server: SftpServer, remote: Path) -> None:
    """A batch to one server opens one SSH connection, not one per FlowFile."""
    runner = _runner(sftp_server, remote, **{"Batch Size": "3"})
    for number in range(3):
        runner.enqueue(b"x", {"filename": f"c{number}"})
    before = sftp_server.connections
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 3)
    assert sftp_server.connections - before == 1


def test_a_flowfile_failing_part_way_fails_alone(sftp_server: SftpServer, remote: Path) -> None:
    """A non-SFTP error on the second FlowFile of a batch (its Temporary Filename cannot be
    evaluated) routes it alone to failure: the first and third stay sent, once, with RENAME."""
    runner = _runner(
        sftp_server, remote,
        **{"Temporary Filename": "${year:toDate('yyyy'):format('yyyy')}.part",
           "Conflict Resolution": "RENAME"},
    )  # fmt: skip
    for name, year in (("a", "2024"), ("b", "not a year"), ("c", "2025")):
        runner.enqueue(name.encode(), {"filename": name, "year": year})
    runner.run()
    runner.assert_transfer_count("success", 2)
    runner.assert_transfer_count("failure", 1)
    runner.flowfiles_for("failure")[0].assert_attribute_equals("filename", "b")
    assert sorted(p.name for p in remote.iterdir()) == ["a", "c"]


def test_remote_owner_and_group(sftp_server: SftpServer, remote: Path, caplog: Any) -> None:
    """Remote Owner and Remote Group set the file's ids; a non-numeric one is logged and the
    file delivered all the same (NiFi's setStat warning)."""
    runner = _runner(sftp_server, remote, **{"Remote Owner": "${owner}", "Remote Group": "4321"})
    runner.enqueue(b"owned", {"filename": "o.txt", "owner": "1234"})
    runner.enqueue(b"named", {"filename": "n.txt", "owner": "nobody"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    info = (remote / "o.txt").stat()
    assert (info.st_uid, info.st_gid) == (1234, 4321)
    assert (remote / "n.txt").read_bytes() == b"named"
    assert "Remote Owner and Remote Group take numeric ids" in caplog.text


def test_disable_directory_listing_creates_without_looking(
    sftp_server: SftpServer, remote: Path
) -> None:
    """Create Directory with Disable Directory Listing makes missing directories blindly, and
    a directory already there is no error."""
    runner = _runner(sftp_server, remote, **{
        "Remote Path": f"/{remote.name}/a/b", "Create Directory": "true",
        "Disable Directory Listing": "true",
    })  # fmt: skip
    runner.enqueue(b"1", {"filename": "one"})
    runner.enqueue(b"2", {"filename": "two"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    assert sorted(p.name for p in (remote / "a" / "b").iterdir()) == ["one", "two"]


def test_rename_gives_up_after_99_names(sftp_server: SftpServer, remote: Path) -> None:
    """RENAME tries 1.<name> to 99.<name>; all taken, the FlowFile is rejected, unpenalized."""
    for n in ["", *(f"{i}." for i in range(1, 100))]:
        (remote / f"{n}r").write_bytes(b"old")
    runner = _runner(sftp_server, remote, **{"Conflict Resolution": "RENAME"})
    runner.enqueue(b"new", {"filename": "r"})
    runner.run()
    runner.assert_all_flowfiles_transferred("reject", 1)
    assert not runner.flowfiles_for("reject")[0].is_penalized(int(time.time() * 1000))
    assert len(list(remote.iterdir())) == 100


def test_none_onto_a_directory_fails_and_leaves_no_temporary_file(
    sftp_server: SftpServer, remote: Path
) -> None:
    """Conflict Resolution NONE does not look first: onto a directory the rename fails, the
    FlowFile goes to failure and the dot-file is removed (NiFi's SFTPTransfer.put)."""
    (remote / "d").mkdir()
    runner = _runner(sftp_server, remote)
    runner.enqueue(b"new", {"filename": "d"})
    runner.run()
    runner.assert_all_flowfiles_transferred("failure", 1)
    assert sorted(p.name for p in remote.iterdir()) == ["d"]


def test_temporary_filename_and_no_dot_rename(
    sftp_server: SftpServer, remote: Path, caplog: Any
) -> None:
    """Temporary Filename names the upload (under the Remote Path, a sub-path kept) until its
    rename; Dot Rename false uploads under the final name (a refused setstat logs the path)."""
    (remote / "tmp").mkdir()
    runner = _runner(sftp_server, remote, **{
        "Temporary Filename": f"tmp/{REFUSE_SETSTAT}-${{filename}}", "Permissions": "600",
    })  # fmt: skip
    runner.enqueue(b"t", {"filename": "t.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert f"/{remote.name}/tmp/{REFUSE_SETSTAT}-t.txt" in caplog.text
    assert (remote / "t.txt").read_bytes() == b"t"
    assert list((remote / "tmp").iterdir()) == []
    caplog.clear()
    runner = _runner(sftp_server, remote, **{"Dot Rename": "false", "Permissions": "600"})
    runner.enqueue(b"d", {"filename": f"{REFUSE_SETSTAT}.txt"})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert f"on /{remote.name}/{REFUSE_SETSTAT}.txt to 600" in caplog.text


@pytest.mark.parametrize(
    "name", [f"{REFUSE_RENAME}.txt", f"{POSIX_RENAME_OFF}.txt", f"{POSIX_RENAME_FAILS}.txt"]
)
def test_replacing_renames_in_one_step_when_the_server_can(
    sftp_server: SftpServer, remote: Path, name: str
) -> None:
    """posix-rename@openssh.com replaces the old file in one step (remove-then-rename lost
    both when the rename failed); a server without it gets remove-then-rename, whatever
    failure it answers the extension with."""
    (remote / name).write_bytes(b"old")
    runner = _runner(sftp_server, remote)
    runner.enqueue(b"new", {"filename": name})
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    assert (remote / name).read_bytes() == b"new"
    assert sorted(p.name for p in remote.iterdir()) == [name]
