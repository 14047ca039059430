"""ListSFTP against a real SFTP server (paramiko's, on loopback)."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flowcore.builder import Flow
from flowcore.driver.controller import run_flow
from flowcore.services import MapCacheService
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors._listing import Entry
from processors.sftp import list_sftp as list_module
from processors.sftp.list_sftp import ListSFTP, time_window
from tests.processors.sftp.sftp_server import PASSWORD, USER, SftpServer, configure


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


def _three(remote: Path) -> TestRunner:
    for name in ("1.txt", "2.txt", "3.txt"):
        _old(remote / name, name.encode())
    return TestRunner(ListSFTP())


def _with_writer(runner: TestRunner) -> None:
    from processors.record_services.csv import CSVRecordSetWriter

    runner.add_service(CSVRecordSetWriter("csv-record-writer"))
    runner.set_property("Record Writer", "csv-record-writer")


@pytest.mark.parametrize(
    ("strategy", "flowfiles"), [("timestamps", 1), ("none", 2), ("entities", 1)]
)
def test_run_with_record_writer(
    sftp_server: SftpServer, remote: Path, strategy: str, flowfiles: int
) -> None:
    """NiFi's testRunWithRecordWriter{,NoTracking,ByTimestamps,ByEntities}: two runs make one
    FlowFile of records (two without tracking), with mime.type and record.count."""
    runner = _three(remote)
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}"})
    _with_writer(runner)
    runner.set_property("Listing Strategy", strategy)
    if strategy == "entities":
        runner.add_service(MapCacheService("dmc"))
        runner.set_property("Entity Tracking State Cache", "dmc")
    runner.run(2)
    runner.assert_transfer_count("success", flowfiles)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("mime.type", "text/csv")
    out.assert_attribute_equals("record.count", "3")


def test_records_have_file_info_schema(sftp_server: SftpServer, remote: Path) -> None:
    """The records are NiFi's FileInfo: filename, path (the directory), directory, size,
    lastModified, permissions, owner, group."""
    runner = _three(remote)
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}"})
    _with_writer(runner)
    runner.run()
    rows = list(csv.DictReader(io.StringIO(runner.flowfiles_for("success")[0].content.decode())))
    assert list(rows[0]) == [
        "filename", "path", "directory", "size", "lastModified", "permissions", "owner", "group",
    ]  # fmt: skip
    assert sorted(r["filename"] for r in rows) == ["1.txt", "2.txt", "3.txt"]
    assert {r["path"] for r in rows} == {f"/{remote.name}"}
    assert {r["directory"] for r in rows} == {"false"}
    assert {r["size"] for r in rows} == {"5"}
    assert rows[0]["permissions"].startswith("rw")


def test_files_with_restart(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's testFilesWithRestart: Tracking Entities keeps its entities in the map cache, so a
    new processor (a restart: its state and the cache kept) lists nothing again; a changed
    file is listed again."""
    runner = _three(remote)
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}"})
    runner.set_property("Listing Strategy", "entities")
    cache = runner.add_service(MapCacheService("dmc"))
    runner.set_property("Entity Tracking State Cache", "dmc")
    runner.run(2)
    runner.assert_transfer_count("success", 3)
    (key,) = cache.to_state()
    tracked = json.loads(cache.get(key) or "")["entities"]
    assert sorted(tracked) == [f"/{remote.name}/{n}" for n in ("1.txt", "2.txt", "3.txt")]
    restarted = TestRunner(ListSFTP())
    configure(restarted, sftp_server, **{"Remote Path": f"/{remote.name}"})
    restarted.set_property("Listing Strategy", "entities")
    same = restarted.add_service(MapCacheService("dmc"))
    same.put(key, cache.get(key) or "")  # the cache's committed entry, as a restart has it
    restarted.set_property("Entity Tracking State Cache", "dmc")
    restarted.set_state(runner.state)
    restarted.run()
    restarted.assert_transfer_count("success", 0)
    listing = restarted.processor.list_work(restarted.context, restarted.state)
    assert listing.items == ()  # as the last committed listing: no work (no micro-batch)
    _old(remote / "2.txt", b"changed", age=200)  # older than before, but another size
    restarted.run()
    assert [f.attributes["filename"] for f in restarted.flowfiles_for("success")] == ["2.txt"]
    restarted.set_property("Listing Strategy", "none")  # a run otherwise: entities cleared
    restarted.run()
    restarted.clear_transfer_state()
    restarted.set_property("Listing Strategy", "entities")
    restarted.run()
    restarted.assert_transfer_count("success", 3)


