"""Tests for ListFile: NiFi's attributes, filters, timestamp tracking, parts, batch form."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flowcore import Flow, ProvenanceEventType
from flowcore.driver.controller import run_flow
from flowcore.flowfile import Attributes
from flowcore.flowfile_batch import FlowFileBatch
from flowcore.processor.kinds import WorkItem
from flowcore.services import MapCache, MapCacheService
from flowcore.settings import Settings
from flowcore.testing import TestRunner
from processors import FetchFile, ListFile, PutFile, list_file
from repositories.repository_set import RepositorySet
from tests.flowcore.conftest import event_shape

HOUR = 3600.0


def _write(root: Path, name: str, text: str, age_s: float) -> Path:
    """A file *age_s* old (mtime in the past, so the listing lag never holds it back)."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    stamp = time.time() - age_s
    os.utime(path, (stamp, stamp))
    return path


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "in"
    _write(root, "a.txt", "A", 40)
    _write(root, "b.log", "BB", 30)
    _write(root, ".hidden", "H", 30)
    _write(root, "sub/c.txt", "CCC", 20)
    _write(root, ".dot/d.txt", "DDDD", 10)
    return root


def names(runner: TestRunner) -> list[str]:
    return [f.attributes["filename"] for f in runner.flowfiles_for("success")]


def test_attributes_are_nifis_and_each_file_gets_a_create_event(tree: Path) -> None:
    """filename, path (./ at the top), absolute.path and file.* in NiFi's formats; CREATE each;
    oldest first; hidden files skipped but a hidden directory entered, as NiFi's ListFile."""
    runner = TestRunner(ListFile(input_directory=str(tree)))
    runner.run()
    assert names(runner) == ["a.txt", "b.log", "c.txt", "d.txt"]
    top, _, sub, _ = runner.flowfiles_for("success")
    top.assert_content_equals(b"")
    top.assert_attribute_equals("path", "./")
    top.assert_attribute_equals("absolute.path", f"{tree}/")
    top.assert_attribute_equals("file.size", "1")
    top.assert_attribute_equals("file.permissions", "rw-r--r--")
    sub.assert_attribute_equals("path", "sub/")
    sub.assert_attribute_equals("absolute.path", f"{tree}/sub/")
    modified = time.strftime(
        "%Y-%m-%dT%H:%M:%S%z", time.localtime((tree / "a.txt").stat().st_mtime)
    )
    top.assert_attribute_equals("file.lastModifiedTime", modified)
    for key in ("file.owner", "file.group", "file.creationTime", "file.lastAccessTime"):
        top.assert_attribute_exists(key)
    events = runner.provenance_events
    assert [e.event_type for e in events] == [ProvenanceEventType.CREATE] * 4
    bare = TestRunner(ListFile(input_directory=str(tree), include_file_attributes=False))
    bare.run()
    out = bare.flowfiles_for("success")[0]
    out.assert_attribute_exists("file.lastModifiedTime")
    out.assert_attribute_not_exists("file.owner")
    out.assert_attribute_not_exists("file.permissions")


def test_filters(tree: Path) -> None:
    """File Filter, Path Filter (NiFi's testPathFilterOnlyPicksUpMatchingFiles), recursion,
    hidden files, sizes and ages select the files, as GetFile's same properties do."""
    cases = [
        ({"file_filter": r".*\.txt"}, ["a.txt", "c.txt", "d.txt"]),
        ({"path_filter": ".+"}, ["c.txt", "d.txt"]),
        ({"recurse_subdirectories": False}, ["a.txt", "b.log"]),
        (
            {"ignore_hidden_files": False, "file_filter": ".*"},
            [".hidden", "a.txt", "b.log", "c.txt", "d.txt"],
        ),
        ({"minimum_file_size": "2 B", "maximum_file_size": "3 B"}, ["b.log", "c.txt"]),
        ({"minimum_file_age": "25 sec", "maximum_file_age": "35 sec"}, ["b.log"]),
    ]
    for properties, expected in cases:
        runner = TestRunner(ListFile(input_directory=str(tree), **properties))
        runner.run()
        assert sorted(names(runner)) == expected, properties


