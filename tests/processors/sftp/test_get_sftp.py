"""GetSFTP against a real SFTP server (paramiko's, on loopback)."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from flowcore import Flow
from flowcore.driver.controller import Controller
from flowcore.runners.direct import DirectRunner
from flowcore.testing import TestRunner
from processors import PutFile
from processors.sftp.get_sftp import GetSFTP
from repositories.repository_set import RepositorySet
from tests.processors.sftp.sftp_server import PASSWORD, USER, SftpServer, configure


def _runner(server: SftpServer, remote: Path, **more: str) -> TestRunner:
    runner = TestRunner(GetSFTP())
    configure(runner, server, **{"Remote Path": f"/{remote.name}", **more})
    return runner


def _files(remote: Path, **files: bytes) -> None:
    for name, data in files.items():
        (remote / name).parent.mkdir(parents=True, exist_ok=True)
        (remote / name).write_bytes(data)


def test_pulls_files_with_nifi_attributes_and_deletes_them(
    sftp_server: SftpServer, remote: Path
) -> None:
    """Each file becomes a FlowFile with NiFi's attributes and a RECEIVE event; Delete
    Original (the default) removes it once the session committed."""
    _files(remote, **{"a.txt": b"alpha", "b.txt": b"beta"})
    os.utime(remote / "a.txt", (1_600_000_000, 1_600_000_000))
    runner = _runner(sftp_server, remote)
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 2)
    out = {f.attributes["filename"]: f for f in runner.flowfiles_for("success")}
    out["a.txt"].assert_content_equals(b"alpha")
    out["b.txt"].assert_content_equals(b"beta")
    a = out["a.txt"]
    a.assert_attribute_equals("path", f"/{remote.name}/")
    a.assert_attribute_equals("absolute.path", f"/{remote.name}/")
    a.assert_attribute_equals("getsftp.remote.source", "127.0.0.1")
    a.assert_attribute_equals("sftp.remote.port", str(sftp_server.port))
    a.assert_attribute_equals("file.lastModifiedTime", "2020-09-13T12:26:40+0000")
    a.assert_attribute_equals("file.permissions", "rw-r--r--")
    a.assert_attribute_equals("file.owner", str(os.getuid()))
    receive = [e for e in runner.provenance_events if e.event_type.name == "RECEIVE"]
    assert sorted(e.transit_uri for e in receive) == [
        f"sftp://127.0.0.1//{remote.name}/a.txt",
        f"sftp://127.0.0.1//{remote.name}/b.txt",
    ]
    assert list(remote.iterdir()) == []


def test_filters_dotted_files_recursion_and_max_selects(
    sftp_server: SftpServer, remote: Path
) -> None:
    """File Filter Regex, Path Filter Regex, Ignore Dotted Files, Search Recursively and
    Natural Ordering select the files; Max Selects bounds one trigger."""
    _files(remote, **{"a.csv": b"1", "b.csv": b"2", "c.txt": b"3", ".d.csv": b"4",
                      "sub/e.csv": b"5", "skip/f.csv": b"6"})  # fmt: skip
    runner = _runner(
        sftp_server, remote, **{"File Filter Regex": r".*\.csv", "Search Recursively": "true",
                                "Path Filter Regex": "sub", "Max Selects": "2",
                                "Use Natural Ordering": "true"},
    )  # fmt: skip
    runner.run(1, stop_on_finish=False)
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == [
        "a.csv", "b.csv",
    ]  # fmt: skip
    runner.run(1, initialize=False)  # the same schedule: the queued listing goes on
    names = [f.attributes["filename"] for f in runner.flowfiles_for("success")]
    assert names == ["a.csv", "b.csv", "e.csv"]
    assert runner.flowfiles_for("success")[2].attributes["path"] == f"/{remote.name}/sub/"
    assert sorted(p.name for p in remote.rglob("*") if p.is_file()) == [".d.csv", "c.txt", "f.csv"]


def test_without_delete_original_each_poll_pulls_again(
    sftp_server: SftpServer, remote: Path
) -> None:
    """Delete Original false keeps the files, and the next poll (after Polling Interval) pulls
    them again, as NiFi's GetSFTP; before it, nothing is pulled."""
    _files(remote, **{"k.txt": b"k"})
    runner = _runner(
        sftp_server, remote, **{"Delete Original": "false", "Polling Interval": "1 sec"}
    )
    runner.run()
    runner.run()
    assert len(runner.flowfiles_for("success")) == 1
    time.sleep(1.1)
    runner.run()
    assert len(runner.flowfiles_for("success")) == 2
    assert (remote / "k.txt").exists()


def test_refused_password_fails_the_trigger_without_the_secret(
    sftp_server: SftpServer, remote: Path, caplog: Any
) -> None:
    """A wrong password: nothing is pulled or deleted, the error names SFTP and the cause,
    and neither password appears in the logs."""
    _files(remote, **{"x.txt": b"x"})
    runner = _runner(sftp_server, remote, Password="wrong-password-456")
    with pytest.raises(Exception, match="Authentication failed") as refused:
        runner.run()
    assert "wrong-password-456" not in str(refused.value)
    assert runner.flowfiles_for("success") == []
    assert (remote / "x.txt").exists()
    for secret in ("wrong-password-456", PASSWORD):
        assert secret not in caplog.text