def test_tracking_entities_keeps_the_tracking_timestamps_state(
    sftp_server: SftpServer, remote: Path
) -> None:
    """A Tracking Entities run leaves the timestamp state (NiFi does not touch it): back on
    Tracking Timestamps nothing is listed again."""
    runner = _three(remote)
    precision = {"Target System Timestamp Precision": "millis"}  # a 100 ms listing lag
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}"}, **precision)
    runner.add_service(MapCacheService("dmc"))
    runner.set_property("Entity Tracking State Cache", "dmc")
    runner.run()
    runner.assert_transfer_count("success", 3)
    runner.set_property("Listing Strategy", "entities")
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 3)
    assert "listing.timestamp" in runner.state
    runner.set_property("Listing Strategy", "timestamps")
    runner.clear_transfer_state()
    runner.run()
    runner.assert_transfer_count("success", 0)


def test_tracking_entities_needs_a_state_cache(sftp_server: SftpServer) -> None:
    """Tracking Entities without Entity Tracking State Cache: invalid, naming the property."""
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Listing Strategy": "entities"})
    problems = [p.explanation for p in runner.processor.validate() if not p.valid]
    assert any("'Entity Tracking State Cache' is required" in p for p in problems)


def test_listing_resets_when_remote_path_changes(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi's isListingResetNecessary (Hostname, Remote Path): another Remote Path lists from
    scratch, past a state whose timestamp is newer than its files."""
    (remote / "x").mkdir()
    (remote / "y").mkdir()
    _old(remote / "x" / "a.txt", b"a", age=300)
    _old(remote / "y" / "b.txt", b"b", age=300)
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}/x"})
    runner.run()
    _old(remote / "x" / "new.txt", b"n", age=60)
    runner.run()
    assert len(runner.flowfiles_for("success")) == 2
    runner.set_property("Remote Path", f"/{remote.name}/y")
    runner.run()
    assert runner.flowfiles_for("success")[-1].attributes["filename"] == "b.txt"


def test_run_when_user_home_not_found(
    sftp_server: SftpServer, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """NiFi's testRunNoExceptionWhenUserHomeNotFound (TestGetSFTP), for ListSFTP: a local home
    directory that does not exist (no ~/.ssh) does not stop the listing."""
    monkeypatch.setenv("HOME", "/directory-not-found")
    runner = _three(remote)
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}"})
    runner.run()
    runner.assert_transfer_count("success", 3)


def test_time_window_lists_each_window_once(sftp_server: SftpServer, remote: Path) -> None:
    """Time Window: the files modified before now less the lag, oldest first; the next run
    lists only those modified since that window's end (an old-stamped newcomer is missed, as in
    NiFi), waiting out the lag for a file just written; a restart from the state lists none."""
    _old(remote / "b.txt", b"b", age=200)
    _old(remote / "a.txt", b"a", age=300)
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{
        "Remote Path": f"/{remote.name}", "Listing Strategy": "time-window",
        "Target System Timestamp Precision": "seconds",
    })  # fmt: skip
    before = int(time.time() * 1000)
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["a.txt", "b.txt"]
    end = int(runner.state["listing.timestamp"])
    assert before - 1000 <= end <= int(time.time() * 1000) - 1000  # now less the 1 s lag
    assert runner.state["processed.timestamp"] == str(end)
    _old(remote / "old.txt", b"o", age=400)  # stamped before the window's end: never listed
    (remote / "new.txt").write_bytes(b"n")  # stamped now: listed once the lag has passed
    runner.clear_transfer_state()
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["new.txt"]
    restarted = TestRunner(ListSFTP())
    configure(restarted, sftp_server, **{
        "Remote Path": f"/{remote.name}", "Listing Strategy": "time-window",
        "Target System Timestamp Precision": "seconds",
    })  # fmt: skip
    restarted.set_state(runner.state)
    restarted.run()
    restarted.assert_transfer_count("success", 0)
    assert restarted.state == runner.state  # an empty window keeps the state (NiFi's yield)


@settings(max_examples=150, deadline=None)
@given(
    stamps=st.lists(st.integers(0, 10_000), max_size=30),
    steps=st.lists(st.integers(0, 3_000), min_size=1, max_size=6),
    precision=st.sampled_from(["millis", "seconds", "minutes", "auto-detect"]),
)
def test_time_windows_list_every_entry_once(
    stamps: list[int], steps: list[int], precision: str
) -> None:
    """Consecutive Time Window listings (the state carried) list each entry once, in time order,
    all those stamped before the last window's end and none after it."""
    entries = [Entry(f"/f{i}", t, None) for i, t in enumerate(stamps)]
    state: dict[str, str] = {}
    listed: list[Entry[None]] = []
    now = 0
    for step in steps:
        now += step
        window, end = time_window(entries, state, now_ms=now, precision=precision)
        assert [e.timestamp for e in window] == sorted(e.timestamp for e in window)
        listed += window
        if window:
            state = {"listing.timestamp": str(end)}
    assert len({e.identifier for e in listed}) == len(listed)
    last_end = int(state.get("listing.timestamp") or 0)
    assert {e.identifier for e in listed} >= {
        e.identifier for e in entries if e.timestamp < last_end
    }
    assert all(e.timestamp < last_end for e in listed)