def test_tracking_timestamps_lists_each_file_once_and_changes_again(tmp_path: Path) -> None:
    """NiFi's testPerformListing: a file older than the listing is not new; a modified one is;
    changing Input Directory starts over (all files again)."""
    root = tmp_path / "in"
    root.mkdir()
    runner = TestRunner(ListFile(input_directory=str(root)))
    runner.run()
    assert names(runner) == []
    _write(root, "listing1.txt", "1", 4 * HOUR)
    runner.run()
    _write(root, "listing2.txt", "2", 2 * HOUR)
    runner.run()
    assert names(runner) == ["listing1.txt", "listing2.txt"]
    assert runner.state["listing.timestamp"] == runner.state["processed.timestamp"]
    assert runner.state["id.0"] == str(root / "listing2.txt")
    _write(root, "listing3.txt", "3", 3 * HOUR)  # older than what was listed: not new
    runner.run()
    assert len(names(runner)) == 2
    _write(root, "listing1.txt", "1 again", 1 * HOUR)  # modified since: listed again
    runner.run()
    assert names(runner)[2:] == ["listing1.txt"]
    runner.clear_transfer_state()
    runner.set_property("Input Directory", str(root) + "/")  # the same, as NiFi sees it: kept
    runner.run()
    assert names(runner) == []
    runner.set_property("Minimum File Age", "1 sec")  # a listing property: the state restarts
    runner.run()
    assert sorted(names(runner)) == ["listing1.txt", "listing2.txt", "listing3.txt"]


def test_newest_files_wait_for_the_listing_lag(tmp_path: Path) -> None:
    """A file modified within the lag of the precision is held back until it has passed, and
    files of one time are listed together even across listings."""
    root = tmp_path / "in"
    root.mkdir()
    runner = TestRunner(ListFile(input_directory=str(root)))
    now = runner.now() / 1000
    for name, age in (("old.txt", 10.0), ("new1.txt", 0.02), ("new2.txt", 0.02)):
        (root / name).write_text(name)
        os.utime(root / name, (now - age, now - age))
    runner.run(1, stop_on_finish=False)
    assert names(runner) == ["old.txt"]
    runner.advance_time(0.2)
    runner.run(1, stop_on_finish=False)
    assert names(runner) == ["old.txt", "new1.txt", "new2.txt"]
    runner.advance_time(0.2)
    runner.run()
    assert len(names(runner)) == 3


