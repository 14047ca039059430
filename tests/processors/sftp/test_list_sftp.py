"""ListSFTP against a real SFTP server (paramiko's, on loopback)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from flowcore.testing import TestRunner
from processors.sftp.list_sftp import ListSFTP
from tests.processors.sftp.sftp_server import USER, SftpServer, configure


def _old(path: Path, data: bytes, age: int = 120) -> None:
    path.write_bytes(data)
    when = time.time() - age
    os.utime(path, (when, when))


def test_list_with_attributes_then_only_new_files(sftp_server: SftpServer, remote: Path) -> None:
    """Each file once with NiFi's attributes; a second listing emits only a newer file."""
    _old(remote / "a.txt", b"aa")
    _old(remote / ".hidden", b"h")
    (remote / "sub").mkdir()
    _old(remote / "sub" / "b.txt", b"b")
    runner = TestRunner(ListSFTP())
    configure(
        runner, sftp_server, **{"Remote Path": f"/{remote.name}", "Search Recursively": "true"}
    )
    runner.run()
    out = runner.flowfiles_for("success")
    assert sorted((f.attributes["path"], f.attributes["filename"]) for f in out) == [
        (f"/{remote.name}", "a.txt"), (f"/{remote.name}/sub", "b.txt"),
    ]  # fmt: skip
    first = next(f for f in out if f.attributes["filename"] == "a.txt")
    first.assert_attribute_equals("file.size", "2")
    first.assert_attribute_equals("sftp.remote.host", "127.0.0.1")
    first.assert_attribute_equals("sftp.listing.user", USER)
    assert first.attributes["file.permissions"].startswith("rw")
    assert "listing.timestamp" in runner.get_state().values
    runner.run()
    assert len(runner.flowfiles_for("success")) == 2
    _old(remote / "c.txt", b"c", age=60)
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")][2:] == ["c.txt"]


def test_file_filter_and_min_size(sftp_server: SftpServer, remote: Path) -> None:
    """File Filter Regex and Minimum File Size select the files listed."""
    _old(remote / "x.csv", b"12345")
    _old(remote / "y.csv", b"1")
    _old(remote / "z.txt", b"12345")
    runner = TestRunner(ListSFTP())
    configure(
        runner,
        sftp_server,
        **{
            "Remote Path": f"/{remote.name}",
            "File Filter Regex": r".*\.csv",
            "Minimum File Size": "3 B",
        },
    )
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["x.csv"]


def test_run_file_found_attributes(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunFileFound: every listed file carries NiFi's remote and file.* attributes."""
    for name in ("1.txt", "2.txt", "3.txt"):
        _old(remote / name, b"x")
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}"})
    runner.run()
    outs = runner.flowfiles_for("success")
    assert len(outs) == 3
    names = {
        "sftp.remote.host", "sftp.remote.port", "sftp.listing.user", "file.owner", "file.group",
        "file.permissions", "file.size", "file.lastModifiedTime", "filename",
    }  # fmt: skip
    for out in outs:
        assert names <= set(out.attributes), names - set(out.attributes)
    outs[0].assert_attribute_equals("sftp.remote.port", str(sftp_server.port))
    outs[0].assert_attribute_equals("sftp.listing.user", USER)


def test_run_file_not_found_min_size_filtered(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testRunFileNotFoundMinSizeFiltered: Minimum File Size 1KB lists no small file."""
    _old(remote / "small.txt", b"x" * 10)
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}", "Minimum File Size": "1KB"})
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_path_filter_regex(sftp_server: SftpServer, remote: Path) -> None:
    """Path Filter Regex (with Search Recursively) keeps files of the matching directories."""
    for sub in ("keep", "drop"):
        (remote / sub).mkdir()
        _old(remote / sub / f"{sub}.txt", b"x")
    runner = TestRunner(ListSFTP())
    configure(
        runner,
        sftp_server,
        **{
            "Remote Path": f"/{remote.name}",
            "Search Recursively": "true",
            "Path Filter Regex": "keep",
        },
    )
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["keep.txt"]