def test_follow_symlink_and_remote_poll_batch_size(sftp_server: SftpServer, remote: Path) -> None:
    """Links are listed (as their targets) only with Follow symlink, a linked directory walked
    with Search Recursively; Remote Poll Batch Size stops the walk after that many files,
    a directory's own files first (NiFi's getListing)."""
    (remote / "real").mkdir()
    _old(remote / "real" / "r.txt", b"rrr")
    _old(remote / "a.txt", b"a")
    (remote / "link.txt").symlink_to(remote / "a.txt")
    (remote / "linked").symlink_to(remote / "real", target_is_directory=True)
    (remote / "dangling.txt").symlink_to(remote / "gone.txt")
    settings_ = {"Remote Path": f"/{remote.name}", "Search Recursively": "true",
                 "Listing Strategy": "none"}  # fmt: skip
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **settings_)
    runner.run()
    listed = sorted(f"{f.attributes['path']}/{f.attributes['filename']}"
                    for f in runner.flowfiles_for("success"))  # fmt: skip
    assert listed == [f"/{remote.name}/a.txt", f"/{remote.name}/real/r.txt"]
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **settings_, **{"Follow symlink": "true"})
    runner.run()
    out = {f"{f.attributes['path']}/{f.attributes['filename']}": f.attributes["file.size"]
           for f in runner.flowfiles_for("success")}  # fmt: skip
    assert out == {
        f"/{remote.name}/a.txt": "1", f"/{remote.name}/link.txt": "1",
        f"/{remote.name}/real/r.txt": "3", f"/{remote.name}/linked/r.txt": "3",
    }  # fmt: skip
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **settings_, **{"Remote Poll Batch Size": "1"})
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["a.txt"]


def test_path_filter_matches_deeper_directories(sftp_server: SftpServer, remote: Path) -> None:
    """NiFi walks every directory and lists the files of those the Path Filter Regex matches:
    a filter naming only a nested directory still reaches it through its parent."""
    (remote / "x" / "deep").mkdir(parents=True)
    _old(remote / "x" / "top.txt", b"t")
    _old(remote / "x" / "deep" / "d.txt", b"d")
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{
        "Remote Path": f"/{remote.name}", "Search Recursively": "true",
        "Path Filter Regex": "x/deep",
    })  # fmt: skip
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["d.txt"]