def test_a_listing_is_handed_out_in_parts_each_with_its_state(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With parts of 2 files, a trigger hands out one part and the state after it: a new
    runner (a restart) from that state lists exactly the rest."""
    monkeypatch.setattr(list_file, "ITEM_FILES", 2)
    monkeypatch.setattr(list_file, "TRIGGER_ITEMS", 1)
    first = TestRunner(ListFile(input_directory=str(tree)))
    first.run(1, stop_on_finish=False)
    assert names(first) == ["a.txt", "b.log"]
    assert first.state["listing.timestamp"] == first.state["processed.timestamp"]
    restarted = TestRunner(ListFile(input_directory=str(tree)))
    restarted.set_state(first.state)
    restarted.run(3)
    assert names(restarted) == ["c.txt", "d.txt"]
    first.run(3)
    assert names(first) == ["a.txt", "b.log", "c.txt", "d.txt"]


def test_no_tracking_lists_everything_every_time(tree: Path) -> None:
    """No Tracking keeps no state and lists every file on each trigger."""
    runner = TestRunner(ListFile(input_directory=str(tree), listing_strategy="none"))
    runner.set_state({"listing.timestamp": "1"})
    runner.run(2)
    assert len(names(runner)) == 8
    assert runner.state == {}
    assert ListFile(input_directory=str(tree), listing_strategy="none").unbounded


def test_tracking_entities_needs_a_state_cache_and_nifis_other_properties_pass(
    tree: Path,
) -> None:
    """Tracking Entities without Entity Tracking State Cache is invalid, naming it; NiFi's
    other properties (performance tracking, location) are accepted."""
    entities = ListFile(input_directory=str(tree), listing_strategy="entities")
    problems = [str(r) for r in entities.validate() if not r.valid]
    assert any("'Entity Tracking State Cache' is required" in p for p in problems)
    TestRunner(
        ListFile(
            input_directory=str(tree),
            input_directory_location="Remote",
            track_performance=True,
            target_system_timestamp_precision="seconds",
        )
    ).assert_valid()


def _entities(root: Path, **more: object) -> tuple[TestRunner, MapCache]:
    runner = TestRunner(ListFile(input_directory=str(root), listing_strategy="entities", **more))
    cache = runner.add_service(MapCacheService("listed"))
    runner.set_property("Entity Tracking State Cache", "listed")
    return runner, cache  # type: ignore[return-value]


def test_tracking_entities_lists_new_newer_and_resized_files(tree: Path) -> None:
    """Tracking Entities: each file once; again when newer or resized, even when older than
    the newest listed (what Tracking Timestamps misses). The key is NiFi's, with the
    component's id and no node suffix (one state per repository)."""
    runner, cache = _entities(tree, entity_tracking_node_identifier="node1")
    runner.run()
    assert names(runner) == ["a.txt", "b.log", "c.txt", "d.txt"]
    assert list(cache.to_state()) == [f"ListedEntities::{runner.context.component.id}"]
    runner.clear_transfer_state()
    runner.run()
    assert names(runner) == []
    _write(tree, "a.txt", "AAAA", 35)  # older than c.txt, another size
    runner.run()
    assert names(runner) == ["a.txt"]
    assert ListFile(input_directory=str(tree), listing_strategy="entities").unbounded


def test_tracking_entities_forget_on_a_changed_filter(tree: Path) -> None:
    """A changed File Filter starts the tracking over (NiFi removes its cache key)."""
    runner, _ = _entities(tree)
    runner.run()
    runner.clear_transfer_state()
    runner.set_property("File Filter", r".*\.txt")
    runner.run()
    assert names(runner) == ["a.txt", "c.txt", "d.txt"]


def test_tracking_entities_forget_after_a_run_with_another_strategy(tree: Path) -> None:
    """A run with No Tracking in between clears the tracked entities, as NiFi's
    initListedEntityTracker does: back on Tracking Entities every file is listed again."""
    runner, _ = _entities(tree)
    runner.run()
    runner.set_property("Listing Strategy", "none")
    runner.run()
    runner.clear_transfer_state()
    runner.set_property("Listing Strategy", "entities")
    runner.run()
    assert names(runner) == ["a.txt", "b.log", "c.txt", "d.txt"]
    runner.clear_transfer_state()
    runner.run()
    assert names(runner) == []


def test_tracking_entities_initial_listing_in_parts_lists_every_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """All Available over a first listing of three work items lists the old files of every
    item, not only the first's; the next listing nothing."""
    monkeypatch.setattr(list_file, "ITEM_FILES", 2)
    root = tmp_path / "in"
    for i in range(6):
        _write(root, f"f{i}.txt", "x" * (i + 1), 5 * HOUR - i)  # outside the 3 h window
    runner, _ = _entities(root)
    runner.run()
    assert sorted(names(runner)) == [f"f{i}.txt" for i in range(6)]
    runner.clear_transfer_state()
    runner.run()
    assert names(runner) == []


def test_tracking_entities_key_is_the_same_on_any_host(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task on another host (an executor, a restarted driver) finds the same entry: the
    default Node Identifier ${hostname()} is not in the key, so nothing is listed twice."""
    import socket

    runner, cache = _entities(tree)
    monkeypatch.setattr(socket, "gethostname", lambda: "executor-1")
    runner.run()
    assert len(names(runner)) == 4
    runner.clear_transfer_state()
    monkeypatch.setattr(socket, "gethostname", lambda: "executor-2")
    _write(tree, "e.txt", "E", 5)
    runner.run()
    assert names(runner) == ["e.txt"]
    assert len(cache.to_state()) == 1


def test_tracking_entities_resumes_from_the_state_an_earlier_version_wrote(tree: Path) -> None:
    """An entity listing committed when its identity was kept in
    flowcore.listing.configuration (before flowcore.listing.entities) is resumed, not
    listed again."""
    first, cache = _entities(tree)
    first.run()
    (key,) = cache.to_state()
    identity = first.state[list_file.ENTITIES_KEY]
    again, same = _entities(tree)
    same.put(key, cache.get(key) or "")
    again.set_state({list_file.CONFIGURATION_KEY: identity})
    again.run()
    assert names(again) == []


def test_tracking_entities_warns_when_its_entry_was_evicted(
    tree: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An entry gone though the lister committed an entity listing (evicted from a shared,
    full cache): everything is listed again, with a warning naming the cache and the fix."""
    runner, cache = _entities(tree)
    runner.run()
    (key,) = cache.to_state()
    cache.remove(key)
    runner.clear_transfer_state()
    _write(tree, "e.txt", "E", 5)
    runner.run()
    assert len(names(runner)) == 5
    (warning,) = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert key in warning
    assert "map cache listed" in warning
    assert "its own" in warning


def test_tracking_entities_keeps_the_tracking_timestamps_state(tree: Path) -> None:
    """A Tracking Entities run leaves the timestamp state: back on Tracking Timestamps the
    listing resumes (NiFi's listByTrackingEntities does not touch it)."""
    runner, _ = _entities(tree)
    runner.set_property("Listing Strategy", "timestamps")
    runner.run()
    timestamps = dict(runner.state)
    runner.set_property("Listing Strategy", "entities")
    runner.clear_transfer_state()
    runner.run()
    assert len(names(runner)) == 4
    assert {k: v for k, v in runner.state.items() if k in timestamps} == timestamps
    runner.set_property("Listing Strategy", "timestamps")
    runner.clear_transfer_state()
    runner.run()
    assert names(runner) == []


def test_tracking_entities_items_make_an_unknown_count_and_a_same_listing_none(
    tree: Path,
) -> None:
    """An entity item says nothing of its FlowFiles (the task emits only what is new), so
    the driver does not trigger the lister again to fill a micro-batch; a listing the same as
    the last committed one hands out no item (a continuous run then waits its poll interval)."""
    processor = ListFile(
        input_directory=str(tree), listing_strategy="entities", entity_tracking_state_cache="c"
    )
    context = TestRunner(processor).context
    listing = processor.list_work(context, {})
    assert [i.flowfiles for i in listing.items] == [None]
    assert processor.list_work(context, listing.state).items == ()
    assert len(processor.list_work(context, {}).items) == 1  # not committed: handed out again
    assert processor.list_work(context, listing.state).items == ()
    _write(tree, "e.txt", "E", 5)
    assert len(processor.list_work(context, listing.state).items) == 1


def test_record_writer_lists_file_info_records(tree: Path) -> None:
    """NiFi's FileInfo records in one FlowFile: filename, path (the directory), directory,
    size, lastModified; permissions, owner, group null as NiFi's ListFile leaves them."""
    from processors.record_services.json import JsonRecordSetWriter

    runner = TestRunner(ListFile(input_directory=str(tree)))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    runner.assert_all_flowfiles_transferred("success", 1)
    out = runner.flowfiles_for("success")[0]
    out.assert_attribute_equals("record.count", "4")
    out.assert_attribute_equals("mime.type", "application/json")
    records = json.loads(out.content)
    assert list(records[0]) == [
        "filename", "path", "directory", "size", "lastModified", "permissions", "owner", "group",
    ]  # fmt: skip
    assert [(r["filename"], r["size"]) for r in records] == [
        ("a.txt", 1), ("b.log", 2), ("c.txt", 3), ("d.txt", 4),
    ]  # fmt: skip
    assert records[2]["path"] == str(tree / "sub")
    assert records[0]["directory"] is False
    assert records[0]["owner"] is None
    runner.clear_transfer_state()
    runner.run()
    assert runner.flowfiles_for("success") == []


def test_tracking_entities_in_a_flow_lists_each_file_once(tree: Path, tmp_path: Path) -> None:
    """In a real Flow the map cache entry commits with the FlowFiles: a second run over the
    same repository lists only the file added since, with a Record Writer."""
    from processors.record_services.json import JsonRecordSetWriter

    def run(out: Path) -> list[str]:
        flow = Flow("entities")
        flow.add_service(MapCacheService("listed"))
        flow.add_service(JsonRecordSetWriter("writer"))
        listing = flow.add(
            ListFile(
                input_directory=str(tree), listing_strategy="entities",
                entity_tracking_state_cache="listed", record_writer="writer",
            ),
            name="list",
        )  # fmt: skip
        put = flow.add(PutFile(directory=str(out)), name="put")
        flow.connect(listing, put)
        flow.auto_terminate(put, ["success", "failure"])
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
        return [r["filename"] for p in sorted(out.iterdir()) for r in json.loads(p.read_text())]

    assert sorted(run(tmp_path / "one")) == ["a.txt", "b.log", "c.txt", "d.txt"]
    _write(tree, "e.txt", "E", 5)
    assert run(tmp_path / "two") == ["e.txt"]


def test_tracking_entities_keep_their_entry_through_a_rename(tree: Path, tmp_path: Path) -> None:
    """The cache key is the component's id, which a plain rename keeps: the renamed lister
    lists only the file added since, not everything again."""

    def run(name: str, out: Path) -> list[str]:
        flow = Flow("entities")
        flow.add_service(MapCacheService("listed"))
        listing = flow.add(
            ListFile(
                input_directory=str(tree), listing_strategy="entities",
                entity_tracking_state_cache="listed",
            ),
            name=name,
        )  # fmt: skip
        put = flow.add(PutFile(directory=str(out)), name="put")
        flow.connect(listing, put)
        flow.auto_terminate(put, ["success", "failure"])
        run_flow(flow, "direct", repository=tmp_path / "repo", settings=Settings(sync=False))
        return sorted(p.name for p in out.iterdir()) if out.exists() else []

    assert run("list", tmp_path / "one") == ["a.txt", "b.log", "c.txt", "d.txt"]
    _write(tree, "e.txt", "E", 5)
    assert run("list-renamed", tmp_path / "two") == ["e.txt"]


class _Maker:
    """A BatchMaker making real batches without a repository (ListFile's have no content)."""

    def create(self, count: int, attributes: dict, content: bytes | None) -> FlowFileBatch:
        assert not content
        return FlowFileBatch.alike(
            count=count,
            first_id=0,
            uuid_key="00000000-0000-4000-8000-0000",
            uuid_first=0,
            attributes=Attributes({"path": "./", **attributes}),
            uuid_named=("filename",),
            resource_claim=None,
            offset=0,
            stride=0,
            size=0,
            entry_date=0,
            lineage_start_date=0,
        )


_NAMES = st.text(st.characters(codec="utf-8", exclude_characters="/\0"), min_size=1, max_size=12)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    files=st.lists(
        st.tuples(st.sampled_from(["", "x/", "x/y/", ".h/"]), _NAMES, st.integers(0, 50)),
        min_size=1,
        max_size=12,
        unique_by=lambda f: f[0] + f[1],
    ),
    include=st.booleans(),
)
def test_the_batch_form_makes_the_one_by_one_flowfiles(
    tmp_path_factory: pytest.TempPathFactory, files: list, include: bool
) -> None:
    """read_work_batches gives each file the attributes read_work gives it, in the same order."""
    root = tmp_path_factory.mktemp("in")
    for directory, name, size in files:
        target = root / directory / name
        if name in {".", ".."} or target.is_dir() or any(p.is_file() for p in target.parents):
            continue  # a name both a file and a directory cannot be made
        _write(root, directory + name, "x" * size, 60)
    processor = ListFile(input_directory=str(root), include_file_attributes=include)
    runner = TestRunner(processor)
    listing = processor.list_work(runner.context, {})
    for item in listing.items:
        single = TestRunner(processor)
        processor.read_work(single.context, _Session(single), item)
        [(_, batch)] = processor.read_work_batches(runner.context, [item], _Maker())  # type: ignore[misc, arg-type]
        whole = [dict(f.attributes) for f in batch.flowfiles()]
        for made in whole:
            made.pop("uuid")
        assert whole == [dict(a) for a in single.made]


class _Session:
    """Records the attributes read_work gives each FlowFile (a session's put and transfer)."""

    def __init__(self, runner: TestRunner) -> None:
        runner.made = []  # type: ignore[attr-defined]
        self._runner = runner

    def create(self) -> dict:
        return {}

    def put_all_attributes(self, flowfile: dict, attributes: dict) -> dict:
        return {"path": "./", **flowfile, **attributes}

    def transfer(self, flowfile: dict, relationship: object) -> None:
        self._runner.made.append(flowfile)  # type: ignore[attr-defined]


def _outcome(root: Path, repository: Path) -> tuple:
    """ListFile -> FetchFile -> PutFile on the direct runner: events (shapes) and files."""
    flow = Flow("list-fetch")
    listing = flow.add(ListFile(input_directory=str(root)), name="list")
    fetch = flow.add(FetchFile(), name="fetch")
    put = flow.add(PutFile(directory=str(repository / "out")), name="put")
    flow.connect(listing, fetch)
    flow.connect(fetch, put, "success")
    flow.auto_terminate(fetch, ["not.found", "permission.denied", "failure"])
    flow.auto_terminate(put, ["success", "failure"])
    run_flow(flow, "direct", repository=repository / "repo", settings=Settings(sync=False))
    repos = RepositorySet.open(repository / "repo")
    try:
        events = repos.provenance.search(limit=10_000)
    finally:
        repos.close()
    shapes = sorted(
        tuple(p for p in event_shape(e) if not isinstance(p, tuple) or "lastAccess" not in str(p))
        for e in events
    )
    files = {p.name: p.read_bytes() for p in (repository / "out").iterdir()}
    return shapes, files, events


def test_in_a_flow_batches_and_one_by_one_agree(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a real Flow, ListFile's batches reach FetchFile and PutFile: every file is written
    once, with CREATE, FETCH and SEND events, the same as when read one by one."""

    def refused(*_: object) -> None:
        msg = "ListFile's items are read as batches here"
        raise AssertionError(msg)

    with monkeypatch.context() as patched:
        patched.setattr(ListFile, "read_work", refused)
        shapes, files, events = _outcome(tree, tmp_path / "whole")
    assert files == {"a.txt": b"A", "b.log": b"BB", "c.txt": b"CCC", "d.txt": b"DDDD"}
    kinds = {e.event_type for e in events}
    assert {
        ProvenanceEventType.CREATE,
        ProvenanceEventType.FETCH,
        ProvenanceEventType.SEND,
    } <= kinds
    monkeypatch.setattr(ListFile, "read_work_batches", lambda *_: None)
    single = _outcome(tree, tmp_path / "single")
    assert (shapes, files) == single[:2]


def test_record_writer_with_a_name_that_is_not_utf8(tmp_path: Path) -> None:
    """A file name that is not UTF-8 is written as the filename attribute shows it (U+FFFD
    for the bad bytes), not an error that blocks the whole listing."""
    from processors.record_services.json import JsonRecordSetWriter

    root = tmp_path / "in"
    _write(root, "a.txt", "A", 60)
    raw = os.fsencode(str(root)) + b"/caf\xe9.txt"
    with open(raw, "wb") as f:
        f.write(b"x")
    os.utime(raw, (time.time() - 60, time.time() - 60))
    runner = TestRunner(ListFile(input_directory=str(root)))
    runner.add_service(JsonRecordSetWriter("writer"))
    runner.set_property("Record Writer", "writer")
    runner.run()
    (flowfile,) = runner.flowfiles_for("success")
    records = json.loads(flowfile.content)
    assert sorted(r["filename"] for r in records) == ["a.txt", "caf\ufffd.txt"]


def test_work_items_are_picklable_and_name_their_files(tree: Path) -> None:
    """An item carries its files' facts, so a task makes the FlowFiles without a stat."""
    processor = ListFile(input_directory=str(tree))
    (item,) = processor.list_work(TestRunner(processor).context, {}).items
    assert isinstance(item, WorkItem)
    assert item.flowfiles == 4
    assert item.batched
    assert [Path(f[0]).name for f in item.payload["files"]] == ["a.txt", "b.log", "c.txt", "d.txt"]