def test_needs_a_password_or_a_private_key() -> None:
    """NiFi's rule: neither is invalid, naming Password."""
    runner = TestRunner(GetSFTP())
    runner.set_property("Hostname", "127.0.0.1")
    runner.set_property("Username", USER)
    runner.assert_not_valid()
    assert any(p.subject == "Password" for p in runner.validation_problems())


def test_a_run_pulls_each_file_once_and_deletes_it_after_the_commit(
    sftp_server: SftpServer, remote: Path, tmp_path: Path
) -> None:
    """Through the engine: every file is written once downstream, and gone from the server
    afterwards (deleted by the after-commit action); the effect files are gone too."""
    data = {f"g{n}.txt": f"{n}".encode() * 10 for n in range(7)}
    _files(remote, **data)
    flow = Flow("get-sftp")
    get = flow.add(
        GetSFTP(**{"Hostname": "127.0.0.1", "Port": str(sftp_server.port), "Username": USER,
                   "Password": PASSWORD, "Remote Path": f"/{remote.name}",
                   "Max Selects": "3"}),
        name="get",
    )  # fmt: skip
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(get, put)
    flow.auto_terminate(put, ["success", "failure"])
    repos = RepositorySet.open(tmp_path / "repo")
    try:
        result = Controller(flow, DirectRunner(), repos).run()
    finally:
        repos.close()
    assert result.count("get", "success") == 7
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == data
    assert list(remote.iterdir()) == []


def _nifi_runner(server: SftpServer, remote: Path) -> TestRunner:
    """NiFi's TestGetSFTP set-up (Remote Path the test's directory instead of the root)."""
    return _runner(
        server, remote, **{"Send Keep Alive On Timeout": "false", "Data Timeout": "30 sec",
                           "Polling Interval": "60 sec", "Search Recursively": "false",
                           "Ignore Dotted Files": "true", "Delete Original": "true",
                           "Max Selects": "100", "Remote Poll Batch Size": "5000"},
    )  # fmt: skip


def test_nifi_run_files_found(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunFilesFound: four empty files pulled, all deleted."""
    _files(remote, **{f"testFile{n}.txt": b"" for n in range(1, 5)})
    runner = _nifi_runner(sftp_server, remote)
    runner.run()
    runner.assert_transfer_count("success", 4)
    assert list(remote.iterdir()) == []


def test_nifi_run_dotted_files_ignored(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunDottedFilesIgnored: dotted files stay, the others are pulled."""
    _files(remote, **{"testFile1.txt": b"", ".testFile2.txt": b"", "testFile3.txt": b"",
                      ".testFile4.txt": b""})  # fmt: skip
    runner = _nifi_runner(sftp_server, remote)
    runner.run()
    runner.assert_transfer_count("success", 2)
    assert sorted(p.name for p in remote.iterdir()) == [".testFile2.txt", ".testFile4.txt"]


def test_nifi_run_when_user_home_not_found(
    sftp_server: SftpServer, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NiFi's testRunNoExceptionWhenUserHomeNotFound: a local home directory that does not
    exist (no ~/.ssh) does not stop GetSFTP."""
    monkeypatch.setenv("HOME", "/directory-not-found")
    _files(remote, **{"testFile1.txt": b"1"})
    runner = _nifi_runner(sftp_server, remote)
    runner.run()
    runner.assert_transfer_count("success", 1)


def test_remote_poll_batch_size_bounds_each_poll(sftp_server: SftpServer, remote: Path) -> None:
    """Remote Poll Batch Size: a poll lists at most that many files (the rest wait for the next
    poll); 0 lists none, as NiFi's getListing."""
    _files(remote, **{"a": b"1", "b": b"2", "c": b"3"})
    runner = _runner(sftp_server, remote, **{"Remote Poll Batch Size": "2"})
    runner.run()
    runner.assert_transfer_count("success", 2)
    assert len(list(remote.iterdir())) == 1
    runner = _runner(sftp_server, remote, **{"Remote Poll Batch Size": "0"})
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_a_refused_password_ends_a_run_in_one_line(
    sftp_server: SftpServer, remote: Path, tmp_path: Path
) -> None:
    """GetSFTP with a wrong password: one line naming it and paramiko's reason, no password;
    the run ends (flowcore run exits 2) and nothing on the server is touched."""
    from tests.processors.sftp.test_list_sftp import run_sftp_source

    (remote / "kept.txt").write_bytes(b"kept")
    source = GetSFTP(
        hostname=sftp_server.host,
        port=str(sftp_server.port),
        username=USER,
        password="wrong-Pa55word",
        remote_path=f"/{remote.name}",
        connection_timeout="5 sec",
    )
    result = run_sftp_source(tmp_path, source)
    (line,) = result.list_failed.values()
    assert line.startswith("GetSFTP 'Remote files' could not list: AuthenticationException")
    assert "wrong-Pa55word" not in line
    assert (remote / "kept.txt").read_bytes() == b"kept"