def test_time_window_through_the_engine_lists_each_file_once(
    sftp_server: SftpServer, remote: Path, tmp_path: Path
) -> None:
    """Through the engine, twice on one repository: the window's end commits with the listed
    FlowFiles, so the second run lists only the file written since (each name once)."""
    from flowcore import Flow
    from flowcore.driver.controller import Controller
    from flowcore.runners.direct import DirectRunner
    from processors import PutFile
    from repositories.repository_set import RepositorySet

    for name in ("a.txt", "b.txt"):
        _old(remote / name, name.encode(), age=100)
    flow = Flow("window")
    listing = flow.add(ListSFTP(**{
        "Hostname": sftp_server.host, "Port": str(sftp_server.port), "Username": USER,
        "Password": PASSWORD, "Remote Path": f"/{remote.name}",
        "Listing Strategy": "time-window", "Target System Timestamp Precision": "seconds",
    }), name="list")  # fmt: skip
    put = flow.add(PutFile(directory=str(tmp_path / "out")), name="put")
    flow.connect(listing, put)
    flow.auto_terminate(put, ["success", "failure"])
    counts = []
    for _ in range(2):
        repos = RepositorySet.open(tmp_path / "repo")
        try:
            counts.append(Controller(flow, DirectRunner(), repos).run().count("list", "success"))
        finally:
            repos.close()
        _old(remote / "c.txt", b"c", age=0)
    assert counts == [2, 1]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["a.txt", "b.txt", "c.txt"]


def test_follow_symlink_loops_list_each_file_once(sftp_server: SftpServer, remote: Path) -> None:
    """Links back up the tree (``l1 -> .``, ``l2 -> .``) are not walked again: one FlowFile."""
    _old(remote / "a.txt", b"a")
    (remote / "l1").symlink_to(remote, target_is_directory=True)
    (remote / "l2").symlink_to(remote, target_is_directory=True)
    runner = TestRunner(ListSFTP())
    settings_ = {"Remote Path": f"/{remote.name}", "Listing Strategy": "none",
                 "Search Recursively": "true", "Follow symlink": "true"}  # fmt: skip
    configure(runner, sftp_server, **settings_)
    runner.run()
    listed = [f"{f.attributes['path']}/{f.attributes['filename']}"
              for f in runner.flowfiles_for("success")]  # fmt: skip
    assert listed == [f"/{remote.name}/a.txt"]


def test_only_regular_files_are_listed(sftp_server: SftpServer, remote: Path) -> None:
    """A FIFO (or device, socket) is not listed: there is nothing to fetch from it."""
    _old(remote / "a.txt", b"a")
    os.mkfifo(remote / "pipe")
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}", "Listing Strategy": "none"})
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["a.txt"]


@pytest.mark.parametrize("strategy", ["timestamps", "time-window"])
def test_remote_poll_batch_size_loses_no_file_under_tracked_state(
    sftp_server: SftpServer, remote: Path, strategy: str
) -> None:
    """A walk stopped at Remote Poll Batch Size would move the state past the files it never
    saw (walk order is not time order): these strategies list them all, and warn."""
    for i in range(5):
        _old(remote / f"f{i}.txt", b"x", age=300 - i * 10)
    runner = TestRunner(ListSFTP())
    settings_ = {"Remote Path": f"/{remote.name}", "Listing Strategy": strategy,
                 "Remote Poll Batch Size": "2"}  # fmt: skip
    configure(runner, sftp_server, **settings_)
    runner.run(3)
    names = sorted(f.attributes["filename"] for f in runner.flowfiles_for("success"))
    assert names == [f"f{i}.txt" for i in range(5)]


def test_time_window_lists_a_file_once_old_enough(
    sftp_server: SftpServer, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Time Window with Minimum File Age: a file too young for one window is in a later one
    (the window once moved past it while the age filter dropped it: never listed)."""
    _old(remote / "old.txt", b"o", age=300)
    _old(remote / "young.txt", b"y", age=50)
    clock = [time.time()]
    fake = type(
        "Clock",
        (),
        {
            "time": staticmethod(lambda: clock[0]),
            "sleep": staticmethod(lambda s: clock.__setitem__(0, clock[0] + s)),
        },
    )
    monkeypatch.setattr(list_module, "time", fake)
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}",
                                      "Listing Strategy": "time-window",
                                      "Minimum File Age": "100 sec"})  # fmt: skip
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["old.txt"]
    clock[0] += 60  # young.txt is 110 s old now
    runner.run()
    names = [f.attributes["filename"] for f in runner.flowfiles_for("success")]
    assert names == ["old.txt", "young.txt"]


def test_time_window_waits_not_for_files_listed_already(
    sftp_server: SftpServer, remote: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty window waits only for files at or after its start: those listed already
    (before the last window's end) are not held back (a second run slept ~a minute)."""
    _old(remote / "a.txt", b"a", age=3)
    slept: list[float] = []
    fake = type("Clock", (), {"time": staticmethod(time.time), "sleep": staticmethod(slept.append)})
    monkeypatch.setattr(list_module, "time", fake)
    runner = TestRunner(ListSFTP())
    configure(runner, sftp_server, **{"Remote Path": f"/{remote.name}",
                                      "Listing Strategy": "time-window"})  # fmt: skip
    runner.run()
    assert [f.attributes["filename"] for f in runner.flowfiles_for("success")] == ["a.txt"]
    slept.clear()
    runner.run()
    assert len(runner.flowfiles_for("success")) == 1
    assert slept == []


class _Attr:
    """One entry of a fake server's directory listing."""

    def __init__(self, name: str, mode: int) -> None:
        self.filename, self.st_mode, self.st_mtime, self.st_size = name, mode, 0, 1


class _WideTree:
    """A server whose root holds more directories than a walk following links may list."""

    def listdir_attr(self, directory: str) -> list[_Attr]:
        if directory == "/r":
            return [_Attr(f"d{i}", stat.S_IFDIR | 0o755) for i in range(5)]
        return [_Attr("f", stat.S_IFREG | 0o644)]


def test_a_wide_tree_without_following_links_is_walked_whole(monkeypatch) -> None:
    """The bound on directories listed holds only while following links (links multiply a
    walk; a plain tree cannot loop): more directories than the bound are all walked."""
    from processors.sftp import _sftp

    monkeypatch.setattr(_sftp, "MAX_LISTINGS", 3)
    how = _sftp.Walk(recursive=True, follow=False)
    assert len(list(_sftp.walk(_WideTree(), "/r", how))) == 5


def run_sftp_source(tmp_path: Path, source: Any) -> Any:
    """A batch run (direct runner) of a flow with the one SFTP *source*."""
    flow = Flow("sftp-source")
    flow.auto_terminate(flow.add(source, name="Remote files"), "success")
    settings = Settings(sync=False, parallelism=1)
    return run_flow(flow, "direct", repository=tmp_path / "repo", settings=settings)


@pytest.mark.parametrize(
    ("mistake", "reason"),
    [
        ("password", "AuthenticationException"),
        ("port", "NoValidConnectionsError"),
        ("remote path", "FileNotFoundError"),
        ("host key", "not found in known_hosts"),
    ],
)
def test_a_failing_listing_ends_a_run_in_one_line(
    sftp_server: SftpServer, remote: Path, tmp_path: Path, mistake: str, reason: str
) -> None:
    """A refused password, a port nothing listens on, a missing Remote Path, a host key not
    in the Host Key File: one line naming ListSFTP and the reason, an ERROR bulletin, no
    password; the run ends (flowcore run exits 2)."""
    known_hosts = tmp_path / "known_hosts"
    known_hosts.write_text("")
    values = {
        "hostname": sftp_server.host,
        "port": "1" if mistake == "port" else str(sftp_server.port),
        "username": USER,
        "password": "wrong-Pa55word" if mistake == "password" else PASSWORD,
        "remote_path": "/nope" if mistake == "remote path" else f"/{remote.name}",
        "connection_timeout": "5 sec",
    }
    if mistake == "host key":
        values |= {"host_key_file": str(known_hosts), "strict_host_key_checking": "true"}
    result = run_sftp_source(tmp_path, ListSFTP(**values))
    (line,) = result.list_failed.values()
    assert line.startswith("ListSFTP 'Remote files' could not list: ")
    assert reason in line
    assert PASSWORD not in line
    assert "wrong-Pa55word" not in line
    assert any(b.level == "ERROR" and reason in b.message for b in result.bulletins)
